"""Kernel (and kernel group) rows as one typed pandas DataFrame (pandas is imported only when a frame is asked for).

Beside the keys the analysis works with, a frame holds what a person reads: `bound_by_label` next to
`bound_by` names the limit as the report page does ("DRAM", "FP64 pipe", "nothing busy"). The limiter
(`bound_by`) and the regime are Categoricals; `flags` and `nvtx_ranges` hold lists, a group's `limiters` and
`regimes` dicts (name -> launches), in object columns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..knowledge import recipes as R
from ..knowledge import throughputs as T

if TYPE_CHECKING:
    import pandas as pd

STRING_COLUMNS = ("report", "name", "demangled_name", "device", "compute_capability",
                  "dominant_precision", "bound_kind", "unusable_reason", "byte_definition_l2", "byte_definition_l1",
                  "group_key", "display_name", "grid_size", "block_size", "top_finding", "bound_by_label")
INT_COLUMNS = ("index", "range_index", "sm_count", "launches", "usable_launches", "disagreeing_launches",
               "regime_disagreeing_launches", "findings_from_launch")
LIST_COLUMNS = ("flags", "nvtx_ranges")  # lists of names
DICT_COLUMNS = ("limiters", "regimes")  # name -> launches
REGIMES = tuple(str(r) for r in T.Regime)
NOTHING_BUSY_LABEL = "nothing busy"


def limit_label(limit: str | None, regime: str | None, share: float | None) -> str | None:
    """How the report page names a kernel's limit (`views.labels.short_label(named_limit(k))`): a roof's label
    ("DRAM"), a unit's ("FP64 pipe"), a sub-unit's metric name, "nothing busy" in the too-little-work regime
    where the limit is under `T.TOO_LITTLE_WORK_SHARE`; None where there is no verdict."""
    if regime == T.TOO_LITTLE_WORK and (share is None or share < T.TOO_LITTLE_WORK_SHARE):
        return NOTHING_BUSY_LABEL
    if not limit:
        return None
    if limit in R.ROOF_LABELS:
        return R.ROOF_LABELS[limit]
    unit = T.BY_ID.get(limit)
    if unit is not None:
        return unit.label
    return limit if "__" in limit else limit.upper()  # a sub-unit the tool has no label for: its metric name


def _limiter_order(present: set[str]) -> list[str]:
    """The limiters of a frame as its categories: roofs, then units in the table's order, then the rest by name."""
    known = [*R.ROOFS, *T.BY_ID]
    return [n for n in known if n in present] + sorted(present - set(known))


def frame_from_rows(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Rows -> typed DataFrame: nullable floats (NA for absent), strings, ints, booleans, Categoricals for the
    limiter and the regime, lists and dicts as they are; `bound_by_label` inserted after `bound_by`."""
    import pandas as pd

    if rows and "bound_by" in rows[0]:
        rows = [_labelled(r) for r in rows]
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
        elif col in ("bound_by", "regime"):
            values = [str(v) if isinstance(v, str) else None for v in df[col]]  # a `Regime` as its value
            present = {v for v in values if v is not None}
            order = _limiter_order(present) if col == "bound_by" else [*REGIMES, *sorted(present - set(REGIMES))]
            df[col] = pd.Categorical(values, categories=order)
        elif col in LIST_COLUMNS or col in DICT_COLUMNS:
            df[col] = df[col].astype(object)
        else:
            df[col] = pd.to_numeric(df[col], errors="coerce").astype("Float64")
    return df


def _labelled(row: dict[str, Any]) -> dict[str, Any]:
    """The row with `bound_by_label` right after `bound_by`."""
    out: dict[str, Any] = {}
    for key, value in row.items():
        out[key] = value
        if key == "bound_by":
            out["bound_by_label"] = limit_label(value, row.get("regime"), row.get("bound_utilization"))
    return out
