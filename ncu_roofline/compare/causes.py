"""Why a pair's time changed: the findings that appeared or went away, each with the counter that shows it, ranked
so that the likely cause leads.

A cause is a finding of one side only (`changes.findings_change`), by kind and variant, with the counter its kind
moves (`MEASURES`: spills and misses move bytes at their level, uncoalesced or partly used sectors L2's bytes,
instruction-mix ceilings the warp instructions, too little work and tails the grid) before and after. Ranked:

1. those that agree with the time: findings that appeared for a slower pair, findings that went away for a
   faster one (appeared first where the time did not move);
2. the larger move of their counter (as a factor, either way) first;
3. those about the limiter of their side (a finding of BASE about BASE's limiter, of HEAD about HEAD's) first;
4. the larger gain the finding projects first; then the order of the diagnosis.

Only fields are read (kind, variant, roof, speedup, counters); the words are `knowledge.diff_words`'.
"""

from __future__ import annotations

import math
from typing import Any

from ..knowledge import recipes as R
from ..knowledge.wording import Kind
from .runs import number
from .work import BYTE_COUNTERS

BLOCKS = "blocks"  # the grid's block count: a measure from the launch configuration, not a counter
WAVES = "waves"  # the grid's waves per SM (blocks over what the GPU runs at once); else its blocks
# The counter a kind of finding moves; a level's bytes where its roof is a memory level (`None`: that default).
MEASURES: dict[str, str | None] = {
    Kind.LOCAL_MEMORY.value: "dram_bytes",
    Kind.REUSE.value: "dram_bytes",
    Kind.COALESCING.value: "l2_bytes",
    Kind.SECTOR_USE.value: "l2_bytes",
    Kind.FMA_BALANCE.value: "inst_executed",
    Kind.ISSUE_SHARE.value: "inst_executed",
    Kind.LANE_EFFICIENCY.value: "inst_executed",
    Kind.TENSOR_SHARE.value: "inst_executed",
    Kind.FP64_DIVISION.value: "inst_executed",
    Kind.TOO_LITTLE_WORK.value: WAVES,
    Kind.TAIL_EFFECT.value: WAVES,
}
LEVEL_KINDS = frozenset({Kind.LOCAL_MEMORY.value, Kind.REUSE.value})  # measured at their roof's level


def _blocks(side: dict[str, Any]) -> float | None:
    grid = side.get("grid_size")
    if not isinstance(grid, list) or not grid or not all(isinstance(v, int) and v > 0 for v in grid):
        return None
    return float(math.prod(grid))


def _measure(kind: str, roof: Any) -> str | None:
    if kind in LEVEL_KINDS and isinstance(roof, str) and roof in R.LEVELS:
        return BYTE_COUNTERS[roof]
    return MEASURES.get(kind)


def _figures(measure: str | None, counters: dict[str, dict[str, float | None]], base: dict[str, Any],
             head: dict[str, Any]) -> tuple[float | None, float | None]:
    if measure == WAVES:
        return number(base.get("waves_per_sm")), number(head.get("waves_per_sm"))
    if measure == BLOCKS:
        return _blocks(base), _blocks(head)
    values = counters.get(measure or "") or {}
    return values.get("base"), values.get("head")


def _ratio(base: float | None, head: float | None) -> float | None:
    return head / base if base and head and base > 0 and head > 0 else None


def causes(findings: dict[str, Any], counters: dict[str, dict[str, float | None]], base: dict[str, Any],
           head: dict[str, Any], delta_s: float | None) -> list[dict[str, Any]]:
    """The findings that appeared or went away, with their counters, the likely cause first (see the module)."""
    out = []
    for change, items in (("appeared", findings.get("appeared", [])), ("gone", findings.get("disappeared", []))):
        for f in items:
            measure = _measure(f["kind"], f.get("roof"))
            b, h = _figures(measure, counters, base, head)
            if measure == WAVES and b is None and h is None:  # a capture without the occupancy to count waves
                measure = BLOCKS
                b, h = _figures(measure, counters, base, head)
            if b is None and h is None:
                measure = None
            out.append({"kind": f["kind"], "variant": f.get("variant"), "change": change, "roof": f.get("roof"),
                        "measure": measure, "base": b, "head": h, "ratio": _ratio(b, h),
                        "speedup": number(f.get("speedup")), "headline": f.get("text") or ""})
    leading = "gone" if delta_s is not None and delta_s < 0 else "appeared"

    limiter = {"appeared": head.get("bound_by"), "gone": base.get("bound_by")}

    def rank(n_cause: tuple[int, dict[str, Any]]) -> tuple[int, float, int, float, int]:
        n, c = n_cause
        moved = abs(math.log(c["ratio"])) if c["ratio"] else 0.0
        on_limiter = c["roof"] is not None and c["roof"] == limiter[c["change"]]
        return (0 if c["change"] == leading else 1, -moved, 0 if on_limiter else 1, -(c["speedup"] or 0.0), n)

    return [c for _, c in sorted(enumerate(out), key=rank)]
