"""The verdict's rules on hand-built kernels, each number computed by hand."""

from __future__ import annotations

import pytest
from conftest import CORPUS, make_kernel
from test_model import base_metrics

from ncu_roofline.api.analysis import ReportResult
from ncu_roofline.api.kernel import analyse_kernel
from ncu_roofline.knowledge.targets import Target, ncu_options, parse_compute_capability
from ncu_roofline.settings import AnalysisSettings

SM = "sm__throughput.avg.pct_of_peak_sustained_elapsed"
MEM = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"


def test_unit_throughputs_are_shares_on_the_elapsed_basis() -> None:
    m = base_metrics()  # DRAM roof at 30 %
    m[SM] = (87.0, "%")
    m[MEM] = (40.0, "%")
    m["sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_elapsed"] = (87.0, "%")
    m["breakdown:" + SM] = ("sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_elapsed,"
                            "sm__new_unit.avg.pct_of_peak_sustained_elapsed")
    m["sm__new_unit.avg.pct_of_peak_sustained_elapsed"] = (50.0, "%")
    m["l1tex__throughput.avg.pct_of_peak_sustained_active"] = (99.0, "%")  # active basis: never used
    k = analyse_kernel(make_kernel(m))
    assert k.units["sm_throughput"].share == pytest.approx(0.87)
    assert k.units["sm__new_unit"].share == pytest.approx(0.50)  # a sub-unit without a label keeps its name
    assert not any("l1tex__throughput" in u.recipe for u in k.units.values())
    # equal shares: the sub-unit names the limit, not the headline figure
    assert k.bound_by == "sm__inst_executed_pipe_lsu" and k.regime == "at_limit"
    assert k.limiter_share == pytest.approx(0.87) and not k.limiter_is_roof
    d = k.to_dict()
    assert d["utilization"]["sm__inst_executed_pipe_lsu"] == pytest.approx(0.87) and d["bound_kind"] == "unit"


def test_units_are_listed_once_per_report_and_a_launch_keeps_only_a_differing_recipe() -> None:
    new_form, old_form = base_metrics(), base_metrics()
    new_form[SM] = (87.0, "%")
    old_form["sm__sol_pct"] = (60.0, "%")  # the same unit under its 2019 name
    kernels = [analyse_kernel(make_kernel(m)) for m in (new_form, old_form, new_form)]
    doc = ReportResult("r.ncu-rep", "ncu-rep", None, kernels).to_dict()
    assert doc["units"]["sm_throughput"] == {"label": "SM (compute) throughput", "group": "compute", "parent": None,
                                             "recipe": f"{SM} ÷ 100"}  # the first launch's recipe
    assert [k["unit_recipes"] for k in doc["kernels"]] == [{}, {"sm_throughput": "sm__sol_pct ÷ 100"}, {}]
    assert [k["utilization"]["sm_throughput"] for k in doc["kernels"]] == pytest.approx([0.87, 0.60, 0.87])
    assert kernels[1].to_dict()["unit_recipes"] == {"sm_throughput": "sm__sol_pct ÷ 100"}  # alone: every recipe
    assert "unit_throughputs" not in doc["kernels"][0]


def test_a_roof_gives_way_only_to_a_clearly_busier_unit() -> None:
    m = base_metrics()  # DRAM roof: (5e11 * 1e-6 + 1e5) / 2e12 / 1e-6 = 0.3
    m["dram__cycles_active.avg.pct_of_peak_sustained_elapsed"] = (31.0, "%")  # same resource, 0.3 >= 0.95 * 0.31
    assert analyse_kernel(make_kernel(m)).bound_by == "dram"
    m["dram__cycles_active.avg.pct_of_peak_sustained_elapsed"] = (40.0, "%")
    assert analyse_kernel(make_kernel(m)).bound_by == "dram__cycles_active"


def test_tensor_pipe_share_is_read_on_the_elapsed_basis_only() -> None:
    m = base_metrics()
    m["sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"] = (40.0, "%")
    k = analyse_kernel(make_kernel(m))
    assert k.q.tensor_pipe_utilization is None  # the active basis reads 3-40x high: not used
    m["sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed"] = (10.0, "%")
    k = analyse_kernel(make_kernel(m))
    assert k.q.tensor_pipe_utilization.value == pytest.approx(0.10)


