"""A partial last wave (tail effect): what it costs a kernel, from its waves and the occupancy Nsight Compute
measured, and its share of the latency finding's headroom, so the two findings never count the same time twice.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ..knowledge import throughputs as T
from ..model.geometry import geometry_figures
from .finding import Finding, Kind
from .latency import RAMP_S
from .libraries import library_of

if TYPE_CHECKING:
    from ..model.roofline import KernelModel


def _last_wave_blocks(grid: float, waves: float, whole: int) -> float:
    """The blocks of the last of `whole` waves: the grid less the `whole` − 1 full waves of grid ÷ waves blocks."""
    return grid - (whole - 1) * grid / waves


def last_wave_occupancy(launch: dict[str, float | None], waves: float, whole: int) -> float | None:
    """The occupancy of the SMs that run the last wave, were every block to take the same time: the last wave's
    blocks spread over min(SMs, blocks) SMs, with their share of the blocks an SM holds at the theoretical
    occupancy. None where the report lacks a figure."""
    grid, sms, theoretical = launch.get("grid_blocks"), launch.get("sm_count"), launch.get("theoretical_occupancy")
    if not grid or not sms or not theoretical:
        return None
    per_sm = grid / waves / sms  # blocks an SM holds at the theoretical occupancy
    tail = _last_wave_blocks(grid, waves, whole)
    active = min(sms, tail)
    if per_sm <= 0 or tail <= 0 or active <= 0:
        return None
    return theoretical * (tail / active) / per_sm


def tail_time_share(launch: dict[str, float | None], waves: float, whole: int) -> float | None:
    """The last wave's share of the run that the measured achieved occupancy implies, or None.

    Full waves run every SM at the theoretical occupancy; the last wave's blocks spread over
    min(SMs, blocks) SMs, with their share of the blocks an SM holds. Achieved occupancy is averaged
    over active cycles, so a last wave lasting T of the run gives (1 − T)·o + T·s·o_t over
    (1 − T) + T·s; solved for T. Every other cause of a shortfall (stalls, imbalance) is counted as
    tail, so T is an upper estimate. None where the report lacks a figure or the measurement
    cannot tell (the last wave's SMs are as full as the others, or achieved is not below theoretical).
    """
    tail_occupancy = last_wave_occupancy(launch, waves, whole)
    theoretical, achieved = launch.get("theoretical_occupancy"), launch.get("achieved_occupancy")
    if tail_occupancy is None or not theoretical or achieved is None or not achieved > 0:
        return None
    grid, sms = launch["grid_blocks"], launch["sm_count"]
    assert grid is not None and sms is not None
    active = min(sms, _last_wave_blocks(grid, waves, whole))
    if tail_occupancy >= theoretical or achieved <= tail_occupancy:
        return None  # the last wave's SMs are as full as the others, or the shortfall has other causes
    if achieved >= theoretical:
        return 0.0  # no shortfall at all: the last wave cost no measurable time
    short = theoretical - achieved
    return short / (short + active / sms * (achieved - tail_occupancy))


def idle_tail_share(launch: dict[str, float | None], waves: float, whole: int) -> tuple[float, float] | None:
    """(the most of the run the last wave can take, the SMs it leaves idle) from the SMs' measured activity, or
    None: a last wave of fewer blocks than SMs leaves SMs without a warp, and a last wave lasting T of the run
    leaves them idle for at least T × their share, so T ≤ the measured idle share ÷ that share."""
    grid, sms, active = launch.get("grid_blocks"), launch.get("sm_count"), launch.get("sm_active_share")
    if not grid or not sms or active is None:
        return None
    tail = _last_wave_blocks(grid, waves, whole)
    idle_sms = sms - min(sms, max(tail, 0.0))
    if idle_sms < 1:
        return None  # every SM has a block of the last wave: activity cannot tell its length
    return min(1.0, (1.0 - active) / (idle_sms / sms)), idle_sms


def tail_effect(m: KernelModel) -> list[Finding]:
    """A partial last wave: the launch's blocks fill `waves` waves, the GPU runs ceil(waves) of them.

    If every block takes the same time (Nsight Compute's Tail Effect rule assumes the same), the
    last wave takes 1 / ceil(waves) of the run. Where the achieved occupancy Nsight Compute measured
    shows it took less (`tail_time_share`), that share T is used. At the full waves' pace all the
    work would take (1 − T)·waves / (ceil(waves) − 1) of the run: the bound is its inverse, never
    past the busiest limit's headroom, and a finding only from `T.TAIL_MIN_SPEEDUP` up.
    """
    waves = m.launch.get("waves_per_sm")
    share = m.limiter_share
    if waves is None or not waves > T.MIN_WAVES or not math.isfinite(waves) or not share or share <= 0:
        return []  # under one wave: `too_little_work.under_one_wave`
    whole = math.ceil(waves)
    last = waves - (whole - 1)  # the last wave's share of a full one
    grid = m.launch.get("grid_blocks")
    per_wave = grid / waves if grid is not None and grid > 0 else None
    if (per_wave is not None and last * per_wave < 0.5) or last < 1e-3:
        return []  # whole waves up to rounding: no block is left over
    uniform = 1.0 / whole
    measured = tail_time_share(m.launch, waves, whole)
    idle = idle_tail_share(m.launch, waves, whole)
    tail_share = min([uniform, *(v for v in (measured, idle[0] if idle else None) if v is not None)])
    bound = (whole - 1) / ((1.0 - tail_share) * waves)
    speedup = min(bound, 1.0 / share)
    if speedup < T.TAIL_MIN_SPEEDUP:
        return []
    name = library_of(m)
    evidence = ("launch__grid_size", "launch__waves_per_multiprocessor",
                "sm__warps_active.avg.pct_of_peak_sustained_active")
    uneven = _uneven(m, waves, whole)
    if uneven is not None:
        return [Finding(Kind.TAIL_EFFECT, "uneven", m.bound_by, None, m.bound_by, None,
                        "even_work" if name is None else "library_grid", ("uneven_blocks",),
                        {"grid": grid, "waves": waves, "per_wave": per_wave, "library": name, **uneven}
                        | geometry_figures(m.launch), evidence)]
    limit = m.units[m.bound_by].label if m.bound_by in m.units else (m.bound_by or "").upper()
    basis: tuple[str, ...]
    figures: dict[str, float | str | None] = {
        "grid": grid, "waves": waves, "whole": whole, "whole_less": whole - 1,
        "last": last if last >= 0.01 else None, "last_small": last,
        "per_wave": per_wave, "uniform": uniform, "work": last / waves, "tail_share": tail_share,
        "top_x": max(1.0, 1.0 / share), "top_label": limit} | geometry_figures(m.launch)
    if idle is not None and tail_share == idle[0] < uniform and (measured is None or idle[0] < measured):
        variant, basis = "idle", ("measured_waves",)
        figures |= {"idle_sms": idle[1], "sms": m.launch["sm_count"], "active": m.launch["sm_active_share"]}
    elif tail_share < uniform:
        variant, basis = "occupancy", ("measured_waves",)
        figures |= {"achieved": m.launch["achieved_occupancy"], "theoretical": m.launch["theoretical_occupancy"]}
    else:
        variant, basis = "uniform", ("uniform_waves",)
    if tail_share < uniform and figures.get("idle_slots") is not None:
        # the block slots the last wave leaves empty, for the share of the run it measurably takes (equal block
        # times: 1 / ceil(waves) of it, 1 − waves ÷ ceil(waves) in all)
        figures["idle_slots"] = tail_share * (1.0 - last)
    if speedup < bound:
        basis += ("capped_busiest",)
    lever = "whole_waves" if name is None else "library_grid"
    figures["library"] = name
    # No factor: the waves' use is not a cap on a roof, and a table would read "tail effect 80 %" as
    # the size of the effect.
    return [Finding(Kind.TAIL_EFFECT, variant, m.bound_by, None, m.bound_by, speedup, lever, basis, figures, evidence)]


def _uneven(m: KernelModel, waves: float, whole: int) -> dict[str, float] | None:
    """The occupancies that rule out equal block times, or None: Nsight Compute measured an achieved occupancy at
    or under the one the last wave alone would hold (`last_wave_occupancy`), below the theoretical. Equal blocks
    keep every full wave at the theoretical and the last at that, so the blocks, or the warps within them, run
    for unequal times, and the waves bound no gain. Only where a block would run past `RAMP_S` at equal times: in
    shorter ones, launching blocks and ramping up may be what keeps the occupancy low."""
    theoretical, achieved = m.launch.get("theoretical_occupancy"), m.launch.get("achieved_occupancy")
    tail_occupancy = last_wave_occupancy(m.launch, waves, whole)
    duration = m.q.duration_s.value if m.q.duration_s is not None else None
    if tail_occupancy is None or not theoretical or achieved is None or duration is None or \
            not tail_occupancy < theoretical or not achieved <= tail_occupancy or duration / whole <= RAMP_S:
        return None
    return {"achieved": achieved, "theoretical": theoretical, "tail_occupancy": tail_occupancy}


def apart_from_tail(found: list[Finding], tail: list[Finding]) -> None:
    """The latency finding beside a partial last wave: the latency's 1 / busy share is the whole headroom, and
    the tail effect's bound is part of it, not more on top. Both are upper bounds (the tail's rests on an upper
    estimate of the last wave's share of the run), so the latency keeps the whole, and says that the tail's
    part is within it; dividing by an upper estimate would understate what the latency's fix alone can give."""
    latency = next((f for f in found if f.kind == "latency" and f.speedup is not None), None)
    if latency is None or latency.speedup is None or not tail or tail[0].speedup is None:
        return
    at = next(i for i, f in enumerate(found) if f is latency)
    # its words say the last wave may be part of it, unless they state the waves already (`latency_case`)
    stated = latency.figures.get("last_fill") is not None
    found[at] = latency.with_basis("tail_within", tail_part=None if stated else "", tail_bound=tail[0].speedup)
