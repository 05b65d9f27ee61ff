"""The per-instruction counters a finding points into the code with (Nsight Compute's SourceCounters section).

A report with that section holds instanced metrics whose instances are keyed by program counter (PC). Each counter
here names what it counts and the ways to read it per PC, in order of preference (the first whose metrics the report
holds is used); `passes.where` says which finding reads which counter, `readers.instructions` reads them.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

__all__ = ["FUNCTION_STARTS", "MIN_SHARE", "PC_COUNTERS", "STALL_PREFIX", "TOP_COUNT", "WARP_LANES", "How",
           "PcCounter", "PcRecipe"]

WARP_LANES = 32
TOP_COUNT = 5  # at most this many instructions per finding
MIN_SHARE = 0.01  # each holding at least this share of its counter
FUNCTION_STARTS = "launch__function_pcs"  # the PC each function of the launch starts at (offsets count from it)
STALL_PREFIX = "smsp__pcsamp_warps_issue_stalled_"


class How(str, Enum):
    """How a recipe's metrics make the counter's value at one PC."""

    VALUE = "value"  # the one metric's value
    LANES_LOST = "lanes_lost"  # 32 × inst_executed − thread instructions (metrics: inst_executed, threads)
    LANES_LOST_AVERAGE = "lanes_lost_average"  # inst_executed × (32 − average threads per instruction)
    STALL_SAMPLES = "stall_samples"  # the sum of every `<prefix><reason>` metric, `_not_issued` ones left out


@dataclass(frozen=True)
class PcRecipe:
    """One way to read a counter per PC: `how` over `metrics`; `label` is what an entry names as its counter."""

    how: How
    metrics: tuple[str, ...]
    label: str


@dataclass(frozen=True)
class PcCounter:
    """A per-instruction counter: what it counts and the recipes that read it, the preferred first."""

    key: str
    noun: str  # what a share is of, in a few words
    meaning: str
    recipes: tuple[PcRecipe, ...]


def _value(metric: str) -> PcRecipe:
    return PcRecipe(How.VALUE, (metric,), metric)


_GLOBAL = "derived__memory_l2_theoretical_sectors_global_excessive"
_GLOBAL_2021 = "derived__memory_l2_sectors_global_excessive"

PC_COUNTERS: dict[str, PcCounter] = {c.key: c for c in (
    PcCounter("excessive_global_sectors", "excessive global sectors",
              "L2 sectors a global access fetched beyond those an ideal (coalesced) access needs",
              (_value(_GLOBAL), _value(_GLOBAL_2021))),
    PcCounter("excessive_shared_wavefronts", "excessive shared wavefronts",
              "shared-memory wavefronts beyond one per access (bank conflicts)",
              (_value("derived__memory_l1_wavefronts_shared_excessive"),)),
    PcCounter("lanes_lost", "lanes lost",
              "lanes idle or predicated off: 32 per executed warp instruction, less the threads that ran it",
              (PcRecipe(How.LANES_LOST, ("inst_executed", "thread_inst_executed_true"),
                        "32*inst_executed-thread_inst_executed_true"),
               # the averages are whole numbers in the reports (a lower bound of the threads): a loss a little high
               PcRecipe(How.LANES_LOST_AVERAGE, ("inst_executed", "derived__avg_thread_executed_true"),
                        "inst_executed*(32-derived__avg_thread_executed_true)"),
               PcRecipe(How.LANES_LOST_AVERAGE, ("inst_executed", "derived__avg_thread_executed"),
                        "inst_executed*(32-derived__avg_thread_executed)"))),
    PcCounter("samples", "warp samples",
              "warp state samples: where the warps spent their time, stalled or issuing",
              (_value("smsp__pcsamp_sample_count"),
               PcRecipe(How.STALL_SAMPLES, (STALL_PREFIX,), f"{STALL_PREFIX}*"))),
)}
