"""The roofline arithmetic on hand-built kernels, checked against hand-computed numbers."""

from __future__ import annotations

import json
import math

import pytest
from conftest import make_kernel

from ncu_roofline.api.kernel import analyse_kernel
from ncu_roofline.errors import PeaksFileError
from ncu_roofline.knowledge.peaks_file import load_peaks
from ncu_roofline.model.quantities import compute_quantities
from ncu_roofline.settings import AnalysisSettings

OP = "smsp__sass_thread_inst_executed_op_{}_pred_on.sum"


def base_metrics() -> dict:
    """1 us kernel; FP32 2.5e6 FLOP; FP16 6e4 FLOP (hfma from a per-cycle rate); DRAM 6e5 B."""
    return {
        "gpu__time_duration.sum": (1000.0, "ns"),
        OP.format("ffma"): (1e6, "inst"),
        OP.format("fadd"): (2e5, "inst"),
        OP.format("fmul"): (3e5, "inst"),
        OP.format("dadd"): (0.0, "inst"),
        OP.format("dmul"): (0.0, "inst"),
        OP.format("dfma"): (0.0, "inst"),
        OP.format("hfma") + ".per_cycle_elapsed": (10.0, "inst/cycle"),
        "smsp__cycles_elapsed.avg": (1500.0, "cycle"),
        "dram__bytes_read.sum.per_second": (5e11, "byte/s"),
        "dram__bytes_write.sum": (1e5, "byte"),
        "dram__bytes.sum.peak_sustained": (1000.0, "byte/cycle"),
        "dram__cycles_elapsed.avg.per_second": (2e9, "hz"),
        "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained": (5000.0, "inst/cycle"),
        "sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained": (2500.0, "inst/cycle"),
        "sm__cycles_elapsed.avg.per_second": (1.5e9, "hz"),
    }


def test_quantities_hand_computed() -> None:
    q = compute_quantities(make_kernel(base_metrics()))
    assert q.duration_s.value == pytest.approx(1e-6)
    assert q.flop["fp32"].value == pytest.approx(2.5e6)  # 2*1e6 + 2e5 + 3e5
    assert q.flop["fp64"].value == 0.0
    assert q.flop["fp16"].value == pytest.approx(4 * 10 * 1500)  # hfma-only recipe, per-cycle x cycles
    assert "4 × " in q.flop["fp16"].recipe and "per_cycle_elapsed × smsp__cycles_elapsed.avg" in q.flop["fp16"].recipe
    assert q.bytes["dram"].value == pytest.approx(5e11 * 1e-6 + 1e5)
    assert q.bytes["dram"].recipe == ("dram__bytes_read.sum.per_second × gpu__time_duration.sum"
                                      " + dram__bytes_write.sum")
    assert q.peaks["dram"].value == pytest.approx(1000 * 2e9)
    assert q.peaks["fp32"].value == pytest.approx(2 * 5000 * 1.5e9)
    assert q.peaks["fp64"].value == pytest.approx(2 * 2500 * 1.5e9)
    assert q.bytes["l2"] is None and q.bytes["l1"] is None
    missing = {m.quantity: m for m in q.missing}
    assert {"traffic_bytes.l2", "traffic_bytes.l1", "peaks.l2", "peaks.l1", "peaks.fp16",
            "work_flop.tensor"} <= set(missing)
    assert "lts__t_bytes.sum" in missing["traffic_bytes.l2"].collect_with


FP16_PIPE = "sm__inst_executed_pipe_fp16.avg.pct_of_peak_sustained_active"
FP16_ON_FMA = "sm__inst_executed_pipe_fma_type_fp16.avg.pct_of_peak_sustained_active"


