"""The metric knowledge of the tool, as data: for each quantity, the recipes to try in order.

A recipe is a weighted sum of metrics. Each metric is resolved by `quantities.Resolver`, which
knows the generic ways Nsight Compute stores a count (raw `.sum`; `.sum.per_cycle_elapsed` x
cycles of its unit; `.sum.per_second` x duration), so the table below only names the counts.
Facts are from Nsight Compute's metric reference and its roofline sections (see the project's
ROOFLINE notes); each recipe says where its convention comes from.
"""

from __future__ import annotations

from dataclasses import dataclass

LEVELS = ("dram", "l2", "l1")
PRECISIONS = ("fp64", "fp32", "fp16")
ROOFS = ("dram", "l2", "l1", "fp64", "fp32", "fp16", "tensor")
# How tables and legends name each roof (`views.labels.short_label`, the `bound_by_label` of the frames).
ROOF_LABELS = {"dram": "DRAM", "l2": "L2", "l1": "L1", "fp64": "FP64", "fp32": "FP32", "fp16": "FP16",
               "tensor": "Tensor"}

# Definitions of bytes at a level: Nsight Compute's roofline-chart metrics, or the
# `lts__t_bytes` / `l1tex__t_bytes` family (all tag traffic, as NERSC's scripts use).
CHART = "chart"
TAGS = "tags"
GLOBAL_ONLY = "global"  # a subset (global loads and stores only): neither definition, named as such


@dataclass(frozen=True)
class Term:
    """`weight` x the count named `metric` (resolved by raw value or rate x time)."""

    metric: str
    weight: float = 1.0


@dataclass(frozen=True)
class Recipe:
    """One way to compute a quantity: a weighted sum of counts."""

    terms: tuple[Term, ...]
    note: str = ""
    definition: str = ""
    estimate: bool = False
    raw_only: bool = False
    default_unit: str = ""  # unit to assume when the report leaves it empty (Pascal-era files)


@dataclass(frozen=True)
class PeakRecipe:
    """A roof: per-cycle peak metrics (weighted) x the measured clock of `clock_unit`."""

    terms: tuple[Term, ...]
    clock_unit: str
    note: str = ""
    definition: str = ""
    # When set, the peak is the achieved rate of the (single) term divided by this
    # `pct_of_peak_sustained_elapsed` metric: the report's own ratio, no clock needed.
    ratio_pct: str = ""


def _terms(*pairs: tuple[str, float] | str) -> tuple[Term, ...]:
    return tuple(Term(p) if isinstance(p, str) else Term(p[0], p[1]) for p in pairs)


def _op(name: str) -> str:
    return f"smsp__sass_thread_inst_executed_op_{name}_pred_on.sum"


DURATION = (
    Recipe(_terms("gpu__time_duration.sum"), default_unit="ns"),
    Recipe(_terms("gpu__time_duration"), note="Pascal-era name", default_unit="ns"),
)

# FLOP on CUDA cores. FP16 follows Nsight Compute's charts: the counters count packed half2
# instructions, so an HFMA2 is 4 FLOP and an HADD2/HMUL2 2 FLOP (LIKWID and NERSC use half that).
FLOP: dict[str, tuple[Recipe, ...]] = {
    "fp64": (Recipe(_terms(_op("dadd"), _op("dmul"), (_op("dfma"), 2.0)),
                    note="dadd + dmul + 2 x dfma"),),
    "fp32": (Recipe(_terms(_op("fadd"), _op("fmul"), (_op("ffma"), 2.0)),
                    note="fadd + fmul + 2 x ffma"),),
    "fp16": (Recipe(_terms((_op("hadd"), 2.0), (_op("hmul"), 2.0), (_op("hfma"), 4.0)),
                    note="2 x hadd + 2 x hmul + 4 x hfma (Nsight Compute: half2 packed)"),
             Recipe(_terms((_op("hfma"), 4.0)),
                    note="4 x hfma only, as Nsight Compute's Half roofline chart (the report holds "
                         "no hadd/hmul counts)")),
}
# The FP16 datapath's own issue share (Volta, Turing, GA100: the FP16 pipe; GA10x and later: FP16 instructions
# on the FMA pipe). On Ampere and later the compiler moves registers and loads constants with
# `HFMA2.MMA Rx, -RZ, RZ, imm`, which the tensor pipe runs and the hfma counter counts: where this share is 0
# while HFMA2s were counted (and no HADD2/HMUL2), they are those moves, not FP16 arithmetic.
FP16_DATAPATH_SHARES = tuple(f"sm__inst_executed_pipe_{pipe}.{rollup}.pct_of_peak_sustained_{basis}"
                             for pipe in ("fp16", "fma_type_fp16") for rollup in ("avg", "sum")
                             for basis in ("active", "elapsed"))
