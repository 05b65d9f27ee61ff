"""The data behind the page and the Markdown summary: hand-built inputs and real reports."""

from __future__ import annotations

import pytest
from conftest import CORPUS, corpus_files, make_kernel
from test_model import base_metrics

import ncu_roofline
from ncu_roofline.api.analysis import Analysis, ReportResult
from ncu_roofline.api.kernel import analyse_kernel
from ncu_roofline.render import REPORT, RenderOptions, render
from ncu_roofline.render.markdown import md_escape
from ncu_roofline.settings import AnalysisSettings
from ncu_roofline.views.report import build_report_view, verdict

HOSTILE = "</script><b>x</b> & \"q\" 'y' | `z` void f<int, std::vector<float>>(T*)"


def render_markdown(analysis) -> str:
    return render(REPORT, analysis, "md", RenderOptions())


def analysis_of(*kernels, path: str = "/tmp/some/where/capture.ncu-rep") -> Analysis:
    models = [analyse_kernel(k) for k in kernels]
    return Analysis([ReportResult(path, "ncu-rep", "2025.1.0.0 (build 1)", models)], [])


def test_view_of_hand_built_kernels() -> None:
    fast = make_kernel(base_metrics(), index=0, name="fast")
    slow_metrics = base_metrics()
    slow_metrics["gpu__time_duration.sum"] = (3000.0, "ns")
    slow = make_kernel(slow_metrics, index=1, name="slow")
    view = build_report_view(analysis_of(fast, slow))
    assert view["header"]["kernel_count"] == 2
    assert view["header"]["total_gpu_time"] == "4 µs"
    k1, k0 = view["groups"]  # one group per kernel, the most GPU time first
    assert k0["share"] == pytest.approx(0.25) and k1["share"] == pytest.approx(0.75)
    assert view["top"][0]["name"] == "slow"
    assert k0["bound_by"] == "dram" and k0["bound_utilization_text"] == "30 %"
    assert [p["level"] for p in k0["chart"]["points"]] == ["dram"]  # no L2/L1 bytes: one marker
    (chart,) = view["charts"]
    names = [r["name"] for r in chart["roofs"]]
    assert names[0] == "dram" and "fp32" in names
    assert len(chart["points"]) == 2 and chart["off_chart"] == []
    assert any(n["quantity"] == "DRAM bytes" and n["recipe"].startswith("dram__bytes_read") for n in k0["numbers"])
    assert {m["quantity"] for m in k0["missing"]} >= {"traffic_bytes.l2", "peaks.l1"}


def test_verdicts() -> None:
    def said(m) -> str:  # the first finding's headline, then the next step of the one worth most
        first, top = m.diagnosis[0].words(), max(m.diagnosis, key=lambda f: f.speedup or 0.0).words()
        return f"{first.headline}. {top.next_step}"

    m = analyse_kernel(make_kernel(base_metrics()), AnalysisSettings(threshold=0.25))
    head, gap = m.diagnosis[:2]  # bound by DRAM at 30 % of the roof; raising intensity through reuse
    assert (head.kind, head.limit, head.figures["share"]) == ("at_limit", "dram", pytest.approx(0.3))
    assert (gap.kind, gap.lever) == ("intensity_gap", "reuse") and gap.speedup > 1
    assert verdict(m) == said(m) and verdict(m).startswith("DRAM at 30 %")
    m = analyse_kernel(make_kernel(base_metrics()))  # DRAM and FLOP roofs only: latency or an unmeasured limit
    (f,) = m.diagnosis  # the report lacks Nsight Compute's SM and memory throughputs and some memory roofs
    assert (f.kind, f.variant, f.lever, f.speedup) == ("latency", "unmeasured", "collect", None)
    assert (f.figures["label"], f.figures["share"]) == ("DRAM", pytest.approx(0.3)) and verdict(m) == said(m)
    measured = base_metrics()
    measured["sm__throughput.avg.pct_of_peak_sustained_elapsed"] = (20.0, "%")
    measured["gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"] = (25.0, "%")
    m = analyse_kernel(make_kernel(measured))
    (f,) = m.diagnosis  # below the threshold on every limit: the busiest is DRAM at 30 %, limited by latency
    assert (f.kind, f.limit, f.figures["share"]) == ("latency", "dram", pytest.approx(0.3))
    assert f.variant != "unmeasured" and f.speedup == pytest.approx(1 / 0.3) and verdict(m) == said(m)


