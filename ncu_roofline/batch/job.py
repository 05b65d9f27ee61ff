"""The unit of work: one report in; its JSON document and HTML page, kernel rows and a summary out.

`analyse_one(path, settings)` never raises and returns a picklable dict, so it maps directly onto
any distributed engine (`map` over paths, then concatenate the rows). The batch runs it in
isolated worker processes (see `workers.py`), each writing its documents to files of its own
(`Staging`), so that only the rows and the summary travel back.
"""

from __future__ import annotations

import errno
import io
import os
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ..api.analysis import Analysis, analyze_report, with_recipe_set
from ..api.jsondoc import iter_dump_bytes, json_safe
from ..api.records import decode_record
from ..api.rows import kernel_row
from ..errors import InputError
from ..render import REPORT, RenderOptions, render
from ..settings import AnalysisSettings
from .inputs import file_sha256, shown_path

WORST_COUNT = 3

JobResult = dict[str, Any]
"""What a job returns: `path`, `sha256`, `status` ("ok" or "error"), `error`, `json` (the document,
UTF-8 bytes), `html` (text), `rows` (the report's kernel rows) and `summary` (see
`rows_and_summary`). A job given a `Staging` writes the documents to its files instead: `json` and
`html` are None, and `staged` names the files written (`{"json": path, "html": path or None}`)."""


@dataclass(frozen=True)
class Staging:
    """The files a job writes its JSON document and HTML page to itself, for the batch to move into
    place: a document streamed to a file is never held whole, nor sent between processes (0.6 GB of
    JSON at 50,000 launches)."""

    json: str
    html: str


class Job(Protocol):
    """A function the workers run for each report: `analyse_one`, or a test's stand-in for it. One that
    also takes `staging=` (as `analyse_one` does) is given the files to write its documents to, where the
    runner has them (`run_isolated(staging_dir=...)`); another returns them."""

    def __call__(self, path: str, settings: AnalysisSettings, *, redact: bool = ...) -> JobResult: ...


