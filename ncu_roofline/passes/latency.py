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
        return (f"{occ}: stalls and dependencies, with as many warps as the launch allows", f"{_STALLS}; the "
                f"theoretical occupancy of {theoretical:.0%} caps the warps in flight: raise it (Nsight Compute's "
                "Occupancy section names the limiter: registers, shared memory or block size), or put more work "
                "in flight per warp")
    return (f"{occ}: stalls, dependencies, too few warps in flight", f"{_STALLS} and why fewer warps run than the "
            "launch allows (an uneven or short grid, a tail); give each SM more independent work (more warps, "
            "more instructions in flight)")
