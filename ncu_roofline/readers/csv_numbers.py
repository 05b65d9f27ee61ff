"""Many CSV cells read as numbers at once: the columns a reader parses in every row (`HotColumns`), a block of rows
in one call.

A cell is a number where Python's `float` reads it once the separators of well-formed thousands groups are removed
(`"2,048"`, `"1,234.5"`, `"-1,000e3"`), and it holds only the characters of a plain number (`0-9 . e E + -`): the
reading `parse_value` gives it. `inf`, `nan`, `n/a`, blanks and text are not (a row holding one is read cell by
cell). Many cells (`ARROW_FROM` and more, a block of full-set rows) are converted by Arrow: its string-to-double cast
reads those strings to the same correctly rounded double as `float` and refuses the same others, and the cells are
handed to it as one buffer, so no Python string is made. Fewer cells (a small export, a row alone) are converted by
`float`, which spares a small command importing pyarrow; so does an environment without pyarrow (installed with
`--no-deps`), at about five times the cost.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from .csv_cells import cell_text

__all__ = ["ARROW_FROM", "number_matrix", "row_numbers"]

ARROW_FROM = 4096  # cells converted at once from which Arrow converts them
# What `float` reads among strings of number characters only.
_NUMBER_CELL = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
_NUMBER_BYTES = re.compile(_NUMBER_CELL.encode())
_NUMBER_CHARS = b"0123456789.eE+-,"
_COMMA, _POINT, _E, _PLUS, _MINUS = b",.e+-"  # a group's comma, what may follow it (`e` or `E`), a sign
_arrow: Any = None  # (pyarrow, pyarrow.compute) once imported; False where it cannot be


def number_matrix(content: np.ndarray, lengths: np.ndarray, rows: int, width: int) -> tuple[np.ndarray, np.ndarray]:
    """`rows` rows of `width` cells (row after row: `content` their bytes, one after the other, `lengths` each one's)
    as a (rows, width) float matrix, and which rows are all numbers (the others' values are NaN: each of their cells
    is read on its own)."""
    plain = not content.tobytes().translate(None, _NUMBER_CHARS)  # only number characters (one pass in C)
    commas = (content == _COMMA).nonzero()[0]
    if len(commas):  # without the separators of thousands groups, as `float` reads the cells
        content, lengths, stray = _ungrouped(content, lengths, commas)
        plain = plain and not stray
    if plain:
        values = _floats(content, lengths)
        if values is not None:
            return values.reshape(rows, width), np.ones(rows, dtype=bool)
    whole: np.ndarray = np.asarray(_numbers(content, lengths).reshape(rows, width).all(axis=1))
    matrix = np.full((rows, width), np.nan)
    if whole.any():  # those rows' cells, one after the other
        offsets = _offsets(lengths)
        at = whole.nonzero()[0] * width
        starts = offsets[at]
        chosen = cell_text(content, starts, offsets[at + width] - starts)
        found = _floats(chosen, lengths.reshape(rows, width)[whole].ravel())
        assert found is not None  # each cell is one `float` reads
        matrix[whole] = found.reshape(-1, width)
    return matrix, whole


def _arrow_for(cells: int) -> Any:
    """(pyarrow, pyarrow.compute) where Arrow converts this many cells; None where `float` does."""
    global _arrow
    if cells < ARROW_FROM or _arrow is False:
        return None
    if _arrow is None:
        try:
            import pyarrow
            import pyarrow.compute
        except ImportError:
            _arrow = False
            return None
        _arrow = (pyarrow, pyarrow.compute)
    return _arrow


def _offsets(lengths: np.ndarray) -> np.ndarray:
    """Where each cell starts in the cells' bytes, then where the last one ends."""
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return offsets


def _strings(arrow: Any, content: np.ndarray, lengths: np.ndarray) -> Any:
    pa = arrow[0]
    return pa.LargeStringArray.from_buffers(len(lengths), pa.py_buffer(_offsets(lengths)), pa.py_buffer(content))


def _floats(content: np.ndarray, lengths: np.ndarray) -> np.ndarray | None:
    """The cells as `float` reads them, where it reads every one; None otherwise."""
    arrow = _arrow_for(len(lengths))
    if arrow is None:
        text, spans = content.tobytes(), _spans(lengths)
        try:
            return np.array([float(text[a:b]) for a, b in spans], dtype=float)
        except ValueError:
            return None
    pa = arrow[0]
    try:
        values = _strings(arrow, content, lengths).cast(pa.float64())
    except pa.ArrowInvalid:  # some cell is not a number: "", "1e", "+"
        return None
    return np.frombuffer(values.buffers()[1], dtype=np.float64, count=len(values), offset=8 * values.offset)


def _numbers(content: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Which cells `float` reads (of those holding only number characters: `_NUMBER_CELL`)."""
    arrow = _arrow_for(len(lengths))
    if arrow is None:
        text = content.tobytes()
        return np.array([_NUMBER_BYTES.fullmatch(text, a, b) is not None for a, b in _spans(lengths)], dtype=bool)
    pa, pc = arrow
    found = pc.match_substring_regex(_strings(arrow, content, lengths), f"^{_NUMBER_CELL}$").cast(pa.uint8())
    number: np.ndarray = np.frombuffer(found.buffers()[1], dtype=np.uint8, count=len(found), offset=found.offset) != 0
    return number


def _spans(lengths: np.ndarray) -> list[tuple[int, int]]:
    """(start, end) of each cell in the cells' bytes."""
    offsets = _offsets(lengths).tolist()
    return list(itertools.pairwise(offsets))


def _ungrouped(content: np.ndarray, lengths: np.ndarray, commas: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
    """The cells without the commas of the ones whose commas are all thousands separators, their lengths, and
    whether some cell keeps a comma (it is no number).

    A cell's commas are separators where it reads `[+-]?\\d{1,3}(,\\d{3})+`, then its end or a fraction or exponent
    holding no comma: its first comma follows 1-3 digits (and a sign) from its start, each comma is followed by 3
    digits and then the cell's end, a comma, `.`, `e` or `E`, and each next comma comes 4 bytes after the one before
    (so a fraction or an exponent holds none). Checked for every comma at once."""
    ends = np.cumsum(lengths)
    cell_of = np.searchsorted(ends, commas, side="right")  # the cell each comma is in
    end, last = ends[cell_of], len(content) - 1
    digit = (content >= 48) & (content <= 57)
    ok = commas + 3 < end
    for k in (1, 2, 3):
        ok &= digit[np.minimum(commas + k, last)]
    following = content[np.minimum(commas + 4, last)]
    ok &= (commas + 4 == end) | (following == _COMMA) | (following == _POINT) | ((following | 32) == _E)
    first = np.ones(len(commas), dtype=bool)
    first[1:] = cell_of[1:] != cell_of[:-1]
    ok[1:] &= first[1:] | (np.diff(commas) == 4)
    at = commas[first]
    start = (ends - lengths)[cell_of[first]]
    opening = content[start]
    start += (opening == _PLUS) | (opening == _MINUS)
    lead = at - start  # the digits before the first comma
    led = (lead >= 1) & (lead <= 3) & digit[np.maximum(at - 1, 0)]
    led &= (lead < 2) | digit[np.maximum(at - 2, 0)]
    led &= (lead < 3) | digit[np.maximum(at - 3, 0)]
    ok[first] &= led
    stray = np.unique(cell_of[~ok]) if not ok.all() else ()
    if len(stray):
        commas = commas[~np.isin(cell_of, stray)]
        cell_of = np.searchsorted(ends, commas, side="right")
    keep = np.ones(len(content), dtype=bool)
    keep[commas] = False
    return content[keep], lengths - np.bincount(cell_of, minlength=len(lengths)), bool(len(stray))


def row_numbers(cells: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """`number_matrix` of one row's cells (Python strings)."""
    encoded = [cell.encode("utf-8", "surrogatepass") for cell in cells]
    content = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    return number_matrix(content, np.array([len(e) for e in encoded], dtype=np.int64), 1, len(cells))
