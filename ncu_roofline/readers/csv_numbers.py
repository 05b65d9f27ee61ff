"""Many CSV cells read as numbers at once: the columns a reader parses in every row (`HotColumns`), a block of rows
in one call.

A cell is a number where Python's `float` reads it once the separators of well-formed thousands groups are removed
(`"2,048"`, `"1,234.5"`, `"-1,000e3"`), and it holds only the characters of a plain number (`0-9 . e E + -`): the
reading `parse_value` gives it. `inf`, `nan`, `n/a`, blanks and text are not (a row holding one is read cell by
cell). The conversion is Arrow's (its string-to-double cast reads those strings to the same correctly rounded double
as `float` and refuses the same others); the cells are handed to it as one buffer, so no Python string is made.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["cell_text", "number_matrix", "row_numbers"]

# What `float` reads among strings of number characters only.
_NUMBER_CELL = r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$"
_NUMBER_CHARS = b"0123456789.eE+-,"
_COMMA = ord(",")
_AFTER_GROUP = np.frombuffer(b",.eE", dtype=np.uint8)  # what may follow a thousands group
_SIGNS = np.frombuffer(b"+-", dtype=np.uint8)


def cell_text(data: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The cells at `starts` (each `lengths` bytes) of text `data` (uint8), one after the other."""
    begins = np.cumsum(lengths) - lengths  # where each cell starts in the result
    index = np.repeat(starts - begins, lengths)
    index += np.arange(len(index), dtype=index.dtype)
    out: np.ndarray = data[index]
    return out


def number_matrix(content: np.ndarray, lengths: np.ndarray, rows: int, width: int) -> tuple[np.ndarray, np.ndarray]:
    """`rows` rows of `width` cells (row after row: `content` their bytes, one after the other, `lengths` each one's)
    as a (rows, width) float matrix, and which rows are all numbers (the others' values are NaN: each of their cells
    is read on its own)."""
    plain = not content.tobytes().translate(None, _NUMBER_CHARS)  # only number characters (one pass in C)
    commas = (content == _COMMA).nonzero()[0]
    if len(commas):  # without the separators of thousands groups, as `float` reads the cells
        content, lengths, stray = _ungrouped(content, lengths, commas)
        plain = plain and not stray
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    cells = pa.LargeStringArray.from_buffers(len(lengths), pa.py_buffer(offsets), pa.py_buffer(content))
    if plain:
        try:
            values = pc.cast(cells, pa.float64())
        except pa.ArrowInvalid:  # some cell is not a number: "", "1e", "+"
            pass
        else:
            return values.to_numpy().reshape(rows, width), np.ones(rows, dtype=bool)
    number = pc.match_substring_regex(cells, _NUMBER_CELL).to_numpy(zero_copy_only=False).reshape(rows, width)
    whole = number.all(axis=1)
    matrix = np.full((rows, width), np.nan)
    if whole.any():
        chosen = pc.filter(cells, pa.array(np.repeat(whole, width)))
        matrix[whole] = pc.cast(chosen, pa.float64()).to_numpy().reshape(-1, width)
    return matrix, whole


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
    ok &= (commas + 4 == end) | np.isin(following, _AFTER_GROUP)
    first = np.ones(len(commas), dtype=bool)
    first[1:] = cell_of[1:] != cell_of[:-1]
    ok[1:] &= first[1:] | (np.diff(commas) == 4)
    at = commas[first]
    start = (ends - lengths)[cell_of[first]]
    start += np.isin(content[start], _SIGNS)
    lead = at - start  # the digits before the first comma
    led = (lead >= 1) & (lead <= 3) & digit[np.maximum(at - 1, 0)]
    led &= (lead < 2) | digit[np.maximum(at - 2, 0)]
    led &= (lead < 3) | digit[np.maximum(at - 3, 0)]
    ok[first] &= led
    stray = np.unique(cell_of[~ok])
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
