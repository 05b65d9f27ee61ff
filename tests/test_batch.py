"""`ncu-roofline batch`: parallel isolated workers, outputs, re-runs, failures, hangs and crashes."""

from __future__ import annotations

import csv
import functools
import html
import importlib
import io
import json
import pickle
import shutil
import time
from pathlib import Path

import faults
import pytest
from click.testing import CliRunner
from conftest import BAD, CORPUS, corpus_files

import ncu_roofline.batch.job
from ncu_roofline.batch import analyse_one, run_batch
from ncu_roofline.batch.inputs import find_inputs, safe_name
from ncu_roofline.batch.job import Staging
from ncu_roofline.batch.layout import SCHEMA, STAGING_DIR
from ncu_roofline.batch.workers import run_isolated
from ncu_roofline.cli import main
from ncu_roofline.settings import AnalysisSettings

needs_corpus = pytest.mark.skipif(not corpus_files() or not BAD.is_dir(),
                                  reason=f"shared report corpus not found at {CORPUS}")

# Small, quick reports of several kinds (one .nsight-cuprof-report, one with roofline charts).
GOOD = [
    "cudaprogramming__simpleDivergence.ncu-rep",
    "nsight-training__manual_nvtx.ncu-rep",
    "esmm-research__profile.5c6231e.ncu-rep",
    "cs599k__silu-2025-04-19-v1.ncu-rep",
    "cuda-mlp-inference__report.ncu-rep",
    "pmkid-brute-force__profile.nsight-cuprof-report",
]


def run(*args: str):
    return CliRunner().invoke(main, ["batch", *args])


def manifest(out: Path) -> dict:
    return json.loads((out / "manifest.json").read_text(encoding="utf-8"))


def kernel_rows(out: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO((out / "kernels.csv").read_text(encoding="utf-8"))))


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    """A folder with the good reports under good/ and every bad one under good/bad/ (a subfolder)."""
    if not corpus_files() or not BAD.is_dir():
        pytest.skip(f"shared report corpus not found at {CORPUS}")
    root = tmp_path_factory.mktemp("inputs")
    (root / "good" / "bad").mkdir(parents=True)
    for name in GOOD:
        shutil.copy(CORPUS / name, root / "good" / name)
    for bad in sorted(BAD.glob("*.ncu-rep")):
        shutil.copy(bad, root / "good" / "bad" / bad.name)
    (root / "good" / "notes.txt").write_text("not a report\n")
    return root


@pytest.fixture(scope="module")
def mixed(inputs, tmp_path_factory):
    """One batch over a folder of good and bad reports, with 2 workers (shared by several tests)."""
    out = tmp_path_factory.mktemp("mixed") / "out"
    started = time.perf_counter()
    result = run(str(inputs / "good"), "-o", str(out), "--jobs", "2")
    return out, result, time.perf_counter() - started


# -- inputs and the unit of work (no corpus needed) -----------------------------------------------

def test_find_inputs_walks_globs_dedups_and_sorts(tmp_path) -> None:
    (tmp_path / "sub" / "deeper").mkdir(parents=True)
    for rel in ("b.ncu-rep", "a.CSV", "sub/c.nsight-cuprof-report", "sub/deeper/d.ncu-rep", "sub/x.txt"):
        (tmp_path / rel).write_text("x")
    found = find_inputs([str(tmp_path), str(tmp_path / "b.ncu-rep"), str(tmp_path / "sub" / "x.txt"),
                         str(tmp_path / "**" / "*.ncu-rep"), str(tmp_path / "*.nothing")])
    paths, notes = found.paths, found.notes
    names = [str(Path(p).relative_to(tmp_path)) for p in paths]
    assert names == sorted(names)
    # the folder walk skips x.txt; naming it explicitly takes it; duplicates appear once
    assert names == ["a.CSV", "b.ncu-rep", "sub/c.nsight-cuprof-report", "sub/deeper/d.ncu-rep", "sub/x.txt"]
    assert len(notes) == 1 and "*.nothing" in notes[0]