FP16_MOVES_NOTE = ("HFMA2 instructions were counted, none of them on the FP16 datapath: the compiler's HFMA2.MMA "
                   "register moves and constant loads (the tensor pipe runs them), not FP16 arithmetic")
HALF_OPS = tuple(_op(o) for o in ("hadd", "hmul"))
FLOP_CONVENTION = {
    "fp64": "dadd + dmul + 2*dfma thread instructions (predicated on)",
    "fp32": "fadd + fmul + 2*ffma thread instructions (predicated on)",
    "fp16": "2*hadd + 2*hmul + 4*hfma thread instructions (Nsight Compute's half2 convention; "
            "LIKWID/NERSC count half of this)",
    "tensor": "sm__ops_path_tensor_* operations where recorded; 512 ops per tensor-pipe warp "
              "instruction as a labelled estimate otherwise",
}

# Tensor work: exact per-datapath counts (sm__ops_path_tensor_<path>) are discovered by name in
# quantities.py; this is the estimate used when only instruction counts exist.
TENSOR_OPS_PER_INST_ESTIMATE = 512.0
TENSOR_ESTIMATE = (
    Recipe(_terms(("smsp__inst_executed_pipe_tensor.sum", TENSOR_OPS_PER_INST_ESTIMATE)),
           note="tensor-pipe warp instructions x 512 ops (Nsight Compute 2023 convention; "
                "the true count differs per MMA shape)", estimate=True),
    Recipe(_terms(("sm__inst_executed_pipe_tensor.sum", TENSOR_OPS_PER_INST_ESTIMATE)),
           note="tensor-pipe warp instructions x 512 ops (estimate)", estimate=True),
)
TENSOR_PATH_PREFIX = "sm__ops_path_tensor_"
# Elapsed basis only, like every other utilisation here (work ÷ peak ÷ duration): the active basis
# divides by the cycles the SM was busy and reads 1.2-40x higher on short or sparse kernels.
TENSOR_PIPE_UTILISATION = (
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
    "sm__pipe_tensor_cycles_active.sum.pct_of_peak_sustained_elapsed",
)

# MMA instructions the tensor pipe executed, as shares of its peak: integer, FP64 and (Hopper) warpgroup MMA.
# Any of them above zero is tensor work. (Not HMMA's share: `HFMA2.MMA` register moves count there.)
MMA_INSTRUCTION_SHARES = tuple(f"sm__inst_executed_pipe_tensor_op_{op}.{rollup}.pct_of_peak_sustained_active"
                               for op in ("imma", "dmma", "gmma") for rollup in ("avg", "sum"))

