"""The limits as busy as the busiest, in a kernel below every limit (the latency regime), and the ceilings of
the other limits, listed without a bound.

Below the threshold the busiest limit is picked among near-equals: an rms-norm kernel's L2 throughput at 38.9 %
and its L1/TEX wavefronts at 35.8 % trade places between launches of one kernel. The ceilings under a limit
within a tenth of the busiest (`CO_LIMIT`) explain the gap as much as those under the busiest, so they are
findings too: the same launch gets the same findings whichever of the two its busiest is.

A memory-access ceiling (sector use, coalescing, bank conflicts) or the lane efficiency under any other limit,
below every limit or with too little work, is a finding too (`listed`), without a bound: its fix lowers the work
of a limit that does not bound the kernel (the sectors, wavefronts or warp instructions behind its loads' latency,
where Nsight Compute's access-pattern and divergence rules point), by a share of the run the report does not
measure. The FP-mix ceilings are not listed there: a kernel whose FP work bounds nothing gains little from it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from ..knowledge import throughputs as T
from .ceiling_figures import ceiling_figures, ceiling_lever
from .ceilings import SIGNIFICANT, Ceiling
from .finding import Finding, Kind

if TYPE_CHECKING:
    from ..model.roofline import KernelModel

CO_LIMIT = 0.9  # a limit at 90 % or more of the busiest one's share is as much the kernel's limit


class CoLimit(NamedTuple):
    id: str  # a roof ("l1") or a unit ("l1tex__data_pipe_lsu_wavefronts")
    roof: str | None  # the roof itself, or the one the unit's work shows under (None for the issue slots)
    share: float
    is_roof: bool


def co_limits(m: KernelModel) -> list[CoLimit]:
    """The roofs and the units (not a side's headline: its sub-units are named) within `CO_LIMIT` of the busiest
    limit, itself left out, busiest first; none where the busiest is unknown or idle."""
    share, bound = m.limiter_share or 0.0, m.bound_by
    if not share > 0 or bound is None:
        return []
    found = [CoLimit(roof, roof, value, True) for roof, value in m.utilization.items()
             if roof != bound and value >= CO_LIMIT * share]
    found += [CoLimit(uid, T.related_roof(uid), u.share, False) for uid, u in m.units.items()
              if uid != bound and u.parent is not None and u.share >= CO_LIMIT * share]
    return sorted(found, key=lambda c: -c.share)


LISTED = frozenset({"sector_use", "coalescing", "bank_conflicts", "lane_efficiency"})


def listed(m: KernelModel, ceilings: list[Ceiling], named: list[Ceiling], busiest: str) -> list[Finding]:
    """The ceilings of `LISTED` kinds below `SIGNIFICANT` not `named` yet (one lane efficiency: every precision's
    counts the same lanes), as findings without a bound; `busiest` names what bounds the kernel instead."""
    found = []
    lanes = any(c.kind == "lane_efficiency" for c in named)
    for c in sorted(ceilings, key=lambda c: c.factor):
        if c.kind not in LISTED or c.factor >= SIGNIFICANT or any(c is n for n in named) or \
                (c.kind == "lane_efficiency" and lanes):
            continue
        lanes = lanes or c.kind == "lane_efficiency"
        caps = "lane use" if c.kind == "lane_efficiency" else f"{c.roof.upper()} roof"
        lever, more = ceiling_lever(m, c)
        figures = ceiling_figures(c) | more | {"caps": caps, "top_label": busiest}
        if c.kind == "lane_efficiency":
            figures["idle_lanes"] = 1.0 - c.factor
        found.append(Finding(Kind(c.kind), "cap", c.roof, c.factor, m.bound_by, None, lever, ("listed",), figures,
                             tuple(c.evidence)))
    return found
