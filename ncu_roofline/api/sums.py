"""A kernel group's launches summed as they come, so that a group never needs its launches kept.

`GroupSums` holds a group's launches summed (`api.run_sums` adds them, in report order: one analysed launch,
or the launches of a run of the model over columns at once); what a group reports of its launches is then at
hand without them (`api.groups` turns it into a `KernelGroup`): the duration-weighted shares of
every roof and unit, the summed work and traffic, the duration statistics, the limiters and regimes, and one
`LaunchEntry` per launch (what the page lists of a launch). Sums of work, traffic and time are exact
(`ExactSum`: `math.fsum` of every value, in a memory bounded by its partials), so a group summed as its
launches stream by equals the group summed from all of them at once, to the last bit.
"""

from __future__ import annotations

import math
import operator
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..knowledge import recipes as R
from ..model.throughputs import UnitShare

if TYPE_CHECKING:
    from .kernel import AnalysedKernel

BUFFER = 64  # values held before they are folded into the partials


class ExactSum:
    """`math.fsum` of every value added, holding at most `BUFFER` values beside its partials: non-overlapping
    floats whose exact sum is that of the values (`fsum` of the partials then rounds it as `fsum` of the values
    would). Infinities and NaN are kept apart (`fsum` treats them apart too); where folding overflows (values
    edited past 1e300), every value is kept from then on, after the partials."""

    __slots__ = ("_buffer", "_partials", "_special", "_whole", "count")

    def __init__(self) -> None:
        # (a group of a few launches holds over a hundred sums: each of these is a list only once it holds a value)
        self._partials: list[float] | tuple[()] = ()
        self._buffer: list[float] | tuple[()] = ()
        self._special: list[float] | tuple[()] = ()
        self._whole = False  # folding overflowed: the values are kept whole
        self.count = 0

    def add(self, value: float) -> None:
        self.count += 1
        if value - value != 0.0:  # NaN or an infinity
            self._set_apart().append(value)
            return
        buffer = self._buffer
        if buffer.__class__ is tuple:
            buffer = self._buffer = []
        buffer.append(value)  # type: ignore[union-attr]
        if len(buffer) >= BUFFER and not self._whole:
            self._fold()

    def extend(self, values: list[float]) -> None:
        """`add` each value (NaN and infinities are set apart when the values are folded)."""
        self.count += len(values)
        buffer = self._buffer
        if buffer.__class__ is tuple:
            buffer = self._buffer = []
        buffer.extend(values)  # type: ignore[union-attr]
        if len(buffer) >= BUFFER and not self._whole:
            self._fold()

    def _fold(self) -> None:
        buffer = self._buffer
        if not all(map(math.isfinite, buffer)):  # from `extend`: NaN and infinities apart
            self._set_apart().extend(v for v in buffer if v - v != 0.0)
            self._buffer = buffer = [v for v in buffer if v - v == 0.0]
        rest = [*self._partials, *buffer]
        partials: list[float] = []
        try:
            while len(partials) < 64:
                total = math.fsum(rest)
                if total == 0.0:
                    break
                partials.append(total)
                rest.append(-total)
            else:
                raise OverflowError("no exact partials")
        except OverflowError:
            self._whole = True
            return
        self._partials, self._buffer = partials, ()

    def copy(self) -> ExactSum:
        """Another sum holding these values (added to apart)."""
        other = ExactSum()
        other._partials, other._buffer, other._special = (list(part) or () for part in (self._partials, self._buffer,
                                                                                         self._special))
        other._whole, other.count = self._whole, self.count
        return other

    def _set_apart(self) -> list[float]:
        special = self._special
        if type(special) is tuple:
            special = self._special = []
        return special  # type: ignore[return-value]

    def values(self) -> list[float]:
        """Values whose `fsum` is that of every value added (the partials, then the rest)."""
        return [*self._partials, *self._buffer, *self._special]

    def fsum(self) -> float:
        """`math.fsum` of the values, infinite where an intermediate sum passes the float range (as `groups._fsum`)."""
        try:
            return math.fsum(self.values())
        except OverflowError:
            return math.inf

    def exact(self) -> float | None:
        """`math.fsum` of the values, None where it is not a finite float (as `groups._exact_sum`)."""
        try:
            total = math.fsum(self.values())
        except (OverflowError, ValueError):
            return None
        return total if math.isfinite(total) else None


