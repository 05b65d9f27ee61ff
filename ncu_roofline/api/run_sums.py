"""Launches summed into their group (`GroupSums`): what the launches of a run of the model over columns
(`api.bulk.Run`) add to their groups, worked out once per run as columns (`RunTable`), then added for each group's
launches at once (`add_rows`). One analysed launch is a run of one (`add_launch`): there is one way to sum.

Every sum is exact (`ExactSum`): it does not depend on order or chunking, so a run's columns are sliced for a
group's launches and each slice added whole. A product is the one a launch computes (IEEE double, numpy's or
Python's). What depends on order is added in launch order: each launch's entry, the durations, the first waves
seen, the group's first launch, the order of its roofs, units and precisions (each as its first launch with it has
them). What a run's launches share (usable, limiter, regime, flags, which roofs and units they hold) is the run's,
read once.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from ..knowledge import recipes as R
from ..model.quantities import Value
from ..model.throughputs import UnitShare
from ..passes.levers import limits_measured
from ..readers.record import RawKernel
from ..readers.values import Values
from .kernel import AnalysedKernel
from .sums import NO_RANGES, NONE, ROOF_KEYS, WORK_KEYS, GroupSums, LaunchColumns, Layout, extend_ints

__all__ = ["RunTable", "add_launch", "add_rows"]

_FACTS = ("waves_per_sm", "achieved_occupancy", "sm_active_share")  # weighed by duration in a group
_new_share = tuple.__new__


class RunTable:
    """What the `n` launches of the run `m` add to their groups, as columns (`j`: a launch's place in the run).

    - `all`: the FLOP and bytes of every launch, where the run is usable (`summed`: the sums they go to);
    - `durations`: each launch's, where usable and measured (else None); the launches timed over 0 (`timed`) add
      `timed_columns` (`sums_timed`: the sums they go to), but for the finite shares of a roof whose shares are not
      all finite (`partly_finite`: added launch by launch);
    - what each launch's entry holds (`numbers`, `work`, `tensor`), and its waves per SM.
    """

    __slots__ = ("all", "durations", "lists", "m", "n", "numbers", "partly_finite", "precisions", "roofs", "summed",
                 "sums_timed", "tensor", "timed", "timed_columns", "unknown", "waves", "work")

    def __init__(self, m: AnalysedKernel, n: int) -> None:
        self.m, self.n = m, n
        self.lists: dict[int, list[Any]] = {}
        q = m.q
        summed: list[tuple[tuple[str, str]]] = []  # the sums of the usable launches' columns (`all`)
        self.unknown: list[str] = []  # the FLOP and bytes the run does not have
        columns: list[Any] = []
        if m.usable:
            for values, keys in ((q.flop, WORK_KEYS), (q.bytes, R.LEVELS)):
                for key in keys:
                    v = values.get(key)
                    if v is None:
                        self.unknown.append(key)
                    else:
                        summed.append((("summed", key),))
                        columns.append(self._array(v.value))
        self.all = _stacked(columns, n)
        self.summed = Layout.of(None, tuple(summed))
        d = None if not m.usable or q.duration_s is None else self._array(q.duration_s.value)
        self.durations = None if d is None else np.asarray(d, dtype=float)
        self.roofs = tuple(m.utilization)
        self.precisions = tuple(p for p, work in q.flop.items() if work is not None)
        self.partly_finite: dict[str, Any] = {}
        self.sums_timed: Layout | None = None
        self.timed: Any = None
        self.timed_columns: Any = None
        if d is not None:
            with np.errstate(all="ignore"):  # a product past the float range is infinity, as a launch's own is
                self._timed(d)
        self.numbers = _stacked([self._array(NONE if v is None else v.value if type(v) is Value else v) for v in
                                 (q.duration_s, m.limiter_share, *(m.peaks.get(r) for r in ROOF_KEYS))], n)
        self.work = self._rows([q.flop.get(p) for p in WORK_KEYS])
        self.tensor: list[Any] | None = None
        if m.tensor_peaks or q.tensor_paths:
            peaks, paths = self._rows(list(m.tensor_peaks.values())), self._rows(list(q.tensor_paths.values()))
            self.tensor = [(tuple(zip(m.tensor_peaks, a, strict=True)), tuple(zip(q.tensor_paths, b, strict=True)))
                           for a, b in zip(peaks, paths, strict=True)]
        self.waves = self.of(m.launch.get("waves_per_sm"))

    def _timed(self, d: Any) -> None:
        """The columns of the launches timed over 0, each with the sums it goes to."""
        m, q = self.m, self.m.q
        self.timed = self.durations > 0  # type: ignore[operator]
        time: list[tuple[Any, ...]] = [("time",)]
        columns: list[Any] = [d]
        keys: list[tuple[tuple[Any, ...], ...]] = []
        for name, share in m.utilization.items():
            s = self._array(share)
            time.append(("share_time", name))
            columns.append(_times(d, s))
            finite: Any = [math.isfinite(s[0])] if type(s) is list else np.isfinite(s)
            if all(finite) if type(finite) is list else finite.all():
                time.append(("finite_time", name))
                keys.append((("share_work", name), ("finite_work", name)))
            else:
                self.partly_finite[name] = finite
                keys.append((("share_work", name),))
        for uid, unit in m.units.items():
            time.append(("unit_time", uid))
            columns.append(_times(d, self._array(unit.share)))
            keys.append((("unit_work", uid),))
        for fact in _FACTS:
            figure = m.launch.get(fact)
            if figure is not None:
                time.append(("fact_time", fact))
                columns.append(_times(d, self._array(figure)))
                keys.append((("fact_work", fact),))
        for name, v in (("flop", m.total_flop), *((lv, q.bytes.get(lv)) for lv in R.LEVELS)):
            if v is not None:
                columns.append(self._array(v.value if type(v) is Value else v))
                keys.append((("moved", name) if name != "flop" else ("flop",),))
        for p, work in q.flop.items():
            if work is not None:
                columns.append(self._array(work.value))
                keys.append((("precision", p),))
        self.sums_timed = Layout.of(frozenset(time), tuple(keys))
        self.timed_columns = _stacked(columns, self.n)

    def _array(self, x: Any) -> Any:
        """A number of the run as a column: numpy's for a run of many launches, a list of one for one launch (its
    arithmetic Python's: numpy's costs more on one value)."""
        if self.n == 1:
            return [x.a.item(0) if type(x) is Values else x]
        return np.asarray(x.a, dtype=float) if type(x) is Values else np.full(self.n, x, dtype=float)

    def of(self, x: Any) -> list[Any]:
        """Each launch's value of a number of the run (a column's, or the one value repeated)."""
        if type(x) is not Values:
            return [x] * self.n
        found = self.lists.get(id(x))
        if found is None:
            found = self.lists[id(x)] = x.a.tolist()
        return found

    def _rows(self, xs: list[Value | None]) -> list[tuple[Any, ...]]:
        """Each launch's values of these `Value`s as one tuple (None for a None)."""
        columns = [[None] * self.n if x is None else self.of(x.value) for x in xs]
        return list(zip(*columns, strict=True)) if columns else [()] * self.n


