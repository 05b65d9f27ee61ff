"""A CSV cell's value (`parse_value`) and the values a column cannot hold: a negative count, share or rate
(`lowest_value`), or text where such a number belongs (`is_text`), found in a row's cells (`impossible_cells`) or in
a block's at once (`may_hold_impossible`). The values an export's rows left out so are gathered into one warning
line per file (`ImpossibleValues`): per column, how many rows held one and the first of them in the file, never one
line per cell, which would bury the other warnings."""

from __future__ import annotations

import math
import re
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from .csv_cells import CellPicker

# Plain or thousands-grouped decimal numbers, with optional fraction and exponent.
_NUMBER_RE = re.compile(
    r"[+-]?(?:(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
)
SPECIAL_FLOATS = {
    "nan": math.nan, "+nan": math.nan, "-nan": math.nan,
    "inf": math.inf, "+inf": math.inf, "-inf": -math.inf,
    "infinity": math.inf, "+infinity": math.inf, "-infinity": -math.inf,
}
MISSING = {"", "n/a"}
_ROLLUPS = frozenset({"sum", "avg", "min", "max", "ratio", "per_second"})


PLAIN_NUMBER_CHARS = "0123456789.eE+-"


def parse_value(cell: str) -> float | str | None:
    """A CSV cell as a float (thousands separators removed), a string, or None when missing."""
    text = cell.strip()
    if text and not text.strip(PLAIN_NUMBER_CHARS):  # the common case: no regular expression
        try:
            return float(text)
        except ValueError:
            return text
    low = text.lower()
    if low in MISSING:
        return None
    if low in SPECIAL_FLOATS:
        return SPECIAL_FLOATS[low]
    if _NUMBER_RE.fullmatch(text):
        return float(text.replace(",", ""))
    return text


def cannot_be_negative(name: str) -> bool:
    """True for the metrics whose name marks a count, share or rate (Nsight Compute's rollups)."""
    if "__" not in name:
        return False
    parts = name.split(".")[1:]
    return any(p in _ROLLUPS or "pct" in p or "peak_sustained" in p or p.startswith("per_") for p in parts)


# In NUL-separated cells, a comma outside a well-formed thousands group: one not followed by 3 digits and the end of
# the cell, its fraction, its exponent or the next group, or one not preceded by the cell's first 1-3 digits (and
# sign) or by a group. Where there is none, every comma is a group's (a cell's first comma can only follow its first
# digits, each next one a group, the last group ends the number).
_STRAY_COMMA = re.compile(r",(?:(?!\d{3}[,.eE\x00])|(?<!\x00\d,)(?<!\x00\d\d,)(?<!\x00\d\d\d,)"
                          r"(?<!\x00[+-]\d,)(?<!\x00[+-]\d\d,)(?<!\x00[+-]\d\d\d,)(?<!,\d\d\d,))")


_NAMED_LIMIT = 5


class ImpossibleValues:
    """The values an export's rows left out as impossible, by column: how many rows held one, and the first
    (row position, value), for one warning line per file (not one per cell, which would bury the others)."""

    __slots__ = ("columns",)

    def __init__(self) -> None:
        self.columns: dict[str, list[Any]] = {}  # name -> [rows, first row's position, its value, the unit]

    def note(self, name: str, position: int, value: float | str, unit: str = "") -> None:
        """One row's value of a column left out (a row notes each column once: it is then read as absent); the
        first row kept is the one first in the file, whatever order the rows were read in."""
        seen = self.columns.setdefault(name, [0, position, value, unit])
        seen[0] += 1
        if position < seen[1]:  # a row checked at its creation may be noted before an earlier one read on demand
            seen[1], seen[2] = position, value

    def warning(self, label: Callable[[int], str]) -> str:
        """The warning naming every column noted (`label` names a row by its position), or "" for none."""
        if not self.columns:
            return ""
        # by the first row holding each, whatever order the rows were read in (a block of launches modelled
        # together reads its parts' columns in its own order)
        named = sorted(self.columns.items(), key=lambda item: item[1][1])
        each = "; ".join(f"{label(position)}: {name} = {_number(value)}{' ' if unit and type(value) is float else ''}"
                         f"{unit if type(value) is float else ''} "
                         + (f"(the first of {rows:,} rows)" if rows > 1 else "(1 row)")
                         for name, (rows, position, value, unit) in named[:_NAMED_LIMIT])
        more = f"; +{len(named) - _NAMED_LIMIT} more column(s)" if len(named) > _NAMED_LIMIT else ""
        return (f"{sum(seen[0] for _, seen in named):,} impossible value(s) in {len(named)} column(s) the "
                "analysis reads were left out, shown as not available (a count, share or rate is a number and "
                f"cannot be negative: the export was edited or damaged, or a counter is faulty): {each}{more}")


