"""The trend document (a `compare.trend.Trend`): HTML page, Markdown summary and tidy CSV."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..compare.trend import Trend
    from . import RenderOptions


def render_trend_html(trend: Trend, options: RenderOptions) -> str:
    """The trend page."""
    from ..compare.trend import render_html as page

    return page(trend, options.top)


def render_trend_markdown(trend: Trend, options: RenderOptions) -> str:
    """The trend summary."""
    from ..compare.trend import render_markdown as text

    return text(trend)


def render_trend_csv(trend: Trend, options: RenderOptions) -> str:
    """One tidy row per kernel per run."""
    from ..compare.trend import render_csv as text

    return text(trend)
