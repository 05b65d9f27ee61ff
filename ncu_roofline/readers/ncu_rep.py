"""Read `.ncu-rep` / `.nsight-cuprof-report` files through NVIDIA's `ncu_report` package.

`ncu_report.load_report` accepts almost anything silently (an empty file, a Git LFS pointer,
random bytes all load as a report with no kernels, a truncated file loses its tail kernels, and
some damage aborts the whole process), so the file is checked here before and after loading
(`container.py`), and every problem becomes an InputError. This module runs NVIDIA's reader in
the calling process; `readers.isolation` runs it in a child process.
"""

from __future__ import annotations

import bisect
import math
import mmap
import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..knowledge.opcodes import OPCODE_FACTS
from .container import MAGIC, UNCHECKABLE, ContainerScan, scan_container
from .instructions import ActionInstructions, Code
from .record import UNREAD, Metric, RawKernel, RawReport
from .rules import ActionRules
from .strings import text

_VERSION_RE = re.compile(rb"(20[12]\d\.\d+\.\d+(?:\.\d+)?) \(build (\d+)\)")
LFS_PREFIX = b"version https://git-lfs"

_STRING_KIND = 2


def sniff_problem(head: bytes) -> str | None:
    """A reason the file is not a report, judged from its first bytes; None when it looks like one."""
    if not head:
        return "the file is empty (0 bytes)"
    if head.startswith(LFS_PREFIX):
        return (
            "this is a Git LFS pointer, not the report itself; run `git lfs pull` "
            "(or `git lfs fetch && git lfs checkout`) to fetch the real file"
        )
    if not head.startswith(MAGIC):
        return "not an Nsight Compute report (the file does not start with the report signature)"
    return None


def find_ncu_version(data: bytes | mmap.mmap, end: int | None = None) -> str | None:
    """The Nsight Compute version that wrote the report, when the file records it.

    `end`: search only before this offset (the end of the session records, which hold it), so
    that a large report is not scanned to its end.
    """
    match = _VERSION_RE.search(data, 0, len(data) if end is None else end)
    if match is None:
        return None
    return f"{match.group(1).decode()} (build {match.group(2).decode()})"


Forms = dict[str, tuple[str, bool]]
"""Per report: metric name -> (unit, is a string). A metric's unit and kind are those of its
definition, the same in every kernel of a report (checked on the 151,733 metric values of the
shared corpus), so each is asked of the native reader once per report, not once per kernel."""


def _by_key(action: Any, base: str) -> dict[str, float] | None:
    """An instanced metric's values summed by their text key (an opcode); None where it holds no instances, or
    they are keyed by anything else (PCs, a damaged block)."""
    m = action.metric_by_name(base)
    count = m.num_instances() if m is not None else 0
    if not count:
        return None
    out: dict[str, float] = {}
    try:
        ids = m.correlation_ids()
        for i in range(count):
            key = text(ids.as_string(i))
            out[key] = out.get(key, 0.0) + m.as_double(i)
    except Exception:  # NVIDIA's reader raises its own types
        return None
    return out


def _instance(action: Any, name: str, counts: dict[str, dict[str, float] | None] | None = None) -> Metric | None:
    """One key's value of an instanced metric keyed by text (`metric[key]`, `knowledge.opcodes`): 0 for a key it
    does not list, None where it holds no instances. `counts` keeps each metric's values by key for the next."""
    base, key = name[:-1].split("[", 1)
    counts = {} if counts is None else counts
    if base not in counts:
        counts[base] = _by_key(action, base)
    found = counts[base]
    if found is None:
        return None
    total = found.get(key, 0.0)
    return Metric(total, "inst") if math.isfinite(total) else None


def _metric(action: Any, name: str, forms: Forms,
            counts: dict[str, dict[str, float] | None] | None = None) -> Metric | None:
    if name[-1:] == "]":
        return _instance(action, name, counts)
    m = action.metric_by_name(name)
    if m is None:
        return None
    form = forms.get(name)
    if form is None:
        form = forms[name] = (text(m.unit()), m.kind() == _STRING_KIND)
    unit, is_string = form
    if not is_string:
        return Metric(m.as_double(), unit)
    return Metric(text(m.as_string()), unit)  # "" where a damaged report cannot give the string




