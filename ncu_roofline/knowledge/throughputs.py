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
    explains: str = ""   # what a unit at its peak means, for the verdict


SM = "sm_throughput"
MEM = "memory_throughput"

HEADLINES = (
    Unit(SM, ("sm__throughput" + ELAPSED, "sm__sol_pct"), "SM (compute) throughput", COMPUTE,
         explains=("the busiest of the SM's pipes and issue slots is at its peak (the unit throughputs of the "
                   "ComputeWorkloadAnalysis section say which): fewer instructions per result is the lever")),
    Unit(MEM, ("gpu__compute_memory_throughput" + ELAPSED, "gpu__compute_memory_sol_pct"),
         "memory throughput", MEMORY, explains=("the busiest of L1/TEX, L2 and DRAM is at its peak (the unit "
                                                "throughputs of the MemoryWorkloadAnalysis section say which): fewer "
                                                "bytes and fewer, coalesced requests is the lever")),
    Unit("dram_throughput", ("gpu__dram_throughput" + ELAPSED, "dram__throughput" + ELAPSED, "fbpa__sol_pct"),
         "DRAM throughput", MEMORY, MEM, "DRAM is busy: fewer bytes (fusion, reuse, lower precision) is the lever"),
    Unit("l2_throughput", ("lts__throughput" + ELAPSED, "ltc__sol_pct"), "L2 throughput", MEMORY, MEM,
         "the L2 slices are busy: more reuse in L1 and shared memory is the lever"),
    Unit("l1tex_throughput", ("tex__sol_pct",), "L1/TEX throughput", MEMORY, MEM,
         "the L1/TEX unit is busy: fewer wavefronts per request (coalesced global and conflict-free shared "
         "accesses) or fewer memory instructions is the lever"),
)

_TENSOR = ("the tensor cores are busy: a faster datapath (a lower precision such as TF32, BF16/FP16 or FP8 where the "
           "accuracy allows, 2:4 sparsity) or less matrix work (no padded or repeated products) is the lever")
_MIO = ("the memory-input/output queue (shared memory, special registers, barriers) is full: fewer, wider (8- or "
        "16-byte) shared-memory accesses, fewer special-register reads and barriers is the lever")
_FEWER_L2 = ("fewer L1 misses (reuse within a block, shared-memory tiles, accesses that use whole 32-byte sectors) "
             "is the lever")
_WAVES = ("many wavefronts per request: uncoalesced or bank-conflicted accesses, or wide scattered loads; "
          "coalesce global accesses and pad or swizzle shared-memory tiles")
