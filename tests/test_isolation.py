"""A crash of NVIDIA's reader costs one file: the reader pool, `report` with an aborting file, signals, outputs."""

from __future__ import annotations

import functools
import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
import reader_faults
from click.testing import CliRunner
from conftest import CORPUS, make_kernel
from ncu_csv_writer import write_ncu_csv
from test_model import base_metrics

from ncu_roofline.api import analysis
from ncu_roofline.cli import main
from ncu_roofline.errors import InputError, OutputError
from ncu_roofline.readers import isolation, read_report, read_report_isolated
from ncu_roofline.readers.isolation import Call, ReaderCrashed, ReaderPool
from ncu_roofline.readers.record import RawReport
from ncu_roofline.render.output import write_atomic

ROOT = Path(__file__).resolve().parents[1]
needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"shared report corpus not found at {CORPUS}")
GOOD = ["cudacode__naive.ncu-rep", "nsight-training__manual_nvtx.ncu-rep", "gpu-workshop__MW_Baseline.ncu-rep"]


def _csv(tmp_path: Path, name: str = "k.csv", kernels: int = 1) -> Path:
    ks = [make_kernel(base_metrics(), index=i, name=f"k{i}") for i in range(kernels)]
    return write_ncu_csv(RawReport(name, "csv", ks), tmp_path / name)


def test_the_pool_survives_a_crash_and_keeps_order() -> None:
    with ReaderPool(2) as pool:
        calls = [Call(reader_faults.echo, (n,), f"file{n}") for n in range(5)]
        calls[2] = Call(os.abort, (), "aborting.ncu-rep")
        outcomes = list(pool.map(calls))
        assert outcomes[:2] == [0, 1] and outcomes[3:] == [3, 4]
        crash = outcomes[2]
        assert isinstance(crash, ReaderCrashed) and crash.path == "aborting.ncu-rep"
        assert crash.reason.startswith("the reader crashed (SIGABRT)")
        # Both slots busy again: the crashed child was replaced (during the map, or now if it
        # crashed on its slot's last call), and exactly once.
        again = [Call(reader_faults.echo, (w,), "x") for w in ("again", "and again")]
        assert list(pool.map(again)) == ["again", "and again"]
        assert pool.started == 3


def test_the_largest_files_start_first_and_map_keeps_order(tmp_path: Path) -> None:
    sizes = {"a": 10, "b": 3000, "c": 200, "d": 200, "e": 0}
    for name, size in sizes.items():
        (tmp_path / name).write_bytes(b"x" * size)
    calls = [Call(reader_faults.echo, (name,), str(tmp_path / name)) for name in sizes]
    calls.append(Call(reader_faults.echo, ("gone",), str(tmp_path / "gone")))  # no file: counts as empty
    calls.append(Call(reader_faults.echo, ("told",), "shown-as", size=1000))  # its size given, not looked up
    with ReaderPool(1) as pool:  # one child: the order finished is the order started
        started = [outcome for _index, outcome, _s in pool.as_completed(calls)]
        assert started == ["b", "told", "c", "d", "a", "e", "gone"]
        told: list[str] = []
        handed: list[str] = []
        for outcome in pool.map(calls, finished=lambda index, outcome: told.append(outcome)):
            assert outcome in told  # each is told as it finishes, before it is handed back in order
            handed.append(outcome)
        assert told == started and handed == [*sizes, "gone", "told"]