BYTES: dict[str, tuple[Recipe, ...]] = {
    "dram": (
        Recipe(_terms("dram__bytes.sum"), raw_only=True),
        Recipe(_terms("dram__bytes_read.sum", "dram__bytes_write.sum")),
        Recipe(_terms("dram__bytes.sum")),
        Recipe(_terms("dram__bytes_op_read.sum", "dram__bytes_op_write.sum"),
               note="compute capability 12.0 names"),
        Recipe(_terms(("dram__sectors_read.sum", 32.0), ("dram__sectors_write.sum", 32.0)),
               note="32-byte sectors"),
        Recipe(_terms("dram__read_bytes", "dram__write_bytes"), note="Pascal-era names",
               default_unit="byte"),
    ),
    "l2": (
        Recipe(_terms("derived__lts__lts2xbar_bytes.sum"), definition=CHART,
               note="L2 -> crossbar return traffic, as Nsight Compute's roofline charts (2024+)"),
        Recipe(_terms(("lts__lts2xbar_cycles_active.sum", 32.0)), definition=CHART,
               note="lts2xbar active cycles x 32 B (Nsight Compute chart definition)"),
        Recipe(_terms("l1tex__m_xbar2l1tex_read_bytes.sum"), definition=CHART,
               note="L2 -> L1 read bytes, as Nsight Compute 2023 roofline charts"),
        # The SMs' own traffic first: on GPUs whose L2 has two partitions (A100, H100) `lts__t_sectors` also
        # counts, through the L2 fabric, a line that crosses between them a second time (silu on an A100:
        # 33.2 M sectors, 16.8 M from the SMs, 16.4 M from the fabric, for 16.4 M sectors of DRAM traffic).
        Recipe(_terms(("lts__t_sectors_srcunit_tex.sum", 32.0)), definition=TAGS,
               note="L2 tag traffic from the SMs (L1/TEX), 32-byte sectors; the L2 fabric's second count of "
                    "lines crossing between L2 partitions left out"),
        Recipe(_terms("lts__t_bytes.sum"), definition=TAGS, note="all L2 tag traffic"),
        Recipe(_terms(("lts__t_sectors.sum", 32.0)), definition=TAGS,
               note="all L2 tag traffic, 32-byte sectors"),
        Recipe(_terms(("memory_l2_transactions_global", 32.0), ("memory_l2_transactions_local", 32.0)),
               definition=TAGS, note="Pascal-era L2 transactions x 32 B", default_unit="byte"),
    ),
    "l1": (
        Recipe(_terms("derived__l1tex__lsu_writeback_bytes_mem_lgds.sum"), definition=CHART,
               note="LSU write-back for global, local, shared (Nsight Compute charts, cc 9.0+)"),
        Recipe(_terms("derived__l1tex__lsu_writeback_bytes_mem_lg.sum"), definition=CHART,
               note="LSU write-back for global and local (Nsight Compute charts, cc 7.5-8.9)"),
        # The same quantity from the raw cycle counter: Nsight Compute defines the derived metric as
        # write-back active cycles x 128 bytes (checked equal on Hopper reports that hold both).
        Recipe(_terms(("l1tex__lsu_writeback_active_mem_lgds.sum", 128.0)), definition=CHART, raw_only=True,
               note="LSU write-back active cycles x 128 B for global, local, shared (chart definition)"),
        Recipe(_terms(("l1tex__lsu_writeback_active_mem_lg.sum", 128.0)), definition=CHART, raw_only=True,
               note="LSU write-back active cycles x 128 B for global and local (chart definition)"),
        Recipe(_terms("l1tex__t_bytes.sum"), definition=TAGS, note="all L1 tag traffic"),
        Recipe(_terms(("l1tex__t_sectors.sum", 32.0)), definition=TAGS,
               note="all L1 tag traffic, 32-byte sectors"),
        Recipe(_terms("l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum",
                      "l1tex__t_bytes_pipe_lsu_mem_global_op_st.sum"), definition=GLOBAL_ONLY,
               note="global loads and stores only (no shared, local or atomics): a subset of L1 traffic"),
    ),
}

