"""The batch index document (a `views.batch_index.BatchIndex`) as its self-contained HTML page."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..views.batch_index import build_batch_index_view
from .html import asset, page

if TYPE_CHECKING:
    from ..views.batch_index import BatchIndex
    from . import RenderOptions


def render_batch_index_html(index: BatchIndex, options: RenderOptions) -> str:
    """`index.html`: every report of the batch (inline CSS, autoescaped, no script).

    The entries are already as the manifest shows them (redacted or not), so `options` changes
    nothing here.
    """
    context = build_batch_index_view(index)
    title = context.pop("title")
    return page("batch_index.html.j2", title=title, css=asset("batch.css"), **context)
