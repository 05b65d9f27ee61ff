"""A batch's reports run on a Dask cluster (`batch --dask [ADDRESS]`), one isolated task each.

`DaskRunner` stands in for `workers.run_isolated` in `run_batch(..., runner=DaskRunner(...))`;
everything else about the batch stays as it is (inputs, reuse of unchanged reports, outputs
written atomically by this process, manifest, progress, exit status). Without an address it
starts a `distributed.LocalCluster` of `jobs` worker processes with one thread each; with one
(`tcp://host:8786`) it connects to that scheduler.

Each report is one task (`dask_task.analyse_task`, retries=0) that runs the job in a child
process on the worker, with the per-report timeout, so a native abort or a hang costs that
report and never a Dask worker. Tasks take the report's path when the workers see the client's
files (a LocalCluster always does; for a remote cluster every worker is asked whether it sees
the inputs with the same sizes), and otherwise its bytes, sent with the task, up to `max_bytes`
(256 MiB by default) per report: a larger one fails with a reason that says so. At most a few
tasks per worker thread are in flight, so sent bytes never pile up in memory.

Dask is optional (`pip install 'ncu-roofline[dask]'`); `DaskRunner()` raises `DaskUnavailable`
(a usage error) when it is missing.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from ..settings import AnalysisSettings
from ..version import __version__
from .dask_task import analyse_task, worker_facts
from .inputs import safe_name, shown_path
from .job import Job, JobResult, analyse_one, error_result
from .run import BatchUsageError

MAX_SEND_BYTES = 256 * 2**20
# A LocalCluster without a dashboard needs no statistical profiler, system monitor samples or a
# 20 ms event-loop tick: at Dask's defaults they cost a tenth of a CPU at rest, which the reports'
# child processes would otherwise lose (a remote cluster keeps its own configuration).
QUIET_LOCAL_CLUSTER = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.system-monitor.interval": "10s",
    "distributed.admin.tick.interval": "1s",
    "distributed.worker.memory.monitor-interval": "1s",
}
INPUT_MODES = ("auto", "paths", "bytes")
INSTALL_HINT = "pip install 'ncu-roofline[dask]'"
_ADDRESS_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://\S+|[A-Za-z0-9_.-]+:\d{1,5}|\[[0-9A-Fa-f:.]+\]:\d{1,5}")


class DaskUnavailable(BatchUsageError):
    """`--dask` was asked for, and Dask (the `distributed` package) is not installed."""


def looks_like_address(text: str) -> bool:
    """Whether `text` is a scheduler address (`tcp://host:8786`, `host:8786`) rather than an input."""
    return bool(_ADDRESS_RE.fullmatch(text))


def require_distributed() -> Any:
    """The `distributed` module, or DaskUnavailable with how to install it."""
    try:
        import distributed
    except ImportError as exc:
        raise DaskUnavailable(f"--dask needs Dask, which is not installed here ({exc}); {INSTALL_HINT}") from exc
    return distributed


def start_local_cluster(jobs: int, local_directory: str | None = None) -> Any:
    """A `distributed.LocalCluster` of `jobs` worker processes, one thread each, on this host only.

    `local_directory`: where the scheduler and the workers keep their scratch files (else Dask's
    `temporary-directory`, by default a `dask-scratch-space` folder in the system's).
    """
    distributed = require_distributed()
    import dask.config

    scratch = {"temporary-directory": local_directory} if local_directory else {}
    with dask.config.set({**QUIET_LOCAL_CLUSTER, **scratch}):
        return distributed.LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True, host="127.0.0.1",
                                        dashboard_address=None, local_directory=local_directory,
                                        silence_logs=logging.ERROR)


def _mib(n: float) -> str:
    return f"{n / 2**20:.1f} MiB"


class DaskRunner:
    """Runs a batch's reports on a Dask cluster (a `workers.Runner`; see the module's docstring).

    `address`: the scheduler (`tcp://host:8786`); None starts a LocalCluster of `jobs` worker
    processes for the run. `client`: an existing `distributed.Client` to use instead (it is
    left open). `inputs`: "paths", "bytes", or "auto" (paths on a LocalCluster, or when every
    worker sees the input files; bytes otherwise). `max_bytes`: the largest report sent as bytes.
    `connect_timeout`, `worker_timeout`: seconds to reach the scheduler, and to wait for a first
    worker. After a run, `mode` says how inputs went ("paths" or "bytes") and `notes` holds
    what the command shows as warnings.
    """

    def __init__(self, address: str | None = None, *, client: Any = None, inputs: str = "auto",
                 max_bytes: int = MAX_SEND_BYTES, connect_timeout: float = 30.0,
                 worker_timeout: float = 120.0) -> None:
        if inputs not in INPUT_MODES:
            raise BatchUsageError(f"inputs must be one of {', '.join(INPUT_MODES)}, not {inputs!r}")
        self.distributed = require_distributed()
        self.address = address
        self.client = client
        self.inputs = inputs
        self.max_bytes = max_bytes
        self.connect_timeout = connect_timeout
        self.worker_timeout = worker_timeout
        self.mode: str | None = None
        self.notes: list[str] = []

    @contextlib.contextmanager
    def _connected(self, jobs: int) -> Iterator[Any]:
        """A client for this run: the one given, one connected to `address`, or a LocalCluster's."""
        if self.client is not None:
            yield self.client
            return
        if self.address is not None:
            try:
                client = self.distributed.Client(self.address, timeout=self.connect_timeout)
            except (OSError, ValueError) as exc:
                raise BatchUsageError(f"cannot connect to the Dask scheduler at {self.address} ({exc})") from exc
            with contextlib.closing(client):
                yield client
            return
        with tempfile.TemporaryDirectory(prefix="ncu-roofline-dask-") as scratch:
            cluster = start_local_cluster(jobs, scratch)
            with contextlib.closing(cluster), contextlib.closing(self.distributed.Client(cluster)) as client:
                yield client

    def _choose_mode(self, client: Any, paths: list[str]) -> str:
        """"paths" or "bytes" for this run (asks every worker first, unless it is our LocalCluster)."""
        if self.address is None and self.client is None:
            return "paths" if self.inputs == "auto" else self.inputs
        try:
            client.wait_for_workers(1, timeout=self.worker_timeout)
        except (OSError, TimeoutError) as exc:
            raise BatchUsageError(f"the Dask cluster has no worker after {self.worker_timeout:g} s ({exc})") from exc
        files = [(os.path.abspath(p), os.path.getsize(p)) for p in paths if os.path.isfile(p)]
        facts = client.run(worker_facts, files if self.inputs == "auto" else [])
        versions = sorted({f["version"] for f in facts.values()} - {__version__})
        if versions:
            self.notes.append(f"the Dask workers run ncu-roofline {', '.join(versions)}, this client "
                              f"{__version__}: the outputs are theirs")
        if self.inputs != "auto":
            return self.inputs
        return "paths" if all(f["sees_files"] for f in facts.values()) else "bytes"

    def __call__(self, paths: list[str], settings: AnalysisSettings, *, redact: bool = False, jobs: int,
                 timeout: float, on_result: Callable[[str, JobResult, float], None],
                 job: Job = analyse_one) -> None:
        """Run `job` for every path on the cluster; `on_result` as each finishes (see `run_isolated`).
        A remote worker cannot write into this machine's folder: each result carries its documents."""
        self.mode = None
        with self._connected(jobs) as client:
            self.mode = self._choose_mode(client, paths)
            if self.mode == "bytes":
                self.notes.append("the Dask workers do not see the input files: each report's bytes were sent "
                                  f"with its task (at most {_mib(self.max_bytes)} a report)")
            self._run(client, paths, settings, redact, timeout, on_result, job)

    def _run(self, client: Any, paths: list[str], settings: AnalysisSettings, redact: bool, timeout: float,
             on_result: Callable[[str, JobResult, float], None], job: Job) -> None:
        pending = list(reversed(paths))
        owners: dict[Any, tuple[str, float, Any]] = {}  # future -> (path, submitted, scattered bytes)
        done = self.distributed.as_completed()
        window = max(2, 2 * sum(client.nthreads().values()))

        def submit() -> None:
            while pending and len(owners) < window:
                path = pending.pop()
                source: Any = os.path.abspath(path)
                data = None
                if self.mode == "bytes" and os.path.isfile(path):  # else the worker explains what is wrong
                    size = os.path.getsize(path)
                    if size > self.max_bytes:
                        on_result(path, error_result(shown_path(path, redact), None,
                                                     f"too large to send to the Dask workers ({_mib(size)}, over the "
                                                     f"{_mib(self.max_bytes)} limit; they do not see this file "
                                                     "system)"), 0.0)
                        continue
                    with open(path, "rb") as fh:
                        data = source = client.scatter(fh.read(), hash=False)
                key = f"ncu-roofline-{safe_name(path)}-{uuid.uuid4().hex}"
                future = client.submit(analyse_task, source, path, settings, redact, timeout, job, key=key,
                                       pure=False, retries=0)
                owners[future] = (path, time.monotonic(), data)
                done.add(future)

        try:
            submit()
            while owners:
                future = next(done)
                path, submitted, data = owners.pop(future)
                try:
                    result, seconds = future.result()
                except Exception as exc:  # the task never ran to its end: a lost worker, a cancelled task
                    reason = f"{type(exc).__name__}: {exc}"
                    reason = reason if len(reason) <= 300 else reason[:299] + "…"
                    result = error_result(shown_path(path, redact), None, f"the Dask task failed ({reason})")
                    seconds = time.monotonic() - submitted
                future.release()
                if data is not None:
                    data.release()
                on_result(path, result, seconds)
                submit()
        finally:
            if owners:
                client.cancel(list(owners))
