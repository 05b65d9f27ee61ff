"""Nothing read back is trusted: manifests, JSON documents, peaks files and CSV exports, each tampered with."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import make_kernel
from ncu_csv_writer import write_ncu_csv
from test_model import base_metrics

import ncu_roofline
from ncu_roofline.cli import main
from ncu_roofline.compare.runs import load_run
from ncu_roofline.errors import InputError
from ncu_roofline.knowledge.jsonio import depth, inside_folder
from ncu_roofline.knowledge.peaks_file import load_peaks
from ncu_roofline.readers import read_report
from ncu_roofline.readers.record import RawReport

DEEP = "[" * 100_000 + "]" * 100_000


def run(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


def _one_line_exit_2(result: Any, *words: str) -> str:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ncu-roofline: error: "), result.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return str(lines[0])


@pytest.fixture(scope="module")
def document(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A real report document (two timed kernels), from a CSV export."""
    folder = tmp_path_factory.mktemp("doc")
    kernels = [make_kernel(base_metrics(), index=i, name=f"k{i}") for i in range(2)]
    src = write_ncu_csv(RawReport("k.csv", "csv", kernels), folder / "k.csv")
    doc: dict[str, Any] = ncu_roofline.analyze(src).to_dict()
    return doc


def _batch(folder: Path, doc: dict[str, Any], json_rel: Any = "reports/k.json",
           html_rel: Any = "reports/k.html") -> Path:
    (folder / "reports").mkdir(parents=True, exist_ok=True)
    (folder / "reports" / "k.json").write_text(json.dumps(doc), encoding="utf-8")
    (folder / "reports" / "k.html").write_text("<!DOCTYPE html>", encoding="utf-8")
    manifest = {"schema": "ncu-roofline-batch/1", "settings": {},
                "reports": [{"path": "k.csv", "status": "ok", "error": None, "json": json_rel, "html": html_rel}]}
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return folder


def test_a_batch_folder_reads(tmp_path: Path, document: dict[str, Any]) -> None:
    run_ = load_run(_batch(tmp_path / "b", document))
    assert run_.kind == "batch" and len(run_.kernels) == 2


@pytest.mark.parametrize("where", ["../outside.json", "ABS", "reports/../../outside.json", "javascript:alert(1)",
                                   "reports\\..\\..\\outside.json", "", 5, "reports/link.json"])
def test_a_tampered_manifest_reads_nothing_outside(tmp_path: Path, document: dict[str, Any], where: Any) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps(document), encoding="utf-8")  # readable: refusing it is the point
    folder = tmp_path / "b"
    rel = str(outside) if where == "ABS" else where
    _batch(folder, document, json_rel=rel)
    if where == "reports/link.json":
        os.symlink(outside, folder / "reports" / "link.json")
    with pytest.raises(InputError) as info:
        load_run(folder)
    message = info.value.message
    assert "manifest.json" in message and ("refused" in message or "must be" in message)
    _one_line_exit_2(run("diff", str(folder), str(outside)), "manifest.json")


def test_a_tampered_link_is_refused_too(tmp_path: Path, document: dict[str, Any]) -> None:
    folder = _batch(tmp_path / "b", document, html_rel="javascript:alert(document.cookie)")
    with pytest.raises(InputError, match=r"reports\[0\]\.html .* refused"):
        load_run(folder)
    other = _batch(tmp_path / "c", document)
    _one_line_exit_2(run("trend", str(folder), str(other)), "manifest.json", "refused")


@pytest.mark.parametrize(("edit", "words"), [
    (lambda k: k.update(nvtx_ranges=5), "nvtx_ranges: must be a list, got 5"),
    (lambda k: k.update(bound_by=["l2"]), "bound_by: must be a string or null"),
    (lambda k: k.update(duration_s=-1e-6), "duration_s: must be at least 0"),
    (lambda k: k.update(duration_s="1"), "duration_s: must be a number or null"),
    (lambda k: k.update(grid_size=[1, 2]), "grid_size: must hold 3 items"),
    (lambda k: k.update(utilization={"dram": "high"}), "utilization.dram: must be a number or null"),
    (lambda k: k.pop("name"), "'name' is missing"),
])
def test_mistyped_documents_are_clean_errors(tmp_path: Path, document: dict[str, Any], edit: Any, words: str) -> None:
    doc = copy.deepcopy(document)
    edit(doc["reports"][0]["kernels"][1])
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_run(path)
    assert words in info.value.message and "reports[0].kernels[1]" in info.value.message
    _one_line_exit_2(run("diff", str(path), str(path)), words)
    batch = _batch(tmp_path / "b", doc)  # the same document inside a batch folder
    _one_line_exit_2(run("trend", str(batch), str(path)), words)


