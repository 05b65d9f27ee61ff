"""Ceilings on a roofline chart: dashed lines under the roofs, each with a label placed clear of every other.

A kernel's chart may draw several ceilings under one roof a few percent apart (FMA balance 95 %, lane
efficiency 91 %, issue share 78 % of FP32): labels at fixed offsets from their lines would overlap each other,
the roofs' labels and the markers. Each label is therefore placed in turn at the first of a list of candidate
positions (under its line at the right end, then stacked below that, then above, then further along the line)
whose outline, measured by matplotlib's renderer, is inside the plot area and overlaps no label placed before
it (the roofs' labels included) and, where a position allows it, no marker. Outlines are polygons in display
coordinates, so a roof label written along a sloped line counts as the rotated box it is, not its bounding
rectangle.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
from matplotlib.lines import Line2D

from .spec import Roof, roof_family, valid_roofs
from .svg import xml_text

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.backend_bases import RendererBase
    from matplotlib.figure import Figure
    from matplotlib.text import Text

Outline = list[tuple[float, float]]  # a convex polygon, display coordinates
Hook = Callable[..., str]  # roofline's `_Hooks.add`: (attrs, title, name) -> gid

_FONT_PT = 7.0
_MARGIN_PX = 1.0     # kept between two outlines
_STACK = 10          # labels a ceiling's label may be stacked under its preferred place
_ALONG = 8           # further places along its line, each a step towards the line's start
_PAD = 0.15          # the labels' white box, in font sizes (matplotlib's `pad`)


@dataclass(frozen=True)
class Marker:
    """A marker drawn on the chart (data coordinates, size in points), which a label should not cover."""

    x: float
    y: float
    size_pt: float


def draw_ceilings(fig: Figure, ax: Axes, ceilings: Sequence[Roof], *, top: float | None, fastest: float | None,
                  colour: Callable[[str | None], str], hook: Hook, markers: Sequence[Marker]) -> None:
    """Dashed lines under the roofs, each labelled where its label overlaps no other label, explained in its
    tooltip. `top`, `fastest`: the highest compute and bandwidth roofs (where the lines end); call after the
    roofs and their labels are drawn, and with the axes' limits set."""
    bandwidths, computes = valid_roofs(ceilings)
    if not (bandwidths or computes):
        return
    renderer = _renderer(fig)
    (x_low, x_high), (y_low, y_high) = ax.get_xlim(), ax.get_ylim()
    placed = [text_outline(t, renderer) for t in ax.texts if t.get_visible() and t.get_text()]
    soft = [_marker_outline(ax, m, fig.dpi) for m in markers]
    lines: list[tuple[Roof, str, tuple[float, float], tuple[float, float]]] = []
    for n, c in enumerate(sorted(computes, key=lambda r: -r.value)):
        start = (c.value / fastest if fastest else x_low, c.value)
        lines.append((c, f"ceiling-{n}-{c.name}", start, (x_high, c.value)))
    for n, c in enumerate(sorted(bandwidths, key=lambda r: -r.value)):
        x_end = top / c.value if top else x_high
        lines.append((c, f"ceiling-bw-{n}-{c.name}", (x_low, c.value * x_low), (x_end, c.value * x_end)))
    # The roofs (solid lines): a label should not cross them. It may cross another ceiling's dashed line, as
    # it must where ceilings lie closer than a label's height; its white box keeps it legible.
    roofs = [_polyline(ax, line) for line in ax.get_lines() if line.get_linestyle() not in ("None", "none", "", " ")]
    for c, name, (x0, y0), (x1, y1) in lines:
        gid = hook({"class": "ceiling", "data-roof": roof_family(c.name) or c.name, "data-kind": c.kind},
                   xml_text(c.title or c.label), name)
        ax.add_line(Line2D([x0, x1], [y0, y1], color=colour(c.name), linewidth=1.1, linestyle=(0, (4, 3)),
                           zorder=2.4, gid=gid))
    column: float | None = None  # the bottom of the last compute ceiling's label
    for c, _name, (x0, y0), (x1, y1) in lines:
        label = ax.text(x1, y1, xml_text(c.label), fontsize=_FONT_PT, color=colour(c.name), zorder=3, clip_on=True,
                        rotation_mode="anchor",
                        bbox={"boxstyle": f"square,pad={_PAD}", "facecolor": "white", "edgecolor": "none",
                              "alpha": 0.85})
        visible = _visible_stretch((x0, y0), (x1, y1), (x_low, x_high), (y_low, y_high))
        flat = c.kind == "compute"
        spots = (_compute_spots if flat else _bandwidth_spots)(ax, visible, label, renderer)
        outline = _place(ax, label, spots, placed, (soft, [p for line in roofs for p in line]), renderer,
                         below=column if flat else None)
        placed.append(outline)
        if flat:  # the next, lower ceiling's label goes under this one: the labels keep their lines' order
            column = min(p[1] for p in outline)


