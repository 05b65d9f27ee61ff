"""The command line, in-process with click's runner and once as a real subprocess."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys

import pytest
from click.testing import CliRunner
from conftest import BAD, CORPUS, corpus_files

from ncu_roofline.cli import main

needs_corpus = pytest.mark.skipif(not corpus_files(), reason=f"shared report corpus not found at {CORPUS}")


def run(*args: str):
    return CliRunner().invoke(main, list(args))


@needs_corpus
def test_report_json_to_stdout() -> None:
    result = run("report", "--format", "json", str(CORPUS / "cudacode__naive.ncu-rep"))
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["schema"] == "ncu-roofline/5"
    assert doc["reports"][0]["kernel_count"] == 2


@needs_corpus
def test_report_csv_file_atomic_and_no_overwrite(tmp_path) -> None:
    out = tmp_path / "k.csv"
    result = run("report", str(CORPUS / "gpu-workshop__MW_Baseline.ncu-rep"), "-o", str(out))
    assert result.exit_code == 0
    assert f"Wrote {out}" in result.stdout
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    assert len(rows) == 5 and rows[2]["name"] == "compute_tendencies_x_279_gpu"
    assert rows[0]["work_fp16_flop"] == ""  # absent from this report: empty, not 0
    assert rows[0]["work_tensor_flop"] == "0.0"  # the report measured an idle tensor pipe
    again = run("report", str(CORPUS / "gpu-workshop__MW_Baseline.ncu-rep"), "-o", str(out))
    assert again.exit_code == 2 and "--force" in again.stderr
    forced = run("report", str(CORPUS / "gpu-workshop__MW_Baseline.ncu-rep"), "-o", str(out), "--force")
    assert forced.exit_code == 0
    assert [p.name for p in tmp_path.iterdir()] == ["k.csv"]  # no temporary file left behind


CUT = "synthetic_truncated-50pct__self-join-mistic__profile.ncu-rep"  # read to its cut, with a warning


@needs_corpus
@pytest.mark.parametrize("bad", sorted(p.name for p in BAD.glob("synthetic_*") if p.name != CUT) if BAD.is_dir()
                         else [])
def test_bad_inputs_exit_2_with_one_line(bad) -> None:
    result = run("report", str(BAD / bad))
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert lines[0].startswith("ncu-roofline: error: ") and bad in lines[0]
    assert "Traceback" not in result.output + result.stderr


@needs_corpus
def test_a_cut_input_is_read_with_one_warning_line(tmp_path) -> None:
    result = run("report", str(BAD / CUT), "-f", "json", "-o", str(tmp_path / "cut.json"))
    assert result.exit_code == 0, result.output
    (line,) = [x for x in result.stderr.strip().splitlines() if x.startswith("ncu-roofline: warning: ")]
    assert CUT in line and "the file is cut short" in line and "first 67 kernel result(s) are whole" in line
    assert "Traceback" not in result.output + result.stderr


def test_missing_path_directory_and_text(tmp_path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("hello, this is not a report\n")
    for path, words in ((tmp_path / "nope.ncu-rep", "no such file"), (tmp_path, "directory"),
                        (text, "not an Nsight Compute report")):
        result = run("report", str(path))
        assert result.exit_code == 2, path
        assert str(path) in result.stderr and words in result.stderr
        assert "Traceback" not in result.stderr


@needs_corpus
def test_one_bad_file_does_not_stop_the_others(tmp_path) -> None:
    out = tmp_path / "r.json"
    result = run("report", str(CORPUS / "cudacode__naive.ncu-rep"), str(BAD / "synthetic_empty.ncu-rep"),
                 "-o", str(out))
    assert result.exit_code == 2
    doc = json.loads(out.read_text())
    assert len(doc["reports"]) == 1 and len(doc["errors"]) == 1


@needs_corpus
def test_redact_leaves_out_paths_and_nvtx() -> None:
    path = CORPUS / "nsight-training__manual_nvtx.ncu-rep"
    plain = json.loads(run("report", "-f", "json", str(path)).stdout)
    assert plain["reports"][0]["kernels"][1]["nvtx_ranges"] == ["run_test/daxpy"]
    red = run("report", "-f", "json", str(path), "--redact").stdout
    assert str(CORPUS) not in red and "run_test" not in red


def test_peaks_file_errors_are_clean(tmp_path) -> None:
    bad = tmp_path / "peaks.json"
    bad.write_text("{not json")
    result = run("report", str(bad), "--peaks", str(bad))
    assert result.exit_code == 2 and "not valid JSON" in result.stderr


def test_metrics_command_lists_collectable_metrics() -> None:
    result = run("metrics")
    assert result.exit_code == 0
    assert "--section SpeedOfLight_HierarchicalSingleRooflineChart" in result.stdout
    assert "dram__bytes_read.sum" in result.stdout and "gpu__time_duration.sum" in result.stdout
    listed = run("metrics", "--format", "list").stdout.split()
    assert "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum" in listed


@needs_corpus
def test_as_a_user_runs_it(tmp_path) -> None:
    """`python -m ncu_roofline` in a real process: output, exit status, no traceback."""
    proc = subprocess.run([sys.executable, "-m", "ncu_roofline", "report", "--format", "csv",
                           str(CORPUS / "cudacode__naive.ncu-rep"), str(BAD / "synthetic_git-lfs-pointer.ncu-rep")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stdout.startswith("report,index,")
    assert "git lfs pull" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("command", ["report", "diff", "trend"])
def test_output_refused_before_the_analysis(command, tmp_path, monkeypatch) -> None:
    """An output the write would refuse (an existing file without --force, a missing folder) is refused before
    the inputs are read: a run of minutes must not end in a refusal it could have made at once."""
    import importlib

    cli_report, cli_diff, cli_trend = (importlib.import_module(f"ncu_roofline.cli.{m}") for m in ("report", "diff",
                                                                                                 "trend"))

    def never(*args, **kwargs):
        raise AssertionError("the inputs were read before the output was checked")

    monkeypatch.setattr(cli_report, "analyze", never)
    monkeypatch.setattr(cli_diff, "compare", never)
    monkeypatch.setattr(cli_trend, "build", never)
    export = tmp_path / "run.csv"
    export.write_text("not read\n")
    existing = tmp_path / "out.json"
    existing.write_text("keep")
    inputs = [str(export)] * (2 if command == "diff" else 1)
    refused = run(command, *inputs, "-o", str(existing))
    assert refused.exit_code == 2 and "already exists; pass --force" in refused.stderr
    assert existing.read_text() == "keep"
    nowhere = run(command, *inputs, "-o", str(tmp_path / "no" / "out.json"))
    assert nowhere.exit_code == 2 and "does not exist" in nowhere.stderr