@dataclass(slots=True)
class LaunchEntry:
    """What a group keeps of each of its launches: its index, time and verdict (the page's launch list, the NVTX
    tree, `disagreeing_launches`), the roofs it measured (a device's roofs are medians over every launch)."""

    index: int
    duration_s: float | None  # its measured duration, usable or not
    usable: bool
    bound_by: str | None
    limiter_share: float | None
    regime: str | None
    limits_measured: bool  # `passes.levers.limits_measured`: its latency verdict may hide an unmeasured limit
    nvtx_ranges: tuple[str, ...]
    device: str | None
    compute_capability: str | None
    sm_count: int | None
    roofs: tuple[float | None, ...]  # `ROOF_KEYS`, from its peaks
    tensor_roofs: tuple[tuple[str, float], ...]
    work: tuple[float | None, ...]  # FLOP per `WORK_KEYS`
    tensor_ops: tuple[tuple[str, float], ...]
    definitions: tuple[str | None, ...]  # the byte definition per level (`R.LEVELS`), None where not measured

    @property
    def timed(self) -> float | None:
        """Its duration where it counts toward its group's (`groups.group_duration`)."""
        return self.duration_s if self.usable else None


ROOF_KEYS = (*R.LEVELS, *R.PRECISIONS)
WORK_KEYS = (*R.PRECISIONS, "tensor")
NO_RANGES: tuple[str, ...] = ()


_NUMBERS = 2 + len(ROOF_KEYS)  # per launch: duration, limiter share, roofs
NONE = math.nan  # a number the launch does not have (none of these numbers is NaN when it has it)


def append_int(column: array[int] | list[int], value: int) -> array[int] | list[int]:
    """`column` with `value` appended: an array of 64-bit integers, a list once a value does not fit one (a
    hand-edited kernel ID); returns the column to keep."""
    try:
        column.append(value)
    except OverflowError:
        column = [*column, value]
    return column


def _maybe(v: float) -> float | None:
    return None if v != v else v


# What a launch shares with many others, kept once: usable, limiter, regime, limits measured, NVTX ranges, device,
# compute capability, SM count, byte definitions, FLOP (the launches of one kernel and size do the same work).
_Kind = tuple[bool, str | None, str | None, bool, tuple[str, ...], str | None, str | None, int | None,
              tuple[str | None, ...], tuple[float | None, ...]]


class LaunchColumns:
    """A group's launches as columns (each read back as a `LaunchEntry`): about 120 bytes a launch, where one
    `LaunchEntry` of Python objects holds 700."""

    __slots__ = ("codes", "index", "kinds", "known", "numbers", "tensor")

    def __init__(self) -> None:
        self.index: array[int] | list[int] = array("q")
        self.numbers = array("d")  # `_NUMBERS` per launch, NaN for none
        self.codes = array("I")  # per launch: its kind, the rest of its entry (`kinds`)
        self.kinds: list[_Kind] = []
        self.known: dict[_Kind, int] = {}
        self.tensor: dict[int, tuple[tuple[tuple[str, float], ...], tuple[tuple[str, float], ...]]] = {}

    def __len__(self) -> int:
        return len(self.index)

    def __getitem__(self, n: int) -> LaunchEntry:
        usable, bound_by, regime, measured, nvtx, device, cc, sm_count, definitions, work = self.kinds[self.codes[n]]
        numbers = self.numbers[n * _NUMBERS:(n + 1) * _NUMBERS]
        tensor_roofs, tensor_ops = self.tensor.get(n, ((), ()))
        return LaunchEntry(self.index[n], _maybe(numbers[0]), usable, bound_by, _maybe(numbers[1]), regime,
                           measured, nvtx, device, cc, sm_count, tuple(map(_maybe, numbers[2:])), tensor_roofs,
                           work, tensor_ops, definitions)

    def __iter__(self) -> Iterator[LaunchEntry]:
        for n in range(len(self.index)):
            yield self[n]

    def verdicts(self) -> Iterator[tuple[int, str | None, str | None]]:
        """(index, limiter, regime) of each usable launch, in order, without building its entry."""
        kinds = self.kinds
        for index, code in zip(self.index, self.codes, strict=True):
            kind = kinds[code]
            if kind[0]:
                yield index, kind[1], kind[2]


class Weighted:
    """A duration-weighted mean's sums: the plain running ones (in launch order), and exact ones of the finite
    values (the fall-back where the plain mean is not finite)."""

    __slots__ = ("finite_time", "finite_work", "time", "work")

    def __init__(self) -> None:
        self.work = 0.0
        self.time = 0.0
        self.finite_time = ExactSum()
        self.finite_work = ExactSum()


