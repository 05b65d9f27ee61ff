"""FP64 divisions in a kernel the FP64 pipe bounds: how much of the pipe's work they make, and what making them
multiplies by a reciprocal could gain at most.

The counts are the report's per-opcode ones (`knowledge.opcodes`): each MUFU.RCP64H starts a division or reciprocal
(and starts one again where a division takes CUDA's slow path), and about `DIVISION_DFMA` DFMA follow it on the FP64
pipe that a multiply by a hoisted reciprocal does not need. Their share of the FP64 instructions is an estimate that
sizes the finding. The bound is not an estimate: a division's instructions run on the FP64, XU, FMA, ALU and
control-flow pipes and through the MIO queue, so whatever the fix removes of them, the limits they do not use (every
memory level and unit, the tensor, FP16, TEX and IPA pipes, the TMA unit) keep their work, and the kernel runs at most
1 / the busiest of those shares faster. A report without per-opcode counts (a CSV export, a capture without
InstructionStats) gets no finding.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..knowledge import recipes as R
from ..knowledge import throughputs as T
from ..knowledge.opcodes import DIVISION_DFMA, DIVISION_STARTS, FP64_PIPE_COUNTS
from .facts import fact, held_sum
from .finding import Finding, Kind

if TYPE_CHECKING:
    from ..model.roofline import KernelModel

NOTABLE = 0.1  # divisions from this share of the FP64 instructions are worth a finding
FP64_PIPE = "sm__pipe_fp64_cycles_active"
# Compute units no instruction of a division runs on: their work, and the memory side's, bounds the gain.
_APART = frozenset({"sm__inst_executed_pipe_fp16", "sm__inst_executed_pipe_tex", "sm__inst_executed_pipe_ipa",
                    "sm__pipe_tensor_cycles_active", "sm__pipe_tensor_op_dmma_cycles_active",
                    "sm__pipe_tensor_type_hmma_hgmma_qgmma_imma_igmma_bmma_bgmma_cycles_active",
                    "sm__pipe_tc_cycles_active", "sm__mem_tensor_cycles_active", "sm__pipe_tma_cycles_active"})


def division_share(m: KernelModel) -> float | None:
    """The estimated share of the kernel's FP64 instructions that its divisions' refinement makes; None where the
    report holds no per-opcode counts (or no FP64 instruction)."""
    starts, fp64 = fact(m, DIVISION_STARTS), held_sum(m, FP64_PIPE_COUNTS)
    if starts is None or not fp64:
        return None
    return min(1.0, DIVISION_DFMA * starts / fp64)


def _left(m: KernelModel) -> list[tuple[float, str]]:
    """The busy shares of the limits a division does not use (share, label): every memory roof and unit, and the
    compute units in `_APART`."""
    out = [(unit.share, unit.label) for uid, unit in m.units.items()
           if (unit.group == T.MEMORY and unit.parent is not None) or uid in _APART]
    return out + [(v, f"the {roof.upper()} roof") for roof, v in m.utilization.items() if roof in R.LEVELS]


def fp64_divisions(m: KernelModel) -> list[Finding]:
    """A finding where the FP64 pipe bounds the kernel and its divisions make at least `NOTABLE` of the FP64
    instructions: bounded by 1 / the busiest share of the limits no division uses (`_left`)."""
    share = division_share(m) if m.bound_by == FP64_PIPE and FP64_PIPE in m.units else None
    if share is None or share < NOTABLE:
        return []
    starts = fact(m, DIVISION_STARTS) or 0.0
    fp64 = held_sum(m, FP64_PIPE_COUNTS) or 0.0
    figures: dict[str, float | str | None] = {"starts": starts, "fp64": fp64, "share": share,
                                              "per": float(DIVISION_DFMA), "pipe": m.units[FP64_PIPE].share}
    evidence = (DIVISION_STARTS, *FP64_PIPE_COUNTS, FP64_PIPE)
    other_share, label = max(_left(m), default=(0.0, ""))
    if not other_share > 0:
        return [Finding(Kind.FP64_DIVISION, "refinement", FP64_PIPE, None, m.bound_by, None, "fp64_division",
                        ("division_unbounded",), figures, evidence)]
    speedup = max(1.0, 1.0 / other_share)
    figures |= {"other_label": label, "other_share": other_share, "other_x": speedup}
    return [Finding(Kind.FP64_DIVISION, "refinement", FP64_PIPE, None, m.bound_by, speedup, "fp64_division",
                    ("division_leaves",), figures, evidence)]
