"""Isolated worker processes: every report analysed in a reader child process, at most `jobs` at a time.

A crash of the native `ncu_report` reader or a hang costs only that report: a worker that dies
is recorded as "the reader crashed (SIGABRT)", one that runs past `timeout` seconds is killed and
recorded as "timed out after N s" (a fresh worker's start-up is not counted: one that does not start
within `readers.isolation.START_UP_LIMIT_S`, or the timeout if longer, is "the reader did not start").
The workers are the reader pool's (`readers.isolation.ReaderPool`, the one pool every command uses):
fresh interpreters that import the analysis and rendering modules once and then serve report after
report, without ever forking the caller's own process.

The function a worker runs is a parameter (`job`, `analyse_one` by default), so that tests can
stand in a job that hangs or crashes. Whatever is passed must be picklable by reference (a
module-level function, or a `functools.partial` of one) and importable in the worker.
"""

from __future__ import annotations

import contextlib
import inspect
import os
from collections.abc import Callable
from typing import Any, Protocol

from ..errors import InputError
from ..readers.isolation import Call, ReaderPool, file_size
from ..settings import AnalysisSettings
from .inputs import shown_path
from .job import Job, JobResult, Staging, analyse_one, error_result

# Imported once by each worker, so every report it serves starts with them loaded.
PRELOAD = (
    "ncu_roofline.batch.job",
    "ncu_roofline.api.analysis",
    "ncu_roofline.render.html",
    "ncu_roofline.render.report",
    "ncu_roofline.views.report",
    "ncu_roofline.render.charts.roofline",
    "ncu_report",
    "jinja2",
)


def _work(job: Job, path: str, settings: AnalysisSettings, redact: bool, staging: Staging | None) -> JobResult:
    """A worker's call: `job` for one report (`staging=` only to a job that takes it, `takes`)."""
    call: Callable[..., JobResult] = job
    return call(path, settings, redact=redact) if staging is None else call(path, settings, redact=redact,
                                                                            staging=staging)


class Runner(Protocol):
    """What runs the reports of a batch: `run_isolated` (this machine), or a Dask runner (`dask_run.py`).
    One that also takes `staging_dir=` (as `run_isolated` does) is given a folder in OUTDIR for the
    workers to write their documents to (`takes`)."""

    def __call__(self, paths: list[str], settings: AnalysisSettings, *, redact: bool = ..., jobs: int,
                 timeout: float, on_result: Callable[[str, JobResult, float], None], job: Job = ...) -> None: ...


def takes(fn: Callable[..., Any], name: str) -> bool:
    """Whether `fn` (a function, a `functools.partial`, a callable object) accepts the keyword `name`."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):  # no signature to read (a builtin): pass nothing it may not take
        return False
    return any((p.name == name and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)) or p.kind == p.VAR_KEYWORD
               for p in params)


def run_isolated(paths: list[str], settings: AnalysisSettings, *, redact: bool = False, jobs: int,
                 timeout: float, on_result: Callable[[str, JobResult, float], None],
                 job: Job = analyse_one, staging_dir: str | None = None) -> None:
    """Run `job` (`analyse_one`) for every path in a worker process, `jobs` at a time.

    `on_result(path, result, seconds)` is called in the calling process as each report finishes
    (in completion order; the largest files start first). A worker that dies without answering, or
    runs past `timeout` seconds (it is then killed), gives an error result instead; the other reports
    go on. `staging_dir`: a folder where each worker writes its report's documents itself (`<n>.json`, `<n>.html`; the
    result's `staged` names them, for `on_result` to move or remove), instead of sending them back.
    """
    staged_job = takes(job, "staging")  # a job that cannot write its documents to files returns them
    stagings = [None if staging_dir is None or not staged_job else
                Staging(os.path.join(staging_dir, f"{n}.json"), os.path.join(staging_dir, f"{n}.html"))
                for n in range(1, len(paths) + 1)]
    calls = [Call(_work, (job, path, settings, redact, staging), shown_path(path, redact), file_size(path))
             for path, staging in zip(paths, stagings, strict=True)]
    with ReaderPool(max(1, jobs), preload=PRELOAD) as pool:
        for index, outcome, seconds in pool.as_completed(calls, timeout):
            if isinstance(outcome, InputError):  # the worker crashed, timed out, or the job failed inside
                result = error_result(shown_path(paths[index], redact), None, outcome.reason)
            else:
                result = outcome
            staging = stagings[index]
            if staging is not None and not result.get("staged"):  # a failed report: what it wrote goes
                for name in (staging.json, staging.html):
                    with contextlib.suppress(OSError):
                        os.unlink(name)
            on_result(paths[index], result, seconds)