def test_safe_names_are_safe_and_distinct() -> None:
    a, b = safe_name("runs/one/r <1>.ncu-rep"), safe_name("runs/two/r <1>.ncu-rep")
    assert a != b and a.startswith("r_1_-") and b.startswith("r_1_-")
    assert all(c.isalnum() or c in "._-" for c in a + b)
    assert not safe_name(".hidden.csv").startswith(".")


def test_analyse_one_never_raises(tmp_path, monkeypatch) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("hello\n")
    for path, words in ((tmp_path / "nope.ncu-rep", "no such file"), (tmp_path, "directory"),
                        (text, "not an Nsight Compute report")):
        res = analyse_one(str(path), AnalysisSettings())
        assert res["status"] == "error" and words in res["error"]
        assert res["json"] is None and res["rows"] == []

    def broken(path, settings, **options):  # an unexpected exception inside the analysis
        raise ValueError("not a number")

    monkeypatch.setattr(ncu_roofline.batch.job, "analyze_report", broken)
    res = analyse_one(str(text), AnalysisSettings())
    assert res["status"] == "error" and res["error"].startswith("internal error: ValueError")


@needs_corpus
def test_analyse_one_result_is_small_and_picklable() -> None:
    res = analyse_one(str(CORPUS / "cudaprogramming__simpleDivergence.ncu-rep"), AnalysisSettings(),
                      html=False)
    assert res["status"] == "ok" and res["error"] is None and res["html"] is None
    assert len(res["sha256"]) == 64
    assert isinstance(res["json"], bytes)  # UTF-8, half a str's size for the rule texts' non-Latin-1 marks
    doc = json.loads(res["json"])
    report = ncu_roofline.analyze(CORPUS / "cudaprogramming__simpleDivergence.ncu-rep")
    assert res["json"] == report.to_json().encode("utf-8")
    assert doc["schema"] == "ncu-roofline/5" and len(doc["reports"]) == 1
    assert len(res["rows"]) == res["summary"]["kernel_count"] == doc["reports"][0]["kernel_count"] == 4
    assert sum(res["summary"]["bound_mix"].values()) == 4 and len(res["summary"]["worst"]) == 3
    durations = [w["duration_s"] for w in res["summary"]["worst"]]
    assert durations == sorted(durations, reverse=True)
    assert pickle.loads(pickle.dumps(res)) == res


