"""CSV: one row per kernel, the same columns as `Analysis.kernels`, empty cells for absent values."""

from __future__ import annotations

import csv
import io
import math
from typing import Any


def csv_cell(value: object) -> object:
    """A value as a CSV cell: absent or non-finite is empty (never 0), floats keep every digit."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ""
    if isinstance(value, float):
        return repr(value)
    return value


def rows_to_csv(rows: list[dict[str, Any]], columns: list[str] | None = None) -> str:
    """Rows (dicts) as CSV text with a header; empty text when there is no row and no columns."""
    if not rows and not columns:
        return ""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns or list(rows[0]), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: csv_cell(v) for k, v in row.items()})
    return out.getvalue()
