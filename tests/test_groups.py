"""Kernel groups, NVTX roll-up and focus: hand-computed arithmetic on hand-built launches, and real reports."""

from __future__ import annotations

import json
import math
import statistics

import pytest
from click.testing import CliRunner
from conftest import CORPUS, make_kernel
from ncu_csv_writer import write_ncu_csv
from test_model import base_metrics

import ncu_roofline
from ncu_roofline.api.analysis import Analysis, ReportResult
from ncu_roofline.api.focus import Focus, FocusError
from ncu_roofline.api.groups import group_kernels, group_key
from ncu_roofline.api.kernel import analyse_kernel
from ncu_roofline.api.nvtx import components, nvtx_rollup
from ncu_roofline.cli import main
from ncu_roofline.readers.record import RawReport
from ncu_roofline.settings import AnalysisSettings

DRAM_PEAK = 1000 * 2e9  # base_metrics: bytes per cycle x DRAM clock
FP32_PEAK = 2 * 5000 * 1.5e9
FLOP = 2.5e6 + 4 * 10 * 1500  # FP32 + FP16 of base_metrics, per launch


def launch(index: int, duration_ns: float, dram_bytes: float, name: str = "k", grid=(64, 1, 1),
           nvtx: list[str] | None = None, **metrics: float):
    """One launch of base_metrics with its own duration and DRAM bytes (read = all of them)."""
    m = base_metrics()
    m["gpu__time_duration.sum"] = (duration_ns, "ns")
    del m["dram__bytes_read.sum.per_second"]
    m["dram__bytes_read.sum"] = (dram_bytes, "byte")
    m["dram__bytes_write.sum"] = (0.0, "byte")
    m.update({k.replace("__dot__", "."): v for k, v in metrics.items()})
    return analyse_kernel(make_kernel(m, index=index, name=name, grid_size=grid, block_size=(128, 1, 1),
                                      nvtx_ranges=nvtx or []))


def analysis_of(*kernels, settings: AnalysisSettings | None = None) -> Analysis:
    return Analysis([ReportResult("/tmp/capture.ncu-rep", "ncu-rep", "2025.1", list(kernels))], [],
                    settings or AnalysisSettings())


def test_group_statistics_and_limits_by_hand() -> None:
    a = launch(0, 1000, 6e5)
    b = launch(1, 2000, 3e6)
    c = launch(2, 3000, 1.2e6)
    other = launch(3, 4000, 1e6, name="other")
    groups = group_kernels([a, b, c, other])
    assert [g.name for g in groups] == ["k", "other"]  # one group per (name, grid, block), most time first
    g = groups[0]
    assert len(g.launches) == 3 and g.stats.count == 3
    assert g.stats.total == pytest.approx(6e-6) and g.stats.mean == pytest.approx(2e-6)
    assert g.stats.median == pytest.approx(2e-6)
    assert (g.stats.min, g.stats.max) == (pytest.approx(1e-6), pytest.approx(3e-6))
    assert g.stats.cv == pytest.approx(statistics.pstdev([1, 2, 3]) / 2)  # population std / mean
    assert g.share == pytest.approx(6 / 10)
    # Each roof: summed work / peak / summed time (= the duration-weighted mean of the launches' shares).
    dram = (6e5 + 3e6 + 1.2e6) / DRAM_PEAK / 6e-6
    assert g.summary.utilization["dram"] == pytest.approx(dram)
    weighted = sum(k.q.duration_s.value * k.utilization["dram"] for k in (a, b, c)) / 6e-6
    assert g.summary.utilization["dram"] == pytest.approx(weighted)
    assert g.summary.utilization["fp32"] == pytest.approx(3 * 2.5e6 / FP32_PEAK / 6e-6)
    assert g.summary.intensity["dram"] == pytest.approx(3 * FLOP / 4.8e6)  # total FLOP / total bytes
    assert g.summary.achieved_flop_per_s == pytest.approx(3 * FLOP / 6e-6)
    # The limiter and regime by the rules of every kernel: a kernel with these limits gets the same.
    assert a.bound_by == b.bound_by == c.bound_by == g.summary.bound_by == "dram"
    assert g.summary.regime == "at_limit" if dram >= 0.6 else g.summary.regime == "latency"
    assert g.longest is c and g.to_dict()["findings_from_launch"] == 2
    # Its findings: the diagnosis of the group's own limits (the DRAM share summed over its launches),
    # with the ceilings of its longest launch.
    found = g.to_dict()["diagnosis"]
    assert found == [f.to_dict() for f in g.summary.diagnosis] and found[0]["limit"] == "dram"
    assert found[0]["figures"]["share"] == pytest.approx(dram) and f"{c.utilization['dram']:.0%}" != f"{dram:.0%}"
    assert f"{dram * 100:.0f} %" in found[0]["headline"]
    d = g.to_dict()
    assert d["work_flop"]["fp32"] == pytest.approx(3 * 2.5e6) and d["traffic_bytes"]["dram"] == pytest.approx(4.8e6)
    assert d["traffic_bytes"]["l2"] is None  # no launch has it: not a total of nothing
    assert d["launch_indices"] == [0, 1, 2] and d["disagreeing_launches"] == []


