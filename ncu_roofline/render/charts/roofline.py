"""Hierarchical roofline charts, drawn by matplotlib and returned as inline SVG text.

The input is plain data defined here (`Roof`, `Point`, `ChartSpec`), so this module depends on
nothing else in the package but `svg.py` (the style and SVG clean-up every chart shares) and is
easy to test. `render_roofline_svg` returns an `<svg>`
element (no XML prolog, no DOCTYPE) ready to paste into HTML:

- log-log axes, x = arithmetic intensity (FLOP/byte), y = performance (FLOP/s);
- bandwidth roofs rise up to their ridge with the highest compute roof, compute roofs run flat
  from their ridge with the highest bandwidth roof to the right edge, ridge points are marked;
- one marker per kernel and memory level: shape by level, colour by the roof that binds it, the
  levels of one kernel joined by a thin grey line;
- hooks for the page's JavaScript: every point is a `<g class="pt" data-kernel=... data-level=...>`
  holding a `<title>` tooltip with exact numbers, roofs are `<g id="roof-<name>" class="roof"
  data-roof=... data-kind=...>`, ridge markers `<g class="ridge" data-roof=...>`, and the line
  joining a kernel's levels `<g class="link" data-link=<kernel id>>`.

The same input gives byte-identical SVG: fixed hash salt, no date, matplotlib's own defaults
rather than the caller's rcParams, and no generated group ids. Default axes depend on the roofs
only (widened for points outside), so two reports of the same GPU line up.
"""

from __future__ import annotations

import math
import re
import textwrap
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from xml.sax.saxutils import escape, quoteattr

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator

from .ceilings import Marker, draw_ceilings
from .legend import draw_legends
from .reuse import discard, figure_for
from .spec import (
    LEVEL_MARKERS,
    LEVEL_NAMES,
    OTHER_LEVEL_MARKER,
    PALETTE,
    ChartSpec,
    Point,
    Roof,
    default_ranges,
    finite_positive,
    roof_family,
    si_text,
    valid_points,
    valid_roofs,
)
from .svg import chart_style, figure_svg_kept_axes, xml_text

# Fixed margins in inches (no layout engine), so the line angles and label positions computed
# before drawing hold in the output and every chart of one size has the same plot area.
_MARGIN_LEFT_IN = 1.0
_MARGIN_RIGHT_IN = 1.3       # room for the legends
_MARGIN_RIGHT_BARE_IN = 0.3  # no points, no legends
_MARGIN_TOP_IN = 0.4
_MARGIN_BOTTOM_IN = 0.5
_ANNOTATION_LINE_IN = 0.15
_ANNOTATION_FONT_PT = 7.5
_ROOF_FONT_PT = 7.5
_CHAR_WIDTH_EM = 0.56        # average DejaVu Sans glyph width, to estimate label lengths
_MIN_WIDTH_IN = 3.0
_MARKER_PT = 5.5             # a marker's size where a point gives none
_MIN_HEIGHT_IN = 2.0

_UNSAFE_ID_CHARS = re.compile(r"[^A-Za-z0-9_-]")  # ids usable as CSS selectors unescaped
_GROUP_OPEN = re.compile(r'<g id="([^"]*)"(/?)>')
_INDENT = re.compile(r"\n +<")
_LONE_MARKER_GROUP = re.compile(r"<g>\n(<use [^>]*/>)\n</g>")


@dataclass(frozen=True)
class _Hook:
    """What the SVG post-processing adds to one matplotlib group: attributes and a tooltip."""

    attrs: dict[str, str]
    title: str | None = None


