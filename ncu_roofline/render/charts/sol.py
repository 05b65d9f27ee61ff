"""The Speed-Of-Light chart: every kernel at Nsight Compute's SM and memory throughput.

The chart every capture can have, `basic` set included: x = SM (compute) throughput, y = memory
throughput, both in % of peak over elapsed time, with the regime threshold drawn on both axes.
A kernel in the upper band is at a memory limit, in the right band at a compute limit, in the
corner below both it is below every limit. Markers take the colour of the roof family their
limiter belongs to; hollow markers are kernels with too little work. Input is plain data
(`SolPoint`), output an inline `<svg>` element, byte-stable for the same input.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING
from xml.sax.saxutils import quoteattr

from matplotlib.lines import Line2D

from .spec import PALETTE, PALETTE_NAMES
from .svg import chart_style, drop_group_ids, figure_svg, xml_text

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


@dataclass(frozen=True)
class SolPoint:
    """One kernel: its two headline throughputs (fractions) and the family of its limiter."""

    kernel_id: str
    sm: float
    memory: float
    family: str | None
    hollow: bool
    label: str
    size: float | None = None  # marker size in points (a kernel group's share of time); None: the default
    note: str = ""  # one more tooltip line
    bound_label: str = ""  # the limit's own name, as the tables write it (the legend names it beside its colour)


def render_sol_svg(title: str, points: Sequence[SolPoint], threshold: float, salt: str) -> str:
    """The chart as SVG text, with a `<title>` tooltip per kernel."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    with chart_style(salt):
        fig = Figure(figsize=(7.2, 4.2), layout="constrained")
        FigureCanvasAgg(fig)
        ax = fig.add_subplot(1, 1, 1)
        ax.set_xlim(0, 105)
        ax.set_ylim(0, 105)
        ax.set_xlabel("SM (compute) throughput, % of peak")
        ax.set_ylabel("Memory throughput, % of peak")
        # (xml_text: a device name from a damaged report may hold control characters no font has)
        ax.set_title(xml_text(title), loc="left", y=1.0)  # fixed: no measuring of tick labels (no top ticks)
        t = threshold * 100
        ax.axvline(t, color="#8a8f99", linestyle="--", linewidth=0.9)
        ax.axhline(t, color="#8a8f99", linestyle="--", linewidth=0.9)
        ax.text(102, t + 1.5, f"at limit from {t:.0f} % (memory)", ha="right", fontsize=7.5, color="#555555")
        ax.text(t + 1.5, 2, f"at limit from {t:.0f} % (compute)", fontsize=7.5, color="#555555")
        limits: dict[str | None, list[str]] = {}  # per colour, in order: the limits its kernels are bound by
        for p in points:
            named = limits.setdefault(p.family if p.family in PALETTE else "other", [])
            if p.bound_label and p.bound_label not in named:
                named.append(p.bound_label)
        ax.add_line(Line2D([], [], gid="sol-points"))  # where the markers go, above the threshold lines
        handles = [Line2D([], [], marker="o", linestyle="none", color=PALETTE[f],
                          label=xml_text(_legend_label(named) or PALETTE_NAMES.get(f, "other")))
                   for f, named in limits.items()]
        if handles:
            ax.legend(handles=handles, title="Busiest limit", loc="upper left", bbox_to_anchor=(1.01, 1.0),
                      fontsize=7.5, frameon=False)
        svg = figure_svg(fig)  # lays the figure out: the axes' place is known from here on
    svg = svg.replace('<g id="sol-points"/>', _markers(fig, ax, points, f"{salt}sol-clip"), 1)
    svg = drop_group_ids(svg)
    return svg.replace("<svg ", f"<svg role=\"img\" aria-label={quoteattr(xml_text(title))} ", 1)


def _markers(fig: Figure, ax: Axes, points: Sequence[SolPoint], clip_id: str) -> str:
    """One circle per kernel, each in a group with its tooltip, clipped to the plot area.

    Written directly, not as one matplotlib artist each: a capture of a thousand kernels draws in
    milliseconds, not seconds. Positions are the axes' data transform in SVG points (y down).
    """
    scale = 72 / fig.dpi
    height = fig.get_figheight() * 72
    x0, y0, width, box_height = (v * scale for v in ax.bbox.bounds)
    parts = [f'<clipPath id="{clip_id}"><rect x="{x0:.3f}" y="{height - y0 - box_height:.3f}" width="{width:.3f}" '
             f'height="{box_height:.3f}"/></clipPath>\n<g clip-path="url(#{clip_id})">']
    coords = [(p.sm * 100, p.memory * 100) for p in points]
    xy: list[list[float]] = ax.transData.transform(coords).tolist() if coords else []
    for p, (x, y) in zip(points, xy, strict=True):
        if not (math.isfinite(x) and math.isfinite(y)):
            continue  # a figure a chart cannot place (edited or damaged counters): the tables hold it
        colour = PALETTE[p.family if p.family in PALETTE else "other"]
        fill = "0" if p.hollow else "0.85"  # hollow: painted but clear, so its whole disc shows the tooltip
        radius = (p.size if p.size is not None else 5.5) / 2
        note = _escape(chr(10) + p.note) if p.note else ""
        parts.append(f'<g class="pt" data-kernel={quoteattr(p.kernel_id)}><title>{_escape(p.label)}: SM {p.sm:.0%}, '
                     f'memory {p.memory:.0%}{note}</title><circle cx="{x * scale:.3f}" cy="{height - y * scale:.3f}" '
                     f'r="{radius:g}" style="fill: {colour}; fill-opacity: {fill}; stroke: {colour}; '
                     'stroke-opacity: 0.85"/></g>')
    return "\n".join(parts) + "\n</g>"


def _legend_label(limits: list[str]) -> str:
    """The legend entry of one colour: the limits its kernels are bound by, as the tables name them, one a line
    (three at most)."""
    more = [f"+{len(limits) - 3} more"] if len(limits) > 3 else []
    return "\n".join(limits[:3] + more)


def _escape(text: str) -> str:
    return xml_text(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