def text_outline(text: Text, renderer: RendererBase) -> Outline:
    """The polygon a text (and its box, if it has one) covers, in display coordinates: its rotated rectangle
    for a text rotated about its anchor, else its bounding rectangle."""
    pad = _pad_px(text)
    angle = text.get_rotation()
    if angle % 360 == 0 or text.get_rotation_mode() != "anchor":
        box = text.get_window_extent(renderer)
        return _rectangle(box.x0 - pad, box.y0 - pad, box.x1 + pad, box.y1 + pad)
    text.set_rotation(0)
    box = text.get_window_extent(renderer)
    text.set_rotation(angle)
    ax_, ay = text.get_transform().transform(text.get_unitless_position())
    cos_a, sin_a = math.cos(math.radians(angle)), math.sin(math.radians(angle))
    return [(ax_ + (x - ax_) * cos_a - (y - ay) * sin_a, ay + (x - ax_) * sin_a + (y - ay) * cos_a)
            for x, y in _rectangle(box.x0 - pad, box.y0 - pad, box.x1 + pad, box.y1 + pad)]


def overlap(a: Outline, b: Outline, margin: float = 0.0) -> bool:
    """Whether two convex polygons overlap (by more than touching), with `margin` kept between them
    (separating-axis test)."""
    for poly in (a, b):
        for i, (x0, y0) in enumerate(poly):
            x1, y1 = poly[(i + 1) % len(poly)]
            nx, ny = y0 - y1, x1 - x0  # the edge's normal
            length = math.hypot(nx, ny)
            if length == 0:
                continue
            nx, ny = nx / length, ny / length
            pa = [x * nx + y * ny for x, y in a]
            pb = [x * nx + y * ny for x, y in b]
            if max(pa) + margin <= min(pb) or max(pb) + margin <= min(pa):
                return False
    return True