def test_a_launch_with_another_limiter_is_called_out() -> None:
    busy = [launch(i, 1000, 1.6e6) for i in range(3)]  # DRAM 80 %
    odd = launch(3, 1000, 1e5)  # DRAM 5 %, FP32 17 %: bound by FP32
    assert odd.bound_by == "fp32"
    (g,) = group_kernels([*busy, odd])
    assert g.summary.bound_by == "dram"
    assert g.disagreeing == [3]
    assert g.limiters == {"dram": 3, "fp32": 1}
    assert g.summary.utilization["dram"] == pytest.approx((3 * 1.6e6 + 1e5) / DRAM_PEAK / 4e-6)


def test_a_single_launch_is_its_own_group_exactly() -> None:
    k = launch(0, 1500, 9e5)
    (g,) = group_kernels([k])
    assert g.summary is k and g.stats.cv is None
    assert g.to_dict()["utilization"] == k.limits


def test_group_verdict_follows_the_threshold_like_a_kernel() -> None:
    launches = [launch(i, 1000, 9e5) for i in range(2)]  # DRAM 45 %
    (low,) = group_kernels(launches, threshold=0.4)
    (high,) = group_kernels(launches, threshold=0.6)
    assert low.summary.regime == "at_limit" and high.summary.regime == "latency"
    assert all(k.regime == "latency" for k in launches)  # the launches keep their own (default 0.6) verdict


def test_grouping_by_launch_configuration_or_by_name() -> None:
    kernels = [launch(0, 1000, 6e5, grid=(64, 1, 1)), launch(1, 1000, 6e5, grid=(128, 1, 1)),
               launch(2, 1000, 6e5, grid=(64, 1, 1))]
    by_launch = group_kernels(kernels)
    assert sorted(len(g.launches) for g in by_launch) == [1, 2]
    assert [g.display_name for g in by_launch] == ["k [grid 64×1×1]", "k [grid 128×1×1]"]
    (by_name,) = group_kernels(kernels, "name")
    assert len(by_name.launches) == 3 and by_name.grid is None and by_name.display_name == "k"
    assert group_key(kernels[0]) == group_key(kernels[2]) != group_key(kernels[1])
    assert group_key(kernels[0], "name") == group_key(kernels[1], "name")


def test_unusable_launches_count_but_have_no_time() -> None:
    nan = analyse_kernel(make_kernel({"gpu__time_duration.sum": (float("nan"), "ns")}, index=1, name="k",
                                     grid_size=(64, 1, 1), block_size=(128, 1, 1)))
    (g,) = group_kernels([launch(0, 1000, 6e5), nan])
    assert len(g.launches) == 2 and g.usable_launches == 1 and g.stats.count == 1
    assert g.stats.total == pytest.approx(1e-6)
    assert g.to_dict()["traffic_bytes"]["dram"] == pytest.approx(6e5)  # the usable launch's


def test_json_csv_and_frame_carry_the_groups(tmp_path) -> None:
    a = analysis_of(launch(0, 1000, 6e5), launch(1, 3000, 6e5), launch(2, 500, 6e5, name="other"))
    doc = json.loads(a.to_json())
    rep = doc["reports"][0]
    assert rep["group_count"] == 2 and [g["launches"] for g in rep["groups"]] == [2, 1]
    assert doc["settings"]["group_by"] == "launch"
    assert {k["group_key"] for k in rep["kernels"]} == {g["group_key"] for g in rep["groups"]}
    assert rep["groups"][0]["duration_s"]["total"] == pytest.approx(4e-6)
    assert rep["focus"] is None and rep["nvtx_rollup"] == []
    assert list(a.kernels["group_key"]) == [k["group_key"] for k in rep["kernels"]]
    frame = a.groups
    assert list(frame["launches"]) == [2, 1] and frame["duration_mean_s"][0] == pytest.approx(2e-6)
    src = write_ncu_csv(RawReport("r.csv", "csv", [k.raw for k in a.reports[0].kernels]), tmp_path / "r.csv")
    out = CliRunner().invoke(main, ["report", str(src), "--groups"], catch_exceptions=False)
    lines = out.output.splitlines()
    assert out.exit_code == 0 and lines[0].startswith("report,group_key,display_name,") and len(lines) == 3
    wrong = CliRunner().invoke(main, ["report", str(src), "--groups", "-f", "md"])
    assert wrong.exit_code == 2 and "--groups is for CSV" in wrong.output


# ------------------------------------------------------------------------------------------- NVTX

def test_nvtx_rollup_sums_nested_ranges_up_the_tree() -> None:
    kernels = [launch(0, 1000, 6e5, nvtx=["train/layer1/attn"]),
               launch(1, 2000, 6e5, nvtx=["train/layer1/mlp"]),
               launch(2, 4000, 6e5, nvtx=["train/layer2/attn"]),
               launch(3, 3000, 1e5, name="loss", nvtx=["train"]),
               launch(4, 5000, 6e5, name="free")]
    groups = group_kernels(kernels)
    nodes = {n.path: n for n in nvtx_rollup(groups)}
    assert [n.path for n in nvtx_rollup(groups)] == ["train", "train/layer2", "train/layer2/attn", "train/layer1",
                                                      "train/layer1/mlp", "train/layer1/attn"]
    assert nodes["train"].duration_s == pytest.approx(10e-6) and nodes["train"].launches == 4
    assert nodes["train"].self_duration_s == pytest.approx(3e-6)
    assert nodes["train/layer1"].duration_s == pytest.approx(3e-6) and nodes["train/layer1"].self_duration_s == 0
    assert nodes["train"].limiters == {"dram": pytest.approx(7e-6), "fp32": pytest.approx(3e-6)}
    assert max(nodes["train"].groups.values()) == pytest.approx(7e-6)  # k: launches 0, 1, 2