@dataclass(frozen=True)
class _Plot:
    """A spec reduced to what is drawn: valid roofs and points, axis limits, plot-area size."""

    bandwidths: list[Roof]
    computes: list[Roof]
    points: list[Point]
    x_range: tuple[float, float]
    y_range: tuple[float, float]
    clip_points: bool
    axes_width_in: float
    axes_height_in: float
    x_unit: str = "FLOP/byte"
    y_unit: str = "FLOP/s"
    x_label: str = "Arithmetic intensity (FLOP/byte)"
    y_label: str = "Performance (FLOP/s)"

    def inches_per_decade(self) -> tuple[float, float]:
        """Plot-area inches per decade along x and along y."""
        x_decades = math.log10(self.x_range[1] / self.x_range[0])
        y_decades = math.log10(self.y_range[1] / self.y_range[0])
        return self.axes_width_in / x_decades, self.axes_height_in / y_decades

    def bandwidth_angle_deg(self) -> float:
        """On-screen angle of every bandwidth roof (slope 1 in log-log)."""
        per_x, per_y = self.inches_per_decade()
        return math.degrees(math.atan2(per_y, per_x))


@dataclass
class _Hooks:
    """Gid tokens handed to matplotlib, mapped to the attributes they become in the SVG."""

    prefix: str
    by_token: dict[str, _Hook] = field(default_factory=dict)
    used_ids: set[str] = field(default_factory=set)

    def add(self, attrs: dict[str, str], title: str | None = None, name: str | None = None) -> str:
        """Register one group, with the element id `prefix + name` if `name` is given.

        Returns the gid to set on the artist. Ids are made unique (`roof-dram-2`).
        """
        if name is not None:
            element_id = _UNSAFE_ID_CHARS.sub("-", self.prefix + name)
            if element_id in self.used_ids:
                n = 2
                while f"{element_id}-{n}" in self.used_ids:
                    n += 1
                element_id = f"{element_id}-{n}"
            self.used_ids.add(element_id)
            attrs = {"id": element_id, **attrs}
        token = f"ncuhook{len(self.by_token)}"
        self.by_token[token] = _Hook(attrs, title)
        return token


NOT_DRAWN = ("{title}: chart not drawn. Its values lie outside what a chart can show ({reason}); a capture "
             "whose counters were edited or damaged gives such values. The figures are in the tables.")


def render_roofline_svg(spec: ChartSpec) -> str:
    """Render `spec` to an `<svg>` element string (no prolog), byte-identical for equal input.

    Values a log chart cannot place (peaks or points near the float range's ends, from edited or
    damaged counters) give a paragraph saying so instead of an SVG: the page is still written.
    """
    try:
        with chart_style(), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # numpy's overflow warnings on such values
            fig, hooks = draw_roofline(spec, reuse=True)
            try:
                svg = figure_svg_kept_axes(fig, (spec.x_label, spec.y_label, spec.x_unit, spec.y_unit))
            except BaseException:
                discard(fig)  # a half-written figure is not kept for the next chart
                raise
    except (OverflowError, ZeroDivisionError, ValueError) as exc:
        if isinstance(exc, ValueError) and str(exc) != "math domain error":
            raise  # a malformed spec (an unknown roof kind, a bad range) is a caller's error, not a value's
        return f'<p class="note">{escape(NOT_DRAWN.format(title=spec.title, reason=exc))}</p>'
    # No pyplot: the figure is in no global registry; `reuse.py` keeps it (per thread) for the next chart.
    del fig
    return _decorate_svg(svg, hooks)


def _format_intensity_tick(value: float, _pos: float | None = None) -> str:
    if 1e-3 <= value < 1e5:
        return f"{value:g}"
    return f"1e{round(math.log10(value))}"


def _colour(name: str | None) -> str:
    return PALETTE[roof_family(name)]


def _label_length_in(text: str, font_pt: float) -> float:
    return len(text) * _CHAR_WIDTH_EM * font_pt / 72


def _annotation_lines(spec: ChartSpec) -> list[str]:
    width_chars = int((spec.width_in - 0.2) / (_CHAR_WIDTH_EM * _ANNOTATION_FONT_PT / 72))
    lines: list[str] = []
    for note in spec.annotations:
        lines.extend(textwrap.wrap(xml_text(note), width_chars) or [""])
    return lines


