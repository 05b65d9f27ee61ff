"""A cache level never counts fewer bytes than the level below it (so no intensity claims more reuse than the
memory hierarchy allows): hand-built kernels with hand-computed bytes, and an invariant over every corpus kernel."""

from __future__ import annotations

from functools import cache

import pytest
from conftest import CORPUS, corpus_files, make_kernel

import ncu_roofline
from ncu_roofline.api.kernel import AnalysedKernel
from ncu_roofline.model.quantities import compute_quantities

needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"shared report corpus not found at {CORPUS}")
SLACK = 0.99  # two levels' counters come from different replay passes


def store_only(**extra: float | tuple[float, str]) -> dict:
    """A 1 ms fill: DRAM writes 1e8 B and reads 2e4; L2 returns 1e5 B to the SMs (the chart's bytes, reads
    only); L2's tags see 4e6 sectors (1.28e8 B); L1 writes back 2e5 B of loads."""
    metrics: dict = {
        "gpu__time_duration.sum": (1e6, "ns"),
        "dram__bytes_read.sum": (2e4, "byte"), "dram__bytes_write.sum": (1e8, "byte"),
        "dram__bytes.sum.peak_sustained": (1000.0, "byte/cycle"), "dram__cycles_elapsed.avg.per_second": (2e9, "hz"),
        "derived__lts__lts2xbar_bytes.sum": (1e5, "byte"),
        "derived__lts__lts2xbar_bytes.sum.peak_sustained": (5000.0, "byte/cycle"),
        "lts__cycles_elapsed.avg.per_second": (1.5e9, "hz"),
        "lts__t_sectors.sum": (4e6, "sector"), "lts__t_sectors.sum.pct_of_peak_sustained_elapsed": (2.0, "%"),
        "derived__l1tex__lsu_writeback_bytes_mem_lgds.sum": (2e5, "byte"),
        "derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.peak_sustained": (16000.0, "byte/cycle"),
        "l1tex__cycles_elapsed.avg.per_second": (1.5e9, "hz"),
    }
    metrics.update(extra)
    return metrics


def test_l2_takes_all_tag_traffic_where_the_chart_bytes_are_fewer_than_dram() -> None:
    q = compute_quantities(make_kernel(store_only()))
    assert q.bytes["dram"].value == pytest.approx(1.0002e8)
    l2 = q.bytes["l2"]
    assert l2.definition == "tags" and l2.value == pytest.approx(32 * 4e6) and l2.recipe == "32 × lts__t_sectors.sum"
    assert "in place of the chart definition, which counts fewer bytes than DRAM moved" in l2.note
    # the roof of the same definition: 1.28e8 B in 1 ms at 2 % of the peak
    assert q.peaks["l2"].definition == "tags" and q.peaks["l2"].value == pytest.approx(1.28e8 / 1e-3 / 0.02)
    # L1's write-back of loads (2e5 B) is fewer than L2's 1.28e8 B, and no L1 count of all traffic is held
    assert q.bytes["l1"] is None
    (gone,) = [m for m in q.missing if m.quantity == "traffic_bytes.l1"]
    assert "fewer than the bytes L2 moved" in gone.reason and "more reuse" in gone.reason
    assert gone.collect_with.startswith("--metrics l1tex__t_bytes.sum")