def _number(value: float | str) -> str:
    if isinstance(value, str):  # its first 40 characters; one that does not print (a NUL of a damaged file) escaped
        shown = "".join(c if c.isprintable() else repr(c)[1:-1] for c in value[:40])
        return f'"{shown}…"' if len(value) > 40 else f'"{shown}"'
    return f"{value:g}" if math.isfinite(value) else str(value)


_MAY_BE_NEGATIVE_RE = re.compile(r"\x00[-\s]")  # a cell that starts with "-" or a space
# Nsight Compute itself writes shares a little below zero (-0.07 % to -0.1 % seen for an idle tensor
# pipe's `.min` on Hopper: counter noise around zero); a report holds them so, and they are kept as read.
NOISE_PCT = -1.0


def is_noise(name: str, value: float) -> bool:
    """A share a little below zero, as Nsight Compute itself writes them (not an impossible value)."""
    return "pct" in name.partition(".")[2] and value >= NOISE_PCT  # a share by `cannot_be_negative`'s reading


def lowest_value(name: str) -> float:
    """The lowest value a column holds as read: 0 for a count or rate, `NOISE_PCT` for a share (`is_noise`),
    -inf for any other metric; a value below it is impossible (NaN never is)."""
    if not cannot_be_negative(name):
        return -math.inf
    return NOISE_PCT if "pct" in name.partition(".")[2] else 0.0


class SignedColumns:
    """An export's columns that cannot hold a negative value: their names and a picker of their cells."""

    __slots__ = ("cells", "names")

    def __init__(self, columns: list[tuple[int, str]]) -> None:
        self.cells = CellPicker([i for i, _ in columns])
        self.names = [name for _, name in columns]


def impossible_cells(row: Sequence[str], signed: list[tuple[int, str]] | SignedColumns
                     ) -> list[tuple[str, float | str]]:
    """(name, value) of the cells in `signed` (metrics that cannot be negative) holding a negative number (past
    the noise around zero Nsight Compute writes itself, `is_noise`) or text where a number belongs (`is_text`): a
    row's values listed whole (`RowMetrics`), where reading each one would cost more."""
    if not isinstance(signed, SignedColumns):
        signed = SignedColumns(signed)
    cells = signed.cells(row)
    joined = "\x00" + "\x00".join(cells) + "\x00"
    stray = _stray_comma(joined)
    textual = stray or _unreadable(joined)
    if not textual and not _MAY_BE_NEGATIVE_RE.search(joined):
        return []  # two scans of the cells in C: the usual answer
    found: list[tuple[str, float | str]] = []
    for cell, name in zip(cells, signed.names, strict=True):
        if "-" in cell[:2] or cell[:1].isspace():  # cheap pre-check; the value decides
            value = parse_value(cell)
            if isinstance(value, float) and value < 0 and not is_noise(name, value):  # -nan is not negative
                found.append((name, value))
            elif is_text(name, value):
                found.append((name, cell.strip()))
        elif textual and cell and _not_float(cell, stray) and is_text(name, value := parse_value(cell)):
            found.append((name, cell.strip()))  # `n/a`, `nan` and `inf` read as no value or as numbers
    return found


def may_hold_impossible(joined: str) -> bool:
    """Whether NUL-separated cells may hold an impossible value: one opening with a minus or a blank, one that is
    not a number (`n/a` and `nan` too: each cell then decides), or a comma outside thousands groups."""
    return _MAY_BE_NEGATIVE_RE.search(joined) is not None or _unreadable(joined) or _stray_comma(joined)


def _stray_comma(joined: str) -> bool:
    """Whether a cell of NUL-separated cells holds a comma outside well-formed thousands groups (`1,2,3`)."""
    return "," in joined and _STRAY_COMMA.search(joined) is not None


def _unreadable(joined: str) -> bool:
    """Whether a non-empty cell of NUL-separated cells is not what float() reads once the commas are removed (text,
    `n/a`, `1.2.3`, `5-`): one C-level pass over the cells."""
    try:
        deque(map(float, filter(None, joined.replace(",", "").split("\x00"))), maxlen=0)
    except ValueError:
        return True
    return False


def _not_float(cell: str, stray: bool) -> bool:
    """Whether a cell may be text: not what float() reads; one with commas only where the row holds a stray one
    (the cells' other commas are thousands groups, numbers)."""
    if "," in cell:
        return stray
    try:
        float(cell)
    except ValueError:
        return True
    return False


def cannot_hold(name: str, value: float | str, floor: float) -> bool:
    """Whether a value read of a column whose lowest value is `floor` (`lowest_value`) is one it cannot hold: a
    number below it, or text where a number belongs (`is_text`)."""
    return value < floor if value.__class__ is float else is_text(name, value)


def is_text(name: str, value: object) -> bool:
    """Whether a cell of a count, share or rate column (`lowest_value`) holds text where a number belongs (`hello`,
    `0x10`, `5%`); the `breakdown:`-style columns hold lists of metrics as text and are not counts."""
    return value.__class__ is str and ":" not in name
