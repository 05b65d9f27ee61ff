"""The diff document (a `compare.diff.Diff`): HTML page and Markdown PR comment."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..compare.diff import Diff
    from . import RenderOptions


def render_diff_html(diff: Diff, options: RenderOptions) -> str:
    """The diff page."""
    from ..views.diff import render_diff_html as page

    return page(diff)


def render_diff_markdown(diff: Diff, options: RenderOptions) -> str:
    """The diff as a PR comment."""
    from ..views.diff import render_diff_markdown as text

    return text(diff)
