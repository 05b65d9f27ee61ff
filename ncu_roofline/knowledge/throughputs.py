"""Unit throughputs as Nsight Compute defines them: its Speed-Of-Light figures, as data.

A roof has work (FLOP or bytes) and a peak; a unit throughput has only a busy share: how much of
its sustained peak a hardware unit reached over the kernel's elapsed cycles. Nsight Compute's
SpeedOfLight section (in the `basic` set, `ncu`'s default) stores two headline figures, each the
maximum of a list of sub-unit figures that the report names in a `breakdown:<headline>` entry,
plus per-level throughputs and pipe shares. Every figure here is on the elapsed basis
(`pct_of_peak_sustained_elapsed`), the basis of work ÷ peak ÷ duration; the active basis
(`..._active`) divides by the cycles a unit was active and reads higher on short or sparse
kernels, so it is never used as a share of the kernel's time.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

ELAPSED = ".avg.pct_of_peak_sustained_elapsed"
COMPUTE = "compute"
MEMORY = "memory"


@dataclass(frozen=True)
class Unit:
    """One hardware unit's throughput: where to read it and how to name it."""

    id: str              # the key in `utilization`, a report's `units` and `unit_recipes` (never a roof's name)
    metrics: tuple[str, ...]  # tried in order; percentages
    label: str           # how the verdict names it ("L1/TEX (wavefronts)")
    group: str           # COMPUTE or MEMORY
    parent: str | None = None  # the headline figure this one is part of


SM = "sm_throughput"
MEM = "memory_throughput"

HEADLINES = (
    Unit(SM, ("sm__throughput" + ELAPSED, "sm__sol_pct"), "SM (compute) throughput", COMPUTE),
    Unit(MEM, ("gpu__compute_memory_throughput" + ELAPSED, "gpu__compute_memory_sol_pct"),
         "memory throughput", MEMORY),
    Unit("dram_throughput", ("gpu__dram_throughput" + ELAPSED, "dram__throughput" + ELAPSED, "fbpa__sol_pct"),
         "DRAM throughput", MEMORY, MEM),
    Unit("l2_throughput", ("lts__throughput" + ELAPSED, "ltc__sol_pct"), "L2 throughput", MEMORY, MEM),
    Unit("l1tex_throughput", ("tex__sol_pct",), "L1/TEX throughput", MEMORY, MEM),
)