def test_nvtx_launch_counts_once_and_pytorch_calls_add_up() -> None:
    assert components("fwd/aten::mm, seq = 12, op_id = 3") == ["fwd", "aten::mm"]
    kernels = [launch(0, 1000, 6e5, nvtx=["fwd/aten::mm, seq = 1", "fwd"]),
               launch(1, 1000, 6e5, nvtx=["fwd/aten::mm, seq = 2"])]
    nodes = {n.path: n for n in nvtx_rollup(group_kernels(kernels))}
    assert set(nodes) == {"fwd", "fwd/aten::mm"}
    assert nodes["fwd"].launches == 2 and nodes["fwd"].duration_s == pytest.approx(2e-6)
    assert nodes["fwd/aten::mm"].launches == 2


@pytest.mark.skipif(not (CORPUS / "nsight-training__manual_nvtx.ncu-rep").is_file(),
                    reason="nsight-training__manual_nvtx.ncu-rep not in the shared corpus")
def test_nvtx_rollup_of_a_real_report() -> None:
    a = ncu_roofline.analyze(CORPUS / "nsight-training__manual_nvtx.ncu-rep")
    rollup = json.loads(a.to_json())["reports"][0]["nvtx_rollup"]
    assert [(n["path"], n["depth"]) for n in rollup] == [
        ("run_test", 0), ("run_test/daxpy", 1), ("run_test/check_results", 1), ("run_test/init_data", 1)]
    top, *children = rollup
    assert top["launches"] == 3 and top["share_of_gpu_time"] == pytest.approx(1.0)
    assert top["duration_s"] == pytest.approx(sum(c["duration_s"] for c in children))
    assert math.isclose(sum(top["limiters"].values()), top["duration_s"])
    assert [g["display_name"] for g in top["top_groups"]] == ["daxpy_kernel(…)", "check_results_kernel(…)",
                                                              "init_data_kernel(…)"]
    md = CliRunner().invoke(main, ["report", str(CORPUS / "nsight-training__manual_nvtx.ncu-rep"), "-f", "md"]).output
    assert "| ↳ daxpy | 1 |" in md
    assert json.loads(a.to_json(redact=True))["reports"][0]["nvtx_rollup"] == []  # range names are redacted


# ------------------------------------------------------------------------------------------ focus

def test_focus_states_what_it_leaves_out() -> None:
    kernels = [launch(0, 1000, 6e5, name="gemm_a", nvtx=["fwd/linear"]), launch(1, 1000, 6e5, name="gemm_a",
               nvtx=["bwd/linear"]), launch(2, 3000, 6e5, name="softmax", nvtx=["fwd/attn"]),
               launch(3, 5000, 6e5, name="GEMM_b", nvtx=["fwd/linear"])]
    a = analysis_of(*kernels)
    f = a.focused(Focus(kernel="gemm")).reports[0]
    assert [k.raw.index for k in f.kernels] == [0, 1, 3]  # case-insensitive search
    assert f.focus is not None and f.focus.dropped_launches == 1
    assert f.focus.dropped_duration_s == pytest.approx(3e-6) and f.focus.total_duration_s == pytest.approx(10e-6)
    n = a.focused(Focus(nvtx="fwd")).reports[0]
    assert [k.raw.index for k in n.kernels] == [0, 2, 3]
    assert [k.raw.index for k in a.focused(Focus(nvtx="linear")).reports[0].kernels] == [0, 1, 3]
    assert [k.raw.index for k in a.focused(Focus(nvtx="fwd/l*")).reports[0].kernels] == [0, 3]
    top = a.focused(Focus(top=1)).reports[0]
    assert [k.raw.index for k in top.kernels] == [3]
    (step,) = top.focus.steps
    assert (step.option, step.launches, step.groups) == ("--top 1", 3, 2)
    assert step.duration_s == pytest.approx(5e-6)
    share = a.focused(Focus(min_share=0.25)).reports[0]  # gemm_a holds 20 %: out
    assert sorted(k.raw.index for k in share.kernels) == [2, 3]
    focused = a.focused(Focus(kernel="gemm", top=1))
    doc = json.loads(focused.to_json())["reports"][0]
    assert doc["focus"]["dropped_launches"] == 3 and doc["focus"]["kept_duration_s"] == pytest.approx(5e-6)
    assert [s["option"] for s in doc["focus"]["steps"]] == ["--kernel gemm", "--top 1"]
    assert doc["groups"][0]["share_of_gpu_time"] == pytest.approx(0.5)  # of all the report's GPU time
    with pytest.raises(FocusError):
        Focus(kernel="(")


