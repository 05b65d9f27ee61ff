"""The CI gate: matching passes, ambiguity, coverage, noise, counter and total gates, exit statuses."""

from __future__ import annotations

import json
import math
import random
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest
from conftest import make_kernel
from ncu_csv_writer import write_ncu_csv
from test_diff import kernel, make_run, run_cli
from test_model import base_metrics

from ncu_roofline.compare.diff import diff_runs
from ncu_roofline.compare.matching import match_kernels
from ncu_roofline.compare.names import (
    MatchRuleError,
    base_function_name,
    generated_name_key,
    parse_match_rule,
)
from ncu_roofline.compare.noise import classify, mann_whitney, reaches_alpha
from ncu_roofline.readers.record import RawReport
from ncu_roofline.render import DIFF, RenderOptions, render

GEMM = "gemm<128, 8, 128, 8, 8>(float const*, float*, int)"
GEMM_FALSE = "gemm<128, 8, 128, 8, 8, false>(float const*, float*, int)"


# ---------------------------------------------------------------------------------------------
# Names


@pytest.mark.parametrize(("name", "base"), [
    ("void gemm<128, 8, 128, 8, 8>(float*, int)", "gemm"),
    (GEMM_FALSE, "gemm"),
    ("ns::Tile<4>::run<2>(int) const", "ns::Tile::run"),
    ("void at::native::<unnamed>::kern<float, (int)4>(int)", "at::native::{unnamed}::kern"),
    ("(anonymous namespace)::kern(int)", "{anonymous}::kern"),
    ("_Z4gemmILi128EEvPf", "gemm"),
    ("_ZN2ns4TileILi4EE3runILi2EEEvi", "ns::Tile::run"),
    ("plain_kernel", "plain_kernel"),
])
def test_base_function_name(name: str, base: str) -> None:
    assert base_function_name(name) == base


@pytest.mark.parametrize(("name", "key"), [
    ("julia__5_11155", "julia__5_"),
    ("julia__5_6739(CuDeviceArray<Float32, 1, 1>)", "julia__5_"),
    ("triton_poi_fused_add_mul_0", "triton_poi_fused_add_mul_"),
    ("triton__0d1d2d3de", "triton__"),
    ("fused_kernel_9f3a61c2d0", "fused_kernel_"),
    ("k_deadbeef12_3", "k_"),
    ("conv_3d", "conv_3d"),          # not a counter: one digit group with a letter
    ("gemm_128x128", "gemm_128x128"),
    ("kernel", "kernel"),
])
def test_generated_name_key(name: str, key: str) -> None:
    assert generated_name_key(name) == key


def test_match_rules_parse_and_refuse() -> None:
    rule = parse_match_rule(r"old_(\d+)=new_(\d+)")
    assert rule.key(rule.base, "old_7") == ("7",) and rule.key(rule.head, "x") is None
    assert parse_match_rule(r"a\=b=c").base.pattern == r"a\=b"
    for bad in ("nothing", "=x", "x=", "(=y", "(a)=b"):
        with pytest.raises(MatchRuleError):
            parse_match_rule(bad)


# ---------------------------------------------------------------------------------------------
# Matching passes


def test_passes_are_stated_per_pair() -> None:
    base = [kernel("same"), kernel(GEMM, grid=(8, 8, 1)), kernel("julia__5_11155"), kernel("triton_poi_fused_0"),
            kernel("old_name")]
    head = [kernel("same"), kernel(GEMM_FALSE, grid=(25, 11, 1)), kernel("julia__5_6739"),
            kernel("triton_poi_fused_3"), kernel("renamed")]
    m = match_kernels(base, head, [parse_match_rule("^old_name$=^renamed$")])
    by_base = {p.base: p for p in m.pairs}
    assert [by_base[i].match for i in range(5)] == ["exact", "same function", "generated name", "generated name",
                                                    "user map"]
    assert by_base[1].launch_config_changed and by_base[1].name_changed and not by_base[0].name_changed
    assert by_base[4].rule == "^old_name$=^renamed$"
    assert not m.unmatched_base and not m.unmatched_head and not m.ambiguous