# Sub-units of the two headline figures (their `breakdown:` lists), by metric base name.
SUB_UNITS = (
    Unit("sm__issue_active", ("sm__issue_active" + ELAPSED,), "issue slots", COMPUTE, SM),
    Unit("sm__inst_executed", ("sm__inst_executed" + ELAPSED,), "instruction issue", COMPUTE, SM),
    Unit("sm__pipe_alu_cycles_active", ("sm__pipe_alu_cycles_active" + ELAPSED,), "ALU pipe", COMPUTE, SM),
    Unit("sm__pipe_fma_cycles_active", ("sm__pipe_fma_cycles_active" + ELAPSED,), "FMA pipe", COMPUTE, SM),
    Unit("sm__pipe_fmaheavy_cycles_active", ("sm__pipe_fmaheavy_cycles_active" + ELAPSED,), "FMA-heavy pipe",
         COMPUTE, SM),
    Unit("sm__pipe_fp64_cycles_active", ("sm__pipe_fp64_cycles_active" + ELAPSED,), "FP64 pipe", COMPUTE, SM),
    Unit("sm__pipe_tensor_cycles_active", ("sm__pipe_tensor_cycles_active" + ELAPSED,), "tensor pipe",
         COMPUTE, SM),
    Unit("sm__pipe_tensor_op_dmma_cycles_active", ("sm__pipe_tensor_op_dmma_cycles_active" + ELAPSED,),
         "tensor pipe (FP64 MMA)", COMPUTE, SM),
    Unit("sm__pipe_tensor_type_hmma_hgmma_qgmma_imma_igmma_bmma_bgmma_cycles_active",
         ("sm__pipe_tensor_type_hmma_hgmma_qgmma_imma_igmma_bmma_bgmma_cycles_active" + ELAPSED,),
         "tensor pipe (MMA)", COMPUTE, SM),
    Unit("sm__pipe_tc_cycles_active", ("sm__pipe_tc_cycles_active" + ELAPSED,), "tensor pipe", COMPUTE, SM),
    Unit("sm__pipe_shared_cycles_active", ("sm__pipe_shared_cycles_active" + ELAPSED,),
         "shared pipe (FP64, FP16 and tensor)", COMPUTE, SM),
    Unit("sm__inst_executed_pipe_fp16", ("sm__inst_executed_pipe_fp16" + ELAPSED,), "FP16 pipe", COMPUTE, SM),
    Unit("sm__inst_executed_pipe_lsu", ("sm__inst_executed_pipe_lsu" + ELAPSED,), "LSU pipe (load/store issue)",
         COMPUTE, SM),
    Unit("sm__inst_executed_pipe_xu", ("sm__inst_executed_pipe_xu" + ELAPSED,),
         "XU pipe (transcendentals, conversions)", COMPUTE, SM),
    Unit("sm__inst_executed_pipe_adu", ("sm__inst_executed_pipe_adu" + ELAPSED,), "ADU pipe (address, branches)",
         COMPUTE, SM),
    Unit("sm__inst_executed_pipe_cbu_pred_on_any", ("sm__inst_executed_pipe_cbu_pred_on_any" + ELAPSED,),
         "CBU pipe (control flow)", COMPUTE, SM),
    Unit("sm__inst_executed_pipe_uniform", ("sm__inst_executed_pipe_uniform" + ELAPSED,), "uniform pipe",
         COMPUTE, SM),
    Unit("sm__inst_executed_pipe_tex", ("sm__inst_executed_pipe_tex" + ELAPSED,), "TEX pipe", COMPUTE, SM),
    Unit("sm__inst_executed_pipe_ipa", ("sm__inst_executed_pipe_ipa" + ELAPSED,), "IPA pipe", COMPUTE, SM),
    Unit("sm__mio_inst_issued", ("sm__mio_inst_issued" + ELAPSED,), "MIO issue (shared memory, special)",
         COMPUTE, SM),
    Unit("sm__mio2rf_writeback_active", ("sm__mio2rf_writeback_active" + ELAPSED,), "MIO write-back",
         COMPUTE, SM),
    Unit("sm__mio_pq_read_cycles_active", ("sm__mio_pq_read_cycles_active" + ELAPSED,), "MIO queue reads",
         COMPUTE, SM),
    Unit("sm__mio_pq_write_cycles_active", ("sm__mio_pq_write_cycles_active" + ELAPSED,), "MIO queue writes",
         COMPUTE, SM),
    Unit("sm__pipe_tma_cycles_active", ("sm__pipe_tma_cycles_active" + ELAPSED,), "TMA unit", COMPUTE, SM),
    Unit("sm__mem_tensor_cycles_active", ("sm__mem_tensor_cycles_active" + ELAPSED,), "tensor memory",
         COMPUTE, SM),
    Unit("idc__request_cycles_active", ("idc__request_cycles_active" + ELAPSED,), "indexed constant cache",
         COMPUTE, SM),
    Unit("l1tex__lsuin_requests", ("l1tex__lsuin_requests" + ELAPSED,), "L1/TEX (LSU requests)", MEMORY, MEM),
    Unit("l1tex__data_pipe_lsu_wavefronts", ("l1tex__data_pipe_lsu_wavefronts" + ELAPSED,),
         "L1/TEX (wavefronts)", MEMORY, MEM),
    Unit("l1tex__data_pipe_tex_wavefronts", ("l1tex__data_pipe_tex_wavefronts" + ELAPSED,),
         "L1/TEX (texture wavefronts)", MEMORY, MEM),
    Unit("l1tex__data_bank_reads", ("l1tex__data_bank_reads" + ELAPSED,), "L1/TEX (data-bank reads)", MEMORY, MEM),
    Unit("l1tex__data_bank_writes", ("l1tex__data_bank_writes" + ELAPSED,), "L1/TEX (data-bank writes)", MEMORY,
         MEM),
    Unit("l1tex__lsu_writeback_active", ("l1tex__lsu_writeback_active" + ELAPSED,), "L1/TEX (LSU write-back)",
         MEMORY, MEM),
    Unit("l1tex__tex_writeback_active", ("l1tex__tex_writeback_active" + ELAPSED,), "L1/TEX (texture write-back)",
         MEMORY, MEM),
    Unit("l1tex__f_wavefronts", ("l1tex__f_wavefronts" + ELAPSED,), "L1/TEX (F-stage wavefronts)", MEMORY, MEM),
    Unit("l1tex__texin_sm2tex_req_cycles_active", ("l1tex__texin_sm2tex_req_cycles_active" + ELAPSED,),
         "L1/TEX (SM-to-TEX requests)", MEMORY, MEM),
    Unit("l1tex__m_l1tex2xbar_req_cycles_active", ("l1tex__m_l1tex2xbar_req_cycles_active" + ELAPSED,),
         "L1-to-L2 requests", MEMORY, MEM),
    Unit("l1tex__m_xbar2l1tex_read_sectors", ("l1tex__m_xbar2l1tex_read_sectors" + ELAPSED,),
         "L2-to-L1 returns", MEMORY, MEM),
    Unit("l1tex__m_xbar2l1tex_read_sectors_mem_dshared", ("l1tex__m_xbar2l1tex_read_sectors_mem_dshared" + ELAPSED,),
         "L2-to-shared returns (TMA, cp.async)", MEMORY, MEM),
    Unit("l1tex__tmain_requests", ("l1tex__tmain_requests" + ELAPSED,), "L1/TEX (TMA requests)", MEMORY, MEM),
    Unit("lts__t_sectors", ("lts__t_sectors" + ELAPSED,), "L2 (tag sectors)", MEMORY, MEM),
    Unit("lts__t_tag_requests", ("lts__t_tag_requests" + ELAPSED,), "L2 (tag requests)", MEMORY, MEM),
    Unit("lts__d_sectors", ("lts__d_sectors" + ELAPSED,), "L2 (data sectors)", MEMORY, MEM),
    Unit("lts__d_sectors_fill_device", ("lts__d_sectors_fill_device" + ELAPSED,), "L2 (fills from DRAM)",
         MEMORY, MEM),
    Unit("lts__d_sectors_fill_sysmem", ("lts__d_sectors_fill_sysmem" + ELAPSED,), "L2 (fills from system memory)",
         MEMORY, MEM),
    Unit("lts__d_atomic_input_cycles_active", ("lts__d_atomic_input_cycles_active" + ELAPSED,), "L2 (atomics)",
         MEMORY, MEM),
    Unit("lts__lts2xbar_cycles_active", ("lts__lts2xbar_cycles_active" + ELAPSED,), "L2-to-crossbar returns",
         MEMORY, MEM),
    Unit("lts__xbar2lts_cycles_active", ("lts__xbar2lts_cycles_active" + ELAPSED,), "crossbar-to-L2 requests",
         MEMORY, MEM),
    Unit("dram__cycles_active", ("dram__cycles_active" + ELAPSED,), "DRAM (busy cycles)", MEMORY, MEM),
    Unit("fbpa__dram_sectors", ("fbpa__dram_sectors" + ELAPSED,), "DRAM (sectors)", MEMORY, MEM),
    # Reads and writes apart, as a share of the DRAM peak: each a lower bound of DRAM's busy share,
    # and the one DRAM figure of a capture that collected only these (last: the others win ties).
    Unit("dram__bytes_read", ("dram__bytes_read.sum.pct_of_peak_sustained_elapsed",), "DRAM (reads)", MEMORY,
         MEM),
    Unit("dram__bytes_write", ("dram__bytes_write.sum.pct_of_peak_sustained_elapsed",), "DRAM (writes)", MEMORY,
         MEM),
)
UNITS = HEADLINES + SUB_UNITS