@pytest.mark.parametrize(("extra", "cc", "fp16"), [
    ({FP16_PIPE: (0.0, "%")}, "8.0", 0.0),  # A100: HFMA2s counted, the FP16 pipe idle: HFMA2.MMA moves
    ({FP16_ON_FMA: (0.0, "%")}, "9.0", 0.0),  # H100: FP16 on the FMA pipe, none
    ({FP16_PIPE: (0.4, "%")}, "8.0", 4 * 10 * 1500),  # the FP16 pipe ran something: FP16 work stays
    ({FP16_PIPE: (0.0, "%"), OP.format("hadd"): (100.0, "inst"), OP.format("hmul"): (0.0, "inst")}, "8.0",
     4 * 10 * 1500 + 2 * 100),  # HADD2s ran
    ({FP16_PIPE: (0.0, "%")}, "7.5", 4 * 10 * 1500),  # Turing: HFMA2.MMA may be arithmetic there
    ({}, "8.0", 4 * 10 * 1500),  # no datapath share: nothing to check against
])
def test_hfma2_mma_register_moves_are_no_fp16_work(extra: dict, cc: str, fp16: float) -> None:
    q = compute_quantities(make_kernel(base_metrics() | extra, compute_capability=cc))
    assert q.flop["fp16"].value == pytest.approx(fp16)
    assert q.flop["fp32"].value == pytest.approx(2.5e6)
    if fp16 == 0:
        assert "on no FP16 datapath" in q.flop["fp16"].recipe and "HFMA2.MMA" in q.flop["fp16"].note


def test_model_hand_computed() -> None:
    m = analyse_kernel(make_kernel(base_metrics()))
    assert m.utilization["dram"] == pytest.approx(6e5 / 2e12 / 1e-6)  # 0.3
    assert m.utilization["fp32"] == pytest.approx(2.5e6 / 1.5e13 / 1e-6)  # 0.1667
    assert m.utilization["fp64"] == 0.0
    assert "tensor" not in m.utilization and "l2" not in m.utilization
    assert m.bound_by == "dram"
    assert m.regime == "latency"
    total = 2.5e6 + 6e4
    assert m.achieved_flop_per_s == pytest.approx(total / 1e-6)
    assert m.intensity["dram"] == pytest.approx(total / 6e5)
    assert m.intensity["l2"] is None
    assert m.dominant_precision == "fp32"
    # attainable at DRAM = min(FP32 roof 1.5e13, I x 2e12)
    assert m.attainable_flop_per_s["dram"] == pytest.approx(min(1.5e13, total / 6e5 * 2e12))
    assert m.ridge_points()["dram"] == pytest.approx(1.5e13 / 2e12)
    d = m.to_dict()
    assert d["work_flop"]["tensor"] is None  # absent, never 0
    assert d["provenance"]["peaks.dram"] == "dram__bytes.sum.peak_sustained × dram__cycles_elapsed.avg.per_second"


def test_threshold_moves_regime() -> None:
    assert analyse_kernel(make_kernel(base_metrics()), AnalysisSettings(threshold=0.25)).regime == "at_limit"
    assert analyse_kernel(make_kernel(base_metrics()), AnalysisSettings(threshold=0.31)).regime == "latency"


def test_point_above_roof_is_flagged() -> None:
    metrics = base_metrics()
    metrics["dram__bytes_write.sum"] = (3e6, "byte")  # 3.5e6 B in 1 us at 2e12 B/s -> 1.75
    m = analyse_kernel(make_kernel(metrics))
    assert m.utilization["dram"] == pytest.approx(1.75)
    assert "above_roof:dram" in m.flags
    assert m.bound_by == "dram" and m.regime == "at_limit"


def test_nan_kernel_is_unusable_not_zero() -> None:
    metrics = base_metrics()
    metrics["gpu__time_duration.sum"] = (math.nan, "ns")
    m = analyse_kernel(make_kernel(metrics))
    assert not m.usable
    assert "NaN" in m.q.unusable_reason
    d = m.to_dict()
    assert d["duration_s"] is None and d["bound_by"] is None and d["regime"] is None
    assert d["flags"] == ["unusable"]


def test_nan_metric_reason_names_it() -> None:
    metrics = base_metrics()
    metrics["dram__bytes_write.sum"] = (math.nan, "byte")
    del metrics["dram__bytes_read.sum.per_second"]
    q = compute_quantities(make_kernel(metrics))
    assert q.bytes["dram"] is None
    reason = next(m.reason for m in q.missing if m.quantity == "traffic_bytes.dram")
    assert "NaN" in reason and "dram__bytes_write.sum" in reason


