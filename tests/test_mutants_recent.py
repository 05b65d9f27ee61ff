"""Tests that kill the mutants a mutation run left alive in `model.ranges`, `views.kernel_numbers` and
`views.labels`: each checks a boundary or a branch against numbers computed by hand."""

from __future__ import annotations

import dataclasses
import math
from types import SimpleNamespace
from typing import Any

import pytest
from conftest import make_kernel
from test_model import base_metrics
from test_past_range import _plain

from ncu_roofline.api.kernel import AnalysedKernel, analyse_kernel
from ncu_roofline.model.ranges import FIGURE_LIMIT, magnitude, named_figures, past_range, too_short
from ncu_roofline.model.resolver import Value
from ncu_roofline.model.throughputs import UnitShare
from ncu_roofline.views.kernel_numbers import ROOF_BELOW_UNIT, quantity_rows, roof_unit_notes
from ncu_roofline.views.labels import (
    family,
    is_unit,
    long_label,
    regime_label,
    regime_text,
    roof_css,
    short_label,
)

# --- model.ranges -------------------------------------------------------------------------------------------------


def test_past_range_compares_magnitudes_and_the_limit_itself_is_within() -> None:
    """1e30 is the limit (not past it); -2e30 is past it by magnitude; NaN is never past; -inf is."""
    assert FIGURE_LIMIT == 1e30
    assert past_range([("at", 1e30, ""), ("neg_at", -1e30, "")]) is None
    assert past_range([("at", 1e30, ""), ("neg", -2e30, "f"), ("pos", 3e30, "")]) == ("neg", -2e30, "f")
    assert past_range([("nan", math.nan, ""), ("minus_inf", -math.inf, "g")]) == ("minus_inf", -math.inf, "g")
    assert past_range([]) is None


def test_a_negative_count_past_the_limit_sets_the_launch_aside() -> None:
    """-4e33 bytes from DRAM: |−4e33| > 1e30. The quick check sums magnitudes (a sum of signed figures would be
    about -4e33, under the limit) and the slow path names the figure by its magnitude."""
    m = analyse_kernel(make_kernel({**_plain(), "dram__bytes.sum": (-4.0e33, "byte")}))
    assert not m.usable
    assert (m.q.unusable_reason or "").startswith("traffic_bytes.dram is -4e+33 (dram__bytes.sum), past anything")


def _figures(m: AnalysedKernel) -> tuple[Any, ...]:
    return (m.q, m.peaks, m.tensor_peaks, m.utilization, m.units, m.launch, m.intensity, m.achieved_flop_per_s,
            m.attainable_flop_per_s)


def test_named_figures_and_their_magnitude_by_hand() -> None:
    """1 µs; FP32 2.5e6 FLOP, FP16 6e4, FP64 0; 6e5 B from DRAM; roofs 2 TB/s, FP64 7.5 and FP32 15 TFLOP/s; a grid
    of 640 × 128: DRAM at 30 %, FP32 at 1/6, FP64 at 0; 2.56e6 FLOP / 6e5 B = 4.27 FLOP/B, attainable 8.53e12,
    achieved 2.56e12 FLOP/s. Launch figures of None (not held) are no figure; a FLOP count of 0 is one."""
    m = analyse_kernel(make_kernel({**base_metrics(), "launch__grid_size": 640.0, "launch__block_size": 128.0}))
    found = named_figures(*_figures(m))
    expected = [("duration_s", 1e-6), ("work_flop.fp64", 0.0), ("work_flop.fp32", 2.5e6), ("work_flop.fp16", 6e4),
                ("traffic_bytes.dram", 6e5), ("peaks.dram", 2e12), ("peaks.fp64", 7.5e12), ("peaks.fp32", 1.5e13),
                ("launch.grid_blocks", 640.0), ("launch.block_threads", 128.0), ("utilization.dram", 0.3),
                ("utilization.fp64", 0.0), ("utilization.fp32", 1 / 6), ("intensity_flop_per_byte.dram", 2.56e6 / 6e5),
                ("attainable_flop_per_s.dram", 2e12 * 2.56e6 / 6e5), ("achieved_flop_per_s", 2.56e12)]
    assert [name for name, _, _ in found] == [name for name, _ in expected]
    assert [v for _, v, _ in found] == pytest.approx([v for _, v in expected], rel=1e-12)
    assert found[0][2] == "gpu__time_duration.sum" and found[-1][2] == ""
    assert magnitude(*_figures(m)) == pytest.approx(sum(v for _, v in expected), rel=1e-12)
    # no unit share here: a unit's share (not its id or label) is what the magnitude sums, by its magnitude
    share = UnitShare("lts__t_sectors", -1000.0, "L2 (tag sectors)", "memory", None, "r")
    with_unit = dataclasses.replace(m, units={"lts__t_sectors": share})
    assert magnitude(*_figures(with_unit)) - magnitude(*_figures(m)) == pytest.approx(1000.0, rel=1e-4)
    assert named_figures(*_figures(with_unit))[8] == ("utilization.lts__t_sectors", -1000.0, "r")


