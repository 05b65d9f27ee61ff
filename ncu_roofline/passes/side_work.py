"""CUDA-core work beside the tensor cores: where a precision's instruction-mix ceilings do not describe a kernel.

The FMA-balance, issue-share and lane-efficiency ceilings cap a CUDA-core roof (FP64, FP32, FP16). A kernel whose
work runs on the tensor cores (its measured tensor FLOP are the most, or MMA instructions kept the tensor pipe busy
with work no counter turns into FLOP) is not judged against that roof: its FP32 instructions are an epilogue's or a
conversion's, and a ceiling built on them would describe them, not the kernel. Such ceilings are not applicable,
with the reason.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..model.roofline import KernelModel

CUDA_CORE_CEILINGS = ("fma_balance", "issue_share", "lane_efficiency")


def tensor_side_part(m: KernelModel, precision: str) -> str | None:
    """Why a CUDA-core precision's ceilings do not describe a kernel whose work runs on the tensor cores (its
    measured tensor FLOP are the most, or the tensor pipe did work no counter turns into FLOP), or None. Its FP32
    instructions are then an epilogue's or a conversion's: a ceiling on their roof is no ceiling of the kernel."""
    work = m.q.flop.get(precision)
    amount = f"{work.value:,.0f} {precision.upper()} FLOP" if work is not None else f"its {precision.upper()} work"
    if m.dominant_precision == "tensor":
        return (f"the kernel's work runs on the tensor cores ({amount} beside them): the {precision.upper()} roof "
                "is not its roof")
    if "flop_incomplete" in m.flags:
        pipe = m.q.tensor_pipe_utilization
        busy = f" (busy {pipe.value:.1%} of the run)" if pipe is not None else ""
        return (f"the tensor pipe did work that no counter here turns into FLOP{busy}: {amount} are a side part "
                f"of the kernel, and the {precision.upper()} roof is not its roof")
    return None
