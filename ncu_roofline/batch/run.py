"""Batch analysis: many reports in, one folder out (index page, per-report pages, tidy kernel table).

The unit of work is `analyse_one(path, options)`: one report in, a small picklable dict out (the
report's JSON and HTML texts, its kernel rows and a summary). It never raises, so it maps directly
onto any distributed engine (`map` over paths, then concatenate the rows).

`run_batch` runs `analyse_one` for every input, each in a fresh worker process (one process per
report, at most `jobs` at a time), so a crash of the native `ncu_report` reader or a hang costs
only that report: a worker that dies is recorded as "the reader crashed (exit code N)", one that
runs past `timeout` seconds is killed and recorded as "timed out after N s". Workers are forked
from a `forkserver` that has already imported the analysis and rendering modules (falling back
to `spawn` where there is no forkserver), which keeps the per-report start-up cost low without
ever forking the caller's own process.

Outputs (written atomically, file by file) are described in `write_outputs`; `manifest.json` is the
machine-readable entry point, and a re-run reuses the outputs of every report whose content and
settings did not change.

Test hooks (for the test suite only; never set them in production): when the environment variable
`NCU_ROOFLINE_TEST_HANG` names an input's base name, the worker for that input sleeps forever
instead of analysing it; `NCU_ROOFLINE_TEST_CRASH` likewise makes the worker die with SIGABRT,
as a crash in native code would. They are read by the calling process when the workers start
(a forkserver's workers do not see later changes to the caller's environment) and passed on.
"""

from __future__ import annotations

import glob
import hashlib
import json
import multiprocessing
import multiprocessing.connection
import os
import re
import signal
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import __version__
from ..api.jsondoc import dumps
from ..api.rows import kernel_row
from ..errors import InputError, OutputError, RooflineError
from ..knowledge import recipes as R
from ..render.csv import rows_to_csv
from ..render.output import write_atomic
from ..settings import DEFAULT_THRESHOLD, AnalysisSettings

SCHEMA = "ncu-roofline-batch/1"
SUFFIXES = (".ncu-rep", ".nsight-cuprof-report", ".csv")
MANIFEST = "manifest.json"
INDEX = "index.html"
KERNELS_CSV = "kernels.csv"
KERNELS_PARQUET = "kernels.parquet"
REPORTS_DIR = "reports"
DEFAULT_TIMEOUT_S = 300.0
WORST_COUNT = 3

HANG_ENV = "NCU_ROOFLINE_TEST_HANG"
CRASH_ENV = "NCU_ROOFLINE_TEST_CRASH"

# Imported once by the forkserver, so every worker forked from it starts with them loaded.
_PRELOAD = [
    "ncu_roofline.batch",
    "ncu_roofline.analysis",
    "ncu_roofline.render.html",
    "ncu_roofline.views.report",
    "ncu_roofline.charts",
    "ncu_report",
    "jinja2",
]


class BatchUsageError(RooflineError):
    """The batch cannot start: no inputs, an output folder that is a file, bad options."""


# --------------------------------------------------------------------------------------------
# Inputs


def _has_report_suffix(name: str) -> bool:
    return name.lower().endswith(SUFFIXES)


def _is_batch_output(folder: str, files: list[str]) -> bool:
    """A folder this command wrote (its kernels.csv is not a report: never read it back)."""
    if MANIFEST not in files:
        return False
    try:
        with open(os.path.join(folder, MANIFEST), encoding="utf-8") as fh:
            return json.load(fh).get("schema") == SCHEMA
    except (OSError, ValueError, AttributeError):
        return False


def _walk(folder: str) -> list[str]:
    found: list[str] = []
    for root, dirs, files in os.walk(folder):
        if _is_batch_output(root, files):
            dirs.clear()
            continue
        dirs.sort()
        found.extend(os.path.join(root, f) for f in sorted(files) if _has_report_suffix(f))
    return found


