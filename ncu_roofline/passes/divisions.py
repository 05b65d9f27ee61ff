"""FP64 divisions in a kernel the FP64 pipe bounds: how much of the pipe's work they make, and what a multiply by a
reciprocal computed once would leave.

The counts are the report's per-opcode ones (`knowledge.opcodes`): each MUFU.RCP64H starts a division or reciprocal,
and about `DIVISION_DFMA` DFMA follow it on the FP64 pipe that a multiply by a hoisted reciprocal does not need. Their
share of the FP64 instructions is an estimate, and so is the bound: 1 / the busiest share the fix leaves, where the
FP64 pipe (and the shared pipe's FP64 part) loses that share, the issue slots lose those DFMA and the MUFU.RCP64H,
and every other limit keeps its work (the XU pipe, whose MUFU.RCP64H go, and the compute roofs, whose FLOP fall, are
left out). A report without per-opcode counts (a CSV export, a capture without InstructionStats) gets no finding.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..knowledge import recipes as R
from ..knowledge import throughputs as T
from ..knowledge.opcodes import DIVISION_DFMA, DIVISION_STARTS, FP64_PIPE_COUNTS
from .facts import ISSUED, fact, held_sum
from .finding import Finding, Kind

if TYPE_CHECKING:
    from ..model.roofline import KernelModel

NOTABLE = 0.1  # divisions from this share of the FP64 instructions are worth a finding
FP64_PIPE = "sm__pipe_fp64_cycles_active"
SHARED_PIPE = "sm__pipe_shared_cycles_active"  # FP64, FP16 and tensor work: its FP64 part falls too
_ISSUE = ("sm__issue_active", "sm__inst_executed")
_FALLS = frozenset({T.SM, FP64_PIPE, SHARED_PIPE, "sm__inst_executed_pipe_xu", *_ISSUE})


def division_share(m: KernelModel) -> float | None:
    """The estimated share of the kernel's FP64 instructions that its divisions' refinement makes; None where the
    report holds no per-opcode counts (or no FP64 instruction)."""
    starts, fp64 = fact(m, DIVISION_STARTS), held_sum(m, FP64_PIPE_COUNTS)
    if starts is None or not fp64:
        return None
    return min(1.0, DIVISION_DFMA * starts / fp64)


def _left(m: KernelModel, share: float, removed: float) -> list[tuple[float, str]]:
    """The busy shares the fix leaves (share, label): the FP64 pipe less the divisions' share, the shared pipe less
    as much, the issue slots less the `removed` instructions, every other unit and memory roof as it is."""
    out: list[tuple[float, str]] = []
    fp64 = m.units[FP64_PIPE].share
    issued = fact(m, ISSUED)
    for uid, unit in m.units.items():
        if uid == FP64_PIPE:
            out.append((fp64 * (1.0 - share), unit.label))
        elif uid == SHARED_PIPE:
            out.append((max(0.0, unit.share - fp64 * share), unit.label))
        elif uid in _ISSUE and issued:
            out.append((unit.share * max(0.0, 1.0 - removed / issued), unit.label))
        elif uid not in _FALLS:
            out.append((unit.share, unit.label))
    out += [(v, f"the {roof.upper()} roof") for roof, v in m.utilization.items() if roof in R.LEVELS]
    return out


def fp64_divisions(m: KernelModel) -> list[Finding]:
    """A finding where the FP64 pipe bounds the kernel and its divisions make at least `NOTABLE` of the FP64
    instructions: bounded by 1 / the busiest share removing their refinement leaves (`_left`)."""
    share = division_share(m) if m.bound_by == FP64_PIPE and FP64_PIPE in m.units else None
    if share is None or share < NOTABLE:
        return []
    starts = fact(m, DIVISION_STARTS) or 0.0
    fp64 = held_sum(m, FP64_PIPE_COUNTS) or 0.0
    removed = DIVISION_DFMA * starts
    figures: dict[str, float | str | None] = {"starts": starts, "fp64": fp64, "share": share,
                                              "per": float(DIVISION_DFMA), "pipe": m.units[FP64_PIPE].share}
    evidence = (DIVISION_STARTS, *FP64_PIPE_COUNTS, FP64_PIPE, ISSUED)
    other_share, label = max(_left(m, share, removed + starts))
    speedup = max(1.0, 1.0 / other_share) if other_share > 0 else None
    if speedup is None:
        return [Finding(Kind.FP64_DIVISION, "refinement", FP64_PIPE, None, m.bound_by, None, "fp64_division",
                        ("division_unbounded",), figures, evidence)]
    figures |= {"other_label": label, "other_share": other_share, "other_x": speedup}
    return [Finding(Kind.FP64_DIVISION, "refinement", FP64_PIPE, None, m.bound_by, speedup, "fp64_division",
                    ("division_leaves",), figures, evidence)]
