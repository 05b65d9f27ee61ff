"""End to end on the real reports of the shared corpus (skipped when it is absent)."""

from __future__ import annotations

import json
import math

import pytest
from conftest import BAD, CORPUS, corpus_files, manifest

import ncu_roofline
from ncu_roofline.api.analysis import with_recipe_set
from ncu_roofline.errors import InputError
from ncu_roofline.readers import read_report, read_report_isolated

FILES = corpus_files()
pytestmark = pytest.mark.skipif(not FILES, reason=f"shared report corpus not found at {CORPUS}")


@pytest.fixture(scope="module")
def whole_corpus() -> ncu_roofline.Analysis:
    return ncu_roofline.analyze(FILES)


def by_name(analysis: ncu_roofline.Analysis, stem: str) -> ncu_roofline.ReportResult:
    return next(r for r in analysis.reports if r.path.endswith(stem))


def test_every_report_reads_with_manifest_identity(whole_corpus) -> None:
    rows = manifest()
    assert len(whole_corpus.reports) == len(FILES) == len(rows)  # every report of the manifest is read
    for report in whole_corpus.reports:
        row = rows[report.path.rsplit("/", 1)[-1]]
        assert len(report.kernels) == int(row["num_actions"])
        first = report.kernels[0].raw
        assert first.device == row["gpu"]
        assert first.compute_capability == row["compute_capability"]
        assert first.sm_count == int(row["sm_count"])
        if row["ncu_version"].startswith("20"):
            assert report.ncu_version == row["ncu_version"]
        else:
            assert report.ncu_version is None


def test_json_contract_and_no_nan(whole_corpus) -> None:
    doc = json.loads(whole_corpus.to_json())
    assert doc["schema"] == "ncu-roofline/5"
    assert doc["generator"]["name"] == "ncu-roofline"
    roofs = {"dram", "l2", "l1", "fp64", "fp32", "fp16", "tensor"}
    for report, analysed in zip(doc["reports"], whole_corpus.reports, strict=True):
        assert report["kernel_count"] == len(report["kernels"])
        units = report["units"]
        for launch, obj in zip(report["kernels"], analysed.kernels, strict=True):
            k = with_recipe_set(report, launch)  # /5: provenance and missing listed once, in recipe_sets
            # a unit's recipe is the kernel's own where it differs from the report's list, else the list's
            assert set(k["unit_recipes"]) <= set(obj.units)
            assert {uid: k["unit_recipes"].get(uid, units[uid]["recipe"]) for uid in obj.units} == \
                {uid: u.recipe for uid, u in obj.units.items()}
            assert set(k["utilization"]) - roofs == set(obj.units) and all(units[u]["label"] for u in obj.units)
            for key in ("index", "name", "demangled_name", "device", "compute_capability", "duration_s",
                        "work_flop", "traffic_bytes", "intensity_flop_per_byte", "achieved_flop_per_s",
                        "peaks", "utilization", "bound_by", "regime", "recipe_set", "flags"):
                assert key in launch
            assert set(k["work_flop"]) == {"fp64", "fp32", "fp16", "tensor"}
            assert set(k["traffic_bytes"]) == {"dram", "l2", "l1"}
            assert k["bound_by"] is None or k["bound_by"] in k["utilization"]
            assert k["regime"] in (None, "at_limit", "latency", "too_little_work")
            for m in k["missing"]:
                assert m["reason"] and m["collect_with"]
            # every number that is present came from a recorded recipe
            for level, value in k["traffic_bytes"].items():
                if value is not None:
                    assert f"traffic_bytes.{level}" in k["provenance"]
            for u in k["utilization"].values():
                assert math.isfinite(u) and u >= 0


def test_no_point_above_a_roof(whole_corpus) -> None:
    flagged = [(r.path, k.raw.name, k.flags) for r, k in whole_corpus.models
               if any(f.startswith("above_roof") for f in k.flags)]
    assert flagged == []


