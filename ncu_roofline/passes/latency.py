"""The words of a latency finding: what holds the kernel back below every limit, and what to do about it.

Nsight Compute's achieved and theoretical occupancy tell three cases apart: the SMs nearly full of warps
(three quarters of their warp slots or more, whatever the launch allows: more warps seldom hide more latency
than that, and more work in flight per warp is the lever), occupancy at what the launch
allows but that is low (its limiter, registers, shared memory or block size, is the lever), and fewer
warps than the launch allows (more independent work per SM). All three count the SMs' active cycles only:
where the SMs had no warp at all for a large share of the run (their active cycles against their elapsed
ones), that idle time, not stalls within warps, is what the finding names first: the launch's ramp-up and
drain, a partial last wave, too few or uneven blocks.
"""

from __future__ import annotations

from collections.abc import Mapping

REACHED = 0.85  # achieved ÷ theoretical occupancy from which the warps the launch allows are there
FULL = 0.75  # achieved occupancy from which an SM is nearly full of warps
IDLE = 0.2  # SMs without a warp for this share of the run or more: the latency is idle SMs first
_STALLS = "check the warp-stall reasons (Nsight Compute's WarpStateStats section)"
# The latency's words where the SMs were idle: other passes tell that finding by them (`rules_comparison`).
IDLE_CAUSE = ("idle SMs before stalls within warps, from the launch's ramp-up and drain, a partial last wave or too "
              "few blocks")
IDLE_LEVER = ("give every SM work for the whole run: whole waves of blocks (see the tail-effect finding where there is "
              "one) or more, evenly sized blocks; for a short kernel, fuse it with its neighbours or launch it in a "
              "CUDA graph so that its ramp-up and drain are a smaller part of the run")


def idle_share(launch: Mapping[str, float | None]) -> float | None:
    """The share of the run the SMs had no warp (1 − SM active ÷ elapsed cycles) where it is `IDLE` or more."""
    active = launch.get("sm_active_share")
    return None if active is None or 1.0 - active < IDLE else 1.0 - active


def latency_words(launch: Mapping[str, float | None]) -> tuple[str, str]:
    """(what the latency is, after "the rest is latency"; the action) from a launch's occupancy; where the SMs
    were idle much of the run, that first, then what the occupancy says of their active cycles."""
    idle = idle_share(launch)
    text, action = _active_words(launch)
    if idle is None:
        return text, action
    return (f" (the SMs had no warp to run {idle:.0%} of the time: their active cycles are {1 - idle:.0%} of the "
            f"elapsed): {IDLE_CAUSE}; in their active cycles{text}", f"{IDLE_LEVER}; for the active part, {action}")


def _active_words(launch: Mapping[str, float | None]) -> tuple[str, str]:
    """What the occupancy Nsight Compute measured (over the SMs' active cycles) says of the latency."""
    achieved, theoretical = launch.get("achieved_occupancy"), launch.get("theoretical_occupancy")
    if achieved is None or not theoretical:  # without the theoretical figure, what the launch allows is not known
        occ = f" (achieved occupancy {achieved:.0%})" if achieved is not None else ""
        return (f"{occ}: stalls, dependencies, too few warps in flight", f"{_STALLS} and the occupancy; give each SM "
                "more independent work (more warps, more instructions in flight)")
    occ = f" (achieved occupancy {achieved:.0%} of a theoretical {theoretical:.0%})"
    if achieved >= FULL:  # whatever the launch allows: more warps than this seldom hide more latency
        return (f"{occ}: stalls and dependencies within each warp, not too few warps", f"{_STALLS}; with the SMs "
                "nearly full of warps, more work in flight per warp (independent loads issued early, unrolling, "
                "fewer dependent chains) is the lever, not more warps")
    if achieved >= REACHED * theoretical:
        binding = occupancy_limiter(launch)
        if binding is None:
            return (f"{occ}: stalls and dependencies, with as many warps as the launch allows", f"{_STALLS}; the "
                    f"theoretical occupancy of {theoretical:.0%} caps the warps in flight: raise it (Nsight Compute's "
                    "Occupancy section names the limiter: registers, shared memory or block size), or put more work "
                    "in flight per warp")
        what, lever = binding
        return (f"{occ}: stalls and dependencies, with as many warps as the launch allows ({what})", f"{_STALLS}; "
                f"the theoretical occupancy of {theoretical:.0%} caps the warps in flight: {lever}, or put more work "
                "in flight per warp")
    return (f"{occ}: stalls, dependencies, too few warps in flight", f"{_STALLS} and why fewer warps run than the "
            "launch allows (an uneven or short grid, a tail); give each SM more independent work (more warps, "
            "more instructions in flight)")


# Blocks per SM each resource allows (Nsight Compute's launch__occupancy_limit_*), and the lever of each.
_LIMITS = (("occupancy_limit_registers", "registers"), ("occupancy_limit_shared_mem", "shared memory"),
           ("occupancy_limit_blocks", "the blocks-per-SM limit"), ("occupancy_limit_warps", "the warp slots"))


def occupancy_limiter(launch: Mapping[str, float | None]) -> tuple[str, str] | None:
    """(what binds the theoretical occupancy, with the figures; what raises it) from the blocks per SM each
    resource allows, the fewest binding; None where the report holds none of them."""
    limits = {name: v for key, name in _LIMITS if (v := launch.get(key)) is not None and v > 0}
    if not limits:
        return None
    fewest = min(limits.values())
    binding = [name for name, v in limits.items() if v == fewest]
    blocks = f"{fewest:.0f} block{'' if fewest == 1 else 's'}"
    threads = launch.get("block_threads")
    size = f" of {threads:.0f} threads" if threads else ""
    plural = len(binding) > 1 or binding[0] in ("registers", "the warp slots")
    what = f"{' and '.join(binding)} allow{'' if plural else 's'} {blocks}{size} per SM"
    regs = launch.get("registers_per_thread")
    levers = {
        "registers": "fewer registers per thread" + (f" than its {regs:.0f}" if regs else "") +
                     " (__launch_bounds__ or -maxrregcount, fewer values live at once)",
        "shared memory": "less shared memory per block (smaller tiles, or a larger shared-memory carve-out)",
        "the blocks-per-SM limit": "larger blocks (the SM runs only so many blocks at once, whatever their size)",
        "the warp slots": "a block size that fills the SM's warp slots in whole blocks",
    }
    return what, "raise it with " + " and ".join(levers[name] for name in binding)
