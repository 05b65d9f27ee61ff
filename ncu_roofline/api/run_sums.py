"""Launches summed into their group (`GroupSums`): one analysed launch (`add_launch`), or the launches of a run
of the model over columns (`api.bulk.Run`) at once, from the run's columns, without making a launch of each
(`add_launches`). One launch is a run of one: there is one way to sum.

Launches added as a run end where the same launches added one by one end, to the last bit: the exact sums
(`ExactSum`) do not depend on order or chunking; the plain running ones (`Weighted`, the FLOP per precision) add
the launches one after the other, in launch order, in Python floats; a product is the one a launch computes
(IEEE double either way). What a run's launches share (usable, limiter, regime, flags, which roofs and units they
hold) is the run's, read once.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..knowledge import recipes as R
from ..model.quantities import Value
from ..model.throughputs import UnitShare
from ..passes.levers import limits_measured
from ..readers.record import RawKernel
from ..readers.values import Values
from .kernel import AnalysedKernel
from .sums import (
    BUFFER,
    NO_RANGES,
    NONE,
    ROOF_KEYS,
    WORK_KEYS,
    ExactSum,
    GroupSums,
    LaunchColumns,
    Weighted,
    append_int,
)

__all__ = ["RunCache", "RunValues", "add_launch", "add_launches", "durations_of"]

_new_share = tuple.__new__


class RunCache:
    """What a run's launches are read from, made once per run: each column as a list (by the column's id), and
    tables of each launch's values of several numbers (by name)."""

    __slots__ = ("lists", "n", "tables")

    def __init__(self, n: int) -> None:
        self.n = n
        self.lists: dict[int, list[Any]] = {}
        self.tables: dict[str, list[tuple[Any, ...]]] = {}


class RunValues:
    """A run's numbers for some of its launches (`js`, their places in the run, ascending): each a list of the
    values those launches hold (a column's, or the run's one value repeated), as `made(j)` gives them."""

    __slots__ = ("cache", "js", "model", "n")

    def __init__(self, model: AnalysedKernel, js: list[int], cache: RunCache) -> None:
        self.model, self.js, self.n, self.cache = model, js, len(js), cache

    def of(self, x: Any) -> list[Any]:
        if type(x) is not Values:
            return [x] * self.n
        lists = self.cache.lists
        column = lists.get(id(x))
        if column is None:
            column = lists[id(x)] = x.a.tolist()
        return [column[j] for j in self.js]

    def value(self, v: Any) -> list[Any]:
        """A `Value`'s numbers (None for each launch where it is None)."""
        return [None] * self.n if v is None else self.of(v.value)

    def rows(self, key: str, xs: Callable[[], list[Any]], none: Any = None) -> list[tuple[Any, ...]]:
        """Each launch's values of the numbers or `Value`s `xs()` as one tuple (`none` for a None), the run's
        table of them made once (by `key`)."""
        table = self.cache.tables.get(key)
        if table is None and self.cache.n == 1:  # one launch (`add_launch`): its numbers are plain
            values = [x.value if type(x) is Value else x for x in xs()]
            if not any(type(v) is Values for v in values):
                return [tuple(none if v is None else v for v in values)]
        if table is None:
            whole = RunValues(self.model, list(range(self.cache.n)), self.cache)
            columns = [[none] * whole.n if x is None else
                       [none if v is None else v for v in whole.of(x.value if type(x) is Value else x)]
                       for x in xs()]
            table = self.cache.tables[key] = list(zip(*columns, strict=True)) if columns else [()] * whole.n
        return [table[j] for j in self.js]

    def some(self, timed: list[int]) -> RunValues:
        """These values for the launches at `timed` (places in `js`)."""
        return RunValues(self.model, [self.js[k] for k in timed], self.cache)


def durations_of(m: AnalysedKernel, rv: RunValues) -> list[float | None]:
    """Each launch's `groups.group_duration`: its duration where it is usable."""
    if not m.usable or m.q.duration_s is None:
        return [None] * rv.n
    return rv.of(m.q.duration_s.value)


def _entries(columns: LaunchColumns, m: AnalysedKernel, rv: RunValues, raws: Sequence[RawKernel]) -> set[str]:
    """`LaunchColumns.add` of each launch; returns their NVTX ranges."""
    q = m.q
    definitions = tuple((b.definition or "counts") if (b := q.bytes.get(lv)) is not None else None
                        for lv in R.LEVELS)
    shared = (m.usable, m.bound_by, m.regime, limits_measured(m))
    work = rv.rows("work", lambda: [q.flop.get(p) for p in WORK_KEYS])
    tensor = bool(m.tensor_peaks or q.tensor_paths)
    if tensor:
        peaks_t = list(zip(*(rv.value(v) for v in m.tensor_peaks.values()), strict=True)) or [()] * rv.n
        paths_t = list(zip(*(rv.value(v) for v in q.tensor_paths.values()), strict=True)) or [()] * rv.n
    known, kinds, codes = columns.known, columns.kinds, columns.codes
    nvtx_seen: set[str] = set()
    for i, raw in enumerate(raws):
        nvtx = tuple(raw.nvtx_ranges) if raw.nvtx_ranges else NO_RANGES
        nvtx_seen.update(nvtx)
        kind = (*shared, nvtx, raw.device, raw.compute_capability, raw.sm_count, definitions, work[i])
        code = known.get(kind)
        if code is None:
            code = known[kind] = len(kinds)
            kinds.append(kind)
        if tensor:
            columns.tensor[len(columns.index)] = (tuple(zip(m.tensor_peaks, peaks_t[i], strict=True)),
                                                   tuple(zip(q.tensor_paths, paths_t[i], strict=True)))
        columns.index = append_int(columns.index, raw.index)
        codes.append(code)
    numbers = columns.numbers
    for row in rv.rows("numbers", lambda: [q.duration_s, m.limiter_share, *(m.peaks.get(r) for r in ROOF_KEYS)],
                       NONE):
        numbers.extend(row)
    return nvtx_seen