def test_too_short_is_strictly_between_zero_and_the_floor() -> None:
    """The floor 1e-12 s itself is a measurement; 0 and negative durations are no duration (another reason)."""
    assert too_short(Value(1e-12, "t")) is None
    assert too_short(Value(0.0, "t")) is None and too_short(Value(-1e-13, "t")) is None
    assert too_short(Value(9.99e-13, "t")) == (
        "duration_s is 9.99e-13 s (t), shorter than one cycle of any GPU clock (none reaches 1 THz; Nsight Compute "
        "times kernels in whole nanoseconds): the report was edited or damaged; re-export or re-profile it")


# --- views.kernel_numbers -------------------------------------------------------------------------------------------

L2_RECIPE = "lts__t_sectors_srcunit_tex.sum × 32"
L2_PEAK = "lts__t_sectors.sum.peak_sustained × lts__cycles_elapsed.avg.per_second"


def _unit(uid: str, share: float, label: str = "") -> UnitShare:
    return UnitShare(uid, share, label or uid, "memory", None, f"{uid} ÷ 100")


# Units at other levels, or of the level but not counting its traffic (a fill, tag look-ups, the L2-to-L1
# returns): each busier than any unit the notes may name, so a filter that let one through would pick it.
DISTRACTORS = {u.id: u for u in (
    _unit("lts__d_sectors_fill_device", 0.9), _unit("lts__t_tag_requests", 0.95), _unit("dram__bytes_read", 0.97),
    _unit("dram__cycles_active", 0.98), _unit("l1tex__m_xbar2l1tex_read_sectors", 0.99))}


def _with_points(points: dict[str, float | None], units: dict[str, UnitShare], *, peak: str | None = L2_PEAK,
                 measured: dict[str, Value | None] | None = None) -> AnalysedKernel:
    """The plain launch with its memory points, units, measured bytes and L2 peak recipe replaced."""
    k = analyse_kernel(make_kernel(_plain()))
    if measured is None:
        measured = {"dram": Value(4e6, "dram__bytes_read.sum"), "l2": Value(1e6, L2_RECIPE, note="the SMs' sectors"),
                    "l1": Value(2e6, "l1tex__t_bytes.sum")}
    q = dataclasses.replace(k.q, bytes=measured)
    provenance = {"peaks.l2": peak} if peak else {}
    util = {lv: p for lv, p in points.items() if p is not None}
    return dataclasses.replace(k, q=q, utilization=util, units=units, provenance=provenance)