def test_duration_from_elapsed_cycles_and_clock() -> None:
    m = base_metrics()
    del m["gpu__time_duration.sum"]
    m["gpc__cycles_elapsed.max"] = (3000.0, "cycle")
    m["gpc__cycles_elapsed.avg.per_second"] = (1.5e9, "hz")
    k = analyse_kernel(make_kernel(m))
    assert k.q.duration_s.value == pytest.approx(2e-6)
    assert "duration_from_cycles" in k.flags and "gpc__cycles_elapsed.max ÷" in k.provenance["duration_s"]


def test_pascal_sol_figures() -> None:
    k = analyse_kernel(make_kernel({"gpu__time_duration": (1e6, ""), "sm__sol_pct": (72.5, ""),
                                    "fbpa__sol_pct": (10.0, ""), "ltc__sol_pct": (20.0, ""), "tex__sol_pct": (30.0, ""),
                                    "gpu__compute_memory_sol_pct": (30.0, "")}, compute_capability="6.1"))
    assert k.units["sm_throughput"].share == pytest.approx(0.725)
    assert k.units["dram_throughput"].share == pytest.approx(0.10)
    assert k.units["l1tex_throughput"].share == pytest.approx(0.30)
    assert k.bound_by == "sm_throughput" and k.regime == "at_limit"


@pytest.mark.parametrize(("waves", "sm", "regime"), [(None, 3.0, "too_little_work"), (0.5, 30.0, "too_little_work"),
                                                     (4.0, 30.0, "latency"), (0.5, 70.0, "at_limit")])
def test_regimes(waves: float | None, sm: float, regime: str) -> None:
    m = {"gpu__time_duration.sum": (1000.0, "ns"), SM: (sm, "%"), MEM: (2.0, "%")}
    if waves is not None:
        m["launch__waves_per_multiprocessor"] = (waves, "")
        m["launch__grid_size"] = (40.0, "")
    k = analyse_kernel(make_kernel(m, sm_count=80), AnalysisSettings(threshold=0.6))
    assert k.regime == regime
    if regime == "too_little_work":
        assert k.diagnosis[0].kind == "too_little_work" and k.diagnosis[0].limit == k.bound_by
    if waves == 0.5 and regime == "too_little_work":  # 40 blocks for 80 SMs: 40 SMs have nothing to run
        f = k.diagnosis[0]
        assert f.variant == "few_blocks"
        assert (f.figures["grid"], f.figures["sms"], f.figures["idle_sms"]) == (40, 80, 40)


def test_metrics_per_target() -> None:
    assert parse_compute_capability("sm_90") == "9.0" and parse_compute_capability("12.0") == "12.0"
    cc12 = ncu_options(Target("12.0"))
    assert "dram__bytes_op_read.sum" in cc12.metrics and "dram__bytes_read.sum" not in cc12.metrics
    old = ncu_options(Target("8.0", "2022.2"))
    assert not any("Hierarchical" in s for s in old.sections) and "SpeedOfLight_RooflineChart" in old.sections
    assert ncu_options(Target("6.1")).metrics == []  # Pascal: other names, sections only
    new = ncu_options(Target())
    assert "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed" in new.metrics


def test_tensor_work_known_only_as_a_pipe_share_is_drawn_as_an_upper_bound() -> None:
    from ncu_roofline.views.report import _points, tensor_upper_bound

    m = base_metrics()  # FP32 2.5e6 + FP16 6e4 FLOP in 1 µs; DRAM 6e5 bytes
    m["sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed"] = (40.0, "%")
    # measured tensor roofs from a peaks file: a dense one and a sparse one (never used as the bound)
    from ncu_roofline.knowledge.peaks_file import PeakSet, UserPeaks

    peaks = UserPeaks("peaks.json", PeakSet(tensor={"src_fp16_dst_fp32_sparsity_off": 1.5e12,
                                                    "src_fp16_dst_fp32_sparsity_on": 3e12}), {})
    k = analyse_kernel(make_kernel(m), AnalysisSettings(peaks=peaks))
    assert "flop_incomplete" in k.flags and k.achieved_flop_per_s is None
    dense = 1.5e12
    expected = 2.5e6 + 6e4 + 0.40 * dense * 1e-6
    assert tensor_upper_bound(k) == pytest.approx(expected)
    (point,) = _points("k0", k, "k")
    assert point["upper_bound"] and point["intensity"] == pytest.approx(expected / 6e5)
    assert point["flop_per_s"] == pytest.approx(expected / 1e-6) and "upper bound" in point["note"]


