"""Nsight Compute's rules by the cause each speaks of, and the causes of this tool's findings, as data
(`passes.rules_comparison` reads both: a rule agrees with the findings only where one of them is about a cause
the rule names).

A rule is keyed by its id and title as releases write them (titles compared alike: "Long Scoreboard Stalls" and
"long_scoreboard" are one title; a title of None stands for every title of that rule not listed, "" for none).
The table, rule by rule, with why:

- Occupancy: TheoreticalOccupancy ("Theoretical Warps": the warps a scheduler can hold are below the hardware's)
  and Occupancy ("Occupancy Limiters": registers, shared memory or the block size cap the warps per SM) speak of
  the launch's theoretical occupancy: `OCCUPANCY`. AchievedOccupancy speaks of fewer warps than the launch allows
  (scheduling overhead, uneven warps or blocks): `ACHIEVED_OCCUPANCY`. Neither speaks of the access pattern, the
  sectors, or a limit at high use.
- Stalls: IssueSlotUtilization (a scheduler issues every few cycles: too few eligible warps) and an untitled CPIStall
  (a stall that names no reason) speak of latency not hidden: `STALLS`. Long Scoreboard (warps wait on L1TEX data:
  global, local, texture) is `MEMORY_WAIT`; Lg Throttle (the local/global instruction queue is full: too many
  memory instructions) is `LSU_QUEUE`. A stall title this table does not list speaks of a reason no finding
  measures (a throttled pipe, a barrier): it matches none.
- Access patterns: UncoalescedGlobalAccess and every MemoryCacheAccessPattern title (sectors per request at L1TEX
  or L2) are `COALESCING`; UncoalescedSharedAccess and SharedMemoryConflicts (wavefronts per shared request) are
  `BANK_CONFLICTS`; ThreadDivergence (active threads per warp instruction) is `DIVERGENCE`; FPInstructions
  (non-fused FP adds and multiplies) is `FMA`.
- The launch: LaunchConfiguration's Tail Effect is `TAIL`, its Small Grid (fewer blocks than SMs) `SMALL_GRID`, an
  untitled one either. WorkloadImbalance across SMs or their L1 slices is `IDLE_SMS` (SMs with less work: a
  partial last wave, too few blocks); across an SM's schedulers or the L2 slices it speaks of no finding.
- Pipes: HighPipeUtilization's busy pipe is `COMPUTE_PIPE`; its "Low Utilization" (every pipe under-used: the
  workload is very small or too few warps issue) is `TOO_LITTLE_WORK` or `STALLS`; "Balanced" names nothing.
- No cause here (`UNMAPPED`: no comparison at all): the Speed Of Light rules (their Bottleneck rule has its own
  note), the FP roofline's, L2 compression, PM sampling, CPIStallWait (a fixed-latency dependency).

A finding's causes: by its kind (`KIND_CAUSES`), its kind and variant (`VARIANT_CAUSES`), a figure it holds
(`FIGURE_CAUSES`: local memory whose long-scoreboard waits lead the stalls speaks of the stalls too); too little
work under one wave, a small grid and idle SMs too (`UNDER_ONE_WAVE`); a limit at its peak, the unit or roof it is
about (`UNIT_CAUSES`, else its family's, `LIMIT_CAUSES`); short of high use, what more work in flight waits on
(`SHORT_CAUSES`); a latency finding, the stall reason its lever names (`LEVER_CAUSES`), what its limit waits on
(`LATENCY_CAUSES`) and the occupancy case of the SMs' active cycles (`OCCUPANCY_CASES`). Occupancy is a latency
finding's cause only where the warps are at what the launch allows (`at_allowed`: the limiter is the lever) or
fewer (`fewer_warps`), and a limit short of high use's only where its figures name what caps the occupancy
(`occ_by`): never a coalescing, sector or limit-at-high-use finding's. A memory limit at high use is no
stall's cause to share: warps waiting on it are the limit itself (the comparison says it is past high use).
"""

from __future__ import annotations

from enum import Enum

__all__ = ["FIGURE_CAUSES", "ISSUE_UNITS", "KIND_CAUSES", "LATENCY_CAUSES", "LEVER_CAUSES", "LIMIT_CAUSES",
           "NO_CONFLICT_LEVERS", "OCCUPANCY_CASES", "RULE_CAUSES", "SHORT_CAUSES", "UNDER_ONE_WAVE", "UNIT_CAUSES",
           "UNMAPPED", "VARIANT_CAUSES", "VARIANT_ONLY", "Cause"]