def rows_and_summary(doc: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Kernel rows and the summary of a one-report ncu-roofline document (as read back)."""
    rep = doc["reports"][0]
    rows = [kernel_row(rep["path"], with_recipe_set(rep, k)) for k in rep["kernels"]]
    return rows, summary_of(rep, rows)


def summary_of(rep: dict[str, Any], rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The summary of one report of a document, from its kernel rows (`kernel_row`).

    `worst` holds the kernel groups with the most GPU time (with their `group_key` and launch
    count). Every document this version writes has `groups`, and only such documents are read
    back (`manifest.settings_for` holds the version); one without is a KeyError (re-analysed).
    """
    mix = Counter(r["bound_by"] or "none" for r in rows)
    worst = []
    for g in rep["groups"][:WORST_COUNT]:  # the longest kernel groups
        bound = g["bound_by"]
        worst.append({
            "index": g["findings_from_launch"], "name": g["name"], "demangled_name": g["demangled_name"],
            "display_name": g["display_name"], "group_key": g["group_key"], "launches": g["launches"],
            "duration_s": g["duration_s"]["total"], "bound_by": bound,
            "bound_utilization": g["utilization"].get(bound) if bound else None, "regime": g["regime"],
        })
    return {
        "device": ", ".join(rep["devices"]) or None,
        "kernel_count": rep["kernel_count"],
        "group_count": rep.get("group_count"),
        "unusable_kernel_count": rep["unusable_kernel_count"],
        "total_duration_s": rep["total_duration_s"],
        "bound_mix": dict(sorted(mix.items())),
        "worst": worst,
        "warnings": list(rep["warnings"]),  # what the reader noticed about the file, as `report` prints it
    }


class _Writes(Protocol):
    def write(self, data: bytes, /) -> int: ...


def _document_and_rows(analysis: Analysis, redact: bool, sink: _Writes
                       ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Write the JSON document (UTF-8) of a one-report analysis to `sink`; its kernel rows and summary.

    One pass over the launches: each launch's dict is made once, flattened into its row and encoded
    (never parsed back), and written as it is made. Bytes, not text: a 50,000-launch document is
    0.6 GB as UTF-8 and twice that as a str."""
    doc = analysis.to_dict(redact, lazy=True)
    rep = doc["reports"][0]
    launches = rep["kernels"]  # a LazyList: its dicts are made as the text is written
    rows: list[dict[str, Any]] = []
    make = launches.make

    def flattened() -> Iterator[dict[str, Any]]:
        for k in make():  # a dict, or a launch record written out as it was analysed (`api.records`)
            d = decode_record(k) if isinstance(k, bytes) else k
            rows.append(json_safe(kernel_row(rep["path"], with_recipe_set(rep, d))))  # NaN as null, as written
            yield k

    launches.make = flattened
    for piece in iter_dump_bytes(doc):
        sink.write(piece)
    return rows, summary_of(rep, rows)


class _Unwritable(Exception):
    """An OSError of writing a staging file (not of reading the report or anything else)."""

    def __init__(self, error: OSError) -> None:
        super().__init__(str(error))
        self.error = error


class _StagingFile(io.RawIOBase):
    """A staging file opened for writing, whose OS errors (open, write, close) are `_Unwritable`."""

    def __init__(self, path: str) -> None:
        try:
            self._fh = open(path, "wb")  # noqa: SIM115 (closed by close())
        except OSError as exc:
            raise _Unwritable(exc) from exc
        super().__init__()

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        try:
            return self._fh.write(data)
        except OSError as exc:
            raise _Unwritable(exc) from exc

    def close(self) -> None:
        if not self.closed:
            try:
                self._fh.close()
            except OSError as exc:
                raise _Unwritable(exc) from exc
            finally:
                super().close()


def _unwritable(exc: OSError) -> str:
    """Why a job could not write its documents, and what to do."""
    what = f"cannot write this report's outputs ({exc.strerror or exc})"
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return f"{what}: free space in the output folder's file system and run the batch again"
    return f"{what}: check that the output folder can be written to and run the batch again"


def error_result(path: str, sha256: str | None, message: str) -> JobResult:
    """The result of a report that could not be analysed (`path` as the outputs show it)."""
    return {"path": path, "sha256": sha256, "status": "error", "error": message, "json": None,
            "html": None, "rows": [], "summary": None}


def analyse_one(path: str, settings: AnalysisSettings, *, redact: bool = False,
                html: bool = True, display_path: str | None = None, staging: Staging | None = None) -> JobResult:
    """Analyse one report: a picklable dict with its JSON, HTML, kernel rows and summary.

    `settings`: how every kernel is modelled (`AnalysisSettings()` for the defaults). `redact`:
    base names only, no NVTX range names. `html`: also render the report page (else `html` is
    None). `display_path`: the path the outputs name the report by when `path` is another
    spelling of it or a copy (a Dask worker reads an absolute path, or the bytes it was sent
    from a temporary file); None: `path` itself. `staging`: the files to write the JSON (streamed)
    and HTML to, instead of returning them (`staged` in the result names them; a file is left as far
    as it got when the job fails); None: both are returned. Never raises: an unusable input gives
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
        json_bytes: bytes | None = None
        staged = None
        if staging is None:
            with io.BytesIO() as buffer:
                rows, summary = _document_and_rows(analysis, redact, buffer)
                json_bytes = buffer.getvalue()
            html_text = render(REPORT, analysis, "html", RenderOptions(redact=redact)) if html else None
        else:
            try:
                with _StagingFile(staging.json) as sink:
                    rows, summary = _document_and_rows(analysis, redact, sink)
                page = render(REPORT, analysis, "html", RenderOptions(redact=redact)) if html else None
                if page is not None:
                    with _StagingFile(staging.html) as fh:
                        fh.write(page.encode())
            except _Unwritable as exc:  # the output folder's file system: full, read-only, gone
                return error_result(shown, sha256, _unwritable(exc.error))
            staged = {"json": staging.json, "html": staging.html if page is not None else None}
            html_text = None
    except InputError as exc:
        message, named = exc.message, exc.path
        if display_path and named in (path, str(Path(path))):  # it names the file read: name the original
            message, named = message.replace(named, display_path), display_path
        if redact:
            message = message.replace(named, os.path.basename(named))
        return error_result(shown, sha256, message)
    except Exception as exc:
        return error_result(shown, sha256, f"internal error: {type(exc).__name__}: {exc}")
    result = {"path": shown, "sha256": sha256, "status": "ok", "error": None, "json": json_bytes,
              "html": html_text, "rows": rows, "summary": summary}
    if staged is not None:
        result["staged"] = staged
    return result
