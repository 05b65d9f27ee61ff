"""The cells of one CSV row as ncu writes it: `"a","b",...,"z"` and a line end.

A full-set row is about 30 kB in 700 cells, of which the analysis reads about a hundred. Splitting
it into 700 strings is most of what reading an export costs, so an all-quoted UTF-8 row is kept as
its bytes and the positions of its quotes (`QuotedRow`); a cell becomes a string only when it is
read. Consecutive rows of that kind, read from the file at once, form a block (`quoted_text`) whose rows share
those bytes, whose quotes are found in one pass over them, and whose columns a reader cuts out and parses at
once (`RowBlock.spans`): numpy's per-call cost paid per block, not per row. A quote or a comma is one byte of
UTF-8 and never part of another character, so a row's quotes are its bytes' quotes. A row of a block finds its own
quotes again only when one of its cells is read on its own; a row read alone is a block of one. Any
other line (a quote inside a cell, a quoted line break, an unquoted cell, a line end at a bare CR) is
left to `csv.reader`.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, overload

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    IndexArray = npt.NDArray[np.intp]

QUOTE, _COMMA = ord('"'), ord(",")
QUOTE_TO_NUL = bytes.maketrans(b'"', b"\x00")  # a cell's closing quote, as `RowBlock.joined` ends each cell
_numpy: Any = None  # imported on the first row (0.15 s, which a command reading no CSV does not pay)


def _np() -> Any:
    global _numpy
    if _numpy is None:
        import numpy

        _numpy = numpy
    return _numpy


def cell_text(data: Any, starts: Any, lengths: Any) -> Any:
    """The cells at `starts` (each `lengths` bytes) of text `data` (uint8), one after the other."""
    np = _np()
    begins = np.cumsum(lengths) - lengths  # where each cell starts in the result
    index = np.repeat(starts - begins, lengths)
    index += np.arange(len(index), dtype=index.dtype)
    return data[index]


class QuotedRow(Sequence[str]):
    """An all-quoted row: its line (bytes `start` to `end` of `text`: the line alone, or a block's text, which its
    rows share) and the positions of its 2n quotes in the line, cell i between quotes 2i and 2i + 1. Reads as the list
    of its n cells; `pick` reads many at once. A row of a block (`quoted_text`) knows it (`block`, `position`) and finds
    its quotes only when one of its cells is read on its own (most rows of a block are read through the block:
    `CellPicker`, `RowBlock.spans`). Its line is UTF-8 bytes as read, whose cells are decoded as they are read; a row
    kept long takes a copy of its line (`own`), not to keep its block's text."""

    __slots__ = ("_cells", "_end", "_n", "_quotes", "_start", "_text", "block", "position")

    def __init__(self, text: bytes, quotes: IndexArray | None, block: RowBlock | None = None,
                 position: int = 0, cells: int = 0, start: int = 0, end: int | None = None) -> None:
        self._text = text
        self._start = start
        self._end = len(text) if end is None else end
        self._quotes = quotes
        self._n = len(quotes) // 2 if quotes is not None else cells
        self._cells: list[str] | None = None
        self.block = block
        self.position = position

    def __len__(self) -> int:
        return self._n

    def quotes(self) -> IndexArray:
        """The positions of its quotes in its line (found on the first call, for a row of a block: the block
        checked that every quote of the line is one of its cells')."""
        q = self._quotes
        if q is None:
            np = _np()
            line = np.frombuffer(self._text, dtype=np.uint8, count=self._end - self._start, offset=self._start)
            q = self._quotes = np.flatnonzero(line == QUOTE).astype(np.int32)  # 4 bytes a quote held
        return q

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> list[str]: ...
    def __getitem__(self, i: int | slice) -> str | list[str]:
        if self._cells is not None or isinstance(i, slice):
            return self.cells()[i]
        n = self._n
        if not -n <= i < n:
            raise IndexError("row cell index out of range")
        if i < 0:
            i += n
        q, start = self.quotes(), self._start
        return self._text[start + q[2 * i] + 1:start + q[2 * i + 1]].decode()

    def __iter__(self) -> Iterator[str]:
        return iter(self.cells())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, QuotedRow):
            return self.cells() == other.cells()
        return isinstance(other, list) and self.cells() == other

    __hash__ = None  # type: ignore[assignment]  # a row is compared by its cells, as a list is

    def text_length(self) -> int:
        """The bytes of its line (what holding the row costs, about: a block's rows share their text, which lives
        while any of them holds it)."""
        return self._end - self._start

    def line(self) -> bytes:
        """Its line's bytes, its line end included."""
        return self._text[self._start:self._end]

    def cells(self) -> list[str]:
        """Every cell, split once (a row read whole: a repeated header, a row's metrics listed)."""
        if self._cells is None:
            text = self.line().decode()
            self._cells = text[1:len(text.rstrip("\r\n")) - 1].split('","')  # between its first and last quote
        return self._cells

    def pick(self, starts: IndexArray, ends: IndexArray) -> list[str]:
        """The cells whose opening and closing quotes are at these quote numbers (2i and 2i + 1)."""
        text, q, at = self._text, self.quotes(), self._start
        return [text[a:b].decode() for a, b in zip((q[starts] + (at + 1)).tolist(), (q[ends] + at).tolist(),
                                                   strict=True)]

    def own(self) -> None:
        """Hold its line in bytes of its own, not its block's text (a row kept long keeps no more than its line)."""
        if self._start or self._end != len(self._text):
            self._text, self._start, self._end = self.line(), 0, self._end - self._start


