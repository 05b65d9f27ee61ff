"""What every SVG chart shares: one matplotlib style, and SVG text free of what changes run to run.

Charts are drawn inside `chart_style()`: matplotlib's own defaults plus `SVG_RC`, so the caller's
rcParams (styles, notebooks) never change a chart, with an optional hash salt per chart so that
the ids matplotlib derives from it (clip paths, markers) differ between the charts of one page.
`figure_svg` saves a figure as an `<svg>` element: no XML prolog or DOCTYPE, no `<metadata>`
(no date, no creator), so the same drawing gives the same bytes; it measures text through one
cache for all charts (the bytes `savefig` writes, which measures every chart's text anew).
`figure_svg_kept_axes` draws the axes of charts that share them once.
`drop_group_ids` removes the names matplotlib gives every group (`figure_1`, `axes_1`,
`line2d_3`): nothing refers to them, and they would repeat across the charts of one page.
`xml_text` keeps text XML can hold.
"""

from __future__ import annotations

import functools
import io
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Literal

import matplotlib
import matplotlib.style
from matplotlib import rcParams
from matplotlib.backends.backend_svg import RendererSVG
from matplotlib.font_manager import FontProperties
from matplotlib.textpath import TextToPath

if TYPE_CHECKING:
    from matplotlib.figure import Figure
    from matplotlib.typing import RcKeyType

# Everything that shapes the output bytes. Applied on top of matplotlib's defaults so the
# caller's rcParams (styles, notebooks) never change a chart.
SVG_RC: dict[RcKeyType, Any] = {
    "svg.hashsalt": "ncu-roofline",
    "svg.fonttype": "none",  # text stays text: smaller, selectable, searchable
    "text.parse_math": False,  # a "$" in a kernel or report name is a dollar, not mathtext
    "font.family": "sans-serif",
    # Short list: with svg.fonttype "none" matplotlib writes it into every text element.
    "font.sans-serif": ["DejaVu Sans", "Arial", "Helvetica"],
    "font.size": 8.5,
    "axes.titlesize": 10.5,
    "axes.labelsize": 9,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "legend.fontsize": 8,
    "legend.title_fontsize": 8.5,
    "axes.edgecolor": "#555555",
    "xtick.color": "#333333",
    "ytick.color": "#333333",
}
# No date and no creator in the SVG: equal drawings give equal bytes.
SVG_METADATA: dict[str, Any] = {"Date": None, "Creator": None}

_INVALID_XML_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_METADATA = re.compile(r"\s*<metadata>.*?</metadata>", re.DOTALL)
# Clip paths and markers keep their (salted) ids; only the group names go.
_GROUP_ID = re.compile(r'<g id="[^"]*"')


@contextmanager
def chart_style(salt: str | None = None) -> Iterator[None]:
    """matplotlib's defaults plus `SVG_RC`; with `salt`, this chart's own SVG hash salt.

    A salt per chart keeps the SVG ids (clip paths, markers) of the charts of one page apart.
    """
    rc = SVG_RC if salt is None else {**SVG_RC, "svg.hashsalt": salt}
    with matplotlib.style.context("default"), matplotlib.rc_context(rc):
        yield


def figure_svg(fig: Figure) -> str:
    """`fig` as an `<svg>` element: no XML prolog or DOCTYPE, no `<metadata>` block.

    Call inside `chart_style()`, which sets the hash salt and how text is written.
    """
    buffer = io.StringIO()
    if fig.get_layout_engine() is not None:  # the layout engine measures on the renderer savefig sets up
        fig.savefig(buffer, format="svg", metadata=SVG_METADATA)
    else:
        _draw_svg(fig, buffer)
    svg = buffer.getvalue()
    return _METADATA.sub("", svg[svg.index("<svg"):], count=1)