def test_ambiguous_candidates_are_listed_not_guessed() -> None:
    base = [kernel("gemm<1>(float*)"), kernel("gemm<2>(float*)")]
    head = [kernel("gemm<1, false>(float*)"), kernel("gemm<2, false>(float*)")]
    m = match_kernels(base, head)
    assert m.pairs == [] and m.unmatched_base == [0, 1]
    (a,) = m.ambiguous
    assert (a.match, a.name, a.base, a.head) == ("same function", "gemm", (0, 1), (0, 1))
    # a launch configuration tells them apart
    tied = match_kernels([kernel("gemm<1>()", grid=(4, 1, 1)), kernel("gemm<2>()", grid=(9, 1, 1))],
                         [kernel("gemm<2, f>()", grid=(9, 1, 1)), kernel("gemm<1, f>()", grid=(4, 1, 1))])
    assert [(p.base, p.head) for p in tied.pairs] == [(0, 1), (1, 0)] and not tied.ambiguous
    # a user rule with captured groups settles them; one rule for one of them, the other by elimination
    both = match_kernels(base, head, [parse_match_rule(r"gemm<(\d)>=gemm<(\d), false>")])
    assert [(p.base, p.head, p.match) for p in both.pairs] == [(0, 0, "user map"), (1, 1, "user map")]
    one = match_kernels(base, head, [parse_match_rule(r"^gemm<1>=^gemm<1, false>")])
    assert [(p.base, p.head, p.match) for p in one.pairs] == [(0, 0, "user map"), (1, 1, "same function")]
    assert not one.ambiguous


def test_ambiguity_is_shown_in_the_diff_and_not_compared() -> None:
    base = [kernel("gemm<1>(float*)"), kernel("gemm<2>(float*)"), kernel("other", 1e-3)]
    head = [kernel("gemm<1, false>(float*)"), kernel("gemm<2, false>(float*)"), kernel("other", 1e-3)]
    d = diff_runs(make_run(base), make_run(head), fail_on_regression=5)
    assert [c["name"] for c in d.matched] == ["other"]
    assert len(d.ambiguous) == 1 and len(d.ambiguous[0]["base"]) == 2 and d.unmatched_base == []
    assert d.counts["ambiguous_base"] == d.counts["ambiguous_head"] == 2
    assert d.coverage["share"] == pytest.approx(1 / 3)
    assert d.gate["status"] == "insufficient_coverage"
    md = render(DIFF, d, "md", RenderOptions())
    assert "Ambiguous, so not compared" in md and "`gemm<1>(float*)`" in md and "`gemm<2, false>(float*)`" in md


# ---------------------------------------------------------------------------------------------
# The template-argument case, from ncu CSV exports


def _csv_run(path: Path, gemm: str, grid: tuple[int, int, int], gemm_ns: float) -> Path:
    def metrics(ns: float) -> dict[str, Any]:
        m = base_metrics()
        m["gpu__time_duration.sum"] = (ns, "ns")
        return m

    kernels = [make_kernel(metrics(gemm_ns), index=0, name=gemm, grid_size=grid, block_size=(128, 1, 1)),
               make_kernel(metrics(50_000.0), index=1, name="copy(float*)", grid_size=(64, 1, 1),
                           block_size=(256, 1, 1))]
    return write_ncu_csv(RawReport(str(path), "csv", kernels), path)


def test_template_arguments_and_grid_changed(tmp_path: Path) -> None:
    base = _csv_run(tmp_path / "base.csv", GEMM, (8, 8, 1), 100_000.0)
    head = _csv_run(tmp_path / "head.csv", GEMM_FALSE, (25, 11, 1), 200_000.0)
    forward = run_cli("diff", base, head, "--fail-on-regression", "5", "-f", "json")
    assert forward.exit_code == 1, forward.output
    doc = json.loads(forward.stdout)
    gemm = next(c for c in doc["matched"] if c["name"] == GEMM)
    assert gemm["head_name"] == GEMM_FALSE and gemm["match"] == "same function"
    assert gemm["launch_config_changed"] and gemm["name_changed"]
    assert doc["unmatched_base"] == [] and doc["unmatched_head"] == [] and doc["coverage"]["share"] == 1.0
    assert GEMM in forward.stderr and "+100.0 %" in forward.stderr
    md = run_cli("diff", base, head, "--fail-on-regression", "5", "-f", "md").stdout
    row = next(line for line in md.splitlines() if line.startswith(f"| `{GEMM}`"))
    assert f"→ `{GEMM_FALSE}` (launch config changed) | same function |" in row and "**+100.0 %**" in row
    backward = run_cli("diff", head, base, "--fail-on-regression", "5", "-f", "md")
    assert backward.exit_code == 0, backward.output  # faster: the gate fails in one direction only
    assert backward.stdout.splitlines()[2].startswith("✅ **Gate passed**")