@pytest.mark.skipif(not (CORPUS / "cutlass__report-s8.ncu-rep").is_file(), reason="corpus absent")
def test_tensor_work_with_no_flop_count_points_to_where_its_pipe_share_is() -> None:
    """CUTLASS's int8 GEMM (tensor pipe 2.9 %, IMMA counted, no FLOP count): off the chart, with a note that says
    where its tensor-pipe share is shown: its section's TENSOR roof utilisation, which holds that share (the
    table's limit column shows its busiest limit, L2 throughput)."""
    a = ncu_roofline.analyze(CORPUS / "cutlass__report-s8.ncu-rep")
    view = build_report_view(a)
    notes = [n for c in view["charts"] for n in c["off_chart"] if "tensor-core work with no FLOP count" in n["why"]]
    assert len(notes) == 1 and notes[0]["why"].endswith("its tensor-pipe busy share is in its section (the TENSOR "
                                                        "roof's utilisation)")
    assert notes[0]["named"] == ["Kernel<…>(…)"] and notes[0]["kernels"] == "1 kernel"
    (k,) = [k for k in a.reports[0].kernels if k.raw.name == "Kernel"]
    assert k.utilization["tensor"] == k.q.tensor_pipe_utilization.value == pytest.approx(0.0285, abs=5e-4)