class Cause(str, Enum):
    """What a rule result or a finding is about, compared between them."""

    OCCUPANCY = "occupancy"  # the launch's theoretical occupancy, held by registers, shared memory or block size
    ACHIEVED_OCCUPANCY = "achieved_occupancy"  # fewer warps than the launch allows
    STALLS = "stalls"  # too few eligible warps: latency not hidden
    MEMORY_WAIT = "memory_wait"  # warps waiting on memory data
    LSU_QUEUE = "lsu_queue"  # more load/store instructions than the LSU takes
    COALESCING = "coalescing"  # sectors per request
    BANK_CONFLICTS = "bank_conflicts"  # shared-memory wavefronts per request
    DIVERGENCE = "divergence"  # active threads per warp instruction
    FMA = "fma"  # non-fused adds and multiplies
    TAIL = "tail"  # a partial last wave
    SMALL_GRID = "small_grid"  # fewer blocks than the GPU runs at once
    IDLE_SMS = "idle_sms"  # SMs without work for part of the run
    TOO_LITTLE_WORK = "too_little_work"  # a launch too small to use the GPU
    COMPUTE_PIPE = "compute_pipe"  # a compute pipe or FLOP roof at its limit
    ISSUE = "issue"  # the issue slots at their limit
    MEMORY_LIMIT = "memory_limit"  # a memory roof or unit at its limit


C = Cause
_NONE: frozenset[Cause] = frozenset()

RULE_CAUSES: dict[tuple[str, str | None], frozenset[Cause]] = {
    ("TheoreticalOccupancy", None): frozenset({C.OCCUPANCY}),
    ("Occupancy", None): frozenset({C.OCCUPANCY}),
    ("AchievedOccupancy", None): frozenset({C.ACHIEVED_OCCUPANCY}),
    ("IssueSlotUtilization", None): frozenset({C.STALLS}),
    ("CPIStall", ""): frozenset({C.STALLS}),
    ("CPIStall", "Long Scoreboard Stalls"): frozenset({C.MEMORY_WAIT}),
    ("CPIStall", "Lg Throttle Stalls"): frozenset({C.LSU_QUEUE}),
    ("CPIStall", None): _NONE,
    ("CPIStallLongScoreboard", None): frozenset({C.MEMORY_WAIT}),
    ("UncoalescedGlobalAccess", None): frozenset({C.COALESCING}),
    ("MemoryCacheAccessPattern", None): frozenset({C.COALESCING}),
    ("UncoalescedSharedAccess", None): frozenset({C.BANK_CONFLICTS}),
    ("SharedMemoryConflicts", None): frozenset({C.BANK_CONFLICTS}),
    ("ThreadDivergence", None): frozenset({C.DIVERGENCE}),
    ("FPInstructions", None): frozenset({C.FMA}),
    ("LaunchConfiguration", "Tail Effect"): frozenset({C.TAIL}),
    ("LaunchConfiguration", "Small Grid"): frozenset({C.SMALL_GRID}),
    ("LaunchConfiguration", None): frozenset({C.SMALL_GRID, C.TAIL}),
    ("WorkloadImbalance", "SMs Workload Imbalance"): frozenset({C.IDLE_SMS}),
    ("WorkloadImbalance", "L1 Slices Workload Imbalance"): frozenset({C.IDLE_SMS}),
    ("WorkloadImbalance", None): _NONE,
    ("HighPipeUtilization", "Low Utilization"): frozenset({C.TOO_LITTLE_WORK, C.STALLS}),
    ("HighPipeUtilization", None): frozenset({C.COMPUTE_PIPE}),
}

# Rule results about none of the findings' causes: no comparison is written for them.
UNMAPPED = frozenset({("HighPipeUtilization", "Balanced"), ("SOLBottleneck", None), ("SOLFPRoofline", None),
                      ("MemoryL2Compression", None), ("PMSamplingData", None), ("CPIStallWait", None)})