def test_focus_options_on_the_command_line(tmp_path) -> None:
    kernels = [make_kernel(base_metrics(), index=i, name=f"kernel_{i % 3}") for i in range(9)]
    src = write_ncu_csv(RawReport("f.csv", "csv", kernels), tmp_path / "f.csv")
    runner = CliRunner()
    md = runner.invoke(main, ["report", str(src), "-f", "md", "--kernel", "kernel_[01]", "--top", "1"]).output
    assert "3 of 9 launches shown" in md and "--kernel kernel\\_\\[01\\]: 3 launches" in md
    assert "--top 1: 3 launches \\(1 group\\)" in md
    html = runner.invoke(main, ["report", str(src), "-f", "html", "-o", "-", "--min-share", "50"]).output
    assert "0 of 9 launches shown" in html and "--min-share 50: 9 launches (3 groups)" in html
    doc = json.loads(runner.invoke(main, ["report", str(src), "-f", "json", "--group-by", "name"]).output)
    assert doc["settings"]["group_by"] == "name" and doc["reports"][0]["group_count"] == 3
    bad = runner.invoke(main, ["report", str(src), "-f", "json", "--kernel", "("])
    assert bad.exit_code == 2 and "not a regular expression" in bad.output


@pytest.mark.skipif(not (CORPUS / "cudaprogramming__readSegmentUnroll.ncu-rep").is_file(),
                    reason="shared corpus not present")
def test_a_group_cap_says_how_many_launches_have_it(tmp_path) -> None:
    """readOffset with a 8192-block grid: launches 27, 30 and 33. Only launch 30, the longest (45.7 µs
    against 44.1 and 44.9), touches 5.0 sectors per load request where
    4.0 hold the bytes (coalescing 80 %); the aligned launches touch 4.0, no cap."""
    a = ncu_roofline.analyze(CORPUS / "cudaprogramming__readSegmentUnroll.ncu-rep")
    group = next(g for g in group_kernels(a.reports[0].kernels)
                 if g.name.startswith("readOffset(") and g.grid == (8192, 1, 1))
    assert sorted(k.index for k in group.launches) == [27, 30, 33] and group.longest.raw.index == 30
    caps = [c for c in group.summary.ceilings if c.launches is not None]
    assert [(c.kind, c.roof, c.launches) for c in caps] == [("coalescing", "l1", (1, 3))]
    assert caps[0].factor == pytest.approx(4.0 / 5.0, rel=1e-4)
    share = group.longest.q.duration_s.value / group.stats.total  # 45.7 of 134.7 µs
    assert caps[0].detail.endswith(f"(in 1 of 3 launches, {share:.0%} of the group's time, the longest among them)")
    assert caps[0].to_dict()["launches_with_cap"] == 1 and caps[0].to_dict()["launches_compared"] == 3
    assert group.to_dict()["ceilings"][0]["launches_with_cap"] == 1  # the JSON carries the group's ceilings
    indices = {e.index for e in group.launches}
    for k in (k for k in a.reports[0].kernels if k.raw.index in indices):  # their own ceilings stay their own
        assert all(c.launches is None and "launches" not in c.detail for c in k.ceilings)
    # readOffsetUnroll4, 16384 blocks: launch 2 is the longest and aligned; launch 5 is the misaligned one
    unroll = next(g for g in group_kernels(a.reports[0].kernels)
                  if g.name.startswith("readOffsetUnroll4(") and g.grid == (16384, 1, 1))
    assert unroll.longest.raw.index == 2
    assert not any(c.kind == "coalescing" and c.factor < 0.9 for c in unroll.longest.ceilings)
    (shorter,) = [c for c in unroll.summary.ceilings if c.kind == "coalescing" and c.launches is not None]
    assert shorter.launches == (1, 3) and shorter.factor == pytest.approx(0.8, rel=1e-3)
    assert shorter.detail.endswith("(in 1 of 3 launches, 33% of the group's time, the longest among them)")
    page = tmp_path / "r.html"  # the group's ceilings table says it too
    result = CliRunner().invoke(main, ["report", str(CORPUS / "cudaprogramming__readSegmentUnroll.ncu-rep"),
                                       "-o", str(page)])
    assert result.exit_code == 0, result.output
    assert '80 %<br><span class="muted">in 1 of 3 launches</span>' in page.read_text(encoding="utf-8")


def test_a_cap_every_launch_has_reads_without_a_count() -> None:
    a, b = launch(0, 1000, 6e5), launch(1, 2000, 6e5)  # base_metrics: FP32 FMA balance caps FP32 at 83 %
    assert [(c.kind, round(c.factor, 3)) for c in a.ceilings if c.factor < 0.9] == [("fma_balance", 0.833)]
    group = group_kernels([a, b])[0]
    shared = [c for c in group.summary.ceilings if c.launches is not None]
    assert [(c.kind, c.launches) for c in shared] == [("fma_balance", (2, 2))]
    assert "launches" not in shared[0].detail


