"""JSON: every document's own deterministic form (sorted keys, no NaN, null for absent)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..api.analysis import Analysis
    from . import RenderOptions


def render_report_json(analysis: Analysis, options: RenderOptions) -> str:
    """The `ncu-roofline/1` document."""
    return analysis.to_json(redact=options.redact)


def render_document_json(document: Any, options: RenderOptions) -> str:
    """A diff or trend document (`to_json()`: `ncu-roofline-diff/1`, `ncu-roofline-trend/1`)."""
    text: str = document.to_json()
    return text
