"""Checks of an ncu CSV export's rows that the layout alone does not catch.

- Repeated header or units rows (exports joined with `cat`, or a header ncu wrote again for a
  second process) are not kernels: rows identical to the header or to the units row are skipped
  with a warning; a second header with other columns means two different exports were joined,
  which is refused.
- Impossible values: no count, share or rate Nsight Compute writes (`*.sum`, `*.avg`, `*.min`,
  `*.max`, `*pct*`, `*.ratio`, `*per_second`, `*peak_sustained*`) can be negative. Such a value
  (an edited or corrupted export) is left out of the kernel's metrics, and a warning names the
  metric and the kernel, so that it shows up as missing rather than as a -1e28 utilisation.
"""

from __future__ import annotations

import math
from pathlib import Path

from ..errors import InputError
from .record import Metric

_ROLLUPS = frozenset({"sum", "avg", "min", "max", "ratio", "per_second"})
_NAMED_LIMIT = 5


def drop_repeated_headers(path: Path, header: list[str], units: list[str],
                          rows: list[tuple[int, list[str]]], warnings: list[str],
                          hint: str) -> list[tuple[int, list[str]]]:
    """`rows` without the repeats of the header and units rows (a warning says which lines)."""
    names = [h.strip() for h in header]
    unit_cells = [u.strip() for u in units]
    id_column = names.index("ID")
    kept: list[tuple[int, list[str]]] = []
    skipped: list[int] = []
    for line_no, row in rows:
        cells = [c.strip() for c in row]
        if cells in (names, unit_cells):
            skipped.append(line_no)
            continue
        if cells[id_column] == "ID":
            raise InputError(path, f"line {line_no} is a second header row with other columns: two different "
                                   "exports were joined", hint)
        kept.append((line_no, row))
    if skipped:
        lines = ", ".join(map(str, skipped[:_NAMED_LIMIT])) + (" …" if len(skipped) > _NAMED_LIMIT else "")
        warnings.append(f"skipped {len(skipped)} repeated header or units row(s) (line {lines}): "
                        "exports joined, or a header written again")
    return kept


def cannot_be_negative(name: str) -> bool:
    """True for the metrics whose name marks a count, share or rate (Nsight Compute's rollups)."""
    if "__" not in name:
        return False
    parts = name.split(".")[1:]
    return any(p in _ROLLUPS or "pct" in p or "peak_sustained" in p or p.startswith("per_") for p in parts)


def impossible_values(metrics: dict[str, Metric]) -> list[str]:
    """Remove the impossible (negative) counts, shares and rates from `metrics`; their names."""
    bad = [name for name, m in metrics.items()
           if m.is_number and not m.is_nan and float(m.value) < 0 and cannot_be_negative(name)]
    for name in bad:
        del metrics[name]
    return bad


def impossible_values_warning(found: list[tuple[str, str, float]]) -> str:
    """One warning for every impossible value left out: (kernel label, metric, value)."""
    named = "; ".join(f"{kernel}: {metric} = {_number(value)}" for kernel, metric, value in found[:_NAMED_LIMIT])
    more = f" (+{len(found) - _NAMED_LIMIT} more)" if len(found) > _NAMED_LIMIT else ""
    return (f"{len(found)} impossible value(s) left out (a count, share or rate cannot be negative; "
            f"the export was edited or damaged): {named}{more}")


def _number(value: float) -> str:
    return f"{value:g}" if math.isfinite(value) else str(value)
