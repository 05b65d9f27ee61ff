"""Runs: what `diff` and `trend` compare, loaded from a report file, a JSON document or a batch folder.

A run is a set of kernels in the `ncu-roofline/4` JSON form (or /3, /2 and /1, written earlier; see
`AnalysedKernel.to_dict`): a report file analysed here, an `ncu-roofline/4` (or /3, /2, /1) JSON
document written earlier (`report --format json`),
or a batch output folder (`manifest.json` + one JSON document per report). Everything after
loading works on those dicts, so a run analysed today compares with one analysed in CI last week.

Nothing read back is trusted: documents and manifests are bounded and validated against
`knowledge/schemas.py` (`knowledge/jsonio.py`), and a manifest whose `json`/`html` paths are not
plain relative paths inside its folder is refused. Report files are read in the isolated
reader processes (`analyze(..., isolate=True)`).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..knowledge.jsonio import DOCUMENT_MAX_BYTES, MANIFEST_MAX_BYTES, inside_folder, read_json
from ..knowledge.schemas import BATCH_SCHEMA_PREFIX, REPORT_SCHEMAS, validate_document, validate_manifest
from ..settings import AnalysisSettings

REPORT_SCHEMA = "ncu-roofline/5"
# Documents written by earlier versions read too (REPORT_SCHEMAS): their kernels have the keys
# read here (/3 only moved the unit labels and recipes to the report), and a /1 `bound_by` is
# always a roof.
MANIFEST = "manifest.json"


def short_path(path: str) -> str:
    """The last part of a path, for labels (a folder's name, without its trailing slash)."""
    return os.path.basename(path.rstrip("/")) or path


def number(value: Any) -> float | None:
    """A finite JSON number as a float; None for anything else (null, strings, booleans, NaN)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def duration_of(k: dict[str, Any]) -> float | None:
    """A kernel's duration in seconds when it is a positive number, else None."""
    d = number(k.get("duration_s"))
    return d if d is not None and d > 0 else None


@dataclass(frozen=True)
class RunKernel:
    """One kernel of a run: the report it comes from, its launch dict, and the record of its group in
    the document (`groups`, by `group_key`; None without one): work summed over the group's launches, and the
    findings of a report analysed by group."""

    report: str
    data: dict[str, Any]
    group: dict[str, Any] | None = None


@dataclass
class Run:
    """One side of a comparison."""

    input: str                       # the path as given
    kind: str                        # "report" | "json" | "batch"
    reports: list[str]               # the report files the kernels come from
    kernels: list[RunKernel]
    skipped: list[dict[str, str]] = field(default_factory=list)  # batch entries not analysed
    # per report file: what its document says of the capture (Nsight Compute version, source format)
    report_info: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def devices(self) -> list[str]:
        """The GPUs the kernels ran on, sorted."""
        return sorted({k.data["device"] for k in self.kernels if k.data.get("device")})

    @property
    def total_duration_s(self) -> float | None:
        """The summed duration of the timed kernels; None when none is timed."""
        values = [d for d in (duration_of(k.data) for k in self.kernels) if d is not None]
        return sum(values) if values else None

    @property
    def usable_count(self) -> int:
        """How many kernels have usable metrics and a duration."""
        return sum(1 for k in self.kernels if k.data.get("usable", True) and duration_of(k.data) is not None)

    def summary(self) -> dict[str, Any]:
        """What the diff and trend documents say about this run."""
        return {
            "input": self.input,
            "kind": self.kind,
            "reports": list(self.reports),
            "devices": self.devices,
            "kernel_count": len(self.kernels),
            "usable_kernel_count": self.usable_count,
            "total_duration_s": self.total_duration_s,
            "skipped": [dict(s) for s in self.skipped],
        }


# --------------------------------------------------------------------------------------------
# Loading


def load_run(path: str | Path, settings: AnalysisSettings | None = None) -> Run:
    """A report file, an ncu-roofline JSON document, or a batch output folder -> `Run`.

    `settings` apply to report files only (default: `AnalysisSettings()`): JSON documents and
    batch folders keep the settings they were analysed with. Raises `InputError` for anything
    unusable, including a run without a single usable kernel.
    """
    p = Path(path)
    if p.is_dir():
        run = _load_batch(p)
    elif not p.exists():
        raise InputError(p, "no such file or folder")
    elif p.suffix.lower() == ".json":
        run = run_from_document(read_document(p), str(p), "json")
    else:
        from ..api.analysis import analyze

        analysis = analyze(p, settings or AnalysisSettings(), isolate=True)
        run = run_from_document(analysis.to_dict(), str(p), "report")
    if run.usable_count == 0:
        raise InputError(p, f"no usable kernels ({len(run.kernels)} kernels, none with a duration "
                            "and usable metrics)", "nothing to compare")
    return run


def run_from_document(doc: Any, input_path: str, kind: str) -> Run:
    """A `Run` from an ncu-roofline document (as `Analysis.to_dict()` returns it, or as read back)."""
    reports, kernels = _kernels_of_document(doc, input_path, checked=kind == "report")
    return Run(input_path, kind, reports, kernels, report_info=report_info(doc))


REPORT_INFO_KEYS = ("ncu_version", "source_format")


def report_info(doc: Any) -> dict[str, dict[str, Any]]:
    """Per report path: the capture facts its entry states (`REPORT_INFO_KEYS`); {} when malformed."""
    reports = doc.get("reports") if isinstance(doc, dict) else None
    return {str(rep.get("path")): {k: rep.get(k) for k in REPORT_INFO_KEYS}
            for rep in reports or [] if isinstance(rep, dict)}


def _kernels_of_document(doc: Any, where: str, checked: bool = False) -> tuple[list[str], list[RunKernel]]:
    """The reports and kernels of a document; `checked`: it was made here, not read back."""
    if not isinstance(doc, dict) or doc.get("schema") not in REPORT_SCHEMAS:
        found = doc.get("schema") if isinstance(doc, dict) else type(doc).__name__
        raise InputError(where, f"not an {REPORT_SCHEMA} document (schema: {found!r})",
                         "give a report file, a JSON file written by `ncu-roofline report --format json`, "
                         "or a batch output folder")
    if not checked:
        validate_document(doc, where)  # types and ranges of everything read below and in diff/trend
    reports: list[str] = []
    kernels: list[RunKernel] = []
    for rep in doc["reports"]:
        name = str(rep.get("path") or where)
        reports.append(name)
        groups = {g["group_key"]: g for g in rep.get("groups") or []
                  if isinstance(g, dict) and isinstance(g.get("group_key"), str)}
        kernels.extend(RunKernel(name, k, groups.get(str(k.get("group_key")))) for k in rep["kernels"])
    return reports, kernels


def read_document(path: Path) -> Any:
    """A JSON document read back: a regular file of at most 1 GiB, strict JSON, at most 64 levels deep."""
    return read_json(path, max_bytes=DOCUMENT_MAX_BYTES, what="JSON document")


def read_manifest(folder: Path) -> tuple[Path, list[dict[str, Any]]]:
    """The manifest of a batch output folder (validated) and its report entries.

    Every path an entry records (`json`, `html`) must be relative and resolve inside `folder`,
    else the whole folder is refused: nothing outside it is read (or linked to).
    """
    manifest_path = folder / MANIFEST
    if not manifest_path.is_file():
        raise InputError(folder, f"a folder without {MANIFEST}",
                         "give a report file or an `ncu-roofline batch` output folder")
    manifest = read_json(manifest_path, max_bytes=MANIFEST_MAX_BYTES, what="batch manifest")
    schema = manifest.get("schema") if isinstance(manifest, dict) else None
    if not isinstance(schema, str) or not schema.startswith(BATCH_SCHEMA_PREFIX):
        raise InputError(manifest_path, f"not an ncu-roofline batch manifest (schema: {schema!r})")
    validate_manifest(manifest, manifest_path)
    entries: list[dict[str, Any]] = manifest["reports"]
    for n, entry in enumerate(entries):
        for key in ("json", "html"):
            if entry.get(key) is not None:
                inside_folder(folder, entry[key], f"reports[{n}].{key}", where=manifest_path)
    return manifest_path, entries


def _skipped_entry(entry: dict[str, Any]) -> dict[str, str] | None:
    """What a manifest entry that was not analysed becomes in `Run.skipped`; None for an analysed one."""
    status, rel = entry.get("status"), entry.get("json")
    if status == "ok" and isinstance(rel, str) and rel:
        return None
    return {"path": str(entry.get("path") or "?"), "status": str(status),
            "reason": str(entry.get("error") or entry.get("message") or "not analysed")}


def _load_batch(folder: Path) -> Run:
    manifest_path, entries = read_manifest(folder)
    reports: list[str] = []
    kernels: list[RunKernel] = []
    skipped: list[dict[str, str]] = []
    info: dict[str, dict[str, Any]] = {}
    for entry in entries:
        skip = _skipped_entry(entry)
        if skip is not None:
            skipped.append(skip)
            continue
        rel = str(entry["json"])
        doc_path = folder / rel
        if not doc_path.is_file():
            raise InputError(manifest_path, f"{rel}: listed in the manifest but missing")
        doc = read_document(doc_path)
        names, found = _kernels_of_document(doc, str(doc_path))
        reports.extend(names or [str(entry.get("path") or "?")])
        kernels.extend(found)
        info.update(report_info(doc))
    return Run(str(folder), "batch", reports, kernels, skipped, info)