def _times(a: Any, b: Any) -> Any:
    """Launch by launch, a × b (two columns)."""
    return [a[0] * b[0]] if type(a) is list else a * b


def _stacked(columns: list[Any], n: int) -> Any:
    """Columns as one (launch, column) matrix."""
    if n == 1:
        return np.array([[c[0] for c in columns]], dtype=float).reshape(1, len(columns))
    return np.column_stack(columns) if columns else np.empty((n, 0))


def _entries(columns: LaunchColumns, t: RunTable, js: list[int], raws: Sequence[RawKernel]) -> set[str]:
    """Each launch's entry in the group's launch columns; returns their NVTX ranges."""
    m, q = t.m, t.m.q
    definitions = tuple((b.definition or "counts") if (b := q.bytes.get(lv)) is not None else None
                        for lv in R.LEVELS)
    shared = (m.usable, m.bound_by, m.regime, limits_measured(m))
    work, tensor = t.work, t.tensor
    known, kinds, codes = columns.known, columns.kinds, columns.codes
    nvtx_seen: set[str] = set()
    for j, raw in zip(js, raws, strict=True):
        nvtx = tuple(raw.nvtx_ranges) if raw.nvtx_ranges else NO_RANGES
        nvtx_seen.update(nvtx)
        kind = (*shared, nvtx, raw.device, raw.compute_capability, raw.sm_count, definitions, work[j])
        code = known.get(kind)
        if code is None:
            code = known[kind] = len(kinds)
            kinds.append(kind)
        if tensor is not None:
            columns.tensor[len(codes)] = tensor[j]
        codes.append(code)
    columns.index = extend_ints(columns.index, [raw.index for raw in raws])
    columns.numbers.frombytes(t.numbers[js].tobytes())
    return nvtx_seen


