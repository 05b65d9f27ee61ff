"""The top instructions of a launch by a per-instruction counter (`knowledge.instruction_counters`).

A report with the SourceCounters section keys some metrics by PC: `m.correlation_ids().as_uint64(i)` is the PC of
instance `i`, `m.as_double(i)` its value. `ActionInstructions` reads a counter only when first asked for it (one to
a few instanced metrics, under a millisecond each), keeps only its top instructions, and remembers them; `detach`
turns it into `FetchedInstructions`, the tops read so far as plain data, which is all that crosses a process
boundary (never every PC). A CSV export holds no per-instruction data: its kernels have no instruction source.

An entry's `pc` is the address the report gives; `offset` is `pc` less the start of the function that holds it
(`launch__function_pcs`), as Nsight Compute's Source page counts; `file` is the base name of the source file
(never its directory: paths of the machine that built the code), `file` and `line` only where the code was built
with `-lineinfo`. `sass` is None where NVIDIA's reader has no SASS text for the PC (it answers "???" or nothing).
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..knowledge import instruction_counters as C
from ..knowledge.instruction_counters import PC_COUNTERS, How, PcRecipe
from .strings import text

__all__ = ["ActionInstructions", "Code", "FetchedInstructions", "Instruction", "InstructionSource", "TopInstructions"]

_NOT_ISSUED = "_not_issued"


@dataclass(frozen=True, slots=True)
class Instruction:
    """One instruction and its part of a counter: `value` at this PC, `share` = value / the sum over every PC."""

    pc: int
    offset: int | None
    sass: str | None  # None: the reader has no SASS text for this PC
    value: float
    share: float
    file: str | None = None
    line: int | None = None

    def to_dict(self, counter: str, redact: bool = False) -> dict[str, Any]:
        """The entry as the JSON document writes it; `redact` leaves the source file and line out."""
        return {"pc": self.pc, "offset": self.offset, "sass": self.sass, "counter": counter, "value": self.value,
                "share": self.share, "file": None if redact else self.file, "line": None if redact else self.line}


@dataclass(frozen=True, slots=True)
class TopInstructions:
    """The instructions holding most of one counter (`counter`: its key; `recipe`: the metrics it was read from)."""

    counter: str
    recipe: str
    total: float
    instructions: tuple[Instruction, ...] = ()

    def to_list(self, redact: bool = False) -> list[dict[str, Any]]:
        return [i.to_dict(self.recipe, redact) for i in self.instructions]


class InstructionSource(Protocol):
    """What a kernel offers the passes: `top(counter)`, None where the report cannot give that counter
    (`read=False`: only a counter already read, none is read now)."""

    def top(self, counter: str, read: bool = True) -> TopInstructions | None: ...


@dataclass(frozen=True)
class FetchedInstructions:
    """The tops an `ActionInstructions` read, as plain data (it pickles); a counter not read is absent."""

    tops: Mapping[str, TopInstructions | None] = field(default_factory=dict)

    def top(self, counter: str, read: bool = True) -> TopInstructions | None:  # noqa: ARG002 - nothing to read
        return self.tops.get(counter)


def _per_pc(action: Any, name: str) -> dict[int, float] | None:
    """The metric's finite values by PC, None where the report does not hold it as an instanced metric."""
    m = action.metric_by_name(name)
    if m is None:
        return None
    count = m.num_instances()
    if not count:
        return {} if m.has_correlation_ids() else None
    if not m.has_correlation_ids():
        return None
    ids = m.correlation_ids()
    out: dict[int, float] = {}
    for i in range(count):
        value = m.as_double(i)
        if math.isfinite(value):
            pc = ids.as_uint64(i)
            out[pc] = out.get(pc, 0.0) + value
    return out


def _values(action: Any, recipe: PcRecipe) -> dict[int, float] | None:
    """The counter's value by PC by this recipe, None where the report lacks one of its metrics."""
    if recipe.how is How.STALL_SAMPLES:
        names = [n for n in action.metric_names() if isinstance(n, str) and n.startswith(C.STALL_PREFIX)
                 and not n.endswith(_NOT_ISSUED)]
        parts = [p for p in (_per_pc(action, n) for n in names) if p is not None]
        if not parts:
            return None
        summed: dict[int, float] = {}
        for part in parts:
            for pc, v in part.items():
                summed[pc] = summed.get(pc, 0.0) + v
        return summed
    found = [_per_pc(action, n) for n in recipe.metrics]
    if any(f is None for f in found):
        return None
    if recipe.how is How.VALUE:
        return found[0]
    executed, threads = found[0] or {}, found[1] or {}
    if recipe.how is How.LANES_LOST:
        return {pc: C.WARP_LANES * n - threads.get(pc, 0.0) for pc, n in executed.items() if n}
    return {pc: n * (C.WARP_LANES - threads.get(pc, 0.0)) for pc, n in executed.items() if n}