def _tail(waves: float, grid: float | None = None, sms: float = 100.0, theoretical: float | None = None,
          achieved: float | None = None, share: float = 0.5, name: str = "k(float*)",
          seconds: float | None = 1e-3) -> list:
    from types import SimpleNamespace

    from ncu_roofline.passes.tail import tail_effect

    launch = {"waves_per_sm": waves, "grid_blocks": grid, "sm_count": sms, "theoretical_occupancy": theoretical,
              "achieved_occupancy": achieved}
    m = SimpleNamespace(launch=launch, limiter_share=share, bound_by="dram", units={},
                        raw=SimpleNamespace(name=name, demangled_name=name),
                        q=SimpleNamespace(duration_s=None if seconds is None else SimpleNamespace(value=seconds)))
    return tail_effect(m)


def test_tail_effect_edges() -> None:
    """Whole waves up to rounding leave no block over: no finding. A last wave of 4 of 1,000 blocks is a
    real tail: 3 wave-times for 2.004 waves, up to 1.5x. Achieved occupancy at the theoretical one says
    the last wave cost nothing measurable: no finding. One block per SM: the last wave's SMs are as full
    as the others, occupancy cannot tell, equal block times stand."""
    assert _tail(2.0000001, grid=2000.0) == [] and _tail(1.0000001) == [] and _tail(3.0, grid=300.0) == []
    (f,) = _tail(2.004, grid=2004.0)
    assert f.speedup == pytest.approx(3 / 2.004) and (f.variant, f.basis) == ("uniform", ("uniform_waves",))
    # the last wave holds about 4 of its 1,000 blocks (0.4 % full)
    assert f.figures["per_wave"] == pytest.approx(1000) and f.figures["last_small"] == pytest.approx(0.004)
    assert f.figures["last"] is None and "0.4 % full" in f.words().headline  # under 1 %: one decimal
    assert f.figures["last_small"] * f.figures["per_wave"] == pytest.approx(4) and f.figures["whole"] == 3
    assert _tail(1.5, grid=300.0, sms=100.0, theoretical=1.0, achieved=1.0) == []  # 2 blocks per SM
    (g,) = _tail(1.5, grid=300.0, sms=100.0, theoretical=1.0, achieved=0.8)
    t = 0.2 / (0.2 + 1.0 * (0.8 - 0.5))  # the last wave: 100 blocks, one on each SM of 2: occupancy 0.5
    assert g.speedup == pytest.approx(1 / ((1 - t) * 1.5)) and t == pytest.approx(0.4)
    assert (g.variant, g.basis) == ("occupancy", ("measured_waves",)) and g.figures["tail_share"] == pytest.approx(t)
    (h,) = _tail(1.5, grid=150.0, sms=100.0, theoretical=1.0, achieved=0.99)  # 1 block per SM
    assert h.speedup == pytest.approx(2 / 1.5) and (h.variant, h.basis) == ("uniform", ("uniform_waves",))
    # Achieved at or under the last wave's 0.5 rules out equal block times: no bound, the occupancies instead
    # (but in blocks of 20 µs or less, where launching and ramping up may keep the occupancy down).
    for achieved in (0.5, 0.3):
        (u,) = _tail(1.5, grid=300.0, sms=100.0, theoretical=1.0, achieved=achieved)
        assert (u.variant, u.speedup, u.basis, u.lever) == ("uneven", None, ("uneven_blocks",), "even_work")
        assert (u.figures["achieved"], u.figures["tail_occupancy"]) == (achieved, pytest.approx(0.5))
    for seconds in (40e-6, None):
        (e,) = _tail(1.5, grid=300.0, sms=100.0, theoretical=1.0, achieved=0.3, seconds=seconds)
        assert (e.variant, e.speedup) == ("uniform", pytest.approx(2 / 1.5))
    assert _tail(1.5, grid=300.0, sms=100.0, theoretical=1.0, achieved=0.3, seconds=41e-6)[0].variant == "uneven"
    (c,) = _tail(1.5, grid=150.0, share=0.8)
    assert c.speedup == pytest.approx(1 / 0.8) and c.basis == ("uniform_waves", "capped_busiest")
    assert c.figures["top_x"] == pytest.approx(1 / 0.8) and c.figures["top_label"] == "DRAM"


