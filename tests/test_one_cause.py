"""One finding per cause (`passes.causes`): the L2 and DRAM sector-use caps of the same accesses are one finding that
names the levels it caps; no cap on a roof the report does not give; a bound only where the accesses move a
material share of a limit near the busiest. Figures by hand from NVIDIA's reader values (`raw.number`)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from conftest import CORPUS, corpus_files, make_kernel
from test_model import base_metrics

import ncu_roofline
from ncu_roofline.api.kernel import AnalysedKernel, analyse_kernel
from ncu_roofline.passes.causes import MATERIAL
from ncu_roofline.passes.diagnosis import diagnose
from ncu_roofline.passes.finding import Kind

needs_corpus = pytest.mark.skipif(not corpus_files(), reason=f"shared report corpus not found at {CORPUS}")
ACCESS = (Kind.SECTOR_USE, Kind.COALESCING, Kind.BANK_CONFLICTS)


def with_groups(path: Path) -> list[AnalysedKernel]:
    """A capture's usable launches and its groups' summaries."""
    analysis = ncu_roofline.analyze(path)
    return [k for rep in analysis.reports for k in [*rep.kernels, *(g.summary for g in analysis.groups_of(rep))]
            if k.usable]


def _stores(sectors: float, dram_writes: float) -> dict:
    """base_metrics (DRAM: 5e5 bytes read in 1 µs, 30 % of a 2 TB/s roof) with global stores that use 16 of every
    32 bytes of `sectors` L1 sectors, and `dram_writes` bytes written to DRAM."""
    m = base_metrics()
    m.update({"smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio": (16.0, ""),
              "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum": (sectors, "sector"),
              "smsp__sass_inst_executed_op_global_st.sum": (100.0, "inst"),
              "dram__bytes_write.sum": (dram_writes, "byte")})
    return m


def _sector_findings(k) -> list:
    return [f for f in k.diagnosis if f.kind == Kind.SECTOR_USE]


def test_a_store_waste_in_a_small_share_of_dram_traffic_gets_no_bound() -> None:
    """Stores of 1,500 sectors use 16 of 32 bytes; DRAM wrote 48,000 bytes for them (twice the 24,000 they use):
    sector use caps DRAM at 50 %, a 2× bound on those bytes. But DRAM moved 500,000 + 48,000 bytes in all: the
    stores' 48,000 are 8.8 % of them, under the material tenth, so the finding states no bound. L2 has no roof in
    this report: its cap of the same stores is not said, and there is one sector-use finding."""
    k = analyse_kernel(make_kernel(_stores(1500.0, 48_000.0)))
    assert k.bound_by == "dram" and "l2" not in k.utilization
    assert {c.roof for c in k.ceilings if c.kind == "sector_use"} == {"l2", "dram"}
    (f,) = _sector_findings(k)
    assert (f.roof, f.factor) == ("dram", pytest.approx(24_000 / 48_000))
    share = 48_000 / (5e11 * 1e-6 + 48_000)
    assert share < MATERIAL
    assert f.speedup is None and f.basis == ("not_material",)
    assert f.figures["material_share"] == pytest.approx(share) and f.figures["material_level"] == "DRAM"
    assert f.figures["worst_op"] == "stores" and f.figures.get("also_level") is None  # no L2 roof to cap


def test_a_store_waste_in_a_material_share_keeps_its_bound() -> None:
    """The same stores with DRAM writing 100,000 bytes for the 24,000 they use: the cap is the larger of L1's 16 / 32
    and DRAM's 24,000 / 100,000, 0.5. Their 100,000 bytes are 17 % of DRAM's 600,000, a material share: the 1 / 0.5
    bound stands."""
    k = analyse_kernel(make_kernel(_stores(1500.0, 100_000.0)))
    (f,) = _sector_findings(k)
    assert f.roof == "dram" and MATERIAL <= 100_000 / 600_000
    assert f.speedup == pytest.approx(1 / f.factor) and f.basis[0] == "sector_bytes"


def test_l2_and_dram_caps_of_the_same_accesses_are_one_finding_that_names_both() -> None:
    """With an L2 roof at 28 % beside DRAM at 30 % (within a tenth: both limits near the busiest), the sector use of
    the stores caps both: one finding, under the busiest's roof, naming L2 and its cap as well."""
    k = analyse_kernel(make_kernel(_stores(1500.0, 100_000.0)))
    near = dataclasses.replace(k, utilization={**k.utilization, "l2": 0.28})
    found = diagnose(near, k.ceilings, k.reuse)
    (f,) = [f for f in found if f.kind == Kind.SECTOR_USE]
    l2 = next(c for c in k.ceilings if c.kind == "sector_use" and c.roof == "l2")
    assert f.roof == "dram" and f.figures["also_level"] == "L2" and f.figures["also_factor"] == pytest.approx(l2.factor)
    assert "l2_moved_bytes" not in f.evidence and "dram_moved_bytes" in f.evidence
    assert [x for x in found if x.kind in ACCESS] == [f]