_SPACES = re.compile(r"\s+")
_NO_SASS = frozenset({"", "???"})  # what NVIDIA's reader answers for a PC it has no SASS text for


def _base_name(path: object) -> str | None:
    name = re.split(r"[\\/]", text(path))[-1]
    return name or None


Code = dict[tuple[str, int], tuple[str | None, str | None, int | None]]
"""Per report: (function, PC) -> SASS, file and line. NVIDIA's reader disassembles a launch's code on its first
`sass_by_pc` (6 ms a launch, and a second once per process); the launches of one function share it, so each
instruction is asked of the reader once per report, not once per launch."""


class ActionInstructions:
    """The per-instruction counters of one profiled kernel, each read when first asked for (and once).

    `function` names the kernel's code (its mangled name) for `code`, the report's cache of instructions.
    Holds the report context so the native objects stay valid.
    """

    def __init__(self, ctx: Any, action: Any, function: str = "", code: Code | None = None) -> None:
        self._ctx = ctx
        self._action = action
        self._function = function
        self._code: Code = {} if code is None else code
        self._tops: dict[str, TopInstructions | None] = {}
        self._starts: list[int] | None = None

    def top(self, counter: str, read: bool = True) -> TopInstructions | None:
        if counter not in self._tops:
            if not read:
                return None
            try:
                self._tops[counter] = self._read(counter)
            except Exception:  # NVIDIA's reader on a damaged per-instruction block: no `where`,
                self._tops[counter] = None  # the capture's other figures stand (a readable capture is never lost)
        return self._tops[counter]

    def fetched(self) -> FetchedInstructions:
        """The tops read so far, as plain data."""
        return FetchedInstructions(dict(self._tops))

    def read_all(self) -> FetchedInstructions:
        """Every counter's top, as plain data."""
        for counter in PC_COUNTERS:
            self.top(counter)
        return self.fetched()

    def _function_starts(self) -> list[int]:
        if self._starts is None:
            m = self._action.metric_by_name(C.FUNCTION_STARTS)
            count = m.num_instances() if m is not None else 0
            self._starts = sorted({m.as_uint64(i) for i in range(count)}) if m is not None else []
        return self._starts

    def _offset(self, pc: int) -> int | None:
        starts = self._function_starts()
        at = bisect.bisect_right(starts, pc) - 1
        return pc - starts[at] if at >= 0 else None

    def _read(self, counter: str) -> TopInstructions | None:
        for recipe in PC_COUNTERS[counter].recipes:
            values = _values(self._action, recipe)
            if values is not None:
                return self._top(counter, recipe, values)
        return None

    def _top(self, counter: str, recipe: PcRecipe, values: dict[int, float]) -> TopInstructions:
        total = math.fsum(values.values())
        if not total > 0:
            return TopInstructions(counter, recipe.label, total)
        ranked = sorted(((v, pc) for pc, v in values.items() if v / total >= C.MIN_SHARE), key=lambda t: (-t[0], t[1]))
        return TopInstructions(counter, recipe.label, total,
                               tuple(self._instruction(pc, v, total) for v, pc in ranked[:C.TOP_COUNT]))

    def _instruction(self, pc: int, value: float, total: float) -> Instruction:
        key = (self._function, pc)
        known = self._code.get(key)
        if known is None:
            known = self._code[key] = self._read_code(pc)
        sass, file, line = known
        return Instruction(pc, self._offset(pc), sass, value, value / total, file, line)

    def _read_code(self, pc: int) -> tuple[str | None, str | None, int | None]:
        action = self._action
        sass: str | None = _SPACES.sub(" ", text(action.sass_by_pc(pc))).strip()
        if sass in _NO_SASS:
            sass = None
        source = action.source_info(pc)
        file = line = None
        if source is not None:
            file = _base_name(source.file_name())
            number = source.line()
            line = int(number) if isinstance(number, int) and number > 0 else None
        return sass, file, line if file else None
