"""Figures past anything a GPU counter measures (`model.ranges.FIGURE_LIMIT`): a hand-edited or damaged report
whose counts, shares or durations are scaled far out (×1e300, 1e308, 1e-300 s) makes the launch unusable with
the figure named, never a verdict on it, and never an exception in any output; real reports never trip it."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import make_kernel
from ncu_csv_writer import write_ncu_csv

from ncu_roofline.api.analysis import analyze
from ncu_roofline.api.kernel import analyse_kernel
from ncu_roofline.cli import main
from ncu_roofline.model.ranges import DURATION_FLOOR, FIGURE_LIMIT
from ncu_roofline.model.roofline import build_kernel_model
from ncu_roofline.readers import read_report
from ncu_roofline.readers.record import Metric, RawKernel, RawReport

REPORTS = Path(__file__).resolve().parents[1].parent / "shared" / "reports"
needs_corpus = pytest.mark.skipif(not REPORTS.is_dir(), reason=f"shared report corpus not found at {REPORTS}")
CORPUS = sorted(p.name for p in REPORTS.glob("*.ncu-rep")) if REPORTS.is_dir() else []
# A few reports of each kind for the scaled exports (the whole corpus is read unscaled below).
SCALED = ["gpu-workshop__MW_Baseline.ncu-rep", "nsight-training__manual_nvtx.ncu-rep", "cutlass__report-s8.ncu-rep",
          "cs599k__profile.ncu-rep", "self-join-mistic__profileHiggs.out.ncu-rep"]


def _plain() -> dict[str, float | tuple[float, str]]:
    """A launch of 2 µs that reads 4 MB from DRAM (2 TB/s peak: 100 % busy) with the SM unit at 30 %."""
    return {
        "gpu__time_duration.sum": (2000.0, "nsecond"),
        "dram__bytes.sum": (4.0e6, "byte"),
        "dram__bytes.sum.peak_sustained": (1000.0, "byte/cycle"),
        "dram__cycles_elapsed.avg.per_second": (2.0, "Ghz"),
        "sm__throughput.avg.pct_of_peak_sustained_elapsed": 30.0,
        "smsp__inst_executed.sum": 1.0e6,
    }


def test_a_plain_launch_is_placed() -> None:
    m = analyse_kernel(make_kernel(_plain()))
    assert m.usable and m.bound_by == "dram" and m.utilization["dram"] == pytest.approx(1.0)  # 4e6 / 2e12 / 2e-6


@pytest.mark.parametrize(("name", "value", "named"), [
    ("sm__throughput.avg.pct_of_peak_sustained_elapsed", 1.7e308, "utilization.sm_throughput is 1.7e+306 "
                                                                  "(sm__throughput.avg.pct_of_peak_sustained_elapsed"),
    ("dram__bytes.sum", (4.0e300, "byte"), "traffic_bytes.dram is 4e+300 (dram__bytes.sum"),
    ("gpu__time_duration.sum", (1.0e-300, "nsecond"), "duration_s is 1e-309 s (gpu__time_duration.sum)"),
    ("smsp__inst_executed.sum", 1.0e40, "the counter smsp__inst_executed.sum is 1e+40"),  # read by the passes
])
def test_a_figure_past_the_limit_makes_the_launch_unusable_with_the_figure_named(
        name: str, value: float | tuple[float, str], named: str) -> None:
    m = analyse_kernel(make_kernel({**_plain(), name: value}))
    assert not m.usable and m.q.unusable_reason is not None
    assert m.q.unusable_reason.startswith(named), m.q.unusable_reason
    assert "edited or damaged" in m.q.unusable_reason and "re-profile" in m.q.unusable_reason
    assert (m.bound_by, m.regime, m.utilization, m.units, m.ceilings, m.diagnosis) == (None, None, {}, {}, [], [])
    assert m.flags == ["unusable"]  # no verdict, so none of a verdict's flags (unit_throughputs, above_roof, ...)


@pytest.mark.parametrize(("ns", "usable"), [(0.9e-3, False), (1e-3, True), (1.0, True), (1e-300, False)])
def test_a_duration_under_one_cycle_of_a_terahertz_clock_sets_the_launch_aside(ns: float, usable: bool) -> None:
    """The floor is 1e-12 s (1e-3 ns): a shorter positive duration is no measurement. A capture with no byte or
    FLOP counts (NC's basic set: unit shares only, which do not depend on the duration) is set aside too: no figure
    of it leaves the range, but its time share would be meaningless."""
    basic = {"gpu__time_duration.sum": (ns, "nsecond"), "sm__throughput.avg.pct_of_peak_sustained_elapsed": 30.0,
             "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed": 70.0}
    m = analyse_kernel(make_kernel(basic))
    assert DURATION_FLOOR == 1e-12
    assert m.usable is usable, m.q.unusable_reason
    if usable:
        assert m.bound_by is not None
    else:
        assert (m.q.unusable_reason or "").startswith(f"duration_s is {ns * 1e-9:.3g} s (gpu__time_duration.sum), "
                                                      "shorter than one cycle of any GPU clock")
        assert (m.bound_by, m.regime, m.units, m.diagnosis) == (None, None, {}, [])
        assert m.flags == ["unusable"]


def test_counters_that_only_sum_past_the_limit_set_nothing_aside() -> None:
    """Two counters of 6e29 each: their sum passes the limit, neither does (the quick check's slow path)."""
    m = analyse_kernel(make_kernel({**_plain(), "smsp__inst_executed.sum": 6e29,
                                    "smsp__sass_inst_executed_op_global_ld.sum": 6e29}))
    assert m.usable and m.bound_by == "dram"


def test_shared_memory_sizes_past_the_float_range_set_the_launch_aside() -> None:
    """Static + dynamic shared memory of 1e308 each overflow their sum (math.fsum would raise): not available."""
    m = analyse_kernel(make_kernel({**_plain(), "launch__shared_mem_per_block_static": (1e308, "byte"),
                                    "launch__shared_mem_per_block_dynamic": (1e308, "byte")}))
    assert not m.usable and "launch.shared_memory_per_block is inf" in (m.q.unusable_reason or "")
    assert m.launch["shared_memory_per_block"] is None and m.launch["block_threads"] is None


def test_the_limit_is_a_bound_not_a_verdict_on_large_real_figures() -> None:
    """1e19 instructions (about 2^64, the widest counter) and a share of 1e25 % are far-fetched but within the
    limit: the launch is placed (the share then bounds it, as any busiest limit does)."""
    m = analyse_kernel(make_kernel({**_plain(), "smsp__inst_executed.sum": 1.8e19,
                                    "sm__throughput.avg.pct_of_peak_sustained_elapsed": 1e25}))
    assert m.usable and m.bound_by == "sm_throughput" and m.units["sm_throughput"].share == pytest.approx(1e23)
    assert FIGURE_LIMIT == 1e30


def test_launch_figures_within_the_limit_are_kept_on_an_unusable_launch() -> None:
    k = make_kernel({**_plain(), "dram__bytes.sum": (4.0e300, "byte"), "launch__grid_size": 640.0,
                     "launch__block_size": 128.0, "launch__registers_per_thread": 1e35})
    m = build_kernel_model(k)
    assert not m.usable
    assert m.launch["grid_blocks"] == 640.0 and m.launch["block_threads"] == 128.0
    assert m.launch.get("registers_per_thread") is None  # 1e35 is no register count


def _scaled(kernel: RawKernel, factor: float, pattern: re.Pattern[str]) -> RawKernel:
    metrics = {n: (m._replace(value=float(m.value) * factor) if m.is_number and pattern.search(n) else m)
               for n, m in kernel.metrics.items() if isinstance(m, Metric)}
    return RawKernel(kernel.index, kernel.name, kernel.demangled_name, metrics, device=kernel.device,
                     compute_capability=kernel.compute_capability, sm_count=kernel.sm_count,
                     grid_size=kernel.grid_size, block_size=kernel.block_size, nvtx_ranges=list(kernel.nvtx_ranges))


@needs_corpus
@pytest.mark.parametrize("name", SCALED)
@pytest.mark.parametrize(("factor", "which"), [(1e308, r"^(?!gpu__time)"), (1e300, r"\.sum$"),
                                               (1e-300, r"^gpu__time"), (1e300, r"pct")])
def test_a_scaled_export_gives_every_output_and_no_verdict_past_the_limit(
        tmp_path: Path, name: str, factor: float, which: str) -> None:
    kernels = [_scaled(k, factor, re.compile(which)) for k in read_report(REPORTS / name).kernels]
    path = write_ncu_csv(RawReport("scaled", "csv", kernels), tmp_path / "scaled.csv", autoscale=True)
    runner = CliRunner()
    for fmt in ("json", "html", "md", "csv"):
        out = tmp_path / f"out.{fmt}"
        result = runner.invoke(main, ["report", str(path), "-f", fmt, "-o", str(out), "--force"])
        assert result.exit_code == 0 and result.exception is None, (fmt, result.output)
        assert out.stat().st_size > 0
    doc = json.loads((tmp_path / "out.json").read_text())
    # Each scaling puts some figure of every report past the limit, or (1e-300 s) its duration under the floor
    reason = "shorter than one cycle of any GPU clock" if factor < 1 else "past anything a GPU counter measures"
    set_aside = [k for k in doc["reports"][0]["kernels"] if reason in (k["unusable_reason"] or "")]
    assert set_aside
    # the pages give the launch's own reason, not a generic one
    assert reason in (tmp_path / "out.md").read_text() and reason in (tmp_path / "out.html").read_text()
    for k in doc["reports"][0]["kernels"]:
        if k["usable"]:
            shares = [v for v in k["utilization"].values() if v is not None]
            assert all(abs(v) <= FIGURE_LIMIT for v in shares), k["name"]
        elif reason in (k["unusable_reason"] or ""):
            assert k["bound_by"] is None and k["utilization"] == {}
    for g in doc["reports"][0]["groups"]:
        total = g["duration_s"]["total"]
        assert total is None or math.isfinite(total)
        assert all(abs(v) <= FIGURE_LIMIT for v in g["utilization"].values() if v is not None), g["name"]


@needs_corpus
@pytest.mark.parametrize("name", CORPUS)
def test_no_real_report_has_a_figure_past_the_limit(name: str) -> None:
    """The limits never set a real launch aside: every corpus launch keeps its figures within them."""
    report = analyze(REPORTS / name).reports[0]
    for k in report.kernels:
        reason = k.q.unusable_reason or ""
        assert "past anything a GPU counter measures" not in reason, (name, k.raw.index)
        assert "shorter than one cycle of any GPU clock" not in reason, (name, k.raw.index)
