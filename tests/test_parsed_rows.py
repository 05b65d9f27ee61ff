"""A CSV export's rows read from the values each row parsed at once: the resolver's counts and recipes (its
`number` reads a parsed value first), and the unit shares (`model.throughputs`) and launch
facts from those values. They must give exactly what the general path gives (value, formula, notes, every
Missing entry, unit shares and launch facts), on every report of the corpus."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from pathlib import Path

import pytest
from ncu_csv_writer import write_ncu_csv

from ncu_roofline.model import throughputs
from ncu_roofline.model.quantities import compute_quantities
from ncu_roofline.model.roofline import build_kernel_model
from ncu_roofline.readers import read_report
from ncu_roofline.readers.csv_export import CsvExport
from ncu_roofline.readers.record import Metric, RawKernel, RawReport

REPORTS = Path(__file__).resolve().parents[1].parent / "shared" / "reports"
needs_corpus = pytest.mark.skipif(not REPORTS.is_dir(), reason=f"shared report corpus not found at {REPORTS}")
CORPUS = sorted(p.name for p in REPORTS.glob("*.ncu-rep")) if REPORTS.is_dir() else []


def _quantities(path: Path) -> list[object]:
    return [compute_quantities(kernel) for kernel in CsvExport(path).kernels()]


def _models(path: Path) -> list[object]:
    """Every row's model as the JSON writes it: unit shares and launch facts included."""
    return [build_kernel_model(kernel).to_dict() for kernel in CsvExport(path).kernels()]


def _export(kernels: list[RawKernel], path: Path) -> Path:
    # Twice over, the first kernel first: the later rows parse at once what the first one's model read.
    rows = [dataclasses.replace(kernels[i % len(kernels)], index=i) for i in range(2 * len(kernels) + 1)]
    return write_ncu_csv(RawReport("export", "csv", rows), path, autoscale=True, thousands=True)


def _both_ways(path: Path, monkeypatch: pytest.MonkeyPatch, read: Callable[[Path], list[object]] = _models
               ) -> tuple[list[object], list[object]]:
    """Every row's model read from the values each row parsed at once, and read through the metric mapping
    alone (the unit shares and launch facts; the resolver reads a parsed value first either way)."""
    parsed = read(path)
    monkeypatch.setattr(throughputs, "hot_values", lambda metrics: ({}.get, {}))
    return parsed, read(path)


def _kernel(index: int) -> RawKernel:
    metrics = {
        "gpu__time_duration.sum": Metric(1500.0, "nsecond"),
        "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum": Metric(1.0e6, "inst"),
        "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum": Metric(2.0e6, "inst"),
        "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": Metric(3.0e6, "inst"),
        "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained": Metric(8192.0, "inst/cycle"),
        "sm__cycles_elapsed.avg.per_second": Metric(1.755, "Ghz"),
        "dram__bytes_read.sum": Metric(4.0e6, "byte"),
        "dram__bytes_write.sum": Metric(1.0e6, "byte"),
    }
    return RawKernel(index, f"k{index}", f"k{index}", metrics, device="NVIDIA H100", compute_capability="9.0")


def test_a_parsed_row_gives_the_hand_computed_value_and_formula(tmp_path: Path) -> None:
    q = _quantities(_export([_kernel(0)], tmp_path / "one.csv"))[-1]
    assert q.duration_s.value == pytest.approx(1.5e-6, rel=1e-15)  # type: ignore[attr-defined]
    fp32 = q.flop["fp32"]  # type: ignore[attr-defined]
    assert fp32.value == 1.0e6 + 2.0e6 + 2 * 3.0e6
    assert fp32.recipe == ("smsp__sass_thread_inst_executed_op_fadd_pred_on.sum + "
                           "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum + "
                           "2 × smsp__sass_thread_inst_executed_op_ffma_pred_on.sum")
    peak = q.peaks["fp32"]  # type: ignore[attr-defined]
    assert peak.value == pytest.approx(2 * 8192 * 1.755e9, rel=1e-12)
    assert peak.recipe == ("2 × sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained × "
                           "sm__cycles_elapsed.avg.per_second")
    assert q.bytes["dram"].value == 5.0e6  # type: ignore[attr-defined]