def test_the_intensity_at_l2_is_never_above_dram_and_the_chart_definition_stays_where_it_holds() -> None:
    flop = {"smsp__sass_thread_inst_executed_op_fadd_pred_on.sum": (1e6, "inst"),
            "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum": (0.0, "inst"),
            "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": (0.0, "inst")}
    from ncu_roofline.api.kernel import analyse_kernel

    m = analyse_kernel(make_kernel(store_only(**flop)))
    assert m.intensity["dram"] == pytest.approx(1e6 / 1.0002e8) and m.intensity["l2"] == pytest.approx(1e6 / 1.28e8)
    assert m.intensity["l1"] is None and "l1" not in m.utilization
    # a kernel that reads what it moves keeps the chart's bytes: 1.2e8 B returned to the SMs
    reads = compute_quantities(make_kernel(store_only(**{"derived__lts__lts2xbar_bytes.sum": (1.2e8, "byte"),
                                                          "derived__l1tex__lsu_writeback_bytes_mem_lgds.sum":
                                                          (1.3e8, "byte")})))
    assert reads.bytes["l2"].definition == "chart" and reads.bytes["l2"].value == 1.2e8
    assert reads.bytes["l1"].definition == "chart" and "in place of" not in reads.bytes["l1"].note
    # within 1 % of the level below is the same traffic (counters from different passes)
    near = compute_quantities(make_kernel(store_only(**{"derived__lts__lts2xbar_bytes.sum": (0.995e8, "byte")})))
    assert near.bytes["l2"].definition == "chart"


def test_l2_tags_are_the_sms_own_traffic_without_the_l2_fabrics_second_count() -> None:
    """On an A100 or H100 (two L2 partitions) lts__t_sectors counts a line crossing between them twice (from the
    SMs and from the L2 fabric): the SMs' own sectors are the L2 tag traffic; where they alone fall short of
    DRAM, every tag lookup is taken."""
    split = {"lts__t_sectors.sum": (4e6, "sector"), "lts__t_sectors_srcunit_tex.sum": (3.2e6, "sector")}
    q = compute_quantities(make_kernel(store_only(**split)))
    assert q.bytes["l2"].value == pytest.approx(32 * 3.2e6) and "srcunit_tex" in q.bytes["l2"].recipe
    short = compute_quantities(make_kernel(store_only(**split | {"lts__t_sectors_srcunit_tex.sum": (3e6, "sector")})))
    assert short.bytes["l2"].value == pytest.approx(32 * 4e6) and short.bytes["l2"].recipe == "32 × lts__t_sectors.sum"


def test_the_tags_definition_tries_every_tag_count_before_leaving_a_level_empty() -> None:
    """Asked for tag traffic (--bytes-definition tags), L2 reads the SMs' own sectors first; where they fall short
    of DRAM, all of lts__t_sectors is tried before the level is left without bytes."""
    split = {"lts__t_sectors.sum": (4e6, "sector"), "lts__t_sectors_srcunit_tex.sum": (3e6, "sector")}
    q = compute_quantities(make_kernel(store_only(**split)), prefer_definition="tags")
    assert q.bytes["l2"] is not None and q.bytes["l2"].recipe == "32 × lts__t_sectors.sum"
    assert "in place of 32 × lts__t_sectors_srcunit_tex.sum, which counts fewer bytes" in q.bytes["l2"].note


@needs_corpus
def test_a100_silu_l2_bytes_count_the_sms_traffic_once() -> None:
    """silu on an A100: 16,777,216 sectors from the SMs and 16,427,643 from the L2 fabric; DRAM moved 524 MB."""
    k = _kernels("cs599k__2025-04-21-77_06-MT.ncu-rep")[0]
    assert k.q.bytes["l2"].value == 32 * 16_777_216
    assert k.intensity["l2"] == pytest.approx(k.intensity["dram"] * k.q.bytes["dram"].value / (32 * 16_777_216))


def test_no_l2_bytes_where_every_definition_is_fewer_than_dram() -> None:
    """A T4 matrix addition: DRAM over-fetches (13.8 MB) past L2's 12.1 MB of tag traffic."""
    q = compute_quantities(make_kernel(store_only(**{"lts__t_sectors.sum": (3e6, "sector")})))
    assert q.bytes["l2"] is None
    (gone,) = [m for m in q.missing if m.quantity == "traffic_bytes.l2"]
    assert "chart: " in gone.reason and "tags: " in gone.reason and " MB" not in gone.reason
    assert "fewer than the bytes DRAM moved" in gone.reason
    assert gone.collect_with.startswith("nothing more to collect")
    # L1 is then held against DRAM: 2e5 B of write-back is fewer
    assert q.bytes["l1"] is None and any("DRAM moved" in m.reason for m in q.missing
                                         if m.quantity == "traffic_bytes.l1")


