"""Renderers: one registry for every document the tool writes, one entry per (document, format).

Documents: `report` (an `api.Analysis`), `diff` (a `compare.diff.Diff`), `trend` (a
`compare.trend.Trend`) and `batch-index` (a `views.batch_index.BatchIndex`). A renderer has a
format `name`, the file `extensions` it answers to (the first is the one written) and
`render(document, options) -> str`. The format follows `--format`, else the `-o` file's
extension, else the document's default.

Each document has one module here (`report.py`, `diff.py` with `diff_markdown.py`, `trend.py`,
`batch_index.py`) holding its renderers; `html.py`, `markdown.py`, `csv.py` and `json.py` hold
what the formats share (the jinja2 environment and page, Markdown escaping, CSV cells). Renderer
modules are imported only when used, so the JSON path never loads matplotlib or jinja2.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

REPORT = "report"
DIFF = "diff"
TREND = "trend"
BATCH_INDEX = "batch-index"
TOP_CHARTS = 12


@dataclass(frozen=True)
class RenderOptions:
    """What a renderer may be asked besides the document itself."""

    redact: bool = False  # report: base names only, no NVTX range names
    groups: bool = False  # report CSV: one row per kernel group instead of one per launch
    top: int = TOP_CHARTS  # trend HTML: chart this many kernels


@dataclass(frozen=True)
class Renderer:
    document: str
    name: str
    extensions: tuple[str, ...]
    render: Callable[[Any, RenderOptions], str]
    # The same text in pieces, for documents that may be too large to hold as one string.
    stream: Callable[[Any, RenderOptions], Iterable[str | bytes]] | None = None
    modules: tuple[str, ...] = ()  # what rendering imports (matplotlib, for charts): `prepare` loads it

    def prepare(self) -> None:
        """Import what rendering needs now (a command does it while its reader processes start)."""
        for module in self.modules:
            importlib.import_module(module)

    @property
    def extension(self) -> str:
        return self.extensions[0]

    def pieces(self, document: Any, options: RenderOptions) -> Iterable[str | bytes]:
        """The rendered text in pieces (one piece where this format does not stream; UTF-8 bytes where
        the format streams them)."""
        if self.stream is not None:
            return self.stream(document, options)
        return (self.render(document, options),)


def _lazy(module: str, function: str) -> Callable[[Any, RenderOptions], Any]:
    """`ncu_roofline.render.<module>.<function>`, imported on first call."""

    def call(document: Any, options: RenderOptions) -> Any:
        fn: Callable[[Any, RenderOptions], Any] = getattr(importlib.import_module(f"{__name__}.{module}"), function)
        return fn(document, options)

    call.__name__ = function
    return call


HTML, MD, JSON, CSV = (".html", ".htm"), (".md", ".markdown"), (".json",), (".csv",)
_TABLE: dict[str, dict[str, tuple[tuple[str, ...], str, str]]] = {
    REPORT: {"html": (HTML, "report", "render_report_html"), "md": (MD, "report", "render_report_markdown"),
             "json": (JSON, "report", "render_report_json"), "csv": (CSV, "report", "render_report_csv")},
    DIFF: {"html": (HTML, "diff", "render_diff_html"), "md": (MD, "diff_markdown", "render_diff_markdown"),
           "json": (JSON, "json", "render_document_json")},
    TREND: {"html": (HTML, "trend", "render_trend_html"), "md": (MD, "trend", "render_trend_markdown"),
            "json": (JSON, "json", "render_document_json"), "csv": (CSV, "trend", "render_trend_csv")},
    BATCH_INDEX: {"html": (HTML, "batch_index", "render_batch_index_html")},
}
_STREAMS: dict[tuple[str, str], tuple[str, str]] = {(REPORT, "json"): ("report", "stream_report_json")}
_CHARTS = (f"{__name__}.charts.roofline", f"{__name__}.charts.sol")  # matplotlib: most of an HTML page's start-up
RENDERERS: dict[str, dict[str, Renderer]] = {
    doc: {name: Renderer(doc, name, ext, _lazy(module, fn),
                         _lazy(*_STREAMS[doc, name]) if (doc, name) in _STREAMS else None,
                         (f"{__name__}.{module}", *(_CHARTS if (doc, name) == (REPORT, "html") else ())))
          for name, (ext, module, fn) in formats.items()}
    for doc, formats in _TABLE.items()
}
DEFAULT_FORMAT = {REPORT: "html", DIFF: "json", TREND: "json", BATCH_INDEX: "html"}


def formats(document: str) -> list[str]:
    """The format names a document can be written in (for `--format` choices)."""
    return sorted(RENDERERS[document])


def format_for(fmt: str | None, output: str | None, extensions: Mapping[str, tuple[str, ...]],
               default: str) -> str:
    """--format wins; else the format whose extension the -o file has; else `default`."""
    if fmt:
        return fmt
    if output and output != "-":
        lower = output.lower()
        for name, ext in extensions.items():
            if lower.endswith(ext):
                return name
    return default


def renderer_for(document: str, fmt: str | None = None, output: str | None = None) -> Renderer:
    """The renderer of `document` named by `fmt`, else by `output`'s extension, else the default."""
    table = RENDERERS[document]
    name = format_for(fmt, output, {n: r.extensions for n, r in table.items()}, DEFAULT_FORMAT[document])
    return table[name]


def render(document: str, value: Any, fmt: str, options: RenderOptions | None = None) -> str:
    """`value` (a document of kind `document`) written in format `fmt`."""
    return RENDERERS[document][fmt].render(value, options or RenderOptions())