@needs_corpus
@pytest.mark.parametrize("html", [True, False])
def test_a_staged_job_writes_to_its_files_what_it_would_return(tmp_path, monkeypatch, html) -> None:
    """With `staging`, the job streams its JSON to a file and writes its page to another, and sends
    back only their names: the same bytes as the returned documents, the same rows and summary."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")  # one "generated at" minute for both pages
    path = str(CORPUS / "nsight-training__manual_nvtx.ncu-rep")
    returned = analyse_one(path, AnalysisSettings(), html=html)
    staging = Staging(str(tmp_path / "1.json"), str(tmp_path / "1.html"))
    staged = analyse_one(path, AnalysisSettings(), html=html, staging=staging)
    assert staged["status"] == "ok" and staged["json"] is None and staged["html"] is None
    assert staged["staged"] == {"json": staging.json, "html": staging.html if html else None}
    assert Path(staging.json).read_bytes() == returned["json"]
    if html:
        assert Path(staging.html).read_bytes() == returned["html"].encode("utf-8")
    else:
        assert not Path(staging.html).exists()
    assert (staged["rows"], staged["summary"]) == (returned["rows"], returned["summary"])
    assert "staged" not in returned
    unwritable = Staging(str(tmp_path / "gone" / "1.json"), str(tmp_path / "gone" / "1.html"))
    failed = analyse_one(path, AnalysisSettings(), staging=unwritable)
    assert failed["status"] == "error" and failed["error"].startswith("cannot write this report's outputs")


@needs_corpus
def test_isolated_workers_send_back_names_not_documents_and_remove_what_failed(tmp_path) -> None:
    staging = tmp_path / "staging"
    staging.mkdir()
    got = {}

    def keep(path: str, result, seconds: float) -> None:
        got[Path(path).name] = result

    good = CORPUS / "cudaprogramming__simpleDivergence.ncu-rep"
    run_isolated([str(good)], AnalysisSettings(), jobs=1, timeout=60, on_result=keep, staging_dir=str(staging))
    result = got[good.name]
    assert result["status"] == "ok" and result["json"] is None and result["html"] is None
    assert json.loads(Path(result["staged"]["json"]).read_bytes())["reports"][0]["kernel_count"] == 4
    assert Path(result["staged"]["html"]).read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert sorted(p.name for p in staging.iterdir()) == ["1.html", "1.json"]
    for p in staging.iterdir():
        p.unlink()
    run_isolated([str(good)], AnalysisSettings(), jobs=1, timeout=60, on_result=keep, staging_dir=str(staging),
                 job=faults.half_written_job)
    assert got[good.name]["error"] == "failed halfway through writing"
    assert list(staging.iterdir()) == []  # the half-written document is gone


@needs_corpus
def test_the_batch_renames_the_workers_own_files_into_place(tmp_path) -> None:
    """The worker is given files in OUTDIR and the parent renames those very files (same inode) into
    reports/, with the caller's umask; a job that takes no `staging` still works (it returns them)."""
    good = [str(CORPUS / n) for n in GOOD[:2]]
    record = tmp_path / "inodes.txt"
    result = run_batch(good, tmp_path / "out", jobs=2, job=functools.partial(faults.inode_job, record=str(record)))
    assert result.failed == 0 and result.analysed == 2
    noted = dict(line.split() for line in record.read_text().splitlines())
    for path in good:
        final = tmp_path / "out" / "reports" / f"{safe_name(path)}.json"
        assert str(final.stat().st_ino) == noted[Path(path).name]
        assert json.loads(final.read_bytes())["reports"][0]["kernel_count"] >= 1
    plain = run_batch(good, tmp_path / "plain", jobs=2, job=faults.plain_job)
    assert plain.failed == 0 and {p.name for p in (tmp_path / "plain" / "reports").iterdir()} == {
        p.name for p in (tmp_path / "out" / "reports").iterdir()}
    for name in ("out", "plain"):
        assert not list((tmp_path / name).glob(f"{STAGING_DIR}*"))


def test_a_file_moves_into_place_or_is_copied_with_the_callers_mode(tmp_path, monkeypatch) -> None:
    import errno
    import os

    from ncu_roofline.errors import OutputError
    from ncu_roofline.render.output import move_into_place

    old = os.umask(0o027)
    try:
        src = tmp_path / "a.tmp"
        src.write_bytes(b"one")
        src.chmod(0o600)
        assert move_into_place(src, tmp_path / "a.json").read_bytes() == b"one" and not src.exists()
        assert (tmp_path / "a.json").stat().st_mode & 0o777 == 0o640
        src.write_bytes(b"two")

        rename = os.replace

        def cross_device(a, b):  # the staged file is on another file system; the copy's own rename is not
            if Path(a) == src:
                raise OSError(errno.EXDEV, "Invalid cross-device link")
            rename(a, b)

        monkeypatch.setattr(os, "replace", cross_device)
        assert move_into_place(src, tmp_path / "a.json").read_bytes() == b"two" and not src.exists()
        assert (tmp_path / "a.json").stat().st_mode & 0o777 == 0o640
    finally:
        os.umask(old)
    monkeypatch.undo()
    (tmp_path / "dir.json").mkdir()
    src.write_bytes(b"three")
    with pytest.raises(OutputError, match="is a directory"):
        move_into_place(src, tmp_path / "dir.json")
    assert not src.exists()