def test_a_row_whose_hot_value_is_nan_takes_the_general_path(tmp_path: Path) -> None:
    """The first row teaches the hot columns; a later row's NaN count is noticed and worded as NaN."""
    nan_row = _kernel(1)
    nan_row.metrics["smsp__sass_thread_inst_executed_op_fmul_pred_on.sum"] = Metric(math.nan, "inst")  # type: ignore[index]
    path = write_ncu_csv(RawReport("export", "csv", [_kernel(0), nan_row, _kernel(2)]), tmp_path / "nan.csv")
    parsed = _quantities(path)
    q = parsed[1]
    assert q.flop["fp32"] is None  # type: ignore[attr-defined]
    reason = next(m.reason for m in q.missing if m.quantity == "work_flop.fp32")  # type: ignore[attr-defined]
    assert "NaN" in reason and "fmul" in reason
    assert parsed[2].flop["fp32"].value == 9.0e6  # type: ignore[attr-defined]


@needs_corpus
@pytest.mark.parametrize("name", CORPUS)
def test_every_corpus_report_gives_the_same_model_from_parsed_values(
        tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole model (unit shares and launch facts from the parsed values)."""
    kernels = read_report(REPORTS / name).kernels
    parsed, general = _both_ways(_export(kernels, tmp_path / "export.csv"), monkeypatch, _models)
    assert parsed == general and len(general) == 2 * len(kernels) + 1


def test_a_damaged_unit_share_in_a_parsed_row_falls_back_to_the_units_next_metric(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A negative share (damage) or a NaN in a row whose cells parsed at once: the unit is read from its next
    metric, as through the metric mapping; a good row reads its parsed value."""
    def kernel(index: int, dram: float) -> RawKernel:
        k = _kernel(index)
        k.metrics["gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"] = Metric(dram, "%")  # type: ignore[index]
        k.metrics["dram__throughput.avg.pct_of_peak_sustained_elapsed"] = Metric(40.0, "%")  # type: ignore[index]
        k.metrics["sm__throughput.avg.pct_of_peak_sustained_elapsed"] = Metric(12.5, "%")  # type: ignore[index]
        return k

    rows = [kernel(0, 50.0), kernel(1, -3.0), kernel(2, math.nan), kernel(3, 62.0)]
    path = write_ncu_csv(RawReport("export", "csv", rows), tmp_path / "units.csv")
    parsed, general = _both_ways(path, monkeypatch, _models)
    assert parsed == general
    shares = [m["utilization"] for m in parsed]  # type: ignore[index]
    assert [s["dram_throughput"] for s in shares] == [0.5, 0.4, 0.4, 0.62]
    assert [m["unit_recipes"]["dram_throughput"] for m in parsed] == [  # type: ignore[index]
        "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed ÷ 100",
        "dram__throughput.avg.pct_of_peak_sustained_elapsed ÷ 100",
        "dram__throughput.avg.pct_of_peak_sustained_elapsed ÷ 100",
        "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed ÷ 100"]
    assert all(s["sm_throughput"] == 0.125 for s in shares)


def test_a_nan_launch_figure_in_a_parsed_row_is_not_available(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Launch facts read from a row's parsed values: a NaN is no figure (None), as `RawKernel.number` has it."""
    def kernel(index: int, waves: float) -> RawKernel:
        k = _kernel(index)
        k.metrics["launch__waves_per_multiprocessor"] = Metric(waves, "")  # type: ignore[index]
        k.metrics["launch__registers_per_thread"] = Metric(40.0, "register/thread")  # type: ignore[index]
        return k

    path = write_ncu_csv(RawReport("export", "csv", [kernel(0, 2.5), kernel(1, math.nan), kernel(2, 0.75)]),
                         tmp_path / "launch.csv")
    parsed, general = _both_ways(path, monkeypatch, _models)
    assert parsed == general
    assert [m["launch"]["waves_per_sm"] for m in parsed] == [2.5, None, 0.75]  # type: ignore[index]
    assert [m["launch"]["registers_per_thread"] for m in parsed] == [40.0] * 3  # type: ignore[index]


def test_a_zero_duration_kernel_keeps_its_sm_active_share_from_the_gpc_cycles() -> None:
    """A kernel whose duration is 0 is unusable; its SMs' active share still comes from the GPCs' elapsed cycles
    (the model's resolver then holds no duration: clock × 0 would give 0 elapsed cycles and no share)."""
    from conftest import make_kernel

    k = make_kernel({"gpu__time_duration.sum": (0.0, "ns"), "sm__cycles_active.avg": (600.0, "cycle"),
                     "gpc__cycles_elapsed.max": (800.0, "cycle"),
                     "sm__cycles_elapsed.avg.per_second": (1.5, "Ghz")})
    model = build_kernel_model(k)
    assert not model.usable
    assert model.launch["sm_active_share"] == 0.75