def figure_svg_kept_axes(fig: Figure, labels: tuple[str, ...]) -> str:
    """`figure_svg(fig)` of a one-axes figure, its two axes (ticks, grid, tick and axis labels) copied from an
    earlier chart drawn on the same axes where there is one: a page's roofline charts of one GPU share their axes,
    and drawing them is about a third of drawing such a chart. `labels`: whatever besides the figure's geometry
    and limits shapes the axes' text (their labels, the units their tick labels name).

    The axes are drawn right after the plot area's background (they sit below everything else), so a chart
    drawn without them is the earlier chart's text up to its axes, then its own. Where that text differs,
    or a clip path the axes use is not defined, the chart is drawn whole. The group names matplotlib numbers
    (`line2d_1`, `text_3`) then repeat: `drop_group_ids` (or the caller's own decoration) drops them all, after
    which the bytes are a whole draw's.
    """
    ax = fig.axes[0]
    if not ax.axison:
        return figure_svg(fig)
    key = (tuple(fig.get_size_inches()), ax.get_position().bounds, ax.get_xlim(), ax.get_ylim(), labels,
           rcParams["svg.hashsalt"])
    kept = _KEPT_AXES.get(key)
    if kept is not None:
        head, axes_text, clips = kept
        ax.xaxis.set_visible(False)
        ax.yaxis.set_visible(False)
        try:
            rest = figure_svg(fig)
        finally:
            ax.xaxis.set_visible(True)
            ax.yaxis.set_visible(True)
        if rest.startswith(head) and all(f'<clipPath id="{clip}">' in rest for clip in clips):
            return head + axes_text + rest[len(head):]
    svg = figure_svg(fig)
    start = svg.find('<g id="matplotlib.axis_1">')
    y_axis = _group_end(svg, start) if start >= 0 else -1
    end = _group_end(svg, y_axis) if svg.startswith('<g id="matplotlib.axis_2">', y_axis) else -1
    if end >= 0:
        if len(_KEPT_AXES) >= 16:
            _KEPT_AXES.clear()
        _KEPT_AXES[key] = (svg[:start], svg[start:end], set(_CLIP_REF.findall(svg, start, end)))
    return svg


def _group_end(svg: str, start: int) -> int:
    """Where the next element after the `<g>` opening at `start` begins; -1 where none opens there."""
    if start < 0 or not svg.startswith("<g", start):
        return -1
    depth = 0
    for tag in _G_TAG.finditer(svg, start):
        depth += -1 if tag.group(0) == "</g>" else 0 if tag.group(1) else 1
        if depth == 0:
            return svg.find("<", tag.end())
    return -1


# Axes drawn once, by what places them: the text before them, theirs, and the clip paths they use.
_KEPT_AXES: dict[tuple[object, ...], tuple[str, str, set[str]]] = {}
_G_TAG = re.compile(r"<g\b[^>]*?(/?)>|</g>")
_CLIP_REF = re.compile(r"url\(#([^)]+)\)")


def _draw_svg(fig: Figure, buffer: io.StringIO) -> None:
    """What `fig.savefig(buffer, format="svg")` writes for a figure with no layout engine, no rasterized
    artist (the charts here have none) and the default savefig settings, drawn as `FigureCanvasSVG.print_svg`
    draws it (one display unit per point), but measuring text through `_SharedMetricsRendererSVG`."""
    dpi = fig.dpi
    fig.dpi = 72
    try:
        width, height = fig.get_size_inches()
        renderer = _SharedMetricsRendererSVG(width * 72, height * 72, buffer, image_dpi=dpi,  # type: ignore[no-untyped-call]
                                             metadata=SVG_METADATA)
        fig.draw(renderer)
        renderer.finalize()  # type: ignore[no-untyped-call]
    finally:
        fig.dpi = dpi


class _SharedMetricsRendererSVG(RendererSVG):
    """matplotlib's SVG renderer, with one text-size cache for all charts.

    matplotlib caches text sizes per renderer, and `savefig` makes a new renderer for every chart, so each
    chart measured its tick labels, titles and legend texts again (about a quarter of writing a small chart).
    """

    def get_text_width_height_descent(self, s: str, prop: FontProperties,
                                      ismath: bool | Literal["TeX"]) -> tuple[float, float, float]:
        if ismath:
            size: tuple[float, float, float] = super().get_text_width_height_descent(  # type: ignore[no-untyped-call]
                s, prop, ismath)
            return size
        fonts = (*(tuple(rcParams[key]) for key in _FONT_RC), rcParams["text.hinting_factor"])
        return _text_size(s, prop.copy(), fonts)


# What picks the font file and its scaling for a `FontProperties` beyond its own fields: part of the cache key.
_FONT_RC: tuple[RcKeyType, ...] = ("font.sans-serif", "font.serif", "font.monospace", "font.cursive", "font.fantasy")


@functools.lru_cache(maxsize=4096)
def _text_size(s: str, prop: FontProperties, _fonts: object) -> tuple[float, float, float]:
    size: tuple[float, float, float] = _TEXT_TO_PATH.get_text_width_height_descent(s, prop, False)
    return size


_TEXT_TO_PATH = TextToPath()


def drop_group_ids(svg: str) -> str:
    """Drop the ids matplotlib gives every group (`<g id="line2d_3">` becomes `<g>`)."""
    return _GROUP_ID.sub("<g", svg)


def xml_text(text: str) -> str:
    """Drop characters XML 1.0 cannot hold (control characters, lone surrogates)."""
    return _INVALID_XML_CHARS.sub("", text)


__all__ = ["SVG_METADATA", "SVG_RC", "chart_style", "drop_group_ids", "figure_svg", "figure_svg_kept_axes", "xml_text"]
