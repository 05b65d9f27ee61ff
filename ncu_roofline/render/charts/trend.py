"""Trend charts, drawn by matplotlib and returned as inline SVG text.

`kernel_chart_svg` draws one kernel over the runs: its median launch duration above (dashed: its first run) and,
beneath, the utilisation of the roof that bounds it in each run, coloured by that roof.
`total_chart_svg` draws the total GPU time per run. Both take the plain data of
`views.trend.build_trend_view` (a kernel's `chart` entry, the run labels and totals) and an SVG
hash salt of their own, so the charts of one page share no id.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any
from xml.sax.saxutils import quoteattr

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from ...views import format as F
from ...views.labels import family, short_label
from .spec import PALETTE
from .svg import chart_style, drop_group_ids, figure_svg, xml_text

_DRIFT_COLOUR = "#b3261e"
_LINE_COLOUR = "#0072B2"
_REF_COLOUR = "#8a8f99"
# A flat series fills at most 1/10 of the axis height per % of noise: the y axis spans at least
# this fraction of the median, so ±0.5 % jitter looks flat and a 9 % climb looks like a climb.
_MIN_SPAN = 0.10


def _y_limits(values: Sequence[float]) -> tuple[float, float]:
    """A y range around `values`, at least `_MIN_SPAN` of their median high."""
    lo, hi = min(values), max(values)
    ordered = sorted(values)
    median = ordered[len(ordered) // 2]
    span = max(hi - lo, abs(median) * _MIN_SPAN, 1e-30)
    mid = (lo + hi) / 2
    bottom = max(0.0, mid - span * 0.65)
    top = bottom + span * 1.3 if bottom == 0.0 else mid + span * 0.65
    return bottom, top


def _x_axis(ax: Axes, labels: Sequence[str]) -> None:
    """One tick per run, thinned to about 14; labels slanted when they would collide."""
    n = len(labels)
    step = max(1, math.ceil(n / 14))
    ticks = list(range((n - 1) % step, n, step))  # always the latest run; the first when it fits
    ax.set_xticks(ticks)
    longest = max((len(labels[i]) for i in ticks), default=0)
    rotate = len(ticks) * max(longest, 4) > 70
    ax.set_xticklabels([labels[i] for i in ticks], rotation=30 if rotate else 0, ha="right" if rotate else "center")
    ax.set_xlim(-0.4, n - 0.6)


def _svg_text(fig: Figure, label: str) -> str:
    """The figure as an `<svg>` element without group ids, labelled for screen readers."""
    svg = drop_group_ids(figure_svg(fig))
    return svg.replace("<svg ", f"<svg role=\"img\" aria-label={quoteattr(xml_text(label))} ", 1)


def _figure(width_in: float, height_in: float, rows: int = 1) -> tuple[Figure, list[Axes]]:
    """A figure (no pyplot) with one axes, or two sharing x (3:2) when `rows` is 2."""
    fig = Figure(figsize=(width_in, height_in), layout="constrained")
    FigureCanvasAgg(fig)
    if rows == 1:
        return fig, [fig.add_subplot(1, 1, 1)]
    axes = fig.subplots(rows, 1, sharex=True, gridspec_kw={"height_ratios": [3, 2]})
    return fig, list(axes)


def _draw_duration(ax: Axes, chart: Mapping[str, Any], xs: list[int], colour: str) -> None:
    """The median launch duration per run, the first run's as a dashed line, and the title."""
    durations: list[float | None] = chart["durations_s"]
    known = [d for d in durations if d is not None]
    scale, unit = F.time_unit(max(known, default=0.0))
    ys = [d / scale if d is not None else math.nan for d in durations]
    ax.plot(xs, ys, color=colour, marker="o", markersize=4, linewidth=1.6)
    first = chart["first_s"]
    if first is not None:
        ax.axhline(first / scale, color=_REF_COLOUR, linewidth=0.8, linestyle=(0, (4, 3)), zorder=0)
    if known:
        ax.set_ylim(*_y_limits([d / scale for d in known]))
    ax.set_ylabel(f"median launch ({unit})")
    ax.grid(True, axis="y", color="#e3e6eb", linewidth=0.6)
    drift = chart["drift"]
    flag = "  DRIFT" if drift else ""
    slope = (f", fit {F.signed_pct(chart['slope_pct_per_run'], 2)}/run"
             if chart["slope_pct_per_run"] is not None else "")
    ax.set_title(xml_text(F.short_name(chart["name"], 64)) + "\n"
                 + f"{F.seconds(chart['first_s'])} → {F.seconds(chart['last_s'])} "
                 + f"({F.signed_pct(chart['change_pct'])}{slope}){flag}",
                 fontsize=9, loc="left", color=_DRIFT_COLOUR if drift else "#1d2330")


