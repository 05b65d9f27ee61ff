"""The words of `diff` about work and causes: how the work of a pair changed, its time per unit of work, and each
cause (a finding that appeared or went away) by kind and change.

Templates as in `knowledge.wording` (segments kept where every figure they name is present), filled by
`views.diff` with figures it has already formatted (`base`, `head`: "2.15 G", "10 MB"; `measure`: a label from
`MEASURE_LABELS`; `headline`: the finding's own headline from the catalog). Nothing reads these words back.
"""

from __future__ import annotations

from .wording import Template

# The counters a work or a cause is measured by (`compare.groups.COUNTERS`, the grid's blocks and waves per SM).
MEASURE_LABELS = {"dram_bytes": "DRAM bytes", "l2_bytes": "L2 bytes", "l1_bytes": "L1 bytes", "flop": "FLOP",
                  "fp64_flop": "FP64 FLOP", "fp32_flop": "FP32 FLOP", "fp16_flop": "FP16 FLOP",
                  "tensor_flop": "tensor FLOP", "inst_executed": "warp instructions executed",
                  "blocks": "grid blocks", "waves": "waves per SM"}
MEASURE_UNITS = {"dram_bytes": "B", "l2_bytes": "B", "l1_bytes": "B"}  # the rest are plain counts

# By `compare.work.WorkChange`.
WORK: dict[str, Template] = {
    "size": ("problem size changed? {measure} {base} → {head}, bytes in step",),
    "arithmetic": ("FLOP changed at the same traffic: {base} → {head}",),
    "traffic": ("work changed: {measure} {base} → {head}, bytes not in step",),
    "same": ("same work: {measure} {head}",),
    "unknown": (("work changed: {measure} {base} → {head}, no bytes to tell the problem size",
                 "work not counted on both sides"),),
}
WORK_NEXT_STEP: dict[str, str] = {
    "size": "Capture BASE and HEAD at one problem size to time the code alone.",
}
PER_UNIT: Template = ("{base} → {head} per {unit}", " ({pct})")
JUDGED_PER_UNIT = "judged per {unit}"

_FIGURE = ": {measure} {base} → {head}"
# By (finding kind, change); a kind without an entry is worded by its headline (`APPEARED`, `GONE`).
CAUSES: dict[tuple[str, str], Template] = {
    ("local_memory", "appeared"): ("new register spills", _FIGURE),
    ("local_memory", "gone"): ("register spills gone", _FIGURE),
    ("coalescing", "appeared"): ("uncoalesced access", _FIGURE),
    ("coalescing", "gone"): ("access coalesced", _FIGURE),
    ("sector_use", "appeared"): ("partly used sectors", _FIGURE),
    ("sector_use", "gone"): ("sector use improved", _FIGURE),
    ("reuse", "appeared"): ("more DRAM reads per byte loaded", _FIGURE),
    ("reuse", "gone"): ("fewer DRAM reads per byte loaded", _FIGURE),
    ("too_little_work", "appeared"): ("too little work to fill the GPU", _FIGURE),
    ("too_little_work", "gone"): ("enough work to fill the GPU", _FIGURE),
    ("tail_effect", "appeared"): ("partial last wave", _FIGURE),
    ("tail_effect", "gone"): ("partial last wave gone", _FIGURE),
}
APPEARED: Template = ("new: {headline}", "; {measure} {base} → {head}")
GONE: Template = ("gone: {headline}", "; {measure} {base} → {head}")