def test_the_note_names_the_busiest_unit_counting_the_levels_traffic() -> None:
    """L2 point 25 %; L2's tag sectors at 50 % (2× the point, past 1.25×) beside its data sectors at 37.5 %:
    the tag sectors are named, the distractors are not; the peak read from lts__t_sectors is the unit's own."""
    units = {**DISTRACTORS, "lts__t_sectors": _unit("lts__t_sectors", 0.5, "L2 (tag sectors)"),
             "lts__d_sectors": _unit("lts__d_sectors", 0.375, "L2 (data sectors)")}
    assert roof_unit_notes(_with_points({"l2": 0.25}, units)) == [
        f"L2: the roof's point, 25 %, is {L2_RECIPE} (the SMs' sectors) over {L2_PEAK}; Nsight Compute's L2 (tag "
        "sectors) is at 50 % of its own peak (2× the point): the two count different traffic against one peak, "
        "and the verdict weighs both"]


def test_a_unit_with_another_peak_and_a_roof_without_one_say_different_peaks() -> None:
    """L2's data sectors (37.5 %, 1.5× a point of 25 %) beside a peak read from lts__t_sectors: different peaks;
    the same with no peak recipe at all (no "over ...")."""
    units = {"lts__d_sectors": _unit("lts__d_sectors", 0.375, "L2 (data sectors)")}
    tail = ("Nsight Compute's L2 (data sectors) is at 38 % of its own peak (1.5× the point): the two count different "
            "traffic against different peaks, and the verdict weighs both")
    assert roof_unit_notes(_with_points({"l2": 0.25}, units)) == [
        f"L2: the roof's point, 25 %, is {L2_RECIPE} (the SMs' sectors) over {L2_PEAK}; {tail}"]
    assert roof_unit_notes(_with_points({"l2": 0.25}, units, peak=None)) == [
        f"L2: the roof's point, 25 %, is {L2_RECIPE} (the SMs' sectors); {tail}"]


def test_a_unit_named_by_bytes_counts_its_levels_traffic() -> None:
    """DRAM point 25 %, DRAM's reads (a unit named by bytes, no sectors) at 50 %; DRAM's busy cycles at 98 %
    count no traffic; the measured bytes carry no note."""
    units = {u.id: u for u in (_unit("dram__bytes_read", 0.5, "DRAM (reads)"), _unit("dram__cycles_active", 0.98))}
    assert roof_unit_notes(_with_points({"dram": 0.25}, units, peak=None)) == [
        "DRAM: the roof's point, 25 %, is dram__bytes_read.sum; Nsight Compute's DRAM (reads) is at 50 % of its own "
        "peak (2× the point): the two count different traffic against different peaks, and the verdict weighs both"]


@pytest.mark.parametrize(("share", "noted"), [(0.3125, False), (0.3126, True), (0.3, False), (0.6, True)])
def test_a_unit_is_noted_only_past_one_and_a_quarter_times_the_point(share: float, noted: bool) -> None:
    """Point 25 %: the bound is 1.25 × 0.25 = 0.3125 exactly (binary fractions), itself not past it."""
    assert ROOF_BELOW_UNIT == 1.25
    units = {"lts__t_sectors": _unit("lts__t_sectors", share, "L2 (tag sectors)")}
    assert len(roof_unit_notes(_with_points({"l2": 0.25}, units))) == (1 if noted else 0)


@pytest.mark.parametrize("point", [0.0, -0.25, math.nan, None])
def test_no_note_without_a_positive_point(point: float | None) -> None:
    units = {"lts__t_sectors": _unit("lts__t_sectors", 0.5, "L2 (tag sectors)")}
    assert roof_unit_notes(_with_points({"l2": point}, units)) == []


def test_no_note_without_measured_bytes_or_without_a_unit_of_the_level() -> None:
    units = {"lts__t_sectors": _unit("lts__t_sectors", 0.5, "L2 (tag sectors)")}
    assert roof_unit_notes(_with_points({"l2": 0.25}, units, measured={"dram": None, "l2": None, "l1": None})) == []
    assert roof_unit_notes(_with_points({"l2": 0.25, "l1": 0.25}, DISTRACTORS)) == []  # none counts L2's or L1's