def test_tail_effect_library_kernels_by_their_own_name_only() -> None:
    """The grid is a library's choice only for the library's own kernel, not for a kernel that takes a
    library type as an argument or template parameter."""
    lib = "void cub::CUB_200200_800_NS::DeviceRadixSortOnesweepKernel<cub::Policy>(float*)"
    f = _tail(1.5, grid=150.0, name=lib)[0]
    assert (f.lever, f.figures["library"]) == ("library_grid", "CUB") and "CUB's choice" in f.words().next_step
    for name in ("void my_fft(thrust::complex<float> *, int)", "void reduce_kernel<cub::Sum>(float*)",
                 "void k(at::cuda::detail::TensorInfo<float, unsigned int>, int)"):
        f = _tail(1.5, grid=150.0, name=name)[0]
        assert (f.lever, f.figures["library"]) == ("whole_waves", None), name
    torch = "void at::native::(anonymous namespace)::distribution_elementwise_grid_stride_kernel<float, 4>(int)"
    assert _tail(1.5, grid=150.0, name=torch)[0].figures["library"] == "PyTorch"


def test_a_memory_fix_stops_at_the_lsu_requests_it_leaves() -> None:
    """Coalescing, sector use and bank conflicts change sectors and wavefronts per request, not the
    requests themselves (one per warp instruction): L1's LSU requests bound them like the compute side."""
    from types import SimpleNamespace

    from ncu_roofline.model.throughputs import UnitShare
    from ncu_roofline.passes.diagnosis import _other_side

    def unit(uid: str, share: float, group: str, label: str) -> UnitShare:
        return UnitShare(uid, share, label, group, "sm_throughput" if group == "compute" else "memory_throughput", "")

    units = {"sm__pipe_fma_cycles_active": unit("sm__pipe_fma_cycles_active", 0.3, "compute", "FMA pipe"),
             "l1tex__lsuin_requests": unit("l1tex__lsuin_requests", 0.7, "memory", "L1/TEX (LSU requests)")}
    m = SimpleNamespace(units=units, utilization={})
    for kind in ("coalescing", "sector_use", "bank_conflicts"):
        assert _other_side(m, kind) == (0.7, "L1/TEX (LSU requests)")
    assert _other_side(m, "fma_balance") == (0.7, "L1/TEX (LSU requests)")  # the memory side's busiest, as before
    units["l1tex__lsuin_requests"] = unit("l1tex__lsuin_requests", 0.2, "memory", "L1/TEX (LSU requests)")
    assert _other_side(m, "coalescing") == (0.3, "FMA pipe")  # the busier compute side bounds it


