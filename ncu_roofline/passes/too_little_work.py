"""Too little work: a launch that leaves SMs idle (less than one wave) or under every limit's 5 % (nothing is busy):
its finding, with the launch's geometry (`model.geometry`: block slots, waves, what binds them), and the bound of
spreading the same work over every block slot where one can be stated; a grid under one wave at a limit gets the
same finding beside its limit's (`under_one_wave`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..knowledge import throughputs as T
from ..model.geometry import geometry_figures
from .finding import Finding, Kind

if TYPE_CHECKING:
    from ..model.roofline import KernelModel

_TINY_S = 20e-6  # a kernel this short pays a launch overhead (a few µs) of the order of its run
# A short launch on fewer blocks than SMs with work to spread: at least this long, and with at least one block for
# every this many SMs.
_SPREAD_S, _SPREAD_BLOCKS = 5e-6, 8


def too_little_work_variant(launch: dict[str, float | None], busiest: float | None = None) -> str:
    """Why a kernel is in the too-little-work regime: every limit under its share (nothing is busy, whatever the
    grid: its words then give the grid that explains it), fewer blocks than SMs, or less than one wave."""
    grid, waves, sms = launch.get("grid_blocks"), launch.get("waves_per_sm"), launch.get("sm_count")
    if busiest is None or busiest < T.TOO_LITTLE_WORK_SHARE:
        return "idle_limits"
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
    variant = too_little_work_variant(m.launch, m.limiter_share)
    few = grid is not None and sms is not None and grid < sms
    figures = geometry_figures(m.launch) | {
        "grid": grid, "sms": sms, "idle_sms": (sms - grid) if few and sms is not None and grid is not None else None,
        "waves": waves, "threshold": T.TOO_LITTLE_WORK_SHARE, "busiest": m.limiter_share,
        "duration_us": duration * 1e6 if tiny and duration is not None else None, "tiny": "" if tiny else None,
        "few": "" if few else None, "under": "" if waves is not None and waves < T.MIN_WAVES else None}
    evidence = ("launch__grid_size", "launch__waves_per_multiprocessor", "device__attribute_multiprocessor_count")
    if grid and waves and 0 < waves < T.MIN_WAVES and long and share > 0:
        # Under one wave: the same work split over every block the GPU runs at once (grid ÷ waves), each warp at
        # today's pace, runs at most 1 / waves faster; never past the busiest limit's headroom.
        held = grid / waves
        capped = ("capped_busiest",) if 1 / share < 1 / waves else ()
        limit = m.units[m.bound_by].label if m.bound_by in m.units else (m.bound_by or "").upper()
        more_slots = held if few and sms is not None and held > sms * 1.01 else None  # more than a block per SM
        return Finding(Kind.TOO_LITTLE_WORK, variant, m.bound_by, None, m.bound_by,
                       max(1.0, min(1 / waves, 1 / share)), "split", ("spread", *capped),
                       figures | {"held": held, "more_slots": more_slots, "top_x": max(1.0, 1 / share),
                                  "top_label": limit}, evidence)
    basis: tuple[str, ...] = ("more_work",)
    if bool(grid and sms and grid < sms) and tiny:
        basis += ("tiny",)
    elif bool(grid and sms and grid < sms) and long and not waves:
        basis += ("no_waves_figure",)
    # A short launch: more work per launch also shares its launch overhead. One that leaves SMs without a block while
    # a limit is busy, runs some microseconds and has blocks to spare (a tiled launch, not a final reduction's
    # one block) is told first to fill them.
    spread = (variant == "few_blocks" and duration is not None and duration >= _SPREAD_S and grid is not None
              and sms is not None and grid * _SPREAD_BLOCKS >= sms)
    lever = ("tiny_idle" if spread else "tiny") if tiny else "more"
    return Finding(Kind.TOO_LITTLE_WORK, variant, m.bound_by, None, m.bound_by, None, lever, basis, figures, evidence)


def under_one_wave(m: KernelModel) -> list[Finding]:
    """A grid under one wave at a limit (below every limit it is the too-little-work regime, `too_little_work`): the
    block slots it leaves empty the whole run, and the grid that fills them. The same work over every slot, each
    warp at today's pace, runs at most 1 / waves faster, never past the busiest limit's headroom."""
    figures: dict[str, float | str | None] = geometry_figures(m.launch)
    waves, slots, share = figures.get("waves"), figures.get("slots"), m.limiter_share
    if m.regime == T.TOO_LITTLE_WORK or not share or share <= 0 or not isinstance(waves, float) or \
            not isinstance(slots, float) or not 0 < waves < T.MIN_WAVES:
        return []
    bound = 1.0 / waves
    basis: tuple[str, ...] = ("spread", "capped_busiest") if 1.0 / share < bound else ("spread",)
    limit = m.units[m.bound_by].label if m.bound_by in m.units else (m.bound_by or "").upper()
    figures |= {"held": slots, "top_x": max(1.0, 1.0 / share), "top_label": limit}
    evidence = ("launch__grid_size", "launch__waves_per_multiprocessor", "launch__occupancy_limit_registers",
                "launch__occupancy_limit_shared_mem", "launch__occupancy_limit_warps",
                "launch__occupancy_limit_blocks")
    return [Finding(Kind.TOO_LITTLE_WORK, "under_wave", m.bound_by, None, m.bound_by, max(1.0, min(bound, 1.0 / share)),
                    "one_wave", basis, figures, evidence)]
