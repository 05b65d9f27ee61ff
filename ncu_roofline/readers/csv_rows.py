"""The metrics of an ncu CSV export's rows, parsed as they are read, and what the layout alone does not catch.

- Values: `parse_value` reads a cell; `RowMetrics` parses a row's cells when the analysis asks for
  them, and the columns it read of the first row at once in every later row (`HotColumns`).
- Impossible values: a count, share or rate (`*.sum`, `*.avg`, `*.min`, `*.max`, `*pct*`,
  `*.ratio`, `*per_second`, `*peak_sustained*`) cannot be negative, except for the noise around
  zero that Nsight Compute writes itself in a share (-0.07 % for an idle pipe's `.min`; down to
  -1 % is kept as read). Such a value is left out when it is read (it shows up as missing, not as a
  -1e28 utilisation) and noted for one warning per file (`ImpossibleValues`). Only what is read is
  checked: unedited exports hold negative counters the analysis never reads (ncu's own
  `lts__t_sectors_srcunit_tex_op_red_lookup_miss.sum = -24`), and checking every cell of such an
  export cost a sixth of reading and analysing it; the columns every row parses at once are checked
  in that pass (`HotColumns`), the others the analysis may read in one search per block of rows.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from .csv_cells import QUOTE_TO_NUL, CellPicker, QuotedRow, RowBlock, cell_list, cell_text, quote_numbers
from .csv_impossible import (
    MISSING,
    ImpossibleValues,
    SignedColumns,
    cannot_hold,
    impossible_cells,
    lowest_value,
    may_hold_impossible,
    parse_value,
)
from .record import UNREAD, Metric


class Columns(dict[str, tuple[int, str]]):
    """One export's metric columns: name -> (cell index, unit), shared by every row's RowMetrics,
    with the names under a prefix found once per export (`starting`), the columns every row
    parses at once (`hot`, see `learn_hot`), the lowest value each column that cannot be negative
    may hold (`lowest`), the impossible values its rows left out (`impossible`), and the columns
    the analysis may read that every row checks on its own (`always`: `watched` less `hot`)."""

    def __init__(self, *args: Any, impossible: ImpossibleValues | None = None, watched: Iterable[str] = ()) -> None:
        super().__init__(*args)
        self._by_prefix: dict[str, tuple[str, ...]] = {}
        self.hot: HotColumns | None = None
        self.lowest = {name: floor for name in self if (floor := lowest_value(name)) > -math.inf}
        self.impossible = ImpossibleValues() if impossible is None else impossible
        self._signed: SignedColumns | None = None
        self._watched = [name for name in watched if name in self.lowest]
        self.always = SignedColumns([(self[n][0], n) for n in self._watched]) if self._watched else None

    @property
    def signed(self) -> SignedColumns:
        """The columns that cannot be negative, for a scan of a whole row (`RowMetrics` listed)."""
        if self._signed is None:
            self._signed = SignedColumns([(self[name][0], name) for name in self.lowest])
        return self._signed

    def learn_hot(self, metrics: RowMetrics) -> None:
        """Parse, in every later row, the number columns the analysis read of this one (once, at the
        row's creation, in C-level loops), instead of one look-up and one parse per cell on demand.

        The same names are read of nearly every kernel of an export (the header decides which the
        analysis can find); a name not learnt is still read on demand, and a learnt one the
        analysis does not read costs one float(). Each value is parsed exactly as `get` would.
        """
        fetched = metrics.fetched()
        names = tuple(n for n, m in fetched.items() if type(m.value) is float and n in self)
        if len(names) >= 2:
            rest = [(self[n][0], n) for n in self._watched if n not in names]
            self.always = SignedColumns(rest) if rest else None
            texts = tuple(n for n, m in fetched.items() if type(m.value) is str and n in self)
            self.hot = HotColumns(names, self, self.always, texts)  # which checks `always` in its pass

    def starting(self, prefix: str) -> tuple[str, ...]:
        found = self._by_prefix.get(prefix)
        if found is None:
            found = self._by_prefix[prefix] = tuple(n for n in self if n.startswith(prefix))
        return found


Impossible = tuple[tuple[str, float | str], ...]  # (column, value) of a row's values that a column cannot hold
_NONE_IMPOSSIBLE: Impossible = ()
_NO_TEXTS: dict[str, Metric | None] = {}


class HotColumns:
    """Number columns parsed at once in every row: names, a picker of their cells, units. The same pass
    finds the values a column cannot hold (`Columns.lowest`): of these columns (`signed`: position,
    lowest value), and of the other columns the analysis may read (`always`). Text columns read of every row
    (`texts`, a breakdown's list of metrics) are read once for a block whose rows all hold the same cell."""

    __slots__ = ("_floors", "_texts", "always", "cells_of", "index", "names", "signed", "texts", "unit_of", "units")

    def __init__(self, names: tuple[str, ...], columns: Mapping[str, tuple[int, str]],
                 always: SignedColumns | None = None, texts: tuple[str, ...] = ()) -> None:
        self.names = names
        self.index = {name: j for j, name in enumerate(names)}
        self.cells_of = CellPicker([columns[n][0] for n in names])
        self.units = tuple(columns[n][1] for n in names)
        self.unit_of = dict(zip(names, self.units, strict=True))
        lowest: Mapping[str, float] = getattr(columns, "lowest", _NO_FLOORS)
        self.signed = tuple((j, lowest[n]) for j, n in enumerate(names) if n in lowest)
        self.always = always
        self._floors: tuple[Any, Any] | None = None
        self.texts = texts
        self._texts = (*quote_numbers([columns[n][0] for n in texts]), [columns[n][1] for n in texts],
                       [lowest.get(n) for n in texts])

    @property
    def floors(self) -> tuple[Any, Any]:
        """`signed` as arrays: the positions among `names`, and each one's lowest value."""
        if self._floors is None:
            import numpy as np

            self._floors = (np.array([j for j, _ in self.signed], dtype=np.intp),
                            np.array([floor for _, floor in self.signed], dtype=float))
        return self._floors

    def parse(self, row: Sequence[str]) -> tuple[Any, dict[str, Metric | None], Impossible]:
        """The columns' values in `row`: (their floats, in `names` order, an array (for a row of a block, a view of
        the block's matrix, `RowMetrics.own`), for a row of numbers only; name -> metric, as `RowMetrics.get` reads
        it, None for a missing cell, for any other row), and the (name, value) the row holds that a column cannot
        (`Columns.lowest`), for the row to leave out.

        The usual row is all numbers, some with thousands separators (ncu writes "2,048"): its cells (a
        block's rows' at once) are converted in one call (`csv_numbers.number_matrix`). Any other cell (empty,
        text, a comma outside thousands groups) sends the row to the cell-by-cell reading.
        """
        if type(row) is QuotedRow and row.block is not None:
            _, values, impossible, suspect, texts = self._block_values(row.block)
            found = values[row.position]
            if found is not None:
                left_out = impossible.get(row.position, _NONE_IMPOSSIBLE)
                if suspect:  # a cell of the other columns opens with a minus somewhere in the block
                    left_out += tuple(impossible_cells(row, suspect))
                return found, dict(texts), left_out
        from . import csv_numbers  # (numpy: imported where a CSV's numbers are read; a block's rows read them above)

        cells = self.cells_of(row)
        matrix, whole = csv_numbers.row_numbers(cells)
        others = tuple(impossible_cells(row, self.always)) if self.always is not None else _NONE_IMPOSSIBLE
        if whole[0]:  # plain floats: a metric is made only for a name asked for through `get`
            return matrix[0], {}, self._impossible(matrix[0].tolist()) + others
        metrics = {name: _read_cell(cell, unit) for name, cell, unit in zip(self.names, cells, self.units, strict=True)}
        names = self.names
        return None, metrics, others + tuple(
            (names[j], m[0]) for j, floor in self.signed
            if (m := metrics[names[j]]) is not None
            and cannot_hold(names[j], m[0], floor))

    def _impossible(self, values: Sequence[float]) -> Impossible:
        """(name, value) of the row's plain values below what their column can hold."""
        names = self.names
        return tuple((names[j], values[j]) for j, floor in self.signed if values[j] < floor)

    def _block_values(self, block: RowBlock) -> tuple[Any, ...]:
        """`block.parsed`, made once per block: (this reader; the columns' values of each row, read as
        `parse` reads one row, from the text of all the rows' cells at once, None for a row that is not all
        numbers (it is read on its own); the impossible values of the rows that hold one, by row; `always` where a cell
        of it opens with a minus or a blank in some row (each row then checks its own), else None)."""
        if block.parsed is not None and block.parsed[0] is self:
            return block.parsed
        import numpy as np

        from . import csv_numbers

        always = self.always
        data, starts, lengths = block.spans(*self.cells_of.quote_numbers)
        if always is None:
            content = cell_text(data, starts, lengths)
        else:  # its cells, each with its closing quote, cut out after these: `RowBlock.joined` of them
            _, others, sizes = block.spans(*always.cells.quote_numbers)
            content = cell_text(data, np.concatenate((starts, others)), np.concatenate((lengths, sizes + 1)))
            cut = int(lengths.sum())
            joined = "\x00" + content[cut:].tobytes().translate(QUOTE_TO_NUL).decode()
            content = content[:cut]
            if not may_hold_impossible(joined):
                always = None  # the usual answer, for every row of the block from one search in C
        texts = self._same_texts(block) if self.texts else _NO_TEXTS
        block.release()
        matrix, whole = csv_numbers.number_matrix(content, lengths, len(block), len(self.names))
        matrix = np.array(matrix)  # its own memory (not Arrow's): each row's values are a view of it
        values: list[Any] = list(matrix)  # (a launch held as its group's longest takes its own, `own`)
        impossible: dict[int, Impossible] = {}
        if self.signed:  # a row of numbers below what a column can hold (NaN, in the other rows, is not)
            at, floors = self.floors
            for k in (matrix[:, at] < floors).any(axis=1).nonzero()[0].tolist():
                impossible[k] = self._impossible(matrix[k].tolist())
        if not whole.all():
            for k in (~whole).nonzero()[0].tolist():
                values[k] = None
        block.parsed = (self, values, impossible, always, texts)
        return block.parsed

    def _same_texts(self, block: RowBlock) -> dict[str, Metric | None]:
        """The text columns (`texts`) whose cell is the same in every row of the block, each read once as
        `RowMetrics.get` reads it; one the column cannot hold is left to each row's own reading."""
        opening, closing, units, floors = self._texts
        out: dict[str, Metric | None] = {}
        for j, (name, cell) in enumerate(zip(self.texts, block.same_cells(opening, closing), strict=True)):
            if cell is not None:
                found, floor = _read_cell(cell, units[j]), floors[j]
                if floor is None or found is None or not cannot_hold(name, found[0], floor):
                    out[name] = found
        return out


def _read_cell(cell: str, unit: str) -> Metric | None:
    """One cell as a Metric, or None when it holds no value (the reading of `RowMetrics.get`)."""
    value = parse_value(cell)
    return None if value is None else _new_metric(Metric, (value, unit))


_SUSPECT = " \t\r\nnN"  # first characters of a cell that may be missing ("", " ", "n/a", "N/A")


_new_metric = tuple.__new__  # Metric(value, unit) without the named tuple's Python-level __new__
_NO_UNITS: Mapping[str, str] = {}
_NO_INDEX: Mapping[str, int] = {}
_NO_FLOORS: Mapping[str, float] = {}


def is_missing(cell: str) -> bool:
    """True for a cell that holds no value (empty, blank or `n/a`)."""
    return cell.strip().lower() in MISSING


class RowMetrics(Mapping[str, Metric]):
    """The metrics of one CSV row, each cell parsed only when first asked for.

    A full-set export holds about 700 metric columns and the analysis reads a few hundred; at
    50,000 rows, parsing only what is read is most of the reader's cost saved. A metric whose
    cell is empty or `n/a` is absent, as is one `drop`ped, and one its column cannot hold (`Columns.lowest`),
    noted when read in `Columns.impossible` with the row's `position` among the kernel rows.
    """

    __slots__ = ("_cache", "_columns", "_hot", "_hot_index", "_hot_units", "_lowest", "_position", "_present", "_row",
                 "_values")

    def __init__(self, row: Sequence[str], columns: Mapping[str, tuple[int, str]], position: int = 0) -> None:
        self._row = row
        self._columns = columns  # name -> (cell index, unit), shared by every row of the export
        self._position = position
        self._lowest: Mapping[str, float] = getattr(columns, "lowest", _NO_FLOORS)
        self._present: tuple[str, ...] | None = None
        hot = getattr(columns, "hot", None)
        # The hot columns' values of a row of numbers: an array (`_values`, by `_hot_index`), made a dict
        # (`_hot`, None until then) where a launch is read on its own (`hot_values`) or a value is dropped.
        self._hot: dict[str, float] | None = {}
        self._values: Any = None
        self._hot_index: Mapping[str, int] = _NO_INDEX
        self._cache: dict[str, Metric | None]
        impossible: Sequence[tuple[str, float | str]] = _NONE_IMPOSSIBLE
        if hot is not None:
            self._values, self._cache, impossible = hot.parse(row)
            self._hot_units: Mapping[str, str] = hot.unit_of
            self._hot_index = hot.index
            if self._values is not None:
                self._hot = None
        else:
            self._cache, self._hot_units = {}, _NO_UNITS
            always = getattr(columns, "always", None)
            if always is not None:
                impossible = impossible_cells(row, always)
        for name, value in impossible:  # each column once: `always` holds no hot column
            self._leave_out(name, value)

    def text_bytes(self) -> int:
        """The size of its row's cells: its line's bytes, or its cells' characters (a block of rows holds about twice
        that, `api.bulk.BULK_BYTES`)."""
        row = self._row
        return row.text_length() if type(row) is QuotedRow else sum(map(len, row))

    def get(self, name: str, default: Any = None) -> Any:
        # The analysis asks for about 200 names a kernel, half of them absent from the export's
        # header (the model checks `possible_names` first, so most calls here are of names the
        # header has): a cell read before costs one dict look-up; a first read, one float() (the
        # fast path of `parse_value`) and one tuple.
        found = self._cache.get(name, UNREAD)
        if found is UNREAD:
            hot = self._hot
            if hot is None:
                j = self._hot_index.get(name)
                value = None if j is None else self._values.item(j)
            else:
                value = hot.get(name)
            if value is not None:
                found = self._cache[name] = _new_metric(Metric, (value, self._hot_units[name]))
                return found
            column = self._columns.get(name)
            if column is None:  # not in the export's header: absent from every row
                return default
            found = self._cache[name] = _read_cell(self._row[column[0]], column[1])
            lowest = self._lowest.get(name)  # a count's check costs one look-up and one comparison
            if lowest is not None and found is not None and cannot_hold(name, read := found[0], lowest):
                self._leave_out(name, read)
                return default
        return default if found is None else found

    @property
    def hot_values(self) -> dict[str, float]:
        """The values of the columns every row parses at once (`Columns.learn_hot`), where this row's were all
        numbers (none read through `get` yet, nor dropped, may be in `read_so_far`); their units are
        `hot_units`. Not to be changed."""
        hot = self._hot
        if hot is None:
            hot = self._hot = dict(zip(self._hot_index, self._values.tolist(), strict=True))
        return hot

    def hot_row(self) -> Any:
        """`hot_values` as an array in the hot columns' order (`hot_index`), where the row holds every one of them
        (none dropped); else None. A row of a block of rows: a view of the block's matrix (`own`)."""
        return self._values

    def hot_place(self) -> tuple[Any, int] | None:
        """(the matrix `hot_row` is a row of, that row's number there), where it is a view of one: its block's, at
        its place in the block, or its own row's (one row; a block's row read on its own makes one too)."""
        values = self._values
        base = None if values is None else values.base
        if base is None or getattr(base, "ndim", 0) != 2:
            return None
        return base, (self._row.position if len(base) > 1 else 0)  # type: ignore[attr-defined]

    def own(self) -> None:
        """Hold its values in an array of its own, not a view of its block's matrix, and its line in bytes of its own,
        not its block's text: a row kept long (its group's longest launch) keeps no more than its own."""
        values = self._values
        if values is not None and values.base is not None:
            self._values = values.copy()
        if type(self._row) is QuotedRow:
            self._row.own()

    @property
    def hot_index(self) -> Mapping[str, int]:
        return self._hot_index

    @property
    def hot_units(self) -> Mapping[str, str]:
        return self._hot_units

    @property
    def possible_names(self) -> Mapping[str, Any]:
        """The names this row may hold (the export's header): a name not in it is absent."""
        return self._columns

    def names_starting(self, prefix: str) -> list[str]:
        """The metrics present whose name starts with `prefix` (the header's candidates, looked up once
        per export, then this row's cells)."""
        names = self._columns.starting(prefix) if isinstance(self._columns, Columns) else \
            [n for n in self._columns if n.startswith(prefix)]
        return [n for n in names if self.get(n) is not None]

    @property
    def read_so_far(self) -> dict[str, Metric | None]:
        """The metrics read so far, None for one read as absent (the model looks here before `get`;
        not to be changed)."""
        return self._cache

    def fetched(self) -> dict[str, Metric]:
        """The metrics read so far, as a plain dict (what a kernel keeps once it is analysed); the hot columns'
        values count as read."""
        found = {name: _new_metric(Metric, (value, self._hot_units[name])) for name, value in self.hot_values.items()}
        found.update((name, m) for name, m in self._cache.items() if m is not None)
        return found

    def drop(self, name: str) -> None:
        """Leave a metric out (read as absent from here on)."""
        self._cache[name] = None
        self.hot_values.pop(name, None)
        self._values = None
        self._present = None

    def _leave_out(self, name: str, value: float | str) -> None:
        """Leave out a value its column cannot hold, and note it for the export's warning."""
        self.drop(name)
        impossible = getattr(self._columns, "impossible", None)
        if impossible is not None:
            impossible.note(name, self._position, value, self._columns[name][1])

    def __getitem__(self, name: str) -> Metric:
        found: Metric | None = self.get(name)
        if found is None:
            raise KeyError(name)
        return found

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def _names(self) -> tuple[str, ...]:
        if self._present is None:
            if isinstance(self._columns, Columns) and self._lowest:  # a value listed is a value read: checked
                for name, value in impossible_cells(self._row, self._columns.signed):
                    if name not in self._cache:
                        self._leave_out(name, value)
            row, cache = cell_list(self._row), self._cache
            self._present = tuple(
                name for name, (i, _) in self._columns.items()
                if (cache[name] is not None if name in cache
                    else (cell := row[i]) and (cell[0] not in _SUSPECT or not is_missing(cell))))
        return self._present

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())