def collect_inputs(specs: Iterable[str]) -> tuple[list[str], list[str]]:
    """Expand files, folders (recursively) and glob patterns into a sorted list without duplicates.

    Folder walks and glob matches keep only `.ncu-rep`, `.nsight-cuprof-report` and `.csv` files;
    a file named explicitly is kept whatever its suffix, and so is a named path that does not
    exist (it then fails as "no such file"). Returns (paths, notes), where the notes say which
    patterns or folders matched nothing.
    """
    found: list[str] = []
    notes: list[str] = []
    for spec in specs:
        if os.path.isdir(spec):
            matches = _walk(spec)
            if not matches:
                notes.append(f"{spec}: the folder holds no {', '.join(SUFFIXES)} file")
        elif os.path.exists(spec) or not glob.has_magic(spec):
            matches = [spec]
        else:
            matches = []
            for m in sorted(glob.glob(spec, recursive=True)):
                if os.path.isdir(m):
                    matches.extend(_walk(m))
                elif _has_report_suffix(m):
                    matches.append(m)
            if not matches:
                notes.append(f"{spec}: the pattern matches no {', '.join(SUFFIXES)} file")
        found.extend(os.path.normpath(m) for m in matches)
    unique: dict[str, str] = {}
    for path in sorted(found):
        unique.setdefault(os.path.realpath(path), path)
    return sorted(unique.values()), notes


def safe_name(path: str) -> str:
    """A file-system-safe stem for a report's outputs: its name plus a hash of its full path."""
    base = os.path.basename(path)
    for suffix in SUFFIXES:
        if base.lower().endswith(suffix):
            base = base[: -len(suffix)]
            break
    base = re.sub(r"[^A-Za-z0-9._-]+", "_", base).lstrip(".")[:80] or "report"
    digest = hashlib.sha256(os.path.abspath(path).encode("utf-8", "surrogateescape")).hexdigest()
    return f"{base}-{digest[:10]}"


def file_sha256(path: str | Path) -> str:
    """The SHA-256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


# --------------------------------------------------------------------------------------------
# The unit of work


def rows_and_summary(doc: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Kernel rows and the summary of a one-report `ncu-roofline/1` document."""
    rep = doc["reports"][0]
    kernels = rep["kernels"]
    rows = [kernel_row(rep["path"], k) for k in kernels]
    mix = Counter(k["bound_by"] or "none" for k in kernels)
    by_time = sorted(kernels, key=lambda k: (k["duration_s"] is None, -(k["duration_s"] or 0.0),
                                             k["index"]))
    worst = []
    for k in by_time[:WORST_COUNT]:
        bound = k["bound_by"]
        worst.append({
            "index": k["index"],
            "name": k["name"],
            "demangled_name": k["demangled_name"],
            "duration_s": k["duration_s"],
            "bound_by": bound,
            "bound_utilization": k["utilization"].get(bound) if bound else None,
            "regime": k["regime"],
        })
    summary = {
        "device": ", ".join(rep["devices"]) or None,
        "kernel_count": rep["kernel_count"],
        "unusable_kernel_count": rep["unusable_kernel_count"],
        "total_duration_s": rep["total_duration_s"],
        "bound_mix": dict(sorted(mix.items())),
        "worst": worst,
    }
    return rows, summary


def _error_result(path: str, sha256: str | None, message: str) -> dict[str, Any]:
    return {"path": path, "sha256": sha256, "status": "error", "error": message, "json": None,
            "html": None, "rows": [], "summary": None}


def analyse_one(path: str, options: dict[str, Any]) -> dict[str, Any]:
    """Analyse one report: a picklable dict with its JSON, HTML, kernel rows and summary.

    `options`: `threshold` (float), `peaks` (a peaks-file path or None), `bytes_definition`
    (`chart` or `tags`), `redact` (bool), `html` (bool, default True). Never raises: an unusable
    input gives `status: "error"` with the reason, any other exception "internal error: ...".
    """
    from ..api.analysis import Analysis, analyze_report
    from ..knowledge.peaks_file import load_peaks

    redact = bool(options.get("redact", False))
    shown = os.path.basename(path) if redact else path
    sha256: str | None = None
    try:
        try:
            sha256 = file_sha256(path)
        except OSError:
            sha256 = None  # the reader below explains what is wrong with the path
        settings = AnalysisSettings(float(options.get("threshold", DEFAULT_THRESHOLD)),
                                    load_peaks(options["peaks"]) if options.get("peaks") else None,
                                    options.get("bytes_definition", R.CHART))
        report = analyze_report(path, settings)
        analysis = Analysis([report], [], settings)
        json_text = analysis.to_json(redact=redact)
        html_text = None
        if options.get("html", True):
            from ..render import REPORT, RenderOptions, render

            html_text = render(REPORT, analysis, "html", RenderOptions(redact=redact))
        rows, summary = rows_and_summary(json.loads(json_text))
    except InputError as exc:
        message = exc.message
        if redact:
            message = message.replace(exc.path, os.path.basename(exc.path))
        return _error_result(shown, sha256, message)
    except Exception as exc:  # noqa: BLE001 -- one bad file must never stop the others
        return _error_result(shown, sha256, f"internal error: {type(exc).__name__}: {exc}")
    return {"path": shown, "sha256": sha256, "status": "ok", "error": None, "json": json_text,
            "html": html_text, "rows": rows, "summary": summary}


