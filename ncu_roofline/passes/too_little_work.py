"""Too little work: a launch that leaves SMs idle (less than one wave) or under every limit's 5 %: its finding, and
the bound of spreading the same work over every block slot where one can be stated."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..knowledge import throughputs as T
from ..model.throughputs import too_little_work_reason
from .finding import Finding

if TYPE_CHECKING:
    from ..model.roofline import KernelModel

_TINY_S = 20e-6  # a kernel this short pays a launch overhead (a few µs) of the order of its run


def too_little_work(m: KernelModel) -> Finding:
    """More work per launch; under one wave, the bound of spreading the same work over every block slot."""
    tiny = m.q.duration_s is not None and m.q.duration_s.value < _TINY_S
    long = m.q.duration_s is not None and not tiny
    action = ("give the launch more independent work (a larger grid, batching several calls into one launch, or "
              "fusing it with its neighbours)" + ("; for a kernel this short, its launch overhead is much of the "
                                                  "cost" if tiny else ""))
    why, grid, sms = too_little_work_reason(m.launch, m.limiter_share), m.launch.get("grid_blocks"), m.launch.get(
        "sm_count")
    share, waves = m.limiter_share or 0.0, m.launch.get("waves_per_sm")
    if grid and waves and 0 < waves < T.MIN_WAVES and long and share > 0:
        # Under one wave: the same work split over every block the GPU runs at once (grid ÷ waves), each warp at
        # today's pace, runs at most 1 / waves faster; never past the busiest limit's headroom.
        held = grid / waves
        note = (f"blocks the GPU runs at once ÷ blocks = {held:,.0f} / {grid:,.0f} (1 / {waves:.2g} waves): the same "
                "work split over every block slot, each warp at the pace it has now, an upper bound for spreading "
                f"the work (changing it counts apart), never past the busiest limit's headroom (1 / {share:.3g})")
        return Finding("too_little_work", m.bound_by, None, why, action + f"; split the same work into at least "
                       f"{held:,.0f} blocks", m.bound_by, max(1.0, min(1 / waves, 1 / share)), note)
    idle, short = bool(grid and sms and grid < sms), ""
    if idle and tiny:
        short = (f"; under {_TINY_S * 1e6:.0f} µs a launch's overhead, a few µs, is of the order of its run, so "
                 "spreading its blocks over more SMs bounds nothing")
    elif idle and long and not waves:
        short = ("; the report does not hold how many blocks an SM runs at once (launch__waves_per_multiprocessor), "
                 "so spreading its blocks has no bound either")
    return Finding("too_little_work", m.bound_by, None, why, action, m.bound_by, None,
                   f"no bound: it depends on how much more work each launch is given{short}")