def test_h100_peaks_match_hardware_facts(whole_corpus) -> None:
    """H100 PCIe (114 SMs): FFMA 114 x 128 per cycle, so FP32 = 29,184 FLOP/cycle; L2 5,120 B/cycle."""
    k = by_name(whole_corpus, "cs599k__2025-04-21-v1.ncu-rep").kernels[0]
    clock = k.raw.number("sm__cycles_elapsed.avg.per_second")
    assert k.peaks["fp32"].value / clock == pytest.approx(114 * 128 * 2)
    assert k.peaks["fp64"].value / clock == pytest.approx(114 * 64 * 2)
    l2_clock = k.raw.number("lts__cycles_elapsed.avg.per_second")
    assert k.peaks["l2"].value / l2_clock == pytest.approx(5120)
    # GH200 (132 SMs): FP32 33,792 FLOP/cycle, L1 16,896 B/cycle
    g = by_name(whole_corpus, "cs599k__silu-2025-04-18-v9.ncu-rep").kernels[0]
    assert g.peaks["fp32"].value / g.raw.number("sm__cycles_elapsed.avg.per_second") == pytest.approx(33792)
    assert g.peaks["l1"].value / g.raw.number("l1tex__cycles_elapsed.avg.per_second") == pytest.approx(16896)


def test_dram_rate_times_duration_equals_read_plus_write(corpus) -> None:
    raw = read_report_isolated(corpus / "cudaprogramming__smemTranspose.ncu-rep")
    for k in raw.kernels:
        rate = k.number("dram__bytes.sum.per_second")
        duration = k.number("gpu__time_duration.sum") * 1e-9
        total = k.number("dram__bytes_read.sum") + k.number("dram__bytes_write.sum")
        assert rate * duration == pytest.approx(total, rel=1e-9)
    analysed = ncu_roofline.analyze(corpus / "cudaprogramming__smemTranspose.ncu-rep")
    first = analysed.reports[0].kernels[0]
    assert first.q.bytes["dram"].recipe == "dram__bytes_read.sum + dram__bytes_write.sum"
    assert first.q.bytes["dram"].value == pytest.approx(
        first.raw.number("dram__bytes_read.sum") + first.raw.number("dram__bytes_write.sum"))


def test_mw_div_to_mult_pair(corpus) -> None:
    """V100 OpenACC: compute_tendencies_x_279 gets about 1.8x faster and does far less FP64 work."""
    base = ncu_roofline.analyze(corpus / "gpu-workshop__MW_Baseline.ncu-rep").kernels
    head = ncu_roofline.analyze(corpus / "gpu-workshop__MW_DivToMult.ncu-rep").kernels
    b = base[base["name"] == "compute_tendencies_x_279_gpu"].iloc[0]
    h = head[head["name"] == "compute_tendencies_x_279_gpu"].iloc[0]
    assert b["duration_s"] / h["duration_s"] == pytest.approx(1.78, abs=0.03)
    assert h["work_fp64_flop"] < 0.5 * b["work_fp64_flop"]
    assert b["bound_by"] == "sm__pipe_fp64_cycles_active" and h["bound_by"] == "dram"
    assert b["bound_kind"] == "unit" and h["bound_kind"] == "roof"
    assert h["regime"] == "at_limit"


def test_hierarchical_levels_on_roofline_reports(corpus) -> None:
    k = ncu_roofline.analyze(corpus / "cs599k__2025-04-21-v1.ncu-rep").reports[0].kernels[0]  # H100, reads more
    assert all(k.q.bytes[lv] is not None and k.q.bytes[lv].definition in ("", "chart") for lv in ("dram", "l2", "l1"))
    assert k.provenance["traffic_bytes.l2"].startswith("derived__lts__lts2xbar_bytes.sum.per_second")
    # A100 silu: it writes as much as it reads, and the chart's L2 bytes (L2 -> crossbar returns, reads alone)
    # are half of DRAM's: L2 takes the SMs' tag traffic (16,777,216 sectors; lts__t_sectors adds the L2 fabric's
    # 16,427,643), L1 (write-back of loads alone, no tag count) has no bytes
    k = ncu_roofline.analyze(corpus / "cs599k__2025-04-21-77_06-MT.ncu-rep").reports[0].kernels[0]
    assert k.q.bytes["l2"].definition == "tags"
    assert k.provenance["traffic_bytes.l2"].startswith("32 × lts__t_sectors_srcunit_tex.sum")
    assert k.q.bytes["l2"].value >= k.q.bytes["dram"].value and k.q.bytes["l1"] is None
    assert k.intensity["l2"] == pytest.approx(k.intensity["dram"] * 524193152.0 / (32 * 16_777_216))
    assert any(m.quantity == "traffic_bytes.l1" and "fewer than the bytes L2 moved" in m.reason for m in k.missing)
    assert k.q.bytes["l2"].value == 32 * 16_777_216  # 537 MB, the figure the reason compares with
    assert k.bound_by == "dram" and k.regime == "at_limit"
    # the tags definition is available on request and is labelled
    tags = ncu_roofline.analyze(corpus / "cs599k__2025-04-21-77_06-MT.ncu-rep", bytes_definition="tags")
    assert tags.reports[0].kernels[0].q.bytes["l2"] is not None