def test_a_full_disk_says_to_free_space(tmp_path) -> None:
    import os

    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    path = str(CORPUS / "cudaprogramming__simpleDivergence.ncu-rep")
    if not os.path.isfile(path):
        pytest.skip("shared corpus not present")
    res = analyse_one(path, AnalysisSettings(), staging=Staging("/dev/full", str(tmp_path / "1.html")))
    assert res["status"] == "error" and "No space left on device" in res["error"]
    assert res["error"].endswith("free space in the output folder's file system and run the batch again")


def test_only_the_staging_files_own_errors_are_called_unwritable(tmp_path, monkeypatch) -> None:
    def broken(path, settings, **options):  # an OS error of the analysis, not of the outputs
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(ncu_roofline.batch.job, "analyze_report", broken)
    text = tmp_path / "x.ncu-rep"
    text.write_bytes(b"x")
    staging = Staging(str(tmp_path / "1.json"), str(tmp_path / "1.html"))
    res = analyse_one(str(text), AnalysisSettings(), staging=staging)
    assert res["error"] == "internal error: OSError: [Errno 5] Input/output error"


# -- the command -------------------------------------------------------------------------------

@needs_corpus
def test_mixed_batch_writes_everything_and_lists_failures(inputs, mixed) -> None:
    out, result, _ = mixed
    assert result.exit_code == 1, result.output
    doc = manifest(out)
    assert doc["schema"] == SCHEMA and doc["generator"]["name"] == "ncu-roofline"
    entries = {Path(e["path"]).name: e for e in doc["reports"]}
    bad_names = sorted(p.name for p in BAD.glob("*.ncu-rep"))
    assert sorted(entries) == sorted(GOOD + bad_names)  # notes.txt is not taken from a folder walk
    assert [e["path"] for e in doc["reports"]] == sorted(e["path"] for e in doc["reports"])
    index = (out / "index.html").read_text(encoding="utf-8")
    for name in GOOD:
        e = entries[name]
        assert e["status"] == "ok" and e["error"] is None and e["kernel_count"] >= 1
        report_doc = json.loads((out / e["json"]).read_text(encoding="utf-8"))
        assert report_doc["schema"] == "ncu-roofline/5"
        assert report_doc["reports"][0]["kernel_count"] == e["kernel_count"]
        assert (out / e["html"]).read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
        assert f'href="{e["html"]}"' in index
    failed = [e for e in doc["reports"] if e["status"] == "error"]
    cut = "synthetic_truncated-50pct__self-join-mistic__profile.ncu-rep"  # NVIDIA's reader reads its first half
    assert {Path(e["path"]).name for e in failed} == {n for n in bad_names if n.startswith("synthetic_") and n != cut}
    for e in failed:
        assert e["json"] is None and e["html"] is None and e["error"]
        reason = e["error"].split(": ", 1)[1]
        assert html.escape(reason, quote=False) in index and html.escape(Path(e["path"]).name) in index
        assert f'{Path(e["path"]).name} failed: ' in result.stderr
    assert entries[cut]["status"] == "ok" and entries[cut]["kernel_count"] == 67
    assert any("the file is cut short" in w for w in entries[cut]["warnings"])
    assert "Git LFS" in entries["synthetic_git-lfs-pointer.ncu-rep"]["error"]
    for name in bad_names:  # NaN-only captures load: analysed, with every kernel unusable
        if name.startswith("real_all-metrics-NaN"):
            assert entries[name]["status"] == "ok"
            assert entries[name]["unusable_kernel_count"] == entries[name]["kernel_count"]
    rows = kernel_rows(out)
    assert len(rows) == sum(e["kernel_count"] for e in doc["reports"] if e["status"] == "ok")
    for e in doc["reports"]:
        if e["status"] == "ok":
            assert sum(1 for r in rows if r["report"] == e["path"]) == e["kernel_count"]
    assert {"report", "index", "name", "device", "bound_by", "utilization_dram", "regime"} <= set(rows[0])
    assert "Traceback" not in result.output
    assert not list(out.glob("**/*.tmp"))