def test_launches_share_a_cap_whatever_evidence_each_records() -> None:
    """Three launches with half their shared-memory wavefronts in conflict: one records ldmatrix
    instructions (an extra evidence entry), one records none, one has no such counter. Each has the
    same 50 % cap, so the group's cap is in 3 of 3 launches."""
    conflicts = {"l1tex__data_pipe_lsu_wavefronts_mem_shared__dot__sum": (1e6, ""),
                 "l1tex__data_bank_conflicts_pipe_lsu_mem_shared__dot__sum": (5e5, "")}
    a = launch(0, 3000, 6e5, **conflicts, smsp__inst_executed_op_ldsm__dot__sum=(100.0, ""))
    b = launch(1, 2000, 6e5, **conflicts, smsp__inst_executed_op_ldsm__dot__sum=(0.0, ""))
    c = launch(2, 1000, 6e5, **conflicts)
    evidence = [sorted(x.evidence) for k in (a, b, c) for x in k.ceilings if x.kind == "bank_conflicts"]
    assert len(evidence) == 3 and evidence[0] != evidence[2]  # the launches record different names
    group = group_kernels([a, b, c])[0]
    cap = next(x for x in group.summary.ceilings if x.kind == "bank_conflicts")
    assert cap.factor == pytest.approx(0.5) and cap.launches == (3, 3) and "launches" not in cap.detail


def test_a_cap_in_part_of_a_group_bounds_only_that_part() -> None:
    """The longest launch (3 µs of 6 timed) reads 8 of every 32 bytes it fetches: sector use caps DRAM
    at 25 %, a 4x bound for that launch. The other two read whole sectors, and a fourth launch has no
    duration. For the group only half its time gains: 1 / (1 - 0.5 + 0.5 / 4) = 1.6x."""
    ratio = "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld__dot__ratio"
    a = launch(0, 3000, 6e5, **{ratio: (8.0, "")})
    b, c = launch(1, 2000, 6e5, **{ratio: (32.0, "")}), launch(2, 1000, 6e5, **{ratio: (32.0, "")})
    untimed = launch(3, 0, 6e5, **{ratio: (8.0, "")})
    assert not untimed.usable
    own = next(f for f in a.diagnosis if f.kind == "sector_use" and f.roof == "dram")
    assert own.speedup == pytest.approx(4.0, rel=1e-6)
    group = group_kernels([a, b, c, untimed])[0]
    assert len(group.launches) == 4 and group.longest is a
    cap = next(x for x in group.summary.ceilings if x.kind == "sector_use" and x.roof == "dram")
    assert cap.launches == (1, 3)  # of the timed launches
    found = next(f for f in group.summary.diagnosis if f.kind == "sector_use" and f.roof == "dram")
    # in 1 of 3 launches, 50 % of the group's time: caps the DRAM roof at 25 %
    assert found.factor == pytest.approx(0.25) and found.figures["part_share"] == pytest.approx(0.5)
    assert found.speedup == pytest.approx(1.6, rel=1e-6)  # 1 / (1 − 0.50 + 0.50 / 4)
    assert found.basis[-1] == "group_part" and "group_part" not in own.basis
    # what the ceilings allow the group: each launch at its own caps, the group's bytes over the time
    # that takes; the capped launch moves a third of the bytes: 1 / (2/3 + (1/3) / 0.25) = 50 %
    latency = next(f for f in group.summary.diagnosis if f.kind == "latency")
    assert latency.figures["reachable"] == pytest.approx(0.5)
    assert next(f for f in a.diagnosis if f.kind == "latency").figures["reachable"] == pytest.approx(0.25)


@pytest.mark.parametrize("longest_has_the_counter", [True, False])
def test_a_cap_only_shorter_launches_have_is_the_groups_too(longest_has_the_counter: bool) -> None:
    """The longest launch (3 µs of 6) reads whole sectors, or has no sector counter at all; the 2 µs
    launch reads 8 of every 32 bytes (sector use caps DRAM at 25 %, 4x for it); the 1 µs one reads
    whole sectors. The group has that launch's cap, in 1 of 3 launches: 1 / (1 - 1/3 + (1/3) / 4) = 1.33x."""
    ratio = "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld__dot__ratio"
    a = launch(0, 3000, 6e5, **({ratio: (32.0, "")} if longest_has_the_counter else {}))
    b, c = launch(1, 2000, 6e5, **{ratio: (8.0, "")}), launch(2, 1000, 6e5, **{ratio: (32.0, "")})
    assert not any(x.kind == "sector_use" and x.roof == "dram" and x.factor < 0.9 for x in a.ceilings)
    group = group_kernels([a, b, c])[0]
    assert group.longest is a
    (cap,) = [x for x in group.summary.ceilings if x.kind == "sector_use" and x.roof == "dram"]
    assert cap.factor == pytest.approx(0.25) and cap.launches == (1, 3)
    assert cap.detail.endswith("(in 1 of 3 launches, 33% of the group's time, the longest among them)")
    found = next(f for f in group.summary.diagnosis if f.kind == "sector_use" and f.roof == "dram")
    assert found.speedup == pytest.approx(1.0 / (1.0 - 1.0 / 3.0 + (1.0 / 3.0) / 4.0), rel=1e-6)
    assert all(x.launches is None for k in (a, b, c) for x in k.ceilings)  # the launches' own stay their own