# --------------------------------------------------------------------------------------------
# Worker processes


def _child(conn: multiprocessing.connection.Connection, path: str, options: dict[str, Any],
           log_path: str, hooks: dict[str, str | None]) -> None:
    """Worker process body: analyse one report and send the result back through `conn`.

    The worker's standard output and error (the native reader's messages included) go to
    `log_path`; the parent shows their end only when the worker crashes.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and kills workers
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    log_fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(log_fd, 1)
    os.dup2(log_fd, 2)
    os.close(log_fd)
    name = os.path.basename(path)
    if hooks.get("hang") == name:  # test hook, see the module docstring
        while True:
            time.sleep(3600)
    if hooks.get("crash") == name:  # test hook, see the module docstring
        print("simulated crash of the native reader", file=sys.stderr, flush=True)
        os.abort()
    try:
        conn.send(analyse_one(path, options))
    finally:
        conn.close()


def _log_tail(log_path: str, limit: int = 300) -> str:
    """The last non-empty line a worker wrote, shortened to `limit` characters ('' if none)."""
    try:
        with open(log_path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - 4096))
            text = fh.read().decode("utf-8", "replace")
    except OSError:
        return ""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return ""
    last = lines[-1]
    return last if len(last) <= limit else last[: limit - 1] + "…"


def _describe_exit(code: int | None, log_path: str) -> str:
    if code is None:
        text = "the reader crashed (no exit code)"
    else:
        text = f"the reader crashed (exit code {code})"
        if code < 0:
            try:
                text = f"the reader crashed (exit code {code}, {signal.Signals(-code).name})"
            except ValueError:
                pass
    tail = _log_tail(log_path)
    return f"{text}; its last output: {tail}" if tail else text


def default_start_method() -> str:
    """`forkserver` where the platform has it (fast, never forks the caller), else `spawn`."""
    return "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"


def _context(start_method: str | None) -> Any:
    method = start_method or default_start_method()
    ctx = multiprocessing.get_context(method)
    if method == "forkserver":
        ctx.set_forkserver_preload(_PRELOAD)
        _start_forkserver()
    return ctx


def _start_forkserver() -> None:
    """Start the forkserver with this package importable, so that its preload takes effect.

    The forkserver does not inherit the caller's `sys.path` (Python 3.11), so a checkout that is
    not installed would silently skip the preload; PYTHONPATH names the package's folder while
    the server starts. A forkserver that is already running is reused as it is.
    """
    from multiprocessing import forkserver

    root = str(Path(__file__).resolve().parents[1])
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = root + (os.pathsep + old if old else "")
    try:
        forkserver.ensure_running()
    finally:
        if old is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = old


@dataclass
class _Running:
    path: str
    process: Any
    conn: multiprocessing.connection.Connection
    log_path: str
    started: float


def run_isolated(paths: list[str], options: dict[str, Any], *, jobs: int, timeout: float,
                 on_result: Callable[[str, dict[str, Any], float], None],
                 start_method: str | None = None) -> None:
    """Run `analyse_one` for every path, each in its own worker process, `jobs` at a time.

    `on_result(path, result, seconds)` is called in the calling process as each report finishes
    (in completion order). A worker that dies without answering, or runs past `timeout` seconds
    (it is then killed), gives an error result instead; the other reports go on.
    """
    ctx = _context(start_method)
    hooks = {"hang": os.environ.get(HANG_ENV), "crash": os.environ.get(CRASH_ENV)}
    pending = list(reversed(paths))
    running: list[_Running] = []
    counter = 0

    def shown(path: str) -> str:
        return os.path.basename(path) if options.get("redact") else path

    def finish(task: _Running, result: dict[str, Any]) -> None:
        running.remove(task)
        task.conn.close()
        task.process.join(5)
        if task.process.is_alive():
            task.process.kill()
            task.process.join()
        task.process.close()
        try:
            os.unlink(task.log_path)
        except OSError:
            pass
        on_result(task.path, result, time.monotonic() - task.started)

    with tempfile.TemporaryDirectory(prefix="ncu-roofline-batch-") as logs:
        try:
            while pending or running:
                while pending and len(running) < jobs:
                    path = pending.pop()
                    counter += 1
                    log_path = os.path.join(logs, f"{counter}.log")
                    reader, writer = ctx.Pipe(duplex=False)
                    process = ctx.Process(target=_child, args=(writer, path, options, log_path, hooks),
                                          daemon=True, name=f"ncu-roofline-batch-{counter}")
                    process.start()
                    writer.close()
                    running.append(_Running(path, process, reader, log_path, time.monotonic()))
                deadline = min(t.started for t in running) + timeout
                waitables: list[Any] = [t.conn for t in running] + [t.process.sentinel for t in running]
                ready = multiprocessing.connection.wait(waitables, max(0.0, deadline - time.monotonic()))
                for task in running[:]:  # a copy: finish() removes from `running`
                    if task.conn in ready or task.process.sentinel in ready:
                        result: dict[str, Any] | None = None
                        if task.conn.poll():
                            try:
                                result = task.conn.recv()
                            except (EOFError, OSError):
                                result = None
                        if result is None:
                            task.process.join(5)
                            message = _describe_exit(task.process.exitcode, task.log_path)
                            result = _error_result(shown(task.path), None, message)
                        finish(task, result)
                    elif time.monotonic() - task.started >= timeout:
                        task.process.kill()
                        task.process.join()
                        finish(task, _error_result(shown(task.path), None, f"timed out after {timeout:g} s"))
        finally:
            for task in running:
                if task.process.is_alive():
                    task.process.kill()
                task.process.join()
                task.conn.close()


# --------------------------------------------------------------------------------------------
# The batch


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
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.failed == 0


def settings_for(options: dict[str, Any]) -> dict[str, Any]:
    """The settings that shape a report's outputs; a change in any of them forces re-analysis."""
    peaks = options.get("peaks")
    peaks_sha = None
    if peaks:
        try:
            peaks_sha = file_sha256(peaks)
        except OSError:
            peaks_sha = None
    return {
        "generator_version": __version__,
        "threshold": float(options.get("threshold", DEFAULT_THRESHOLD)),
        "bytes_definition": options.get("bytes_definition", R.CHART),
        "peaks_file": (os.path.basename(peaks) if options.get("redact") else peaks) if peaks else None,
        "peaks_sha256": peaks_sha,
        "redact": bool(options.get("redact", False)),
    }