class ReportShared:
    """What the kernels of one report share: each metric's form (`Forms`), and their name lists. Kernels profiled
    with the same sections list the same names: a kernel whose native list equals the kernel's before it takes
    that one's names, name set and sorted names (made once), not its own copies."""

    __slots__ = ("_last", "forms")

    def __init__(self) -> None:
        self.forms: Forms = {}
        self._last: tuple[Any, tuple[tuple[str, ...], frozenset[str], list[str]]] | None = None

    def names(self, action: Any) -> tuple[tuple[str, ...], frozenset[str], list[str]]:
        """The action's metric names, their set, and a list its sorted names go in (`ActionMetrics.names_starting`
        fills it on its first call)."""
        listed = action.metric_names()
        last = self._last
        if last is not None and last[0] == listed:
            return last[1]
        names = tuple(n for n in listed if isinstance(n, str))
        held = frozenset(names)
        # One opcode's count (`_instance`) is asked for by name, never listed: reading every listed metric (a
        # report read whole) meets only the report's own.
        opcodes = tuple(n for n in OPCODE_FACTS if n[:n.index("[")] in held)
        made: tuple[tuple[str, ...], frozenset[str], list[str]] = (names, held | frozenset(opcodes), [])
        self._last = (listed, made)
        return made


class ActionMetrics(Mapping[str, Metric]):
    """The metrics of one profiled kernel, read from the report only when first asked for.

    A full-set report holds about 2,000 metrics per kernel and the analysis needs a few hundred;
    reading each on demand (and once) is what keeps the JSON path close to the cost of loading
    the report. Holds the report context so the native objects stay valid.
    """

    def __init__(self, ctx: Any, action: Any, shared: ReportShared | None = None) -> None:
        self._ctx = ctx
        self._action = action
        shared = ReportShared() if shared is None else shared
        self._forms: Forms = shared.forms
        self._names, self._known, self._sorted = shared.names(action)
        self._cache: dict[str, Metric | None] = {}
        self._counts: dict[str, dict[str, float] | None] = {}  # instanced metrics by key (`_instance`)

    def __getitem__(self, name: str) -> Metric:
        if name not in self._known:
            raise KeyError(name)
        if name not in self._cache:
            self._cache[name] = _metric(self._action, name, self._forms, self._counts)
        found = self._cache[name]
        if found is None:
            raise KeyError(name)
        return found

    def get(self, name: str, default: Any = None) -> Any:
        # Mapping.get would go through a KeyError for each metric the report lacks (most look-ups
        # of a fallback chain are of those).
        found = self._cache.get(name, UNREAD)
        if found is UNREAD:
            if name not in self._known:
                return default  # absent: nothing to remember (the name set answers again in C)
            found = self._cache[name] = _metric(self._action, name, self._forms, self._counts)
        return default if found is None else found

    @property
    def possible_names(self) -> frozenset[str]:
        """The names the report holds for this kernel: a name not in it is absent."""
        return self._known

    def names_starting(self, prefix: str) -> list[str]:
        """The metrics present whose name starts with `prefix`, in name order: a range of the sorted
        names found by bisection (the native reader lists them sorted, so the sort is one C-level pass;
        a scan with `startswith` costs a tenth of a millisecond per kernel of 2,000 metrics)."""
        ordered = self._sorted
        if not ordered and self._names:
            ordered.extend(sorted(self._names))
        start = bisect.bisect_left(ordered, prefix)
        end = start
        while end < len(ordered) and ordered[end].startswith(prefix):
            end += 1
        return ordered[start:end]

    def __contains__(self, name: object) -> bool:
        return name in self._known

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    @property
    def read_so_far(self) -> dict[str, Metric | None]:
        """The metrics read so far, None for one read as absent (the model looks here before `get`;
        not to be changed)."""
        return self._cache

    def fetched(self) -> dict[str, Metric]:
        """The metrics read so far, as a plain dict (no native objects: it pickles)."""
        return {name: m for name, m in self._cache.items() if m is not None}


def detach(kernel: RawKernel, every_counter: bool = False) -> None:
    """Make a kernel independent of its open report, so that it pickles (and the report can close).

    Metrics read on demand (`ActionMetrics`) become a plain dict of those read so far (what the
    analysis asked for); rule results read on demand become a tuple of all of them; per-instruction
    counters keep the top instructions of those read so far (`every_counter`: of every one).
    """
    if isinstance(kernel.metrics, ActionMetrics):
        kernel.metrics = kernel.metrics.fetched()
    if isinstance(kernel.rules, ActionRules):
        kernel.rules = tuple(kernel.rules)
    if isinstance(kernel.instructions, ActionInstructions):
        source = kernel.instructions
        kernel.instructions = source.read_all() if every_counter else source.fetched()


def _triple(metrics: Mapping[str, Metric], names: tuple[str, ...]) -> tuple[int, int, int] | None:
    """The x, y and z metrics as integers (None where one is missing: the axes after it are not read)."""
    out = []
    for name in names:
        value = _int(metrics, name)
        if value is None:
            return None
        out.append(value)
    return (out[0], out[1], out[2])


