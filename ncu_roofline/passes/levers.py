"""A unit limiter's lever in this kernel's own terms, and whether the roof its work shows under can be set
against it.

A unit's fixed wording (`knowledge.throughputs`) names every usual cause. Where the kernel's counters rule a
cause out, the lever leaves it out: no vector loads for a kernel that executes no global loads, no bank
conflicts where Nsight Compute counted none. A busy unit is set against its roof's bytes ("while L2 bytes
reach only 1 %") only where the roof is well under the unit and those bytes count (nearly) all of that
level's traffic: a chart definition of L2 -> L1 reads leaves out a kernel's stores, one of L1's global and
local write-back its shared memory, and a busy unit with little counted traffic then says nothing about
wasted bytes. Whether a report measured every limit (`limits_measured`) decides whether "latency" can be
named.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..knowledge import recipes as R
from ..knowledge import throughputs as T
from .divisions import FP64_PIPE, division_share
from .divisions import NOTABLE as DIVISIONS_NOTABLE
from .facts import (
    BANK_CONFLICTS,
    LOCAL_REQUESTS,
    MEMORY_INSTRUCTIONS,
    SHARED_ALLOCATION,
    SHARED_OP_WAVEFRONTS,
    SHARED_WAVEFRONTS,
    STORE_SECTORS,
    fact,
    global_loads,
    held_sum,
)
from .libraries import library_of

if TYPE_CHECKING:
    from ..model.roofline import KernelModel
    from ..model.throughputs import UnitShare

# A byte count that leaves out a kind of traffic still describes the level where that traffic is at most this
# share of the whole.
OMITTED_AT_MOST = 0.2
GLOBAL_REQUESTS = MEMORY_INSTRUCTIONS[1]
# Chart definitions of L2 bytes that count reads alone (L2 -> L1, L2 -> crossbar returns).
_L2_READS_ONLY = ("l1tex__m_xbar2l1tex_read", "lts2xbar")


def _small(part: float | None, whole: float | None) -> bool:
    """`part` is known, and nothing or at most `OMITTED_AT_MOST` of `whole`."""
    if part is None:
        return False
    return part <= 0 or (whole is not None and whole > 0 and part <= OMITTED_AT_MOST * whole)


def bytes_cover_level(m: KernelModel, level: str) -> bool:
    """Whether the kernel's byte count at a memory level holds (nearly) all of its traffic there, so that a
    busy unit there can be set against it; FLOP roofs and DRAM (reads plus writes) always can."""
    counted = m.q.bytes.get(level)
    if level not in ("l1", "l2"):
        return True
    if counted is None:
        return False
    recipe = counted.recipe
    if level == "l2":
        if not any(part in recipe for part in _L2_READS_ONLY):
            return True
        stores = fact(m, STORE_SECTORS)
        return _small(None if stores is None else 32.0 * stores, counted.value + 32.0 * (stores or 0.0))
    if "mem_lgds" in recipe:  # global, local and shared write-back
        return True
    shared = held_sum(m, SHARED_OP_WAVEFRONTS)  # a wavefront moves at most 128 bytes
    if shared is None:
        shared = fact(m, SHARED_WAVEFRONTS)  # the pipe's total, other accesses' wavefronts included: an upper bound
    if not _small(None if shared is None else 128.0 * shared, counted.value + 128.0 * (shared or 0.0)):
        return False
    return counted.definition != "global" or _small(held_sum(m, LOCAL_REQUESTS), held_sum(m, GLOBAL_REQUESTS))


# A busy unit is set against its roof only where the roof's use is well under the unit's: below this share of it.
CONTRAST_BELOW = 0.75


def sets_against(m: KernelModel, roof: str | None) -> bool:
    """Whether the limiter's sentence sets it against the roof its work shows under ("while L2 bytes reach only
    …"): the roof is known, its bytes count the level's traffic (`bytes_cover_level`), and it is well under the
    unit's busy share (a unit at 39 % beside a roof at 36 % shows no gap)."""
    unit = m.units.get(m.bound_by or "")
    if roof is None or roof not in m.utilization or unit is None:
        return False
    return m.utilization[roof] < CONTRAST_BELOW * unit.share and bytes_cover_level(m, roof)