@pytest.mark.skipif(not (CORPUS / "esmm-research__profile_output.ncu-rep").is_file(), reason="corpus absent")
def test_too_little_work_bounds_the_idle_sms_of_a_long_kernel_only() -> None:
    """esmm's warptiling: 64 blocks on 80 SMs for 222 µs, 0.4 waves (registers let an SM hold 2 blocks): the same
    work split over the 160 blocks the GPU runs at once is up to 160 / 64 = 2.5x faster (never past the busiest
    limit's headroom): SMs ÷ blocks (1.25x) would leave out the second block an SM can hold. simpleDivergence's
    3 µs kernels (1 block each on 128 SMs) get no bound: their launch overhead is much of their time, which the
    action says instead."""
    import ncu_roofline

    a = ncu_roofline.analyze(CORPUS / "esmm-research__profile_output.ncu-rep")
    (k,) = [k for k in a.reports[0].kernels if k.raw.name == "warptiling"]
    (f,) = [f for f in k.diagnosis if f.kind == "too_little_work"]
    assert (k.launch["grid_blocks"], k.launch["sm_count"]) == (64.0, 80.0) and k.q.duration_s.value > 20e-6
    waves, share = k.launch["waves_per_sm"], k.limiter_share
    assert waves == pytest.approx(0.4) and k.launch["occupancy_limit_registers"] == 2.0
    assert f.speedup == pytest.approx(min(2.5, 1 / share)) and f.speedup > 80 / 64
    # blocks the GPU runs at once ÷ blocks = 160 / 64 (1 / 0.4 waves): split the same work into at least 160 blocks
    assert f.basis == ("spread",) and f.lever == "split" and f.figures["busiest"] == share
    assert f.figures["held"] == pytest.approx(160) and f.figures["grid"] == 64
    b = ncu_roofline.analyze(CORPUS / "cudaprogramming__simpleDivergence.ncu-rep")
    for k in b.reports[0].kernels:
        (f,) = [f for f in k.diagnosis if f.kind == "too_little_work"]
        assert k.q.duration_s.value < 20e-6 and k.launch["grid_blocks"] < k.launch["sm_count"]
        # launch overhead is much of the cost: under 20 µs, spreading its blocks over more SMs bounds nothing
        assert f.speedup is None and f.lever == "tiny" and f.basis == ("more_work", "tiny")
        assert f.figures["duration_us"] == pytest.approx(k.q.duration_s.value * 1e6)
    # A short launch with a busy limit (real work) on a third of the SMs: filling them comes first.
    c = ncu_roofline.analyze(CORPUS / "cutlass__report-s8.ncu-rep")
    (k,) = [k for k in c.reports[0].kernels if k.launch["grid_blocks"] == 36.0]
    (f,) = [f for f in k.diagnosis if f.kind == "too_little_work"]
    assert k.q.duration_s.value < 20e-6 and f.variant == "few_blocks" and f.lever == "tiny_idle"
    assert f.words().next_step == ("Fill the 72 idle SMs: split the work into at least 108 blocks, or batch it with "
                                   "its neighbours.")


@pytest.mark.parametrize(("achieved", "theoretical", "variant", "lever"), [
    (0.86, 1.0, "full", "in_flight"),  # distanceCalculationsKernel: the SMs nearly full of warps: not more warps
    (0.79, 1.0, "full", "in_flight"),  # rms_norm: four fifths of the warp slots filled (its tail takes the rest)
    (0.74, 1.0, "fewer_warps", "more_warps"),  # a quarter of the warp slots empty
    (0.57, 0.75, "fewer_warps", "more_warps"),  # 76 % of what the launch allows
    (0.7, 0.75, "at_allowed", "occupancy"),  # 93 % of a theoretical 75 %: the launch's limit caps the warps: raise it
    (0.11, 0.125, "at_allowed", "occupancy"),  # searchKernelCOSStree: what the launch allows, low
    (0.62, 1.0, "fewer_warps", "more_warps"),  # nodeByPoint5: warps missing
    (0.5, None, "occupancy_unknown", "more_warps"),  # no theoretical figure: more independent work per SM
])
def test_the_latency_lever_follows_the_measured_occupancy(achieved, theoretical, variant, lever) -> None:
    from ncu_roofline.passes.latency import latency_case

    got, step, figures = latency_case({"achieved_occupancy": achieved, "theoretical_occupancy": theoretical})
    assert (got, step) == (variant, lever)
    assert figures["achieved"] == achieved and figures["theoretical"] == theoretical and "idle" not in figures
    assert latency_case({}) == ("occupancy_unknown", "more_warps", {"achieved": None, "theoretical": None})


