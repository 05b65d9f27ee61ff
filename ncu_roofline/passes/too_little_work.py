"""Too little work: a launch that leaves SMs idle (less than one wave) or under every limit's 5 %: its finding, and
the bound of spreading the same work over every block slot where one can be stated."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..knowledge import throughputs as T
from .finding import Finding, Kind

if TYPE_CHECKING:
    from ..model.roofline import KernelModel

_TINY_S = 20e-6  # a kernel this short pays a launch overhead (a few µs) of the order of its run


def too_little_work_variant(launch: dict[str, float | None]) -> str:
    """Why a kernel is in the too-little-work regime: fewer blocks than SMs, less than one wave, or every limit
    under its share (`model.throughputs.too_little_work_reason` says the same in words)."""
    grid, waves, sms = launch.get("grid_blocks"), launch.get("waves_per_sm"), launch.get("sm_count")
    if waves is not None and waves < T.MIN_WAVES:
        return "few_blocks" if grid is not None and sms is not None and grid < sms else "under_wave"
    return "idle_limits"


def too_little_work(m: KernelModel) -> Finding:
    """More work per launch; under one wave, the bound of spreading the same work over every block slot."""
    duration = m.q.duration_s.value if m.q.duration_s is not None else None
    tiny = duration is not None and duration < _TINY_S
    long = duration is not None and not tiny
    grid, sms = m.launch.get("grid_blocks"), m.launch.get("sm_count")
    share, waves = m.limiter_share or 0.0, m.launch.get("waves_per_sm")
    variant = too_little_work_variant(m.launch)
    figures = {"grid": grid, "sms": sms, "idle_sms": (sms - grid) if grid is not None and sms is not None else None,
               "waves": waves, "threshold": T.TOO_LITTLE_WORK_SHARE, "busiest": m.limiter_share,
               "duration_us": duration * 1e6 if tiny and duration is not None else None, "tiny": "" if tiny else None}
    evidence = ("launch__grid_size", "launch__waves_per_multiprocessor", "device__attribute_multiprocessor_count")
    if grid and waves and 0 < waves < T.MIN_WAVES and long and share > 0:
        # Under one wave: the same work split over every block the GPU runs at once (grid ÷ waves), each warp at
        # today's pace, runs at most 1 / waves faster; never past the busiest limit's headroom.
        held = grid / waves
        capped = ("capped_busiest",) if 1 / share < 1 / waves else ()
        limit = m.units[m.bound_by].label if m.bound_by in m.units else (m.bound_by or "").upper()
        return Finding(Kind.TOO_LITTLE_WORK, variant, m.bound_by, None, m.bound_by,
                       max(1.0, min(1 / waves, 1 / share)), "split", ("spread", *capped),
                       figures | {"held": held, "top_x": max(1.0, 1 / share), "top_label": limit}, evidence)
    basis: tuple[str, ...] = ("more_work",)
    if bool(grid and sms and grid < sms) and tiny:
        basis += ("tiny",)
    elif bool(grid and sms and grid < sms) and long and not waves:
        basis += ("no_waves_figure",)
    return Finding(Kind.TOO_LITTLE_WORK, variant, m.bound_by, None, m.bound_by, None, "tiny" if tiny else "more",
                   basis, figures, evidence)
