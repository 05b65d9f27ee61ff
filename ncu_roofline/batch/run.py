"""`run_batch`: many reports in, one folder out (index page, per-report pages, tidy kernel table).

It expands the inputs (`inputs.py`; what they hold and it does not analyse is listed, never
dropped silently), reuses the outputs of every report whose content and settings did not
change since the last run (`manifest.py`), runs the unit of work (`job.py`) for the others in
isolated worker processes (`workers.py`), and writes the folder (`outputs.py`).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError, RooflineError
from ..knowledge.jsonio import DOCUMENT_MAX_BYTES, read_json
from ..render.output import move_into_place, write_atomic
from ..settings import AnalysisSettings
from .inputs import Inputs, Skipped, file_sha256, find_inputs, safe_name, shown_path
from .job import Job, JobResult, analyse_one, rows_and_summary
from .layout import REPORTS_DIR, STAGING_DIR
from .manifest import load_manifest, manifest_entry, reusable, settings_for
from .outputs import write_outputs
from .workers import Runner, run_isolated, takes

DEFAULT_TIMEOUT_S = 300.0


class BatchUsageError(RooflineError):
    """The batch cannot start: no inputs, an output folder that is a file, bad options."""


@dataclass
class BatchEvent:
    """One finished report, for progress display."""

    done: int
    total: int
    path: str
    status: str  # "ok", "error" or "unchanged"
    kernel_count: int | None
    error: str | None
    seconds: float


@dataclass
class BatchResult:
    """What `run_batch` did."""

    outdir: Path
    entries: list[dict[str, Any]]
    analysed: int = 0
    unchanged: int = 0
    failed: int = 0
    kernel_count: int = 0
    parquet: bool = False
    parquet_missing: str | None = None  # why kernels.parquet was not written (None when it was)
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)  # found in the inputs and not analysed, sorted


SKIPPED_IN_ERROR = 5  # skipped paths named in the "no input report found" message


def _prepare(specs: Iterable[str], outdir: str | Path, jobs: int, timeout: float,
             exclude: Iterable[str]) -> tuple[Inputs, Path]:
    """Check the options, expand the inputs and create the output folder (BatchUsageError if not)."""
    if jobs < 1:
        raise BatchUsageError("--jobs must be at least 1")
    if not timeout > 0:
        raise BatchUsageError("--timeout must be more than 0 seconds")
    try:
        inputs = find_inputs(specs, exclude)
    except ValueError as exc:  # an empty --exclude pattern
        raise BatchUsageError(str(exc)) from exc
    paths, notes = inputs.paths, inputs.notes
    if not any(os.path.isfile(p) for p in paths):
        parts = [*notes] if notes else ([", ".join(paths)] if paths else [])
        if inputs.skipped:  # the reader learns why from the error itself: no index is written
            named = [s.line() for s in inputs.skipped[:SKIPPED_IN_ERROR]]
            more = len(inputs.skipped) - len(named)
            parts.append("skipped: " + "; ".join(named) + (f" and {more} more" if more else ""))
        detail = "; ".join(parts)
        raise BatchUsageError(f"no input report found ({detail})" if detail else "no input report found")
    out = Path(outdir)
    if out.exists() and not out.is_dir():
        raise BatchUsageError(f"{out}: exists and is not a folder")
    try:
        (out / REPORTS_DIR).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BatchUsageError(f"{out}: cannot create the output folder ({exc.strerror or exc})") from exc
    return inputs, out


LOCK_FILE = ".ncu-roofline-batch.lock"


@contextlib.contextmanager
def _outdir_lock(out: Path) -> Iterator[None]:
    """Hold an exclusive lock on OUTDIR for the run (POSIX `flock`): two batches writing one folder
    would delete each other's pages. BatchUsageError when another run holds it."""
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock
        yield
        return
    try:
        fh = open(out / LOCK_FILE, "a")  # noqa: SIM115 (held for the whole run)
    except OSError as exc:
        raise BatchUsageError(f"{out}: cannot create {LOCK_FILE} ({exc.strerror or exc})") from exc
    with fh:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            raise BatchUsageError(f"{out}: another `ncu-roofline batch` is writing this folder; "
                                  "wait for it to finish, or give another -o") from exc
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def run_batch(specs: Iterable[str], outdir: str | Path, settings: AnalysisSettings | None = None, *,
              redact: bool = False, jobs: int | None = None, timeout: float = DEFAULT_TIMEOUT_S,
              force: bool = False, progress: Callable[[BatchEvent], None] | None = None,
              job: Job = analyse_one, runner: Runner | None = None, exclude: Iterable[str] = ()) -> BatchResult:
    """Analyse every input (files, folders, glob patterns) into `outdir`.

    `settings`: how every kernel is modelled (the defaults when None); `redact`: base names only,
    no NVTX range names; `jobs`: worker processes at a time (default: the number of CPUs);
    `timeout`: seconds before a report's worker is killed; `force`: re-analyse even unchanged
    reports; `progress`: called with a `BatchEvent` as each report finishes; `job`: the function the
    workers run for each report (`analyse_one`; tests pass a stand-in); `runner`: what runs the
    reports that need analysing (`run_isolated`, worker processes on this machine, by default;
    `dask_run.DaskRunner` runs them on a Dask cluster, with the same isolation per report);
    `exclude`: `--exclude` glob patterns (`inputs.Exclude` has the matching rules).

    Writes `kernels.csv`, `kernels.parquet`, `index.html`, `reports/<name>.html` and `.json` per
    report, and `manifest.json`. Every path the inputs held and the batch did not analyse
    (excluded, not a report, ...) is in `BatchResult.skipped`, the index page and the manifest;
    when pyarrow cannot be imported, `kernels.parquet` is not written and a note, the index and
    the manifest say why. Raises BatchUsageError when there is nothing to analyse or `outdir` is
    unusable; a report that fails is recorded in the outputs (and `BatchResult.failed`), never
    raised.
    """
    started = time.monotonic()
    settings = settings if settings is not None else AnalysisSettings()
    jobs = jobs if jobs is not None else (os.cpu_count() or 1)
    inputs, out = _prepare(specs, outdir, jobs, timeout, exclude)
    paths, notes = inputs.paths, inputs.notes

    with _outdir_lock(out):  # a second batch into the same folder waits for none: it is refused
        shown_settings = settings_for(settings, redact)
        old = load_manifest(out, notes)
        keys = {p: safe_name(p) for p in paths}
        entries: dict[str, dict[str, Any]] = {}
        rows: dict[str, list[dict[str, Any]]] = {}
        result = BatchResult(out, [], notes=notes, skipped=inputs.skipped)
        total = len(paths)

        def report_progress(path: str, status: str, kernels: int | None, error: str | None,
                            seconds: float) -> None:
            if progress is not None:
                progress(BatchEvent(len(entries), total, path, status, kernels, error, seconds))

        todo: list[str] = []
        for path in paths:
            prev = None if force else reusable(out, old, shown_settings, path, keys[path])
            if prev is None:
                todo.append(path)
                continue
            try:
                doc = read_json(out / prev["json"], max_bytes=DOCUMENT_MAX_BYTES, what="JSON document")
                report_rows, summary = rows_and_summary(doc)
            except (InputError, AttributeError, KeyError, IndexError, TypeError, ValueError):
                todo.append(path)
                continue
            reused = {"path": shown_path(path, redact), "sha256": prev["sha256"], "status": "ok", "error": None,
                      "summary": summary}
            entries[path] = manifest_entry(reused, keys[path], prev["json"], prev["html"], prev.get("seconds"))
            rows[path] = report_rows
            result.unchanged += 1
            report_progress(path, "unchanged", summary["kernel_count"], None, 0.0)

        def on_result(path: str, res: JobResult, seconds: float) -> None:
            key = keys[path]
            json_rel = html_rel = None
            if res["status"] == "ok":
                json_rel = f"{REPORTS_DIR}/{key}.json"
                staged = res.get("staged")
                if staged:  # written by the worker: renamed into place (the same file system), not copied
                    move_into_place(staged["json"], out / json_rel)
                else:
                    write_atomic(out / json_rel, res["json"], force=True)
                if staged and staged["html"]:
                    html_rel = f"{REPORTS_DIR}/{key}.html"
                    move_into_place(staged["html"], out / html_rel)
                elif res["html"] is not None:
                    html_rel = f"{REPORTS_DIR}/{key}.html"
                    write_atomic(out / html_rel, res["html"], force=True)
                result.analysed += 1
            else:
                result.failed += 1
                if res["sha256"] is None and os.path.isfile(path):  # a worker that crashed or hung
                    with contextlib.suppress(OSError):
                        res = dict(res, sha256=file_sha256(path))
            entries[path] = manifest_entry(res, key, json_rel, html_rel, seconds)
            rows[path] = res["rows"]
            summary = res.get("summary") or {}
            report_progress(path, res["status"], summary.get("kernel_count"), res["error"], seconds)

        for left in out.iterdir():  # a killed run's staging folders (the lock is ours: no other run's)
            if left.is_dir() and (left.name == STAGING_DIR or left.name.startswith(f"{STAGING_DIR}-")):
                shutil.rmtree(left, ignore_errors=True)
        if todo:
            run = runner if runner is not None else run_isolated
            staging = None
            if takes(run, "staging_dir"):  # in OUTDIR, so that a document moves into place by a rename
                try:
                    staging = tempfile.mkdtemp(prefix=STAGING_DIR + "-", dir=out)
                except OSError as exc:
                    raise BatchUsageError(f"{out}: cannot create a folder in it ({exc.strerror or exc})") from exc
            try:
                options = {} if staging is None else {"staging_dir": staging}
                run(todo, settings, redact=redact, jobs=min(jobs, len(todo)), timeout=timeout,
                    on_result=on_result, job=job, **options)
            finally:
                if staging is not None:
                    shutil.rmtree(staging, ignore_errors=True)

        result.entries = [entries[p] for p in paths]
        all_rows = [r for p in paths for r in rows[p]]
        result.kernel_count = len(all_rows)
        result.parquet_missing = write_outputs(out, result.entries, all_rows, shown_settings, old,
                                               skipped=[s.as_dict(redact) for s in inputs.skipped])
        result.parquet = result.parquet_missing is None
        if result.parquet_missing is not None:
            notes.append(f"kernels.parquet not written: {result.parquet_missing}")
        result.seconds = time.monotonic() - started
        return result


__all__ = ["DEFAULT_TIMEOUT_S", "BatchEvent", "BatchResult", "BatchUsageError", "run_batch"]
