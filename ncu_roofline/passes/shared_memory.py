"""Shared-memory bank conflicts from Nsight Compute's own conflict counters.

The per-operation counts come first: their loads include `ldmatrix` (an x4 reads 4 wavefronts: on
an A100 CUTLASS kernel, 7,488 LDSM x 4 + 1,152 LDS x 4 = the 34,560 load wavefronts counted), while
the pipe's total also counts wavefronts of other accesses (1,048,576 of them in a transpose that uses
no shared memory at all), which would dilute the conflicts. The total serves only where a report
lacks the per-operation counts. Wide (64/128-bit) accesses need 2-4 wavefronts without any conflict,
so wavefronts per instruction is not a conflict degree; only the conflict counters are.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model.quantities import Resolver

OPS = ("ld", "st", "atom")
WAVEFRONTS = "l1tex__data_pipe_lsu_wavefronts_mem_shared{}.sum"
CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared{}.sum"
BANK_CONFLICT_ACTION = ("remove shared-memory bank conflicts: pad the tile by one element per row (e.g. [32][33]) or "
                        "swizzle the index so a warp's 32 accesses fall in 32 different banks")
FEW_CONFLICTS = 0.1  # under this share of the wavefronts, conflicts are what a padded or swizzled layout keeps


def conflict_action(free: float) -> str:
    """The lever for a conflict-free share `free`: the layout fix, or, where conflicts are few, that little is left
    to gain from it (a kernel that already pads or swizzles its tile shows a few percent)."""
    if 1.0 - free >= FEW_CONFLICTS:
        return BANK_CONFLICT_ACTION
    return (f"little to gain from the shared-memory layout: only {1.0 - free:.1%} of its wavefronts are bank "
            "conflicts (a padded or swizzled tile can keep a few)")


@dataclass(frozen=True, slots=True)
class BankConflicts:
    free: float  # conflict-free share of the wavefronts
    evidence: dict[str, float]
    detail: str


def bank_conflicts(res: Resolver) -> BankConflicts | str | None:
    """The conflict-free share of the kernel's shared-memory wavefronts; a reason where the kernel issues no
    shared-memory accesses; None where the report holds no conflict counts."""
    evidence: dict[str, float] = {}
    wavefronts = conflicts = 0.0
    found = False
    for op in OPS:
        w, c = res.total(WAVEFRONTS.format(f"_op_{op}")), res.total(CONFLICTS.format(f"_op_{op}"))
        if w is None or c is None:
            continue
        found = True
        wavefronts += w
        conflicts += c
        if w or op != "atom":
            evidence[f"shared_{op}_wavefronts"] = w
            evidence[f"shared_{op}_bank_conflicts"] = c
    total = res.total(WAVEFRONTS.format(""))
    whole = ""
    if not found:
        all_conflicts = res.total(CONFLICTS.format(""))
        if total is None or all_conflicts is None:
            return None
        wavefronts, conflicts = total, all_conflicts
        whole = ("; the report holds only the pipe's totals, which count other accesses' wavefronts too: at least "
                 "this share of the shared-memory wavefronts are conflicts")
    if wavefronts <= 0:
        other = f" (the pipe's total of {total:,.0f} wavefronts counts other accesses)" if found and total else ""
        return f"no shared-memory wavefronts: the kernel issues no shared-memory loads, stores or atomics{other}"
    conflicts = min(max(conflicts, 0.0), wavefronts)
    free = (wavefronts - conflicts) / wavefronts
    evidence |= {"shared_wavefronts": wavefronts, "bank_conflicts": conflicts, "conflict_free_share": free}
    ldsm = res.total("smsp__inst_executed_op_ldsm.sum")
    if ldsm:
        evidence["ldmatrix_inst"] = ldsm
    ways = 1.0 / free if free > 0 else float("inf")
    # Nsight Compute's source-level figures beside its counter, where both see conflicts (they count other
    # scopes: on a CUTLASS kernel they show excess where the counter shows none, so they set no factor)
    ideal, excess = res.number("memory_l1_wavefronts_shared_ideal"), res.number(
        "derived__memory_l1_wavefronts_shared_excessive")
    source = (f"; its source-level count: {excess:,.0f} wavefronts over an ideal {ideal:,.0f} "
              f"({(ideal + excess) / ideal:.3g}× the ideal)") if conflicts > 0 and ideal and excess else ""
    detail = (f"{conflicts:,.0f} of {wavefronts:,.0f} shared-memory wavefronts are bank conflicts (Nsight Compute's "
              f"count; {ways:.3g} wavefronts per conflict-free one{source}{whole})")
    return BankConflicts(free, evidence, detail)
