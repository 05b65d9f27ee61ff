"""The raw counters the diagnosis reads beyond the model, kept with each analysed launch.

A launch's diagnosis runs while its metrics are at hand; a group's runs later, when `report` has let
every launch's metrics go (50,000 launches hold half a gigabyte of them). The few counters the
diagnosis reads of a kernel's raw metrics (`passes.reuse`, `passes.levers`, `passes.stalls`) are therefore
taken once per launch (`counter_facts`, in `FACTS` order) and read back through `fact`, which also serves a model built
just now from its metrics.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..knowledge import recipes as R
from ..knowledge.opcodes import OPCODE_FACTS
from ..knowledge.stalls import STALL_METRICS
from ..knowledge.throughputs import ELAPSED
from ..readers.record import UNREAD, hot_values, read_so_far
from ..readers.values import is_float

if TYPE_CHECKING:
    from ..model.roofline import KernelModel
    from ..readers.record import RawKernel

ISSUED = "smsp__inst_executed.sum"
# Nsight Compute's Issue Slots Busy (ComputeWorkloadAnalysis): per active cycle, where the issue-slot unit counts
# per elapsed cycle as Speed Of Light does.
ISSUE_ACTIVE = "sm__inst_issued.avg.pct_of_peak_sustained_active"
ISSUE_ELAPSED = "sm__issue_active.avg.pct_of_peak_sustained_elapsed"  # the issue-slot unit's, of the same launch
REGISTERS_PER_SM = "device__attribute_max_registers_per_multiprocessor"
# Warp instructions that move global memory: SASS counts, and L1's global load and store requests (one per warp
# instruction; the SASS counts miss generic loads and stores, so the larger of the two counts).
MEMORY_INSTRUCTIONS = (("smsp__sass_inst_executed_op_global_ld.sum", "smsp__sass_inst_executed_op_global_st.sum"),
                       ("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
                        "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"))
SHARED_WAVEFRONTS = "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"  # counts other accesses' wavefronts too
# The shared loads' (ldmatrix included) and stores' own wavefronts.
SHARED_OP_WAVEFRONTS = ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
                        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum")
BANK_CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum"
LOCAL_REQUESTS = ("l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_local_op_st.sum")
STORE_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"
# The shared memory a block allocates itself (static, dynamic; not the driver reserve in launch__shared_mem_per_block).
SHARED_ALLOCATION = ("launch__shared_mem_per_block_static", "launch__shared_mem_per_block_dynamic")

# Local and global memory warp instructions (loads, stores) under the names of every Nsight Compute version;
# the L2 transactions of local and global memory (2019-era names).
LOCAL_INSTRUCTIONS = (("sass__inst_executed_local_loads", "sass__inst_executed_local_stores"),
                      ("smsp__sass_inst_executed_op_local_ld.sum", "smsp__sass_inst_executed_op_local_st.sum"),
                      ("smsp__inst_executed_op_local_ld.sum", "smsp__inst_executed_op_local_st.sum"))
GLOBAL_MEMORY_INSTRUCTIONS = (("sass__inst_executed_global_loads", "sass__inst_executed_global_stores"),
                              MEMORY_INSTRUCTIONS[0])
L2_TRANSACTIONS = ("memory_l2_transactions_local", "memory_l2_transactions_global")
# Nsight Compute's L2 sectors of L1's local and global requests (2021-era and later; `theoretical`: every sector L1
# asked for, before its hits), and the L2 transactions above: (local, global) pairs, the first held is read.
L2_LOCAL_PAIRS = (("memory_l2_sectors_local", "memory_l2_sectors_global"),
                  ("memory_l2_theoretical_sectors_local", "memory_l2_theoretical_sectors_global"), L2_TRANSACTIONS)
# L1/TEX sectors of local loads and stores; of the other accesses that reach L2 through L1/TEX (global loads,
# stores, atomics and reductions, texture and surface fetches, cp.async); L2's sectors of every unit and of L1/TEX.
LOCAL_SECTORS = ("l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum")
GLOBAL_SECTORS = ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", STORE_SECTORS)
OTHER_L1_SECTORS = ("l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum",
                    "l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum", *R.LOAD_SECTORS[2:])
L2_SECTORS = ("lts__t_sectors.sum", "lts__t_sectors_srcunit_tex.sum")

FACTS = tuple(dict.fromkeys((ISSUED, ISSUE_ACTIVE, ISSUE_ELAPSED, REGISTERS_PER_SM,
                             *(n for pair in MEMORY_INSTRUCTIONS for n in pair), *R.ASYNC_COPY_COUNTS,
                             SHARED_WAVEFRONTS, *SHARED_OP_WAVEFRONTS, BANK_CONFLICTS, *LOCAL_REQUESTS, STORE_SECTORS,
                             *SHARED_ALLOCATION,
                             *(n for pairs in (LOCAL_INSTRUCTIONS, GLOBAL_MEMORY_INSTRUCTIONS) for pair in pairs
                               for n in pair), *L2_TRANSACTIONS, *STALL_METRICS,
                             *(n for pair in L2_LOCAL_PAIRS for n in pair), *LOCAL_SECTORS, *GLOBAL_SECTORS,
                             *OTHER_L1_SECTORS, *L2_SECTORS, *OPCODE_FACTS)))
_OPCODES_FROM = len(FACTS) - len(OPCODE_FACTS)
# The per-opcode counts are read only of a kernel whose FP64 pipe did work: the only one they describe a finding of
# (`passes.divisions`), and reading them costs about a tenth of a millisecond a launch. (A higher bar would part the
# launches of a block modelled over columns at one more decision, where "none" and "some" rarely do.)
FP64_PIPE_BUSY = "sm__pipe_fp64_cycles_active" + ELAPSED
_INDEX = {name: i for i, name in enumerate(FACTS)}


def counter_facts(raw: RawKernel) -> tuple[float | None, ...]:
    """The launch's values of `FACTS` (None where the report lacks one, or holds NaN)."""
    # The names the metrics may hold at all (an export's header, a report's list for the kernel): most of these
    # are absent from any one report, and a C-level `in` passes them over; the metrics read so far (a CSV row's
    # parsed cells) answer most of the others before the mapping's own `get`.
    metrics = raw.metrics
    possible = getattr(metrics, "possible_names", metrics)
    read, get = read_so_far(metrics), metrics.get
    hot, _ = hot_values(metrics)  # a CSV row's plain values, parsed at once
    out: list[float | None] = []
    fp64 = raw.number(FP64_PIPE_BUSY)
    names = FACTS if fp64 is not None and fp64 > 0 else FACTS[:_OPCODES_FROM]
    for name in names:
        value = hot(name)
        if value is not None and value - value == 0.0:
            out.append(value)
            continue
        m = read(name, UNREAD) if name in possible else None
        if m is UNREAD:
            m = get(name)
        value = None if m is None else m.value
        out.append(value if (type(value) is float or is_float(value)) and value - value == 0.0 else
                   None if m is None else raw.number(name))
    out += [None] * (len(FACTS) - len(out))
    return tuple(out)


def fact(m: KernelModel, name: str) -> float | None:
    """One of `FACTS` of a kernel: kept with an analysed launch (or a group, its longest launch's), else read
    from the metrics of a model built from them just now."""
    kept: tuple[float | None, ...] | None = getattr(m, "facts", None)
    return m.raw.number(name) if kept is None else kept[_INDEX[name]]


def held_sum(m: KernelModel, names: tuple[str, ...]) -> float | None:
    """The sum of these `FACTS` of a kernel, where it holds every one of them."""
    values = [fact(m, name) for name in names]
    return None if any(v is None for v in values) else sum(v for v in values if v is not None)


def global_loads(m: KernelModel) -> float | None:
    """The kernel's global load warp instructions: the larger of the SASS count and L1's global load
    requests (the SASS count misses generic loads); None where the report holds neither."""
    counts = [v for pair in MEMORY_INSTRUCTIONS if (v := fact(m, pair[0])) is not None]
    return max(counts) if counts else None