# ---------------------------------------------------------------------------------------------
# Never vacuous: coverage and the total


def test_unrelated_programs_do_not_pass(tmp_path: Path) -> None:
    base = make_run([kernel("alpha", 1e-3), kernel("beta", 2e-3)])
    head = make_run([kernel("gamma", 20e-3), kernel("delta", 35e-3)])  # +1,733 % GPU time
    d = diff_runs(base, head, fail_on_regression=5)
    assert d.matched == [] and d.coverage["share"] == 0.0 and d.gate["status"] == "insufficient_coverage"
    assert d.gate["passed"] is False and d.insufficient_coverage and not d.failed
    assert diff_runs(base, head, fail_on_regression=5, allow_unmatched=True).gate["status"] == "passed"
    total = diff_runs(base, head, fail_on_total=5).gate
    assert total["status"] == "failed" and total["regressions"][0]["scope"] == "all"
    for name, run in (("base.json", base), ("head.json", head)):
        doc = {"schema": "ncu-roofline/2", "reports": [{"path": name, "kernels": [k.data for k in run.kernels]}]}
        (tmp_path / name).write_text(json.dumps(doc), encoding="utf-8")
    b, h = tmp_path / "base.json", tmp_path / "head.json"
    result = run_cli("diff", b, h, "--fail-on-regression", "5", "-f", "md")
    assert result.exit_code == 3, result.output
    assert "0 % of BASE GPU time was compared (minimum 50 %)" in result.stderr and "--allow-unmatched" in result.stderr
    assert "⚠️ **Gate not passed: too little compared**" in result.stdout
    assert run_cli("diff", b, h, "--fail-on-regression", "5", "--allow-unmatched").exit_code == 0
    assert run_cli("diff", b, h, "--fail-on-total", "5").exit_code == 1
    assert run_cli("diff", b, h).exit_code == 0  # no gate asked for: a comparison, not a verdict
    assert run_cli("diff", b, h, "--fail-on-regression", "5", "--min-coverage", "0").exit_code == 0
    assert run_cli("diff", b, h, "--match", "alpha=gamma", "--match", "beta=delta",
                   "--fail-on-regression", "5").exit_code == 1


def test_sums_obey_the_delta_floor() -> None:
    """One 8.5 µs kernel 0.8 µs slower is jitter, in a sum as on its own; ten 4 µs kernels 4 µs slower are not."""
    one = diff_runs(make_run([kernel("k", 8.5e-6)]), make_run([kernel("k", 9.3e-6)]), fail_on_regression=5,
                    fail_on_total=5)
    assert one.gate["status"] == "passed" and one.totals["compared"]["delta_pct"] > 5
    base = [kernel(f"s{n}", 4e-6) for n in range(10)]
    many = diff_runs(make_run(base), make_run([kernel(f"s{n}", 8e-6) for n in range(10)]), fail_on_regression=5)
    assert [r["scope"] for r in many.gate["regressions"]] == ["compared"]


def test_coverage_counts_gpu_time_not_kernels() -> None:
    base = [kernel("big", 9e-3), kernel("small1", 1e-4), kernel("small2", 1e-4)]
    head = [kernel("big", 9e-3), kernel("other1", 1e-4), kernel("other2", 1e-4)]
    d = diff_runs(make_run(base), make_run(head), fail_on_regression=5)
    assert d.coverage["share"] == pytest.approx(9 / 9.2) and d.gate["status"] == "passed"


# ---------------------------------------------------------------------------------------------
# Noise


