"""`manifest.json`: the batch's machine-readable entry point, and what a re-run may reuse.

The manifest (`ncu-roofline-batch/1`) holds the settings that shaped every output, one entry
per report, every path the inputs held and the batch did not analyse (`skipped`: path, kind,
reason, detail) and whether `kernels.parquet` was written (`kernels_parquet`: written, and why
not), so that a script sees everything the index page shows.

A re-run reuses a report's outputs when the settings (the peaks file's SHA-256 included) are
the same as last time, the report's file has the same SHA-256 and its outputs are still there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..api.analysis import SCHEMA as DOCUMENT_SCHEMA
from ..api.jsondoc import dumps
from ..errors import InputError
from ..knowledge.jsonio import MANIFEST_MAX_BYTES, inside_folder, read_json
from ..knowledge.schemas import validate_manifest
from ..settings import AnalysisSettings
from ..version import __version__
from .inputs import file_sha256, shown_path
from .job import JobResult
from .layout import MANIFEST, SCHEMA


def settings_for(settings: AnalysisSettings, redact: bool = False) -> dict[str, Any]:
    """The settings that shape a report's outputs; a change in any of them forces re-analysis."""
    peaks = settings.peaks_file
    peaks_sha = None
    if peaks:
        try:
            peaks_sha = file_sha256(peaks)
        except OSError:
            peaks_sha = None
    return {
        "generator_version": __version__,
        "document_schema": DOCUMENT_SCHEMA,  # a new document format re-analyses too
        "threshold": float(settings.threshold),
        "bytes_definition": settings.bytes_definition,
        "group_by": settings.group_by,
        "launch_findings": settings.launch_findings,
        "peaks_file": shown_path(peaks, redact) if peaks else None,
        "peaks_sha256": peaks_sha,
        "redact": bool(redact),
    }


def load_manifest(outdir: Path, notes: list[str] | None = None) -> dict[str, Any] | None:
    """The previous run's manifest in `outdir`, or None when there is none (or it is not ours).

    It is read bounded and validated (`knowledge/jsonio.py`, `knowledge/schemas.py`); a broken
    one means "re-analyse everything", with a note in `notes`, never a crash.
    """
    path = outdir / MANIFEST
    if not path.is_file():
        return None
    try:
        doc = read_json(path, max_bytes=MANIFEST_MAX_BYTES, what="batch manifest")
        if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
            raise InputError(path, f"not an {SCHEMA} manifest")
        validate_manifest(doc, path)
    except InputError as exc:
        if notes is not None:
            notes.append(f"{exc}; every report is analysed again")
        return None
    return doc


def reusable(outdir: Path, old: dict[str, Any] | None, settings: dict[str, Any],
             path: str, key: str) -> dict[str, Any] | None:
    """The previous run's entry for `path` when its file and settings are unchanged.

    `settings` is this run's `settings_for(...)`; `key` the report's `safe_name`.
    """
    if old is None or old.get("settings") != settings:
        return None
    entry = next((e for e in old["reports"] if isinstance(e, dict) and e.get("key") == key), None)
    if not entry or entry.get("status") != "ok" or not entry.get("json") or not entry.get("html"):
        return None
    try:  # a path that leaves the folder (hand-edited manifest) is never followed
        files = [inside_folder(outdir, entry[k], k) for k in ("json", "html")]
    except InputError:
        return None
    if not all(f.is_file() for f in files):
        return None
    try:
        if file_sha256(path) != entry.get("sha256"):
            return None
    except OSError:
        return None
    return entry


def manifest_entry(result: JobResult, key: str, json_rel: str | None, html_rel: str | None,
                   seconds: float | None) -> dict[str, Any]:
    """One report's manifest entry from its job result and the files its outputs went to."""
    summary = result.get("summary") or {}
    return {
        "path": result["path"],
        "key": key,
        "sha256": result["sha256"],
        "status": result["status"],
        "error": result["error"],
        "json": json_rel,
        "html": html_rel,
        "kernel_count": summary.get("kernel_count"),
        "group_count": summary.get("group_count"),
        "unusable_kernel_count": summary.get("unusable_kernel_count"),
        "total_duration_s": summary.get("total_duration_s"),
        "device": summary.get("device"),
        "bound_mix": summary.get("bound_mix"),
        "worst": summary.get("worst"),
        "warnings": list(summary.get("warnings") or []),
        "seconds": round(seconds, 3) if seconds is not None else None,
    }


def manifest_json(entries: list[dict[str, Any]], settings: dict[str, Any], *,
                  skipped: Sequence[Mapping[str, Any]] = (), parquet_missing: str | None = None) -> str:
    """The `ncu-roofline-batch/1` manifest text.

    `skipped` are the `inputs.Skipped.as_dict()` entries; `parquet_missing` why `kernels.parquet`
    was not written (None: it was). Both are keys the schema leaves open, so readers of older
    manifests are unaffected.
    """
    doc = {
        "schema": SCHEMA,
        "generator": {"name": "ncu-roofline", "version": __version__},
        "settings": settings,
        "reports": entries,
        "skipped": [dict(s) for s in skipped],
        "kernels_parquet": {"written": parquet_missing is None, "reason": parquet_missing},
    }
    return dumps(doc, indent=1)
