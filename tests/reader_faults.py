"""Faults for the reader tests: stand-ins for what the isolated reader process runs.

`analyze(..., isolate=True)` runs `ncu_roofline.api.analysis.analyse_detached` in the reader
processes; a test swaps in `functools.partial(analyse_or_abort, crash=NAME)` (monkeypatched on
that module), which dies with SIGABRT on the input named NAME, as NVIDIA's reader does on some
damaged files (`Check failed: count >= 0`). The reader processes are started with `spawn` and get
the test process's `sys.path`, which holds `tests/` under pytest, so this module imports there.
"""

from __future__ import annotations

import os
import sys
import time

from ncu_roofline.api.analysis import ReportResult, analyse_detached
from ncu_roofline.settings import AnalysisSettings


def analyse_or_abort(path: str, settings: AnalysisSettings, keep_metrics: bool = True, launch_records: bool = True, *,
                     crash: str | None = None, hang: str | None = None) -> ReportResult:
    """`analyse_detached`, except that the input named `crash` aborts and the one named `hang` sleeps."""
    name = os.path.basename(path)
    if name == crash:
        print("[libprotobuf ERROR] ... Check failed: count >= 0", file=sys.stderr, flush=True)
        os.abort()
    if name == hang:
        time.sleep(3600)
    return analyse_detached(path, settings, keep_metrics, launch_records)


def raise_input_error(path: str) -> None:
    """An InputError raised in the child (it must arrive whole)."""
    from ncu_roofline.errors import InputError

    raise InputError(path, "a reason", "a hint")


def raise_other(path: str) -> None:
    """Any other exception raised in the child."""
    raise ZeroDivisionError(f"{path} divided")


def echo(value: object) -> object:
    return value


def pid_lingering_at_exit(seconds: float) -> int:
    """This child's process id; the child then takes `seconds` to exit once told to (as NVIDIA's reader takes
    a while to let go of the reports it loaded)."""
    import atexit
    import os
    import time

    atexit.register(time.sleep, seconds)
    return os.getpid()


def says_at_exit(words: str) -> int:
    """This child's process id; the child prints `words` half a second after it is told to exit."""
    import atexit

    def bye() -> None:
        time.sleep(0.5)
        print(words, flush=True)

    atexit.register(bye)
    return os.getpid()


def abort_after(seconds: float) -> None:
    """Abort, as NVIDIA's reader does on some damaged files, after `seconds`."""
    time.sleep(seconds)
    print("Check failed: count >= 0", file=sys.stderr, flush=True)
    os.abort()