def test_mann_whitney_exact_and_approximate() -> None:
    assert mann_whitney([1, 2, 3], [4, 5, 6]) == (0.0, pytest.approx(0.1))
    assert mann_whitney([5, 6, 7, 8], [1, 2, 3, 4])[1] == pytest.approx(2 / 70)

    def brute(x: list[float], y: list[float]) -> float:  # the permutation distribution of U
        values = x + y
        u0 = mann_whitney(x, y)[0]
        us = []
        for chosen in combinations(range(len(values)), len(x)):
            xs = [values[i] for i in chosen]
            ys = [values[i] for i in range(len(values)) if i not in chosen]
            us.append(mann_whitney(xs, ys)[0])
        low = sum(u <= u0 for u in us) / len(us)
        high = sum(u >= u0 for u in us) / len(us)
        return min(1.0, 2 * min(low, high))

    rng = random.Random(7)
    for _ in range(5):
        x = [rng.random() for _ in range(5)]
        y = [rng.random() + 0.3 for _ in range(6)]
        assert mann_whitney(x, y)[1] == pytest.approx(brute(x, y))
    big_x = [rng.gauss(100, 2) for _ in range(40)]
    big_y = [rng.gauss(103, 2) for _ in range(40)]
    assert mann_whitney(big_x, big_y)[1] < 1e-6 and mann_whitney(big_x, big_x)[1] > 0.9
    assert mann_whitney([1.0] * 5, [1.0] * 5)[1] == 1.0  # all tied: no evidence
    assert reaches_alpha(4, 4, 0.05) and reaches_alpha(2, 8, 0.05)
    assert not reaches_alpha(3, 3, 0.05) and not reaches_alpha(2, 7, 0.05) and not reaches_alpha(1, 100, 0.05)


JITTER = [1.00, 1.04, 0.96, 1.08, 0.92, 1.02, 0.98, 1.06, 0.94, 1.01]  # ±8 %: a noisy kernel


def test_repeats_measure_the_noise() -> None:
    base = [100e-6 * j for j in JITTER]
    within = [100e-6 * j * 1.03 for j in reversed(JITTER)]  # medians 3 % apart, inside the spread
    shifted = [100e-6 * j * 1.12 for j in JITTER]
    quiet = classify(base, within)
    assert quiet["method"] == "mann-whitney" and quiet["p_value"] > 0.05 and quiet["verdict"] == "unchanged"
    loud = classify(base, shifted)
    assert loud["p_value"] < 0.05 and loud["verdict"] == "regressed"
    assert classify(shifted, base)["verdict"] == "improved"
    single = classify([100e-6], [103e-6])
    assert single["method"] == "floor" and single["verdict"] == "regressed"  # 3 µs over both floors
    assert classify([3e-6], [6e-6])["verdict"] == "unchanged"  # under the 5 µs floor
    # the gate: 3 % apart within the noise passes a 2 % gate; a 12 % shift fails a 5 % one
    b = [kernel("noisy", d) for d in base]
    assert diff_runs(make_run(b), make_run([kernel("noisy", d) for d in within]),
                     fail_on_regression=2).gate["status"] == "passed"
    g = diff_runs(make_run(b), make_run([kernel("noisy", d) for d in shifted]), fail_on_regression=5).gate
    (hit,) = [r for r in g["regressions"] if r["scope"] == "group"]
    assert hit["method"] == "mann-whitney" and hit["p_value"] < 0.05
    # single launches, the same 3 %: floors call it (and say so)
    one = diff_runs(make_run([kernel("noisy", 100e-6)]), make_run([kernel("noisy", 103e-6)]), fail_on_regression=2)
    assert one.gate["status"] == "failed" and one.gate["regressions"][0]["method"] == "floor"
    md = render(DIFF, one, "md", RenderOptions())
    assert "| floors |" in md and "by floors, not a measured noise" in md


def test_group_median_and_representative() -> None:
    base = [kernel("k", d, bound_by=b) for d, b in ((1e-3, "dram"), (5e-3, "fp32"), (2e-3, "l2"))]
    d = diff_runs(make_run(base), make_run([kernel("k", 2e-3)]))
    (c,) = d.matched
    assert c["duration"]["base_s"] == 2e-3 and c["base"]["bound_by"] == "l2"  # the median launch stands for all
    assert c["total"]["base_s"] == pytest.approx(8e-3) and c["launches"] == {"base": 3, "head": 1}
    assert c["base"]["mad_s"] == pytest.approx(1e-3)


# ---------------------------------------------------------------------------------------------
# Counter gates and environment


def test_metric_gates() -> None:
    def k(dram: float, inst: float) -> dict[str, Any]:
        return kernel("k", 1e-3, traffic_bytes={"dram": dram, "l2": 2e6, "l1": None},
                      instruction_roofline={"warp_inst": inst})

    base = make_run([k(1e6, 1e5)])
    hit = diff_runs(base, make_run([k(1.2e6, 1e5)]), fail_on_metric=["dram_bytes:+10%"]).gate
    assert hit["status"] == "failed" and hit["regressions"][0]["metric"] == "dram_bytes"
    assert diff_runs(base, make_run([k(1.05e6, 1e5)]), fail_on_metric=["dram_bytes:+10%"]).gate["passed"]
    assert not diff_runs(base, make_run([k(1e6, 0.8e5)]), fail_on_metric=["inst_executed:-10%"]).gate["passed"]
    assert diff_runs(base, make_run([k(1e6, 1.5e5)]), fail_on_metric=["inst_executed:-10%"]).gate["passed"]
    change = diff_runs(base, make_run([k(1.2e6, 1e5)])).matched[0]["counters"]
    assert change["dram_bytes"]["delta_pct"] == pytest.approx(20.0) and "l1_bytes" not in change