def test_memory_only_and_unusable_kernels_are_explained_off_chart() -> None:
    metrics = base_metrics()
    for op in ("ffma", "fadd", "fmul"):
        metrics[f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum"] = (0.0, "inst")
    del metrics["smsp__sass_thread_inst_executed_op_hfma_pred_on.sum.per_cycle_elapsed"]
    copy = make_kernel(metrics, name="copy")
    nan = make_kernel({"gpu__time_duration.sum": (float("nan"), "ns")}, index=1, name="broken")
    view = build_report_view(analysis_of(copy, nan))
    (chart,) = view["charts"]
    assert chart["points"] == []
    reasons = {note["why"].split(" (")[0]: note["named"] for note in chart["off_chart"]}
    assert reasons == {"no floating-point work": ["copy"], "not analysable": ["broken"]}
    assert view["groups"][0]["utilization"]["dram"] == pytest.approx(0.3)  # still in the table
    assert view["header"]["unusable_count"] == 1


def test_redact_hides_paths(monkeypatch) -> None:
    view = build_report_view(analysis_of(make_kernel(base_metrics())), redact=True)
    assert view["header"]["inputs"] == ["capture.ncu-rep"]
    assert view["header"]["redacted"] is True


def test_source_date_epoch(monkeypatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    view = build_report_view(analysis_of(make_kernel(base_metrics())))
    assert view["header"]["created"] == "2023-11-14 22:13 UTC"


def test_markdown_summary_is_plain_and_escaped() -> None:
    text = render_markdown(analysis_of(make_kernel(base_metrics(), name=HOSTILE)))
    assert text.startswith("### Roofline summary")
    assert "| Kernel | Launches | Total | Share | Mean | Busiest limit | Utilisation | Regime | Top finding |" in text
    assert "<b>" not in text and "</script>" not in text
    header = next(line for line in text.splitlines() if line.startswith("| Kernel |"))
    row = next(line for line in text.splitlines() if line.startswith("| ") and "DRAM" in line)
    assert row.count(" | ") == header.count(" | ")  # the pipe in the name did not add a column
    assert md_escape("a|b<c>") == "a\\|b&lt;c&gt;"


def test_markdown_counts_agree_in_number() -> None:
    """One launch of one kernel reads "1 launch" and no "Top 1"; two read "2 launches" and "Top 2"."""
    one = render_markdown(analysis_of(make_kernel(base_metrics(), name="k")))
    assert "**kernels:** 1 (1 launch) ·" in one and "\n*At limit*: the busiest limit is at ≥ 60 % of its peak" in one
    assert "Top 1 " not in one and "1 launches" not in one
    slow = base_metrics()
    slow["gpu__time_duration.sum"] = (3000.0, "ns")
    two = render_markdown(analysis_of(make_kernel(base_metrics(), index=0, name="a"),
                                      make_kernel(slow, index=1, name="b")))
    assert "**kernels:** 2 (2 launches) ·" in two and "\nTop 2 kernels by GPU time; *at limit*" in two
    again = render_markdown(analysis_of(make_kernel(base_metrics(), index=0, name="k"),
                                        make_kernel(base_metrics(), index=1, name="k")))
    assert "**kernels:** 1 (2 launches) ·" in again and "Top 1 " not in again and "Top 2 " not in again
    assert "\n*At limit*: the busiest limit is at ≥ 60 % of its peak" in again  # one row: no "Top" count


@pytest.mark.skipif(not corpus_files(), reason=f"shared report corpus not found at {CORPUS}")
def test_markdown_says_what_nsight_computes_largest_estimate_says_beside_the_diagnosis() -> None:
    """A reviewer reads, per kernel of the table, the comparison with Nsight Compute's largest estimate (the same
    sentence as the page's); a capture without rule results (a hand-built kernel, a CSV) gets no such list."""
    a = ncu_roofline.analyze(CORPUS / "cs599k__profile.ncu-rep")
    text = render_markdown(a)
    said = text.split("Beside Nsight Compute's own rules (its largest estimated speed-up per kernel):\n\n")[1]
    lines = said.split("\n\n")[0].splitlines()
    assert len(lines) == 2 and lines[0].startswith("- vectorized\\_elementwise\\_kernel")
    assert "Achieved Occupancy, 16 %\\) is for hiding latency" in lines[0]
    assert "Tail Effect, 50 %\\) agrees on the cause" in lines[1]
    assert "Beside Nsight Compute" not in render_markdown(analysis_of(make_kernel(base_metrics(), name="k")))


@pytest.mark.skipif(not corpus_files(), reason=f"shared report corpus not found at {CORPUS}")
def test_a_finding_names_the_roof_its_share_is_of_only_where_it_caps_that_roof() -> None:
    """Higgs nodeByPoint5: the lane efficiency under the issue slots caps their useful work (45 %), not the FP64 roof
    its ceiling was computed for; the coalescing finding caps the L1 roof (78 %)."""
    a = ncu_roofline.analyze(CORPUS / "self-join-mistic__profileHiggs.out.ncu-rep")
    view = build_report_view(a)
    found = {f["kind"]: f for f in view["groups"][0]["findings"]}
    assert found["lane_efficiency"]["factor_text"] == "45 %" and found["coalescing"]["factor_text"] == "78 %"
    (group,) = [g for g in a.groups_of(a.reports[0]) if g.key == view["groups"][0]["key"]]
    caps = {f.kind.value: (f.roof, f.figures["caps"]) for f in group.summary.diagnosis if "caps" in f.figures}
    lanes_roof, lanes_caps = caps["lane_efficiency"]
    assert lanes_roof == "fp64" and "issue slots" in lanes_caps and "FP64" not in lanes_caps
    assert caps["coalescing"][0] == "l1" and "L1 roof" in caps["coalescing"][1]
    assert "FP64" not in found["lane_efficiency"]["headline"] and "L1 roof" in found["coalescing"]["headline"]


@pytest.mark.skipif(not corpus_files(), reason=f"shared report corpus not found at {CORPUS}")
def test_view_on_real_reports() -> None:
    a = ncu_roofline.analyze([CORPUS / "gpu-workshop__MW_Baseline.ncu-rep",
                              CORPUS / "cs599k__2025-04-21-v1.ncu-rep"])
    view = build_report_view(a)
    assert [d["name"] for d in view["header"]["devices"]] == ["Tesla V100-SXM2-32GB", "NVIDIA H100 PCIe"]
    assert len(view["charts"]) == 2  # one chart per device, each on that device's roofs
    v100 = view["charts"][0]
    labels = [r["label"] for r in v100["roofs"]]
    assert any(lbl.startswith("DRAM") for lbl in labels) and any(lbl.startswith("FP64") for lbl in labels)
    (halo,) = v100["off_chart"]  # the two halo copies do no FP work: one reason, written once
    assert halo["why"].startswith("no floating-point work") and halo["count"] == 2 and halo["kernels"] == "2 kernels"
    assert view["top"][0]["name"] == "compute_tendencies_x_279_gpu"
    md = render_markdown(a)
    assert "compute\\_tendencies\\_x\\_279\\_gpu" in md and "FP64" in md


def test_negligible_tensor_pipe_share_gets_no_table_badge() -> None:
    """Under 5 % the tensor pipe's busy share is no evidence of tensor work (elementwise kernels on Hopper):
    the table carries no "tensor pipe % only" badge for it; a larger share keeps it."""
    from ncu_roofline.views.texts import table_flags

    assert table_flags(["tensor_pipe_utilization_only", "tensor_pipe_negligible"]) == []
    labels = [f["label"] for f in table_flags(["tensor_pipe_utilization_only", "flop_incomplete"])]
    assert labels == ["tensor pipe % only", "FLOP incomplete"]


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"shared report corpus not found at {CORPUS}")
def test_silu_basic_set_row_has_no_tensor_badge() -> None:
    k = ncu_roofline.analyze(CORPUS / "cs599k__silu-pytorch.ncu-rep").reports[0].kernels[0]
    pipe = k.q.tensor_pipe_utilization
    assert "tensor_pipe_negligible" in k.flags and pipe is not None
    assert pipe.value == pytest.approx(0.0135, abs=5e-4)
    from ncu_roofline.views.texts import table_flags
    assert table_flags(k.flags) == []


@pytest.mark.parametrize(("report", "kernel", "noted"), [
    ("cs599k__2025-04-21-77_06-MT.ncu-rep", 0, True),  # SMs' sectors at 15 % beside L2's data sectors at 31 %
    ("gpu-workshop__MW_Baseline.ncu-rep", 0, False),  # 9.1 % beside 9.2 %: nothing to explain
])
def test_a_memory_point_well_below_its_levels_sector_count_is_explained(report: str, kernel: int, noted: bool) -> None:
    from ncu_roofline.views.kernel_numbers import ROOF_BELOW_UNIT, roof_unit_notes

    path = CORPUS / report
    if not path.is_file():
        pytest.skip(f"{path} not found")
    k = ncu_roofline.analyze(path).reports[0].kernels[kernel]
    point = k.utilization["l2"]
    counted = {uid: u.share for uid, u in k.units.items() if uid.startswith("lts__") and "sectors" in uid
               and "fill" not in uid}
    busiest = max(counted.values())
    assert (busiest > ROOF_BELOW_UNIT * point) is noted
    notes = [n for n in roof_unit_notes(k) if n.startswith("L2:")]
    assert len(notes) == (1 if noted else 0)
    if noted:
        assert f"({busiest / point:.2g}× the point)" in notes[0] and k.q.bytes["l2"].recipe in notes[0]
        assert "different traffic against different peaks" in notes[0]  # lts__d_sectors vs a peak of lts__t_sectors


def test_latency_in_a_capture_of_few_limits_reads_as_latency_or_an_unmeasured_limit() -> None:
    """DRAM reads alone (no SM or memory throughput, no L2 or L1 roof): a row below the threshold cannot be told
    latency-limited in the table either, as its verdict says; a row at its limit keeps "at limit"."""
    path = CORPUS / "cudaprogramming__readSegmentUnroll.ncu-rep"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    md = render(REPORT, ncu_roofline.analyze(path), "md", RenderOptions())
    regimes = [line.split(" | ")[7] for line in md.splitlines() if line.startswith("| readOffset")]
    assert set(regimes) == {"latency or an unmeasured limit", "at limit"}


def test_a_nan_kernel_is_named_by_its_duration_metric_not_a_clock() -> None:
    path = CORPUS / "esmm-research__profile.5c6231e.ncu-rep"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    unusable = [k for k in ncu_roofline.analyze(path).reports[0].kernels if not k.usable]
    assert unusable
    for k in unusable:
        assert k.raw.number("gpu__time_duration.sum") is None  # NaN in the report
        assert "starting with the duration (gpu__time_duration.sum)" in (k.q.unusable_reason or "")


def test_a_memory_point_of_zero_gets_no_note_and_no_division() -> None:
    """A write-only kernel's L2 point of reads is 0 beside L2's sectors: nothing to compare, no ZeroDivisionError."""
    import dataclasses

    from ncu_roofline.views.kernel_numbers import roof_unit_notes

    path = CORPUS / "cs599k__2025-04-21-77_06-MT.ncu-rep"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    k = ncu_roofline.analyze(path).reports[0].kernels[0]
    assert any(n.startswith("L2:") for n in roof_unit_notes(k))
    zero = dataclasses.replace(k, utilization={**k.utilization, "l2": 0.0})
    assert not any(n.startswith("L2:") for n in roof_unit_notes(zero))


def test_kernels_off_the_chart_are_listed_once_per_reason() -> None:
    """Many kernels off the chart for one reason (an export's 100 copy kernels): the reason is written once, with
    the first names and a count of the rest, not once per kernel; reasons are kinds, worded from a table."""
    from ncu_roofline.views.wording import NO_FP_WORK, OFF_CHART_NAMED, OFF_CHART_TEXT, UNUSABLE, off_chart_notes

    pairs = [(f"copy{i}", NO_FP_WORK) for i in range(100)] + [("broken", UNUSABLE), ("copy0", NO_FP_WORK)]
    (copies, broken) = off_chart_notes(pairs, OFF_CHART_TEXT)
    assert copies == {"why": OFF_CHART_TEXT[NO_FP_WORK], "count": 100, "kernels": "100 kernels",
                      "named": ["copy0 (×2)", *(f"copy{i}" for i in range(1, OFF_CHART_NAMED))]}
    assert broken == {"why": OFF_CHART_TEXT[UNUSABLE], "count": 1, "kernels": "1 kernel", "named": ["broken"]}


@pytest.mark.parametrize("mostly_untimed", [False, True], ids=["few-untimed", "most-untimed"])
def test_a_groups_section_lists_its_longest_and_some_disagreeing_launches(mostly_untimed: bool) -> None:
    """A group's section lists, for readers without JavaScript, `LAUNCH_SAMPLE` launches: up to half of them among
    those whose limiter differs from the group's, the rest its longest (equal ones, and those without a duration
    last, in launch order), the longest first; and its first disagreeing launches."""
    import random

    from test_model import OP

    from ncu_roofline.views.groups import LAUNCH_SAMPLE

    draw = random.Random(3)
    kernels = []
    for i in range(40):
        m = base_metrics()
        m["gpu__time_duration.sum"] = (draw.choice([500.0, 1000.0, 1500.0]), "ns")
        if (i >= 6) if mostly_untimed else (i % 7 == 3):  # all but six, or every seventh
            del m["gpu__time_duration.sum"]
        if i % 5 == 1:
            m[OP.format("ffma")] = (5e9, "inst")  # FP32-bound: a limiter other than the group's
        kernels.append(make_kernel(m, index=i))
    analysis = analysis_of(*kernels)
    (group,) = analysis.groups_of(analysis.reports[0])
    (v,) = build_report_view(analysis)["groups"]

    def by_time(k):  # the longest first; a launch without a duration after every timed one
        return -(k.duration_s if k.duration_s is not None else -1.0)

    entries = list(group.launches)
    others = [k for k in entries if k.index in set(group.disagreeing)]
    longest = sorted(entries, key=by_time)[:LAUNCH_SAMPLE]
    sample = sorted({k.index: k for k in [*others[:LAUNCH_SAMPLE // 2], *longest]}.values(), key=by_time)
    assert others and (mostly_untimed or len(others) > LAUNCH_SAMPLE) and any(k.duration_s is None for k in entries)
    assert not mostly_untimed or any(k.duration_s is None for k in sample[:LAUNCH_SAMPLE])
    assert [line["index"] for line in v["launch_sample"]] == [k.index for k in sample[:LAUNCH_SAMPLE]]
    assert v["disagreeing_sample"] == [k.index for k in others[:LAUNCH_SAMPLE]]
    assert v["disagreeing_text"] == f"{len(others)} launches have"


@pytest.mark.skipif(not corpus_files(), reason=f"shared report corpus not found at {CORPUS}")
def test_sol_points_carry_the_limit_the_kernel_table_names() -> None:
    """The Speed-Of-Light legend names each colour's limits: every point carries its kernel's limit as the table's
    "Busiest limit" badge writes it, whatever its colour."""
    for path in corpus_files():
        view = build_report_view(ncu_roofline.analyze(path))
        badges = {v["id"]: v["bound_short"] for v in view["groups"]}
        for chart in view["sol_charts"]:
            for p in chart["points"]:
                assert p["bound_label"] == badges[p["kernel_id"]], (path.name, p)