def limits_measured(m: KernelModel) -> bool:
    """Whether the busiest limit is the busiest of all: the report holds Nsight Compute's SM and memory
    throughputs (the maximum of their sub-units), or a roof at every memory level. A capture of a few
    counters (DRAM reads alone) says nothing of the L2, L1 or pipes it did not measure."""
    return ({T.SM, T.MEM} <= m.units.keys() or all(level in m.utilization for level in R.LEVELS))


LSU_WAVEFRONTS = "l1tex__data_pipe_lsu_wavefronts"  # L1 wavefronts of loads and stores: global and shared


def unit_lever(m: KernelModel, unit: UnitShare) -> str:
    """The next step's key (`knowledge.unit_steps`) of a unit at its peak in this kernel: its own, less the causes
    its counters rule out."""
    if unit.id == "sm__issue_active":
        loads = global_loads(m)
        return "issue_vector" if loads is None or loads > 0 else "issue_no_loads"
    if unit.id == LSU_WAVEFRONTS and held_sum(m, SHARED_ALLOCATION) == 0:
        return "lsu_no_shared"
    if unit.id == "sm__inst_executed_pipe_lsu" and held_sum(m, SHARED_ALLOCATION) == 0:
        return "lsu_pipe_no_shared"  # no shared-memory round trip to cut
    if unit.id == LSU_WAVEFRONTS and fact(m, BANK_CONFLICTS) == 0:
        return "lsu_no_conflicts"
    if unit.id == FP64_PIPE:
        return fp64_lever(m)
    return unit.id


XU_PIPE = "sm__inst_executed_pipe_xu"
BUSY_XU = 0.05  # an XU pipe this busy beside a busy FP64 pipe: divisions or square roots are likely


def fp64_lever(m: KernelModel) -> str:
    """Where the FP64 pipe is the limit: less double-precision work, as the routine called (a library's kernel),
    as fewer divisions (the XU pipe, which starts each FP64 division and square root, busy too), or as no silent
    promotion to double in a kernel of one's own."""
    if library_of(m) is not None:
        return "fp64_library"
    divisions = division_share(m)  # the per-opcode counts, where the report holds them, else the XU pipe's share
    if divisions is not None:
        return "fp64_division" if divisions >= DIVISIONS_NOTABLE else "fp64_own"
    xu = m.units.get(XU_PIPE)
    return "fp64_division" if xu is not None and xu.share >= BUSY_XU else "fp64_own"


# GPUs with FP64 tensor cores faster than their FP64 pipe (GA100, GH100: DMMA at twice the DFMA rate), for a
# report that holds no tensor roofs to tell.
_DMMA_ARCHES = ("8.0", "9.0")


def fp64_figures(m: KernelModel) -> dict[str, float | None]:
    """This GPU's FP32 roof over its FP64 roof (from 1.5×), and its FP64 tensor cores' over the FP64 pipe's (the
    report's peaks, else about 2× on GA100 and GH100)."""
    fp32, fp64 = m.peaks.get("fp32"), m.peaks.get("fp64")
    ratio = fp32.value / fp64.value if fp32 is not None and fp64 is not None and fp64.value > 0 else None
    dmma = m.tensor_peaks.get("src_fp64")
    tensor = None
    if dmma is not None and fp64 is not None and dmma.value > 1.2 * fp64.value:
        tensor = dmma.value / fp64.value
    elif dmma is None and m.raw.compute_capability in _DMMA_ARCHES:
        tensor = 2.0
    return {"fp32_ratio": ratio if ratio is not None and ratio >= 1.5 else None, "dmma_ratio": tensor}