@pytest.mark.parametrize(("waves", "lever"), [
    (4.49, "in_flight"),  # monte-carlo initRNG: 1,220 blocks on 272 slots; 28 % of a theoretical 33 %
    (2.0, "in_flight"),
    (1.5, "more_warps"),  # computeValue: half the slots of the second wave empty; more blocks fill them
    (None, "more_warps"),
])
def test_warps_short_of_the_launch_on_a_grid_of_many_waves_want_work_in_flight(waves, lever) -> None:
    from ncu_roofline.passes.latency import latency_case

    got = latency_case({"achieved_occupancy": 0.281, "theoretical_occupancy": 1 / 3, "waves_per_sm": waves})
    assert got[:2] == ("fewer_warps", lever)


@pytest.mark.parametrize(("limits", "what", "blocks", "lever"), [
    # searchKernelCOSStree: 145 registers per thread leave room for 1 block of 256 threads (8 of 64 warps)
    ({"registers": 1, "shared_mem": 164, "blocks": 32, "warps": 8}, "registers", 1, "registers"),
    # nodeCalculationsKernel: 32-thread blocks, at most 32 blocks per SM (32 of 64 warps): larger blocks
    ({"registers": 40, "shared_mem": 164, "blocks": 32, "warps": 64}, "the blocks-per-SM limit", 32, "block_limit"),
    # registers and shared memory both allow 4 blocks: fewer registers alone leave the shared memory's 4
    ({"registers": 4, "shared_mem": 4, "blocks": 32, "warps": 8}, "registers and shared memory", 4, "registers"),
])
def test_the_occupancy_limiter_nsight_compute_measured_is_named(limits: dict, what: str, blocks: int,
                                                                lever: str) -> None:
    """Where the launch allows no more warps than run, the resource that allows the fewest blocks per SM
    (Nsight Compute's launch__occupancy_limit_*) is named with its lever; every resource where several tie."""
    from ncu_roofline.passes.latency import latency_case, occupancy_limiter

    launch = {"achieved_occupancy": 0.11, "theoretical_occupancy": 0.125, "registers_per_thread": 145.0,
              "block_threads": 256.0} | {f"occupancy_limit_{k}": float(v) for k, v in limits.items()}
    variant, step, figures = latency_case(launch)
    binding = occupancy_limiter(launch)
    assert (variant, step) == ("at_allowed", lever) and binding is not None and binding[0][0] == lever
    assert binding[1] == blocks and len(binding[0]) == what.count(" and ") + 1
    assert figures["occ_blocks"] == blocks and figures["regs"] == 145.0 and figures["occ_by"] == what


def test_idle_sms_come_before_stalls_within_warps() -> None:
    """rms_norm_vector_kernel_float4: SM active cycles 63 % of the elapsed, achieved occupancy 79 % (of the active
    cycles): with the SMs 37 % idle, the latency is named as idle SMs, not as stalls within full warps. At 85 %
    active (15 % idle) the occupancy's words stay."""
    from ncu_roofline.passes.latency import latency_case

    launch = {"achieved_occupancy": 0.79, "theoretical_occupancy": 1.0, "sm_active_share": 0.63}
    variant, lever, figures = latency_case(launch)
    # the SMs had no warp to run 37 % of the time: idle SMs before stalls within warps; give every SM work
    assert (variant, lever) == ("idle", "idle") and figures["idle"] == pytest.approx(0.37)
    # and the occupancy of the active cycles beside it (they count active cycles only)
    assert figures["achieved"] == 0.79 and figures["theoretical"] == 1.0
    # 15 % idle: the occupancy's case stands, stalls and dependencies within each warp, not too few warps
    assert latency_case({**launch, "sm_active_share": 0.85})[:2] == ("full", "in_flight")