# Sub-units of the two headline figures (their `breakdown:` lists), by metric base name.
SUB_UNITS = (
    Unit("sm__issue_active", ("sm__issue_active" + ELAPSED,), "issue slots", COMPUTE, SM,
         "the schedulers issue an instruction in most cycles: fewer instructions (vector loads, "
         "fewer address and integer instructions, more work per instruction) is the lever"),
    Unit("sm__inst_executed", ("sm__inst_executed" + ELAPSED,), "instruction issue", COMPUTE, SM,
         "the SM executes instructions near its peak rate: fewer instructions is the lever"),
    Unit("sm__pipe_alu_cycles_active", ("sm__pipe_alu_cycles_active" + ELAPSED,), "ALU pipe", COMPUTE, SM,
         "integer, logic and comparison work keeps the ALU pipe busy (hashing, RNG, index arithmetic): "
         "fewer integer instructions per result is the lever"),
    Unit("sm__pipe_fma_cycles_active", ("sm__pipe_fma_cycles_active" + ELAPSED,), "FMA pipe", COMPUTE, SM,
         "FP32 multiply-add and integer multiply work keeps the FMA pipe busy: fewer such instructions per result "
         "(invariant arithmetic hoisted out of loops, index multiplies strength-reduced to adds, packed half2 or "
         "tensor-core arithmetic where the precision allows) is the lever"),
    Unit("sm__pipe_fmaheavy_cycles_active", ("sm__pipe_fmaheavy_cycles_active" + ELAPSED,), "FMA-heavy pipe",
         COMPUTE, SM, "FP32 and integer multiply-add work keeps the FMA-heavy pipe busy: fewer such instructions per "
         "result (invariant arithmetic hoisted out of loops, index multiplies strength-reduced to adds) is the lever"),
    Unit("sm__pipe_fp64_cycles_active", ("sm__pipe_fp64_cycles_active" + ELAPSED,), "FP64 pipe", COMPUTE, SM,
         "double-precision work keeps the FP64 pipe busy: less of it (FP32 or mixed precision where the accuracy "
         "allows) is the lever"),
    Unit("sm__pipe_tensor_cycles_active", ("sm__pipe_tensor_cycles_active" + ELAPSED,), "tensor pipe",
         COMPUTE, SM, _TENSOR),
    Unit("sm__pipe_tensor_op_dmma_cycles_active", ("sm__pipe_tensor_op_dmma_cycles_active" + ELAPSED,),
         "tensor pipe (FP64 MMA)", COMPUTE, SM, "the FP64 tensor cores are at their peak: less FP64 matrix "
         "work, or a lower precision where the accuracy allows (FP32 or TF32 products with FP64 refinement)"),
    Unit("sm__pipe_tensor_type_hmma_hgmma_qgmma_imma_igmma_bmma_bgmma_cycles_active",
         ("sm__pipe_tensor_type_hmma_hgmma_qgmma_imma_igmma_bmma_bgmma_cycles_active" + ELAPSED,),
         "tensor pipe (MMA)", COMPUTE, SM, _TENSOR),
    Unit("sm__pipe_tc_cycles_active", ("sm__pipe_tc_cycles_active" + ELAPSED,), "tensor pipe", COMPUTE, SM,
         _TENSOR),
    Unit("sm__pipe_shared_cycles_active", ("sm__pipe_shared_cycles_active" + ELAPSED,),
         "shared pipe (FP64, FP16 and tensor)", COMPUTE, SM, "FP64, FP16 and tensor instructions share this pipe "
         "(on V100, A100 and H100 its share equals the FP64 pipe's in FP64 kernels): the busiest of the FP64, FP16 "
         "and tensor pipes' own shares says which work to cut or move"),
    Unit("sm__inst_executed_pipe_fp16", ("sm__inst_executed_pipe_fp16" + ELAPSED,), "FP16 pipe", COMPUTE, SM,
         "half-precision work keeps the FP16 pipe busy: packed half2 instructions (HFMA2: two results each) and "
         "matrix-shaped work on the tensor cores is the lever"),
    Unit("sm__inst_executed_pipe_lsu", ("sm__inst_executed_pipe_lsu" + ELAPSED,), "LSU pipe (load/store issue)",
         COMPUTE, SM, "load/store instructions saturate the LSU pipe: wider (vector) loads, fewer "
         "shared-memory round trips or register reuse is the lever"),
    Unit("sm__inst_executed_pipe_xu", ("sm__inst_executed_pipe_xu" + ELAPSED,),
         "XU pipe (transcendentals, conversions)", COMPUTE, SM,
         "special functions and conversions saturate the XU pipe: fast-math intrinsics, fewer conversions"),
    Unit("sm__inst_executed_pipe_adu", ("sm__inst_executed_pipe_adu" + ELAPSED,), "ADU pipe (address, branches)",
         COMPUTE, SM, "address and branch instructions saturate the ADU pipe: fewer branches (predication, "
         "warp-uniform conditions) and fewer divergent address computations is the lever"),
    Unit("sm__inst_executed_pipe_cbu_pred_on_any", ("sm__inst_executed_pipe_cbu_pred_on_any" + ELAPSED,),
         "CBU pipe (control flow)", COMPUTE, SM, "control flow saturates the CBU pipe: fewer branches, "
         "divergent branches and barriers (unrolled loops, predication, warp-uniform conditions) is the lever"),
    Unit("sm__inst_executed_pipe_uniform", ("sm__inst_executed_pipe_uniform" + ELAPSED,), "uniform pipe",
         COMPUTE, SM, "warp-uniform work saturates the uniform pipe: fewer warp-invariant instructions (loop and "
         "address arithmetic folded or hoisted) is the lever"),
    Unit("sm__inst_executed_pipe_tex", ("sm__inst_executed_pipe_tex" + ELAPSED,), "TEX pipe", COMPUTE, SM,
         "texture instructions saturate the TEX pipe: fewer texture fetches (texels reused from registers, plain "
         "global loads where no filtering or addressing mode is needed) is the lever"),
    Unit("sm__inst_executed_pipe_ipa", ("sm__inst_executed_pipe_ipa" + ELAPSED,), "IPA pipe", COMPUTE, SM,
         "attribute interpolation saturates the IPA pipe: fewer interpolated attributes is the lever"),
    Unit("sm__mio_inst_issued", ("sm__mio_inst_issued" + ELAPSED,), "MIO issue (shared memory, special)",
         COMPUTE, SM, _MIO),
    Unit("sm__mio2rf_writeback_active", ("sm__mio2rf_writeback_active" + ELAPSED,), "MIO write-back",
         COMPUTE, SM, "results coming back from the MIO queue saturate the register write-back: fewer, wider "
         "shared-memory loads (8- or 16-byte) and values reused from registers is the lever"),
    Unit("sm__mio_pq_read_cycles_active", ("sm__mio_pq_read_cycles_active" + ELAPSED,), "MIO queue reads",
         COMPUTE, SM, _MIO),
    Unit("sm__mio_pq_write_cycles_active", ("sm__mio_pq_write_cycles_active" + ELAPSED,), "MIO queue writes",
         COMPUTE, SM, _MIO),
    Unit("sm__pipe_tma_cycles_active", ("sm__pipe_tma_cycles_active" + ELAPSED,), "TMA unit", COMPUTE, SM,
         "the tensor memory accelerator is busy: fewer, larger TMA copies (bigger boxes; multicast to the blocks of "
         "a cluster that need the same tile) is the lever"),
    Unit("sm__mem_tensor_cycles_active", ("sm__mem_tensor_cycles_active" + ELAPSED,), "tensor memory",
         COMPUTE, SM, "tensor memory is busy: fewer tensor-memory loads and stores (accumulators kept there across "
         "MMAs, read out once) is the lever"),
    Unit("idc__request_cycles_active", ("idc__request_cycles_active" + ELAPSED,), "indexed constant cache",
         COMPUTE, SM, "indexed constant-memory loads (divergent constant indices) saturate the IDC: warp-uniform "
         "constant indices, or divergently indexed tables moved to global (read-only) or shared memory, is the "
         "lever"),
    Unit("l1tex__lsuin_requests", ("l1tex__lsuin_requests" + ELAPSED,), "L1/TEX (LSU requests)", MEMORY, MEM,
         "load/store requests arrive at L1 at its peak request rate: fewer, wider requests is the lever"),
    Unit("l1tex__data_pipe_lsu_wavefronts", ("l1tex__data_pipe_lsu_wavefronts" + ELAPSED,),
         "L1/TEX (wavefronts)", MEMORY, MEM, _WAVES),
    Unit("l1tex__data_pipe_tex_wavefronts", ("l1tex__data_pipe_tex_wavefronts" + ELAPSED,),
         "L1/TEX (texture wavefronts)", MEMORY, MEM, "texture accesses saturate the L1/TEX data pipe: "
         "neighbouring threads fetching neighbouring texels, and fewer fetches, is the lever"),
    Unit("l1tex__data_bank_reads", ("l1tex__data_bank_reads" + ELAPSED,), "L1/TEX (data-bank reads)", MEMORY, MEM,
         "L1/shared data-bank reads are at their peak: each value read once into registers and reused there "
         "(register tiling), and no bank conflicts, is the lever"),
    Unit("l1tex__data_bank_writes", ("l1tex__data_bank_writes" + ELAPSED,), "L1/TEX (data-bank writes)", MEMORY,
         MEM, "L1/shared data-bank writes are at their peak: fewer shared-memory stores (a tile stored once, no "
         "bank conflicts) is the lever"),
    Unit("l1tex__lsu_writeback_active", ("l1tex__lsu_writeback_active" + ELAPSED,), "L1/TEX (LSU write-back)",
         MEMORY, MEM, "data returned from L1 to the registers is at its peak: fewer bytes loaded per result (no "
         "repeated loads of one value, values reused from registers) is the lever"),
    Unit("l1tex__tex_writeback_active", ("l1tex__tex_writeback_active" + ELAPSED,), "L1/TEX (texture write-back)",
         MEMORY, MEM, "texture data returned to the registers is at its peak: fewer texture fetches per result is "
         "the lever"),
    Unit("l1tex__f_wavefronts", ("l1tex__f_wavefronts" + ELAPSED,), "L1/TEX (F-stage wavefronts)", MEMORY, MEM,
         "the L1/TEX filter stage is at its peak: fewer filtered texture fetches (point sampling, fewer texels "
         "per result) is the lever"),
    Unit("l1tex__texin_sm2tex_req_cycles_active", ("l1tex__texin_sm2tex_req_cycles_active" + ELAPSED,),
         "L1/TEX (SM-to-TEX requests)", MEMORY, MEM, "requests from the SM to L1/TEX are at their peak: fewer "
         "texture and surface requests is the lever"),
    Unit("l1tex__m_l1tex2xbar_req_cycles_active", ("l1tex__m_l1tex2xbar_req_cycles_active" + ELAPSED,),
         "L1-to-L2 requests", MEMORY, MEM, "L1 misses going to L2 are at the crossbar's peak: " + _FEWER_L2),
    Unit("l1tex__m_xbar2l1tex_read_sectors", ("l1tex__m_xbar2l1tex_read_sectors" + ELAPSED,),
         "L2-to-L1 returns", MEMORY, MEM, "data returning from L2 to L1 is at the crossbar's peak: " + _FEWER_L2),
    Unit("l1tex__m_xbar2l1tex_read_sectors_mem_dshared", ("l1tex__m_xbar2l1tex_read_sectors_mem_dshared" + ELAPSED,),
         "L2-to-shared returns (TMA, cp.async)", MEMORY, MEM, "asynchronous copies into shared memory are at "
         "the crossbar's peak: each tile copied once per block (TMA multicast shares one fetch among a cluster's "
         "blocks) is the lever"),
    Unit("l1tex__tmain_requests", ("l1tex__tmain_requests" + ELAPSED,), "L1/TEX (TMA requests)", MEMORY, MEM,
         "TMA requests are at their peak: fewer, larger TMA copies is the lever"),
    Unit("lts__t_sectors", ("lts__t_sectors" + ELAPSED,), "L2 (tag sectors)", MEMORY, MEM,
         "L2 sector lookups are at their peak: more reuse in L1 and shared memory is the lever"),
    Unit("lts__t_tag_requests", ("lts__t_tag_requests" + ELAPSED,), "L2 (tag requests)", MEMORY, MEM,
         "L2 tag requests are at their peak: fewer requests to L2 (coalesced accesses using whole sectors, more "
         "hits in L1, atomics aggregated first) is the lever"),
    Unit("lts__d_sectors", ("lts__d_sectors" + ELAPSED,), "L2 (data sectors)", MEMORY, MEM,
         "the L2 data banks are at their peak: fewer bytes through L2 (reuse in L1 and shared memory) is the "
         "lever"),
    Unit("lts__d_sectors_fill_device", ("lts__d_sectors_fill_device" + ELAPSED,), "L2 (fills from DRAM)",
         MEMORY, MEM, "L2 fills from DRAM are at their peak: fewer DRAM bytes (fusion, reuse, lower precision) is "
         "the lever"),
    Unit("lts__d_sectors_fill_sysmem", ("lts__d_sectors_fill_sysmem" + ELAPSED,), "L2 (fills from system memory)",
         MEMORY, MEM, "L2 fills from system memory are at their peak: the data in device memory before the kernel "
         "runs (no host-mapped or pageable unified memory read in the kernel) is the lever"),
    Unit("lts__d_atomic_input_cycles_active", ("lts__d_atomic_input_cycles_active" + ELAPSED,), "L2 (atomics)",
         MEMORY, MEM, "atomics at L2 are at their peak: aggregate in shared memory or registers first"),
    Unit("lts__lts2xbar_cycles_active", ("lts__lts2xbar_cycles_active" + ELAPSED,), "L2-to-crossbar returns",
         MEMORY, MEM, "data leaving L2 is at the crossbar's peak: " + _FEWER_L2),
    Unit("lts__xbar2lts_cycles_active", ("lts__xbar2lts_cycles_active" + ELAPSED,), "crossbar-to-L2 requests",
         MEMORY, MEM, "requests arriving at L2 are at the crossbar's peak: fewer L2 requests and stores "
         "(coalesced accesses using whole sectors, each block storing its results once) is the lever"),
    Unit("dram__cycles_active", ("dram__cycles_active" + ELAPSED,), "DRAM (busy cycles)", MEMORY, MEM,
         "DRAM is busy: fewer bytes (fusion, reuse, lower precision) is the lever"),
    Unit("fbpa__dram_sectors", ("fbpa__dram_sectors" + ELAPSED,), "DRAM (sectors)", MEMORY, MEM,
         "DRAM is busy: fewer bytes (fusion, reuse, lower precision) is the lever"),
    # Reads and writes apart, as a share of the DRAM peak: each a lower bound of DRAM's busy share,
    # and the one DRAM figure of a capture that collected only these (last: the others win ties).
    Unit("dram__bytes_read", ("dram__bytes_read.sum.pct_of_peak_sustained_elapsed",), "DRAM (reads)", MEMORY,
         MEM, "DRAM reads keep DRAM busy: fewer bytes read (fusion, reuse, lower precision) is the lever"),
    Unit("dram__bytes_write", ("dram__bytes_write.sum.pct_of_peak_sustained_elapsed",), "DRAM (writes)", MEMORY,
         MEM, "DRAM writes keep DRAM busy: fewer bytes written (fusion, lower precision) is the lever"),
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