@needs_corpus
def test_progress_is_told_as_each_isolated_report_finishes(monkeypatch: pytest.MonkeyPatch) -> None:
    paths = [str(CORPUS / name) for name in GOOD]
    seen: list[tuple[str, int, int]] = []  # (file, launches, reports handed back by then)
    handed: list[str] = []
    real = isolation.ReaderPool.map

    def watched(self: ReaderPool, calls: list[Call], timeout: float | None = None, finished: object = None) -> object:
        for outcome in real(self, calls, timeout, finished):  # type: ignore[arg-type]
            handed.append(outcome.path)
            yield outcome

    monkeypatch.setattr(isolation.ReaderPool, "map", watched)
    a = analysis.analyze(paths, isolate=True, keep_metrics=False,
                         progress=lambda path, n: seen.append((path, n, len(handed))))
    assert [r.path for r in a.reports] == paths
    assert sorted(p for p, _n, _h in seen) == sorted(paths)
    assert {p: n for p, n, _h in seen} == {r.path: r.launch_count for r in a.reports}
    first = next(h for p, _n, h in seen if p == paths[0])
    assert first == 0  # the first input is told before it is handed back, not after


def test_warmed_children_serve_the_calls_that_follow() -> None:
    with ReaderPool(2) as pool:
        pool.warm(5)  # at most the pool's size
        assert pool.started == 2 and all(c.alive and c.busy is None for c in pool._children)
        assert list(pool.map([Call(reader_faults.echo, (n,), f"f{n}") for n in range(4)])) == [0, 1, 2, 3]
        pool.warm(2)  # alive: nothing new
        assert pool.started == 2
    with ReaderPool(2) as pool:
        pool.warm(0)
        assert pool.started == 0


def test_readers_start_only_for_reports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import ncu_roofline.readers as readers

    warmed: list[int] = []

    class Pool:
        def warm(self, count: int) -> None:
            warmed.append(count)

    monkeypatch.setattr(readers, "shared_pool", lambda preload: Pool())
    csv_path = _csv(tmp_path, "e.csv")
    readers.start_readers([csv_path, tmp_path / "export.txt"])
    assert warmed == []
    readers.start_readers([csv_path, tmp_path / "a.ncu-rep", tmp_path / "B.NSIGHT-CUPROF-REPORT"])
    assert warmed == ([2] if readers.ISOLATION_AVAILABLE else [])  # by the names: files are sniffed later


def test_errors_cross_from_the_child_whole() -> None:
    with ReaderPool(1) as pool:
        with pytest.raises(InputError) as info:
            pool.call(reader_faults.raise_input_error, "some.ncu-rep", path="some.ncu-rep")
        assert (info.value.path, info.value.reason, info.value.hint) == ("some.ncu-rep", "a reason", "a hint")
        with pytest.raises(InputError, match=r"internal error while reading it .ZeroDivisionError"):
            pool.call(reader_faults.raise_other, "other.ncu-rep", path="other.ncu-rep")
        assert pool.started == 1  # neither cost the child


@needs_corpus
def test_read_report_isolated_brings_every_metric_back() -> None:
    """Every metric's value and every rule result. Not the units of `derived__*` and `breakdown:*` metrics:
    NVIDIA's reader names those after the access order of the process (`inst` or `thread` for the same
    `derived__sm__sass_thread_inst_executed_op_dfma_pred_on_x2`, whichever was asked first; `byte` or `%` for a
    `breakdown:` list once another report was read in the process)."""
    path = CORPUS / GOOD[0]
    local, isolated = read_report(path), read_report_isolated(path)
    assert [k.name for k in isolated.kernels] == [k.name for k in local.kernels]
    for a, b in zip(local.kernels, isolated.kernels, strict=True):
        assert isinstance(b.metrics, dict) and set(a.metrics) == set(b.metrics)
        assert all(a.metrics[n].value == b.metrics[n].value or (a.metrics[n].is_nan and b.metrics[n].is_nan)
                   for n in b.metrics)
        assert all(a.metrics[n].unit == b.metrics[n].unit for n in b.metrics
                   if not n.startswith(("derived__", "breakdown:")))
        assert list(a.rules) == list(b.rules)


def test_a_hanging_reader_times_out() -> None:
    with ReaderPool(1) as pool:
        started = time.monotonic()
        with pytest.raises(ReaderCrashed, match=r"timed out after 0\.5 s"):
            pool.call(time.sleep, 30, path="slow.ncu-rep", timeout=0.5)
        assert time.monotonic() - started < 10


