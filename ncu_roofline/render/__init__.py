"""Renderers: one per output format, behind a small registry.

A renderer has a `name`, a file `extension` and `render(analysis, redact) -> str`. The format can
follow the output file's extension.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..api.analysis import Analysis


@dataclass(frozen=True)
class Renderer:
    name: str
    extension: str
    render: Callable[[Analysis, bool], str]
    description: str


def _json(analysis: Analysis, redact: bool) -> str:
    return analysis.to_json(redact=redact)


def _csv(analysis: Analysis, redact: bool) -> str:
    from .csv import render_csv

    return render_csv(analysis, redact)


def _html(analysis: Analysis, redact: bool) -> str:
    from .html import render_html

    return render_html(analysis, redact)


def _md(analysis: Analysis, redact: bool) -> str:
    from .markdown import render_markdown

    return render_markdown(analysis, redact)


RENDERERS: dict[str, Renderer] = {
    "html": Renderer("html", ".html", _html, "a self-contained HTML report"),
    "md": Renderer("md", ".md", _md, "a Markdown summary for pull requests"),
    "json": Renderer("json", ".json", _json, "the ncu-roofline/1 JSON document"),
    "csv": Renderer("csv", ".csv", _csv, "one row per kernel"),
}


def format_for(fmt: str | None, output: str | None, formats: dict[str, tuple[str, ...]],
               default: str = "json") -> str:
    """--format wins; else the format whose extension the -o file has; else `default`."""
    if fmt:
        return fmt
    if output and output != "-":
        lower = output.lower()
        for name, extensions in formats.items():
            if lower.endswith(extensions):
                return name
    return default


def renderer_for(fmt: str | None, output: str | None, default: str = "html") -> Renderer:
    """The renderer named by `fmt`, else the one whose extension `output` has, else `default`."""
    extensions = {name: (r.extension,) for name, r in RENDERERS.items()}
    return RENDERERS[format_for(fmt, output, extensions, default)]
