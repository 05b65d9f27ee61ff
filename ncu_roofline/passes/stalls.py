"""Why warps stall: each reason Nsight Compute counts (`knowledge.stalls`), as its share of the stall cycles, and
what a latency finding says of them.

The values are read through `passes.facts`, so a group's diagnosis, run after its launches' metrics are let go,
and a report read in a child process see them too.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ..knowledge.stalls import FAMILIES, STALLS, StallReason
from .facts import fact

if TYPE_CHECKING:
    from ..knowledge.wording import Figure
    from ..model.roofline import KernelModel

CLEAR = 0.25  # a reason with this share of the stall cycles or more, and `LEAD` times the next, leads them
LEAD = 1.5
SECOND = 0.1  # the runner-up is named from this share of the stall cycles
NAMED = 2  # the reasons a finding names: stall1, stall2


def _measured(m: KernelModel) -> tuple[int, list[tuple[StallReason, float]]] | None:
    """(the first metric family the capture holds, each reason's value in it), or None where it holds none."""
    for family in range(len(FAMILIES)):
        values = [(r, v) for r in STALLS if (v := fact(m, r.names[family])) is not None]
        if values:
            return family, values
    return None


def _shares(values: list[tuple[StallReason, float]]) -> list[tuple[StallReason, float]]:
    total = math.fsum(v for _, v in values if v > 0)
    if not total > 0:
        return []
    return sorted(((r, v / total) for r, v in values if v > 0), key=lambda rv: -rv[1])


def stall_reasons(m: KernelModel) -> list[tuple[StallReason, float]] | None:
    """The kernel's stall reasons with their share of the stall cycles, the largest first (reasons with none left
    out; `selected` is no stall), read in the first metric family the capture holds. None: the capture holds no
    stall data; an empty list: it counts no stall cycle."""
    measured = _measured(m)
    return None if measured is None else _shares(measured[1])


def leading(found: list[tuple[StallReason, float]]) -> StallReason | None:
    """The reason that leads the stall cycles clearly (`CLEAR` of them, `LEAD` times the next), or None."""
    if not found or found[0][1] < CLEAR:
        return None
    if len(found) > 1 and found[0][1] < LEAD * found[1][1]:
        return None
    return found[0][0]


# Latency variants whose lever answers a question before why warps stall: SMs idle much of the run (their lever keeps
# every SM busy); a limit the report does not measure (its lever collects it); as many warps as the launch allows
# (the resource that caps them is the lever: more warps hide whatever the leading stall is).
# Variants whose own lever comes first: idle SMs, an unmeasured limit, the occupancy cap, and fewer warps than the
# launch allows (more warps in flight before the stalls of the few that run).
OWN_LEVER = frozenset({"idle", "unmeasured", "at_allowed", "fewer_warps"})
# Reasons that are no lever below every limit: warps waiting to be selected are plenty, not a cause of latency.
NO_LEVER = frozenset({"not_selected", "selected"})


def stall_figures(m: KernelModel, variant: str, lever: str) -> tuple[str, dict[str, Figure], tuple[str, ...]]:
    """(a latency finding's lever, its stall figures, the stall metrics it names): the top reasons and their
    shares (`stall1`, `stall1_share`, `stall2`, `stall2_share`), the lever of a reason that leads them clearly in
    place of `lever` (not for `OWN_LEVER` variants, but where their lever is more work in flight per warp, which
    that reason's lever says how to do); or `stalls_unmeasured` where the capture holds no stall data
    (its words then assert no stall cause and say how to collect them)."""
    measured = _measured(m)
    if measured is None:
        return lever, {"stalls_unmeasured": ""}, ()
    family, found = measured[0], _shares(measured[1])
    figures: dict[str, Figure] = {}
    named = [(r, share) for n, (r, share) in enumerate(found[:NAMED]) if n == 0 or share >= SECOND]
    for n, (r, share) in enumerate(named, 1):
        figures |= {f"stall{n}": r.label, f"stall{n}_share": share}
    lead = leading(found)
    if lead is not None and (variant not in OWN_LEVER or lever == "in_flight") and lead.id not in NO_LEVER:
        lever = lead.lever
    return lever, figures, tuple(r.names[family] for r, _ in named)
