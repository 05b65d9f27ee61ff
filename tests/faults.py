"""Faults for the batch tests: job functions that hang or crash on one named input.

The batch's workers run whatever job they are given (`run_batch(..., job=...)`); a test passes
`functools.partial(faulty_job, hang=NAME, crash=NAME)`. It must be importable in the worker
processes: a reader-pool worker gets the test process's `sys.path`, which holds `tests/` under pytest.
"""

from __future__ import annotations

import os
import sys
import time

from ncu_roofline.batch.job import JobResult, Staging, analyse_one, error_result
from ncu_roofline.settings import AnalysisSettings

# The per-report timeout of the fault tests: the hung input runs past it, and a good one (about 1 s
# alone) stays well under it on a loaded 2-core machine, where two reports run at once.
TIMEOUT_S = 8


def faulty_job(path: str, settings: AnalysisSettings, *, redact: bool = False, html: bool = True,
               staging: Staging | None = None,
               hang: str | None = None, crash: str | None = None) -> JobResult:
    """`analyse_one`, except that the input whose base name is `hang` sleeps forever and the one
    named `crash` dies with SIGABRT (after a line on standard error), as a native crash would."""
    name = os.path.basename(path)
    if name == hang:
        while True:
            time.sleep(3600)
    if name == crash:
        print("simulated crash of the native reader", file=sys.stderr, flush=True)
        os.abort()
    return analyse_one(path, settings, redact=redact, html=html, staging=staging)


def half_written_job(path: str, settings: AnalysisSettings, *, redact: bool = False,
                     staging: Staging | None = None) -> JobResult:
    """A job that writes part of its document to its staging file and then fails, as a job that
    runs out of disk space or hits an error halfway through writing would."""
    if staging is not None:
        with open(staging.json, "wb") as fh:
            fh.write(b'{"schema": ')
    return error_result(path, None, "failed halfway through writing")


def inode_job(path: str, settings: AnalysisSettings, *, redact: bool = False, staging: Staging | None = None,
              record: str = "") -> JobResult:
    """`analyse_one` that notes, in the file `record`, the inode of the JSON file it was given to write (or
    "none" when it was given no files), so that a test can tell the batch renamed that very file into place."""
    result = analyse_one(path, settings, redact=redact, staging=staging)
    with open(record, "a", encoding="utf-8") as fh:
        fh.write(f"{os.path.basename(path)} {os.stat(staging.json).st_ino if staging else 'none'}\n")
    return result


def plain_job(path: str, settings: AnalysisSettings, *, redact: bool = False) -> JobResult:
    """A job written before jobs could write their documents to files: it takes no `staging`."""
    return analyse_one(path, settings, redact=redact)