def test_nan_kernels_are_reported_unusable(corpus) -> None:
    for path in sorted(BAD.glob("real_all-metrics-NaN*")):
        result = ncu_roofline.analyze(path)
        (k,) = result.reports[0].kernels
        assert not k.usable and "NaN" in k.q.unusable_reason
    esmm = ncu_roofline.analyze(corpus / "esmm-research__profile.5c6231e.ncu-rep").reports[0]
    usable = [k.usable for k in esmm.kernels]
    assert usable[-1] is False and all(usable[:-1])  # the others are still analysed


@pytest.mark.parametrize("name, words", [
    ("synthetic_empty.ncu-rep", "empty"),
    ("synthetic_git-lfs-pointer.ncu-rep", "Git LFS pointer"),
    ("synthetic_bad-magic__nsight-training__CuVectorAddDrv.ncu-rep", "not an Nsight Compute report"),
    ("synthetic_truncated-64B__nsight-training__CuVectorAddDrv.ncu-rep", "truncated"),
])
def test_bad_files_raise_clear_errors(corpus, name, words) -> None:
    with pytest.raises(InputError) as info:
        ncu_roofline.analyze(BAD / name)
    assert words in info.value.message and name in info.value.message


def test_a_cut_report_reads_its_whole_kernels_and_says_the_rest_is_missing(corpus) -> None:
    """The first half of a 154-kernel capture: NVIDIA's reader opens it and gives 68 kernels, the last of them the
    one the cut runs through (partial). The report reads the 67 whole ones, exactly as the full capture reads
    them, and its one warning says the file is cut and what is missing."""
    import ncu_report

    cut = BAD / "synthetic_truncated-50pct__self-join-mistic__profile.ncu-rep"
    ctx = ncu_report.load_report(str(cut))
    given = sum(ctx.range_by_idx(r).num_actions() for r in range(ctx.num_ranges()))
    report = ncu_roofline.analyze(cut).reports[0]
    whole = ncu_roofline.analyze(corpus / "self-join-mistic__profile.ncu-rep").reports[0]
    assert len(report.kernels) == given - 1 == 67
    for k, full in zip(report.kernels, whole.kernels, strict=False):
        assert (k.raw.name, k.q.duration_s, k.bound_by) == (full.raw.name, full.q.duration_s, full.bound_by)
    (warning,) = report.warnings
    assert "the file is cut short" in warning and "first 67 kernel result(s) are whole" in warning
    assert "the file is cut short" in report.completeness


def test_batch_keeps_going_past_bad_files(corpus) -> None:
    paths = [corpus / "cudacode__naive.ncu-rep", BAD / "synthetic_empty.ncu-rep",
             corpus / "cudacode__global_mem_coalesce.ncu-rep"]
    result = ncu_roofline.analyze(paths, strict=False)
    assert len(result.reports) == 2 and len(result.errors) == 1
    assert json.loads(result.to_json())["errors"][0]["path"].endswith("synthetic_empty.ncu-rep")


def test_dataframe_types(whole_corpus) -> None:
    df = whole_corpus.kernels
    assert len(df) == sum(len(r.kernels) for r in whole_corpus.reports)
    assert str(df["duration_s"].dtype) == "Float64"
    assert str(df["bound_by"].dtype) == str(df["regime"].dtype) == "category"
    assert str(df["bound_by_label"].dtype) == "string" and df["flags"].map(type).eq(list).all()
    assert df["work_tensor_flop"].isna().any()  # absent stays NA, never 0
    for col in df.columns:
        if col.endswith(("_s", "_flop", "_bytes", "_per_s", "_per_byte")):
            assert str(df[col].dtype) == "Float64", col


