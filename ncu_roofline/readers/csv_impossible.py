"""The values a CSV export's rows left out as impossible (`csv_rows`: a negative count, share or rate, or text
where such a number belongs), gathered into one warning line per file: per column, how many rows held one and
the first of them in the file, never one line per cell, which would bury the other warnings."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

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
    if isinstance(value, str):
        return f'"{value[:40]}…"' if len(value) > 40 else f'"{value}"'
    return f"{value:g}" if math.isfinite(value) else str(value)
