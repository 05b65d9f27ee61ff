"""Many launches read as one: each number a column of their values (`Values`), for the model to run once over them.

The model is written for one launch: it reads numbers, does arithmetic and takes decisions (`if duration > 0`,
which recipe holds every term, which limit is the busiest). Run over a `LaunchBlock`, every number it reads of the
metrics is a `Values`, a column with one value per launch of the block: the arithmetic is numpy's, element by
element (IEEE double, as Python's floats), and a decision asks its `Test` for one answer. Where the launches agree,
the model goes on once for all of them; where they do not, `Split` names the launches of each answer and the
model is run again over each part (`api.bulk`). What the model cannot take as a column (a value formatted into a
text, a look-up of a name the block does not share) raises `PerLaunch`: those launches are modelled one by one.

So there is one model, and its formulas and decisions are the ones every launch has always gone through; the
block only decides how many launches one run of it serves.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from .record import Metric, RawKernel
from .values import PerLaunch, Split, Values

__all__ = ["BlockMetrics", "LaunchBlock", "hot_matrix"]


# The launch fields the model may read, and how a block answers them where its launches differ: `Split` by the
# value (a compute capability, a grid) or nothing but one launch at a time (a name, an index).
_SPLIT_BY = frozenset({"compute_capability", "device", "sm_count", "grid_size", "block_size"})
_UNSET = object()


class _Parts:
    """Where a metric parts a block's launches (`Split`'s groups), as `BlockMetrics.get` keeps the answer."""

    __slots__ = ("groups",)

    def __init__(self, groups: list[np.ndarray]) -> None:
        self.groups = groups


class BlockMetrics:
    """The metrics of a block's launches (CSV rows of one export, `RowMetrics`) as the model reads one launch's:
    the columns every row parsed at once as `Values` (`hot_values`); any other metric read of each of these rows
    when the model asks for it (`get`: where the model reads it of each of them alone, so that what a row's reading
    notes, a value it leaves out, is the same), `Split` where the rows hold it differently."""

    def __init__(self, rows: Sequence[RawKernel], hot: np.ndarray, hot_index: Mapping[str, int],
                 hot_units: Any, at: np.ndarray | None = None) -> None:
        first = rows[0].metrics
        self._rows = rows
        self._at = at  # these launches' positions among `rows` (None: all of them)
        self._hot, self._hot_index = hot, hot_index
        self._mine: dict[str, Any] = {}
        self.hot_units = hot_units
        self.possible_names = first.possible_names  # type: ignore[attr-defined]
        self.read_so_far: dict[str, Metric | None] = {}
        self.hot_values = _HotView(hot, hot_index)

    def part(self, mask: np.ndarray) -> BlockMetrics:
        """The metrics of the launches `mask` selects of this block's."""
        at = np.flatnonzero(mask)
        where = at if self._at is None else self._at[at]
        return BlockMetrics(self._rows, self._hot[at], self._hot_index, self.hot_units, where)

    def get(self, name: str, default: Any = None) -> Any:
        found = self._mine.get(name, _UNSET)
        if found is _UNSET:
            try:
                found = self._column(name)
            except Split as split:  # its parts, kept without the exception: that holds this object's frames
                found = _Parts(split.groups)
            self._mine[name] = found
        if type(found) is _Parts:
            raise Split(found.groups)
        return default if found is None else found

    def _column(self, name: str) -> Any:
        if name not in self.possible_names:  # not in the export's header: absent from every row, read of none
            return None
        j = self._hot_index.get(name)
        if j is not None:  # every row's value as its `get` reads it, in the matrix already
            return self._numbers(self._hot[:, j], self.hot_units[name])
        rows = self._rows
        held = [r.metrics.get(name) for r in rows] if self._at is None else [rows[i].metrics.get(name)
                                                                                for i in self._at.tolist()]
        absent = np.fromiter((m is None for m in held), bool, len(held))
        if absent.all():
            return None
        if absent.any():
            raise Split([absent, ~absent])
        values = [m.value for m in held]  # type: ignore[union-attr]
        numbers = np.fromiter((type(v) is float for v in values), bool, len(values))
        if numbers.all():
            return self._numbers(np.array(values), held[0].unit)  # type: ignore[union-attr]
        if numbers.any():
            raise Split([numbers, ~numbers])
        first = held[0]
        if all(m == first for m in held):  # one text (and unit) for every row
            return first
        kinds: dict[Any, list[int]] = {}
        for k, m in enumerate(held):
            kinds.setdefault(m, []).append(k)
        raise Split(_masks(kinds.values(), len(held)))

    @staticmethod
    def _numbers(a: np.ndarray, unit: str) -> Metric:
        """A column of every row's number; NaN and infinity are each launch's own story (`Resolver.nan_seen`)."""
        finite = np.isfinite(a)
        if not finite.all():
            if finite.any():
                raise Split([finite, ~finite])
            raise PerLaunch
        return Metric(Values(a), unit)  # type: ignore[arg-type]

    def names_starting(self, prefix: str) -> list[str]:
        starting = getattr(self.possible_names, "starting", None)
        if starting is None:
            raise PerLaunch
        return [n for n in starting(prefix) if self.get(n) is not None]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def __getitem__(self, name: str) -> Any:
        found = self.get(name)
        if found is None:
            raise KeyError(name)
        return found

    def __iter__(self) -> Iterator[str]:
        raise PerLaunch

    def __len__(self) -> int:
        raise PerLaunch


