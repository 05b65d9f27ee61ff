"""Launch geometry in numbers: block slots, waves, the last wave's fill, the idle block-slot share, the nearest grids
that fill whole waves, and what binds the blocks per SM. Arithmetic on the launch facts (`throughputs.launch_facts`),
no words: the catalog (`knowledge.catalog`) says them.

Block slots are the blocks the GPU runs at once: the blocks per SM that the binding `launch__occupancy_limit_*`
allows (the fewest of them) × the SMs. The grid runs in `waves` = grid ÷ slots waves, ceil(waves) of them in time;
with equal block times each takes the same time, so the slot-time left unused is the last wave's empty slots over
the whole run: (ceil(waves) × slots − grid) ÷ (ceil(waves) × slots) = 1 − waves ÷ ceil(waves).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

# Blocks per SM each resource allows (Nsight Compute's launch__occupancy_limit_*), and the lever of each.
LIMITS = (("occupancy_limit_registers", "registers"), ("occupancy_limit_shared_mem", "shared_memory"),
          ("occupancy_limit_blocks", "block_limit"), ("occupancy_limit_warps", "warp_slots"))
# Slots from the limits agree with grid ÷ Nsight Compute's waves to this share, or the waves' figure decides.
_AGREE = 0.01
Launch = Mapping[str, float | None]


def occupancy_limiter(launch: Launch) -> tuple[list[str], float] | None:
    """(the levers of what binds the theoretical occupancy, the blocks per SM it allows) from the blocks per SM
    each resource allows, the fewest binding (all of those that tie); None where the report holds none."""
    limits = {name: v for key, name in LIMITS if (v := launch.get(key)) is not None and v > 0}
    if not limits:
        return None
    fewest = min(limits.values())
    return [name for name, v in limits.items() if v == fewest], fewest


@dataclass(frozen=True, slots=True)
class Geometry:
    """One launch's waves. `per_sm` None: the slots come from grid ÷ Nsight Compute's waves, not the limits."""

    grid: float
    slots: float  # blocks the GPU runs at once
    waves: float  # grid ÷ slots (Nsight Compute's launch__waves_per_multiprocessor where held)
    whole: int  # the waves the GPU runs in time: ceil(waves)
    last_fill: float  # the last wave's blocks ÷ slots
    idle_share: float  # the block-slot time left unused over the run: 1 − waves ÷ whole
    grid_down: float | None  # the nearest grid below of whole waves: floor(waves) × slots (None under one wave)
    grid_up: float  # the nearest grid above of whole waves: ceil(waves) × slots
    per_sm: float | None

    @property
    def partial(self) -> bool:
        """Whether the last wave leaves a block slot empty."""
        return self.grid_up - self.grid >= 0.5


def launch_geometry(launch: Launch) -> Geometry | None:
    """The launch's waves from its grid, SMs and occupancy limits (or Nsight Compute's waves figure); None where
    the report holds too little to count block slots."""
    grid, sms, stated = launch.get("grid_blocks"), launch.get("sm_count"), launch.get("waves_per_sm")
    if not grid or grid <= 0 or not math.isfinite(grid):
        return None
    limiter = occupancy_limiter(launch)
    slots = per_sm = None
    if limiter is not None and sms and sms > 0:
        slots, per_sm = limiter[1] * sms, limiter[1]
        if stated and stated > 0 and abs(grid / slots - stated) > _AGREE * stated:
            slots = per_sm = None  # the limits do not give Nsight Compute's waves: its own figure decides
    if slots is None:
        if not stated or stated <= 0 or not math.isfinite(stated):
            return None
        slots = float(round(grid / stated)) or grid / stated
    waves = stated if stated and stated > 0 and per_sm is not None and math.isfinite(stated) else grid / slots
    whole = max(1, math.ceil(waves - 1e-9))
    below = math.floor(waves + 1e-9)
    return Geometry(grid=grid, slots=slots, waves=waves, whole=whole,
                    last_fill=(grid - (whole - 1) * slots) / slots, idle_share=max(0.0, 1.0 - waves / whole),
                    grid_down=below * slots if below >= 1 else None, grid_up=whole * slots, per_sm=per_sm)


# How each lever names the limit (the figures of `limiter_figures`), the figure that binds with it.
_NAMES = {"registers": "registers", "shared_memory": "shared memory", "block_limit": "the blocks-per-SM limit",
          "warp_slots": "block size"}


def limiter_figures(launch: Launch) -> dict[str, float | str | None]:
    """What binds the blocks per SM, as figures: `occ_by` (its name), `occ_blocks` (the blocks per SM it allows),
    and the figure that binds with the first of them where the report holds it: `occ_regs` (registers per
    thread), `occ_smem` (shared memory per block, bytes) or `occ_threads` (threads per block); `occ_end` ("")
    closes the sentence. Empty where the report holds no limit."""
    binding = occupancy_limiter(launch)
    if binding is None:
        return {}
    levers, blocks = binding
    first = levers[0]
    return {"occ_by": " and ".join(_NAMES[n] for n in levers), "occ_blocks": blocks, "occ_end": "",
            "occ_regs": (launch.get("registers_per_thread") or None) if first == "registers" else None,
            "occ_smem": (launch.get("shared_memory_per_block") or None) if first == "shared_memory" else None,
            "occ_threads": (launch.get("block_threads") or None) if first == "warp_slots" else None}


def geometry_figures(launch: Launch) -> dict[str, float | str | None]:
    """The launch's waves as a finding's figures: `grid`, `slots`, `waves`, `whole`, `last_fill` (None for whole
    waves), `idle_slots` (the idle block-slot share), `grid_up` and `grid_down` (the nearest grids of whole waves,
    `grid_down` None under one wave or equal to none), `full_down` (its waves), with the limiter's
    (`limiter_figures`, where the slots come from the limits). Empty where the slots cannot be counted."""
    g = launch_geometry(launch)
    if g is None:
        return {}
    figures: dict[str, float | str | None] = {
        "grid": g.grid, "slots": g.slots, "waves": g.waves, "whole": g.whole,
        "last_fill": g.last_fill if g.partial else None, "idle_slots": g.idle_share if g.partial else None,
        "grid_up": g.grid_up, "grid_down": g.grid_down if g.grid_down and g.grid_down != g.grid else None,
        "full_down": math.floor(g.waves + 1e-9) if g.grid_down else None}
    return figures | (limiter_figures(launch) if g.per_sm is not None else {})