@needs_corpus
def test_coalescing_under_an_l1_roof_the_report_lacks_caps_nothing() -> None:
    """readSegmentUnroll's readOffsetUnroll kernels (no L1 bytes in the report: its L1 roof is n/a) request 5 sectors
    where 4 hold their bytes (1,310,720 sectors for 262,144 requests): the finding says 80 % of L1's sectors are
    needed, with no cap, no bound."""
    seen = 0
    analysis = ncu_roofline.analyze(CORPUS / "cudaprogramming__readSegmentUnroll.ncu-rep")
    for k in (k for rep in analysis.reports for k in rep.kernels if k.usable):
        for f in (f for f in k.diagnosis if f.kind == Kind.COALESCING):
            assert "l1" not in k.utilization
            sectors = k.raw.number("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum")
            requests = k.raw.number("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")
            assert f.figures["factor"] == pytest.approx(4 / (sectors / requests))
            assert f.factor is None and f.speedup is None and f.basis == ("no_roof",)
            assert f.figures["caps"] is None and f.figures["no_roof"] == ""
            seen += 1
    assert seen >= 8


@needs_corpus
def test_naive_transpose_stores_are_named_with_their_share_of_the_sectors() -> None:
    """naiveGmem: its stores use 4 of 32 bytes (16,777,216 store sectors beside 2,097,152 load sectors: 89 % of the
    global sectors); L2 moved 603,979,776 bytes for them, a material share of L2's bytes; DRAM's cap was dropped
    (DRAM moved no more than they use): one finding, about L2, with its 4.5× bound."""
    k = next(k for k in with_groups(CORPUS / "cudaprogramming__smemTranspose.ncu-rep")
             if k.raw.name.startswith("naiveGmem"))
    ld, st = (k.raw.number(f"l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum") for op in ("ld", "st"))
    assert (ld, st) == (2_097_152, 16_777_216)
    (f,) = _sector_findings(k)
    assert f.roof == "l2" and f.figures["worst_op"] == "stores"
    assert f.figures["worst_share"] == pytest.approx(st / (ld + st))
    assert f.figures.get("also_level") is None
    assert 603_979_776 / k.q.bytes["l2"].value >= MATERIAL and f.speedup == pytest.approx(4.5)


@needs_corpus
@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name)
def test_at_most_one_sector_use_finding_and_no_cap_on_a_missing_roof(path: Path) -> None:
    for k in with_groups(path):
        assert sum(f.kind == Kind.SECTOR_USE for f in k.diagnosis) <= 1, k.raw.name
        for f in k.diagnosis:
            if f.kind in ACCESS and f.roof not in k.utilization:
                assert f.factor is None and f.speedup is None and f.basis == ("no_roof",), (k.raw.name, f)