def draw_roofline(spec: ChartSpec, reuse: bool = False) -> tuple[Figure, _Hooks]:
    """Draw the chart on a new figure, or with `reuse` on one kept from an earlier chart (`reuse.py`);
    call inside `svg.chart_style()`."""
    if spec.width_in < _MIN_WIDTH_IN or spec.height_in < _MIN_HEIGHT_IN:
        raise ValueError(f"chart must be at least {_MIN_WIDTH_IN} x {_MIN_HEIGHT_IN} inches, "
                         f"got {spec.width_in} x {spec.height_in}")
    bandwidths, computes = valid_roofs(spec.roofs)
    points = valid_points(spec.points)
    x_range, y_range = default_ranges(spec, bandwidths, computes, points)
    notes = _annotation_lines(spec)

    right_in = _MARGIN_RIGHT_IN if points else _MARGIN_RIGHT_BARE_IN
    bottom_in = _MARGIN_BOTTOM_IN + len(notes) * _ANNOTATION_LINE_IN
    fig_height_in = spec.height_in + len(notes) * _ANNOTATION_LINE_IN
    plot = _Plot(
        bandwidths=bandwidths, computes=computes, points=points, x_range=x_range, y_range=y_range,
        clip_points=spec.x_range is not None or spec.y_range is not None,
        axes_width_in=spec.width_in - _MARGIN_LEFT_IN - right_in,
        axes_height_in=spec.height_in - _MARGIN_TOP_IN - _MARGIN_BOTTOM_IN,
        x_unit=spec.x_unit, y_unit=spec.y_unit, x_label=spec.x_label, y_label=spec.y_label,
    )
    if reuse:
        fig, ax = figure_for(spec.width_in, fig_height_in)
    else:
        fig = Figure(figsize=(spec.width_in, fig_height_in))
        ax = fig.add_subplot()
    try:
        fig.subplots_adjust(left=_MARGIN_LEFT_IN / spec.width_in, right=1 - right_in / spec.width_in,
                            bottom=bottom_in / fig_height_in, top=1 - _MARGIN_TOP_IN / fig_height_in)
        return fig, _draw_on(fig, ax, spec, plot, notes)
    except BaseException:
        discard(fig)  # half drawn: not to be kept for the next chart
        raise


def _draw_on(fig: Figure, ax: Axes, spec: ChartSpec, plot: _Plot, notes: list[str]) -> _Hooks:
    """Draw the chart on `fig`, an empty figure with one axes placed; returns the SVG hooks."""
    hooks = _Hooks(spec.id_prefix)

    title = xml_text(spec.title)
    max_title_chars = int((spec.width_in - _MARGIN_LEFT_IN) / (_CHAR_WIDTH_EM * 10.5 / 72))
    if len(title) > max_title_chars:
        title = title[: max_title_chars - 1] + "\u2026"
    ax.set_title(title, loc="left", y=1.0)  # fixed: no measuring of every tick label to place it (no top ticks)
    if notes:
        fig.text(0.1 / spec.width_in, 0.08 / fig.get_figheight(), "\n".join(notes), ha="left", va="bottom",
                 fontsize=_ANNOTATION_FONT_PT, color="#444444", linespacing=1.35)

    if not (plot.bandwidths or plot.computes or plot.points):
        ax.set_axis_off()
        ax.text(0.5, 0.5, "nothing to plot", transform=ax.transAxes, ha="center", va="center",
                fontsize=12, color="#777777")
        return hooks

    _setup_axes(ax, plot)
    _draw_roofs(ax, plot, hooks)
    draw_ceilings(fig, ax, spec.ceilings, top=max((r.value for r in plot.computes), default=None),
                  fastest=max((r.value for r in plot.bandwidths), default=None), colour=_colour, hook=hooks.add,
                  markers=[Marker(p.intensity, p.flop_per_s, p.size if p.size is not None else _MARKER_PT)
                           for p in plot.points])
    _draw_walls(ax, plot, spec.walls)
    _draw_points(ax, plot, hooks)
    _draw_arrows(ax, plot, hooks, spec.arrows)
    if plot.points:
        draw_legends(ax, plot.points)
    return hooks