def test_copies_into_shared_memory_keep_l1_write_back_below_l2() -> None:
    """cp.async bypasses the LSU write-back: L1 rightly counts fewer bytes than L2 sends, and says why."""
    q = compute_quantities(make_kernel(store_only(**{"smsp__inst_executed_op_ldgsts.sum": (4096.0, "inst")})))
    l1 = q.bytes["l1"]
    assert l1 is not None and l1.value == 2e5 and "cp.async or TMA" in l1.note
    assert not any(m.quantity == "traffic_bytes.l1" for m in q.missing)


def test_l1_takes_all_tag_traffic_where_the_report_holds_it() -> None:
    q = compute_quantities(make_kernel(store_only(**{"l1tex__t_bytes.sum": (2e8, "byte"),
                                                     "l1tex__t_bytes.sum.peak_sustained": (16000.0, "byte/cycle")})))
    assert q.bytes["l1"].definition == "tags" and q.bytes["l1"].value == 2e8
    assert q.peaks["l1"].recipe.startswith("l1tex__t_bytes.sum.peak_sustained")


@cache
def _kernels(name: str) -> list[AnalysedKernel]:
    return [k for r in ncu_roofline.analyze(CORPUS / name).reports for k in r.kernels if k.usable]


def _copies_into_shared(k: AnalysedKernel) -> bool:
    """Read straight from the report: cp.async instructions, or bytes L2 returned into shared memory."""
    names = ("smsp__inst_executed_op_ldgsts.sum", "sm__sass_inst_executed_op_ldgsts_cache_bypass.sum",
             "smsp__sass_inst_executed_op_ldgsts.sum", "l1tex__m_xbar2l1tex_read_bytes_mem_dshared.sum")
    return any((v := k.raw.number(n)) is not None and v > 0 for n in names)


@needs_corpus
@pytest.mark.parametrize("name", [p.name for p in corpus_files()])
def test_no_level_counts_fewer_bytes_than_the_level_below(name: str) -> None:
    """Every DRAM byte passes L2, and the SMs' traffic passes L1: bytes L2 ≥ bytes DRAM and intensity L2 ≤
    intensity DRAM; L1 ≥ both, except where the kernel copied into shared memory (cp.async, TMA), whose bytes
    bypass the LSU write-back that Nsight Compute's L1 chart counts."""
    wrong = []
    for k in _kernels(name):
        b = {lv: (v.value if (v := k.q.bytes[lv]) is not None else None) for lv in ("dram", "l2", "l1")}
        i = k.intensity
        where = f"#{k.raw.index} {k.raw.name[:40]}"
        if b["dram"] and b["l2"] is not None and b["l2"] < SLACK * b["dram"]:
            wrong.append(f"{where}: L2 {b['l2']:.3g} B < DRAM {b['dram']:.3g} B")
        if i["dram"] is not None and i["l2"] is not None and i["l2"] * SLACK > i["dram"]:
            wrong.append(f"{where}: intensity L2 {i['l2']:.3g} > DRAM {i['dram']:.3g}")
        below = max((v for v in (b["dram"], b["l2"]) if v is not None), default=None)
        if below and b["l1"] is not None and b["l1"] < SLACK * below:
            if not _copies_into_shared(k):
                wrong.append(f"{where}: L1 {b['l1']:.3g} B < {below:.3g} B below it")
            elif "cp.async or TMA" not in k.q.bytes["l1"].note:
                wrong.append(f"{where}: L1 below L2 without saying why")
    assert not wrong, "\n".join(wrong)