class RowBlock:
    """Consecutive all-quoted rows of one width, for what is read of all of them at once (a reader's
    number columns, `HotColumns.parse`): their lines' text (UTF-8 bytes) and the (rows, 2n) positions of
    their quotes in it. `parsed` holds what the reader made of them; the block lets its text go then (`release`:
    its rows keep it while they live)."""

    __slots__ = ("parsed", "quotes", "rows", "text")

    def __init__(self, text: bytes, quotes: Any, rows: int) -> None:
        self.text: bytes | None = text
        self.quotes: Any = quotes
        self.rows = rows
        self.parsed: tuple[Any, ...] | None = None  # (the reader, what it made of them)

    def __len__(self) -> int:
        return self.rows

    def joined(self, opening: IndexArray, closing: IndexArray) -> str:
        """The cells between these quote numbers (`quote_numbers`) of every row, row after row, each
        followed by a NUL, after one NUL: `"\\x00" + "\\x00".join(cells) + "\\x00"` of all the rows'
        cells at once (no row's cell holds a NUL: `quoted_text` leaves such lines to csv.reader)."""
        data, starts, lengths = self.spans(opening, closing)
        content: bytes = cell_text(data, starts, lengths + 1).tobytes()
        return "\x00" + content.translate(QUOTE_TO_NUL).decode()

    def cells(self, opening: IndexArray, closing: IndexArray) -> list[str]:
        """The cells between these quote numbers of every row, row after row (`joined`, split)."""
        return self.joined(opening, closing)[1:-1].split("\x00")

    def same_cells(self, opening: IndexArray, closing: IndexArray) -> list[str | None]:
        """For each pair of quote numbers, the cell between them where every row holds the same one, else None:
        each row's cell compared in place with the first row's (a breakdown's list of metrics is kilobytes a cell,
        the same in nearly every row), none of them cut out."""
        text, quotes = self.text, self.quotes
        if text is None:
            raise RuntimeError("a RowBlock's cells read after release()")
        out: list[str | None] = []
        for a, b in zip(opening.tolist(), closing.tolist(), strict=True):
            starts = quotes[:, a] + 1
            lengths = quotes[:, b] - starts
            n, first = int(lengths[0]), int(starts[0])
            cell = text[first:first + n]
            same = bool((lengths == n).all()) and all(map(text.startswith, itertools.repeat(cell), starts.tolist()))
            out.append(cell.decode() if same else None)
        return out

    def spans(self, opening: IndexArray, closing: IndexArray) -> tuple[Any, Any, Any]:
        """The rows' text (uint8) and where each cell between these quote numbers starts in it and how long it is,
        row after row."""
        np = _np()
        if self.text is None:
            raise RuntimeError("a RowBlock's cells read after release()")
        quotes = self.quotes
        starts = (quotes[:, opening] + 1).ravel()
        return np.frombuffer(self.text, dtype=np.uint8), starts, quotes[:, closing].ravel() - starts

    def release(self) -> None:
        """Let the text and the quotes go (its rows keep the text they share, until they are let go or `own` theirs)."""
        self.text = self.quotes = None


def plain_row(line: bytes) -> bool:
    """Whether a line read as bytes may be an all-quoted UTF-8 row (`quoted_text` checks the rest): it opens with a
    quote and ends with one and its LF or CR LF, holds no other line end (no bare CR), and is UTF-8 (a line that
    is not is read on its own, each byte that is not UTF-8 replaced and counted)."""
    if not (line.startswith(b'"') and line.endswith((b'"\n', b'"\r\n')) and line.find(b"\r") in (-1, len(line) - 2)):
        return False
    if line.isascii():
        return True
    try:
        line.decode()
    except UnicodeDecodeError:
        return False
    return True