def related_roof(unit_id: str) -> str | None:
    """The roof of the FLOP/byte chart that a unit's work shows up under, if any."""
    for prefix, roof in (("l1tex", "l1"), ("sm__inst_executed_pipe_lsu", "l1"), ("lts", "l2"), ("l2_", "l2"),
                         ("dram", "dram"), ("fbpa", "dram"),
                         ("sm__pipe_fp64", "fp64"), ("sm__pipe_tensor", "tensor"), ("sm__pipe_tc", "tensor"),
                         ("sm__pipe_fma", "fp32"), ("sm__inst_executed_pipe_fp16", "fp16")):
        if unit_id.startswith(prefix):
            return roof
    return None
BY_ID = {u.id: u for u in UNITS}
BREAKDOWNS = {SM: "breakdown:sm__throughput" + ELAPSED, MEM: "breakdown:gpu__compute_memory_throughput" + ELAPSED}
# Sub-metrics that are bookkeeping of the headline itself, not a unit.
NOT_UNITS = ("_internal_activity",)

# The launch: how much work the GPU was given. A grid of less than one wave leaves SMs idle.
LAUNCH = {
    "grid_blocks": ("launch__grid_size",),
    "block_threads": ("launch__block_size",),
    "waves_per_sm": ("launch__waves_per_multiprocessor",),
    "achieved_occupancy": ("sm__warps_active.avg.pct_of_peak_sustained_active",
                           "sm__active_warps_avg_per_active_cycle_pct"),
    "theoretical_occupancy": ("sm__maximum_warps_per_active_cycle_pct",),
    "registers_per_thread": ("launch__registers_per_thread",),
    # The kernel's own allocation (`model.throughputs.launch_facts`: static + dynamic where held); these
    # totals include the driver's per-block reserve (1 KB from compute capability 8.0), taken off where known.
    "shared_memory_per_block": ("launch__shared_mem_per_block",
                                "launch__shared_mem_per_block_allocated"),
    "shared_memory_driver_per_block": ("launch__shared_mem_per_block_driver",),
    "sm_count": ("device__attribute_multiprocessor_count",),
    # Blocks per SM each resource allows (the fewest binds the theoretical occupancy: `passes.latency`)
    "occupancy_limit_registers": ("launch__occupancy_limit_registers",),
    "occupancy_limit_shared_mem": ("launch__occupancy_limit_shared_mem",),
    "occupancy_limit_blocks": ("launch__occupancy_limit_blocks",),
    "occupancy_limit_warps": ("launch__occupancy_limit_warps",),
}
PERCENT_FACTS = ("achieved_occupancy", "theoretical_occupancy")
# SM cycles with at least one warp resident, averaged over SMs: over the SM's elapsed cycles, the share of the
# run the SMs had work at all (achieved occupancy counts these active cycles only).
SM_ACTIVE_CYCLES = "sm__cycles_active.avg"
# The SMs' elapsed cycles where the report lacks sm__cycles_elapsed.avg: the GPCs' clock, the SMs' own (what
# Nsight Compute's Speed Of Light section calls Elapsed Cycles).
GPC_ELAPSED_CYCLES = "gpc__cycles_elapsed.max"
SHARED_MEMORY_OWN = ("launch__shared_mem_per_block_static", "launch__shared_mem_per_block_dynamic")