def test_tensor_paths_exact_and_utilisation() -> None:
    metrics = base_metrics()
    metrics["sm__ops_path_tensor_src_bf16_dst_fp32.sum"] = (4e8, "")
    metrics["sm__ops_path_tensor_src_bf16_dst_fp32.sum.peak_sustained"] = (500_000.0, "")
    metrics["sm__ops_path_tensor_src_fp8.sum.per_cycle_elapsed"] = (1000.0, "")
    metrics["sm__cycles_elapsed.avg"] = (1500.0, "cycle")
    metrics["sm__ops_path_tensor_src_fp8.sum.peak_sustained"] = (1_000_000.0, "")
    m = analyse_kernel(make_kernel(metrics))
    assert m.q.tensor_paths["src_bf16_dst_fp32"].value == 4e8
    assert m.q.tensor_paths["src_fp8"].value == pytest.approx(1000 * 1500)
    assert m.q.flop["tensor"].value == pytest.approx(4e8 + 1.5e6)
    bf16_peak = 500_000 * 1.5e9
    fp8_peak = 1_000_000 * 1.5e9
    assert m.tensor_peaks["src_bf16_dst_fp32"].value == pytest.approx(bf16_peak)
    # time bound is the sum over datapaths of work / that datapath's peak
    assert m.utilization["tensor"] == pytest.approx((4e8 / bf16_peak + 1.5e6 / fp8_peak) / 1e-6)
    assert m.bound_by == "tensor"
    assert m.dominant_precision == "tensor"
    assert "tensor_work_estimated" not in m.flags


def test_tensor_estimate_is_labelled() -> None:
    metrics = base_metrics()
    metrics["smsp__inst_executed_pipe_tensor.sum"] = (1000.0, "inst")
    metrics["sm__inst_executed_pipe_tensor.sum.peak_sustained"] = (100.0, "inst/cycle")
    m = analyse_kernel(make_kernel(metrics))
    assert m.q.flop["tensor"].value == 512_000.0
    assert m.q.flop["tensor"].estimate
    assert "tensor_work_estimated" in m.flags
    assert m.tensor_peaks["pipe_tensor_estimate"].value == pytest.approx(100 * 512 * 1.5e9)


def test_tensor_pipe_only_gives_utilisation_not_flop() -> None:
    metrics = base_metrics()
    metrics["sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed"] = (80.0, "%")
    m = analyse_kernel(make_kernel(metrics))
    assert m.q.flop["tensor"] is None
    assert m.utilization["tensor"] == pytest.approx(0.8)
    assert m.bound_by == "tensor" and m.regime == "at_limit"
    assert {"tensor_pipe_utilization_only", "flop_incomplete"} <= set(m.flags)
    assert m.achieved_flop_per_s is None  # an undercount is not shown as a value


def test_a_busy_tensor_pipe_without_any_cuda_core_count_has_no_flop_counts() -> None:
    """No FP64/FP32/FP16 counts and the tensor pipe 12 % busy: no total to call incomplete; no FLOP counts."""
    metrics = {n: v for n, v in base_metrics().items() if "_inst_executed_op_" not in n}
    metrics["sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed"] = (12.0, "%")
    m = analyse_kernel(make_kernel(metrics))
    assert "no_flop_counts" in m.flags and "flop_incomplete" not in m.flags
    assert "tensor_pipe_utilization_only" in m.flags and m.achieved_flop_per_s is None


def test_idle_tensor_pipe_means_zero_tensor_work() -> None:
    metrics = base_metrics()
    metrics["sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed"] = (0.0, "%")
    m = analyse_kernel(make_kernel(metrics))
    assert m.q.flop["tensor"].value == 0.0
    assert "tensor pipe idle" in m.q.flop["tensor"].recipe


def test_no_dram_on_integrated_parts_is_not_an_error() -> None:
    metrics = {k: v for k, v in base_metrics().items() if not k.startswith("dram__")}
    m = analyse_kernel(make_kernel(metrics, compute_capability="8.7"))
    reasons = [x for x in m.missing if x.quantity == "traffic_bytes.dram"]
    assert reasons and "no DRAM roof" in reasons[0].reason
    assert not any(x.quantity == "peaks.dram" for x in m.missing)
    assert m.bound_by == "fp32"


def test_pascal_names_and_empty_units() -> None:
    k = make_kernel({"gpu__time_duration": 2_000_000.0, "dram__read_bytes": 3000.0,
                     "dram__write_bytes": 1000.0}, compute_capability="6.1")
    q = compute_quantities(k)
    assert q.duration_s.value == pytest.approx(2e-3)  # empty unit means ns
    assert q.bytes["dram"].value == 4000.0