def quoted_block(lines: Sequence[bytes]) -> list[QuotedRow]:
    """`quoted_text` of these lines (each one's bytes, its line end included), joined."""
    np = _np()
    if not lines:
        return []
    return quoted_text(b"".join(lines), np.cumsum(np.fromiter(map(len, lines), dtype=np.intp, count=len(lines))))


def quoted_text(text: bytes, ends: Any) -> list[QuotedRow]:
    """The leading lines of `text` (each ending at its offset in `ends`; the text may go on past the last) that
    are all-quoted rows of the first one's width, as rows of one RowBlock, which share `text`; the first line that is
    not and those after it are left out, for csv.reader. The quotes of all the lines are found in one pass over their
    bytes, and each row's pattern checked at once: its quotes are its first and last bytes and, between them, pairs
    `","` (a closing quote, a comma, an opening quote), so every quote is one of its cells' own (a quoted line
    break, an escaped quote, an unquoted cell or a NUL breaks it). A single row is in no block (a `QuotedRow` of its
    own). Each line is one `plain_row` takes (`TextLines.take_rows`)."""
    np = _np()
    ends = np.asarray(ends, dtype=np.intp)
    if not len(ends):
        return []
    end = int(ends[-1])
    data = np.frombuffer(text, dtype=np.uint8, count=end)
    starts = np.empty_like(ends)
    starts[0], starts[1:] = 0, ends[:-1]
    quotes = np.flatnonzero(data == QUOTE)
    counts = np.diff(np.searchsorted(quotes, ends), prepend=0)  # each line's quotes
    width = int(counts[0])
    usable = counts == width
    if text.find(b"\x00", 0, end) != -1:  # csv.reader decides on such a line
        usable &= np.logical_or.reduceat(data == 0, starts) == 0
    taken = len(ends) if usable.all() else int(np.argmin(usable))
    if width % 2 or width < 2 or not taken:
        return []
    q = quotes[:taken * width].reshape(taken, width)
    closing, opening = q[:, 1:-1:2], q[:, 2:-1:2]
    pattern = ((opening - closing) == 2) & (data[closing + 1] == _COMMA)  # `","` between cells
    good = pattern.all(axis=1)
    if not good.all():
        taken = int(np.argmin(good))
        q = q[:taken]
    if taken < 2:
        return [QuotedRow(text[:int(ends[0])], q[0])] if taken else []
    if 2 * int(ends[taken - 1]) < len(text):  # the block's rows are less than half of the text: not to keep the rest
        text = text[:int(ends[taken - 1])]
    block = RowBlock(text, q, taken)
    cells = width // 2
    return [QuotedRow(text, None, block, k, cells, a, b)
            for k, (a, b) in enumerate(zip(starts[:taken].tolist(), ends[:taken].tolist(), strict=True))]


def quote_numbers(indices: Sequence[int]) -> tuple[IndexArray, IndexArray]:
    """The quote numbers that open and close the cells at these indices (for `QuotedRow.pick`)."""
    np = _np()
    opening: IndexArray = np.fromiter((2 * i for i in indices), dtype=np.intp, count=len(indices))
    return opening, opening + 1


class CellPicker:
    """The cells at fixed indices of every row of an export, in that order: those of a block's rows cut from their
    text at once (`RowBlock.joined`, while the block holds it), of any other all-quoted row from its line
    (`QuotedRow.pick`), of any other row one by one."""

    __slots__ = ("_block", "_cells", "indices", "quote_numbers")

    def __init__(self, indices: Sequence[int]) -> None:
        self.indices = tuple(indices)
        self.quote_numbers = quote_numbers(self.indices)
        self._block: RowBlock | None = None  # the last block cut, and its rows' cells, row after row
        self._cells: list[str] = []

    def __call__(self, row: Sequence[str]) -> Sequence[str]:
        if type(row) is QuotedRow:
            block = row.block
            if block is not None and self.indices:
                if block is not self._block and block.text is not None:
                    self._block, self._cells = block, block.cells(*self.quote_numbers)
                if block is self._block:
                    n = len(self.indices)
                    return self._cells[row.position * n:(row.position + 1) * n]
            return row.pick(*self.quote_numbers)
        return [row[i] for i in self.indices]


def cell_list(row: Any) -> list[str]:
    """A row's cells as a list (a `QuotedRow` split, a list as it is)."""
    return row.cells() if isinstance(row, QuotedRow) else row