def add_launch(sums: GroupSums, k: AnalysedKernel, carried: Iterable[str]) -> None:
    """One analysed launch (`carried`: its flags that the group carries over, `groups.carried_flags`)."""
    if sums.members is not None:
        sums.members.append(k)
    add_launches(sums, k, RunValues(k, [0], RunCache(1)), (k.raw,), carried, lambda: k)


def add_launches(sums: GroupSums, m: AnalysedKernel, rv: RunValues, raws: Sequence[RawKernel], carried: Iterable[str],
                 first: Callable[[], AnalysedKernel]) -> None:
    """The launches of the run `m` at `rv.js` (`raws`: theirs; `carried`: the flags the group carries over), in
    order; `first()` makes the first of them, where the group keeps it as its first launch."""
    if sums.first is None:
        sums.first = first()
    sums.nvtx.update(_entries(sums.entries, m, rv, raws))
    sums.flags.update(dict.fromkeys(carried))
    launch = m.launch
    if len(sums.waves) < 2:
        for waves in rv.of(launch.get("waves_per_sm")):
            if len(sums.waves) >= 2:
                break
            if not any(w is waves or w == waves for w in sums.waves):
                sums.waves.append(waves)
    q = m.q
    if m.usable:
        sums.usable += rv.n
        for values, keys in ((q.flop, WORK_KEYS), (q.bytes, R.LEVELS)):
            for key in keys:
                v = values.get(key)
                if v is None:
                    sums.summed_known[key] = False
                else:
                    sums.summed[key].extend(rv.of(v.value))
    found = durations_of(m, rv)
    if found[0] is None:  # usable and timed is one answer for a run
        return
    ds: list[float] = found  # type: ignore[assignment]
    sums.durations.extend(ds)
    timed = [k for k, d in enumerate(ds) if d > 0]
    if not timed:
        return
    if len(timed) < rv.n:
        rv = rv.some(timed)
        ds = [ds[k] for k in timed]
    sums.timed_count += rv.n
    sums.time.extend(list(ds))
    for name, share in m.utilization.items():
        _weigh(sums, name, ds, rv.of(share))
    _units(sums, m, rv, ds)
    for fact in ("waves_per_sm", "achieved_occupancy", "sm_active_share"):
        figure = launch.get(fact)
        if figure is not None:
            pair = sums.facts.get(fact)
            if pair is None:
                pair = sums.facts[fact] = (ExactSum(), ExactSum())
            figures = rv.of(figure)
            pair[0].extend(list(ds))
            pair[1].extend([d * f for d, f in zip(ds, figures, strict=True)])
    if m.total_flop is None:
        sums.flop_known = False
    else:
        sums.flop.extend(rv.of(m.total_flop))
    for lv in R.LEVELS:
        b = q.bytes.get(lv)
        if b is None:
            sums.moved_known[lv] = False
        else:
            sums.moved[lv].extend(rv.of(b.value))
    per_precision = sums.per_precision
    for p, work in q.flop.items():
        if work is not None:
            total = per_precision.get(p, 0.0)
            for v in rv.of(work.value):
                total = total + v
            per_precision[p] = total


def _weigh(sums: GroupSums, name: str, ds: list[float], shares: list[float]) -> None:
    """A roof's duration-weighted sums, launch after launch (`GroupSums.add`)."""
    w = sums.shares.get(name)
    start = 0
    if w is None:
        w = sums.shares[name] = Weighted()
        w.work, w.time = ds[0] * shares[0], ds[0]
        start = 1
    work, time = w.work, w.time
    for k in range(start, len(ds)):
        work += ds[k] * shares[k]
        time += ds[k]
    w.work, w.time = work, time
    if all(map(math.isfinite, shares)):
        w.finite_time.extend(list(ds))
        w.finite_work.extend([d * s for d, s in zip(ds, shares, strict=True)])
    else:
        for d, s in zip(ds, shares, strict=True):
            if math.isfinite(s):
                w.finite_time.add(d)
                w.finite_work.add(d * s)


def _units(sums: GroupSums, m: AnalysedKernel, rv: RunValues, ds: list[float]) -> None:
    """The unit shares' sums (`GroupSums.add`): held as columns where the units are the group's first launch's."""
    units = m.units
    order = tuple(units)
    shares = rv.rows("units", lambda: [u.share for u in units.values()])
    if sums.unit_order is None:
        sums.unit_order = order
        for (uid, unit), share in zip(units.items(), shares[0], strict=True):
            sums.units[uid] = (_new_share(UnitShare, (unit.id, share, *unit[2:])), None, None)
    if order == sums.unit_order:
        sums.pending_times.extend(ds)
        sums.pending_shares.extend(shares)
        if len(sums.pending_times) >= BUFFER:
            sums.flush()
        return
    for (uid, unit), column in zip(units.items(), zip(*shares, strict=True), strict=True):
        if uid not in sums.units:
            sums.units[uid] = (_new_share(UnitShare, (unit.id, column[0], *unit[2:])), None, None)
        time, work = sums.unit_sums(uid)
        time.extend(list(ds))
        work.extend([d * s for d, s in zip(ds, column, strict=True)])