def test_of_shorter_launches_with_a_cap_the_longest_gives_its_figures() -> None:
    """Two shorter launches read 8 and 16 of every 32 bytes (DRAM caps of 25 % and 50 %): the group's
    cap is the longer one's, 25 %, in 2 of 3 launches (half the time)."""
    ratio = "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld__dot__ratio"
    a = launch(0, 3000, 6e5, **{ratio: (32.0, "")})
    b, c = launch(1, 2000, 6e5, **{ratio: (8.0, "")}), launch(2, 1000, 6e5, **{ratio: (16.0, "")})
    for shuffled in ([a, b, c], [c, b, a], [b, a, c]):
        (cap,) = [x for x in group_kernels(shuffled)[0].summary.ceilings if x.kind == "sector_use" and x.roof == "dram"]
        assert cap.factor == pytest.approx(0.25) and cap.launches == (2, 3)
        assert cap.detail.endswith("(in 2 of 3 launches, 50% of the group's time, the longest among them)")


def test_a_partial_cap_scales_its_own_finding_not_a_twin_of_the_same_factor() -> None:
    """Coalescing of loads in 1 of 3 launches and of stores in all, both 80 % under L1: only the loads'
    finding is scaled to their share of the time."""
    from ncu_roofline.api.groups import _in_part
    from ncu_roofline.passes.finding import Finding, Kind

    partial = {("coalescing", "l1", "ld"): 0.25}  # the loads' cap, in 1 of 3 launches (a quarter of the time)

    def cap(op: str) -> Finding:  # global loads (stores) touch 5.0 sectors per request where 4.0 would hold the bytes
        evidence = (f"{op}_sectors", f"{op}_requests", f"{op}_sectors_per_request", f"{op}_ideal_sectors_per_request")
        return Finding(Kind.COALESCING, "cap", "l1", 0.8, "l1", 1.25, "coalesce", ("roof_over_ceiling",),
                       {"factor": 0.8}, evidence)

    ld, st = cap("ld"), cap("st")
    scaled = _in_part(ld, partial)
    assert scaled.speedup == pytest.approx(1.0 / (0.75 + 0.25 / 1.25)) and scaled.factor == 0.8
    assert scaled.basis == ("roof_over_ceiling", "group_part") and scaled.figures["part_share"] == 0.25
    assert _in_part(st, partial) is st


def test_a_launch_with_no_bytes_weighs_nothing_in_what_the_ceilings_allow() -> None:
    """A 25 % DRAM cap on the launch with a third of the bytes; a launch that moves none (its data stays
    on chip) has a known work of 0 and weighs nothing: 1 / ((1/3) / 0.25 + 2/3) = 50 %, not the time
    shares' figure. Caps that multiply to nothing give 0, not a division by zero."""
    from ncu_roofline.passes.ceilings import Ceiling
    from ncu_roofline.passes.diagnosis import _allowed

    ratio = "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld__dot__ratio"
    a = launch(0, 3000, 6e5, **{ratio: (8.0, "")})
    b, c = launch(1, 2000, 0.0, **{ratio: (32.0, "")}), launch(2, 1000, 1.2e6, **{ratio: (32.0, "")})
    group = group_kernels([a, b, c])[0]
    latency = next(f for f in group.summary.diagnosis if f.kind == "latency")
    assert latency.figures["reachable"] == pytest.approx(0.5)
    tiny = Ceiling("sector_use", "dram", 1e-200, None, {}, "edited", "none")
    assert _allowed([], "dram", [(3.0, a, [tiny, tiny]), (1.0, c, [])]) == 0.0
    assert _allowed([tiny], "dram", [(3.0, a, [tiny])]) == pytest.approx(1e-200)  # one launch: its own


def test_a_partial_cap_on_the_chart_says_in_how_many_launches() -> None:
    from ncu_roofline.views.report import _chart_ceilings

    ratio = "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld__dot__ratio"
    a = launch(0, 3000, 6e5, **{ratio: (8.0, "")})
    b, c = launch(1, 2000, 6e5, **{ratio: (32.0, "")}), launch(2, 1000, 6e5, **{ratio: (32.0, "")})
    (drawn,) = [d for d in _chart_ceilings(group_kernels([a, b, c])[0].summary, [{"name": "dram"}])]
    assert drawn["label"] == "DRAM sector use 25 % (in 1 of 3 launches)"  # the value in the tooltip
    assert drawn["title"].startswith("DRAM sector use 25 % (") and drawn["title"].endswith(", in 1 of 3 launches)")
    (own,) = _chart_ceilings(a, [{"name": "dram"}])
    assert "launches" not in own["label"]


