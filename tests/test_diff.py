"""`ncu-roofline diff`: matching, changes, the gate, the three outputs, and the real before/after pairs."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import BAD, CORPUS

from ncu_roofline.cli import main
from ncu_roofline.compare.diff import DEFAULT_MIN_DURATION_S, compare, diff_runs
from ncu_roofline.compare.matching import match_kernels
from ncu_roofline.compare.runs import Run, RunKernel, load_run
from ncu_roofline.errors import InputError
from ncu_roofline.render import DIFF, RenderOptions, render
from ncu_roofline.views.diff import build_diff_view

MW_BASE = CORPUS / "gpu-workshop__MW_Baseline.ncu-rep"
MW_HEAD = CORPUS / "gpu-workshop__MW_DivToMult.ncu-rep"
SILU_BASE = CORPUS / "cs599k__silu-2025-04-18-v4-naive.ncu-rep"
SILU_HEAD = CORPUS / "cs599k__silu-2025-04-18-v9.ncu-rep"
NAIVE = CORPUS / "cudacode__naive.ncu-rep"
COALESCED = CORPUS / "cudacode__global_mem_coalesce.ncu-rep"


def needs(*paths: Path) -> pytest.MarkDecorator:
    missing = [p.name for p in paths if not p.is_file()]
    return pytest.mark.skipif(bool(missing), reason=f"corpus report(s) not found in {CORPUS}: {missing}")


def run_cli(*args: str | Path) -> Any:
    return CliRunner().invoke(main, [str(a) for a in args])


def kernel(name: str, duration: float | None = 1e-3, grid: tuple[int, ...] = (1, 1, 1),
           block: tuple[int, ...] = (128, 1, 1), nvtx: tuple[str, ...] = (), **extra: Any) -> dict[str, Any]:
    """A minimal `ncu-roofline/1` kernel dict."""
    k: dict[str, Any] = {"index": 0, "name": name, "demangled_name": name, "device": "Test GPU",
                         "grid_size": list(grid), "block_size": list(block), "nvtx_ranges": list(nvtx),
                         "usable": True, "duration_s": duration, "bound_by": "dram", "regime": "at_limit",
                         "utilization": {"dram": 0.7, "fp32": 0.1}, "intensity_flop_per_byte": {"dram": 0.5},
                         "achieved_flop_per_s": 1e11, "peaks": {"dram_bytes_per_s": 1e12, "fp32_flop_per_s": 2e13},
                         "work_flop": {"fp32": 1e8}, "ceilings": [], "diagnosis": []}
    k.update(extra)
    return k


def make_run(kernels: list[dict[str, Any]], name: str = "run.json") -> Run:
    for n, k in enumerate(kernels):
        k.setdefault("index", n)
        k["index"] = n
    return Run(name, "json", [name], [RunKernel(name, k) for k in kernels])


# ---------------------------------------------------------------------------------------------
# Matching (hand-built)


def test_matching_follows_order_of_occurrence_per_key() -> None:
    base = [kernel("A"), kernel("B"), kernel("A"), kernel("A", grid=(2, 1, 1))]
    head = [kernel("B"), kernel("A", grid=(2, 1, 1)), kernel("A"), kernel("A")]
    m = match_kernels(base, head)
    assert [(p.base, p.head) for p in m.pairs] == [(0, 2), (1, 0), (2, 3), (3, 1)]
    assert not any(p.launch_config_changed or p.nvtx_changed for p in m.pairs)
    assert m.unmatched_base == [] and m.unmatched_head == []


def test_changed_launch_configuration_matches_by_name_in_a_second_pass() -> None:
    base = [kernel("A"), kernel("A"), kernel("C", nvtx=("step",))]
    head = [kernel("A"), kernel("A", grid=(4, 1, 1), block=(256, 1, 1)), kernel("C", nvtx=("other",))]
    m = match_kernels(base, head)
    by_base = {p.base: p for p in m.pairs}
    assert (by_base[0].head, by_base[0].launch_config_changed) == (0, False)
    assert (by_base[1].head, by_base[1].launch_config_changed, by_base[1].nvtx_changed) == (1, True, False)
    assert (by_base[2].head, by_base[2].launch_config_changed, by_base[2].nvtx_changed) == (2, False, True)


def test_unmatched_kernels_on_both_sides_and_demangled_name_is_the_key() -> None:
    base = [kernel("_Z3fooi", demangled_name="foo(int)"), kernel("gone"), kernel("A"), kernel("A")]
    head = [kernel("_Z3fooi_clone", demangled_name="foo(int)"), kernel("A"), kernel("new")]
    d = diff_runs(make_run(base), make_run(head))
    assert sorted(c["name"] for c in d.matched) == ["A", "foo(int)"]
    a = next(c for c in d.matched if c["name"] == "A")
    assert a["launches"] == {"base": 2, "head": 1} and a["match"] == "exact"  # launches of A are one group
    assert [u["name"] for u in d.unmatched_base] == ["gone"]
    assert [u["name"] for u in d.unmatched_head] == ["new"]
    assert d.counts["gone"] == 1 and d.counts["new"] == 1
    assert d.totals["all"]["base_count"] == 4 and d.totals["all"]["head_count"] == 3


def test_changes_per_kernel_and_sorting_by_absolute_time_change() -> None:
    base = [kernel("small", 1e-3), kernel("big", 10e-3, bound_by="fp32", utilization={"dram": 0.2, "fp32": 0.8},
                                                intensity_flop_per_byte={"dram": 40.0}, achieved_flop_per_s=1.6e13)]
    head = [kernel("small", 1.2e-3), kernel("big", 5e-3, utilization={"dram": 0.9, "fp32": 0.3},
                                                intensity_flop_per_byte={"dram": 10.0}, achieved_flop_per_s=8e12)]
    d = diff_runs(make_run(base), make_run(head))
    assert [c["name"] for c in d.matched] == ["big", "small"]  # -5 ms before +0.2 ms
    big = d.matched[0]
    assert big["duration"]["delta_s"] == pytest.approx(-5e-3)
    assert big["duration"]["delta_pct"] == pytest.approx(-50.0)
    assert big["duration"]["speedup"] == pytest.approx(2.0)
    assert big["bound_by"] == {"base": "fp32", "head": "dram", "changed": True}
    assert big["bound_utilization"]["base"] == pytest.approx(0.8)
    assert big["bound_utilization"]["head"] == pytest.approx(0.9)
    assert big["utilization"]["dram"]["delta"] == pytest.approx(0.7)
    assert big["utilization"]["fp32"]["delta"] == pytest.approx(-0.5)
    assert big["intensity_flop_per_byte"]["dram"]["ratio"] == pytest.approx(0.25)
    assert big["achieved_flop_per_s"]["ratio"] == pytest.approx(0.5)
    t = d.totals["compared"]
    assert t["base_s"] == pytest.approx(11e-3) and t["head_s"] == pytest.approx(6.2e-3)


def test_findings_appear_and_disappear_by_kind_and_roof() -> None:
    ceiling = [{"kind": "fma_balance", "roof": "fp32", "factor": 0.6}]
    base = [kernel("k", ceilings=ceiling, diagnosis=[
        {"kind": "fma_balance", "roof": "fp32", "text": "few FMA"},
        {"kind": "coalescing", "roof": "l1", "text": "uncoalesced"}])]
    head = [kernel("k", ceilings=ceiling, diagnosis=[
        {"kind": "fma_balance", "roof": "fp32", "text": "few FMA"},
        {"kind": "latency", "roof": "dram", "text": "latency"}])]
    f = diff_runs(make_run(base), make_run(head)).matched[0]["findings"]
    assert f["compared"] is True
    assert [(x["kind"], x["roof"]) for x in f["appeared"]] == [("latency", "dram")]
    assert [(x["kind"], x["roof"]) for x in f["disappeared"]] == [("coalescing", "l1")]
    old_format = kernel("k")
    del old_format["ceilings"]  # a document written before ceilings existed: not compared
    f2 = diff_runs(make_run([old_format]), make_run(head)).matched[0]["findings"]
    assert f2["compared"] is False and f2["appeared"] == []


# ---------------------------------------------------------------------------------------------
# The gate (hand-built)


def gate_of(base: list[dict[str, Any]], head: list[dict[str, Any]], pct: float | None = 5.0,
            **kw: Any) -> dict[str, Any]:
    return diff_runs(make_run(base), make_run(head), fail_on_regression=pct, **kw).gate


def test_gate_threshold_is_strictly_more_than_pct() -> None:
    assert gate_of([kernel("a", 100e-6)], [kernel("a", 105e-6)])["passed"] is True  # exactly +5 %
    g = gate_of([kernel("a", 100e-6)], [kernel("a", 105.5e-6)])
    assert g["passed"] is False
    assert {r["scope"] for r in g["regressions"]} == {"compared", "group"}
    kernel_hit = next(r for r in g["regressions"] if r["scope"] == "group")
    assert kernel_hit["name"] == "a" and kernel_hit["delta_pct"] == pytest.approx(5.5)
    assert kernel_hit["method"] == "floor" and kernel_hit["p_value"] is None  # one launch each: floors
    off = gate_of([kernel("a", 100e-6)], [kernel("a", 200e-6)], pct=None)
    assert (off["enabled"], off["status"], off["passed"], off["regressions"]) == (False, "off", None, [])
    assert off["min_duration_s"] == DEFAULT_MIN_DURATION_S and off["min_delta_s"] == 2e-6


def test_gate_skips_short_kernels_and_jitter_but_counts_them_in_the_total() -> None:
    big = kernel("big", 1e-3)
    # 4 µs -> 8 µs: +100 %, but shorter than --min-duration in BASE
    g = gate_of([big, kernel("short", 4e-6)], [dict(big), kernel("short", 8e-6)])
    assert g["passed"] is True
    # 20 µs -> 21.5 µs: +7.5 % but only 1.5 µs (jitter); 20 -> 23 µs: 3 µs, a regression
    assert gate_of([big, kernel("mid", 20e-6)], [dict(big), kernel("mid", 21.5e-6)])["passed"] is True
    g = gate_of([big, kernel("mid", 20e-6)], [dict(big), kernel("mid", 23e-6)])
    assert [r["name"] for r in g["regressions"]] == ["mid"]
    # the short kernels add up: the compared total is gated whatever their size
    g = gate_of([big, kernel("short", 4e-6), kernel("tiny", 3e-6)], [dict(big), kernel("short", 8e-6),
                                                                     kernel("tiny", 1e-3)])
    assert [r["scope"] for r in g["regressions"]] == ["compared"]
    # ten launches of a short kernel measure its noise: the test, not the floors, decides
    shorts = [kernel("s", 4e-6 * (1 + n / 100)) for n in range(10)]
    g = gate_of(shorts, [kernel("s", 8e-6 * (1 + n / 100)) for n in range(10)])
    hit = next(r for r in g["regressions"] if r["scope"] == "group")
    assert hit["method"] == "mann-whitney" and hit["p_value"] < 1e-4
    # options move both limits
    assert gate_of([big, kernel("short", 4e-6)], [dict(big), kernel("short", 8e-6)],
                   min_duration_s=1e-6, min_delta_s=0.0)["passed"] is False


def test_gate_ignores_faster_kernels_and_unmatched_ones() -> None:
    g = gate_of([kernel("a", 1e-3), kernel("gone", 1e-3)], [kernel("a", 0.5e-3), kernel("new", 9e-3)])
    assert g["passed"] is True and g["regressions"] == []


# ---------------------------------------------------------------------------------------------
# Outputs (hand-built)

HOSTILE = "<script>alert('x')</script> | *bold* `tick` [link](http://e.invalid) &amp; $x$"


def test_json_is_deterministic_and_has_no_nan() -> None:
    base = [kernel("a", 1e-3, achieved_flop_per_s=float("nan")), kernel("b", None)]
    head = [kernel("a", 2e-3), kernel("b", 1e-3)]
    d = diff_runs(make_run(base), make_run(head), fail_on_regression=5)
    text = d.to_json()
    assert text == diff_runs(make_run(base), make_run(head), fail_on_regression=5).to_json()
    assert "NaN" not in text and "Infinity" not in text
    doc = json.loads(text)
    assert doc["schema"] == "ncu-roofline-diff/2"
    assert set(doc) == {"schema", "generator", "base", "head", "matching", "matched", "ambiguous", "unmatched_base",
                        "unmatched_head", "counts", "totals", "coverage", "environment", "gate"}
    a = next(c for c in doc["matched"] if c["name"] == "a")
    assert a["achieved_flop_per_s"]["base"] is None
    b = next(c for c in doc["matched"] if c["name"] == "b")
    assert b["duration"]["delta_pct"] is None  # no BASE duration: no change, never 0
    assert "_position" not in json.dumps(doc) and "peaks" not in a["base"]


def test_hostile_kernel_names_are_escaped_in_html_and_markdown() -> None:
    base = [kernel(HOSTILE, 1e-3), kernel(HOSTILE + " gone", 1e-3)]
    head = [kernel(HOSTILE, 2e-3, intensity_flop_per_byte={"dram": 2.0}), kernel(HOSTILE + " new", 1e-3)]
    d = diff_runs(make_run(base), make_run(head), fail_on_regression=5)
    html = render(DIFF, d, "html", RenderOptions())
    assert html.count("<script") == 1 and "<script src" not in html  # only the page's own sorting script
    assert html.count("alert('x')") == html.count("&lt;script&gt;alert('x')")  # only as escaped text
    assert "&lt;script&gt;" in html
    assert not re.search(r"<(link|img|iframe)\b", html)
    md = render(DIFF, d, "md", RenderOptions())
    # kernel names are code spans (shown as written: no markup, link or mention inside one); the
    # backtick in the name makes the fence two backticks long
    assert "``<…> \\| *bold* `tick` [link](http://e.invalid) &amp; $x$``" in md  # long: template elided
    outside = re.sub(r"``.*?``", "", md)
    assert "<" not in outside and "http://" not in outside
    rows = [line for line in md.splitlines() if line.startswith("| ``")]
    assert rows and all(line.count(" | ") == 9 for line in rows)  # the pipe in the name adds no column
    assert all("\\|" in line for line in rows)


def test_html_chart_has_an_arrow_per_moved_kernel() -> None:
    base = [kernel("moved", 2e-3, intensity_flop_per_byte={"dram": 0.5}, achieved_flop_per_s=1e11),
            kernel("still", 1e-3)]
    head = [kernel("moved", 1e-3, intensity_flop_per_byte={"dram": 4.0}, achieved_flop_per_s=2e12),
            kernel("still", 1e-3)]
    d = diff_runs(make_run(base), make_run(head))
    view = build_diff_view(d)
    assert len(view["charts"]) == 1 and len(view["charts"][0]["arrows"]) == 2
    html = render(DIFF, d, "html", RenderOptions())
    assert html.count('class="arrow" data-kernel=') == 1  # the kernel that did not move has no arrow


# ---------------------------------------------------------------------------------------------
# Loading and the command line: bad input


def test_folder_without_manifest_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"without manifest\.json"):
        load_run(tmp_path)
    result = run_cli("diff", tmp_path, tmp_path)
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and "manifest.json" in result.stderr
    assert "Traceback" not in result.output


def test_bad_json_and_wrong_documents_exit_2(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"schema": "something/1"}), encoding="utf-8")
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"schema": "ncu-roofline/2", "reports": [{"path": "x", "kernels": []}]}),
                     encoding="utf-8")
    for bad, words in ((broken, "not valid JSON"), (other, "not an ncu-roofline/5 document"),
                       (empty, "no usable kernels"), (tmp_path / "absent.ncu-rep", "no such file")):
        result = run_cli("diff", bad, bad)
        assert result.exit_code == 2, result.output
        assert result.stderr.startswith("ncu-roofline: error: ") and words in result.stderr
        assert result.stderr.count("\n") == 1 and "Traceback" not in result.output


@pytest.mark.skipif(not BAD.is_dir(), reason=f"bad-input corpus not found at {BAD}")
@pytest.mark.parametrize("name", ["synthetic_empty.ncu-rep", "synthetic_git-lfs-pointer.ncu-rep",
                                  "real_all-metrics-NaN__self-join-mistic__profileHIGGS.out.ncu-rep"])
def test_unusable_reports_exit_2_with_one_line(name: str) -> None:
    result = run_cli("diff", BAD / name, BAD / name)
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and name in result.stderr
    assert "Traceback" not in result.output


# ---------------------------------------------------------------------------------------------
# The real before/after pairs


@needs(MW_BASE, MW_HEAD)
def test_mw_all_kernels_match_and_compute_tendencies_279_is_faster() -> None:
    d = compare(MW_BASE, MW_HEAD)
    assert len(d.matched) == 5 and not d.unmatched_base and not d.unmatched_head
    assert not any(c["launch_config_changed"] for c in d.matched)
    c = d.matched[0]  # the largest change comes first
    assert c["name"] == "compute_tendencies_x_279_gpu"
    ratio = c["duration"]["base_s"] / c["duration"]["head_s"]
    assert 1.75 <= ratio <= 1.81
    # the FP64 pipe is busier (70 %) than FP64 FLOP fill the roof (52 %): divisions
    assert c["bound_by"]["base"] == "sm__pipe_fp64_cycles_active" and c["bound_by"]["head"] == "dram"
    assert c["findings"]["compared"] is True
    assert c["match"] == "exact" and c["noise"]["method"] == "floor" and c["verdict"] == "improved"
    t = d.totals
    assert t["compared"]["base_s"] == pytest.approx(t["all"]["base_s"])
    assert t["all"]["delta_pct"] < -10
    assert d.coverage["share"] == pytest.approx(1.0)


@needs(MW_BASE, MW_HEAD)
def test_mw_gate_passes_forward_and_fails_swapped(tmp_path: Path) -> None:
    forward = run_cli("diff", MW_BASE, MW_HEAD, "--fail-on-regression", "5")
    assert forward.exit_code == 0, forward.stderr
    assert json.loads(forward.stdout)["gate"]["passed"] is True
    swapped = run_cli("diff", MW_HEAD, MW_BASE, "--fail-on-regression", "5", "-o", tmp_path / "d.md")
    assert swapped.exit_code == 1
    assert f"Wrote {tmp_path / 'd.md'}" in swapped.stdout  # the output is written before failing
    assert "compute_tendencies_x_279_gpu" in swapped.stderr
    assert re.search(r"compute_tendencies_x_279_gpu: 3\.48 ms -> 6\.19 ms \(\+77\.\d %\)", swapped.stderr)
    assert "Traceback" not in swapped.output
    md = (tmp_path / "d.md").read_text(encoding="utf-8")
    verdict = md.splitlines()[2]
    assert verdict.startswith("❌ **Gate failed**") and "`compute_tendencies_x_279_gpu` +77.8 %" in verdict


@needs(MW_BASE, MW_HEAD)
def test_mw_outputs_formats_and_overwrite(tmp_path: Path) -> None:
    html_path = tmp_path / "d.html"
    result = run_cli("diff", MW_BASE, MW_HEAD, "-o", html_path)
    assert result.exit_code == 0 and f"Wrote {html_path}" in result.stdout
    html = html_path.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and "<svg" in html and 'class="arrow"' in html
    assert "compute_tendencies_x_279_gpu" in html and "Tesla V100" in html
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)  # nothing fetched when opened
    again = run_cli("diff", MW_BASE, MW_HEAD, "-o", html_path)
    assert again.exit_code == 2 and "--force" in again.stderr
    assert run_cli("diff", MW_BASE, MW_HEAD, "-o", html_path, "--force").exit_code == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.html"]  # no temporary file left
    md = run_cli("diff", MW_BASE, MW_HEAD, "-o", tmp_path / "d.md")
    assert md.exit_code == 0
    text = (tmp_path / "d.md").read_text(encoding="utf-8")
    assert text.startswith("### Roofline diff") and "FP64 pipe 70 % → **DRAM 81 %**" in text
    assert "Tesla V100" in text and "15.5 ms → 12.7 ms" in text
    # no -o and no --format: JSON on standard output; --format html on standard output when asked
    plain = run_cli("diff", MW_BASE, MW_HEAD)
    assert json.loads(plain.stdout)["schema"] == "ncu-roofline-diff/2"
    assert run_cli("diff", MW_BASE, MW_HEAD, "--format", "html").stdout.startswith("<!DOCTYPE html>")
    assert run_cli("diff", MW_BASE, MW_HEAD, "-o", tmp_path / "d.json").exit_code == 0
    assert json.loads((tmp_path / "d.json").read_text())["totals"]["compared"]["count"] == 5


@needs(SILU_BASE, SILU_HEAD)
def test_silu_v4_to_v9_kernel_matches() -> None:
    d = compare(SILU_BASE, SILU_HEAD)
    assert len(d.matched) == 1 and not d.unmatched_base and not d.unmatched_head
    c = d.matched[0]
    assert c["name"].startswith("void at::native::")  # the demangled name is the key
    assert c["base"]["name"] == "distribution_elementwise_grid_stride_kernel"
    assert c["bound_by"]["base"] == c["bound_by"]["head"] == "sm__issue_active"  # RNG: issue-bound
    assert c["duration"]["base_s"] > 0 and c["duration"]["head_s"] > 0
    assert c["duration"]["delta_pct"] == pytest.approx(
        (c["duration"]["head_s"] / c["duration"]["base_s"] - 1) * 100)
    md = render(DIFF, d, "md", RenderOptions())
    assert "1 unchanged" in md and "100 % of BASE GPU time compared" in md


@needs(NAIVE, COALESCED)
def test_different_kernels_are_all_unmatched() -> None:
    d = compare(NAIVE, COALESCED, fail_on_regression=5)
    assert d.matched == []
    assert [(u["name"], u["launches"]) for u in d.unmatched_base] == [("naive_gemm", 2)]
    assert [(u["name"], u["launches"]) for u in d.unmatched_head] == [("sgemm_global_mem_coalesce", 2)]
    # nothing compared: the gate cannot pass (it is no regression either)
    assert d.gate["passed"] is False and d.gate["status"] == "insufficient_coverage" and not d.failed
    assert d.coverage["share"] == 0.0
    assert d.totals["compared"]["base_s"] is None and d.totals["all"]["base_s"] > 0
    html = render(DIFF, d, "html", RenderOptions())
    assert "No kernel matched" in html and "sgemm_global_mem_coalesce" in html


@needs(MW_BASE, MW_HEAD)
def test_batch_folder_input(tmp_path: Path) -> None:
    from ncu_roofline import analyze

    folder = tmp_path / "batch"
    (folder / "reports").mkdir(parents=True)
    (folder / "reports" / "mw.json").write_text(analyze(MW_HEAD).to_json(), encoding="utf-8")
    manifest = {"schema": "ncu-roofline-batch/1", "reports": [
        {"path": str(MW_HEAD), "status": "ok", "json": "reports/mw.json"},
        {"path": "broken.ncu-rep", "status": "error", "error": "empty file", "json": None}]}
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    run = load_run(folder)
    assert run.kind == "batch" and len(run.kernels) == 5
    assert run.skipped == [{"path": "broken.ncu-rep", "status": "error", "reason": "empty file"}]
    from_folder = compare(MW_BASE, folder)
    from_file = compare(MW_BASE, MW_HEAD)
    assert len(from_folder.matched) == 5
    assert [c["duration"] for c in from_folder.matched] == [c["duration"] for c in from_file.matched]
    result = run_cli("diff", folder, MW_BASE, "--fail-on-regression", "5", "--format", "md")
    assert result.exit_code == 1 and "compute_tendencies_x_279_gpu" in result.stderr
    assert "Not compared (BASE): broken.ncu-rep: empty file" in result.stdout
    # a JSON document written by `report --format json` is an input too
    doc = tmp_path / "head.json"
    doc.write_text(analyze(MW_HEAD).to_json(), encoding="utf-8")
    assert len(compare(MW_BASE, doc).matched) == 5
    assert not math.isnan(compare(MW_BASE, doc).totals["all"]["head_s"])


def test_kernels_that_moved_to_another_gpu_get_one_chart_with_both_roof_sets() -> None:
    base = [kernel("k", 2e-3, device="GPU A")]
    head = [kernel("k", 1e-3, device="GPU B", peaks={"dram_bytes_per_s": 3e12, "fp32_flop_per_s": 6e13},
                   intensity_flop_per_byte={"dram": 2.0}, achieved_flop_per_s=1e12)]
    d = diff_runs(make_run(base), make_run(head))
    (chart,) = build_diff_view(d)["charts"]
    assert chart["device"] == "GPU A → GPU B" and len(chart["arrows"]) == 1
    assert [r["value"] for r in chart["roofs"]] == [3e12, 6e13]  # HEAD's roofs, solid
    assert [r["label"].split()[0] for r in chart["ceilings"]] == ["BASE", "BASE"]  # BASE's, dashed
    html = render(DIFF, d, "html", RenderOptions())
    assert "BASE and HEAD ran on different GPUs" in html and 'class="arrow"' in html


def test_kernels_without_an_arrow_are_listed_once_per_reason_kind() -> None:
    """A diff chart lists matched kernels it cannot draw by reason: the reason is a kind, worded from one table,
    so two kernels unusable on one side share one line and a kernel without FLOP counts gets its own."""
    from ncu_roofline.views.wording import DIFF_OFF_CHART_TEXT, SIDE_NO_FLOP_COUNT, SIDE_UNUSABLE

    base = [kernel("a"), kernel("b"), kernel("c"), kernel("d")]
    unusable = {"usable": False, "achieved_flop_per_s": None, "intensity_flop_per_byte": {}, "bound_by": None}
    head = [kernel("a", **unusable), kernel("b", **unusable), kernel("c", achieved_flop_per_s=None),
            kernel("d", 0.5e-3)]
    (chart,) = build_diff_view(diff_runs(make_run(base), make_run(head)))["charts"]
    assert len(chart["arrows"]) == 1
    assert {(n["why"], n["count"]) for n in chart["off_chart"]} == {
        (DIFF_OFF_CHART_TEXT[SIDE_UNUSABLE], 2), (DIFF_OFF_CHART_TEXT[SIDE_NO_FLOP_COUNT], 1)}
