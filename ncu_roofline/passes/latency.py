"""The case of a latency finding: what holds the kernel back below every limit, and what to do about it.

Nsight Compute's achieved and theoretical occupancy tell three cases apart: the SMs nearly full of warps
(three quarters of their warp slots or more, whatever the launch allows: more warps seldom hide more latency
than that, and more work in flight per warp is the lever), occupancy at what the launch
allows but that is low (its limiter, registers, shared memory or block size, is the lever), and fewer
warps than the launch allows (more independent work per SM: more blocks, or where the grid already runs two waves
or more, more work in flight per warp). All three count the SMs' active cycles only:
where the SMs had no warp at all for a large share of the run (their active cycles against their elapsed
ones), that idle time, not stalls within warps, is what the finding names first: the launch's ramp-up and
drain, a partial last wave, too few or uneven blocks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..model.geometry import LIMITS, geometry_figures, limiter_figures, occupancy_limiter

if TYPE_CHECKING:
    from ..model.roofline import KernelModel

__all__ = ["FULL", "IDLE", "RAMP_S", "REACHED", "block_fit", "idle_figures", "idle_share", "latency_case",
           "occupancy_limiter", "register_fit", "step_bound"]

REACHED = 0.85  # achieved ÷ theoretical occupancy from which the warps the launch allows are there
FULL = 0.75  # achieved occupancy from which an SM is nearly full of warps
IDLE = 0.2  # SMs without a warp for this share of the run or more: the latency is idle SMs first
RAMP_S = 20e-6  # SMs idle this long or less in a launch: its ramp-up and drain may be all of it
MANY_WAVES = 2.0  # a grid of this many waves or more: warps short of what the launch allows are not for few blocks
Figures = dict[str, float | str | None]
WARP_REGISTER_UNIT = 256  # registers are allocated to a warp 256 at a time (Maxwell to Blackwell)
MAX_REGISTERS = 255  # a thread's most


def idle_share(launch: Mapping[str, float | None]) -> float | None:
    """The share of the run the SMs had no warp (1 − SM active ÷ elapsed cycles) where it is `IDLE` or more."""
    active = launch.get("sm_active_share")
    return None if active is None or 1.0 - active < IDLE else 1.0 - active


def latency_case(launch: Mapping[str, float | None]) -> tuple[str, str, Figures]:
    """(the latency finding's variant, its lever, its figures) from a launch's occupancy; where the SMs were idle
    much of the run, that first."""
    achieved, theoretical = launch.get("achieved_occupancy"), launch.get("theoretical_occupancy")
    figures: Figures = {"achieved": achieved, "theoretical": theoretical or None}
    variant, lever, figures = _active_case(launch, figures)
    idle = idle_share(launch)
    if idle is not None:  # what the occupancy says of the active cycles stays among its figures
        return "idle", "idle", figures | geometry_figures(launch) | {"idle": idle}
    return variant, lever, figures


def _active_case(launch: Mapping[str, float | None], figures: Figures) -> tuple[str, str, Figures]:
    """The latency's case over the SMs' active cycles, from the occupancy Nsight Compute measured."""
    achieved, theoretical = launch.get("achieved_occupancy"), launch.get("theoretical_occupancy")
    if achieved is None or not theoretical:  # without the theoretical figure, what the launch allows is not known
        return "occupancy_unknown", "more_warps", figures
    if achieved >= FULL:  # whatever the launch allows: more warps than this seldom hide more latency
        return "full", "in_flight", figures
    if achieved >= REACHED * theoretical:
        binding = occupancy_limiter(launch)
        if binding is None:
            return "at_allowed", "occupancy", figures
        return "at_allowed", binding[0][0], figures | limiter_figures(launch) | {
            "regs": launch.get("registers_per_thread") or None}
    waves = launch.get("waves_per_sm")
    if waves is not None and waves >= MANY_WAVES:  # the grid fills every SM's block slots: more blocks add no warps
        return "fewer_warps", "in_flight", figures
    return "fewer_warps", "more_warps", figures


def register_fit(launch: Mapping[str, float | None], registers_per_sm: float | None) -> Figures:
    """Where registers alone bind the blocks per SM: the most registers per thread that fit one block more
    (`fit_regs`), and the warps per SM then and now (`fit_warps`, `warps`), as Nsight Compute's occupancy
    calculator counts them (`launch__occupancy_per_register_count`): each warp's registers rounded up to 256, the
    register file over the blocks' warps. Empty where that cannot be said."""
    regs, blocks, threads = (launch.get(k) for k in ("registers_per_thread", "occupancy_limit_registers",
                                                      "block_threads"))
    binding = occupancy_limiter(launch)
    if not (regs and blocks and threads and registers_per_sm) or binding is None or binding[0] != ["registers"]:
        return {}
    others = [v for key, name in LIMITS if name != "registers" and (v := launch.get(key)) is not None and v > 0]
    if others and min(others) < blocks + 1:  # another limit keeps the block count where it is
        return {}
    warps = -(-threads // 32)
    per_warp = registers_per_sm // ((blocks + 1) * warps) // WARP_REGISTER_UNIT * WARP_REGISTER_UNIT
    fit = min(MAX_REGISTERS, per_warp // 32)
    if not 0 < fit < regs:
        return {}
    return {"fit_regs": fit, "fit_warps": (blocks + 1) * warps, "warps": blocks * warps}


def block_fit(launch: Mapping[str, float | None]) -> Figures:
    """Where the blocks-per-SM limit alone binds, the warps per SM larger blocks reach at most (`next_warps`) and
    what caps them then (`next_by`): the warps the register and warp-slot limits allow at today's warps per block,
    which a block of more warps can only round down. Empty where shared memory is allocated (larger blocks may need
    more of it) or nothing more fits."""
    threads, blocks = launch.get("block_threads"), launch.get("occupancy_limit_blocks")
    binding = occupancy_limiter(launch)
    if not threads or not blocks or binding is None or binding[0] != ["block_limit"] or \
            launch.get("shared_memory_per_block"):
        return {}
    warps = -(-threads // 32)
    caps = [(v * warps, name) for key, name in (("occupancy_limit_registers", "registers"),
                                                ("occupancy_limit_warps", "its warp slots"))
            if (v := launch.get(key)) is not None and v > 0]
    if not caps:
        return {}
    most, by = min(caps)
    if most <= blocks * warps:
        return {}
    return {"next_warps": most, "next_by": by, "warps": blocks * warps}


def step_bound(m: KernelModel, lever: str | None, figures: dict[str, Any], speedup: float | None) -> dict[str, float]:
    """What a latency step gives at most where that is less than the finding's whole headroom (`step_x`): more
    warps per SM speed a latency-bound kernel up at most in proportion, from the warps that run now (the
    achieved occupancy's share of the theoretical) to those the step allows (`fit_warps`, `next_warps`); SMs kept
    busy the whole run at most 1 / the share of the run they were active."""
    theoretical, achieved = m.launch.get("theoretical_occupancy"), m.launch.get("achieved_occupancy")
    more = figures.get("fit_warps") if lever == "registers" else figures.get("next_warps") \
        if lever == "block_limit" else None
    bound: float | None = None
    if more and figures.get("warps") and theoretical and achieved:
        bound = more / (figures["warps"] * achieved / theoretical)
    elif lever == "idle" and (active := m.launch.get("sm_active_share")):
        bound = 1.0 / active
    if bound is None or speedup is None or not bound < 0.95 * speedup:
        return {}
    return {"step_x": max(1.0, bound)}


def idle_figures(m: KernelModel, lever: str | None) -> dict[str, float | str | None]:
    """Where SMs idle a launch for longer than its ramp-up and drain can take (`RAMP_S`), fusing it with its
    neighbours, which hides those, is no step: `long_idle`."""
    idle, duration = m.launch.get("sm_active_share"), m.q.duration_s.value if m.q.duration_s is not None else None
    if lever != "idle" or idle is None or duration is None or (1.0 - idle) * duration <= RAMP_S:
        return {}
    return {"long_idle": ""}