@needs_corpus
def test_rerun_reuses_unchanged_reports_and_writes_them_not_again(inputs, mixed) -> None:
    out, _, _first_s = mixed
    before = manifest(out)
    written = {e["json"]: (out / e["json"]).stat().st_mtime_ns for e in before["reports"] if e["json"]}
    again = run(str(inputs / "good"), "-o", str(out), "--jobs", "2")
    assert again.exit_code == 1
    for name in GOOD:
        assert f"{name} unchanged" in again.stderr
    # reused, not analysed again: no report's document was written anew
    assert written and {name: (out / name).stat().st_mtime_ns for name in written} == written
    after = manifest(out)
    assert [(e["path"], e["sha256"], e["json"]) for e in after["reports"]] == \
        [(e["path"], e["sha256"], e["json"]) for e in before["reports"]]
    assert len(kernel_rows(out)) == sum(e["kernel_count"] or 0 for e in after["reports"])


@needs_corpus
def test_force_glob_and_dropped_reports(inputs, tmp_path) -> None:
    out = tmp_path / "out"
    first = run(str(inputs / "good" / "c*.ncu-rep"), "-o", str(out), "--jobs", "1")
    assert first.exit_code == 0, first.output
    names = sorted(Path(e["path"]).name for e in manifest(out)["reports"])
    assert names == sorted(n for n in GOOD if n.startswith("c") and n.endswith(".ncu-rep"))
    dropped = next(e for e in manifest(out)["reports"] if "simpleDivergence" in e["path"])
    # --force re-analyses; the report left out of this run loses its per-report files
    forced = run(str(inputs / "good" / "cs599k*"), "-o", str(out), "--jobs", "1", "--force")
    assert forced.exit_code == 0 and "unchanged" not in forced.stderr and " ok (" in forced.stderr
    assert len(manifest(out)["reports"]) == 1
    assert not (out / dropped["json"]).exists() and not (out / dropped["html"]).exists()


@needs_corpus
def test_hung_and_crashing_readers_cost_only_their_report(inputs, tmp_path, monkeypatch) -> None:
    job = functools.partial(faults.faulty_job, hang="nsight-training__manual_nvtx.ncu-rep",
                            crash="esmm-research__profile.5c6231e.ncu-rep")
    command = importlib.import_module("ncu_roofline.cli.batch")  # the module, not the click command
    monkeypatch.setattr(command, "run_batch", functools.partial(run_batch, job=job))
    out = tmp_path / "out"
    (out / f"{STAGING_DIR}-old").mkdir(parents=True)
    (out / f"{STAGING_DIR}-old" / "7.json").write_bytes(b"{")  # left by a run that was killed: cleared
    names = GOOD[:4]
    started = time.perf_counter()
    result = run(*(str(inputs / "good" / n) for n in names), "-o", str(out), "--jobs", "2",
                 "--timeout", str(faults.TIMEOUT_S))
    assert time.perf_counter() - started < 30
    assert result.exit_code == 1, result.output
    entries = {Path(e["path"]).name: e for e in manifest(out)["reports"]}
    assert entries["nsight-training__manual_nvtx.ncu-rep"]["error"] == f"timed out after {faults.TIMEOUT_S} s"
    crashed = entries["esmm-research__profile.5c6231e.ncu-rep"]["error"]
    assert crashed.startswith("the reader crashed (SIGABRT)") and "simulated crash" in crashed
    for n in (names[0], names[3]):
        assert entries[n]["status"] == "ok"
    assert all(len(e["sha256"]) == 64 for e in entries.values())
    index = (out / "index.html").read_text(encoding="utf-8")
    assert f"timed out after {faults.TIMEOUT_S} s" in index and "the reader crashed" in index
    # the workers' documents were moved into place; nothing of the killed ones is left behind
    assert not list(out.glob(f"{STAGING_DIR}*"))
    assert {p.name for p in (out / "reports").iterdir()} == {
        f"{safe_name(str(inputs / 'good' / n))}.{ext}" for n in (names[0], names[3]) for ext in ("json", "html")}


