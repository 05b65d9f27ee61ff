"""Kernel (and kernel group) rows as one typed pandas DataFrame (pandas is imported only when a frame is asked for)."""

from __future__ import annotations

from typing import Any

import pandas as pd

STRING_COLUMNS = ("report", "name", "demangled_name", "device", "compute_capability",
                  "dominant_precision", "bound_by", "bound_kind", "regime", "flags", "nvtx_ranges",
                  "unusable_reason", "byte_definition_l2", "byte_definition_l1", "group_key", "display_name",
                  "grid_size", "block_size", "limiters", "regimes", "top_finding")
INT_COLUMNS = ("index", "range_index", "sm_count", "launches", "usable_launches", "disagreeing_launches",
               "regime_disagreeing_launches", "findings_from_launch")


def frame_from_rows(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Rows -> typed DataFrame: nullable floats (NA for absent), strings, ints, booleans."""
    df: pd.DataFrame = pd.DataFrame(rows)
    if not rows:
        return df
    for col in df.columns:
        if col in STRING_COLUMNS:
            df[col] = df[col].astype("string")
        elif col in INT_COLUMNS or col == "missing_count":
            df[col] = df[col].astype("Int64")
        elif col == "usable":
            df[col] = df[col].astype("boolean")
        else:
            df[col] = pd.to_numeric(df[col], errors="coerce").astype("Float64")
    return df
