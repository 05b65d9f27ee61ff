"""JSON: documents that carry their own deterministic form (`to_json()`: sorted keys, no NaN)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from . import RenderOptions


def render_document_json(document: Any, options: RenderOptions) -> str:
    """A diff or trend document (`ncu-roofline-diff/1`, `ncu-roofline-trend/1`)."""
    text: str = document.to_json()
    return text