@needs_corpus
def test_redact_and_options_reach_the_workers(tmp_path) -> None:
    out = tmp_path / "out"
    result = run(str(CORPUS / GOOD[0]), "-o", str(out), "--redact", "--threshold", "0.5",
                 "--bytes-definition", "tags")
    assert result.exit_code == 0, result.output
    doc = manifest(out)
    assert doc["reports"][0]["path"] == GOOD[0]
    assert doc["settings"]["threshold"] == 0.5 and doc["settings"]["redact"] is True
    report_doc = json.loads((out / doc["reports"][0]["json"]).read_text(encoding="utf-8"))
    assert report_doc["settings"]["regime_threshold"] == 0.5
    assert report_doc["settings"]["byte_definition_preference"] == "tags"
    assert {r["report"] for r in kernel_rows(out)} == {GOOD[0]}
    assert str(CORPUS) not in (out / "index.html").read_text(encoding="utf-8")
    # other settings: re-analysed, not reused
    again = run(str(CORPUS / GOOD[0]), "-o", str(out), "--redact")
    assert again.exit_code == 0 and "unchanged" not in again.stderr
    same = run(str(CORPUS / GOOD[0]), "-o", str(out), "--redact")
    assert same.exit_code == 0 and f"{GOOD[0]} unchanged" in same.stderr
    # outputs of an earlier document format: re-analysed, whether the manifest names another
    # format or (as one written before /3) none
    path = out / "manifest.json"
    for edit in ("ncu-roofline/4", None):
        old = json.loads(path.read_text(encoding="utf-8"))
        assert old["settings"]["document_schema"] == "ncu-roofline/5"
        if edit is None:
            del old["settings"]["document_schema"]
        else:
            old["settings"]["document_schema"] = edit
        path.write_text(json.dumps(old), encoding="utf-8")
        older = run(str(CORPUS / GOOD[0]), "-o", str(out), "--redact")
        assert older.exit_code == 0 and "unchanged" not in older.stderr and " ok (" in older.stderr
        assert manifest(out)["settings"]["document_schema"] == "ncu-roofline/5"


@needs_corpus
def test_parquet_from_the_default_install(tmp_path) -> None:
    import pyarrow.parquet as pq  # a dependency of the package, no longer optional

    out = tmp_path / "out"
    assert run(str(CORPUS / GOOD[0]), "-o", str(out)).exit_code == 0
    table = pq.read_table(out / "kernels.parquet")
    assert table.num_rows == len(kernel_rows(out)) == 4


def test_usage_errors_exit_2(tmp_path) -> None:
    result = run(str(tmp_path / "*.ncu-rep"), "-o", str(tmp_path / "out"))
    assert result.exit_code == 2 and "no input report found" in result.stderr
    assert not (tmp_path / "out").exists()
    report = tmp_path / "r.ncu-rep"
    report.write_bytes(b"")
    a_file = tmp_path / "file"
    a_file.write_text("x")
    result = run(str(report), "-o", str(a_file))
    assert result.exit_code == 2 and "not a folder" in result.stderr
    assert run(str(report), "-o", str(tmp_path / "o"), "--jobs", "0").exit_code == 2
    assert run(str(report), "-o", str(tmp_path / "o"), "--timeout", "0").exit_code == 2
    assert run(str(report)).exit_code == 2  # -o is required
    result = run(str(report), "-o", str(tmp_path / "o"), "--peaks", str(tmp_path / "nope.json"))
    assert result.exit_code == 2 and "no such peaks file" in result.stderr


def test_a_batch_output_inside_an_input_folder_is_not_read_back(tmp_path) -> None:
    """`batch runs/ -o runs/out` twice: the second walk must not take out/kernels.csv for a report."""
    if not corpus_files():
        pytest.skip(f"shared report corpus not found at {CORPUS}")
    runs = tmp_path / "runs"
    runs.mkdir()
    shutil.copy(CORPUS / "cudacode__naive.ncu-rep", runs / "a.ncu-rep")
    run_batch([str(runs)], runs / "out", AnalysisSettings(), jobs=1)
    paths = find_inputs([str(runs)]).paths
    assert [Path(p).name for p in paths] == ["a.ncu-rep"]