PEAKS: dict[str, tuple[PeakRecipe, ...]] = {
    "fp64": (
        PeakRecipe(_terms(("sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained", 2.0)), "sm"),
        PeakRecipe(_terms("derived__sm__sass_thread_inst_executed_op_dfma_pred_on_x2"), "sm"),
    ),
    "fp32": (
        PeakRecipe(_terms(("sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained", 2.0)), "sm"),
        PeakRecipe(_terms("derived__sm__sass_thread_inst_executed_op_ffma_pred_on_x2"), "sm"),
    ),
    "fp16": (
        PeakRecipe(_terms(("sm__sass_thread_inst_executed_op_hfma_pred_on.sum.peak_sustained", 4.0)), "sm"),
        PeakRecipe(_terms("derived__sm__sass_thread_inst_executed_op_hfma_pred_on_x4"), "sm"),
    ),
    "dram": (
        PeakRecipe(_terms("dram__bytes.sum.peak_sustained"), "dram"),
        PeakRecipe(_terms("dram__bytes_read.sum.peak_sustained"), "dram",
                   note="read peak (DRAM read and write share one peak)"),
        PeakRecipe(_terms("dram__bytes_read.sum"), "",
                   ratio_pct="dram__bytes_read.sum.pct_of_peak_sustained_elapsed",
                   note="achieved read rate ÷ the report's % of peak"),
    ),
    "l2": (
        PeakRecipe(_terms("derived__lts__lts2xbar_bytes.sum.peak_sustained"), "lts", definition=CHART),
        PeakRecipe(_terms(("lts__lts2xbar_cycles_active.sum.peak_sustained", 32.0)), "lts", definition=CHART),
        PeakRecipe(_terms("l1tex__m_xbar2l1tex_read_bytes.sum.peak_sustained"), "l1tex", definition=CHART),
        PeakRecipe(_terms("l1tex__m_xbar2l1tex_read_bytes.sum"), "", definition=CHART,
                   ratio_pct="l1tex__m_xbar2l1tex_read_bytes.sum.pct_of_peak_sustained_elapsed",
                   note="achieved rate ÷ the report's % of peak"),
        PeakRecipe(_terms("lts__t_bytes.sum.peak_sustained"), "lts", definition=TAGS),
        PeakRecipe(_terms(("lts__t_sectors.sum.peak_sustained", 32.0)), "lts", definition=TAGS),
        PeakRecipe(_terms(("lts__t_sectors.sum", 32.0)), "", definition=TAGS,
                   ratio_pct="lts__t_sectors.sum.pct_of_peak_sustained_elapsed",
                   note="achieved rate ÷ the report's % of peak"),
        PeakRecipe(_terms(("lts__t_sectors.sum", 32.0)), "", definition=TAGS,
                   ratio_pct="lts__t_sectors.avg.pct_of_peak_sustained_elapsed",
                   note="achieved rate ÷ the report's % of peak (the average slice's share)"),
    ),
    "l1": (
        PeakRecipe(_terms("derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.peak_sustained"), "l1tex",
                   definition=CHART),
        PeakRecipe(_terms("derived__l1tex__lsu_writeback_bytes_mem_lg.sum.peak_sustained"), "l1tex",
                   definition=CHART),
        PeakRecipe(_terms(("l1tex__lsu_writeback_active_mem_lgds.sum", 128.0)), "", definition=CHART,
                   ratio_pct="l1tex__lsu_writeback_active_mem_lgds.sum.pct_of_peak_sustained_elapsed",
                   note="achieved write-back rate ÷ the report's % of peak"),
        PeakRecipe(_terms(("l1tex__lsu_writeback_active_mem_lg.sum", 128.0)), "", definition=CHART,
                   ratio_pct="l1tex__lsu_writeback_active_mem_lg.sum.pct_of_peak_sustained_elapsed",
                   note="achieved write-back rate ÷ the report's % of peak"),
        PeakRecipe(_terms("l1tex__t_bytes.sum.peak_sustained"), "l1tex", definition=TAGS),
        PeakRecipe(_terms(("l1tex__t_sectors.sum.peak_sustained", 32.0)), "l1tex", definition=TAGS),
    ),
}
TENSOR_ESTIMATE_PEAK = (
    PeakRecipe(_terms("derived__sm__inst_executed_pipe_tensor_x512"), "sm",
               note="tensor-pipe instruction peak x 512 ops (estimate)"),
    PeakRecipe(_terms(("sm__inst_executed_pipe_tensor.sum.peak_sustained", TENSOR_OPS_PER_INST_ESTIMATE)),
               "sm", note="tensor-pipe instruction peak x 512 ops (estimate)"),
)