def test_the_intensity_gap_of_a_group_weighs_each_launchs_compute_caps_by_its_flop() -> None:
    """Both launches at 80 % of the DRAM roof. The longest issues FFMA only (2e6 FLOP, no FMA-balance
    cap); the other mixes FADD and FMUL in (2.5e6 FLOP, FMA balance caps FP32 at 83 %). What the
    compute caps allow the group: 1 / (2/4.5 + (2.5/4.5) / (5/6)) = 90 % of the FP32 roof."""
    from test_model import OP

    a = launch(0, 3000, 4.8e6, **{OP.format("fadd"): (0.0, "inst"), OP.format("fmul"): (0.0, "inst")})
    b = launch(1, 2000, 3.2e6)
    assert [x.kind for x in a.ceilings if x.factor < 0.9] == [] and a.q.flop["fp32"].value == pytest.approx(2e6)
    assert b.q.flop["fp32"].value == pytest.approx(2.5e6)
    s = group_kernels([a, b])[0].summary
    assert (s.regime, s.bound_by) == ("at_limit", "dram")
    gap = next(f for f in s.diagnosis if f.kind == "intensity_gap")
    assert gap.speedup == pytest.approx(s.compute_roof() * 0.9 / s.achieved_flop_per_s, rel=1e-9)
    # with its FP ceilings (FMA balance 83 % in part): 90 % of the gap to the compute roof
    assert gap.basis == ("with_ceilings",) and gap.figures["kept_gap"] == pytest.approx(0.9 * gap.figures["gap"])


def test_launches_in_another_regime_are_counted_and_shown() -> None:
    """Both launches bound by DRAM: the first at 80 % of its roof (at limit), the second at 20 % (latency);
    the group's weighted share is 2.8 MB / 2 TB/s / 4 µs = 35 %: latency, with one launch at its limit."""
    from ncu_roofline.api.rows import group_row
    from ncu_roofline.views.groups import group_view
    from ncu_roofline.views.report import kernel_view

    a, b = launch(0, 1000, 1.6e6), launch(1, 3000, 1.2e6)
    assert (a.bound_by, a.regime, b.bound_by, b.regime) == ("dram", "at_limit", "dram", "latency")
    (g,) = group_kernels([a, b])
    assert g.summary.utilization["dram"] == pytest.approx(0.35) and g.summary.regime == "latency"
    assert g.disagreeing == [] and g.regime_disagreeing == [0]
    assert g.regimes == {"at_limit": 1, "latency": 1}
    d = g.to_dict()
    assert d["regimes"] == {"at_limit": 1, "latency": 1} and d["regime_disagreeing_launches"] == [0]
    row = group_row("capture.ncu-rep", d)
    assert row["regimes"] == {"at_limit": 1, "latency": 1} and row["regime_disagreeing_launches"] == 1
    assert [type(r) for r in row["regimes"]] == [str, str]  # values, as a frame shows them
    view = group_view(kernel_view, 0, g, g.stats.total, set())
    # DRAM its one measured limit: latency cannot be told from a limit the launches' metrics leave out
    assert view["regime_text"] == "latency or an unmeasured limit (1 of 2 at limit)"
    (same,) = group_kernels([a, launch(1, 1000, 1.6e6)])
    assert same.regime_disagreeing == [] and group_view(kernel_view, 0, same, same.stats.total, set())[
        "regime_text"] == "at limit"


def test_the_intensity_gap_of_a_group_leaves_its_launches_issue_share_out() -> None:
    """The same two launches, the other one also with an issue-share cap on FP32 (its warp instructions
    mostly not FP32): a group's intensity gap, like a launch's, does not apply it (more FLOP per byte
    raises it), so what the compute caps allow stays 90 %."""
    from test_model import OP

    a = launch(0, 3000, 4.8e6, **{OP.format("fadd"): (0.0, "inst"), OP.format("fmul"): (0.0, "inst")})
    b = launch(1, 2000, 3.2e6, **{"smsp__inst_executed.sum": (250_000.0, "inst"),
                                  "sm__inst_executed.sum.peak_sustained": (400.0, "inst/cycle")})
    issue = next(c for c in b.ceilings if c.kind == "issue_share")
    assert issue.roof == "fp32" and issue.factor < 0.5
    s = group_kernels([a, b])[0].summary
    assert (s.regime, s.bound_by) == ("at_limit", "dram")
    gap = next(f for f in s.diagnosis if f.kind == "intensity_gap")
    assert gap.speedup == pytest.approx(s.compute_roof() * 0.9 / s.achieved_flop_per_s, rel=1e-9)
    assert gap.basis == ("with_ceilings",) and gap.figures["kept_gap"] == pytest.approx(0.9 * gap.figures["gap"])


@pytest.mark.skipif(not (CORPUS / "self-join-mistic__profile.ncu-rep").is_file(), reason="shared corpus not present")
def test_a_group_limiter_no_launch_has_says_what_bounds_the_launches() -> None:
    """distanceCalculationsKernel, grid 2048: its 8 launches are bound by L1 wavefronts (5), issue slots
    (2) and L2 tag requests (1); the weighted memory-throughput headline (the busiest memory sub-unit
    of each launch) tops the group's shares, and its first finding says that its sub-units bound 6 of the
    launches, not the same one in all."""
    a = ncu_roofline.analyze(CORPUS / "self-join-mistic__profile.ncu-rep")
    groups = group_kernels(a.reports[0].kernels)
    g = next(g for g in groups if g.grid == (2048, 1, 1) and g.name.startswith("distanceCalculationsKernel"))
    assert g.summary.bound_by == "memory_throughput" and "memory_throughput" not in g.limiters
    assert g.limiters == {"l1tex__data_pipe_lsu_wavefronts": 5, "sm__issue_active": 2, "lts__t_tag_requests": 1}
    # memory throughput at 47 % of peak over the 8 launches summed: Nsight Compute's memory headline, the busiest
    # memory unit of each launch, whose sum tops each unit's own
    head = g.summary.diagnosis[0]
    assert (head.kind, head.limit) == ("unit_throughput", "memory_throughput")
    assert round(head.figures["share"], 2) == 0.47
    assert head.figures["mixed_headline"] == "" and head.figures["mixed_launches"] == 8
    assert "mixed_summed" not in head.figures
    for other in groups:  # and only where that is so
        said = bool(other.summary.diagnosis) and other.summary.diagnosis[0].figures.get("mixed_launches") is not None
        assert said == (other.summary.bound_by is not None and other.summary.bound_by not in other.limiters
                        and len(other.launches) > 1 and bool(other.summary.diagnosis))
        assert not said or other.summary.diagnosis[0].figures["mixed_launches"] == sum(other.limiters.values())


