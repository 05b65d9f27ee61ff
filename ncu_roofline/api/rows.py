"""Kernels and kernel groups of the JSON contract flattened into rows, units in the column names (no pandas).

A row is flat but for its lists: `flags` and `nvtx_ranges` are lists of names, a group's `limiters` and
`regimes` dicts (name -> launches), as the document holds them; a flat table joins them where it is written
(`render.csv.flat_text`), never here."""

from __future__ import annotations

from typing import Any

from ..knowledge import recipes as R
from ..passes.finding import top_index


def columns() -> list[str]:
    """The row's columns, in order, without a kernel (a CSV of no kernel still has its header)."""
    return [*_IDENTITY, *(f"work_{p}_flop" for p in (*R.PRECISIONS, "tensor")),
            *(f"traffic_{lv}_bytes" for lv in R.LEVELS), *(f"intensity_{lv}_flop_per_byte" for lv in R.LEVELS),
            "achieved_flop_per_s", *(f"attainable_{lv}_flop_per_s" for lv in R.LEVELS),
            *(f"peak_{lv}_bytes_per_s" for lv in R.LEVELS), *(f"peak_{p}_flop_per_s" for p in R.PRECISIONS),
            "peak_tensor_flop_per_s", *(f"utilization_{r}" for r in R.ROOFS), *_VERDICT]


_IDENTITY = ("report", "index", "range_index", "name", "demangled_name", "group_key", "device",
             "compute_capability", "sm_count", "usable", "unusable_reason", "duration_s")
_VERDICT = ("tensor_pipe_utilization", "sm_throughput", "memory_throughput", "dominant_precision", "bound_by",
            "bound_kind", "bound_utilization", "regime", "grid_blocks", "waves_per_sm", "achieved_occupancy",
            "byte_definition_l2", "byte_definition_l1", "flags", "nvtx_ranges", "missing_count")


def kernel_row(report_path: str, k: dict[str, Any]) -> dict[str, Any]:
    """Flatten one kernel of the JSON contract into a row with units in the column names."""
    row: dict[str, Any] = {
        "report": report_path,
        "index": k["index"],
        "range_index": k["range_index"],
        "name": k["name"],
        "demangled_name": k["demangled_name"],
        "group_key": k.get("group_key"),
        "device": k["device"],
        "compute_capability": k["compute_capability"],
        "sm_count": k["sm_count"],
        "usable": k["usable"],
        "unusable_reason": k["unusable_reason"],
        "duration_s": k["duration_s"],
    }
    _work_columns(row, k)
    for lv in R.LEVELS:
        row[f"attainable_{lv}_flop_per_s"] = k["attainable_flop_per_s"][lv]
    for lv in R.LEVELS:
        row[f"peak_{lv}_bytes_per_s"] = k["peaks"][f"{lv}_bytes_per_s"]
    for p in R.PRECISIONS:
        row[f"peak_{p}_flop_per_s"] = k["peaks"][f"{p}_flop_per_s"]
    tensor_peaks = k["peaks"]["tensor_flop_per_s"]
    row["peak_tensor_flop_per_s"] = max(tensor_peaks.values()) if tensor_peaks else None
    for r in R.ROOFS:
        row[f"utilization_{r}"] = k["utilization"].get(r)
    row["tensor_pipe_utilization"] = k["tensor_pipe_utilization"]
    _verdict_columns(row, k)
    for fact in ("grid_blocks", "waves_per_sm", "achieved_occupancy"):
        row[fact] = k["launch"].get(fact)
    row["byte_definition_l2"] = k["byte_definitions"]["l2"]
    row["byte_definition_l1"] = k["byte_definitions"]["l1"]
    row["flags"] = list(k["flags"])
    row["nvtx_ranges"] = list(k["nvtx_ranges"])
    row["missing_count"] = len(k["missing"])
    return row