def test_user_peaks_override(tmp_path) -> None:
    path = tmp_path / "peaks.json"
    path.write_text(json.dumps({
        "schema": "ncu-roofline-peaks/1",
        "peaks": {"dram_bytes_per_s": 1e12},
        "devices": {"Test GPU": {"fp32_flop_per_s": 5e12, "l2_bytes_per_s": 4e12}},
    }))
    peaks = load_peaks(path)
    m = analyse_kernel(make_kernel(base_metrics()), AnalysisSettings(peaks=peaks))
    assert m.utilization["dram"] == pytest.approx(0.6)  # 6e5 B / 1e12 B/s / 1 us
    assert m.utilization["fp32"] == pytest.approx(0.5)
    assert m.regime == "at_limit"
    assert m.provenance["peaks.dram"] == f"peaks file {path}"
    assert "peak_from_file:dram" in m.flags
    assert not any(x.quantity == "peaks.l2" for x in m.missing)
    other = analyse_kernel(make_kernel(base_metrics(), device="Other GPU"), AnalysisSettings(peaks=peaks))
    assert other.utilization["fp32"] == pytest.approx(2.5e6 / 1.5e13 / 1e-6)  # report's own roof


@pytest.mark.parametrize("content, words", [
    ("{", "not valid JSON"),
    ('{"peaks": {"dram_bytes_per_s": -1}}', "must be at least 1"),
    ('{"peaks": {"dram_bytes_per_s": 1e-20}}', "must be at least 1"),  # a unit mistake, not a GPU
    ('{"peaks": {"dram_bytes_per_s": 1e35}}', "greater than the maximum of 1e+30"),  # past any figure the model takes
    ('{"peaks": {"tensor_flop_per_s": {"bf16": 1e31}}}', "greater than the maximum"),
    ('{"peaks": {"hbm": 1}}', "unknown key"),
    ('{"schema": "other/2"}', "unsupported schema"),
    ("[]", "JSON object"),
])
def test_bad_peaks_files(tmp_path, content, words) -> None:
    path = tmp_path / "p.json"
    path.write_text(content)
    with pytest.raises(PeaksFileError) as info:
        load_peaks(path)
    assert words in str(info.value) and str(path) in str(info.value)


def test_hopper_tensor_breakdowns_are_not_double_counted() -> None:
    """`op_*` families break down the same work as the `src_*` partition; the roof is the dense one."""
    metrics = base_metrics()
    metrics["sm__cycles_elapsed.avg"] = (1500.0, "cycle")
    pre = "sm__ops_path_tensor_"
    metrics[pre + "src_bf16_dst_fp32.sum"] = (6e8, "")
    metrics[pre + "src_bf16_dst_fp32.sum.peak_sustained"] = (933_888.0, "")  # sparse rate (aggregate)
    metrics[pre + "op_hgmma_src_bf16_dst_fp32_sparsity_off.sum"] = (6e8, "")
    metrics[pre + "op_hgmma_src_bf16_dst_fp32_sparsity_off.sum.peak_sustained"] = (466_944.0, "")
    metrics[pre + "op_hmma_src_bf16_dst_fp32_sparsity_off.sum"] = (0.0, "")
    metrics[pre + "op_hmma_src_bf16_dst_fp32_sparsity_off.sum.peak_sustained"] = (311_296.0, "")
    metrics[pre + "op_hgmma_src_bf16_dst_fp32_sparsity_on.sum.peak_sustained"] = (933_888.0, "")
    metrics[pre + "src_fp8_sparsity_off.sum"] = (2e8, "")
    metrics[pre + "src_fp8_sparsity_off.sum.peak_sustained"] = (933_888.0, "")
    metrics[pre + "src_fp8_sparsity_on.sum"] = (0.0, "")
    metrics[pre + "src_fp8_sparsity_on.sum.peak_sustained"] = (1_867_776.0, "")
    m = analyse_kernel(make_kernel(metrics))
    assert set(m.q.tensor_paths) == {"src_bf16_dst_fp32", "src_fp8_sparsity_off", "src_fp8_sparsity_on"}
    assert m.q.flop["tensor"].value == pytest.approx(8e8)  # not 1.4e9
    assert m.tensor_peaks["src_bf16_dst_fp32"].value == pytest.approx(466_944 * 1.5e9)  # dense hgmma
    expected = (6e8 / (466_944 * 1.5e9) + 2e8 / (933_888 * 1.5e9)) / 1e-6
    assert m.utilization["tensor"] == pytest.approx(expected)


