"""What a roofline chart shows, as plain data: roofs, points, ceilings, arrows, and its axes.

`Roof`, `Point` and `ChartSpec` are the input of `charts.roofline`; `spec_from_view` builds a spec
from a view's chart dict. Default axes depend on the roofs only (widened for points outside), so
two reports of the same GPU line up. The palette is keyed by roof family: a point's colour names
the roof (or the roof under which a unit's work shows) that binds the kernel.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

BANDWIDTH = "bandwidth"
COMPUTE = "compute"

# Okabe-Ito colours (colour-blind safe), keyed by the roof family that binds a kernel. Roof lines
# use the same colours, so a point's colour names the roof it sits under.
PALETTE: dict[str | None, str] = {
    "dram": "#0072B2",    # blue
    "l2": "#56B4E9",      # sky blue
    "l1": "#009E73",      # bluish green
    "fp64": "#CC79A7",    # reddish purple
    "fp32": "#D55E00",    # vermillion
    "fp16": "#E69F00",    # orange
    "tensor": "#000000",  # black
    "other": "#6E6E6E",   # a roof name this module does not know
    None: "#A8A8A8",      # bound by no roof (latency, or unknown)
}
PALETTE_NAMES: dict[str | None, str] = {
    "dram": "DRAM", "l2": "L2", "l1": "L1", "fp64": "FP64", "fp32": "FP32", "fp16": "FP16",
    "tensor": "Tensor", "other": "other", None: "none",
}
LEVEL_MARKERS: dict[str, str] = {"dram": "o", "l2": "s", "l1": "^", "global": "o", "shared": "D"}
OTHER_LEVEL_MARKER = "D"  # a level this module does not know
LEVEL_NAMES: dict[str, str] = {"dram": "DRAM", "l2": "L2", "l1": "L1", "global": "global memory",
                               "shared": "shared memory"}

_FALLBACK_X_RANGE = (1e-2, 1e3)
# Compute roofs this many times under the top one (FP64 on consumer parts, 1/64 of FP32) do not
# set the default x axis: they would add decades nobody reads.
_NEGLIGIBLE_ROOF_RATIO = 100


@dataclass(frozen=True)
class Roof:
    """One roof line: a peak bandwidth (bytes/s) or a peak compute rate (FLOP/s)."""

    name: str    # "dram" | "l2" | "l1" | "fp64" | "fp32" | "fp16" | "tensor" | "tensor:<datapath>"
    kind: str    # BANDWIDTH or COMPUTE
    value: float  # bytes/s for a bandwidth roof, FLOP/s for a compute roof
    label: str   # shown on the chart, e.g. "DRAM 2.0 TB/s"
    title: str = ""  # the tooltip, where it says more than the label (a ceiling's value and launches)


@dataclass(frozen=True)
class Point:
    """One kernel at one memory level."""

    kernel_id: str           # stable id, e.g. "k12"
    level: str               # "dram" | "l2" | "l1"
    intensity: float         # FLOP/byte; points with a value <= 0 or not finite are skipped
    flop_per_s: float        # achieved FLOP/s; same rule
    bound_by: str | None     # name of the roof that binds the kernel (sets the colour)
    label: str               # short kernel name for the tooltip
    size: float | None = None  # marker size in points (a kernel group's share of time); None: the default
    note: str = ""           # one more tooltip line (a group's launches and share of GPU time)
    upper_bound: bool = False  # an estimate that can only be too high: drawn hollow, said in the tooltip


@dataclass(frozen=True)
class ChartSpec:
    """Everything one chart shows."""

    title: str
    roofs: Sequence[Roof]
    points: Sequence[Point]
    x_range: tuple[float, float] | None = None  # FLOP/byte; None: from the roofs, see `default_ranges`
    y_range: tuple[float, float] | None = None  # FLOP/s; same
    width_in: float = 8.0
    height_in: float = 5.0
    annotations: Sequence[str] = ()  # extra text lines under the chart
    # Ceilings: dashed lines under their roofs (same colour family), e.g. "FMA balance 83 %".
    ceilings: Sequence[Roof] = ()
    # Axis wording, for charts whose axes are not FLOP (the Instruction Roofline).
    x_label: str = "Arithmetic intensity (FLOP/byte)"
    y_label: str = "Performance (FLOP/s)"
    x_unit: str = "FLOP/byte"
    y_unit: str = "FLOP/s"
    # Vertical walls (x, label), e.g. the access-pattern walls of the Instruction Roofline.
    walls: Sequence[tuple[float, str]] = ()
    # Prefix for the element ids (`roof-dram`, `pt-3`, ...) when a page holds several charts.
    id_prefix: str = ""
    # Arrows from one point to another (a kernel's BASE point to its HEAD point in a diff).
    arrows: Sequence[tuple[Point, Point]] = ()


def spec_from_view(chart: Mapping[str, Any], id_prefix: str, **layout: Any) -> ChartSpec:
    """A ChartSpec from a view's plain chart data (`roofs`, `points`, optional `ceilings`,
    `arrows` and `walls`, each a dict as the views build them); `layout` sets size, axes, notes."""

    def roof(r: Mapping[str, Any]) -> Roof:
        return Roof(r["name"], r["kind"], r["value"], r["label"], r.get("title", ""))

    def point(p: Mapping[str, Any]) -> Point:
        return Point(p["kernel_id"], p["level"], p["intensity"], p["flop_per_s"], p["bound_by"], p["label"],
                     p.get("size"), p.get("note", ""), bool(p.get("upper_bound", False)))

    extra: dict[str, Any] = dict(layout)
    if chart.get("arrows"):
        extra["arrows"] = [(point(a), point(b)) for a, b in chart["arrows"]]
    if "walls" in chart:
        extra["walls"] = [tuple(w) for w in chart["walls"]]
    return ChartSpec(title=chart["title"], roofs=[roof(r) for r in chart["roofs"]],
                     points=[point(p) for p in chart["points"]],
                     ceilings=[roof(c) for c in chart.get("ceilings", [])], id_prefix=id_prefix, **extra)


def si_text(value: float, unit: str, digits: int) -> str:
    # Round first so 999.7e9 reads "1 TFLOP/s", not "1e+03 GFLOP/s".
    rounded = float(f"{value:.{digits}g}")
    for scale, prefix in ((1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(rounded) >= scale:
            return f"{rounded / scale:.{digits}g} {prefix}{unit}"
    return f"{rounded:.{digits}g} {unit}"


def finite_positive(value: float) -> bool:
    return math.isfinite(value) and value > 0


def valid_roofs(roofs: Sequence[Roof]) -> tuple[list[Roof], list[Roof]]:
    """(bandwidth roofs, compute roofs), without those whose value cannot be plotted."""
    for roof in roofs:
        if roof.kind not in (BANDWIDTH, COMPUTE):
            raise ValueError(f"roof {roof.name!r}: kind must be {BANDWIDTH!r} or {COMPUTE!r}, "
                             f"not {roof.kind!r}")
    usable = [r for r in roofs if finite_positive(r.value)]
    return [r for r in usable if r.kind == BANDWIDTH], [r for r in usable if r.kind == COMPUTE]


def valid_points(points: Sequence[Point]) -> list[Point]:
    return [p for p in points if finite_positive(p.intensity) and finite_positive(p.flop_per_s)]


def _decade_floor(value: float) -> float:
    return 10.0 ** math.floor(math.log10(value) + 1e-9)


def _decade_ceil(value: float) -> float:
    return 10.0 ** math.ceil(math.log10(value) - 1e-9)


def _half_decade_ceil(value: float) -> float:
    return float(10.0 ** (math.ceil(2 * math.log10(value) - 1e-9) / 2))


def _checked_range(name: str, limits: tuple[float, float]) -> tuple[float, float]:
    low, high = float(limits[0]), float(limits[1])
    if not (finite_positive(low) and finite_positive(high) and low < high):
        raise ValueError(f"{name} must be two finite positive numbers, low < high; got {limits!r}")
    return low, high


def default_ranges(spec: ChartSpec, bandwidths: list[Roof], computes: list[Roof],
            points: list[Point]) -> tuple[tuple[float, float], tuple[float, float]]:
    """The (x, y) limits a chart of `spec` uses (`valid_roofs` and `valid_points` of it).

    Explicit ranges win. Otherwise x runs whole decades from the lowest ridge / 100 to the
    highest ridge x 100 (room for the compute labels), ignoring compute roofs 100 times under
    the top one; y from a decade under the lowest bandwidth roof at the left edge to a half
    decade above twice the highest compute roof. Both depend on the roofs alone, so two reports of the
    same GPU line up, and are widened only for points that would fall outside.
    """
    b_values = [r.value for r in bandwidths]
    c_values = [r.value for r in computes]

    x_range: tuple[float, float] | None = None
    if b_values and c_values:
        top = max(c_values)
        lowest = min(c for c in c_values if c * _NEGLIGIBLE_ROOF_RATIO >= top)
        x_range = (_decade_floor(lowest / max(b_values) / 100), _decade_ceil(top / min(b_values) * 100))
    elif b_values or c_values:
        x_range = _FALLBACK_X_RANGE
    y_range: tuple[float, float] | None = None
    if x_range is not None:
        y_low = _decade_floor(min(b_values) * x_range[0] / 10) if b_values else _decade_floor(min(c_values) / 1000.0)
        y_high = _half_decade_ceil(2 * max(c_values)) if c_values else _half_decade_ceil(max(b_values) * x_range[1])
        y_range = (y_low, y_high)

    if points:
        xs = [p.intensity for p in points]
        ys = [p.flop_per_s for p in points]
        x_fit = (_decade_floor(min(xs) / 1.5), _decade_ceil(max(xs) * 1.5))
        y_fit = (_decade_floor(min(ys) / 1.5), _half_decade_ceil(max(ys) * 1.5))
        x_range = x_fit if x_range is None else (min(x_range[0], x_fit[0]), max(x_range[1], x_fit[1]))
        y_range = y_fit if y_range is None else (min(y_range[0], y_fit[0]), max(y_range[1], y_fit[1]))

    if x_range is None or y_range is None:  # nothing to plot: any decades will do
        x_range, y_range = _FALLBACK_X_RANGE, (1e9, 1e15)
    if spec.x_range is not None:
        x_range = _checked_range("x_range", spec.x_range)
    if spec.y_range is not None:
        y_range = _checked_range("y_range", spec.y_range)
    return x_range, y_range


def roof_family(name: str | None) -> str | None:
    """Palette key of a roof name: "tensor:src_fp16_dst_fp32" -> "tensor"."""
    if name is None:
        return None
    family = name.split(":", 1)[0].strip().lower()
    return family if family in PALETTE else "other"