def test_basic_set_uses_the_reports_unit_throughputs(corpus) -> None:
    """Nsight Compute's default (basic) set has no byte counts; its unit throughputs make the verdict.

    They stand beside the roofs, never in them: a DRAM throughput share is not a DRAM roof.
    """
    report = ncu_roofline.analyze(corpus / "self-join-mistic__profile.ncu-rep").reports[0]
    k = report.kernels[0]
    assert k.q.bytes["dram"] is None and k.to_dict()["traffic_bytes"]["dram"] is None
    assert "dram" not in k.utilization  # no bytes, no roof
    expected = k.raw.number("gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed") / 100
    assert k.units["dram_throughput"].share == pytest.approx(expected)
    assert k.units["dram_throughput"].recipe.startswith("gpu__dram_throughput")
    sm = k.raw.number("sm__throughput.avg.pct_of_peak_sustained_elapsed") / 100
    assert k.units["sm_throughput"].share == pytest.approx(sm)
    assert k.to_dict()["utilization"]["sm_throughput"] == pytest.approx(sm)
    assert k.bound_by in k.units and k.limiter_share == max(u.share for u in k.units.values())
    assert k.to_dict()["bound_kind"] == "unit"
    # no CUDA-core counts: the FLOP total is unknown (an idle tensor pipe does not make it 0)
    sort_kernel = report.kernels[2]
    assert sort_kernel.q.flop["tensor"] is not None and sort_kernel.q.flop["tensor"].value == 0
    assert sort_kernel.achieved_flop_per_s is None and "no_flop_counts" in sort_kernel.flags


PARITY_REPORTS = ("gpu-workshop__MW_Baseline.ncu-rep", "cudaprogramming__smemTranspose.ncu-rep",
                  "cs599k__2025-04-21-v1.ncu-rep", "self-join-mistic__profile.ncu-rep",
                  "pmkid-brute-force__profile.nsight-cuprof-report")


@pytest.mark.parametrize("name", PARITY_REPORTS)
def test_csv_export_gives_the_same_analysis(corpus, tmp_path, name) -> None:
    """A report and its `ncu --csv --page raw` export (auto-scaled units, separators) agree."""
    from ncu_csv_writer import write_ncu_csv

    path = corpus / name
    csv_path = tmp_path / (name + ".csv")
    write_ncu_csv(read_report_isolated(path), csv_path, autoscale=True, thousands=True)
    rep = json.loads(ncu_roofline.analyze(path).to_json())["reports"][0]["kernels"]
    exp = json.loads(ncu_roofline.analyze(csv_path).to_json())["reports"][0]["kernels"]
    assert len(rep) == len(exp)

    def same(a, b, where):
        if isinstance(a, dict):
            assert set(a) == set(b), where
            for key in a:
                same(a[key], b[key], f"{where}.{key}")
        elif isinstance(a, list):
            assert len(a) == len(b), where
            for n, (x, y) in enumerate(zip(a, b, strict=False)):
                same(x, y, f"{where}[{n}]")
        elif isinstance(a, float) and isinstance(b, float):
            assert b == pytest.approx(a, rel=1e-9, abs=1e-300), where
        else:
            assert a == b, where

    for r, e in zip(rep, exp, strict=False):
        # A CSV carries one name, no NVTX state and no rule results; the group key is a digest of the full name.
        if r["demangled_name"] != e["demangled_name"]:  # a library's namespace (cub::) names whose code it is
            for f in (*r["diagnosis"], *e["diagnosis"]):  # (a step's own bound goes with its step)
                f.pop("next_step"), f.pop("lever"), f["figures"].pop("library", None), f["figures"].pop("step_x", None)
        for f in (*r["diagnosis"], *e["diagnosis"]):  # a CSV holds no per-instruction counters
            assert f.pop("where") is None or f in r["diagnosis"]
        # nor per-opcode counts: no FP64-division finding (the report's is checked in tests/test_divisions.py)
        assert not [f for f in e["diagnosis"] if f["kind"] == "fp64_division"]
        r["diagnosis"] = [f for f in r["diagnosis"] if f["kind"] != "fp64_division"]
        for f, g in zip(r["diagnosis"], e["diagnosis"], strict=False):  # nor the split accesses read off them
            if "split_op" in f["figures"]:  # the export keeps the finding's own step
                assert (f["kind"], g["kind"], g.get("lever", "popped")) in (
                    ("coalescing", "coalescing", "coalesce"), ("sector_use", "sector_use", "adjacent"),
                    ("coalescing", "coalescing", "popped"), ("sector_use", "sector_use", "popped"))
                f["figures"] = {k: v for k, v in f["figures"].items() if not k.startswith("split_")}
                for h in (f, g):
                    h.pop("lever", None), h.pop("next_step", None)
        for key in ("demangled_name", "nvtx_ranges", "group_key", "nsight_compute_rules", "rules_comparison",
                    "rules_relation"):
            r.pop(key, None), e.pop(key, None)
        assert e_rules_empty(exp)
        same(r, e, r["name"])


