"""Warp-stall reasons, as data: each reason's id, its label, and the metric that holds it under the names of every
Nsight Compute version.

Nsight Compute's WarpStateStats section counts, for each reason, the warps stalled on it per issued instruction
(`smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio`); the metrics a user names with
`--metrics` give the same per warp-active cycle (`smsp__warp_issue_stalled_<reason>_per_warp_active.pct`); the
earliest captures, cycles per issue (`smsp__warp_cycles_per_issue_stall_<reason>`); the SourceCounters section's
PC sampling, sample counts (`smsp__pcsamp_warps_issue_stalled_<reason>`, earlier `smsp__pcsamp_warp_stall_...`).
Within one family each value is proportional to the warp cycles stalled on that reason, so a reason's share of
the stall cycles is its value over the family's sum. `selected` (the warp that issues: 1 per issue by
definition) is no stall and is left out. A capture is read in the first family it holds, never a mix.
"""

from __future__ import annotations

from dataclasses import dataclass

# The metric of a reason in each family, most direct first (`{}`: the reason's spelling in that family).
FAMILIES = ("smsp__average_warps_issue_stalled_{}_per_issue_active.ratio",
            "smsp__warp_issue_stalled_{}_per_warp_active.pct",
            "smsp__warp_cycles_per_issue_stall_{}",
            "smsp__pcsamp_warps_issue_stalled_{}",
            "smsp__pcsamp_warp_stall_{}")
COLLECT = "--section WarpStateStats"  # the ncu option that collects the stall reasons


@dataclass(frozen=True)
class StallReason:
    """One reason a warp does not issue: `id`, `label` (as Nsight Compute names it), its metric in each of
    `FAMILIES`, and `lever`: the catalog's next step for a kernel whose stalls it leads."""

    id: str
    label: str
    names: tuple[str, ...]
    lever: str


def _reason(reason: str, label: str, older: str | None = None, lever: str | None = None) -> StallReason:
    """A reason, spelled `older` in the cycles-per-issue and sampled families where they spell it otherwise; its
    lever `stall_<reason>` unless named."""
    return StallReason(reason, label, tuple(family.format(older if older and n >= 2 else reason)
                                            for n, family in enumerate(FAMILIES)), lever or f"stall_{reason}")


_SOURCE = "stall_source"  # reasons with no one fix: the Source page shows which instructions stall
STALLS = (
    _reason("long_scoreboard", "long scoreboard"),  # waiting on an L1TEX result: global, local, texture, surface
    _reason("barrier", "barrier"),  # waiting at __syncthreads for the block's other warps
    _reason("short_scoreboard", "short scoreboard"),  # waiting on an MIO result: shared memory, special functions
    _reason("mio_throttle", "MIO throttle"),  # the MIO queue is full: shared memory, special functions, branches
    _reason("lg_throttle", "LG throttle"),  # the local and global queue is full: many narrow accesses
    _reason("math_pipe_throttle", "math pipe throttle"),  # a math pipe is at its limit
    _reason("wait", "wait"),  # a fixed-latency dependency
    _reason("not_selected", "not selected"),  # eligible, another warp issued: plenty of eligible warps
    _reason("branch_resolving", "branch resolving"),
    _reason("no_instruction", "no instruction", older="no_instructions"),  # instruction cache miss or after a jump
    _reason("imc_miss", "IMC miss"),  # immediate constant cache miss
    _reason("drain", "drain"),  # stores draining at the warp's exit
    _reason("membar", "membar"),
    _reason("dispatch_stall", "dispatch stall"),
    _reason("sleeping", "sleeping"),  # nanosleep, or all threads at a warp-level barrier
    _reason("tex_throttle", "tex throttle"),
    _reason("gmma", "GMMA"),  # Hopper's warpgroup matrix multiply-accumulate
    _reason("warpgroup_arrive", "warpgroup arrive"),  # Hopper, sampled: waiting at a warpgroup arrive
    _reason("misc", "misc", lever=_SOURCE),
    _reason("allocation_stall", "allocation", lever=_SOURCE),  # early captures
    _reason("tile_allocation_stall", "tile allocation", lever=_SOURCE),  # early captures
)

STALL_METRICS = tuple(name for r in STALLS for name in r.names)