def test_a_second_batch_into_the_same_folder_is_refused(tmp_path: Path) -> None:
    import fcntl

    from ncu_roofline.batch.run import LOCK_FILE, BatchUsageError, run_batch

    out = tmp_path / "out"
    (out / "reports").mkdir(parents=True)
    src = tmp_path / "a.csv"
    src.write_text("not a report\n")
    with open(out / LOCK_FILE, "a") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)  # another run holds OUTDIR
        with pytest.raises(BatchUsageError, match="another `ncu-roofline batch` is writing"):
            run_batch([str(src)], out, jobs=1)
    result = run_batch([str(src)], out, jobs=1)  # released: runs (the file fails, recorded)
    assert result.failed == 1


@pytest.mark.parametrize("manifest", [
    "[" * 100_000,                                                     # nesting: no RecursionError
    '{"schema": "ncu-roofline-batch/1", "reports": [{"json": "../../etc/passwd"}]}',
    "{}",
])
def test_a_broken_manifest_means_analyse_again_with_a_note(tmp_path: Path, manifest: str) -> None:
    from ncu_roofline.batch.manifest import load_manifest

    out = tmp_path / "out"
    out.mkdir()
    (out / "manifest.json").write_text(manifest)
    notes: list[str] = []
    assert load_manifest(out, notes) is None
    assert len(notes) == 1 and "analysed again" in notes[0] and "manifest.json" in notes[0]


@needs_corpus
@pytest.mark.parametrize("path", [CORPUS / "fuzigrad__output.ncu-rep", CORPUS / "cs599k__profile.ncu-rep",
                                  BAD / "real_all-metrics-NaN__self-join-mistic__profileHIGGS.out.ncu-rep"])
@pytest.mark.parametrize("redact", [False, True])
def test_rows_made_with_the_text_equal_the_rows_read_back_from_it(path, redact) -> None:
    """A job flattens each launch into its row as it writes the launch's JSON; the rows and the
    summary are those the written text gives when read back (an all-NaN capture included: its
    values are absent, null in both)."""
    result = analyse_one(str(path), AnalysisSettings(), redact=redact, html=False)
    assert result["status"] == "ok", result["error"]
    rows, summary = ncu_roofline.batch.job.rows_and_summary(json.loads(result["json"]))
    assert result["rows"] == rows and result["summary"] == summary
    assert len(rows) == summary["kernel_count"] >= 1


@pytest.mark.parametrize("edit", ["no groups", "utilization a list"])
def test_a_hand_edited_kept_document_is_analysed_again(tmp_path: Path, edit: str) -> None:
    """A kept report document that no longer reads as this version wrote it (its groups gone, a group's
    utilization a list) is analysed again: the batch neither crashes nor reuses it."""
    if not (CORPUS / "cudacode__naive.ncu-rep").exists():
        pytest.skip(f"shared report corpus not found at {CORPUS}")
    runs = tmp_path / "runs"
    runs.mkdir()
    shutil.copy(CORPUS / "cudacode__naive.ncu-rep", runs / "a.ncu-rep")
    out = tmp_path / "out"
    assert run_batch([str(runs)], out, AnalysisSettings(), jobs=1).failed == 0
    (entry,) = json.loads((out / "manifest.json").read_text())["reports"]
    doc = json.loads((out / entry["json"]).read_text())
    if edit == "no groups":
        del doc["reports"][0]["groups"]
    else:
        doc["reports"][0]["groups"][0]["utilization"] = [1]
    (out / entry["json"]).write_text(json.dumps(doc))
    assert run_batch([str(runs)], out, AnalysisSettings(), jobs=1).failed == 0
    again = json.loads((out / entry["json"]).read_text())["reports"][0]
    assert isinstance(again["groups"][0]["utilization"], dict)