def _setup_axes(ax: Axes, plot: _Plot) -> None:
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(*plot.x_range)
    ax.set_ylim(*plot.y_range)
    def y_tick(value: float, _pos: float | None = None) -> str:
        return si_text(value, plot.y_unit, 3)

    for axis, formatter in ((ax.xaxis, _format_intensity_tick), (ax.yaxis, y_tick)):
        axis.set_major_locator(LogLocator(base=10, numticks=30))
        axis.set_major_formatter(FuncFormatter(formatter))
        # No minor ticks: they cost more than half of the drawing time and carry no number.
        axis.set_minor_locator(NullLocator())
    ax.grid(which="major", color="#E8E8E8", linewidth=0.6)
    ax.set_axisbelow(True)
    ax.set_xlabel(plot.x_label)
    ax.set_ylabel(plot.y_label)


def _draw_roofs(ax: Axes, plot: _Plot, hooks: _Hooks) -> None:
    x_low, x_high = plot.x_range
    top = max(plot.computes, key=lambda r: r.value) if plot.computes else None
    fastest = max(plot.bandwidths, key=lambda r: r.value) if plot.bandwidths else None

    for roof in plot.bandwidths:
        x_end = top.value / roof.value if top else x_high
        gid = hooks.add(_roof_attrs(roof), xml_text(roof.label), f"roof-{roof.name}")
        ax.add_line(Line2D([x_low, x_end], [roof.value * x_low, roof.value * x_end], color=_colour(roof.name),
                           linewidth=1.6, solid_capstyle="butt", zorder=2.5, gid=gid))
    for roof in plot.computes:
        x_start = roof.value / fastest.value if fastest else x_low
        gid = hooks.add(_roof_attrs(roof), xml_text(roof.label), f"roof-{roof.name}")
        ax.add_line(Line2D([x_start, x_high], [roof.value, roof.value], color=_colour(roof.name),
                           linewidth=1.6, solid_capstyle="butt", zorder=2.5, gid=gid))
    if top is not None:
        for roof in plot.bandwidths:
            ridge = top.value / roof.value
            title = xml_text(f"Ridge point, {roof.label} \u00d7 {top.label}: {ridge:.3g} {plot.x_unit}")
            gid = hooks.add({"class": "ridge", "data-roof": roof.name}, title, f"ridge-{roof.name}")
            ax.add_line(Line2D([ridge], [top.value], linestyle="none", marker="o", markersize=4,
                               markerfacecolor="white", markeredgecolor="#333333", markeredgewidth=0.9,
                               zorder=2.7, gid=gid))
    _label_bandwidth_roofs(ax, plot)
    _label_compute_roofs(ax, plot)


def _draw_walls(ax: Axes, plot: _Plot, walls: Sequence[tuple[float, str]]) -> None:
    """Vertical dashed walls with their label written up the line."""
    for x, label in walls:
        if not (finite_positive(x) and plot.x_range[0] < x < plot.x_range[1]):
            continue
        ax.axvline(x, color="#777777", linewidth=0.9, linestyle=(0, (2, 2)), zorder=2.2)
        ax.text(x * 1.08, plot.y_range[0] * 3, xml_text(label), rotation=90, ha="left", va="bottom",
                fontsize=_ROOF_FONT_PT - 0.5, color="#555555", zorder=3)


def _roof_attrs(roof: Roof) -> dict[str, str]:
    return {"class": "roof", "data-roof": roof.name, "data-kind": roof.kind}