def test_a_missing_peak_with_every_term_held_names_no_empty_lack() -> None:
    """A recipe can hold every term and still fail (no clock for its per-cycle peak): the reason then
    never reads "lacks" with nothing after it."""
    from ncu_roofline.model.quantities import compute_quantities

    metrics = base_metrics()
    del metrics["dram__cycles_elapsed.avg.per_second"]
    q = compute_quantities(make_kernel(metrics))
    (dram,) = [m for m in q.missing if m.quantity == "peaks.dram"]
    assert "lacks ;" not in dram.reason and "lacks )" not in dram.reason, dram.reason
    assert not dram.reason.rstrip(")").endswith("lacks ")
    assert "holds dram__bytes.sum.peak_sustained" in dram.reason and "clock, cycle count or duration" in dram.reason


def test_a_missing_quantity_names_the_term_the_report_lacks() -> None:
    """DRAM reads without writes: the reason says which term is absent, not "none of these metrics"."""
    from ncu_roofline.model.quantities import compute_quantities

    metrics = base_metrics()
    del metrics["dram__bytes_write.sum"]
    q = compute_quantities(make_kernel(metrics))
    (dram,) = [m for m in q.missing if m.quantity == "traffic_bytes.dram"]
    assert "holds dram__bytes_read.sum" in dram.reason
    assert "dram__bytes_read.sum + dram__bytes_write.sum lacks dram__bytes_write.sum" in dram.reason


def test_shared_memory_per_block_is_the_kernels_own_allocation() -> None:
    """sm_80+: launch__shared_mem_per_block (3,072 B) = static 2,048 + dynamic 0 + the driver's 1,024 B reserve.
    The kernel allocates 2,048 B; the reserve is stated apart."""
    launch = {"launch__shared_mem_per_block": (3072.0, "byte"), "launch__shared_mem_per_block_driver": (1024.0, "byte"),
              "launch__shared_mem_per_block_allocated": (3072.0, "byte")}
    own = {"launch__shared_mem_per_block_static": (2048.0, "byte"),
           "launch__shared_mem_per_block_dynamic": (512.0, "byte")}
    m = analyse_kernel(make_kernel({**base_metrics(), **launch, **own,
                                    "launch__shared_mem_per_block": (3584.0, "byte")}))
    assert m.launch["shared_memory_per_block"] == 2560.0 and m.launch["shared_memory_driver_per_block"] == 1024.0
    # without the static and dynamic figures: the total less the driver's reserve
    m = analyse_kernel(make_kernel({**base_metrics(), **launch}))
    assert m.launch["shared_memory_per_block"] == 2048.0
    # a report with the total alone (no reserve stated) keeps it
    m = analyse_kernel(make_kernel({**base_metrics(), "launch__shared_mem_per_block": (4096.0, "byte")}))
    assert m.launch["shared_memory_per_block"] == 4096.0 and m.launch["shared_memory_driver_per_block"] is None


def test_a_compute_roof_under_high_throughput_states_what_is_left_and_its_lever(tmp_path) -> None:
    """FP32 at 70 % of a 3.57 TFLOP/s peak (2.5 MFLOP in 1 µs): at its limit by the 60 % threshold, short of the
    80 % Nsight Compute calls high use: 1 / 0.7 = 1.43× left, reached by instruction-level parallelism."""
    path = tmp_path / "peaks.json"
    path.write_text(json.dumps({"peaks": {"fp32_flop_per_s": 2.5e6 / 1e-6 / 0.7, "dram_bytes_per_s": 1e13}}))
    m = analyse_kernel(make_kernel(base_metrics()), AnalysisSettings(peaks=load_peaks(path)))
    assert (m.bound_by, m.regime) == ("fp32", "at_limit") and m.utilization["fp32"] == pytest.approx(0.7)
    head = m.diagnosis[0]
    assert head.kind == "at_limit" and head.speedup is None
    # short of pressing against it: up to 1 / 0.7 = 1.43× left to the roof itself
    assert (head.variant, head.basis) == ("short", ("at_limit_short",))
    assert head.figures["left"] == pytest.approx(1 / 0.7) and head.figures["rest"] == pytest.approx(0.3)
    assert "1.43×" in head.words().headline
    # less work at this roof; more independent instructions per thread reach its last 30 %
    assert head.lever == "less_work_short" and head.figures["limit"] == "FP32"
