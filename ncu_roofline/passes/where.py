"""Where in the code: the instructions behind a finding, by the finding's own per-instruction counter.

Runs after the diagnosis. Each finding of a kind listed here gets, as `where`, the top instructions of its
counter (`knowledge.instruction_counters`): uncoalesced or badly used sectors by the excessive global sectors,
bank conflicts by the excessive shared wavefronts, idle lanes by the lanes lost, latency by the warp samples.
A latency finding of SMs without warps (`idle`), of a limit the report did not measure (`unmeasured`) or of the
occupancy the launch caps (`at_allowed`) gets none: the warp samples of an instruction say nothing about those.
A kernel whose report holds no per-instruction counters (a CSV export, a capture without SourceCounters) keeps
`where` None; so does a finding of any other kind. A coalescing or sector-use finding whose top instructions are
one wide access split into narrow ones (`passes.split_vectors`) takes the lever that merges them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from ..knowledge.wording import Kind
from ..readers.instructions import InstructionSource
from .finding import Finding
from .split_vectors import explains, split_access

__all__ = ["COUNTER_OF_KIND", "NO_WHERE", "attach_where"]

COUNTER_OF_KIND: dict[Kind, str] = {
    Kind.COALESCING: "excessive_global_sectors",
    Kind.SECTOR_USE: "excessive_global_sectors",
    Kind.BANK_CONFLICTS: "excessive_shared_wavefronts",
    Kind.LANE_EFFICIENCY: "lanes_lost",
    Kind.LATENCY: "samples",
}

# The access steps a split wide access replaces (not a library's: its code is not the user's to change).
SPLIT_LEVERS = frozenset({(Kind.COALESCING, "coalesce"), (Kind.SECTOR_USE, "adjacent")})
# Findings whose cause no instruction holds: (kind, variant).
NO_WHERE: frozenset[tuple[Kind, str]] = frozenset({(Kind.LATENCY, "idle"), (Kind.LATENCY, "unmeasured"),
                                                   (Kind.LATENCY, "at_allowed")})


def attach_where(findings: Iterable[Finding], instructions: InstructionSource | None,
                 read: bool = True) -> list[Finding]:
    """The findings, each of a kind with a counter (but those of `NO_WHERE`) given the top instructions by it where
    `instructions` has it.

    Only the counters of the findings present are read (a few instanced metrics, once per kernel). `read=False`:
    use only the counters already read (a group's findings, from its longest launch's own diagnosis, so that a
    report read in a child process, which sends back only what was read, gives the same as one read here).
    """
    found = list(findings)
    if instructions is None:
        return found
    out = []
    for f in found:
        counter = None if (f.kind, f.variant) in NO_WHERE else COUNTER_OF_KIND.get(f.kind)
        top = instructions.top(counter, read) if counter is not None else None
        if top is None:
            out.append(f)
            continue
        split = split_access(top) if (f.kind, f.lever) in SPLIT_LEVERS else None
        if split is not None and explains(split, f.factor):
            f = dataclasses.replace(f, lever="split_vector", figures={**f.figures, **split.figures()})
        out.append(dataclasses.replace(f, where=top))
    return out