@needs_corpus
def test_the_store_only_fills_and_the_mw_baseline_that_used_to_claim_reuse() -> None:
    """The kernels of the review: PyTorch's fill in the silu captures (L2 intensity 540 FLOP/B on chart bytes
    385x below DRAM's) and MW_Baseline, whose L2 markers sat right of its DRAM markers."""
    for name in ("cs599k__silu-2025-04-18-v4-naive.ncu-rep", "cs599k__silu-2025-04-18-v8.ncu-rep",
                 "cs599k__silu-2025-04-18-v9.ncu-rep"):
        fill = _kernels(name)[0]
        assert fill.raw.name == "distribution_elementwise_grid_stride_kernel"
        # the SMs' own tag traffic: GH200's lts__t_sectors counts lines crossing between its L2 partitions twice
        assert fill.q.bytes["l2"].value == 32 * fill.raw.number("lts__t_sectors_srcunit_tex.sum")
        assert fill.q.bytes["l2"].value < 32 * fill.raw.number("lts__t_sectors.sum")
        assert fill.q.bytes["l2"].value >= fill.q.bytes["dram"].value
        assert fill.intensity["l2"] <= fill.intensity["dram"] and fill.intensity["dram"] > 1.1
        assert fill.q.flop["fp16"].value == 0  # its HFMA2s are HFMA2.MMA register moves (FP16 datapath idle)
        assert fill.q.bytes["l1"] is None
    for k in _kernels("gpu-workshop__MW_Baseline.ncu-rep"):
        assert k.q.bytes["l2"].definition == "tags" and k.q.bytes["l2"].value >= SLACK * k.q.bytes["dram"].value
    tendencies = _kernels("gpu-workshop__MW_Baseline.ncu-rep")[2]
    sectors = tendencies.raw.number("lts__t_sectors_srcunit_tex.sum")  # the SMs' own tag traffic
    flop = tendencies.intensity["dram"] * tendencies.q.bytes["dram"].value
    assert tendencies.intensity["l2"] == pytest.approx(flop / (32 * sectors))
    assert tendencies.intensity["l2"] == pytest.approx(8.792, abs=0.001)
    assert tendencies.intensity["dram"] == pytest.approx(9.205, abs=0.001)


def test_notes_and_reasons_hold_no_figure_of_the_launch() -> None:
    """Two launches that differ only in their byte counts, taking the same decisions, share their provenance and
    missing texts (one recipe set in the JSON document): a figure in those texts would make a set per launch."""
    def texts(scale: float) -> tuple[object, ...]:
        metrics = store_only(**{"lts__t_sectors.sum": (3e6, "sector")})
        scaled = {n: (v * scale, u) if u in ("byte", "sector") else (v, u) for n, (v, u) in metrics.items()}
        q = compute_quantities(make_kernel(scaled))
        return tuple((lv, v.recipe, v.note) for lv, v in q.bytes.items() if v is not None), tuple(q.missing)

    assert texts(1.0) == texts(1.37)


def test_the_counts_set_aside_keep_their_figures_per_launch() -> None:
    """The counts a level sets aside for being fewer than the level below are the launch's own figures: in its
    quantities (`set_aside`), its JSON record (`set_aside_traffic_bytes`) and its section's numbers table."""
    from ncu_roofline.api.kernel import analyse_kernel
    from ncu_roofline.views.kernel_numbers import quantity_rows

    k = analyse_kernel(make_kernel(store_only(**{"lts__t_sectors.sum": (3e6, "sector")})))
    assert [(v.definition, v.value) for v in k.q.set_aside["l2"]] == [("chart", pytest.approx(1e5)),
                                                                      ("tags", pytest.approx(96e6))]
    record = k.to_dict()["set_aside_traffic_bytes"]
    assert [entry["bytes"] for entry in record["l2"]] == [v.value for v in k.q.set_aside["l2"]]
    rows = [r for r in quantity_rows(k) if "set aside" in r["quantity"]]
    assert [r["value"] for r in rows[:2]] == ["100 kB", "96 MB"] and rows[1]["recipe"] == "32 × lts__t_sectors.sum"
    kept = analyse_kernel(make_kernel(store_only(**{"derived__lts__lts2xbar_bytes.sum": (1.2e8, "byte")})))
    assert "l2" not in kept.q.set_aside and kept.to_dict()["set_aside_traffic_bytes"].get("l2") is None