# What to pass to `ncu` so that a capture holds everything above. Sections first (they bring
# the peaks and clocks), then the counts that sections do not always store.
NCU_SECTIONS = (
    "SpeedOfLight",
    "SpeedOfLight_RooflineChart",
    "SpeedOfLight_HierarchicalDoubleRooflineChart",
    "SpeedOfLight_HierarchicalSingleRooflineChart",
    "SpeedOfLight_HierarchicalHalfRooflineChart",
    "SpeedOfLight_HierarchicalTensorRooflineChart",
    "MemoryWorkloadAnalysis",
    "MemoryWorkloadAnalysis_Chart",
    "InstructionStats",
    "ComputeWorkloadAnalysis",
    "LaunchStats",
    "Occupancy",
)
# LDGSTS (cp.async) instruction counts, in the forms reports hold them: copies that load global memory
# without an LDG (`passes.ceilings`, `passes.reuse`).
ASYNC_COPY_COUNTS = ("smsp__inst_executed_op_ldgsts.sum", "sm__sass_inst_executed_op_ldgsts_cache_bypass.sum",
                     "smsp__sass_inst_executed_op_ldgsts.sum")
# Copies from L2 straight into shared memory (cp.async, TMA): bytes L2 sends that the L1 chart definition
# (LSU write-back to registers) never counts, so its L1 bytes may rightly be fewer than L2's (`model.hierarchy`).
SHARED_COPY_COUNTS = (*ASYNC_COPY_COUNTS, "l1tex__m_xbar2l1tex_read_bytes_mem_dshared.sum",
                      "l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld.sum")
# The sectors the SM's loads ask L1/TEX for, of every kind that reads global memory through it: LDG, local
# loads, texture and surface fetches, cp.async (LDGSTS, through L1 or bypassing it). Not TMA (Hopper's bulk
# copies): they pass neither the LSU nor the TEX pipe. `passes.reuse` weighs DRAM's reads against them.
LOAD_SECTORS = ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum",
                "l1tex__t_sectors_pipe_tex_mem_texture.sum", "l1tex__t_sectors_pipe_tex_mem_surface_op_ld.sum",
                "sm__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_access.sum",
                "sm__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_bypass.sum")
# The sectors L1/TEX asks L2 to read (its misses, with local memory's and texture's), and those that hit in L2:
# `passes.reuse` weighs DRAM's reads against them where L1 served re-reads itself.
L2_READS = ("lts__t_sectors_srcunit_tex_op_read.sum", "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum")
# Metrics behind each ceiling (ceilings.py) and the Instruction Roofline: what to collect when absent.
CEILING_METRICS: dict[str, tuple[str, ...]] = {
    "issue_share": ("smsp__inst_executed.sum", "sm__inst_executed.sum.peak_sustained"),
    "lane_efficiency": ("smsp__thread_inst_executed_pred_on_per_inst_executed.ratio",
                        "smsp__thread_inst_executed_per_inst_executed.ratio"),
    "sector_use": ("smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio",
                   "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio",
                   "smsp__sass_inst_executed_op_global_ld.sum", "smsp__sass_inst_executed_op_global_st.sum"),
    "coalescing": ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
                   "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"),
    # the shared loads' (ldmatrix included) and stores' own counts: the pipe's totals count other accesses too
    "bank_conflicts": ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
                       "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
                       "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
                       "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", "smsp__inst_executed_op_ldsm.sum"),
    "async_copies": ("smsp__inst_executed_op_ldgsts.sum",
                     "sm__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_bypass.sum",
                     "sm__sass_l1tex_t_requests_pipe_lsu_mem_global_op_ldgsts_cache_bypass.sum"),
    "instruction_roofline": ("smsp__sass_inst_executed_op_global_ld.sum", "smsp__sass_inst_executed_op_global_st.sum"),
    "reads_once": ("dram__bytes_read.sum", *LOAD_SECTORS, "l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct",
                   *L2_READS),
}

