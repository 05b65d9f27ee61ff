"""The two legends of a roofline chart: marker shape by memory level, colour by the bounding roof."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from matplotlib.axes import Axes
from matplotlib.legend import Legend
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from .spec import LEVEL_MARKERS, LEVEL_NAMES, OTHER_LEVEL_MARKER, PALETTE, PALETTE_NAMES, Point, roof_family
from .svg import xml_text


def draw_legends(ax: Axes, points: list[Point]) -> None:
    """Level shapes at the top right outside the plot, busiest-limit colours at the bottom right."""
    levels = list(dict.fromkeys(p.level for p in points))
    levels.sort(key=lambda lv: (list(LEVEL_MARKERS).index(lv) if lv in LEVEL_MARKERS else 99, lv))
    level_handles = [
        Line2D([], [], linestyle="none", marker=LEVEL_MARKERS.get(lv, OTHER_LEVEL_MARKER),
               markersize=6, markerfacecolor="#555555", markeredgecolor="white",
               markeredgewidth=0.5, label=xml_text(LEVEL_NAMES.get(lv, lv)))
        for lv in levels
    ]
    families = {roof_family(p.bound_by) for p in points}
    bound_handles = [Patch(facecolor=colour, edgecolor="none", label=PALETTE_NAMES[family])
                     for family, colour in PALETTE.items() if family in families]
    ax.add_artist(_legend(ax, level_handles, "Level", "upper left", 1.0))
    ax.add_artist(_legend(ax, bound_handles, "Busiest limit", "lower left", 0.0))


def _legend(ax: Axes, handles: Sequence[Line2D | Patch], title: str,
            loc: Literal["upper left", "lower left"], y: float) -> Legend:
    """A frameless legend just right of the plot area."""
    return Legend(ax, handles, [str(h.get_label()) for h in handles], title=title, loc=loc,
                  bbox_to_anchor=(1.03, y), frameon=False, borderaxespad=0.0, handlelength=1.2,
                  handletextpad=0.6, alignment="left")