def test_a_readers_start_up_does_not_count_against_the_timeout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "slow_start.py").write_text("import time\ntime.sleep(2.0)\n")  # a start-up longer than the timeout
    monkeypatch.syspath_prepend(str(tmp_path))  # (the child is given this process's sys.path)
    with ReaderPool(1, preload=("slow_start",)) as pool:
        assert pool.call(abs, -3, path="quick.ncu-rep", timeout=1.5) == 3
    (tmp_path / "stuck_start.py").write_text("import time\ntime.sleep(30)\n")
    monkeypatch.setattr(isolation, "START_UP_LIMIT_S", 1.0)
    with ReaderPool(1, preload=("stuck_start",)) as pool:  # a start-up that never ends is given up on all the same
        started = time.monotonic()
        with pytest.raises(ReaderCrashed, match=r"the reader did not start within 1 s"):
            pool.call(abs, -3, path="quick.ncu-rep", timeout=0.5)
        assert time.monotonic() - started < 10
    (tmp_path / "abort_start.py").write_text("import os\nos.abort()\n")
    # not the file's fault: the reader's set-up is named
    with ReaderPool(1, preload=("abort_start",)) as pool, \
            pytest.raises(ReaderCrashed, match=r"the reader crashed while starting \(SIGABRT"):
        pool.call(abs, -3, path="quick.ncu-rep", timeout=5)


@needs_corpus
def test_report_writes_the_others_when_one_aborts_the_reader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(analysis, "analyse_detached",
                        functools.partial(reader_faults.analyse_or_abort, crash=GOOD[1]))
    out = tmp_path / "out.json"
    result = CliRunner().invoke(main, ["report", *(str(CORPUS / n) for n in GOOD), "-o", str(out)])
    assert result.exit_code == 2, result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("ncu-roofline: error: ")]
    assert len(errors) == 1 and GOOD[1] in errors[0] and "the reader crashed (SIGABRT)" in errors[0]
    assert "Check failed" in errors[0] and "Traceback" not in result.output
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert [Path(r["path"]).name for r in doc["reports"]] == [GOOD[0], GOOD[2]]
    assert [Path(e["path"]).name for e in doc["errors"]] == [GOOD[1]]


def _read_only(folder: Path) -> bool:
    """Make `folder` unwritable, even for root (chattr +i) where that is possible."""
    if os.geteuid() != 0:
        folder.chmod(stat.S_IRUSR | stat.S_IXUSR)
        return True
    done = subprocess.run(["chattr", "+i", str(folder)], capture_output=True, check=False)
    return done.returncode == 0


def _writable(folder: Path) -> None:
    if os.geteuid() == 0:
        subprocess.run(["chattr", "-i", str(folder)], capture_output=True, check=False)
    folder.chmod(stat.S_IRWXU)


def test_report_into_a_read_only_folder_is_one_line(tmp_path: Path) -> None:
    src = _csv(tmp_path)
    folder = tmp_path / "ro"
    folder.mkdir()
    if not _read_only(folder):
        pytest.skip("cannot make a folder read-only here (root without chattr)")
    try:
        result = CliRunner().invoke(main, ["report", str(src), "-o", str(folder / "out.html")])
        assert result.exit_code == 2
        assert result.stderr.count("\n") == 1 and "cannot write into the folder" in result.stderr
        assert "Traceback" not in result.output and list(folder.iterdir()) == []
    finally:
        _writable(folder)