def _nvtx(action: Any) -> list[str]:
    ranges: list[str] = []
    state = action.nvtx_state()
    if state is None:
        return ranges
    for dom_id in state.domains():
        dom = state.domain_by_id(dom_id)
        dom_name = text(dom.name())  # "" where a damaged report cannot give it
        prefix = "" if dom_name in ("", "<default domain>") else f"{dom_name}:"
        stack = [text(r) for r in dom.push_pop_ranges() if isinstance(r, str)]
        if stack:
            ranges.append(prefix + "/".join(stack))
        ranges.extend(prefix + text(r) for r in dom.start_end_ranges() if isinstance(r, str))
    return ranges


def _string(metrics: Mapping[str, Metric], names: tuple[str, ...]) -> str | None:
    m = metrics.get(names[0])
    return str(m.value) if m is not None and not m.is_number else None


def _int(metrics: Mapping[str, Metric], name: str) -> int | None:
    m = metrics.get(name)
    if m is None or not m.is_number or m.is_nan:
        return None
    value = float(m.value)
    return int(value) if math.isfinite(value) else None


def _one_int(metrics: Mapping[str, Metric], names: tuple[str, ...]) -> int | None:
    return _int(metrics, names[0])


def _capability(metrics: Mapping[str, Metric], names: tuple[str, ...]) -> str | None:
    major, minor = _int(metrics, names[0]), _int(metrics, names[1])
    return f"{major}.{minor}" if major is not None and minor is not None else None


# The launch fields `kernel_from_metrics` takes from the standard metrics where the identity does not give them:
# (field, the metrics it is read from, how).
_FROM_METRICS: tuple[tuple[str, tuple[str, ...], Callable[[Mapping[str, Metric], tuple[str, ...]], Any]], ...] = (
    ("compute_capability", tuple(f"device__attribute_compute_capability_{part}" for part in ("major", "minor")),
     _capability),
    ("device", ("device__attribute_display_name",), _string),
    ("sm_count", ("device__attribute_multiprocessor_count",), _one_int),
    ("grid_size", tuple(f"launch__grid_dim_{axis}" for axis in "xyz"), _triple),
    ("block_size", tuple(f"launch__block_dim_{axis}" for axis in "xyz"), _triple),
    ("stream_id", ("launch__stream_id",), _one_int),
)


def identity_reads(metrics: Mapping[str, Metric], identity: Mapping[str, Any]) -> tuple[Any, ...]:
    """What `kernel_from_metrics` reads of `metrics` for a launch whose `identity` gives these fields, read as it
    reads them (a grid's or block's axes up to the first it cannot take): launches whose reads are equal get the
    same fields from them."""
    held: list[Any] = []
    for field, names, read in _FROM_METRICS:
        if field in identity:
            continue
        if read is _triple:
            for name in names:
                held.append(metrics.get(name))
                if _int(metrics, name) is None:
                    break
        else:
            held += [metrics.get(name) for name in names]
    return tuple(held)


def kernel_from_metrics(
    index: int,
    name: str,
    demangled: str,
    metrics: Mapping[str, Metric],
    **identity: Any,
) -> RawKernel:
    """Build a RawKernel, taking launch and device identity from the standard metrics (where `identity`,
    e.g. a CSV export's columns, does not give it)."""
    for field, names, read in _FROM_METRICS:
        if field not in identity:
            identity[field] = read(metrics, names)
    return RawKernel(index=index, name=name, demangled_name=demangled, metrics=metrics, **identity)


def _found_none(path: Path, scan: ContainerScan) -> InputError:
    """Why NVIDIA's reader finds no kernel in a file the container walk did not refuse, and what to do."""
    again = "copy or download it again; a damaged report is not analysed"
    if scan.zero_tail is not None:  # NVIDIA's reader reads zeros as empty blocks only in whole 4-byte steps
        zeros = scan.size - scan.zero_tail
        return InputError(path, f"NVIDIA's reader finds no kernel in the file, which ends in {zeros:,} zero bytes "
                          f"after its {scan.results} kernel result(s) (padding, or a copy whose end never arrived)",
                          f"cut the zeros off a copy (`truncate -s {scan.zero_tail} COPY`) and read the copy, or "
                          + again)
    if scan.cut:
        return InputError(path, "NVIDIA's reader finds no kernel in the file, which is cut short after its first "
                          f"{scan.results:,} kernel result(s): the reader cannot read a file cut where this one is",
                          "copy or download it again; a partial report NVIDIA's reader cannot open is not analysed")
    if not scan.walked:
        return InputError(path, "NVIDIA's reader finds no kernel in the file, and its container cannot be walked from "
                          f"{scan.stopped_at} on: the file is damaged", again)
    return InputError(path, "NVIDIA's reader finds no kernel in the file, although its container holds "
                      f"{scan.results} kernel result(s): the file is damaged", again)