def e_rules_empty(kernels: list[dict]) -> bool:
    return all("nsight_compute_rules" not in k or k["nsight_compute_rules"] == [] for k in kernels)


def test_every_usable_kernel_has_duration_dram_and_bound_by(whole_corpus) -> None:
    dram_metrics = ("dram__bytes.sum", "dram__bytes_read.sum", "dram__bytes_op_read.sum",
                    "dram__sectors_read.sum", "dram__read_bytes")
    for report, k in whole_corpus.models:
        if not k.usable:
            assert k.to_dict()["duration_s"] is None and k.q.unusable_reason
            continue
        assert k.q.duration_s is not None and k.q.duration_s.value > 0, (report.path, k.raw.name)
        holds_dram = any(name in k.raw.metrics or f"{name}.per_second" in k.raw.metrics
                         for name in dram_metrics)
        has_write = any(w in k.raw.metrics or f"{w}.per_second" in k.raw.metrics for w in
                        ("dram__bytes_write.sum", "dram__bytes_op_write.sum", "dram__sectors_write.sum",
                         "dram__write_bytes", "dram__bytes.sum"))
        if holds_dram and has_write:
            assert k.q.bytes["dram"] is not None, (report.path, k.raw.name)
        if k.utilization and max(k.utilization.values()) > 0:
            assert k.bound_by is not None, (report.path, k.raw.name)
            assert k.regime in ("at_limit", "latency", "too_little_work"), (report.path, k.raw.name)


@pytest.mark.parametrize("stem", ["self-join-mistic__profile.ncu-rep", "fuzigrad__output.ncu-rep",
                                  "gpu-workshop__MW_Baseline.ncu-rep", "cs599k__profile.ncu-rep"])
def test_units_read_once_per_report_match_every_kernels_own(stem) -> None:
    """The reader asks the native reader for a metric's unit and kind once per report: in every
    kernel of these reports (many launches, 2019 to 2023 releases), each metric read through it
    equals the one read directly, unit and value."""
    import ncu_report

    from ncu_roofline.readers.strings import text

    path = CORPUS / stem
    # both read in this process: NVIDIA's reader answers some units (the `breakdown:` lists') from what the process
    # read before, so a read in another process may differ from this one's without either being ours
    kernels = read_report(path).kernels
    ctx = ncu_report.load_report(str(path))
    actions = [ctx.range_by_idx(r).action_by_idx(j) for r in range(ctx.num_ranges())
               for j in range(ctx.range_by_idx(r).num_actions())]
    assert len(actions) == len(kernels) > 1
    checked = 0
    for kernel, action in zip(kernels, actions, strict=True):
        for name in action.metric_names():
            m = action.metric_by_name(name)
            # a string the reader cannot give (None: nvlink__dev_display_name_all on a GPU without NVLink) is ""
            value = text(m.as_string()) if m.kind() == 2 else m.as_double()
            got = kernel.metrics.get(name)
            assert got is not None and got.unit == (m.unit() or ""), name
            assert got.value == value or (value != value and got.value != got.value), name
            checked += 1
    assert checked > 1000


def test_rule_severity_follows_nsight_computes_message_types(corpus) -> None:
    """ncu_report.MsgType: OPTIMIZATION 2, WARNING 3, ERROR 4. A rule that could not run is an error
    ("Rule Launch Configuration returned an error: Metric launch__block_size not found")."""
    import ncu_report

    from ncu_roofline.readers.rules import MESSAGE_TYPES

    for kind in ("OPTIMIZATION", "WARNING", "ERROR"):
        assert MESSAGE_TYPES[int(getattr(ncu_report.MsgType, kind))] == kind.lower()
    report = read_report_isolated(corpus / "esmm-research__profile.5c6231e.ncu-rep")
    failed = [r for k in report.kernels for r in k.rules if "returned an error" in r.message]
    assert failed and all(r.severity == "error" for r in failed)


def test_a_kernel_without_a_duration_has_no_share_of_gpu_time(corpus) -> None:
    """one_d_vec's duration is NaN in the report: its share of GPU time is not available, not 0 %."""
    from click.testing import CliRunner

    from ncu_roofline.cli import main

    md = CliRunner().invoke(main, ["report", str(corpus / "esmm-research__profile.5c6231e.ncu-rep"), "-f", "md"])
    assert "no verdict: 1 (n/a)" in md.stdout and "no verdict: 1 (0.0 %)" not in md.stdout
