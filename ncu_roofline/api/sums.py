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

import itertools
import math
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

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

    def _set_apart(self) -> list[float]:
        special = self._special
        if type(special) is tuple:
            special = self._special = []
        return special  # type: ignore[return-value]

    def values(self) -> list[float]:
        """Values whose `fsum` is that of every value added (the partials, then the rest)."""
        return [*self._partials, *self._buffer, *self._special]

    def fsum(self) -> float:
        """`fsum` of the values."""
        return fsum(self.values())

    def exact(self) -> float | None:
        """`exact_sum` of the values."""
        return exact_sum(self.values())


def column_parts(matrix: np.ndarray) -> list[list[float]]:
    """Per column of a (row, column) matrix, floats whose exact sum is that of the column's values: a few sums of
    parts split off the values exactly (`GroupSums.settle` folds these, not every value), or the values themselves
    where the matrix holds NaN, an infinity or a magnitude past 2**±900, or needs over `_PASSES` passes.

    Each pass splits every value x of a column off at σ, a power of two at least 2n·max|x| (n rows): q = (σ + x) - σ
    is x on a grid of σ·2**-53 and x - q is exact (Rump, Ogita and Oishi's ExtractScalar). The n parts q, on that
    grid and under σ/n each, sum exactly in any order; the rest, at most σ·2**-53 each, goes to the next pass, until
    none is left (about 45 bits a pass)."""
    n = len(matrix)
    if n == 0:
        return [[] for _ in range(matrix.shape[1])]
    x = matrix
    parts: list[np.ndarray] = []
    zeros: Any = None
    for _ in range(_PASSES):
        high = np.abs(x).max(axis=0)
        if not (high <= _HUGE).all():  # (False for NaN)
            break
        live = high > 0
        if zeros is None:
            zeros = np.flatnonzero(~live).tolist()
        if not live.any():
            out: list[list[float]] = np.array(parts).T.tolist() if parts else [[] for _ in range(matrix.shape[1])]
            for j in zeros:  # a column of zeros: -0.0 only where every one is, so `fsum` signs its parts as its values
                out[j] = [-0.0 if np.signbit(matrix[:, j]).all() else 0.0]
            return out
        if not (high[live] >= _TINY).all():
            break
        sigma = np.where(live, np.ldexp(1.0, np.frexp(high)[1] + (n.bit_length() + 1)), 0.0)
        q = (sigma + x) - sigma
        x = x - q
        parts.append(q.sum(axis=0))
    return matrix.T.tolist()  # type: ignore[no-any-return]


_PASSES = 8  # (values of one scale take one to three)
_TINY, _HUGE = 2.0**-900, 2.0**900


def fsum(values: Iterable[float]) -> float:
    """`math.fsum`, infinite where an intermediate sum passes the float range (hand-edited values) instead of
    raising, NaN where it holds both infinities (as a plain sum has it): such a total is shown as not available."""
    try:
        return math.fsum(values)
    except OverflowError:
        return math.inf
    except ValueError:  # -inf + inf
        return math.nan


def exact_sum(values: Iterable[float]) -> float | None:
    """`math.fsum`, None where the sum is not a finite float."""
    try:
        total = math.fsum(values)
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


def extend_ints(column: array[int] | list[int], values: list[int]) -> array[int] | list[int]:
    """`column` with `values` appended: an array of 64-bit integers, a list once a value does not fit one (a
    hand-edited kernel ID); returns the column to keep."""
    had = len(column)
    try:
        column.extend(values)
    except OverflowError:  # (the values before the one that does not fit were appended)
        column = [*column[:had], *values]
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

    def by_kind(self) -> Iterator[tuple[_Kind, np.ndarray, np.ndarray]]:
        """Each kind of launch the group holds (what its entries share but their numbers), with the positions of
        its launches and their numbers (rows of duration, limiter share and roofs, NaN for none)."""
        n = len(self.index)
        codes = np.frombuffer(self.codes, dtype=f"u{self.codes.itemsize}", count=n)
        numbers = np.frombuffer(self.numbers, dtype=np.float64, count=n * _NUMBERS).reshape(n, _NUMBERS)
        order = np.argsort(codes, kind="stable")  # each kind's launches together, in launch order
        ends = np.cumsum(np.bincount(codes, minlength=len(self.kinds)))
        for kind, start, end in zip(self.kinds, [0, *ends[:-1].tolist()], ends.tolist(), strict=True):
            if end > start:
                at = order[start:end]
                yield kind, at, numbers[at]

    def indices(self) -> list[int]:
        """Each launch's index, in order, without building its entry."""
        return list(self.index)

    def durations(self) -> np.ndarray:
        """Each launch's duration, in order (NaN for none), without building its entry."""
        n = len(self.index)
        found: np.ndarray = np.frombuffer(self.numbers, dtype=np.float64, count=n * _NUMBERS)[::_NUMBERS].copy()
        return found

    def verdicts(self) -> Iterator[tuple[int, str | None, str | None]]:
        """(index, limiter, regime) of each usable launch, in order, without building its entry."""
        kinds = self.kinds
        for index, code in zip(self.index, self.codes, strict=True):
            kind = kinds[code]
            if kind[0]:
                yield index, kind[1], kind[2]