def test_the_latency_bound_leaves_the_tail_effect_its_part() -> None:
    """Latency headroom 1 / 0.39 = 2.57x, of which a partial last wave is up to 1.19x: both are upper bounds (the
    tail's on an upper estimate of its share of the run), so the latency keeps the whole 2.57x and says the tail's
    part is within it, never more on top."""
    from ncu_roofline.passes.finding import Finding, Kind
    from ncu_roofline.passes.tail import apart_from_tail

    latency = Finding(Kind.LATENCY, "full", "l2", None, "l2", 1 / 0.39, "in_flight", ("peak_over_share",),
                      {"label": "L2", "share": 0.39, "achieved": 0.8, "theoretical": 1.0})
    tail = Finding(Kind.TAIL_EFFECT, "uniform", "l2", None, "l2", 1.19, "whole_waves", ("uniform_waves",))
    found = [latency]
    apart_from_tail(found, [tail])
    (kept,) = found
    assert kept.speedup == pytest.approx(1 / 0.39) and kept.kind == "latency"
    # part of it may be the partial last wave: the tail-effect finding's ≤1.19× is part of it, not more on top
    assert kept.basis == ("peak_over_share", "tail_within") and kept.figures["tail_bound"] == 1.19
    assert kept.figures["tail_part"] is not None
    alone = Finding(Kind.LATENCY, "full", "l2", None, "l2", 2.0, "in_flight", ("peak_over_share",))
    found = [alone]
    apart_from_tail(found, [])
    assert found[0] is alone and alone.speedup == 2.0 and "tail_bound" not in alone.figures


@pytest.mark.parametrize(("name", "library"), [
    ("volta_sgemm_32x128_nn", "cuBLAS"),
    ("sm80_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x32_stage4_warpsize2x2x1_tensor16x8x16_kernel", "cuBLAS"),
    ("ampere_h16816gemm_256x128_ldg8_stages_32x3_nn", "cuBLAS"),
    ("void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 4, 4, false, false>(float)", "cuBLAS"),
    ("void cutlass::Kernel2<cutlass_80_wmma_tensorop_i161616gemm_s8_forwardCompat_128x128_32x2_tn_align4>(T1::Params)",
     "cuBLAS"),
    ("nvjet_hsh_64x32_64x16_2x1_v_bz_coopA_NTN", "cuBLAS"),
    ("void splitKreduce_kernel<32, 16, int, float, float, float, float, true, false>(cublasSplitKParams<float>)",
     "cuBLAS"),
    ("cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4", "cuBLAS"),
    ("sm86_xmma_fprop_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc_tilesize128x64x32_cudnn", "cuDNN"),
    ("sm80_xmma_fprop_implicit_gemm_indexed_f16f16_f16f32_f32_nhwckrsc_nchw_tilesize128x128x32_stage4", "cuDNN"),
    # CUTLASS templates of the user's own build, and kernels that only look alike, stay the user's
    ("void cutlass::Kernel<cutlass::gemm::kernel::Gemm<cutlass::gemm::threadblock::MmaPipelined<>>>(Params)", None),
    ("volta_fft_kernel(float *)", None),
    ("my_sgemm_kernel(float *, int)", None),
    ("sm90_gemm_user_kernel(float *)", None),
    ("sm75_mygemm_kernel(float *)", None),
    ("hopper_like_gemm_mine(float *)", None),
    ("ada_gemm_fused_bias(float *)", None),
    ("void ampere_gemm_tile<128>(float *)", None),
    ("void my_kernel<cudnnTensorStruct>(float *)", None),  # takes a cuDNN type: still the user's
    ("void cub::CUB_200200_800_NS::DeviceRadixSortOnesweepKernel<cub::Policy>(float*)", "CUB"),
])
def test_library_kernels_by_name(name: str, library: str | None) -> None:
    from types import SimpleNamespace

    from ncu_roofline.passes.libraries import library_of

    assert library_of(SimpleNamespace(raw=SimpleNamespace(name=name, demangled_name=name))) == library