class _HotView:
    """`BlockMetrics.hot_values`: the block's column of each name every row parsed at once (it holds the matrix,
    not the metrics, so that the two make no reference cycle for the cyclic collector to find)."""

    __slots__ = ("_index", "_matrix")

    def __init__(self, matrix: np.ndarray, index: Mapping[str, int]) -> None:
        self._matrix, self._index = matrix, index

    def get(self, name: str, default: Any = None) -> Any:
        j = self._index.get(name)
        return default if j is None else Values(self._matrix[:, j])

    def __contains__(self, name: object) -> bool:
        return name in self._index

    def __len__(self) -> int:
        return len(self._index)


class LaunchBlock:
    """A block's launches as the one launch the model reads: `metrics` a `BlockMetrics`; a field of the launches
    (`RawKernel`'s) one value where they all hold it, else `Split` by value or `PerLaunch`."""

    def __init__(self, rows: Sequence[RawKernel], metrics: BlockMetrics, at: np.ndarray) -> None:
        self._rows, self._at = rows, at
        self.metrics = metrics

    def __getattr__(self, field: str) -> Any:
        if field.startswith("_"):
            raise AttributeError(field)
        rows, at = self._rows, self._at.tolist()
        values = [getattr(rows[i], field) for i in at]
        first = values[0]
        if all(v == first for v in values):
            return first
        if field not in _SPLIT_BY:
            raise PerLaunch
        groups: dict[Any, list[int]] = {}
        for k, v in enumerate(values):
            groups.setdefault(tuple(v) if isinstance(v, list) else v, []).append(k)
        raise Split(_masks(groups.values(), len(values)))

    def number(self, name: str) -> Any:
        """`RawKernel.number` of every launch: a column (finite by `BlockMetrics`), or one plain value."""
        m = self.metrics.get(name)
        if m is None:
            return None
        if type(m.value) is Values:
            return m.value
        return RawKernel.number(self, name)  # type: ignore[arg-type]


def _masks(parts: Iterable[list[int]], size: int) -> list[np.ndarray]:
    """A boolean mask over `size` launches for each part (positions)."""
    masks = []
    for positions in parts:
        mask = np.zeros(size, bool)
        mask[positions] = True
        masks.append(mask)
    return masks


def hot_matrix(rows: Sequence[RawKernel]) -> tuple[np.ndarray, Mapping[str, int], Any, list[int]] | None:
    """The values every row parsed at once (`RowMetrics.hot_row`), as one matrix (row, column), with each name's
    column, their units, and the positions of the rows it holds: those that hold every one of those values (the
    others are modelled one by one); None where no row has such values."""
    held: list[int] = []
    arrays: list[np.ndarray] = []
    base: Any = None  # the matrix the last rows' values are consecutive rows of (a block of rows'), and where
    start = end = 0
    for k, row in enumerate(rows):
        metrics = row.metrics
        hot_row = getattr(metrics, "hot_row", None)
        values = hot_row() if hot_row is not None else None
        if values is None:
            continue
        held.append(k)
        place = metrics.hot_place()  # type: ignore[attr-defined]
        if base is not None and place is not None and place[0] is base and place[1] == end:
            end += 1  # the next row of that matrix
            continue
        if base is not None:
            arrays.append(base[start:end])
        if place is None:
            base = None
            arrays.append(values[np.newaxis])
        else:
            base, start = place
            end = start + 1
    if base is not None:
        arrays.append(base[start:end])
    if not held:
        return None
    first = rows[held[0]].metrics
    return np.vstack(arrays), first.hot_index, first.hot_units, held  # type: ignore[attr-defined]
