"""Per-opcode instruction counts (Nsight Compute's InstructionStats section), read as metrics of their own.

A `.ncu-rep` report with that section holds `sass__inst_executed_per_opcode` (warp instructions executed, per SASS
opcode) and `sass__inst_executed_per_opcode_with_modifier_all` (the same per opcode and modifiers): instanced
metrics whose instances are keyed by the opcode's name. The reader offers the few counts the diagnosis reads as
metrics named `<metric>[<opcode>]` (`opcode_metric`): where the metric holds instances, an opcode it does not list was
not executed (0); where it holds none, the count is not in the report. A CSV export holds no instances, so none of
these.

FP64 divisions: CUDA's double-precision division and reciprocal start with MUFU.RCP64H, a reciprocal estimate on the
XU pipe, then refine it on the FP64 pipe. The fast path of a division is MUFU.RCP64H, 5 DFMA and one DMUL (the
quotient), before a range check that calls a longer routine for operands near the ends of the range; a multiply by
a reciprocal computed once keeps the DMUL. So each MUFU.RCP64H stands for about `DIVISION_DFMA` FP64 instructions
that multiplying by a hoisted reciprocal removes: an estimate (the longer routine takes more, a bare reciprocal
fewer), which the findings that use it say.
"""

from __future__ import annotations

__all__ = ["DIVISION_DFMA", "DIVISION_STARTS", "FP64_OPCODES", "FP64_PIPE_COUNTS", "OPCODE_FACTS", "opcode_metric"]

PER_OPCODE = "sass__inst_executed_per_opcode"
PER_OPCODE_MODIFIER = "sass__inst_executed_per_opcode_with_modifier_all"


def opcode_metric(metric: str, opcode: str) -> str:
    """The name the reader gives one opcode's count of a per-opcode metric."""
    return f"{metric}[{opcode}]"


# The opcodes the FP64 pipe executes: adds, multiplies, FMAs, compares, min and max.
FP64_OPCODES = ("DADD", "DMUL", "DFMA", "DSETP", "DMNMX", "DSET")
FP64_PIPE_COUNTS = tuple(opcode_metric(PER_OPCODE, op) for op in FP64_OPCODES)
DIVISION_STARTS = opcode_metric(PER_OPCODE_MODIFIER, "MUFU.RCP64H")
DIVISION_DFMA = 5  # FP64 instructions a division's fast path adds to the multiply that replaces it
OPCODE_FACTS = (DIVISION_STARTS, *FP64_PIPE_COUNTS)
