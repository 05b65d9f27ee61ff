"""Isolated worker processes: one fresh process per report, at most `jobs` at a time.

A crash of the native `ncu_report` reader or a hang costs only that report: a worker that dies
is recorded as "the reader crashed (exit code N)", one that runs past `timeout` seconds is
killed and recorded as "timed out after N s". Workers are forked from a `forkserver` that has
already imported the analysis and rendering modules (falling back to `spawn` where there is no
forkserver), which keeps the per-report start-up cost low without ever forking the caller's own
process.

The function a worker runs is a parameter (`job`, `analyse_one` by default), so that tests can
stand in a job that hangs or crashes. Whatever is passed must be picklable by reference (a
module-level function, or a `functools.partial` of one) and importable in the worker.
"""

from __future__ import annotations

import contextlib
import inspect
import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ..settings import AnalysisSettings
from .inputs import shown_path
from .job import Job, JobResult, Staging, analyse_one, error_result

# Imported once by the forkserver, so every worker forked from it starts with them loaded.
PRELOAD = [
    "ncu_roofline.batch.job",
    "ncu_roofline.api.analysis",
    "ncu_roofline.render.html",
    "ncu_roofline.render.report",
    "ncu_roofline.views.report",
    "ncu_roofline.render.charts.roofline",
    "ncu_report",
    "jinja2",
]


def _child(conn: multiprocessing.connection.Connection, job: Job, path: str, settings: AnalysisSettings,
           redact: bool, log_path: str, staging: Staging | None = None) -> None:
    """Worker process body: run `job` for one report and send the result back through `conn`.

    The worker's standard output and error (the native reader's messages included) go to
    `log_path`; the parent shows their end only when the worker crashes. With `staging`, the job
    writes its documents to those files and sends back only their names.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and kills workers
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError, AttributeError):
            stream.flush()
    log_fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(log_fd, 1)
    os.dup2(log_fd, 2)
    os.close(log_fd)
    try:
        call: Callable[..., JobResult] = job  # `staging=` only to a job that takes it (`takes`)
        conn.send(call(path, settings, redact=redact) if staging is None else
                  call(path, settings, redact=redact, staging=staging))
    finally:
        conn.close()


def log_tail(log_path: str, limit: int = 300) -> str:
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


def describe_exit(code: int | None, log_path: str) -> str:
    """Why a worker gave no result: its exit code (and signal), then the end of its output."""
    if code is None:
        text = "the reader crashed (no exit code)"
    else:
        text = f"the reader crashed (exit code {code})"
        if code < 0:
            with contextlib.suppress(ValueError):
                text = f"the reader crashed (exit code {code}, {signal.Signals(-code).name})"
    tail = log_tail(log_path)
    return f"{text}; its last output: {tail}" if tail else text


def default_start_method() -> str:
    """`forkserver` where the platform has it (fast, never forks the caller), else `spawn`."""
    return "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"


def _context(start_method: str | None) -> Any:
    method = start_method or default_start_method()
    ctx = multiprocessing.get_context(method)
    if method == "forkserver":
        ctx.set_forkserver_preload(PRELOAD)
        _start_forkserver()
    return ctx


def _start_forkserver() -> None:
    """Start the forkserver with this package importable, so that its preload takes effect.

    The forkserver does not inherit the caller's `sys.path` (Python 3.11), so a checkout that is
    not installed would silently skip the preload (or preload another installed copy);
    PYTHONPATH names the folder that holds this package while the server starts. A forkserver
    that is already running is reused as it is.
    """
    from multiprocessing import forkserver

    root = str(Path(__file__).resolve().parents[2])
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = root + (os.pathsep + old if old else "")
    try:
        forkserver.ensure_running()
    finally:
        if old is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = old


class Runner(Protocol):
    """What runs the reports of a batch: `run_isolated` (this machine), or a Dask runner (`dask_run.py`).
    One that also takes `staging_dir=` (as `run_isolated` does) is given a folder in OUTDIR for the
    workers to write their documents to (`takes`)."""

    def __call__(self, paths: list[str], settings: AnalysisSettings, *, redact: bool = ..., jobs: int,
                 timeout: float, on_result: Callable[[str, JobResult, float], None],
                 start_method: str | None = ..., job: Job = ...) -> None: ...


def takes(fn: Callable[..., Any], name: str) -> bool:
    """Whether `fn` (a function, a `functools.partial`, a callable object) accepts the keyword `name`."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):  # no signature to read (a builtin): pass nothing it may not take
        return False
    return any((p.name == name and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)) or p.kind == p.VAR_KEYWORD
               for p in params)