_GROUP_IDENTITY = ("report", "group_key", "display_name", "name", "demangled_name", "device", "grid_size",
                   "block_size", "launches", "usable_launches", "share_of_gpu_time")
_GROUP_STATS = ("total", "mean", "median", "min", "max")


def group_columns() -> list[str]:
    """The columns of one row per kernel group (`report --format csv --groups`)."""
    return [*_GROUP_IDENTITY, *(f"duration_{s}_s" for s in _GROUP_STATS), "duration_cv",
            *(f"work_{p}_flop" for p in (*R.PRECISIONS, "tensor")), *(f"traffic_{lv}_bytes" for lv in R.LEVELS),
            *(f"intensity_{lv}_flop_per_byte" for lv in R.LEVELS), "achieved_flop_per_s",
            *(f"utilization_{r}" for r in R.ROOFS), "sm_throughput", "memory_throughput", "dominant_precision",
            "bound_by", "bound_kind", "bound_utilization", "regime", "limiters", "disagreeing_launches",
            "regimes", "regime_disagreeing_launches", "findings_from_launch", "top_finding", "flags", "nvtx_ranges"]


def group_row(report_path: str, g: dict[str, Any]) -> dict[str, Any]:
    """Flatten one group of the JSON contract (`groups`) into a row with units in the column names."""
    row: dict[str, Any] = {"report": report_path}
    for key in _GROUP_IDENTITY[1:]:
        value = g[key]
        row[key] = "x".join(map(str, value)) if key in ("grid_size", "block_size") and value else value
    for stat in _GROUP_STATS:
        row[f"duration_{stat}_s"] = g["duration_s"][stat]
    row["duration_cv"] = g["duration_s"]["cv"]
    _work_columns(row, g)
    for r in R.ROOFS:
        row[f"utilization_{r}"] = g["utilization"].get(r)
    _verdict_columns(row, g)
    row["limiters"] = {str(name): n for name, n in g["limiters"].items()}
    row["disagreeing_launches"] = len(g["disagreeing_launches"])
    row["regimes"] = {str(name): n for name, n in g.get("regimes", {}).items()}  # a `Regime` as its value
    row["regime_disagreeing_launches"] = len(g.get("regime_disagreeing_launches", []))
    row["findings_from_launch"] = g["findings_from_launch"]
    top = top_index([f["speedup"] for f in g["diagnosis"]], [f["kind"] for f in g["diagnosis"]],
                    [f["variant"] for f in g["diagnosis"]])
    row["top_finding"] = None if top is None else g["diagnosis"][top]["kind"]
    row["flags"] = list(g["flags"])
    row["nvtx_ranges"] = list(g["nvtx_ranges"])
    return row


def _work_columns(row: dict[str, Any], d: dict[str, Any]) -> None:
    """The work, traffic, intensity and achieved rate of a kernel or group of the JSON contract, added to `row`."""
    for p in (*R.PRECISIONS, "tensor"):
        row[f"work_{p}_flop"] = d["work_flop"][p]
    for lv in R.LEVELS:
        row[f"traffic_{lv}_bytes"] = d["traffic_bytes"][lv]
    for lv in R.LEVELS:
        row[f"intensity_{lv}_flop_per_byte"] = d["intensity_flop_per_byte"][lv]
    row["achieved_flop_per_s"] = d["achieved_flop_per_s"]


def _verdict_columns(row: dict[str, Any], d: dict[str, Any]) -> None:
    """The unit throughputs and the verdict of a kernel or group of the JSON contract, added to `row`."""
    for unit in ("sm_throughput", "memory_throughput"):
        row[unit] = d["utilization"].get(unit)
    row["dominant_precision"] = d["dominant_precision"]
    bound = d["bound_by"]
    row["bound_by"] = bound
    row["bound_kind"] = d["bound_kind"]
    row["bound_utilization"] = d["utilization"].get(bound) if bound else None
    row["regime"] = d["regime"]
