"""The diff document (a `compare.diff.Diff`) as an HTML page; the PR comment is `render.diff_markdown`.

The page lays out `views.diff.build_diff_view`. It is self-contained (inline CSS, the report's
sorting script, inline SVG charts with an arrow from every matched group's BASE point to its HEAD
point).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..views.diff import build_diff_view
from .html import asset, page

if TYPE_CHECKING:
    from ..compare.diff import Diff
    from . import RenderOptions

CHART_LAYOUT: dict[str, Any] = {
    "width_in": 9.0,
    "height_in": 5.6,
    "annotations": ("Arrows run from each matched kernel's BASE point to its HEAD point (hover for numbers).",),
}


# --------------------------------------------------------------------------------------------
# HTML


def _chart_svg(chart: dict[str, Any], id_prefix: str) -> str:
    from .charts.roofline import render_roofline_svg
    from .charts.spec import spec_from_view

    return render_roofline_svg(spec_from_view(chart, id_prefix, **CHART_LAYOUT))


def render_diff_html(diff: Diff, options: RenderOptions) -> str:
    """The whole diff page (self-contained: inline CSS, SVG and the report's sorting script)."""
    view = build_diff_view(diff)
    charts = [dict(c, svg=_chart_svg(c, f"d{n}-") if c["points"] else "") for n, c in enumerate(view["charts"])]
    return page("diff.html.j2", title=view["header"]["title"], css=asset("diff.css"), **{**view, "charts": charts})