def _renderer(fig: Figure) -> RendererBase:
    """A renderer to measure text with: an Agg canvas's (matplotlib's own layout engines measure so too; the
    SVG is still written by the SVG backend)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    renderer: RendererBase = canvas.get_renderer()  # type: ignore[no-untyped-call]
    return renderer


def _rectangle(x0: float, y0: float, x1: float, y1: float) -> Outline:
    return [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]


def _pad_px(text: Text) -> float:
    """The white box around a text, in display pixels (matplotlib's pad is in font sizes)."""
    figure = text.get_figure()
    if text.get_bbox_patch() is None or figure is None:
        return 0.0
    return _PAD * float(text.get_fontsize()) * figure.dpi / 72.0


def _marker_outline(ax: Axes, m: Marker, dpi: float) -> Outline:
    x, y = ax.transData.transform((m.x, m.y))
    half = m.size_pt * dpi / 72.0 / 2
    return _rectangle(x - half, y - half, x + half, y + half)


def _visible_stretch(start: tuple[float, float], end: tuple[float, float], x_range: tuple[float, float],
                     y_range: tuple[float, float]) -> tuple[tuple[float, float], tuple[float, float]] | None:
    """The part of a line (log-log: straight between its ends) inside the axes, as its two ends."""
    (x0, y0), (x1, y1) = start, end
    slope = math.log(y1 / y0) / math.log(x1 / x0) if x1 > x0 and y1 != y0 else 0.0
    lo, hi = max(x0, x_range[0]), min(x1, x_range[1])
    if slope > 0:
        lo = max(lo, x0 * (y_range[0] / y0) ** (1 / slope))
        hi = min(hi, x0 * (y_range[1] / y0) ** (1 / slope))
    elif not y_range[0] <= y0 <= y_range[1]:
        return None
    if hi <= lo:
        return None
    return (lo, y0 * (lo / x0) ** slope), (hi, y0 * (hi / x0) ** slope)


# A candidate place: display position of the label's anchor, its alignment, its angle (degrees), and what
# being there costs (how far it is from the label's first place), in the units of `_place`'s penalties.
HAlign = Literal["left", "center", "right"]
VAlign = Literal["top", "center", "bottom"]
Spot = tuple[float, float, HAlign, VAlign, float, float]


def _compute_spots(ax: Axes, visible: tuple[tuple[float, float], tuple[float, float]] | None, label: Text,
                   renderer: RendererBase) -> list[Spot]:
    """Places for the label of a flat line: under, then above, its right end; under and above it a label's
    width further left each time; stacked under (and over) its right end, a row costing more than crossing a
    roof would (a label next to its line reads best)."""
    if visible is None:
        return []
    (x0, y), (x1, _y) = visible
    left, right = ax.transData.transform((x0, y))[0], ax.transData.transform((x1, y))[0]
    line_y = ax.transData.transform((x1, y))[1]
    label.set_rotation(0)
    box = label.get_window_extent(renderer)
    pad = 2 * _pad_px(label) + 2 * _MARGIN_PX
    width, height = box.width + pad, box.height + pad
    end, gap = right - 4.0, 2.0
    spots: list[Spot] = []
    x, step = end, 0
    while x - width >= left - width / 2:
        spots += [(x, line_y - gap, "right", "top", 0.0, step), (x, line_y + gap, "right", "bottom", 0.0, step + 0.5)]
        x, step = x - width, step + 1
    spots += [(end, line_y - gap - k * height, "right", "top", 0.0, 2.0 * k) for k in range(1, _STACK + 1)]
    spots += [(end, line_y + gap + k * height, "right", "bottom", 0.0, 2.0 * k + 1) for k in range(1, _STACK // 2)]
    return spots


def _bandwidth_spots(ax: Axes, visible: tuple[tuple[float, float], tuple[float, float]] | None, label: Text,
                     renderer: RendererBase) -> list[Spot]:
    """Places for the label of a rising line: written along it, centred on it (its white box breaks the dashes,
    as a roof's label breaks its line), at steps from near its upper end down to its lower end; then beside it,
    one and two label heights off the line on either side, each height costing more than a crossed roof."""
    if visible is None:
        return []
    (x0, y0), (x1, y1) = visible
    (dx0, dy0), (dx1, dy1) = ax.transData.transform([(x0, y0), (x1, y1)])
    angle = math.atan2(dy1 - dy0, dx1 - dx0)
    label.set_rotation(0)
    height = label.get_window_extent(renderer).height + 2 * _pad_px(label) + 2 * _MARGIN_PX
    normal = (-math.sin(angle) * height, math.cos(angle) * height)  # one label height, across the line
    steps = _ALONG + _STACK
    along = [ax.transData.transform((x0 * (x1 / x0) ** t, y0 * (y1 / y0) ** t))
             for t in (1 - j / (steps + 1) for j in range(1, steps + 1))]  # from the upper end down
    return [(float(x + k * normal[0]), float(y + k * normal[1]), "center", "center", math.degrees(angle),
             3.0 * abs(k) + 0.01 * j) for k in (0, -1, 1, -2, 2) for j, (x, y) in enumerate(along)]


def _polyline(ax: Axes, line: Line2D) -> list[Outline]:
    """A drawn line as its segments, each a two-point outline in display coordinates."""
    points = [(float(x), float(y)) for x, y in ax.transData.transform(np.asarray(line.get_xydata(), dtype=float))]
    return [[a, b] for a, b in itertools.pairwise(points)]


# What a place costs beyond its distance (`Spot`): overlapping a placed label (never, where any place is free),
# covering a marker, crossing a roof line.
_LABEL_COST, _MARKER_COST, _ROOF_COST = 1e6, 100.0, 2.5


def _place(ax: Axes, label: Text, spots: Sequence[Spot], placed: Sequence[Outline],
           avoid: tuple[Sequence[Outline], Sequence[Outline]], renderer: RendererBase,
           below: float | None = None) -> Outline:
    """Put `label` at the cheapest spot inside the axes (and under `below`, a display y, where given): its
    distance cost plus what it overlaps (`avoid`: markers, roof-line segments; and the labels placed before,
    which any free spot beats). Returns the outline it takes."""
    inside = ax.get_window_extent(renderer)
    to_data = ax.transData.inverted()
    markers, segments = avoid

    def put(spot: Spot) -> Outline:
        x, y, ha, va, angle, _cost = spot
        label.set_position(tuple(to_data.transform((x, y))))
        label.set_horizontalalignment(ha)
        label.set_verticalalignment(va)
        label.set_rotation(angle)
        return text_outline(label, renderer)

    best: tuple[float, Spot] | None = None
    for spot in sorted(spots, key=lambda s: s[5]):  # the nearest first: stop once no later one can be cheaper
        if best is not None and spot[5] >= best[0]:
            break
        outline = put(spot)
        xs, ys = [p[0] for p in outline], [p[1] for p in outline]
        if min(xs) < inside.x0 or max(xs) > inside.x1 or min(ys) < inside.y0 or max(ys) > inside.y1:
            continue
        if below is not None and max(ys) > below - _MARGIN_PX:
            continue
        score = (spot[5] + _LABEL_COST * sum(overlap(outline, other, _MARGIN_PX) for other in placed)
                 + _MARKER_COST * sum(overlap(outline, m) for m in markers)
                 + _ROOF_COST * sum(overlap(outline, s) for s in segments))
        if best is None or score < best[0]:
            best = (score, spot)
    if best is not None:
        return put(best[1])
    return put(spots[0]) if spots else text_outline(label, renderer)  # no place inside: where it was meant to go