HELD_ROWS = 64  # rows a group holds before it adds them to its sums (a usable, timed launch holds one in each of
# two layouts: its FLOP and bytes, and its timed columns)
_NUMBERED = itertools.count()
_LAYOUTS: dict[tuple[Any, ...], Layout] = {}  # the runs of one kernel share one


class Layout:
    """Where a run's columns go in its groups' sums: the durations (column 0 of the timed launches' columns, `time`)
    to one sum of the layout's own (`number`) that stands for every sum of time it names (the launches' time,
    and that of each roof, unit and fact they have); each other column to the sums `keys` names."""

    __slots__ = ("keys", "number", "time")

    def __init__(self, time: frozenset[tuple[str, ...]] | None, keys: tuple[tuple[tuple[str, ...], ...], ...]) -> None:
        self.time, self.keys = time, keys
        self.number = next(_NUMBERED)  # never reused: a group's sums of time are told apart by it

    @classmethod
    def of(cls, time: frozenset[tuple[str, ...]] | None, keys: tuple[tuple[tuple[str, ...], ...], ...]) -> Layout:
        found = _LAYOUTS.get((time, keys))
        if found is None:
            if len(_LAYOUTS) >= 4096:
                _LAYOUTS.clear()
            found = _LAYOUTS[(time, keys)] = cls(time, keys)
        return found