@pytest.mark.parametrize(("text", "words"), [
    (DEEP, "nested deeper than 64 levels"),
    ('{"schema": "ncu-roofline/2", "reports": [{"kernels": [{"name": "k", "duration_s": NaN}]}]}', "NaN"),
    ('{"schema": "ncu-roofline/2", "reports": [{"kernels": [{"name": "k", "duration_s": 1e999}]}]}',
     "does not fit"),
    ("\xff\xfe{", "not UTF-8"),
    ("{", "not valid JSON"),
])
def test_deep_and_broken_json_are_clean_errors(tmp_path: Path, text: str, words: str) -> None:
    path = tmp_path / "doc.json"
    path.write_bytes(text.encode("latin-1") if text.startswith("\xff") else text.encode())
    _one_line_exit_2(run("diff", str(path), str(path)), str(path), words)
    folder = tmp_path / "b"
    folder.mkdir()
    (folder / "manifest.json").write_bytes(path.read_bytes())
    _one_line_exit_2(run("trend", str(folder), str(path)), words)


def test_depth_is_measured_without_recursion() -> None:
    deep: Any = []
    for _ in range(50_000):
        deep = [deep]
    assert depth(deep) == 50_001 and depth(3) == 0 and depth({"a": [1, {"b": 2}]}) == 3


def test_paths_stay_inside_their_folder(tmp_path: Path) -> None:
    assert inside_folder(tmp_path, "reports/a-1.json", "json") == tmp_path / "reports/a-1.json"
    for bad in ("/etc/passwd", "../x", "a/../../x", "a//b", "./a", "C:x", "a\\b", "a\nb", None, 3):
        with pytest.raises(InputError, match="refused"):
            inside_folder(tmp_path, bad, "json")


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
def test_devices_and_pipes_are_refused_unread(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not a regular file"):
        load_peaks("/dev/zero")
    with pytest.raises(InputError, match="not a regular file"):
        read_report("/dev/zero")
    fifo = tmp_path / "pipe.ncu-rep"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="not a regular file"):
        read_report(fifo)  # would block forever if it were opened
    _one_line_exit_2(run("report", str(fifo), "--peaks", "/dev/zero", "-f", "json"), "/dev/zero", "not a regular file")
    big = tmp_path / "big.json"
    with big.open("wb") as fh:
        fh.truncate(2 << 20)
    with pytest.raises(InputError, match="too large"):
        load_peaks(big)


def _export(tmp_path: Path, kernels: int = 2) -> str:
    ks = [make_kernel(base_metrics(), index=i, name=f"k{i}") for i in range(kernels)]
    return write_ncu_csv(RawReport("k.csv", "csv", ks), tmp_path / "k.csv").read_text(encoding="utf-8")


def test_repeated_header_and_units_rows_are_skipped(tmp_path: Path) -> None:
    lines = _export(tmp_path).splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    header, units_row, rows = lines[start], lines[start + 1], lines[start + 2:]
    path = tmp_path / "joined.csv"
    path.write_text("".join([header, units_row, rows[0], header, units_row, rows[1]]), encoding="utf-8")
    report = read_report(path)
    assert [k.name for k in report.kernels] == ["k0", "k1"]
    assert any("skipped 2 repeated header or units row(s)" in w for w in report.warnings)
    mixed = [c if n else '"ID"' for n, c in enumerate(rows[1].split(","))]
    path.write_text("".join([header, units_row, rows[0], ",".join(mixed)]), encoding="utf-8")
    with pytest.raises(InputError, match="second header row with other columns"):
        read_report(path)


def test_negative_shares_and_counts_are_left_out_and_named(tmp_path: Path) -> None:
    metrics = base_metrics()
    metrics["gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"] = (-1e30, "%")
    metrics["dram__bytes_read.sum"] = (-5.0, "byte")
    path = write_ncu_csv(RawReport("n.csv", "csv", [make_kernel(metrics, name="neg")]), tmp_path / "n.csv")
    report = read_report(path)
    (kernel,) = report.kernels
    assert "dram__bytes_read.sum" not in kernel.metrics
    assert "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed" not in kernel.metrics
    (warning,) = [w for w in report.warnings if "impossible" in w]
    assert "kernel 0 (neg): dram__bytes_read.sum = -5" in warning
    assert "pct_of_peak_sustained_elapsed = -1e+30" in warning
    result = run("report", str(path), "-f", "json")
    assert result.exit_code == 0 and "ncu-roofline: warning: " in result.stderr and "impossible" in result.stderr
    utilization = json.loads(result.stdout)["reports"][0]["kernels"][0]["utilization"]
    assert all(v is None or v > -1 for v in utilization.values())