def _load_manifest(outdir: Path) -> dict[str, Any] | None:
    try:
        doc = json.loads((outdir / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA or not isinstance(doc.get("reports"), list):
        return None
    return doc


def _reusable(outdir: Path, old: dict[str, Any] | None, settings: dict[str, Any],
              path: str, key: str) -> dict[str, Any] | None:
    """The previous run's entry for `path` when its file and settings are unchanged."""
    if old is None or old.get("settings") != settings:
        return None
    entry = next((e for e in old["reports"] if isinstance(e, dict) and e.get("key") == key), None)
    if not entry or entry.get("status") != "ok" or not entry.get("json") or not entry.get("html"):
        return None
    if not (outdir / entry["json"]).is_file() or not (outdir / entry["html"]).is_file():
        return None
    try:
        if file_sha256(path) != entry.get("sha256"):
            return None
    except OSError:
        return None
    return entry


def _entry(result: dict[str, Any], key: str, json_rel: str | None, html_rel: str | None,
           seconds: float | None) -> dict[str, Any]:
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
        "unusable_kernel_count": summary.get("unusable_kernel_count"),
        "total_duration_s": summary.get("total_duration_s"),
        "device": summary.get("device"),
        "bound_mix": summary.get("bound_mix"),
        "worst": summary.get("worst"),
        "seconds": round(seconds, 3) if seconds is not None else None,
    }


def run_batch(specs: Iterable[str], outdir: str | Path, *, options: dict[str, Any] | None = None,
              jobs: int | None = None, timeout: float = DEFAULT_TIMEOUT_S, force: bool = False,
              progress: Callable[[BatchEvent], None] | None = None,
              start_method: str | None = None) -> BatchResult:
    """Analyse every input (files, folders, glob patterns) into `outdir`; see the module docstring.

    Raises BatchUsageError when there is nothing to analyse or `outdir` is unusable; a report
    that fails is recorded in the outputs (and `BatchResult.failed`), never raised.
    """
    started = time.monotonic()
    options = dict(options or {})
    jobs = jobs if jobs is not None else (os.cpu_count() or 1)
    if jobs < 1:
        raise BatchUsageError("--jobs must be at least 1")
    if not timeout > 0:
        raise BatchUsageError("--timeout must be more than 0 seconds")
    paths, notes = collect_inputs(specs)
    if not any(os.path.isfile(p) for p in paths):
        detail = "; ".join(notes) if notes else ", ".join(paths)
        raise BatchUsageError(f"no input report found ({detail})" if detail else "no input report found")
    out = Path(outdir)
    if out.exists() and not out.is_dir():
        raise BatchUsageError(f"{out}: exists and is not a folder")
    try:
        (out / REPORTS_DIR).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BatchUsageError(f"{out}: cannot create the output folder ({exc.strerror or exc})") from exc

    settings = settings_for(options)
    old = _load_manifest(out)
    keys = {p: safe_name(p) for p in paths}
    entries: dict[str, dict[str, Any]] = {}
    rows: dict[str, list[dict[str, Any]]] = {}
    result = BatchResult(out, [], notes=notes)
    total = len(paths)

    def report_progress(path: str, status: str, kernels: int | None, error: str | None,
                        seconds: float) -> None:
        if progress is not None:
            progress(BatchEvent(len(entries), total, path, status, kernels, error, seconds))

    todo: list[str] = []
    for path in paths:
        prev = None if force else _reusable(out, old, settings, path, keys[path])
        if prev is None:
            todo.append(path)
            continue
        try:
            doc = json.loads((out / prev["json"]).read_text(encoding="utf-8"))
            report_rows, summary = rows_and_summary(doc)
        except (OSError, ValueError, KeyError, IndexError, TypeError):
            todo.append(path)
            continue
        shown = os.path.basename(path) if options.get("redact") else path
        fake = {"path": shown, "sha256": prev["sha256"], "status": "ok", "error": None, "summary": summary}
        entries[path] = _entry(fake, keys[path], prev["json"], prev["html"], prev.get("seconds"))
        rows[path] = report_rows
        result.unchanged += 1
        report_progress(path, "unchanged", summary["kernel_count"], None, 0.0)

    def on_result(path: str, res: dict[str, Any], seconds: float) -> None:
        key = keys[path]
        json_rel = html_rel = None
        if res["status"] == "ok":
            json_rel = f"{REPORTS_DIR}/{key}.json"
            write_atomic(out / json_rel, res["json"], force=True)
            if res["html"] is not None:
                html_rel = f"{REPORTS_DIR}/{key}.html"
                write_atomic(out / html_rel, res["html"], force=True)
            result.analysed += 1
        else:
            result.failed += 1
            if res["sha256"] is None and os.path.isfile(path):  # a worker that crashed or hung
                try:
                    res = dict(res, sha256=file_sha256(path))
                except OSError:
                    pass
        entries[path] = _entry(res, key, json_rel, html_rel, seconds)
        rows[path] = res["rows"]
        summary = res.get("summary") or {}
        report_progress(path, res["status"], summary.get("kernel_count"), res["error"], seconds)

    if todo:
        run_isolated(todo, options, jobs=min(jobs, len(todo)), timeout=timeout, on_result=on_result,
                     start_method=start_method)

    result.entries = [entries[p] for p in paths]
    all_rows = [r for p in paths for r in rows[p]]
    result.kernel_count = len(all_rows)
    result.parquet = write_outputs(out, result.entries, all_rows, settings, old)
    result.seconds = time.monotonic() - started
    return result


# --------------------------------------------------------------------------------------------
# Outputs


def kernels_csv(rows: list[dict[str, Any]]) -> str:
    """The tidy kernel table as CSV text (empty when there is no kernel)."""
    return rows_to_csv(rows)


def write_parquet(rows: list[dict[str, Any]], target: Path) -> bool:
    """Write the kernel table as Parquet when `pyarrow` is installed; False when it is not."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        return False
    columns = list(rows[0]) if rows else []
    arrays = {}
    for col in columns:
        values = [r.get(col) for r in rows]
        kinds = {type(v) for v in values if v is not None}
        if kinds <= {bool} and kinds:
            typ = pa.bool_()
        elif kinds <= {int} and kinds:
            typ = pa.int64()
        elif kinds <= {int, float} and kinds:
            typ = pa.float64()
            values = [float(v) if v is not None else None for v in values]
        else:
            typ = pa.string()
            values = [str(v) if v is not None else None for v in values]
        arrays[col] = pa.array(values, type=typ)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    try:
        pq.write_table(pa.table(arrays), tmp)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return True


def manifest_json(entries: list[dict[str, Any]], settings: dict[str, Any]) -> str:
    """The `ncu-roofline-batch/1` manifest text."""
    doc = {
        "schema": SCHEMA,
        "generator": {"name": "ncu-roofline", "version": __version__},
        "settings": settings,
        "reports": entries,
    }
    return dumps(doc, indent=1)


def write_outputs(out: Path, entries: list[dict[str, Any]], rows: list[dict[str, Any]],
                  settings: dict[str, Any], old: dict[str, Any] | None = None) -> bool:
    """Write `kernels.csv` (+ `kernels.parquet` with pyarrow), `index.html` and, last, `manifest.json`.

    Per-report files that the previous manifest listed and this one does not are removed.
    Returns whether the Parquet file was written.
    """
    write_atomic(out / KERNELS_CSV, kernels_csv(rows), force=True)
    parquet = bool(rows) and write_parquet(rows, out / KERNELS_PARQUET)
    if not parquet and (out / KERNELS_PARQUET).exists():
        (out / KERNELS_PARQUET).unlink()  # stale: from a run that had pyarrow
    write_atomic(out / INDEX, render_index(entries, settings, parquet=parquet), force=True)
    write_atomic(out / MANIFEST, manifest_json(entries, settings), force=True)
    if old is not None:
        keep = {e[k] for e in entries for k in ("json", "html") if e.get(k)}
        for e in old.get("reports", []):
            for k in ("json", "html"):
                rel = e.get(k) if isinstance(e, dict) else None
                if (isinstance(rel, str) and rel not in keep and rel.startswith(f"{REPORTS_DIR}/")
                        and "/" not in rel[len(REPORTS_DIR) + 1:] and (out / rel).is_file()):
                    (out / rel).unlink()
    return parquet


# --------------------------------------------------------------------------------------------
# The index page

_ROOF_ORDER = ("dram", "l2", "l1", "fp64", "fp32", "fp16", "tensor")
_ROOF_LABELS = {"dram": "DRAM", "l2": "L2", "l1": "L1", "fp64": "FP64", "fp32": "FP32",
                "fp16": "FP16", "tensor": "Tensor", "none": "none"}
_INDEX_CSS = """
.failed { color: #b02a1e; font-weight: 600; }
tr.failed-row td { background: #fdf1ef; }
table.batch td { font-size: 13px; }
.mixbar { display: flex; height: 10px; width: 160px; border-radius: 3px; overflow: hidden;
          background: #e8ebf0; margin: 2px 0 4px; }
.mixbar > span { display: block; height: 100%; }
.b-none { background: var(--none); }
ol.worst { margin: 0; padding-left: 18px; } ol.worst li { margin-bottom: 2px; }
ul.errors li { margin-bottom: 6px; }
"""


def _roof_css(roof: str | None) -> str:
    if not roof or roof == "none":
        return "b-none"
    return f"b-{roof}" if roof in _ROOF_ORDER else "b-other"


def _mix(mix: dict[str, int]) -> list[dict[str, Any]]:
    total = sum(mix.values())
    order = {r: n for n, r in enumerate((*_ROOF_ORDER, "none"))}
    return [{"roof": roof, "label": _ROOF_LABELS.get(roof, roof), "count": count,
             "css": _roof_css(roof), "width": round(100.0 * count / total, 2) if total else 0}
            for roof, count in sorted(mix.items(), key=lambda rc: (order.get(rc[0], len(order)), rc[0]))]


def _without_path(message: str, path: str) -> str:
    """An error message without its leading `path: ` (the page shows the path next to it)."""
    prefix = f"{path}: "
    return message[len(prefix):] if message.startswith(prefix) and len(message) > len(prefix) else message


def index_view(entries: list[dict[str, Any]], settings: dict[str, Any]) -> dict[str, Any]:
    """Everything the index template shows, as plain strings and numbers."""
    from ..views import format as F

    reports: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    mix_total: Counter[str] = Counter()
    durations: list[float] = []
    for row, e in enumerate(entries, start=1):
        failed = e["status"] != "ok"
        mix = e.get("bound_mix") or {}
        mix_total.update(mix)
        if e.get("total_duration_s") is not None:
            durations.append(e["total_duration_s"])
        worst = []
        for w in e.get("worst") or []:
            full = w.get("demangled_name") or w["name"]
            worst.append({"name": F.short_name(full, 50), "full": full, "duration": F.seconds(w["duration_s"]),
                          "bound_label": _ROOF_LABELS.get(w["bound_by"] or "none", w["bound_by"]),
                          "css": _roof_css(w["bound_by"]), "utilization": F.pct(w["bound_utilization"]),
                          "regime": w["regime"] or "n/a"})
        reports.append({
            "name": os.path.basename(e["path"]), "shown_path": e["path"], "failed": failed,
            "error": _without_path(e.get("error") or "unknown error", e["path"]) if failed else None,
            "html": e.get("html"), "json": e.get("json"),
            "device": e.get("device") or F.NA,
            "kernels": e["kernel_count"] if e.get("kernel_count") is not None else F.NA,
            "unusable": e.get("unusable_kernel_count") or 0,
            "gpu_time": F.seconds(e.get("total_duration_s")), "mix": _mix(mix), "worst": worst,
        })
        if failed:
            errors.append({"row": row, "path": e["path"], "error": reports[-1]["error"]})
    ok = sum(1 for e in entries if e["status"] == "ok")
    totals = {
        "reports": len(entries), "ok": ok, "failed": len(entries) - ok,
        "kernels": sum(e.get("kernel_count") or 0 for e in entries),
        "unusable": sum(e.get("unusable_kernel_count") or 0 for e in entries),
        "gpu_time": F.seconds(sum(durations)) if durations else F.NA,
        "mix": _mix(dict(mix_total)),
    }
    shown_settings = dict(settings, threshold_text=F.pct(settings["threshold"]))
    title = f"ncu-roofline batch: {len(entries)} report{'s' if len(entries) != 1 else ''}"
    return {"title": title, "reports": reports, "errors": errors, "totals": totals,
            "settings": shown_settings, "version": __version__, "schema": SCHEMA}


def render_index(entries: list[dict[str, Any]], settings: dict[str, Any], *, parquet: bool = False) -> str:
    """The self-contained `index.html` (inline CSS, autoescaped, no script)."""
    from markupsafe import Markup

    from ..render.html import asset, environment, palette_css

    css = Markup(palette_css() + asset("report.css") + _INDEX_CSS)
    return environment().get_template("batch_index.html.j2").render(
        **index_view(entries, settings), css=css, parquet=parquet)


__all__ = ["BatchEvent", "BatchResult", "BatchUsageError", "OutputError", "analyse_one",
           "collect_inputs", "run_batch", "safe_name"]
