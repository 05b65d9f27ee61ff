"""`ncu-roofline batch --dask`: the same outputs as a local batch, with crash isolation on the cluster.

One `LocalCluster` of 2 worker processes (started by the batch's own `start_local_cluster`) serves
the whole module, on 127.0.0.1 only: the commands connect to its address, and the no-address path
is checked by lending it out as the cluster `--dask` would start. The faults (a hang, a native
abort) are injected through the job, as in tests/test_batch.py (tests/faults.py).
"""

from __future__ import annotations

import functools
import importlib
import json
import os
import re
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import faults
import pytest
from click.testing import CliRunner
from conftest import BAD, CORPUS, corpus_files

from ncu_roofline.batch import DaskRunner, dask_run, run_batch
from ncu_roofline.batch.dask_task import worker_facts
from ncu_roofline.batch.job import JobResult, Staging, analyse_one
from ncu_roofline.cli import main
from ncu_roofline.settings import AnalysisSettings

GOOD = ["cudaprogramming__simpleDivergence.ncu-rep", "cuda-mlp-inference__report.ncu-rep",
        "cs599k__silu-2025-04-19-v1.ncu-rep"]
HANG = "nsight-training__manual_nvtx.ncu-rep"
CRASH = "esmm-research__profile.5c6231e.ncu-rep"
TRUNCATED = "synthetic_truncated-50pct__self-join-mistic__profile.ncu-rep"
needs_corpus = pytest.mark.skipif(not corpus_files() or not BAD.is_dir(),
                                  reason=f"shared report corpus not found at {CORPUS}")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory) -> Any:
    """The module's LocalCluster: 2 worker processes, 1 thread each, as `--dask --jobs 2` starts."""
    pytest.importorskip("distributed")
    scratch = tmp_path_factory.mktemp("dask-scratch")
    cluster = dask_run.start_local_cluster(2, str(scratch))
    try:
        yield cluster
    finally:
        cluster.close()


@pytest.fixture(scope="module")
def client(cluster) -> Any:
    distributed = pytest.importorskip("distributed")
    with distributed.Client(cluster) as client:
        yield client


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    if not corpus_files() or not BAD.is_dir():
        pytest.skip(f"shared report corpus not found at {CORPUS}")
    root = tmp_path_factory.mktemp("dask-inputs")
    for name in (*GOOD, HANG, CRASH):
        shutil.copy(CORPUS / name, root / name)
    shutil.copy(BAD / TRUNCATED, root / TRUNCATED)
    (root / "notes.ncu-rep").write_text("not a report\n")
    return root


def run(*args: str):
    return CliRunner().invoke(main, ["batch", *args])


def with_job(monkeypatch, job) -> None:
    command = importlib.import_module("ncu_roofline.cli.batch")  # the module, not the click command
    monkeypatch.setattr(command, "run_batch", functools.partial(run_batch, job=job))


GENERATED = re.compile(rb"<dt>Generated</dt><dd>[^<]*</dd>")


def outputs(out: Path) -> dict[str, Any]:
    """Everything a batch wrote, keyed by file, with the per-report timings and the pages' creation
    time left out (two runs may straddle a minute; the workers' environment is theirs, so
    SOURCE_DATE_EPOCH cannot be set for them here)."""
    doc = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    for e in doc["reports"]:
        e.pop("seconds")
    files = {p.relative_to(out).as_posix(): GENERATED.sub(b"", p.read_bytes())
             for p in sorted((out / "reports").iterdir())}
    return {"manifest": doc, "kernels.csv": (out / "kernels.csv").read_text(encoding="utf-8"), **files}


def differences(a: dict[str, Any], b: dict[str, Any]) -> str:
    """Where two `outputs` differ, briefly: each differing file with 120 characters around its first
    difference (manifest entries are compared one by one), so that a failure says what differed."""
    lines = [f"only in one: {sorted(set(a) ^ set(b))}"] if set(a) != set(b) else []
    for key in sorted(set(a) & set(b)):
        x, y = a[key], b[key]
        if key == "manifest":
            x = {json.dumps(e, sort_keys=True) for e in x["reports"]}
            y = {json.dumps(e, sort_keys=True) for e in y["reports"]}
            lines += [f"manifest entry only in the first: {e}" for e in sorted(x - y)]
            lines += [f"manifest entry only in the second: {e}" for e in sorted(y - x)]
            continue
        if x != y:
            at = next((i for i, (p, q) in enumerate(zip(x, y, strict=False)) if p != q), min(len(x), len(y)))
            lines.append(f"{key} differs at {at}: {x[max(0, at - 60):at + 60]!r} != {y[max(0, at - 60):at + 60]!r}")
    return "\n".join(lines)