class GroupSums:
    """One group's launches, added in report order (`api.run_sums`), summed. `keep`: the launches themselves are
    kept too (`members`: a report analysed per launch weighs every launch's own ceilings).

    The sums (`ExactSum`, by key, made on first use): of the usable launches, their FLOP and bytes (`("summed",
    key)`); of those timed over 0, their time (`("time",)`), and per roof, unit and duration-weighted fact the time
    of the launches that have it (`("share_time", roof)`, the finite shares' `("finite_time", roof)`,
    `("unit_time", uid)`, `("fact_time", fact)`) and the sum of duration × share (`share_work`, `finite_work`,
    `unit_work`, `fact_work`), their FLOP (`("flop",)`), bytes per level (`("moved", level)`) and FLOP per precision
    (`("precision", p)`). The times are held per `Layout` (`times`: one sum stands for all those its launches
    share), the rest in `sums`. Launches are held as rows of their columns (`hold`) and added to the sums
    `HELD_ROWS` at a time, column by column (`settle`)."""

    def __init__(self, keep: bool) -> None:
        self.members: list[AnalysedKernel] | None = [] if keep else None
        self.first: AnalysedKernel | None = None
        self.entries = LaunchColumns()
        self.durations = array("d")  # of the timed launches
        self.timed_count = 0
        self.sums: dict[tuple[str, ...], ExactSum] = {}
        self.times: dict[int, tuple[frozenset[tuple[str, ...]], ExactSum]] = {}
        self.held: dict[int, tuple[Layout, list[Any]]] = {}  # by layout number: rows not yet summed
        self.held_rows = 0
        self.roofs: dict[str, None] = {}  # as the launches have them, in order
        self.units: dict[str, UnitShare] = {}  # per unit: its first launch's
        self.precisions: dict[str, None] = {}
        self.flop_known = True
        self.moved_known = dict.fromkeys(R.LEVELS, True)
        self.flags: dict[str, None] = {}
        self.waves: list[float | None] = []  # the distinct waves per SM seen, up to two
        self.summed_known = dict.fromkeys((*WORK_KEYS, *R.LEVELS), True)
        self.usable = 0
        self.nvtx: set[str] = set()

    def hold(self, layout: Layout, rows: Any) -> None:
        """Hold launches' rows of columns (a (launch, column) array) to be summed."""
        found = self.held.get(layout.number)
        if found is None:
            self.held[layout.number] = (layout, [rows])
        else:
            found[1].append(rows)
        self.held_rows += len(rows)
        if self.held_rows >= HELD_ROWS:
            self.settle()

    def settle(self) -> None:
        """Add the rows held to their sums, column by column."""
        for layout, chunks in self.held.values():
            columns = column_parts(np.vstack(chunks))
            if layout.time is not None:
                found = self.times.get(layout.number)
                if found is None:
                    found = self.times[layout.number] = (layout.time, ExactSum())
                found[1].extend(columns[0])
                columns = columns[1:]
            for keys, column in zip(layout.keys, columns, strict=True):
                for key in keys:
                    self.exact(key).extend(column)
        self.held, self.held_rows = {}, 0

    @property
    def count(self) -> int:
        return len(self.entries)

    def exact(self, key: tuple[str, ...]) -> ExactSum:
        """The sum of that key (made on first use): each column's but the time of a layout (`times`), and the
        finite shares' time and work of launches whose shares are not all finite."""
        found = self.sums.get(key)
        if found is None:
            found = self.sums[key] = ExactSum()
        return found

    def _totals(self, keys: list[tuple[str, ...]], total: Callable[[ExactSum], float | None]) -> list[Any]:
        """`total` (`ExactSum.fsum`, 0.0 where nothing was added, or `exact`) of every value added to each key: its
        sum's (for a time, those of the layouts that name it), the rows still held settled first."""
        if self.held:
            self.settle()
        parts = {key: ExactSum() for key in keys}
        for names, part in self.times.values():
            for key in keys:
                if key in names:
                    parts[key].extend(part.values())
        for key in keys:
            found = self.sums.get(key)
            if found is not None:  # (a time: the finite shares' of launches whose shares are not all finite)
                parts[key].extend(found.values())
        return [total(parts[key]) for key in keys]

    def _fsum(self, *key: str) -> float:
        """The sum of that key, 0.0 where no launch added to it."""
        return self._totals([key], ExactSum.fsum)[0]  # type: ignore[no-any-return]

    def weighted_shares(self) -> dict[str, float]:
        """Per roof, the duration-weighted mean of the shares of the launches that have it (finite ones)."""
        out: dict[str, float] = {}
        found = self._totals([(kind, name) for name in self.roofs for kind in ("share_time", "share_work")],
                             ExactSum.fsum)
        for name, time, work in zip(self.roofs, found[0::2], found[1::2], strict=True):
            if not time > 0:
                continue
            value = work / time
            if not math.isfinite(value):  # rare: the finite shares alone
                weight = self._fsum("finite_time", name)
                if weight <= 0:
                    continue
                value = self._fsum("finite_work", name) / weight
            out[name] = value
        return out

    def weighted_units(self) -> dict[str, UnitShare]:
        """Every unit throughput of the launches, its share the duration-weighted mean of theirs (a unit whose
        sums leave the float range is left out)."""
        out: dict[str, UnitShare] = {}
        found = self._totals([(kind, uid) for uid in self.units for kind in ("unit_time", "unit_work")],
                             ExactSum.exact)
        for (uid, first), time, work in zip(self.units.items(), found[0::2], found[1::2], strict=True):
            if time is not None and time > 0 and work is not None:
                out[uid] = tuple.__new__(UnitShare, (first[0], work / time, *first[2:]))
        return out

    @property
    def facts(self) -> list[str]:
        """The facts weighed by duration that some timed launch has."""
        if self.held:
            self.settle()
        return list(dict.fromkeys(key[1] for names, _ in self.times.values() for key in names if key[0] == "fact_time"))

    def weighted_fact(self, fact: str) -> float | None:
        if fact not in self.facts:
            return None
        weight, work = self._totals([("fact_time", fact), ("fact_work", fact)], ExactSum.fsum)
        return work / weight if weight > 0 else None

    def total_time(self) -> float:
        return self._fsum("time")

    def total_flop(self) -> float | None:
        return self._fsum("flop") if self.flop_known else None

    def moved_bytes(self, level: str) -> float | None:
        return self._fsum("moved", level) if self.moved_known[level] else None

    def precision_flop(self) -> dict[str, float]:
        """The FLOP of each precision the timed launches did, in the order they first did it."""
        return dict(zip(self.precisions, self._totals([("precision", p) for p in self.precisions], ExactSum.fsum),
                        strict=True))

    def summed_work(self, keys: tuple[str, ...]) -> dict[str, float | None]:
        """FLOP or bytes per key, summed over the usable launches when every one of them has the value."""
        known = [key for key in keys if self.usable and self.summed_known[key]]
        found = dict(zip(known, self._totals([("summed", key) for key in known], ExactSum.fsum), strict=True))
        return {key: found.get(key) for key in keys}