def _draw_utilization(ax: Axes, chart: Mapping[str, Any], xs: list[int]) -> None:
    """The utilisation of the bounding roof per run, each point coloured by that roof."""
    utils = [u * 100 if u is not None else math.nan for u in chart["utilization"]]
    bounds: list[str | None] = chart["bound_by"]
    ax.plot(xs, utils, color="#9aa1ad", linewidth=1.0, zorder=1)
    roofs_seen: list[str | None] = []
    for x, u, b in zip(xs, utils, bounds, strict=False):
        if math.isnan(u):
            continue
        ax.scatter([x], [u], color=PALETTE.get(family(b), PALETTE["other"]), s=22, zorder=2)
        if b not in roofs_seen:
            roofs_seen.append(b)
    top_u = max([u for u in utils if not math.isnan(u)] + [100.0])
    ax.set_ylim(0, top_u * 1.08)
    ax.set_ylabel("bounding limit (%)")
    ax.grid(True, axis="y", color="#e3e6eb", linewidth=0.6)
    if roofs_seen:
        handles = [Line2D([], [], linestyle="none", marker="o", markersize=5,
                          color=PALETTE.get(family(b), PALETTE["other"]), label=short_label(b)) for b in roofs_seen]
        ax.legend(handles=handles, loc="lower left", ncol=len(handles), frameon=False,
                  fontsize=7.5, handletextpad=0.2, columnspacing=0.8, borderaxespad=0.2)


def kernel_chart_svg(chart: Mapping[str, Any], labels: Sequence[str], salt: str) -> str:
    """Duration over runs and, beneath, the utilisation of the bounding roof, as one SVG.

    `chart` is a kernel's `chart` entry of the trend view (`name`, `durations_s`, `utilization`,
    `bound_by`, `first_s`, `last_s`, `change_pct`, `slope_pct_per_run`, `drift`); `labels` are
    the run labels, oldest first; `salt` keeps this chart's SVG ids apart from the page's others.
    """
    xs = list(range(len(labels)))
    colour = _DRIFT_COLOUR if chart["drift"] else _LINE_COLOUR
    with chart_style(salt):
        fig, (top, bottom) = _figure(6.4, 4.0, rows=2)
        try:
            _draw_duration(top, chart, xs, colour)
            _draw_utilization(bottom, chart, xs)
            _x_axis(bottom, labels)
            return _svg_text(fig, f"Duration and utilisation of its bounding roof over runs: {chart['name']}")
        finally:
            fig.clear()
            del fig


def total_chart_svg(labels: Sequence[str], totals: Sequence[float | None], salt: str,
                    odd: Sequence[int] = ()) -> str:
    """Total GPU time per run, as one SVG; the runs listed in `odd` are drawn hollow."""
    xs = list(range(len(labels)))
    known = [t for t in totals if t is not None]
    scale, unit = F.time_unit(max(known, default=0.0))
    with chart_style(salt):
        fig, (ax,) = _figure(9.0, 3.0)
        try:
            ys = [t / scale if t is not None else math.nan for t in totals]
            ax.plot(xs, ys, color="#1d2330", marker="o", markersize=4.5, linewidth=1.8)
            hollow = [i for i in odd if not math.isnan(ys[i])]
            if hollow:
                ax.plot(hollow, [ys[i] for i in hollow], linestyle="none", marker="o", markersize=7,
                        markerfacecolor="#ffffff", markeredgecolor="#b3261e", markeredgewidth=1.4)
            if known:
                ax.axhline(known[0] / scale, color=_REF_COLOUR, linewidth=0.8, linestyle=(0, (4, 3)), zorder=0)
                ax.set_ylim(*_y_limits([t / scale for t in known]))
            ax.set_ylabel(f"total GPU time ({unit})")
            title = "Total GPU time per run (dashed: the first run"
            title += "; hollow: a different number of kernels)" if hollow else ")"
            ax.set_title(title, fontsize=9.5, loc="left")
            ax.grid(True, axis="y", color="#e3e6eb", linewidth=0.6)
            _x_axis(ax, labels)
            return _svg_text(fig, "Total GPU time per run")
        finally:
            fig.clear()
            del fig


__all__ = ["kernel_chart_svg", "total_chart_svg"]