# Regimes: the rule of each is stated in the page's help block and the JSON settings.
class Regime(str, Enum):
    """What holds a kernel back: a limit at or past the threshold, latency below every limit, or too little work
    to load the GPU. Compares and serialises as its value."""

    AT_LIMIT = "at_limit"
    LATENCY = "latency"
    TOO_LITTLE_WORK = "too_little_work"

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


AT_LIMIT = Regime.AT_LIMIT
LATENCY = Regime.LATENCY
TOO_LITTLE_WORK = Regime.TOO_LITTLE_WORK
TOO_LITTLE_WORK_SHARE = 0.05  # every limit under 5 % of its peak
MIN_WAVES = 1.0               # fewer blocks than one wave of the GPU
TAIL_MIN_SPEEDUP = 1.1        # a partial last wave worth less than this (its bound) is not a finding
REGIME_RULES = {
    AT_LIMIT: "the busiest limit (roof or unit) is at or above the threshold",
    LATENCY: "every measured limit is below the threshold, and the kernel had enough work to fill the GPU: "
             "latency (occupancy, stalls, dependencies) holds it back",
    TOO_LITTLE_WORK: f"every measured limit is below {TOO_LITTLE_WORK_SHARE:.0%} of its peak, or the grid is "
                     f"smaller than {MIN_WAVES:g} wave (fewer blocks than the GPU runs at once), and no limit "
                     "reaches the threshold: the kernel is too small or too serial for this GPU",
}

# Duration where `gpu__time_duration` is absent: elapsed cycles of a clock domain ÷ its frequency.
CYCLE_DURATIONS = (
    ("gpc__cycles_elapsed.max", "gpc__cycles_elapsed.avg.per_second"),
    ("sm__cycles_elapsed.max", "sm__cycles_elapsed.avg.per_second"),
    ("sm__cycles_elapsed.avg", "sm__cycles_elapsed.avg.per_second"),
    ("gpc__elapsed_cycles_max", "gpc__frequency"),
)
