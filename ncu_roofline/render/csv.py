"""CSV: one row per kernel, the same columns as `Analysis.kernels`, empty cells for absent values.

Every CSV the tool writes (`report -f csv`, batch `kernels.csv`, the `trend` CSV) goes through
`rows_to_csv`, so every cell through `csv_cell`. A text cell that a spreadsheet would run as a
formula (it starts with `=`, `+`, `-`, `@`, a tab or a carriage return: kernel names such as
`=HYPERLINK(…)` or `-[Foo bar]`) gets a leading `'`, as OWASP recommends against CSV injection.
Numbers stay numbers (a float or int, or a text that is a plain number such as `-1.5`); Parquet
keeps the raw value. A row's lists and dicts (`flags`, `nvtx_ranges`, a group's `limiters`) are joined
into one cell here (`flat_text`): `a;b`, `dram:3;fp32:1`.
"""

from __future__ import annotations

import csv
import io
import math
import re
from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def flat_text(value: object) -> object:
    """A list or tuple as its items joined by `;`, a dict as `key:value` pairs joined by `;`; anything else as
    it is (what a flat table, CSV or Parquet, holds for the lists of a row)."""
    if isinstance(value, dict):
        return ";".join(f"{k}:{v}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ";".join(map(str, value))
    return value


def csv_cell(value: object) -> object:
    """A value as a CSV cell: absent or non-finite is empty (never 0), floats keep every digit, lists and dicts
    are joined (`flat_text`), and a text that would start a spreadsheet formula is prefixed with `'`."""
    value = flat_text(value)
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ""
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str) and value.startswith(FORMULA_STARTS) and not _PLAIN_NUMBER.fullmatch(value):
        return "'" + value
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