def read_ncu_rep(path: Path) -> RawReport:
    """Read every kernel of every range of a report; raise InputError only for a file that cannot be read.

    The container is walked first (`container.scan_container`): a file it proves cut or damaged is
    refused before NVIDIA's reader sees it. Anything else it notices is read, and said: one warning,
    and the report's `completeness`. A result that repeats an earlier one is analysed once.
    """
    try:
        with path.open("rb") as fh:
            head = fh.read(64)
            problem = sniff_problem(head)
            if problem:
                raise InputError(path, problem)
            with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
                scan = scan_container(data)
                version = find_ncu_version(data, scan.session_end or None) if scan.whole else None
    except OSError as exc:
        raise InputError(path, f"cannot read the file ({exc.strerror or exc})") from exc
    if scan.problem is not None:
        raise InputError(path, scan.problem, scan.hint)

    try:
        import ncu_report  # NVIDIA's reader, from PyPI; imported late so CSV runs do not need it
    except ImportError as exc:  # pragma: no cover - an install problem, not an input problem
        raise InputError(
            path,
            "the `ncu-report` package is not installed",
            "install it with `pip install ncu-report` (it reads reports on any CPU)",
        ) from exc

    ctx = ncu_report.load_report(str(path))
    ranges = [ctx.range_by_idx(r) for r in range(ctx.num_ranges())]
    found = sum(rng.num_actions() for rng in ranges)
    if not found:
        raise _found_none(path, scan)
    notes = list(scan.notes)
    # Repeats are told by position: the reader lists results in file order (checked on duplicated blocks),
    # so only where it finds exactly the results the container holds; the name must agree too.
    whole = scan.results if scan.cut else found  # a cut file: the kernels before the cut, never the cut one
    duplicates = scan.duplicates if min(found, whole) == scan.results else {}
    if found != scan.results and scan.walked and not (scan.cut and found in (whole, whole + 1)):
        notes.append(f"NVIDIA's reader finds {found} kernel(s) where the container holds {scan.results} kernel "
                     "result(s): the file is damaged, and the kernels read are those the reader finds"
                     + (", repeats included" if scan.duplicates else ""))
    kernels: list[RawKernel] = []
    names: list[str] = []  # per result in file order, repeats included
    demangled_base = ncu_report.IAction.NameBase_DEMANGLED
    mangled_base = ncu_report.IAction.NameBase_MANGLED
    shared = ReportShared()
    code: Code = {}  # the instructions of the report's functions, read once (`readers.instructions`)
    bare: list[int] = []  # the kernels of which NVIDIA's reader finds no metric
    for r, rng in enumerate(ranges):
        for j in range(rng.num_actions()):
            position = len(names)
            if position >= whole:  # the kernel the cut runs through (NVIDIA's reader gives what it could)
                break
            action = rng.action_by_idx(j)
            name = text(action.name())  # "" where a damaged report cannot give it (RawKernel falls back)
            names.append(name)
            earlier = duplicates.get(position)
            if earlier is not None and names[earlier] == name:
                continue
            metrics = ActionMetrics(ctx, action, shared)
            mangled = text(action.name(mangled_base))
            demangled = text(action.name(demangled_base))
            if not metrics:  # a result record NVIDIA's reader could not decode (a damaged block)
                bare.append(len(kernels))
            if not (name or demangled or mangled):
                name = f"kernel {len(kernels)}"  # as a CSV row without a name is called
            kernels.append(
                kernel_from_metrics(
                    len(kernels),
                    name,
                    demangled,
                    metrics,
                    mangled_name=mangled,
                    range_index=r,
                    nvtx_ranges=_nvtx(action),
                    rules=ActionRules(action),
                    instructions=ActionInstructions(ctx, action, mangled or name, code),
                )
            )
    if bare:
        shown = ", ".join(map(str, bare[:5])) + (f" and {len(bare) - 5:,} more" if len(bare) > 5 else "")
        notes.append(f"NVIDIA's reader finds no metric of {len(bare):,} kernel(s) (kernel {shown}): their records are "
                     "damaged (or the capture stopped while profiling them), and they are set aside; copy or download "
                     "the file again")
    warnings = [f"read with notes: {'; '.join(notes)}"] if notes else []
    return RawReport(path=str(path), source_format="ncu-rep", kernels=kernels, ncu_version=version,
                     warnings=warnings, completeness="; ".join([*notes, UNCHECKABLE]))