@dataclass
class _Running:
    path: str
    process: Any
    conn: multiprocessing.connection.Connection
    log_path: str
    started: float
    staging: Staging | None = None


def run_isolated(paths: list[str], settings: AnalysisSettings, *, redact: bool = False, jobs: int,
                 timeout: float, on_result: Callable[[str, JobResult, float], None],
                 start_method: str | None = None, job: Job = analyse_one, staging_dir: str | None = None) -> None:
    """Run `job` (`analyse_one`) for every path, each in its own worker process, `jobs` at a time.

    `on_result(path, result, seconds)` is called in the calling process as each report finishes
    (in completion order). A worker that dies without answering, or runs past `timeout` seconds
    (it is then killed), gives an error result instead; the other reports go on. `staging_dir`: a
    folder where each worker writes its report's documents itself (`<n>.json`, `<n>.html`; the
    result's `staged` names them, for `on_result` to move or remove), instead of sending them back.
    """
    ctx = _context(start_method)
    staged_job = takes(job, "staging")  # a job that cannot write its documents to files returns them
    pending = list(reversed(paths))
    running: list[_Running] = []
    counter = 0

    def finish(task: _Running, result: JobResult) -> None:
        running.remove(task)
        task.conn.close()
        task.process.join(5)
        if task.process.is_alive():
            task.process.kill()
            task.process.join()
        task.process.close()
        with contextlib.suppress(OSError):
            os.unlink(task.log_path)
        if task.staging is not None and not result.get("staged"):  # a failed report: what it wrote goes
            for name in (task.staging.json, task.staging.html):
                with contextlib.suppress(OSError):
                    os.unlink(name)
        on_result(task.path, result, time.monotonic() - task.started)

    with tempfile.TemporaryDirectory(prefix="ncu-roofline-batch-") as logs:
        try:
            while pending or running:
                while pending and len(running) < jobs:
                    path = pending.pop()
                    counter += 1
                    log_path = os.path.join(logs, f"{counter}.log")
                    reader, writer = ctx.Pipe(duplex=False)
                    staging = None if staging_dir is None or not staged_job else Staging(
                        os.path.join(staging_dir, f"{counter}.json"), os.path.join(staging_dir, f"{counter}.html"))
                    process = ctx.Process(target=_child, args=(writer, job, path, settings, redact, log_path, staging),
                                          daemon=True, name=f"ncu-roofline-batch-{counter}")
                    process.start()
                    writer.close()
                    running.append(_Running(path, process, reader, log_path, time.monotonic(), staging))
                deadline = min(t.started for t in running) + timeout
                waitables: list[Any] = [t.conn for t in running] + [t.process.sentinel for t in running]
                ready = multiprocessing.connection.wait(waitables, max(0.0, deadline - time.monotonic()))
                for task in running[:]:  # a copy: finish() removes from `running`
                    if task.conn in ready or task.process.sentinel in ready:
                        result: JobResult | None = None
                        if task.conn.poll():
                            try:
                                result = task.conn.recv()
                            except (EOFError, OSError):
                                result = None
                        if result is None:
                            task.process.join(5)
                            message = describe_exit(task.process.exitcode, task.log_path)
                            result = error_result(shown_path(task.path, redact), None, message)
                        finish(task, result)
                    elif time.monotonic() - task.started >= timeout:
                        task.process.kill()
                        task.process.join()
                        finish(task, error_result(shown_path(task.path, redact), None,
                                                  f"timed out after {timeout:g} s"))
        finally:
            for task in running:
                if task.process.is_alive():
                    task.process.kill()
                task.process.join()
                task.conn.close()