@pytest.mark.skipif(not (CORPUS / "self-join-mistic__profile.ncu-rep").is_file(), reason="shared corpus not found")
def test_the_markdown_table_says_when_launches_have_another_limiter() -> None:
    """distanceCalculationsKernel [grid 2048]: the group's weighted shares crown memory throughput, which bounds
    none of its 8 launches (L1/TEX wavefronts bounds 5); CUB's histogram kernel: its weighted shares crown L1/TEX,
    which bounds 10 of its 22 launches, while 12 are bound by the issue slots (the note says so)."""
    md = CliRunner().invoke(main, ["report", str(CORPUS / "self-join-mistic__profile.ncu-rep"), "-f", "md"]).stdout
    row = next(line for line in md.splitlines() if "\\[grid 2048×1×1\\]" in line)
    assert ("| memory throughput: busiest over the 8 launches summed; per launch: L1/TEX (wavefronts) in 5, issue "
            "slots in 2, L2 (tag requests) in 1 | 47 % |") in row
    assert "no launch alone" not in md
    histogram = next(line for line in md.splitlines() if line.startswith("| DeviceRadixSortHistogramKernel"))
    assert ("| L1/TEX (wavefronts): busiest over the 22 launches summed; per launch: issue slots in 12, L1/TEX "
            "(wavefronts) in 10 |") in histogram
    single = next(line for line in md.splitlines() if "\\[grid 2045×1×1\\]" in line)
    assert "| L1/TEX (wavefronts) | 47 % |" in single


def test_unit_shares_are_duration_weighted_whether_or_not_the_launches_hold_the_same_units() -> None:
    """A group's unit throughput is Σ duration × share ÷ Σ duration over the launches that hold the
    unit: read column by column where every launch holds the same units, per unit where one lacks some
    (both exactly rounded, so the two readings agree to the bit)."""
    import dataclasses

    def timed(index: int, duration_ns: float, sm: float, l2: float, issue: float):
        return launch(index, duration_ns, 1e6, **{
            "sm__throughput__dot__avg__dot__pct_of_peak_sustained_elapsed": (sm, "%"),
            "lts__throughput__dot__avg__dot__pct_of_peak_sustained_elapsed": (l2, "%"),
            "sm__issue_active__dot__avg__dot__pct_of_peak_sustained_elapsed": (issue, "%")})

    a, b, c = timed(0, 1000, 30.0, 10.0, 20.0), timed(1, 2000, 60.0, 40.0, 50.0), timed(2, 3000, 90.0, 70.0, 33.3)
    assert len(a.units) == 3 and list(a.units) == list(b.units) == list(c.units)
    same = group_kernels([a, b, c])[0].summary.units
    for uid in a.units:
        want = math.fsum(k.q.duration_s.value * k.units[uid].share for k in (a, b, c)) / 6e-6
        assert same[uid].share == want
        assert same[uid].share == pytest.approx((1 * a.units[uid].share + 2 * b.units[uid].share
                                                 + 3 * c.units[uid].share) / 6)
    assert same["sm_throughput"].share == pytest.approx((30 + 120 + 270) / 600)  # by hand: 0.7
    dropped = next(iter(a.units))
    lacking = dataclasses.replace(b, units={u: s for u, s in b.units.items() if u != dropped})
    mixed = group_kernels([a, lacking, c])[0].summary.units
    assert mixed[dropped].share == pytest.approx((1 * a.units[dropped].share + 3 * c.units[dropped].share) / 4)
    for uid in list(a.units)[1:]:
        assert mixed[uid].share == same[uid].share  # the per-unit reading gives the column's to the bit


def test_duration_statistics_past_the_float_range_are_not_available() -> None:
    """Hand-edited durations whose sum or squares pass the float range: no total, mean or CV, no exception."""
    from ncu_roofline.api.groups import DurationStats

    huge = DurationStats.of([1e308, 1e308, 5e307])
    assert (huge.total, huge.mean, huge.cv) == (None, None, None)
    assert (huge.count, huge.min, huge.max, huge.median) == (3, 5e307, 1e308, 1e308)
    squares = DurationStats.of([1e200, 3e200])
    assert squares.total == 4e200 and squares.mean == 2e200 and squares.cv is None
    plain = DurationStats.of([1.0, 3.0])
    assert plain.cv == 0.5
