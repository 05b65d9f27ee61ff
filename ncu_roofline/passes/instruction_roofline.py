"""The Instruction Roofline (Ding & Williams, 2019) of memory access: for global memory, global
load/store warp instructions per second against those instructions per 32-byte L1 sector; for
shared memory, shared load/store warp instructions per second against those per wavefront. Both
axes count the same instructions, so a point is at most its intensity × the transaction peak (the
L1 roof) and at most the issue peak. Vertical walls mark access patterns: 1 instruction per
transaction (stride 0, or conflict-free shared memory), 1/4 and 1/8 (unit stride with 4- or 8-byte
elements), 1/32 (one sector per thread, or 32-way bank conflicts). The kernel's warp instructions
of all kinds (`warp_inst`, `warp_inst_per_s`) are kept beside them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..model.quantities import Resolver
from .ceilings import ASSUMED_ISSUE_PER_SM, ISSUE_PEAKS

if TYPE_CHECKING:
    from ..model.roofline import KernelModel

WALLS = (
    (1.0, "stride 0 / no bank conflict"),
    (1 / 4, "unit stride, 4-byte"),
    (1 / 8, "unit stride, 8-byte"),
    (1 / 32, "one sector per thread / 32-way"),
)


def instruction_roofline(m: KernelModel) -> dict[str, Any] | None:
    """The kernel's Instruction Roofline coordinates, or None without the metrics."""
    if not m.usable or m.q.duration_s is None:
        return None
    res = Resolver(m.raw)
    res.duration = m.q.duration_s
    duration = m.q.duration_s.value
    warp = res.count("smsp__inst_executed.sum")
    if warp is None or warp[0] <= 0:
        return None
    out: dict[str, Any] = {"warp_inst": warp[0], "warp_inst_per_s": warp[0] / duration}
    clock = res.clock("sm") or res.clock("gpc")  # the GPC clock drives the SMs
    issue = next((v for v in (res.number(n) for n in ISSUE_PEAKS) if v is not None), None)
    assumed = issue is None and m.raw.sm_count is not None
    if assumed:
        issue = ASSUMED_ISSUE_PER_SM * m.raw.sm_count  # type: ignore[operator]
    if issue is not None and clock is not None:
        out["issue_peak_warp_inst_per_s"] = issue * clock[0]
        out["issue_peak_assumed"] = assumed
    l1 = m.peaks.get("l1")
    if l1 is not None:
        out["l1_transactions_per_s_peak"] = l1.value / 32.0
    spaces = {
        "global": ("smsp__sass_inst_executed_op_global_{}.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_{}.sum"),
        "shared": ("smsp__sass_inst_executed_op_shared_{}.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{}.sum"),
    }
    for space, (inst_metric, transaction_metric) in spaces.items():
        point = _space(res, inst_metric, transaction_metric)
        if point is not None:
            point["inst_per_s"] = point["inst"] / duration  # the point's height: the same instructions as its x
            out[space] = point
    if "global" not in out and "shared" not in out:
        return None
    return out


def _space(res: Resolver, inst_metric: str, transaction_metric: str) -> dict[str, float] | None:
    """Warp instructions and transactions of one memory space, loads and stores together, and their ratio."""
    inst = transactions = 0.0
    for op in ("ld", "st"):
        i = res.count(inst_metric.format(op))
        t = res.count(transaction_metric.format(op))
        if i is not None and t is not None:
            inst += i[0]
            transactions += t[0]
    if inst <= 0 or transactions <= 0:
        return None
    return {"inst": inst, "transactions": transactions, "inst_per_transaction": inst / transactions}