NCU_METRICS = (
    "gpu__time_duration.sum",
    "dram__bytes_read.sum", "dram__bytes_write.sum", "dram__bytes.sum.peak_sustained",
    "dram__cycles_elapsed.avg.per_second",
    "lts__t_bytes.sum", "lts__t_bytes.sum.peak_sustained", "lts__cycles_elapsed.avg.per_second",
    "lts__t_sectors_srcunit_tex.sum",  # the SMs' own L2 traffic (lts__t_bytes counts the L2 fabric's too)
    "l1tex__t_bytes.sum", "l1tex__t_bytes.sum.peak_sustained", "l1tex__cycles_elapsed.avg.per_second",
    "sm__cycles_elapsed.avg", "sm__cycles_elapsed.avg.per_second", "smsp__cycles_elapsed.avg",
    "sm__cycles_active.avg",  # against the elapsed cycles: how long the SMs had no warp at all
    *(_op(o) for o in ("dadd", "dmul", "dfma", "fadd", "fmul", "ffma", "hadd", "hmul", "hfma")),
    "sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained",
    "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained",
    "sm__sass_thread_inst_executed_op_hfma_pred_on.sum.peak_sustained",
    "smsp__inst_executed_pipe_tensor.sum", "sm__inst_executed_pipe_tensor.sum.peak_sustained",
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
    *dict.fromkeys(m for names in CEILING_METRICS.values() for m in names),
    "l1tex__t_sector_hit_rate.pct", "lts__t_sector_hit_rate.pct",
)
COLLECT_WITH: dict[str, str] = {
    "duration": "--metrics gpu__time_duration.sum",
    "work_flop.fp64": "--metrics " + ",".join(_op(o) for o in ("dadd", "dmul", "dfma"))
                      + " (or --section SpeedOfLight_HierarchicalDoubleRooflineChart)",
    "work_flop.fp32": "--metrics " + ",".join(_op(o) for o in ("fadd", "fmul", "ffma"))
                      + " (or --section SpeedOfLight_HierarchicalSingleRooflineChart)",
    "work_flop.fp16": "--metrics " + ",".join(_op(o) for o in ("hadd", "hmul", "hfma"))
                      + " (or --section SpeedOfLight_HierarchicalHalfRooflineChart)",
    "work_flop.tensor": "--section SpeedOfLight_HierarchicalTensorRooflineChart (Nsight Compute "
                        "2025.1+ records sm__ops_path_tensor_* per datapath), or --metrics "
                        "smsp__inst_executed_pipe_tensor.sum for an estimate",
    "traffic_bytes.dram": "--metrics dram__bytes_read.sum,dram__bytes_write.sum",
    "traffic_bytes.l2": "--metrics lts__t_bytes.sum (or --section SpeedOfLight_HierarchicalSingleRooflineChart)",
    "traffic_bytes.l1": "--metrics l1tex__t_bytes.sum (or --section SpeedOfLight_HierarchicalSingleRooflineChart)",
    "peaks.dram": "--metrics dram__bytes.sum.peak_sustained,dram__cycles_elapsed.avg.per_second",
    "peaks.l2": "--metrics lts__t_bytes.sum.peak_sustained,lts__cycles_elapsed.avg.per_second",
    "peaks.l1": "--metrics l1tex__t_bytes.sum.peak_sustained,l1tex__cycles_elapsed.avg.per_second",
    "peaks.fp64": "--metrics sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained,"
                  "sm__cycles_elapsed.avg.per_second",
    "peaks.fp32": "--metrics sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained,"
                  "sm__cycles_elapsed.avg.per_second",
    "peaks.fp16": "--metrics sm__sass_thread_inst_executed_op_hfma_pred_on.sum.peak_sustained,"
                  "sm__cycles_elapsed.avg.per_second",
    "peaks.tensor": "--section SpeedOfLight_HierarchicalTensorRooflineChart (per-datapath peaks, "
                    "Nsight Compute 2025.1+), or a peaks file (--peaks) with measured tensor roofs",
}

# Compute capabilities with no DRAM counters (integrated memory): no DRAM roof, not an error.
NO_DRAM_CC = ("8.7", "11.0", "12.1")