def _label_bandwidth_roofs(ax: Axes, plot: _Plot) -> None:
    """Labels written on their (parallel) lines, just short of the ridge.

    Near the ridge the lines are far apart and few kernels sit there. Geometry in plot-area
    inches, along the lines (`along`) and across them (`across`); a label that would overlap one
    already placed on a nearby line slides down its own line.
    """
    per_x, per_y = plot.inches_per_decade()
    angle = math.radians(plot.bandwidth_angle_deg())
    cos_a, sin_a = math.cos(angle), math.sin(angle)
    label_height_in = 1.3 * _ROOF_FONT_PT / 72
    gap_in = 0.12
    top = max((r.value for r in plot.computes), default=None)

    def along(log_b: float, log_x: float) -> float:
        return log_x * per_x * cos_a + (log_b + log_x) * per_y * sin_a

    def log_x_at(log_b: float, distance: float) -> float:
        return (distance - log_b * per_y * sin_a) / (per_x * cos_a + per_y * sin_a)

    placed: list[tuple[float, float, float]] = []  # (along, across, length), inches
    for roof in sorted(plot.bandwidths, key=lambda r: -r.value):
        log_b = math.log10(roof.value)
        # Visible stretch of the line, in log10 x.
        start = max(math.log10(plot.x_range[0]), math.log10(plot.y_range[0]) - log_b)
        end = min(math.log10(plot.x_range[1]), math.log10(plot.y_range[1]) - log_b)
        if top is not None:
            end = min(end, math.log10(top) - log_b)
        if end <= start:
            continue
        length = _label_length_in(roof.label, _ROOF_FONT_PT)
        across = log_b * per_y * cos_a  # distance between parallel lines, perpendicular to them
        centre = along(log_b, end) - gap_in - length / 2
        for _ in range(len(placed)):  # each pass slides past at least one label; a bounded loop
            blocking = [
                other_along - (length + other_length) / 2 - gap_in
                for other_along, other_across, other_length in placed
                if abs(across - other_across) < label_height_in
                and abs(centre - other_along) < (length + other_length) / 2 + gap_in - 1e-6
            ]
            if not blocking:
                break
            centre = min(blocking)
        if centre - length / 2 < along(log_b, start):  # no room: middle of the visible stretch
            centre = (along(log_b, start) + along(log_b, end)) / 2
        placed.append((centre, across, length))
        x = 10.0 ** log_x_at(log_b, centre)
        ax.text(x, roof.value * x, xml_text(roof.label), rotation=math.degrees(angle),
                rotation_mode="anchor", ha="center", va="center", fontsize=_ROOF_FONT_PT,
                color="#1A1A1A", zorder=2.6, clip_on=True,
                bbox={"boxstyle": "square,pad=0.15", "facecolor": "white", "edgecolor": "none"})


def _label_compute_roofs(ax: Axes, plot: _Plot) -> None:
    """Labels right-aligned at the right edge, above their lines.

    When the next roof up is too close for two labels (FP16 = FP32 on many consumer parts),
    this label goes under its line if there is room, else above the label before it.
    """
    _per_x, per_y = plot.inches_per_decade()
    text_height = 1.3 * _ROOF_FONT_PT / 72 / per_y  # in decades
    pad = 2.0 / 72 / per_y
    roofs = sorted(plot.computes, key=lambda r: r.value)
    logs = [math.log10(r.value) for r in roofs]
    previous_top = -math.inf  # top of the highest label so far, log10 y
    for index, roof in enumerate(roofs):
        next_is_close = index + 1 < len(roofs) and logs[index + 1] - logs[index] < text_height + pad
        if next_is_close and logs[index] - pad - text_height >= previous_top:
            bottom = logs[index] - pad - text_height
        else:
            bottom = max(logs[index] + pad, previous_top)
        previous_top = bottom + text_height
        ax.annotate(xml_text(roof.label), xy=(plot.x_range[1], 10.0 ** bottom), xytext=(-4, 0),
                    textcoords="offset points", ha="right", va="bottom", fontsize=_ROOF_FONT_PT,
                    color="#1A1A1A", zorder=2.6, annotation_clip=False)


def _point_title(point: Point, plot: _Plot) -> str:
    level = LEVEL_NAMES.get(point.level, point.level)
    note = f"\n{point.note}" if point.note else ""
    return xml_text(f"{point.label}{note}\n{level}: {point.intensity:.4g} {plot.x_unit}, "
                  f"{si_text(point.flop_per_s, plot.y_unit, 4)}\n"
                  f"bound by: {point.bound_by if point.bound_by is not None else 'none'}")


