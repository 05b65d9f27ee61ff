"""One matplotlib figure per chart size, kept and cleared between charts instead of built anew.

Building a figure and its axes, and the tick marks matplotlib makes for them on their first draw, is a
large part of drawing a small chart; so is measuring text, which matplotlib caches per renderer (a kept
figure keeps its Agg canvas, and so that cache). `figure_for` hands out a kept figure with its one axes
emptied: every artist a chart adds (lines, texts, annotations, legends, figure texts) removed, the axes
switched back on, the colour cycle restarted. What a chart sets on the axes themselves (position, title,
scales, limits, locators, formatters, grid, labels) it sets again on every chart (`roofline._draw_on`),
so nothing of one chart shows in the next: the SVG is the same byte for byte as from a new figure. A
figure whose clearing leaves anything behind (an artist of a kind not removed here) is dropped for a new
one, and so is one whose chart failed half way (`discard`).

Kept per thread: two threads never draw on one figure.
"""

from __future__ import annotations

import threading

from matplotlib.axes import Axes
from matplotlib.figure import Figure

_MAX_KEPT = 4  # figure sizes kept per thread (a page has two or three)
_local = threading.local()


def _kept() -> dict[tuple[float, float], tuple[Figure, Axes, int]]:
    kept: dict[tuple[float, float], tuple[Figure, Axes, int]] | None = getattr(_local, "kept", None)
    if kept is None:
        kept = _local.kept = {}
    return kept


def figure_for(width_in: float, height_in: float) -> tuple[Figure, Axes]:
    """A figure of this size with one empty axes: kept from an earlier chart, or new.

    Call inside `svg.chart_style()`; the caller sets the axes' position, title, scales, limits, ticks
    and labels as on a new figure.
    """
    key = (width_in, height_in)
    kept = _kept()
    entry = kept.pop(key, None)
    if entry is not None:
        fig, ax, bare = entry
        if _clear(fig, ax, bare):
            kept[key] = entry  # most recently used last
            return fig, ax
    fig = Figure(figsize=(width_in, height_in))
    ax = fig.add_subplot()
    while len(kept) >= _MAX_KEPT:
        del kept[next(iter(kept))]
    kept[key] = (fig, ax, len(ax.get_children()))
    return fig, ax


def discard(fig: Figure) -> None:
    """Forget `fig` (a chart failed on it half way): the next chart of its size gets a new figure."""
    kept = _kept()
    for key, (kept_fig, _ax, _bare) in list(kept.items()):
        if kept_fig is fig:
            del kept[key]


def _clear(fig: Figure, ax: Axes, bare: int) -> bool:
    """Remove what a chart added; False if the figure is not back to its new state."""
    try:
        for artist in [*ax.lines, *ax.texts, *ax.patches, *ax.artists, *ax.collections, *ax.images, *ax.tables,
                       *fig.texts, *fig.artists, *fig.lines, *fig.patches, *fig.images, *fig.legends]:
            artist.remove()
    except (NotImplementedError, ValueError):  # an artist that cannot be removed: start from a new figure
        return False
    ax.set_axis_on()
    ax.set_prop_cycle(None)  # `plot` colours start again from the first
    return (len(fig.axes) == 1 and fig.axes[0] is ax and not fig.subfigs and ax.get_legend() is None
            and not ax.child_axes and not ax.containers and len(ax.get_children()) == bare)