def test_quantity_rows_give_each_figure_its_definition_and_recipe() -> None:
    k = _with_points({"dram": 1.0}, {}, measured={"dram": Value(4e6, "dram__bytes.sum"), "l2": None,
                                                  "l1": Value(2.5e9, "l1tex__t_bytes.sum", definition="reads")})
    k = dataclasses.replace(k, provenance={"traffic_bytes.l1": "l1tex__t_bytes.sum"},
                            tensor_peaks={"int8": Value(2e15, "p"), "bf16": Value(1e15, "p")})
    rows = {r["quantity"]: (r["value"], r["recipe"]) for r in quantity_rows(k)}
    assert rows["DRAM bytes"] == ("4 MB", "") and rows["L2 bytes"] == ("n/a", "")
    assert rows["L1 bytes (reads)"] == ("2.5 GB", "l1tex__t_bytes.sum")
    assert [r["quantity"] for r in quantity_rows(k)][-2:] == ["Tensor roof bf16", "Tensor roof int8"]
    assert rows["Tensor roof int8"] == ("2 PFLOP/s", "") and rows["Duration"] == ("2 µs", "")


# --- views.labels ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("roof", "short", "long"), [
    (None, "none", "n/a"), ("", "none", "n/a"), ("none", "none", "n/a"),
    ("dram", "DRAM", "DRAM bandwidth"), ("fp32", "FP32", "FP32 compute"), ("tensor", "Tensor", "tensor cores"),
    ("lts__t_sectors", "L2 (tag sectors)", "L2 (tag sectors)"),  # a unit the tool knows: its label
    ("lts__made_up_sub_unit", "lts__made_up_sub_unit", "lts__made_up_sub_unit"),  # unknown sub-unit: its metric name
    ("weird", "WEIRD", "weird"),  # an unknown name that is no metric: upper-cased, as it is
])
def test_short_and_long_labels(roof: str | None, short: str, long: str) -> None:
    assert short_label(roof) == short
    assert long_label(roof) == long


def test_long_label_gives_the_default_for_no_roof_only() -> None:
    assert long_label(None, "no verdict") == "no verdict" and long_label("none", "-") == "-"
    assert long_label("l2", "-") == "L2 bandwidth"


@pytest.mark.parametrize(("limit", "fam", "css", "unit"), [
    (None, None, "b-none", False), ("", None, "b-none", False), ("none", None, "b-none", False),
    ("dram", "dram", "b-dram", False), ("fp16", "fp16", "b-fp16", False),
    ("lts__t_sectors", "l2", "b-l2", True), ("sm__pipe_fma_cycles_active", "fp32", "b-fp32", True),
    ("sm__issue_active", "other", "b-other", True),
])
def test_family_css_and_unit_of_a_limit(limit: str | None, fam: str | None, css: str, unit: bool) -> None:
    assert family(limit) == fam
    assert roof_css(limit) == css
    assert is_unit(limit) is unit


def _regime(regime: str | None, units: tuple[str, ...] = (), levels: tuple[str, ...] = ("dram",)) -> Any:
    """What `regime_text` reads of a model: its regime, its units and the levels with a point."""
    return SimpleNamespace(regime=regime, units=dict.fromkeys(units), utilization=dict.fromkeys(levels, 0.2))


@pytest.mark.parametrize(("k", "text"), [
    (_regime("latency"), "latency or an unmeasured limit"),  # DRAM alone: the busiest limit may be unmeasured
    (_regime("latency", units=("sm_throughput",)), "latency or an unmeasured limit"),  # SM without memory
    (_regime("latency", units=("sm_throughput", "memory_throughput")), "latency"),
    (_regime("latency", levels=("dram", "l2", "l1")), "latency"),  # a roof at every memory level
    (_regime("at_limit"), "at limit"), (_regime("too_little_work"), "too little work"),
    (_regime(None), "n/a"), (_regime(""), "n/a"), (_regime("odd"), "odd"),
])
def test_regime_text(k: Any, text: str) -> None:
    assert regime_text(k) == text
    if k.regime != "latency":
        assert regime_label(k.regime) == text