KIND_CAUSES: dict[str, frozenset[Cause]] = {
    "coalescing": frozenset({C.COALESCING}),
    "sector_use": frozenset({C.COALESCING}),
    "bank_conflicts": frozenset({C.BANK_CONFLICTS}),
    "lane_efficiency": frozenset({C.DIVERGENCE}),
    "fma_balance": frozenset({C.FMA}),
    "tail_effect": frozenset({C.TAIL, C.IDLE_SMS}),
    "too_little_work": frozenset({C.TOO_LITTLE_WORK}),
    "latency": frozenset({C.STALLS}),
    "reuse": frozenset({C.MEMORY_WAIT}),  # re-read bytes: the locality Long Scoreboard's advice names
    "local_memory": frozenset({C.LSU_QUEUE, C.MEMORY_WAIT}),  # spills: local loads and stores, waited on
}

VARIANT_CAUSES: dict[tuple[str, str], frozenset[Cause]] = {
    ("latency", "idle"): frozenset({C.IDLE_SMS}),
    ("tail_effect", "occupancy"): frozenset({C.ACHIEVED_OCCUPANCY}),  # its tail measured by the achieved occupancy
    ("tail_effect", "uneven"): frozenset({C.ACHIEVED_OCCUPANCY}),  # uneven blocks or warps, not the last wave
}
# The findings whose variant alone says what they are about, not their kind: blocks that end unevenly speak of the
# achieved occupancy (Nsight Compute's AchievedOccupancy rule names workload imbalance), not of a partial wave.
VARIANT_ONLY: frozenset[tuple[str, str]] = frozenset({("tail_effect", "uneven")})

# A finding's figure that, where the finding holds it, adds causes: local accesses that hold most of L1's sectors while
# long-scoreboard waits lead the stalls (`passes.spills.local_waits`) are why too few warps are eligible.
FIGURE_CAUSES: dict[tuple[str, str], frozenset[Cause]] = {("local_memory", "local_waits"): frozenset({C.STALLS})}
# A too-little-work finding whose launch is under one wave (its figures: fewer blocks than the GPU runs at once).
UNDER_ONE_WAVE = frozenset({C.SMALL_GRID, C.IDLE_SMS})
# A latency finding's lever where it names the stall reason Nsight Compute measured most (`passes.stalls`).
LEVER_CAUSES: dict[str, frozenset[Cause]] = {"stall_long_scoreboard": frozenset({C.MEMORY_WAIT}),
                                            "stall_lg_throttle": frozenset({C.LSU_QUEUE})}
# A latency finding's case over the SMs' active cycles (`passes.latency`) -> the occupancy cause it speaks of.
OCCUPANCY_CASES: dict[str, Cause] = {"at_allowed": C.OCCUPANCY, "fewer_warps": C.ACHIEVED_OCCUPANCY}

_SHARED = frozenset({C.BANK_CONFLICTS, C.MEMORY_LIMIT})
# A unit at its limit -> its causes, where not its family's alone (`LIMIT_CAUSES`).
UNIT_CAUSES: dict[str, frozenset[Cause]] = {
    "sm__inst_executed_pipe_lsu": frozenset({C.LSU_QUEUE, C.COMPUTE_PIPE}),
    "l1tex__lsuin_requests": frozenset({C.LSU_QUEUE, C.MEMORY_LIMIT}),
    "l1tex__data_pipe_lsu_wavefronts": _SHARED,
    "l1tex__data_bank_reads": _SHARED,
    "l1tex__data_bank_writes": _SHARED,
}
ISSUE_UNITS = frozenset({"sm__issue_active", "sm__inst_executed"})
# A roof or unit by family (memory: a level or memory unit; compute: a FLOP roof or compute unit; issue: the issue
# slots) -> the causes of a limit at its peak, of one short of high use (the rest of its peak is for more work in
# flight: what that work waits on), and of a latency finding about it.
LIMIT_CAUSES: dict[str, frozenset[Cause]] = {"memory": frozenset({C.MEMORY_LIMIT}),
                                             "compute": frozenset({C.COMPUTE_PIPE}), "issue": frozenset({C.ISSUE})}
SHORT_CAUSES: dict[str, frozenset[Cause]] = {"memory": frozenset({C.MEMORY_WAIT}), "issue": frozenset({C.STALLS})}
LATENCY_CAUSES: dict[str, frozenset[Cause]] = {"memory": frozenset({C.MEMORY_WAIT})}
# A busy L1 unit's levers where its counters rule bank conflicts out (no shared memory, none counted).
NO_CONFLICT_LEVERS = frozenset({"lsu_no_shared", "lsu_no_conflicts"})