def test_an_interrupted_write_leaves_no_temporary_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "out.html"
    target.write_text("old")

    def interrupted(*_args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(target, "new", force=True)
    assert [p.name for p in tmp_path.iterdir()] == ["out.html"] and target.read_text() == "old"
    monkeypatch.undo()
    monkeypatch.setattr("tempfile.mkstemp", lambda **_: (_ for _ in ()).throw(PermissionError(13, "Permission denied")))
    with pytest.raises(OutputError, match="cannot write into the folder"):
        write_atomic(tmp_path / "x.html", "x")


def _wait_until_the_command_runs(proc: subprocess.Popen[bytes], limit: float = 60) -> None:
    """Until the command group has installed its SIGTERM handler (Linux: /proc), else a few seconds."""
    status = Path(f"/proc/{proc.pid}/status")
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            caught = next(line for line in status.read_text().splitlines() if line.startswith("SigCgt:"))
        except (OSError, StopIteration):
            time.sleep(3)
            return
        if int(caught.split()[1], 16) & (1 << (signal.SIGTERM - 1)):
            return
        time.sleep(0.05)


@pytest.mark.parametrize(("sig", "status", "word"), [(signal.SIGINT, 130, "interrupted"),
                                                    (signal.SIGTERM, 143, "terminated")])
def test_signals_exit_128_plus_and_leave_nothing(tmp_path: Path, sig: signal.Signals, status: int, word: str) -> None:
    """A long `report` (many kernels), signalled while it runs: its exit status, and no stray file."""
    src = _csv(tmp_path, "many.csv", kernels=4000)
    out = tmp_path / "out" / "report.json"
    out.parent.mkdir()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))

    def default_sigint() -> None:  # a background job may inherit SIGINT ignored; Python then keeps it so
        signal.signal(signal.SIGINT, signal.SIG_DFL)

    proc = subprocess.Popen([sys.executable, "-m", "ncu_roofline", "report", str(src), "-o", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=tmp_path,
                            preexec_fn=default_sigint)
    _wait_until_the_command_runs(proc)
    time.sleep(0.5)
    assert proc.poll() is None, "the report finished before the signal; give it more kernels"
    proc.send_signal(sig)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == status, stderr
    assert word in stderr.decode() and b"Traceback" not in stderr
    assert list(out.parent.iterdir()) == []  # nothing written, no temporary file


def test_a_worn_out_reader_is_replaced_between_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    """NVIDIA's reader keeps memory after every report it loads: a child is replaced after its
    `retire_after`-th call, or once its resident memory reaches `retire_at_bytes`; the calls' answers
    and their order are unchanged."""
    with ReaderPool(1, retire_after=3) as pool:
        calls = [Call(reader_faults.echo, (n,), f"file{n}") for n in range(7)]
        assert list(pool.map(calls)) == list(range(7))
        assert pool.started == 3  # calls 0-2, 3-5, 6
    with ReaderPool(1, retire_at_bytes=1) as pool:  # every child is over a 1-byte budget
        assert pool.call(reader_faults.echo, "a", path="a") == "a" and pool.started == 1
        assert pool.call(reader_faults.echo, "b", path="b") == "b" and pool.started == 2
    with ReaderPool(1, retire_after=1) as pool:  # a retired child exits on its own time: the next call goes on
        first = pool.call(reader_faults.pid_lingering_at_exit, 4.0, path="a")
        assert pool.call(reader_faults.echo, "b", path="b") == "b" and pool.started == 2
        os.kill(first, 0)  # still exiting (a stop that waited for it would have reaped it): no error
    with pytest.raises(ProcessLookupError):  # closing the pool stops and reaps it
        os.kill(first, 0)
    with ReaderPool(1, retire_after=1) as pool:  # one that does not exit in time is killed, not left to pile up
        monkeypatch.setattr(isolation, "RETIRE_GRACE_S", 0.5)
        stuck = pool.call(reader_faults.pid_lingering_at_exit, 3600.0, path="a")
        pool.call(reader_faults.echo, "b", path="b")
        time.sleep(1.0)
        pool.call(reader_faults.echo, "c", path="c")  # its slot's next child: the stuck one is killed then
        with pytest.raises(ProcessLookupError):
            os.kill(stuck, 0)
    with ReaderPool(1, retire_after=1) as pool:  # a crash shows its own child's output, not a retired one's
        pool.call(reader_faults.says_at_exit, "retired " * 40, path="first.ncu-rep")
        with pytest.raises(InputError) as crashed:
            pool.call(reader_faults.abort_after, 1.5, path="second.ncu-rep")
    assert "Check failed" in str(crashed.value) and "retired" not in str(crashed.value)
    with ReaderPool(2) as pool:  # the defaults keep a child for many calls
        list(pool.map([Call(reader_faults.echo, (n,), "x") for n in range(10)]))
        assert pool.started == 2


def test_the_command_starts_its_readers_before_the_package_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    """`ncu-roofline report x.ncu-rep` starts its reader processes from the package's first lines (told by the
    arguments alone); nothing else does: another program, a reader process, `--help`, `batch`, CSV inputs."""
    import ncu_roofline.readers as readers

    warmed: list[tuple[tuple[str, ...], int]] = []

    class Pool:
        def __init__(self, preload: tuple[str, ...]) -> None:
            self.preload = preload

        def warm(self, count: int) -> None:
            warmed.append((self.preload, count))

    monkeypatch.setattr(readers, "shared_pool", Pool)
    start = readers.start_for_command
    assert start(["/usr/local/bin/ncu-roofline", "report", "a.ncu-rep", "b.NCU-REP", "c.csv", "-o", "r.json"]) == 2
    assert start(["ncu-roofline", "-q", "diff", "old.ncu-rep", "new.nsight-cuprof-report"]) == 2
    assert warmed == [(readers.ANALYSIS_PRELOAD, 2)] * 2 and readers.ANALYSIS_PRELOAD == analysis.ISOLATED_PRELOAD
    for argv in (["ncu-roofline", "report", "--help", "a.ncu-rep"], ["ncu-roofline", "batch", "a.ncu-rep"],
                 ["ncu-roofline", "report", "run.csv"], ["ncu-roofline"], ["-c", "7"], [],
                 ["/opt/conda/bin/ipykernel_launcher.py", "report", "a.ncu-rep"]):
        assert start(argv) == 0, argv
    assert len(warmed) == 2
    # the package itself, imported as the command: its pool has started a reader before anything else ran
    probe = ("import sys; sys.argv = ['/usr/bin/ncu-roofline', 'report', 'x.ncu-rep']; import ncu_roofline; "
             "from ncu_roofline.readers import isolation; print(sum(p.started for p in isolation._SHARED.values()))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "1"


@pytest.mark.parametrize(("argv", "orig_argv", "command"), [
    (["/usr/local/bin/ncu-roofline", "report", "a.csv"], ["/usr/bin/python3", "/usr/local/bin/ncu-roofline"], True),
    (["-m"], ["python", "-m", "ncu_roofline", "report", "a.csv"], True),
    (["-m"], ["python", "-X", "importtime", "-m", "ncu_roofline.cli", "-q"], True),
    (["-m"], ["python", "-m", "otherpkg"], False),  # another program run with -m whose package imports this one
    (["-m"], [], False), (["notebook.py"], ["python", "notebook.py", "-m", "ncu_roofline"], False),
    (["/usr/lib/python3/site-packages/pytest/__main__.py", "-m", "ncu_roofline"], ["python", "-m", "pytest"], False),
    ([], [], False)])
def test_the_command_is_told_by_its_command_line(argv: list[str], orig_argv: list[str], command: bool) -> None:
    import ncu_roofline

    assert ncu_roofline._runs_as_command(argv, orig_argv) is command


@pytest.mark.parametrize(("argv0", "preset", "expected"), [
    ("/usr/local/bin/ncu-roofline", None, "1"), ("/usr/local/bin/ncu-roofline", "4", "4"), ("notebook.py", None, None)])
def test_the_command_runs_numpy_without_blas_threads_and_a_library_import_sets_nothing(
        argv0: str, preset: str | None, expected: str | None) -> None:
    """The command multiplies no matrices: OpenBLAS's threads, which spin once numpy loads, are not started in it
    (nor in the reader processes, which inherit its environment), unless the user chose a number."""
    probe = (f"import os, sys; sys.argv[0] = {argv0!r}; import ncu_roofline; "
             "print(os.environ.get('OPENBLAS_NUM_THREADS'), len(os.listdir('/proc/self/task')) "
             "if os.path.isdir('/proc/self/task') else 1)")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if preset is not None:
        env["OPENBLAS_NUM_THREADS"] = preset
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True,
                         env=env)
    value, threads = out.stdout.split()
    assert value == str(expected)
    if expected == "1":
        assert threads == "1"  # no thread besides the interpreter's own


def test_reader_processes_run_numpy_without_blas_threads_unless_told(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    with ReaderPool(1) as pool:
        assert pool.call(os.getenv, "OPENBLAS_NUM_THREADS", path="x") == "1"
    assert "OPENBLAS_NUM_THREADS" not in os.environ  # the caller's own environment is left alone
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "3")
    with ReaderPool(1) as pool:
        assert pool.call(os.getenv, "OPENBLAS_NUM_THREADS", path="x") == "3"


@needs_corpus
def test_groups_and_words_made_by_the_reader_process_are_those_made_here() -> None:
    """A report read in a reader process comes back with its groups and its findings' words made there; every
    output of it is the one made here, and other settings, another kernel list or a focus make its groups again."""
    import dataclasses

    from ncu_roofline.api.focus import Focus

    paths = [CORPUS / name for name in GOOD]
    here, there = analysis.analyze(paths), analysis.analyze(paths, isolate=True)
    assert all(r.grouped is not None and r.grouped[:3] == ("launch", here.settings.threshold, r.kernels)
               for r in there.reports)
    findings = [f for r in there.reports for k in r.kernels for f in k.diagnosis]
    findings += [f for r in there.reports for g in r.grouped[3] for f in g.summary.diagnosis]  # type: ignore[index]
    assert findings and all(f._words is not None for f in findings)
    assert [f.words() for f in findings] == [dataclasses.replace(f).words() for f in findings]  # made afresh
    assert there.to_json() == here.to_json()
    report = there.reports[2]
    assert there.groups_of(report) is report.grouped[3]  # type: ignore[index]
    for a in (here, there):
        a.settings = dataclasses.replace(a.settings, group_by="name", threshold=0.5)
    assert there.groups_of(report) is not report.grouped[3]  # type: ignore[index]
    assert there.to_json() == here.to_json()
    for a in (here, there):
        a.settings = dataclasses.replace(a.settings, group_by="launch", threshold=report.threshold)
    assert there.groups_of(report) is report.grouped[3]  # type: ignore[index]
    fewer = dataclasses.replace(report, kernels=report.kernels[1:])  # the groups made there are not its groups
    assert analysis.Analysis([fewer], [], there.settings).groups_of(fewer) is not report.grouped[3]  # type: ignore[index]
    focus = Focus(top=1)
    narrowed = there.focused(focus)
    assert all(r.grouped is None for r in narrowed.reports)
    assert narrowed.to_json() == here.focused(focus).to_json()


@needs_corpus
def test_a_report_whose_groups_fail_in_the_reader_process_comes_back_without_them(monkeypatch) -> None:
    """What every output needs is made in the reader process where it can be; where it fails, the report comes back
    all the same (not as an error of its file), and the output that asks for its groups makes them, as for a report
    read in the caller's process."""
    def fails(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("a bug in the grouping")

    monkeypatch.setattr(analysis, "group_kernels", fails)
    report = analysis.analyse_detached(str(CORPUS / GOOD[0]), analysis.AnalysisSettings())
    assert report.grouped is None and report.kernels
