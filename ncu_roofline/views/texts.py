"""The words of the report page: what each flag, ceiling, lever and missing quantity is called.

Kept apart from `views.report` so that the view builds data and this module holds the prose.
"""

from __future__ import annotations

import datetime as _dt
import os

from .labels import long_label, short_label

FLAG_TEXT = {
    "unusable": ("it is not analysed: its section says why (NaN, infinite or impossible values, or no usable "
                 "duration)"),
    "tensor_pipe_utilization_only": "tensor-core work is known only as the pipe's busy share (no FLOP count)",
    "flop_incomplete": "the FLOP total is unknown because tensor-core work was not counted",
    "tensor_work_estimated": "tensor FLOP estimated as tensor-pipe instructions x 512 (true count varies by MMA shape)",
    "no_flop_counts": "the report holds no FLOP counts: the kernel cannot be placed on the chart",
    "no_roofs": "no roof could be computed from this report",
    "tensor_pipe_negligible": "the tensor pipe's busy share is under 5 % and it counted no integer, FP64 or "
                              "warpgroup MMA instruction: not counted as missing FLOP (the pipe also runs the "
                              "compiler's HFMA2.MMA register moves, without any MMA work)",
    "unit_throughputs": "Nsight Compute's unit throughputs (Speed Of Light) are in the report and take part "
                        "in the verdict",
    "duration_from_cycles": "the duration is elapsed cycles ÷ the measured clock (the report holds no "
                            "gpu__time_duration)",
    "grid_under_one_wave": "the grid is smaller than one wave: fewer blocks than the GPU runs at once",
    "dram_one_direction": "DRAM is measured by its reads or its writes alone (the report holds no DRAM "
                          "throughput): with the other direction, DRAM may be busier than this",
}

TABLE_FLAGS = {  # flag prefix -> short label in the table (the rest stay in the kernel section)
    "above_roof": "above roof", "unusable": "unusable", "tensor_work_estimated": "tensor estimated",
    "flop_incomplete": "FLOP incomplete", "tensor_pipe_utilization_only": "tensor pipe % only",
    "peak_from_file": "peak from file", "duration_from_cycles": "duration from cycles",
    "grid_under_one_wave": "< 1 wave", "dram_one_direction": "DRAM one way only",
}

CEILING_LABELS = {
    "unit_throughput": "busy unit", "too_little_work": "too little work", "at_limit": "at its limit",
    "intensity_gap": "intensity gap", "tail_effect": "tail effect",
    "fma_balance": "FMA balance", "issue_share": "issue share", "lane_efficiency": "lane efficiency",
    "tensor_datapath": "tensor datapath", "tensor_share": "tensor share", "sector_use": "sector use",
    "coalescing": "coalescing", "bank_conflicts": "bank conflicts", "latency": "latency", "reuse": "reuse",
    "local_memory": "local memory", "fp64_division": "FP64 divisions",
}

# What a missing quantity is, by the group of its key (`work_flop.fp32`), in the page's one line of what the capture
# lacks; the order of the line.
MISSING_GROUPS = {"duration": "durations", "work_flop": "FLOP counts", "traffic_bytes": "byte counts",
                  "peaks": "roofs", "ceilings": "ceiling metrics", "units": "unit throughputs"}
MISSING_NAMED = 6  # up to this many missing quantities are named one by one in that line


def missing_summary(quantities: list[str]) -> str:
    """Missing quantities in a few words, by group: "FLOP counts (FP16), byte counts (L1), roofs (FP16)"; with more
    than `MISSING_NAMED` of them, the groups alone: "FLOP counts, byte counts, roofs and ceiling metrics"."""
    by_group: dict[str, list[str]] = {}
    for key in quantities:
        group, _, what = key.partition(".")
        names = by_group.setdefault(group, [])
        if what:
            names.append(CEILING_LABELS.get(what, what) if group == "ceilings" else short_label(what))
    known = list(MISSING_GROUPS)
    order = sorted(by_group, key=lambda g: known.index(g) if g in known else len(known))
    if len(quantities) > MISSING_NAMED:
        parts = [MISSING_GROUPS.get(g, g) for g in order]
        return ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]
    return ", ".join(f"{MISSING_GROUPS.get(g, g)} ({', '.join(names)})" if (names := by_group[g])
                     else MISSING_GROUPS.get(g, g) for g in order)


def quantity_label(key: str) -> str:
    """`work_flop.fp16` -> `FP16 work`, `traffic_bytes.l1` -> `L1 bytes`, `peaks.l2` -> `L2 roof`."""
    group, _, what = key.partition(".")
    if group == "ceilings":
        return f"{CEILING_LABELS.get(what, what).capitalize()} ceiling"
    name = short_label(what)
    return {"work_flop": f"{name} work", "traffic_bytes": f"{name} bytes", "peaks": f"{name} roof",
            "duration": "Duration", "units": name[:1].upper() + name[1:]}.get(group, key)

def table_flags(flags: list[str], unusable_reason: str | None = None) -> list[dict[str, str]]:
    """The flags worth a badge in the table, each once, with its explanation for the tooltip (`unusable_reason`:
    see `flag_text`)."""
    out: dict[str, dict[str, str]] = {}
    negligible = "tensor_pipe_negligible" in flags  # a pipe share under 5 % is no tensor work: no badge
    for flag in flags:
        kind = flag.split(":", 1)[0]
        if kind == "tensor_pipe_utilization_only" and negligible:
            continue
        if kind in TABLE_FLAGS:
            label = TABLE_FLAGS[kind]
            arg = flag.split(":", 1)[1] if ":" in flag else ""
            if kind == "above_roof" and arg:
                label = f"{label} ({short_label(arg)})"
            text = flag_text(flag, unusable_reason)
            entry = out.setdefault(label, {"label": label, "title": text})
            if entry["title"] != text:
                entry["title"] += "; " + text
    return list(out.values())

def flag_text(flag: str, unusable_reason: str | None = None) -> str:
    """One flag in words; `unusable` with the kernel's own reason where it is known (`unusable_reason`)."""
    if flag == "unusable" and unusable_reason:
        return f"it is not analysed: {unusable_reason}"
    if flag in FLAG_TEXT:
        return FLAG_TEXT[flag]
    kind, _, arg = flag.partition(":")
    if kind == "above_roof":
        return (f"above the {long_label(arg)} roof: a unit, precision, FLOP convention or "
                "sparsity assumption is wrong somewhere")
    if kind == "partial_roofs":
        return f"no roof for: {arg.replace(',', ', ')} (the report lacks the metrics; see Missing)"
    if kind == "peak_from_file":
        return f"the {arg} roof comes from the peaks file"
    return flag

def created_at() -> str:
    """Creation time, honouring SOURCE_DATE_EPOCH for reproducible output."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    when = (_dt.datetime.fromtimestamp(int(epoch), tz=_dt.timezone.utc) if epoch and epoch.isdigit()
            else _dt.datetime.now(tz=_dt.timezone.utc))
    return when.strftime("%Y-%m-%d %H:%M UTC")