def add_launch(sums: GroupSums, k: AnalysedKernel, carried: Iterable[str]) -> None:
    """One analysed launch (`carried`: its flags that the group carries over, `groups.carried_flags`)."""
    if sums.members is not None:
        sums.members.append(k)
    add_rows(sums, RunTable(k, 1), [0], (k.raw,), carried, lambda: k)


def add_rows(sums: GroupSums, t: RunTable, js: list[int], raws: Sequence[RawKernel], carried: Iterable[str],
             first: Callable[[], AnalysedKernel]) -> None:
    """The launches of the run `t` at `js` (places in the run, ascending; `raws`: theirs; `carried`: the flags the
    group carries over), in order; `first()` makes the first of them, where the group keeps it as its first."""
    if sums.first is None:
        sums.first = first()
    sums.nvtx.update(_entries(sums.entries, t, js, raws))
    sums.flags.update(dict.fromkeys(carried))
    if len(sums.waves) < 2:
        waves = t.waves
        for j in js:
            if len(sums.waves) >= 2:
                break
            if not any(w is waves[j] or w == waves[j] for w in sums.waves):
                sums.waves.append(waves[j])
    if t.m.usable:
        sums.usable += len(js)
        if t.summed.keys:
            sums.hold(t.summed, t.all[js])
        for name in t.unknown:
            sums.summed_known[name] = False
    if t.durations is None:  # usable and timed is one answer for a run
        return
    sums.durations.frombytes(t.durations[js].tobytes())
    timed = [j for j in js if t.timed[j]] if len(js) < 16 else np.asarray(js)[t.timed[js]].tolist()
    if not timed:
        return
    sums.timed_count += len(timed)
    sums.roofs.update(dict.fromkeys(t.roofs))
    for uid, unit in t.m.units.items():
        if uid not in sums.units:  # as its first launch with it has it
            sums.units[uid] = _new_share(UnitShare, (uid, t.of(unit.share)[timed[0]], *unit[2:]))
    sums.precisions.update(dict.fromkeys(t.precisions))
    rows = t.timed_columns[timed]
    for name, finite in t.partly_finite.items():  # launch by launch: the finite shares alone
        at = 1 + t.roofs.index(name)
        for row, j in zip(rows.tolist(), timed, strict=True):
            if finite[j]:
                sums.exact(("finite_time", name)).add(row[0])
                sums.exact(("finite_work", name)).add(row[at])
    sums.hold(t.sums_timed, rows)  # type: ignore[arg-type]
    if t.m.total_flop is None:
        sums.flop_known = False
    for lv in R.LEVELS:
        if t.m.q.bytes.get(lv) is None:
            sums.moved_known[lv] = False
