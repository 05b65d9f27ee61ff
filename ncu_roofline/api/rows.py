"""One kernel of the JSON contract flattened into a row, units in the column names (no pandas)."""

from __future__ import annotations

from typing import Any

from ..knowledge import recipes as R


def columns() -> list[str]:
    """The row's columns, in order, without a kernel (a CSV of no kernel still has its header)."""
    return [*_IDENTITY, *(f"work_{p}_flop" for p in (*R.PRECISIONS, "tensor")),
            *(f"traffic_{lv}_bytes" for lv in R.LEVELS), *(f"intensity_{lv}_flop_per_byte" for lv in R.LEVELS),
            "achieved_flop_per_s", *(f"attainable_{lv}_flop_per_s" for lv in R.LEVELS),
            *(f"peak_{lv}_bytes_per_s" for lv in R.LEVELS), *(f"peak_{p}_flop_per_s" for p in R.PRECISIONS),
            "peak_tensor_flop_per_s", *(f"utilization_{r}" for r in R.ROOFS), *_VERDICT]


_IDENTITY = ("report", "index", "range_index", "name", "demangled_name", "device", "compute_capability", "sm_count",
             "usable", "unusable_reason", "duration_s")
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
        "device": k["device"],
        "compute_capability": k["compute_capability"],
        "sm_count": k["sm_count"],
        "usable": k["usable"],
        "unusable_reason": k["unusable_reason"],
        "duration_s": k["duration_s"],
    }
    for p in (*R.PRECISIONS, "tensor"):
        row[f"work_{p}_flop"] = k["work_flop"][p]
    for lv in R.LEVELS:
        row[f"traffic_{lv}_bytes"] = k["traffic_bytes"][lv]
    for lv in R.LEVELS:
        row[f"intensity_{lv}_flop_per_byte"] = k["intensity_flop_per_byte"][lv]
    row["achieved_flop_per_s"] = k["achieved_flop_per_s"]
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
    for unit in ("sm_throughput", "memory_throughput"):
        row[unit] = k["utilization"].get(unit)
    row["dominant_precision"] = k["dominant_precision"]
    row["bound_by"] = k["bound_by"]
    row["bound_kind"] = k["bound_kind"]
    bound = k["bound_by"]
    row["bound_utilization"] = k["utilization"].get(bound) if bound else None
    row["regime"] = k["regime"]
    for fact in ("grid_blocks", "waves_per_sm", "achieved_occupancy"):
        row[fact] = k["launch"].get(fact)
    row["byte_definition_l2"] = k["byte_definitions"]["l2"]
    row["byte_definition_l1"] = k["byte_definitions"]["l1"]
    row["flags"] = ";".join(k["flags"])
    row["nvtx_ranges"] = ";".join(k["nvtx_ranges"])
    row["missing_count"] = len(k["missing"])
    return row
