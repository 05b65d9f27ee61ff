"""Figures past anything a GPU counter measures: the rule that sets a launch of an edited or damaged report aside.

No counter of Nsight Compute holds more than 2^64 (1.8e19): nothing the model derives from real counters comes
near `FIGURE_LIMIT` in SI units (a count, bytes or FLOP, a rate, a share of a peak, a launch figure). A figure past
it comes from an edited or damaged report (cells scaled by 1e300, a duration of 1e-300 s), and sums over launches
or products of two such figures would leave the float range further on (a group's summed work, a share × 1000).
"""

from __future__ import annotations

import operator

from .quantities import KernelQuantities, Value
from .throughputs import UnitShare

FIGURE_LIMIT = 1e30
# The shortest duration a measurement can give: one cycle of a 1 THz clock (no GPU clock comes within two orders of
# magnitude of it; Nsight Compute times a kernel in whole nanoseconds). A shorter positive one was edited.
DURATION_FLOOR = 1e-12


def past_range(figures: list[tuple[str, float, str]]) -> tuple[str, float, str] | None:
    """The first of `figures` (name, value, formula) whose magnitude is past `FIGURE_LIMIT` (infinite included;
    NaN is not past it), or None."""
    return next((f for f in figures if abs(f[1]) > FIGURE_LIMIT), None)


def past_range_reason(name: str, value: float, formula: str) -> str:
    """Why a launch with a figure past `FIGURE_LIMIT` is not analysed, in words."""
    source = f" ({formula})" if formula else ""
    return (f"{name} is {value:.3g}{source}, past anything a GPU counter measures (no Nsight Compute counter "
            "exceeds 2^64): the report was edited or damaged; re-export or re-profile it")


def too_short(duration: Value) -> str | None:
    """Why a launch whose duration is positive but under `DURATION_FLOOR` is not analysed (its rates and time share
    would be meaningless), or None."""
    if not 0.0 < duration.value < DURATION_FLOOR:
        return None
    return (f"duration_s is {duration.value:.3g} s ({duration.recipe}), shorter than one cycle of any GPU clock (none "
            "reaches 1 THz; Nsight Compute times kernels in whole nanoseconds): the report was edited or damaged; "
            "re-export or re-profile it")


def magnitude(q: KernelQuantities, peaks: dict[str, Value | None], tensor_peaks: dict[str, Value],
              util: dict[str, float], units: dict[str, UnitShare], launch: dict[str, float | None],
              intensity: dict[str, float | None], achieved: float | None, attainable: dict[str, float | None]) -> float:
    """The sum of the magnitudes of `named_figures` (NaN when one is NaN), in C-level passes: every launch pays
    it."""
    held = [v.value for v in (q.duration_s, q.tensor_pipe_utilization, *q.flop.values(), *q.bytes.values(),
                              *peaks.values(), *q.tensor_paths.values(), *tensor_peaks.values()) if v is not None]
    held.extend(util.values())
    held.extend(map(_SHARE, units.values()))
    # None left out by identity, not by truth: a zero adds nothing, and a block's values (`readers.values`) need
    # no decision for it
    held.extend(v for v in (achieved, *launch.values(), *intensity.values(), *attainable.values()) if v is not None)
    return sum(map(abs, held))


_SHARE = operator.itemgetter(1)  # UnitShare.share


def named_figures(q: KernelQuantities, peaks: dict[str, Value | None], tensor_peaks: dict[str, Value],
                  util: dict[str, float], units: dict[str, UnitShare], launch: dict[str, float | None],
                  intensity: dict[str, float | None], achieved: float | None, attainable: dict[str, float | None]
                  ) -> list[tuple[str, float, str]]:
    """Every figure of a launch's model: (its JSON name, its value in SI units, its formula where it has one), the
    measured ones first."""
    values: list[tuple[str, Value | None]] = [("duration_s", q.duration_s)]
    values.extend((f"work_flop.{p}", v) for p, v in q.flop.items())
    values.extend((f"tensor_ops_by_datapath.{dp}", v) for dp, v in q.tensor_paths.items())
    values.extend((f"traffic_bytes.{lv}", v) for lv, v in q.bytes.items())
    values.extend((f"peaks.{roof}", v) for roof, v in peaks.items())
    values.extend((f"peaks.tensor.{dp}", v) for dp, v in tensor_peaks.items())
    values.append(("tensor_pipe_utilization", q.tensor_pipe_utilization))
    found = [(name, v.value, v.recipe) for name, v in values if v is not None]
    found.extend((f"utilization.{uid}", u.share, u.recipe) for uid, u in units.items())
    found.extend((f"launch.{n}", v, "") for n, v in launch.items() if v is not None)
    found.extend((f"utilization.{r}", u, "") for r, u in util.items())
    found.extend((f"intensity_flop_per_byte.{lv}", v, "") for lv, v in intensity.items() if v is not None)
    found.extend((f"attainable_flop_per_s.{lv}", v, "") for lv, v in attainable.items() if v is not None)
    if achieved is not None:
        found.append(("achieved_flop_per_s", achieved, ""))
    return found
