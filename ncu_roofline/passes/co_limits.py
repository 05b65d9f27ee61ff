"""The limits as busy as the busiest, in a kernel below every limit (the latency regime).

Below the threshold the busiest limit is picked among near-equals: an rms-norm kernel's L2 throughput at 38.9 %
and its L1/TEX wavefronts at 35.8 % trade places between launches of one kernel. The ceilings under a limit
within a tenth of the busiest (`CO_LIMIT`) explain the gap as much as those under the busiest, so they are
findings too: the same launch gets the same findings whichever of the two its busiest is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from ..knowledge import throughputs as T

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