def _draw_points(ax: Axes, plot: _Plot, hooks: _Hooks) -> None:
    by_kernel: dict[str, list[Point]] = {}
    for point in plot.points:
        by_kernel.setdefault(point.kernel_id, []).append(point)
    for kernel_id, group in by_kernel.items():
        if len(group) < 2:
            continue
        group = sorted(group, key=lambda p: p.intensity)
        gid = hooks.add({"class": "link", "data-link": kernel_id})
        ax.add_line(Line2D([p.intensity for p in group], [p.flop_per_s for p in group], color="#BDBDBD",
                           linewidth=0.6, zorder=2.2, clip_on=plot.clip_points, gid=gid))
    for point in plot.points:
        attrs = {"class": "pt", "data-kernel": point.kernel_id, "data-level": point.level}
        gid = hooks.add(attrs, _point_title(point, plot))
        ax.add_line(Line2D([point.intensity], [point.flop_per_s], linestyle="none",
                           marker=LEVEL_MARKERS.get(point.level, OTHER_LEVEL_MARKER),
                           markersize=point.size if point.size is not None else _MARKER_PT,
                           markerfacecolor="none" if point.upper_bound else _colour(point.bound_by),
                           markeredgecolor=_colour(point.bound_by) if point.upper_bound else "white",
                           markeredgewidth=1.2 if point.upper_bound else 0.5, zorder=3, clip_on=plot.clip_points,
                           gid=gid))


def _draw_arrows(ax: Axes, plot: _Plot, hooks: _Hooks, arrows: Sequence[tuple[Point, Point]]) -> None:
    """One arrow per (start, end) pair, between the markers; too short to see: left out."""
    per_x, per_y = plot.inches_per_decade()
    for start, end in arrows:
        if not (valid_points([start]) and valid_points([end])):
            continue
        dx = math.log10(end.intensity / start.intensity) * per_x
        dy = math.log10(end.flop_per_s / start.flop_per_s) * per_y
        if math.hypot(dx, dy) < 0.12:
            continue
        title = xml_text(f"{end.label}: {start.intensity:.4g} \u2192 {end.intensity:.4g} FLOP/byte, "
                       f"{si_text(start.flop_per_s, 'FLOP/s', 4)} \u2192 {si_text(end.flop_per_s, 'FLOP/s', 4)}")
        gid = hooks.add({"class": "arrow", "data-kernel": end.kernel_id}, title)
        annotation = ax.annotate("", xy=(end.intensity, end.flop_per_s),
                                 xytext=(start.intensity, start.flop_per_s),
                                 arrowprops={"arrowstyle": "-|>", "color": "#333333", "linewidth": 1.0,
                                             "shrinkA": 4.0, "shrinkB": 4.5, "mutation_scale": 9},
                                 zorder=3.2, annotation_clip=False)
        if annotation.arrow_patch is not None:
            annotation.arrow_patch.set_gid(gid)


def _decorate_svg(svg: str, hooks: _Hooks) -> str:
    """Strip spare bytes from `svg.figure_svg` text; turn hook gids into ids, data and tooltips.

    matplotlib names every other group (`line2d_12`, `text_3`, ...). Nothing refers to those
    names (markers and clip paths use `<defs>` ids), and they would repeat across the charts of
    one page, so they are dropped.
    """
    # Size: indentation, and the bare group matplotlib wraps around each single marker.
    svg = _INDENT.sub("\n<", svg)
    seen: set[str] = set()

    def rewrite(match: re.Match[str]) -> str:
        hook = hooks.by_token.get(match.group(1))
        self_closing = match.group(2) == "/"
        if hook is None:
            return "<g/>" if self_closing else "<g>"
        seen.add(match.group(1))
        attrs = "".join(f" {key}={quoteattr(xml_text(value))}" for key, value in hook.attrs.items())
        title = f"<title>{escape(hook.title)}</title>" if hook.title is not None else ""
        return f"<g{attrs}>{title}</g>" if self_closing else f"<g{attrs}>{title}"

    svg = _LONE_MARKER_GROUP.sub(r"\1", _GROUP_OPEN.sub(rewrite, svg))
    missing = hooks.by_token.keys() - seen
    if missing:  # a matplotlib change in how groups are written; fail loudly, not silently
        raise RuntimeError(f"roofline SVG: {len(missing)} artist groups not found in matplotlib output")
    return svg