def test_the_idle_sms_bound_stops_at_the_busiest_limits_headroom() -> None:
    """10 blocks on 100 SMs for 100 µs: spreading them would be 10x at the busy SMs' pace, but DRAM at 50 %
    can give at most 2x."""
    from types import SimpleNamespace

    from ncu_roofline.passes.too_little_work import too_little_work as _too_little_work

    def kernel(share: float, seconds: float | None) -> SimpleNamespace:
        duration = None if seconds is None else SimpleNamespace(value=seconds)
        return SimpleNamespace(q=SimpleNamespace(duration_s=duration), units={},
                               launch={"grid_blocks": 10.0, "sm_count": 100.0, "waves_per_sm": 0.1},
                               limiter_share=share, bound_by="dram")

    f = _too_little_work(kernel(0.5, 100e-6))
    assert f.speedup == pytest.approx(2.0) and f.speedup == pytest.approx(1 / f.figures["busiest"])  # headroom 1 / 0.5
    # blocks the GPU runs at once ÷ blocks = 100 / 10 (1 / 0.1 waves)
    assert f.basis == ("spread", "capped_busiest")
    assert (f.figures["held"], f.figures["grid"]) == (pytest.approx(100), 10)
    assert f.figures["top_x"] == pytest.approx(2.0)  # capped at the busiest limit's headroom, and says so
    assert _too_little_work(kernel(0.05, 100e-6)).speedup == pytest.approx(10.0)
    unknown = _too_little_work(kernel(0.05, None))  # no duration: not known to be long, nor short
    assert unknown.speedup is None and unknown.lever == "more" and "tiny" not in unknown.basis
    g = _too_little_work(kernel(0.004, 100e-6))  # 1 / 0.1 waves, under the busiest limit's 1 / 0.004
    assert g.speedup == pytest.approx(10.0) and g.figures["busiest"] == 0.004


def test_the_under_one_wave_bound_counts_every_block_an_sm_holds() -> None:
    """120 blocks on 100 SMs that hold 3 blocks each (0.4 waves): no SM is idle, yet 300 blocks run at once, so
    the same work split over them is up to 2.5x faster. Without the waves in the report there is no bound (how
    many blocks an SM holds is unknown), said in the note."""
    from types import SimpleNamespace

    from ncu_roofline.passes.too_little_work import too_little_work as _too_little_work

    def kernel(waves: float | None) -> SimpleNamespace:
        launch = {"grid_blocks": 120.0 if waves else 60.0, "sm_count": 100.0, "waves_per_sm": waves}
        return SimpleNamespace(q=SimpleNamespace(duration_s=SimpleNamespace(value=1e-3)), launch=launch, units={},
                               limiter_share=0.1, bound_by="dram")

    f = _too_little_work(kernel(0.4))
    # split the same work into at least 300 blocks: blocks the GPU runs at once ÷ blocks = 300 / 120 (1 / 0.4 waves)
    assert f.speedup == pytest.approx(2.5) and f.lever == "split" and f.basis == ("spread",)
    assert (f.figures["held"], f.figures["grid"]) == (pytest.approx(300), 120) and f.variant == "under_wave"
    unknown = _too_little_work(kernel(None))  # 60 blocks on 100 SMs, waves not collected
    assert unknown.speedup is None
    # the report does not hold launch__waves_per_multiprocessor, so spreading its blocks has no bound either
    assert unknown.basis == ("more_work", "no_waves_figure") and unknown.lever == "more"


@pytest.mark.parametrize(("grid", "duration_us", "lever"), [
    (36.0, 8.51, "tiny_idle"),  # cutlass s8's GEMM: a third of the SMs, a limit at 7 %
    (36.0, 3.0, "tiny"),  # a launch of a few microseconds: its overhead, not its spread, is the cost
    (1.0, 8.51, "tiny"),  # one block (a reduction's last pass): nothing to split
    (36.0, 30.0, "split"),  # not short: the spread is bounded
])
def test_a_short_launch_on_few_blocks_is_told_to_fill_the_sms_only_with_work_to_spread(
        grid: float, duration_us: float, lever: str) -> None:
    from types import SimpleNamespace

    from ncu_roofline.passes.too_little_work import too_little_work

    m = SimpleNamespace(q=SimpleNamespace(duration_s=SimpleNamespace(value=duration_us * 1e-6)),
                        launch={"grid_blocks": grid, "sm_count": 108.0, "waves_per_sm": grid / 432},
                        limiter_share=0.07, bound_by="l2_throughput", units={})
    assert too_little_work(m).lever == lever  # type: ignore[arg-type]