def test_no_cluster_is_needed_to_tell_address_from_input() -> None:
    cli = importlib.import_module("ncu_roofline.cli.batch")
    assert dask_run.looks_like_address("tcp://10.0.0.5:8786") and dask_run.looks_like_address("sched:8786")
    assert not dask_run.looks_like_address("runs/") and not dask_run.looks_like_address("a.ncu-rep")
    assert cli._dask_choice(None, ("a",)) == (None, ("a",))
    local = cli.LOCAL_CLUSTER
    assert cli._dask_choice(local, ("a",)) == (local, ("a",))
    assert cli._dask_choice("", ("a",)) == (local, ("a",))
    assert cli._dask_choice("tcp://h:8786", ("a",)) == ("tcp://h:8786", ("a",))
    assert cli._dask_choice("runs/", ("b",)) == (local, ("runs/", "b"))  # `--dask runs/ ...`


def test_missing_extra_says_how_to_install_it(tmp_path, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # `import distributed` now fails
    report = tmp_path / "r.ncu-rep"
    report.write_bytes(b"")
    result = run(str(report), "-o", str(tmp_path / "out"), "--dask")
    assert result.exit_code == 2, result.output
    assert "pip install 'ncu-roofline[dask]'" in result.stderr and "Traceback" not in result.output
    assert not (tmp_path / "out").exists()


def test_unreachable_scheduler_is_a_usage_error(tmp_path) -> None:
    pytest.importorskip("distributed")
    report = tmp_path / "r.ncu-rep"
    report.write_bytes(b"")
    runner = DaskRunner("tcp://127.0.0.1:9", connect_timeout=1)  # port 9 (discard): nothing listens
    with pytest.raises(dask_run.BatchUsageError, match="cannot connect to the Dask scheduler"):
        run_batch([str(report)], tmp_path / "out", runner=runner)


def test_worker_facts_see_files(tmp_path) -> None:
    there = tmp_path / "a.ncu-rep"
    there.write_bytes(b"12345")
    assert worker_facts([(str(there), 5)])["sees_files"] is True
    assert worker_facts([(str(there), 4)])["sees_files"] is False  # another file under that name
    assert worker_facts([(str(tmp_path / "nope"), 5)])["sees_files"] is False


@needs_corpus
def test_cluster_batch_matches_local_and_isolates_faults(inputs, cluster, client, tmp_path, monkeypatch) -> None:
    """A hang and a native abort cost one report each, never a Dask worker; the outputs equal local ones."""
    assert sorted(client.nthreads().values()) == [1, 1]
    profiling = client.run(lambda: __import__("dask").config.get("distributed.worker.profile.enabled"))
    assert set(profiling.values()) == {False}  # a quiet cluster: no statistical profiler
    workers = set(client.scheduler_info()["workers"])
    with_job(monkeypatch, functools.partial(faults.faulty_job, hang=HANG, crash=CRASH))
    local, remote = tmp_path / "local", tmp_path / "dask"
    timeout = str(faults.TIMEOUT_S)
    by_local = run(str(inputs), "-o", str(local), "--jobs", "2", "--timeout", timeout)
    started = time.perf_counter()
    by_dask = run(str(inputs), "-o", str(remote), "--timeout", timeout, "--dask", cluster.scheduler_address)
    assert time.perf_counter() - started < 60
    assert by_local.exit_code == by_dask.exit_code == 1, by_dask.output
    assert outputs(remote) == outputs(local), differences(outputs(remote), outputs(local))
    entries = {Path(e["path"]).name: e for e in json.loads((remote / "manifest.json").read_text())["reports"]}
    assert entries[CRASH]["error"].startswith("the reader crashed (SIGABRT)")
    assert "simulated crash" in entries[CRASH]["error"]
    assert entries[HANG]["error"] == f"timed out after {faults.TIMEOUT_S} s"
    assert entries[TRUNCATED]["status"] == "ok" and entries["notes.ncu-rep"]["status"] == "error"  # read to its cut
    assert all(entries[n]["status"] == "ok" for n in GOOD)
    assert f"{CRASH} failed: the reader crashed (SIGABRT)" in by_dask.stderr
    assert "bytes were sent" not in by_dask.stderr  # the cluster's workers see these files
    assert set(client.scheduler_info()["workers"]) == workers  # no worker died or was replaced
    # a re-run on the cluster reuses what did not change, as locally
    again = run(str(inputs), "-o", str(remote), "--timeout", timeout, "--dask", cluster.scheduler_address)
    assert again.exit_code == 1 and all(f"{n} unchanged" in again.stderr for n in GOOD)
    assert not list(remote.glob("**/*.tmp"))


class _Lent:
    """The module's cluster, lent to a batch as if it had started it: closing it keeps it running."""

    def __init__(self, cluster: Any) -> None:
        self._cluster = cluster

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cluster, name)

    def close(self) -> None:
        pass


