"""CSV: one row per kernel, the same columns as `Analysis.kernels`, empty cells for absent values."""

from __future__ import annotations

import csv
import io
import math
import os
from typing import TYPE_CHECKING

from ..frame_rows import kernel_row

if TYPE_CHECKING:
    from ..analysis import Analysis


def _cell(value: object) -> object:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ""
    if isinstance(value, float):
        return repr(value)
    return value


def render_csv(analysis: Analysis, redact: bool = False) -> str:
    """The kernels as CSV text (no pandas needed)."""
    rows: list[dict[str, object]] = []
    for report in analysis.reports:
        path = os.path.basename(report.path) if redact else report.path
        rows.extend(kernel_row(path, k.to_dict(redact)) for k in report.kernels)
    out = io.StringIO()
    if not rows:
        return ""
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: _cell(v) for k, v in row.items()})
    return out.getvalue()