def test_bad_gate_options_exit_2(tmp_path: Path) -> None:
    doc = {"schema": "ncu-roofline/2", "reports": [{"path": "a", "kernels": [kernel("k")]}]}
    path = tmp_path / "a.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    for args in (("--fail-on-metric", "dram:+10%"), ("--fail-on-metric", "dram_bytes=10"), ("--match", "x"),
                 ("--match", "(=x"), ("--match-file", tmp_path / "missing.txt")):
        result = run_cli("diff", path, path, *args)
        assert result.exit_code == 2, (args, result.output)
        assert result.stderr.startswith("ncu-roofline: error: ") and result.stderr.count("\n") == 1
    rules = tmp_path / "rules.txt"
    rules.write_text("# renamed in the PR\n\n^k$=^k$\n", encoding="utf-8")
    assert run_cli("diff", path, path, "--match-file", rules).exit_code == 0


def test_environment_differences_are_warnings() -> None:
    base = make_run([kernel("k", 1e-3, device="GPU A"), kernel("j", 1e-3, device="GPU B")])
    head = make_run([kernel("k", 1e-3, device="GPU A", peaks={"fp32_flop_per_s": 1.8e13, "dram_bytes_per_s": 1e12}),
                     kernel("j", 1e-3, device="GPU C")])
    base.report_info = {"run.json": {"ncu_version": "2024.1.0.0 (build 1)", "source_format": "ncu-rep"}}
    head.report_info = {"run.json": {"ncu_version": "2025.1.0.0 (build 2)", "source_format": "ncu-rep"}}
    d = diff_runs(base, head)
    assert [x["what"] for x in d.environment["differences"]] == ["gpu", "clocks", "ncu_version"]
    clocks = d.environment["differences"][1]
    assert clocks["device"] == "GPU A" and clocks["peak"] == "fp32_flop_per_s"
    assert clocks["delta_pct"] == pytest.approx(-10.0)
    md = render(DIFF, d, "md", RenderOptions())
    warnings = [line for line in md.splitlines() if line.startswith("> ⚠️")]
    assert len(warnings) == 3 and "GPU differs" in warnings[0] and "Clocks differ on GPU A" in warnings[1]
    assert "Nsight Compute differs: BASE 2024.1.0.0; HEAD 2025.1.0.0" in warnings[2]
    assert d.environment["not_recorded"] == ["driver"]


def test_exit_statuses_are_in_the_help() -> None:
    for command, codes in (("diff", ("0", "1", "2", "3")), ("trend", ("0", "1", "2", "3"))):
        text = " ".join(run_cli(command, "--help").stdout.split())
        assert "Exit status:" in text and all(f"{c} " in text.split("Exit status:")[1] for c in codes)
    assert math.isfinite(0.0)


def test_a_failed_gate_counts_kernels_and_totals_apart_and_says_what_fails() -> None:
    """One kernel 2× slower, its sibling as it was: the kernel and the compared total regress. The summary counts
    1 kernel and 1 total (not "2 regressions" for one slower kernel), and the rule says what makes the gate fail
    instead of "no compared group ... more than 5 % slower", which a failed gate contradicts."""
    from ncu_roofline.views.diff_gate import gate_view

    base = make_run([kernel("alpha", 10e-3), kernel("beta", 1e-3)])
    head = make_run([kernel("alpha", 20e-3), kernel("beta", 1e-3)])
    d = diff_runs(base, head, fail_on_regression=5)
    assert d.gate["status"] == "failed"
    scopes = sorted(r["scope"] for r in d.gate["regressions"])
    assert scopes == ["compared", "group"]
    view = gate_view(d)
    assert view["summary"].startswith("1 kernel regressed, and 1 total over its limit (")
    assert view["rule"] == "The gate fails where a compared group, or their total, is more than 5 % slower."
    assert "no compared group" not in view["rule"] + view["summary"]
