"""`diff` says why: the work before and after, a changed problem size judged per unit of work, and the causes
(findings that appeared or went away) ranked so the likely one leads, in JSON, Markdown and HTML."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS
from test_diff import kernel, make_run, needs

from ncu_roofline.compare.diff import diff_runs
from ncu_roofline.compare.runs import run_from_document
from ncu_roofline.render import DIFF, RenderOptions, render
from ncu_roofline.views.diff import build_diff_view
from ncu_roofline.views.diff_gate import gate_message, gate_view

GEMM_V9 = CORPUS / "cuda-gemm-practice__gemm_v9.ncu-rep"
MW_BASE = CORPUS / "gpu-workshop__MW_Baseline.ncu-rep"


def sized(scale: float, duration: float, **extra: Any) -> dict[str, Any]:
    """A kernel doing `scale` times 1 GFLOP and moving `scale` times 100 / 200 / 400 MB (DRAM / L2 / L1)."""
    work = {"work_flop": {"fp32": 1e9 * scale, "fp64": 0.0},
            "traffic_bytes": {"dram": 1e8 * scale, "l2": 2e8 * scale, "l1": 4e8 * scale}}
    return kernel("k", duration, **{**work, **extra})


def one(base: dict[str, Any], head: dict[str, Any], **gate: Any) -> tuple[dict[str, Any], Any]:
    d = diff_runs(make_run([base]), make_run([head]), **gate)
    return d.matched[0], d


# ---------------------------------------------------------------------------------------------
# Work and time per unit of work (hand-built, hand-computed)


def test_twice_the_problem_in_twice_the_time_is_unchanged_per_gflop() -> None:
    c, d = one(sized(1, 1e-3), sized(2, 2e-3), fail_on_regression=5)
    w = c["work"]
    assert (w["measure"], w["unit"], w["change"], w["size_changed"]) == ("flop", "GFLOP", "size", True)
    assert w["base"] == 1e9 and w["head"] == 2e9 and w["delta_pct"] == pytest.approx(100.0)
    # 1 ms / 1 GFLOP and 2 ms / 2 GFLOP: 1 ms per GFLOP on both sides
    assert w["per_unit"]["base_s"] == pytest.approx(1e-3) and w["per_unit"]["head_s"] == pytest.approx(1e-3)
    assert w["bytes"]["dram"] == {"base": 1e8, "head": 2e8, "delta_pct": pytest.approx(100.0)}
    assert c["noise"]["verdict"] == "regressed" and c["verdict"] == "unchanged"  # judged per unit of work
    assert d.counts["size_changed"] == 1 and d.counts["regressed"] == 0
    # the compared total counts HEAD's 2 ms at BASE's work: 1 ms, no regression
    assert d.totals["compared"]["gated_head_s"] == pytest.approx(1e-3)
    assert d.gate["status"] == "passed"
    # the gate on every kernel's time takes the times as measured: a larger problem counts there
    assert diff_runs(make_run([sized(1, 1e-3)]), make_run([sized(2, 2e-3)]), fail_on_total=5).gate["status"] == "failed"
    row = build_diff_view(d)["changes"][0]
    assert row["work"]["text"] == "problem size changed? FLOP 1 G → 2 G, bytes in step"
    assert row["work"]["per_unit"] == "1 ms → 1 ms per GFLOP (0.0 %)"


def test_slower_per_gflop_fails_and_says_so() -> None:
    # 1 ms for 1 GFLOP, then 3 ms for 2 GFLOP: 1.5 ms per GFLOP, +50 %
    c, d = one(sized(1, 1e-3), sized(2, 3e-3), fail_on_regression=5)
    assert c["work"]["per_unit"]["delta_pct"] == pytest.approx(50.0) and c["verdict"] == "regressed"
    group = next(r for r in d.gate["regressions"] if r["scope"] == "group")
    assert group["size_changed"] is True and group["work"]["per_unit"]["delta_pct"] == pytest.approx(50.0)
    assert d.totals["compared"]["gated_head_s"] == pytest.approx(1.5e-3)  # 3 ms at 1 GFLOP of 2
    view = gate_view(d)
    (named,) = [r for r in view["regressions"] if r["scope"] == "group"]
    assert named["pct"] == "+50.0 % per GFLOP"
    assert named["what"] == "1 ms → 1.5 ms per GFLOP (+50.0 %); problem size changed? FLOP 1 G → 2 G, bytes in step"
    assert view["rule"] == ("The gate fails where a compared group, or their total, is more than 5 % slower, per unit "
                            "of work where the problem size changed.")
    # +40 % per GFLOP does not fail a 50 % gate though the time is 180 % up
    assert one(sized(1, 1e-3), sized(2, 2.8e-3), fail_on_regression=50)[1].gate["status"] == "passed"


def test_a_smaller_problem_that_finishes_sooner_never_fails() -> None:
    # 0.5 GFLOP in 0.8 ms: 1.6 ms per GFLOP (+60 %), but 20 % less time
    c, d = one(sized(1, 1e-3), sized(0.5, 0.8e-3), fail_on_regression=5)
    assert c["work"]["per_unit"]["delta_pct"] == pytest.approx(60.0)
    assert c["noise"]["verdict"] == "improved" and c["verdict"] == "unchanged"
    assert d.gate["status"] == "passed"
    # a smaller problem that takes longer fails, whatever its size
    c, d = one(sized(1, 1e-3), sized(0.5, 1.2e-3), fail_on_regression=5)
    assert c["work"]["per_unit"]["delta_pct"] == pytest.approx(140.0) and d.gate["status"] == "failed"


def test_work_within_five_percent_keeps_the_plain_gate() -> None:
    c, d = one(sized(1, 1e-3), sized(1.04, 1.1e-3), fail_on_regression=5)
    assert c["work"]["change"] == "same" and c["verdict"] == "regressed" and d.gate["status"] == "failed"
    group = next(r for r in d.gate["regressions"] if r["scope"] == "group")
    assert group["delta_pct"] == pytest.approx(10.0) and group["work"] is None
    assert build_diff_view(d)["changes"][0]["work"]["text"] == "same work: FLOP 1.04 G"


def test_other_flop_at_the_same_traffic_is_the_code_not_the_size() -> None:
    """Divisions turned into multiplications: fewer FLOP, the same bytes. The time is judged as it is."""
    base = sized(1, 2e-3)
    head = sized(1, 1.5e-3, work_flop={"fp32": 0.4e9, "fp64": 0.0})
    c, d = one(base, head, fail_on_regression=5)
    assert c["work"]["change"] == "arithmetic" and not c["work"]["size_changed"] and c["verdict"] == "improved"
    back, d_back = one(head, base, fail_on_regression=5)  # per GFLOP faster, but the same job 33 % slower
    assert back["work"]["change"] == "arithmetic" and d_back.gate["status"] == "failed"
    assert build_diff_view(d)["changes"][0]["work"]["text"] == "FLOP changed at the same traffic: 1 G → 400 M"


def test_bytes_without_flop() -> None:
    def no_flop(dram: float, l2: float, duration: float, **extra: Any) -> dict[str, Any]:
        return kernel("k", duration, work_flop={"fp32": 0.0}, utilization={"dram": 0.8, "l2": 0.3},
                      traffic_bytes={"dram": dram, "l2": l2, "l1": None}, **extra)

    # every level twice the bytes: another size, judged per MB (1 ms / 100 MB, 2 ms / 200 MB: the same)
    c, _ = one(no_flop(1e8, 2e8, 1e-3), no_flop(2e8, 4e8, 2e-3))
    assert (c["work"]["measure"], c["work"]["unit"], c["work"]["change"]) == ("dram_bytes", "MB", "size")
    assert c["work"]["per_unit"]["base_s"] == pytest.approx(1e-5) and c["verdict"] == "unchanged"
    # DRAM bytes up at the same L2 bytes: what L2 held, not the size
    c, _ = one(no_flop(1e8, 2e8, 1e-3), no_flop(1.2e8, 2e8, 1.2e-3))
    assert c["work"]["change"] == "traffic" and c["verdict"] == "regressed"
    # every level up, with new spills: the code's bytes
    spills = [{"kind": "local_memory", "variant": "spills", "roof": "dram", "headline": "Local memory"}]
    c, _ = one(no_flop(1e8, 2e8, 1e-3), no_flop(5e9, 6e9, 20e-3, diagnosis=spills))
    assert c["work"]["change"] == "traffic" and c["verdict"] == "regressed"
    assert c["causes"][0]["kind"] == "local_memory" and c["causes"][0]["ratio"] == pytest.approx(50.0)


def test_causes_rank_the_one_that_agrees_with_the_time_first() -> None:
    base_findings = [{"kind": "coalescing", "variant": "cap", "roof": "l1", "headline": "uncoalesced", "speedup": 3.0}]
    head_findings = [{"kind": "latency", "variant": "idle", "roof": "dram", "headline": "idle", "speedup": 9.0},
                     {"kind": "local_memory", "variant": "spills", "roof": "dram", "headline": "spills",
                      "speedup": 2.0}]
    base = sized(1, 1e-3, diagnosis=base_findings)
    head = sized(1, 5e-3, diagnosis=head_findings, traffic_bytes={"dram": 5e9, "l2": 2e8, "l1": 4e8})
    c, d = one(base, head)
    # slower: the findings that appeared lead; the one whose counter moved (DRAM 50×) before a larger projected gain
    assert [(x["kind"], x["change"]) for x in c["causes"]] == [
        ("local_memory", "appeared"), ("latency", "appeared"), ("coalescing", "gone")]
    spill = c["causes"][0]
    assert (spill["measure"], spill["base"], spill["head"], spill["variant"]) == ("dram_bytes", 1e8, 5e9, "spills")
    assert spill["ratio"] == pytest.approx(50.0)
    row = build_diff_view(d)["changes"][0]
    assert row["why"] == "new register spills: DRAM bytes 100 MB → 5 GB"
    assert row["causes"][1] == "new: idle" and row["causes"][2] == "access coalesced: L2 bytes 200 MB → 200 MB"
    # faster: the findings that went away lead
    c, _ = one(head, base)
    assert [x["change"] for x in c["causes"]] == ["gone", "gone", "appeared"]
    assert c["causes"][0]["kind"] == "local_memory"


def test_a_partial_last_wave_is_measured_in_waves_per_sm() -> None:
    """The same grid on a GPU, or with an occupancy, that runs fewer of its blocks at once: the last wave became
    partial. The grid's block count did not move; its waves per SM did (2 → 1.6), and the cause says so. Without
    waves on either side (no occupancy in the capture) the block count stands in."""
    tail = [{"kind": "tail_effect", "variant": "occupancy", "roof": "sm__issue_active", "headline": "1.60 waves"}]
    base = sized(1, 1e-3, launch={"waves_per_sm": 2.0})
    head = sized(1, 2e-3, diagnosis=tail, launch={"waves_per_sm": 1.6})
    c, d = one(base, head)
    assert (c["causes"][0]["measure"], c["causes"][0]["base"], c["causes"][0]["head"]) == ("waves", 2.0, 1.6)
    assert build_diff_view(d)["changes"][0]["why"] == "partial last wave: waves per SM 2 → 1.6"
    c, _ = one(sized(1, 1e-3, grid=(4, 1, 1)), sized(1, 2e-3, diagnosis=tail, grid=(6, 1, 1)))
    assert (c["causes"][0]["measure"], c["causes"][0]["base"], c["causes"][0]["head"]) == ("blocks", 4.0, 6.0)


# ---------------------------------------------------------------------------------------------
# A failed gate's words


def test_a_failed_gate_says_what_failed_and_no_passing_condition() -> None:
    d = diff_runs(make_run([sized(1, 1e-3), kernel("j", 1e-3)]), make_run([sized(2, 3e-3), kernel("j", 1e-3)]),
                  fail_on_regression=5, fail_on_total=5)
    assert d.gate["status"] == "failed"
    assert sorted(r["scope"] for r in d.gate["regressions"]) == ["all", "compared", "group"]
    message = gate_message(d)
    lines = message.splitlines()
    assert lines[0] == ("gate failed: 1 kernel regressed, and 2 totals over their limit (100 % of BASE GPU time "
                        "compared):")
    assert lines[1] == "  k: 1 ms -> 3 ms (+50.0 % per GFLOP) [floors]"
    assert lines[2:] == ["  total GPU time of the compared groups: 2 ms -> 2.5 ms (+25.0 %)",
                         "  total GPU time of every kernel: 2 ms -> 4 ms (+100.0 %)"]
    view = gate_view(d)
    md = render(DIFF, d, "md", RenderOptions())
    html = render(DIFF, d, "html", RenderOptions())
    verdict = md.splitlines()[2]
    for text in (message, view["summary"], view["rule"], verdict):
        for passing in ("no compared group", "within +", "passed", "no group's"):
            assert passing not in text, (passing, text)
    assert "`k` +50.0 % per GFLOP" in verdict
    assert "Gate failed: 1 kernel regressed, and 2 totals over their limit" in html


# ---------------------------------------------------------------------------------------------
# Real documents with their numbers edited


def _document(path: Path) -> dict[str, Any]:
    from ncu_roofline import analyze

    doc: dict[str, Any] = json.loads(analyze(path).to_json())
    return doc


def _edit(doc: dict[str, Any], name: str, **values: Any) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    for k in out["reports"][0]["kernels"]:
        if k["name"] == name:
            k.update(values)
    return out


@needs(GEMM_V9)
def test_a_gemm_at_another_size_that_spills_names_both() -> None:
    """The user's case: BASE is the GEMM at 2.15 GFLOP moving 10 MB of DRAM in 341 µs, without spills; HEAD is
    the real capture (0.901 GFLOP, 5.18 GB of DRAM, 8.85 ms, spilling)."""
    head = _document(GEMM_V9)
    real = next(k for k in head["reports"][0]["kernels"] if k["name"] == "gemm")
    assert real["work_flop"]["fp32"] == pytest.approx(901134080.0)
    assert real["traffic_bytes"]["dram"] == pytest.approx(5179735424.0)
    base = _edit(head, "gemm", work_flop={**real["work_flop"], "fp32": 2.15e9},
                 traffic_bytes={"dram": 10e6, "l2": 60e6, "l1": 200e6}, duration_s=real["duration_s"] / 25.946,
                 diagnosis=[f for f in real["diagnosis"] if f["kind"] != "local_memory"])
    d = diff_runs(run_from_document(base, "base.json", "json"), run_from_document(head, "head.json", "json"),
                  fail_on_regression=5)
    c = next(x for x in d.matched if x["base"]["name"] == "gemm")
    assert c["duration"]["delta_pct"] == pytest.approx(2494.6, abs=0.05)
    w = c["work"]
    # FLOP fell while DRAM bytes grew 500x with new spills: the work changed, not in step, so the time is judged as
    # it is (a spilling kernel must not pass the gate per GFLOP)
    assert (w["change"], w["measure"], w["size_changed"]) == ("traffic", "flop", False)
    assert w["delta_pct"] == pytest.approx((901134080.0 / 2.15e9 - 1) * 100)
    # 341.2 µs / 2.15 GFLOP = 158.7 µs per GFLOP; 8.853 ms / 0.9011 GFLOP = 9.825 ms per GFLOP
    assert w["per_unit"]["base_s"] == pytest.approx(real["duration_s"] / 25.946 / 2.15)
    assert w["per_unit"]["head_s"] == pytest.approx(real["duration_s"] / 0.901134080)
    assert c["verdict"] == "regressed" and d.gate["status"] == "failed"
    cause = c["causes"][0]
    assert (cause["kind"], cause["variant"], cause["change"], cause["measure"]) == (
        "local_memory", "spills", "appeared", "dram_bytes")
    assert (cause["base"], cause["head"]) == (10e6, pytest.approx(5179735424.0))
    doc = json.loads(d.to_json())
    assert doc["matched"][0]["causes"][0]["kind"] == "local_memory"
    md = render(DIFF, d, "md", RenderOptions())
    row = next(line for line in md.splitlines() if line.startswith("| `gemm`"))
    assert "work changed: FLOP 2.15 G → 0.901 G, bytes not in step" in row
    assert "| new register spills: DRAM bytes 10 MB → 5.18 GB |" in row
    html = render(DIFF, d, "html", RenderOptions())
    assert "work changed: FLOP 2.15 G → 0.901 G, bytes not in step" in html
    assert '<li class="lead">new register spills: DRAM bytes 10 MB → 5.18 GB</li>' in html


def test_more_flop_without_the_bytes_in_step_is_judged_by_time() -> None:
    """FLOP doubled and the time with it, but DRAM and L2 bytes unchanged and L1 down a quarter (a loop run twice
    over the same data): not another problem size. The regression fails the gate; FLOP alone, with no bytes
    counted, cannot tell either."""
    base = sized(1, 1e-3)
    head = sized(2, 2e-3, traffic_bytes={"dram": 1e8, "l2": 2e8, "l1": 3e8})
    c, d = one(base, head, fail_on_regression=5)
    assert (c["work"]["change"], c["work"]["size_changed"], c["verdict"]) == ("traffic", False, "regressed")
    assert d.gate["status"] == "failed"
    no_bytes = {"traffic_bytes": {"dram": None, "l2": None, "l1": None}}
    c, d = one(sized(1, 1e-3, **no_bytes), sized(2, 2e-3, **no_bytes), fail_on_regression=5)
    assert (c["work"]["change"], c["verdict"], d.gate["status"]) == ("unknown", "regressed", "failed")
    # bytes in step, but by another factor than FLOP's (4x the bytes for 2x the FLOP): judged by time
    c, _ = one(sized(1, 1e-3), sized(2, 2e-3, traffic_bytes={"dram": 4e8, "l2": 8e8, "l1": 16e8}))
    assert c["work"]["change"] == "traffic"


@needs(MW_BASE)
def test_mw_kernel_at_twice_the_size() -> None:
    """compute_tendencies_x_309_gpu of the real MW capture, with its FLOP, bytes and time edited to twice and three
    times: twice the work in twice the time passes a 5 % gate; in three times the time fails it, +50 % per GFLOP."""
    base = _document(MW_BASE)
    k = next(x for x in base["reports"][0]["kernels"] if x["name"] == "compute_tendencies_x_309_gpu")
    flop = sum(v for v in k["work_flop"].values() if v)
    twice = {"work_flop": {p: (None if v is None else 2 * v) for p, v in k["work_flop"].items()},
             "traffic_bytes": {lv: (None if v is None else 2 * v) for lv, v in k["traffic_bytes"].items()}}
    for times, status in ((2, "passed"), (3, "failed")):
        head = _edit(base, k["name"], duration_s=k["duration_s"] * times, **twice)
        d = diff_runs(run_from_document(base, "b.json", "json"), run_from_document(head, "h.json", "json"),
                      fail_on_regression=5)
        c = next(x for x in d.matched if x["name"] == k["name"])
        assert c["work"]["change"] == "size" and c["work"]["base"] == pytest.approx(flop)
        assert c["work"]["per_unit"]["base_s"] == pytest.approx(k["duration_s"] / (flop / 1e9))
        assert c["work"]["per_unit"]["delta_pct"] == pytest.approx((times / 2 - 1) * 100)
        assert d.gate["status"] == status
        view = build_diff_view(d)
        row = next(r for r in view["changes"] if r["name"] == k["name"])
        assert row["work"]["text"] == "problem size changed? FLOP 4.23 G → 8.46 G, bytes in step"


@needs(MW_BASE)
def test_findings_and_work_of_a_report_analysed_by_group() -> None:
    """A report analysed by group keeps its findings on the group record, and a launch without work counters takes
    its group's per launch: the diff reads both from there."""
    base = _document(MW_BASE)
    name = "compute_tendencies_x_309_gpu"
    spills = {"kind": "local_memory", "variant": "spills", "roof": "dram", "headline": "spills", "speedup": 2.0}
    head = _edit(base, name, duration_s=next(x for x in base["reports"][0]["kernels"]
                                             if x["name"] == name)["duration_s"] * 1.5)
    for doc in (base, head):
        for k in doc["reports"][0]["kernels"]:
            del k["diagnosis"], k["work_flop"], k["traffic_bytes"]
    group = next(g for g in head["reports"][0]["groups"] if g["name"] == name)
    group["diagnosis"] = [*group["diagnosis"], spills]
    group["traffic_bytes"] = {lv: (None if v is None else 3 * v) for lv, v in group["traffic_bytes"].items()}
    d = diff_runs(run_from_document(base, "b.json", "json"), run_from_document(head, "h.json", "json"))
    c = next(x for x in d.matched if x["name"] == name)
    assert c["findings"]["compared"] is True
    assert [(x["kind"], x["change"]) for x in c["causes"]] == [("local_memory", "appeared")]
    original = next(g for g in base["reports"][0]["groups"] if g["name"] == name)
    assert c["work"]["bytes"]["dram"]["head"] == pytest.approx(3 * original["traffic_bytes"]["dram"])
    assert c["work"]["change"] == "same"  # the FLOP (from the group record) stayed: the work is measured in FLOP