class GroupSums:
    """One group's launches, added in report order (`add`), summed. `keep`: the launches themselves are kept too
    (`members`: a report analysed per launch weighs every launch's own ceilings)."""

    def __init__(self, keep: bool) -> None:
        self.members: list[AnalysedKernel] | None = [] if keep else None
        self.first: AnalysedKernel | None = None
        self.entries = LaunchColumns()
        self.durations = array("d")  # of the timed launches
        self.time = ExactSum()  # of the launches timed over 0
        self.timed_count = 0
        self.shares: dict[str, Weighted] = {}
        # per unit: its first launch's, and the sums of time and duration × share (`unit_sums`: made on first use)
        self.units: dict[str, tuple[UnitShare, ExactSum | None, ExactSum | None]] = {}
        self.unit_order: tuple[str, ...] | None = None  # the units of the group's first timed launch, in its order
        self.pending_times: list[float] = []  # of the launches not yet summed that have those units in that order
        self.pending_shares: list[tuple[float, ...]] = []  # their units' shares
        self.facts: dict[str, tuple[ExactSum, ExactSum]] = {}
        self.flop = ExactSum()
        self.flop_known = True
        self.moved = {lv: ExactSum() for lv in R.LEVELS}
        self.moved_known = dict.fromkeys(R.LEVELS, True)
        self.per_precision: dict[str, float] = {}
        self.flags: dict[str, None] = {}
        self.waves: list[float | None] = []  # the distinct waves per SM seen, up to two
        self.summed = {key: ExactSum() for key in (*WORK_KEYS, *R.LEVELS)}  # over the usable launches
        self.summed_known = dict.fromkeys((*WORK_KEYS, *R.LEVELS), True)
        self.usable = 0
        self.nvtx: set[str] = set()

    @property
    def count(self) -> int:
        return len(self.entries)

    def weighted_shares(self) -> dict[str, float]:
        """Per roof, the duration-weighted mean of the shares of the launches that have it (finite ones)."""
        out: dict[str, float] = {}
        for name, w in self.shares.items():
            if not w.time > 0:
                continue
            value = w.work / w.time
            if not math.isfinite(value):  # rare: the finite shares alone
                weight = w.finite_time.fsum()
                if weight <= 0:
                    continue
                value = w.finite_work.fsum() / weight
            out[name] = value
        return out

    def flush(self) -> None:
        """Sum the launches held in `pending_times` and `pending_shares`, unit by unit (column by column, in C)."""
        times = self.pending_times
        if not times or self.unit_order is None:
            return
        for uid, column in zip(self.unit_order, zip(*self.pending_shares, strict=True), strict=True):
            time, work = self.unit_sums(uid)
            time.extend(times)
            work.extend(list(map(operator.mul, times, column)))
        self.pending_times, self.pending_shares = [], []

    def unit_sums(self, uid: str) -> tuple[ExactSum, ExactSum]:
        """A unit's sums of time and of duration × share (made on first use: a group of a few launches holds its
        launches' shares in `pending_shares` only)."""
        first, time, work = self.units[uid]
        if time is None or work is None:
            time, work = ExactSum(), ExactSum()
            self.units[uid] = (first, time, work)
        return time, work

    def weighted_units(self) -> dict[str, UnitShare]:
        """Every unit throughput of the launches, its share the duration-weighted mean of theirs (a unit whose
        sums leave the float range is left out). The launches still pending are summed into copies: the group keeps
        no sums it did not need."""
        times = self.pending_times
        pending = (dict(zip(self.unit_order, zip(*self.pending_shares, strict=True), strict=True))
                   if times and self.unit_order is not None else {})
        out: dict[str, UnitShare] = {}
        for uid, (first, held_time, held_work) in self.units.items():
            time = ExactSum() if held_time is None else held_time.copy()
            work = ExactSum() if held_work is None else held_work.copy()
            column = pending.get(uid)
            if column is not None:  # as `flush` would add them
                time.extend(times)
                work.extend(list(map(operator.mul, times, column)))
            total, weighted = time.exact(), work.exact()
            if total is not None and total > 0 and weighted is not None:
                out[uid] = tuple.__new__(UnitShare, (first[0], weighted / total, *first[2:]))
        return out

    def weighted_fact(self, fact: str) -> float | None:
        pair = self.facts.get(fact)
        if pair is None:
            return None
        weight = pair[0].fsum()
        return pair[1].fsum() / weight if weight > 0 else None

    def total_flop(self) -> float | None:
        return self.flop.fsum() if self.flop_known else None

    def moved_bytes(self, level: str) -> float | None:
        return self.moved[level].fsum() if self.moved_known[level] else None

    def summed_work(self, keys: tuple[str, ...]) -> dict[str, float | None]:
        """FLOP or bytes per key, summed over the usable launches when every one of them has the value."""
        return {key: self.summed[key].fsum() if self.usable and self.summed_known[key] else None for key in keys}