@needs_corpus
def test_dask_without_address_starts_a_local_cluster_of_jobs_workers(inputs, cluster, tmp_path,
                                                                     monkeypatch) -> None:
    started: list[tuple[int, Any]] = []

    def lend(jobs: int, local_directory: str | None = None) -> Any:
        started.append((jobs, local_directory))
        return _Lent(cluster)

    monkeypatch.setattr(dask_run, "start_local_cluster", lend)
    out = tmp_path / "out"
    result = run("--dask", str(inputs / GOOD[0]), str(inputs / GOOD[1]), "-o", str(out), "--jobs", "3")
    assert result.exit_code == 0, result.output
    assert [jobs for jobs, _ in started] == [2]  # --jobs, but no more workers than reports
    assert started[0][1] and not os.path.exists(started[0][1])  # its scratch folder is gone
    assert len(json.loads((out / "manifest.json").read_text())["reports"]) == 2


def faulty_bytes_job(path: str, settings: AnalysisSettings, *, redact: bool = False,
                     display_path: str | None = None, staging: Staging | None = None,
                     crash: str | None = None) -> JobResult:
    """`analyse_one` that takes `display_path` (bytes inputs), and aborts on the file named `crash`."""
    if os.path.basename(path) == crash:
        os.abort()
    return analyse_one(path, settings, redact=redact, display_path=display_path, staging=staging)


@needs_corpus
def test_bytes_inputs_give_the_same_outputs_and_respect_the_size_limit(inputs, client, tmp_path) -> None:
    specs = [str(inputs / n) for n in (*GOOD[:2], TRUNCATED, "notes.ncu-rep", CRASH)]
    specs.append(str(tmp_path / "missing.ncu-rep"))  # not a file here: sent as a path, fails there too
    job = functools.partial(faulty_bytes_job, crash=CRASH)
    local = run_batch(specs, tmp_path / "local", jobs=2, job=job)
    runner = DaskRunner(client=client, inputs="bytes")
    remote = run_batch(specs, tmp_path / "dask", runner=runner, job=job)
    assert runner.mode == "bytes" and "bytes were sent" in runner.notes[0]
    assert (local.analysed, local.failed) == (remote.analysed, remote.failed) == (3, 3)  # the cut file is read
    remote_outputs, local_outputs = outputs(tmp_path / "dask"), outputs(tmp_path / "local")
    assert remote_outputs == local_outputs, differences(remote_outputs, local_outputs)
    for path in (tmp_path / "dask").rglob("*"):  # the worker's temporary copy is named nowhere
        assert path.is_dir() or b"ncu-roofline-dask-" not in path.read_bytes()
    # a report over the limit is not sent, and says why
    small = min(os.path.getsize(s) for s in specs[:2])
    runner = DaskRunner(client=client, inputs="bytes", max_bytes=small)
    limited = run_batch(specs[:2], tmp_path / "limited", runner=runner)
    errors = [e["error"] for e in limited.entries if e["status"] == "error"]
    assert limited.analysed == 1 and len(errors) == 1
    assert "too large to send to the Dask workers" in errors[0] and "MiB limit" in errors[0]


class _Remote:
    """A stand-in client of a remote cluster whose workers do not see this file system."""

    def __init__(self, facts: dict[str, Any]) -> None:
        self.facts = facts
        self.asked: list[Any] = []

    def wait_for_workers(self, n: int, timeout: float) -> None:
        pass

    def run(self, function: Any, *args: Any) -> dict[str, Any]:
        self.asked.append(args)
        return {"tcp://10.0.0.5:40000": {"version": "0.0.1", "sees_files": True},
                "tcp://10.0.0.6:40000": self.facts}


def test_remote_workers_that_do_not_see_the_files_get_bytes(tmp_path) -> None:
    pytest.importorskip("distributed")
    report = tmp_path / "a.ncu-rep"
    report.write_bytes(b"12345")
    sees = {"version": "0.0.1", "sees_files": True}
    blind = {"version": "0.0.1", "sees_files": False}
    runner = DaskRunner(client=_Remote(blind))
    assert runner._choose_mode(runner.client, [str(report), str(tmp_path / "missing")]) == "bytes"
    assert runner.client.asked == [([(str(report), 5)],)]  # only files that are there, by absolute path
    assert "the Dask workers run ncu-roofline 0.0.1" in runner.notes[0]
    assert DaskRunner(client=_Remote(sees))._choose_mode(_Remote(sees), [str(report)]) == "paths"
    forced = DaskRunner(client=_Remote(blind), inputs="paths")
    assert forced._choose_mode(forced.client, [str(report)]) == "paths"
