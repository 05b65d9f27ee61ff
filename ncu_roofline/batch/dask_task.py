"""The Dask side of a batch that runs on a Dask worker: one report per task, in a child process.

`analyse_task` is what `dask_run.DaskRunner` submits. It is pure: a report (its path, or its
bytes when the workers do not see the client's files) and the settings in; the job's small
result and the seconds it took out; nothing written but a temporary copy of sent bytes, which
it removes. It runs the job through `workers.run_isolated` with one worker process, so a native
abort or a hang of the reader costs that report ("the reader crashed (exit code -6, SIGABRT)",
"timed out after N s"), never the Dask worker: the task itself always returns. The child is a
plain subprocess (`readers.isolation`), which a daemonic Dask worker may start.
"""

from __future__ import annotations

import contextlib
import functools
import os
import tempfile
from collections.abc import Callable
from typing import Any

from ..settings import AnalysisSettings
from ..version import __version__
from .inputs import shown_path
from .job import JobResult
from .workers import run_isolated


def analyse_task(source: str | bytes, display_path: str, settings: AnalysisSettings, redact: bool,
                 timeout: float, job: Callable[..., JobResult]) -> tuple[JobResult, float]:
    """Analyse one report on a Dask worker, in a child process with `timeout`; (result, seconds).

    `source`: the path to read (the client's absolute path, when the workers share its file
    system), or the report's bytes, which are written to a temporary file of the same base name
    and removed afterwards. `display_path`: the path as the client names it; the outputs name
    the report by it, so they are the same as a local batch's. `job` is called with
    `display_path=` only when the file it reads has another name (`analyse_one` accepts it).
    """
    got: list[tuple[JobResult, float]] = []

    def keep(_path: str, result: JobResult, seconds: float) -> None:
        got.append((result, seconds))

    with contextlib.ExitStack() as stack:
        if isinstance(source, bytes):
            folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="ncu-roofline-dask-"))
            path = os.path.join(folder, os.path.basename(display_path) or "report")
            with open(path, "wb") as fh:
                fh.write(source)
        else:
            path = source
        run_job = functools.partial(job, display_path=display_path) if path != display_path else job
        run_isolated([path], settings, redact=redact, jobs=1, timeout=timeout, on_result=keep, job=run_job)
    result, seconds = got[0]
    return dict(result, path=shown_path(display_path, redact)), seconds


def worker_facts(files: list[tuple[str, int]]) -> dict[str, Any]:
    """What the client asks every worker first: its ncu-roofline version, and whether it sees
    `files` ((absolute path, size) pairs) as the client does, i.e. shares its file system."""
    sees = True
    for path, size in files:
        try:
            if not os.path.isfile(path) or os.path.getsize(path) != size:
                sees = False
                break
        except OSError:
            sees = False
            break
    return {"version": __version__, "sees_files": sees}
