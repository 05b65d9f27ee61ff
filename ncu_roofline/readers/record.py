"""The neutral record both readers produce: kernel identity plus metric name -> (value, unit).

Nothing here knows about rooflines; everything after the readers is format-blind, which is what
makes `.ncu-rep`/CSV parity and hand-built tests straightforward.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from .strings import text
from .values import is_float

if TYPE_CHECKING:
    from .instructions import InstructionSource
    from .rules import RuleResult


class Metric(NamedTuple):
    """One metric as stored in the report: a number (or string) and its unit as written there.

    A named tuple: a full-set kernel holds hundreds, made as fast as a tuple (a frozen dataclass
    costs four times as much to build) and as immutable.
    """

    value: float | str
    unit: str = ""

    @property
    def is_number(self) -> bool:
        kind = type(self.value)
        if kind is float or kind is int or is_float(self.value):  # the common cases, without isinstance
            return True
        return isinstance(self.value, (int, float)) and kind is not bool

    @property
    def is_nan(self) -> bool:
        value = self.value
        if type(value) is float or is_float(value):  # a float, or a block's values (`readers.values`)
            return bool(value != value)  # NaN is the one float not equal to itself
        return self.is_number and math.isnan(float(value))


def metric_names_starting(metrics: Mapping[str, Metric], prefix: str) -> list[str]:
    """The names in `metrics` that start with `prefix` (readers' lazy mappings answer it without a
    walk over every metric of the kernel)."""
    starting = getattr(metrics, "names_starting", None)
    if starting is not None:
        found: list[str] = starting(prefix)
        return found
    return [n for n in metrics if n.startswith(prefix)]


@dataclass
class RawKernel:
    """One profiled kernel launch, exactly as a reader found it."""

    index: int
    name: str
    demangled_name: str
    metrics: Mapping[str, Metric]  # a dict, or a mapping that reads the report on demand
    mangled_name: str = ""
    range_index: int = 0
    grid_size: tuple[int, int, int] | None = None
    block_size: tuple[int, int, int] | None = None
    device: str | None = None
    compute_capability: str | None = None
    sm_count: int | None = None
    nvtx_ranges: list[str] = field(default_factory=list)
    process_name: str | None = None
    host_name: str | None = None
    stream_id: int | None = None
    rules: Sequence[RuleResult] = ()  # Nsight Compute's own rule results (a lazy sequence for .ncu-rep)
    # the top instructions per counter, where the report holds per-instruction counters (`readers.instructions`)
    instructions: InstructionSource | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        # NVIDIA's reader hands back None for a string a damaged report cannot give (a name whose bytes do not
        # decode) and lone surrogates for bytes that are not UTF-8: such a name, NVTX range or device is absent
        # (a name falls back to another form of it), and such bytes are U+FFFD (`text`), so that every join,
        # format and output after the readers holds writable strings only.
        held: dict[str, object] = self.__dict__  # as the reader gave them, whatever the annotations say
        name = held["name"]
        if not (type(name) is str and name.isascii()):
            self.name = text(name) if isinstance(name, str) else text(held["demangled_name"]) or text(
                held["mangled_name"])
        for attr in ("demangled_name", "mangled_name"):
            value = held[attr]
            if not (type(value) is str and value.isascii()):
                held[attr] = text(value)
        ranges = held["nvtx_ranges"]
        if ranges and not (isinstance(ranges, list) and all(type(r) is str and r.isascii() for r in ranges)):
            self.nvtx_ranges = [text(r) for r in ranges if isinstance(r, str)] if isinstance(ranges, (list, tuple)) \
                else []
        for attr in ("device", "compute_capability", "process_name", "host_name"):
            value = held[attr]
            if value is not None and not (type(value) is str and value.isascii()):
                held[attr] = text(value) or None

    def again(self, index: int, metrics: Mapping[str, Metric]) -> RawKernel:
        """Another launch of this kernel, read alike (its names and launch fields this one's, as made): every field
        this one's but its index, metrics and NVTX ranges (none), at a fraction of the cost of making it anew."""
        launch: RawKernel = object.__new__(RawKernel)
        fields = launch.__dict__
        fields.update(self.__dict__)
        fields["index"], fields["metrics"], fields["nvtx_ranges"] = index, metrics, []
        return launch

    def number(self, name: str) -> float | None:
        """The metric's numeric value, or None when absent, non-numeric, NaN or infinite (no counter,
        share or rate is infinite: a hand-edited or damaged value is not a measurement)."""
        m = self.metrics.get(name)
        if m is None:
            return None
        value = m.value
        if type(value) is float or is_float(value):  # the common case, without a call or the properties
            return value if value - value == 0.0 else None  # NaN and ±inf give NaN here
        if not m.is_number or m.is_nan:
            return None
        value = float(value)
        return value if value - value == 0.0 else None


# A look-up's default that means "not read yet" (a mapping's cache holds None for a metric read as absent).
UNREAD: Any = object()
_NOTHING_READ: dict[str, Any] = {}


def hot_values(metrics: Mapping[str, Metric]) -> tuple[Callable[[str], float | None], Mapping[str, str]]:
    """The C-level `get` of the plain values a CSV row parsed at once (`RowMetrics.hot_values`: finite or not,
    never dropped) and their units, or of none. A name not there is read through `read_so_far` and `get`."""
    found = getattr(metrics, "hot_values", None)
    if found is None:
        return _NOTHING_READ.get, _NOTHING_READ
    units: Mapping[str, str] = metrics.hot_units  # type: ignore[attr-defined]
    return found.get, units


def read_so_far(metrics: Mapping[str, Metric]) -> Callable[[str, Any], Any]:
    """The C-level `get` of the metrics a lazy mapping has read so far (`read_so_far`: a CSV row's parsed
    cells, a report's fetched metrics; None for one known absent), or of none: the model looks there
    before calling the mapping's own `get`. Use `UNREAD` as the default."""
    found = getattr(metrics, "read_so_far", None)
    return found.get if found is not None else _NOTHING_READ.get


@dataclass
class RawReport:
    """Every kernel of one input file, with what could be learned about the file itself."""

    path: str
    source_format: str  # "ncu-rep" or "csv"
    kernels: list[RawKernel]
    ncu_version: str | None = None
    warnings: list[str] = field(default_factory=list)
    # What the reader could not check about the file being whole ("" when nothing is left open).
    completeness: str = ""
