"""The unit of work: one report in; its JSON document and HTML page, kernel rows and a summary out.

`analyse_one(path, settings)` never raises and returns a small picklable dict, so it maps
directly onto any distributed engine (`map` over paths, then concatenate the rows). The batch
runs it in isolated worker processes (see `workers.py`).
"""

from __future__ import annotations

import io
import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

from ..api.analysis import Analysis, analyze_report
from ..api.jsondoc import iter_dump_bytes, json_safe
from ..api.rows import kernel_row
from ..errors import InputError
from ..render import REPORT, RenderOptions, render
from ..settings import AnalysisSettings
from .inputs import file_sha256, shown_path

WORST_COUNT = 3

JobResult = dict[str, Any]
"""What a job returns: `path`, `sha256`, `status` ("ok" or "error"), `error`, `json` (the document,
UTF-8 bytes), `html` (text),
`rows` (the report's kernel rows) and `summary` (see `rows_and_summary`)."""


class Job(Protocol):
    """A function the workers run for each report: `analyse_one`, or a test's stand-in for it."""

    def __call__(self, path: str, settings: AnalysisSettings, *, redact: bool = ...) -> JobResult: ...


def rows_and_summary(doc: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Kernel rows and the summary of a one-report ncu-roofline document (as read back)."""
    rep = doc["reports"][0]
    rows = [kernel_row(rep["path"], k) for k in rep["kernels"]]
    return rows, summary_of(rep, rows)


def summary_of(rep: dict[str, Any], rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The summary of one report of a document, from its kernel rows (`kernel_row`).

    `worst` holds the kernel groups with the most GPU time (with their `group_key` and launch
    count); for a document without groups, the longest launches.
    """
    mix = Counter(r["bound_by"] or "none" for r in rows)
    worst = []
    groups = rep.get("groups")
    if groups is not None:  # the longest kernel groups (documents since groups were added)
        for g in groups[:WORST_COUNT]:
            bound = g["bound_by"]
            worst.append({
                "index": g["findings_from_launch"], "name": g["name"], "demangled_name": g["demangled_name"],
                "display_name": g["display_name"], "group_key": g["group_key"], "launches": g["launches"],
                "duration_s": g["duration_s"]["total"], "bound_by": bound,
                "bound_utilization": g["utilization"].get(bound) if bound else None, "regime": g["regime"],
            })
    else:
        by_time = sorted(rows, key=lambda r: (r["duration_s"] is None, -(r["duration_s"] or 0.0), r["index"]))
        worst = [{key: r[key] for key in ("index", "name", "demangled_name", "duration_s", "bound_by",
                                          "bound_utilization", "regime")} for r in by_time[:WORST_COUNT]]
    return {
        "device": ", ".join(rep["devices"]) or None,
        "kernel_count": rep["kernel_count"],
        "group_count": rep.get("group_count"),
        "unusable_kernel_count": rep["unusable_kernel_count"],
        "total_duration_s": rep["total_duration_s"],
        "bound_mix": dict(sorted(mix.items())),
        "worst": worst,
    }


def _document_and_rows(analysis: Analysis, redact: bool) -> tuple[bytes, list[dict[str, Any]], dict[str, Any]]:
    """The JSON document (UTF-8), kernel rows and summary of a one-report analysis, in one pass over
    the launches: each launch's dict is made once, flattened into its row and encoded (never parsed
    back). Bytes, not text: a 50,000-launch document is 0.6 GB as UTF-8 and twice that as a str."""
    doc = analysis.to_dict(redact, lazy=True)
    rep = doc["reports"][0]
    launches = rep["kernels"]  # a LazyList: its dicts are made as the text is written
    rows: list[dict[str, Any]] = []
    make = launches.make

    def flattened() -> Iterator[dict[str, Any]]:
        for k in make():
            rows.append(json_safe(kernel_row(rep["path"], k)))  # NaN as null, as the text has it
            yield k

    launches.make = flattened
    buffer = io.BytesIO()
    for piece in iter_dump_bytes(doc):
        buffer.write(piece)
    return buffer.getvalue(), rows, summary_of(rep, rows)


def error_result(path: str, sha256: str | None, message: str) -> JobResult:
    """The result of a report that could not be analysed (`path` as the outputs show it)."""
    return {"path": path, "sha256": sha256, "status": "error", "error": message, "json": None,
            "html": None, "rows": [], "summary": None}


def analyse_one(path: str, settings: AnalysisSettings, *, redact: bool = False,
                html: bool = True, display_path: str | None = None) -> JobResult:
    """Analyse one report: a picklable dict with its JSON, HTML, kernel rows and summary.

    `settings`: how every kernel is modelled (`AnalysisSettings()` for the defaults). `redact`:
    base names only, no NVTX range names. `html`: also render the report page (else `html` is
    None). `display_path`: the path the outputs name the report by when `path` is another
    spelling of it or a copy (a Dask worker reads an absolute path, or the bytes it was sent
    from a temporary file); None: `path` itself. Never raises: an unusable input gives
    `status: "error"` with the reason, any other exception "internal error: ...".
    """
    shown = shown_path(display_path or path, redact)
    sha256: str | None = None
    try:
        try:
            sha256 = file_sha256(path)
        except OSError:
            sha256 = None  # the reader below explains what is wrong with the path
        report = analyze_report(path, settings, keep_metrics=False)
        if display_path:
            report.path = display_path
        analysis = Analysis([report], [], settings)
        json_text, rows, summary = _document_and_rows(analysis, redact)
        html_text = render(REPORT, analysis, "html", RenderOptions(redact=redact)) if html else None
    except InputError as exc:
        message, named = exc.message, exc.path
        if display_path and named in (path, str(Path(path))):  # it names the file read: name the original
            message, named = message.replace(named, display_path), display_path
        if redact:
            message = message.replace(named, os.path.basename(named))
        return error_result(shown, sha256, message)
    except Exception as exc:
        return error_result(shown, sha256, f"internal error: {type(exc).__name__}: {exc}")
    return {"path": shown, "sha256": sha256, "status": "ok", "error": None, "json": json_text,
            "html": html_text, "rows": rows, "summary": summary}
