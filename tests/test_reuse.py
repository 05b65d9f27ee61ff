"""A kernel that reads its data once gets no tiling advice: hand-computed DRAM reads per loaded byte,
and, on every kernel of the corpus, agreement with the cache hit rates Nsight Compute measured."""

from __future__ import annotations

from functools import cache

import pytest
from conftest import CORPUS, corpus_files, make_kernel
from test_model import base_metrics

import ncu_roofline
from ncu_roofline.api.kernel import AnalysedKernel, analyse_kernel
from ncu_roofline.knowledge import throughputs as T
from ncu_roofline.passes.ceilings import LOAD_SECTORS
from ncu_roofline.passes.reuse import READS_ONCE, reads_once
from ncu_roofline.views.report import verdict

needs_corpus = pytest.mark.skipif(not corpus_files(), reason=f"shared report corpus not found at {CORPUS}")
FILES = [p.name for p in corpus_files()]
SECTORS = 1.5e6 / 32  # the sectors of the 1.5 MB that DRAM reads in `streaming`
LDG, TEXTURE = LOAD_SECTORS[0], "l1tex__t_sectors_pipe_tex_mem_texture.sum"
LDGSTS_BYPASS = "sm__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_bypass.sum"


def streaming(ldg_sectors: float, **extra: tuple[float, str]) -> AnalysedKernel:
    """`base_metrics` with DRAM reads of 1.5e12 B/s for 1 µs (1.5 MB; with the 0.1 MB written, 80 % of the
    2 TB/s DRAM roof, under the 7.5 FLOP/byte ridge), its LDG sectors, and an L2 hit rate of 30 %."""
    m = base_metrics()
    m["dram__bytes_read.sum.per_second"] = (1.5e12, "byte/s")
    m[LDG] = (ldg_sectors, "sector")
    m["lts__t_sector_hit_rate.pct"] = (30.0, "%")
    m.update(extra)
    return analyse_kernel(make_kernel(m))


def _says_once(k: AnalysedKernel) -> bool:
    return "reads its data once" in verdict(k) or any("nothing to reuse" in f.action for f in k.diagnosis)


def test_a_kernel_whose_loads_all_came_from_dram_gets_no_tiling_advice() -> None:
    k = streaming(SECTORS)
    assert k.reuse["dram_reads_per_load_byte"] == pytest.approx(1.5e6 / (32 * SECTORS))  # 1.0
    assert (k.bound_by, k.regime) == ("dram", T.AT_LIMIT) and k.utilization["dram"] == pytest.approx(0.8)
    gap = next(f for f in k.diagnosis if f.kind == "intensity_gap")
    assert "nothing to reuse" in gap.action and "DRAM read 1.00× their bytes" in gap.action
    assert "reuse tiles" not in gap.action
    assert "it reads its data once" in verdict(k) and "tiling has nothing to reuse" in verdict(k)
    assert not any(f.kind == "reuse" for f in k.diagnosis)  # its 30 % L2 hits are no missed reuse


def test_loads_that_caches_served_keep_the_tiling_advice() -> None:
    # texture fetches of as many sectors again: the loads asked for 3 MB, DRAM read 1.5 MB of it
    k = streaming(SECTORS, **{TEXTURE: (SECTORS, "sector")})
    assert k.reuse["dram_reads_per_load_byte"] == pytest.approx(0.5)
    gap = next(f for f in k.diagnosis if f.kind == "intensity_gap")
    assert "reuse tiles in shared memory or registers" in gap.action and "nothing to reuse" not in gap.action
    assert "raising intensity through reuse" in verdict(k)
    reuse = next(f for f in k.diagnosis if f.kind == "reuse")
    assert reuse.text.startswith("only 30% of L2 sector lookups hit")


def test_copies_the_sector_counts_do_not_see_leave_it_unknown() -> None:
    # cp.async copies counted as instructions, their sectors not: the loads' bytes are not known
    k = streaming(SECTORS, **{"smsp__inst_executed_op_ldgsts.sum": (1000.0, "inst")})
    assert "dram_reads_per_load_byte" not in k.reuse and not _says_once(k)
    # with their sectors counted, they are loads like the others (as many again: 0.5)
    k = streaming(SECTORS, **{"smsp__inst_executed_op_ldgsts.sum": (1000.0, "inst"),
                              LDGSTS_BYPASS: (SECTORS, "sector")})
    assert k.reuse["dram_reads_per_load_byte"] == pytest.approx(0.5) and not _says_once(k)
    # DRAM read ten times what the loads asked for (bulk copies, TMA, that no L1/TEX count sees)
    k = streaming(SECTORS / 10)
    assert k.reuse["dram_reads_per_load_byte"] == pytest.approx(10.0) and not _says_once(k)
    # no load sector count at all: unknown
    assert "dram_reads_per_load_byte" not in analyse_kernel(make_kernel(base_metrics())).reuse


@pytest.mark.parametrize(("ratio", "once"), [(0.89, False), (0.9, True), (1.0, True), (2.2, True), (2.21, False)])
def test_reads_once_bounds(ratio: float, once: bool) -> None:
    assert READS_ONCE == (0.9, 2.2)
    assert (reads_once({"dram_reads_per_load_byte": ratio}) is not None) is once
    assert reads_once({}) is None


@cache
def _analysis(name: str) -> ncu_roofline.Analysis:
    return ncu_roofline.analyze(CORPUS / name)


def _by_hand(k: AnalysedKernel) -> float | None:
    dram = k.raw.number("dram__bytes_read.sum")
    sectors = [k.raw.number(n) for n in LOAD_SECTORS]
    if dram is None or sectors[0] is None:
        return None
    asked = 32 * sum(s for s in sectors if s is not None)
    return dram / asked if asked else None


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_reads_once_only_where_nsight_compute_measured_no_load_reuse(name: str) -> None:
    """Every launch and group that is said to read its data once: its ratio is the report's own counters'
    (DRAM read bytes ÷ 32 × the load sectors), and Nsight Compute measured at most 10 % L1 hits for its
    global loads; none that Nsight Compute measured at 25 % or more is said to; and none said to gets
    tiling advice or a low-hit-rate note."""
    analysis = _analysis(name)
    wrong = []
    for rep in analysis.reports:
        for k in [*rep.kernels, *(g.summary for g in analysis.groups_of(rep))]:
            if not k.usable:
                continue
            ratio, hand = k.reuse.get("dram_reads_per_load_byte"), _by_hand(k)
            if ratio is not None and (hand is None or abs(ratio - hand) > 1e-9 * hand):
                wrong.append(f"#{k.raw.index}: ratio {ratio}, by hand {hand}")
            hit = k.raw.number("l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct")
            if not _says_once(k):
                continue
            if ratio is None or reads_once(k.reuse) is None:
                wrong.append(f"#{k.raw.index}: said to read once with ratio {ratio}")
            if hit is not None and hit > 10.0:
                wrong.append(f"#{k.raw.index}: said to read once, Nsight Compute's L1 load hit rate {hit:.1f} %")
            if any(f.kind == "reuse" or "reuse tiles" in f.action for f in k.diagnosis):
                wrong.append(f"#{k.raw.index}: said to read once, and given tiling advice")
    assert not wrong, "\n".join(wrong)


@needs_corpus
@pytest.mark.parametrize(("name", "kernel", "once"), [
    ("cs599k__2025-04-21-77_06-MT.ncu-rep", "silu_kernel", True),  # elementwise: 1.00
    ("cuda-mlp-inference__report.ncu-rep", "matrix_addition2D", True),  # 1.21 (DRAM's 64-byte fetches)
    ("gpu-workshop__MW_Baseline.ncu-rep", "semi_discrete_step_232_gpu", True),  # 0.98
    ("gpu-workshop__MW_Baseline.ncu-rep", "compute_tendencies_x_309_gpu", False),  # a stencil: 0.47
    ("cudacode__naive.ncu-rep", "naive_gemm", False),  # 0.03: L1 serves 95 % of its loads
])
def test_streaming_kernels_of_the_corpus(name: str, kernel: str, once: bool) -> None:
    analysis = _analysis(name)
    found = [k for r in analysis.reports for k in r.kernels if k.raw.name == kernel]
    assert found and all(_says_once(k) is once for k in found if k.regime == T.AT_LIMIT)
    assert all((reads_once(k.reuse) is not None) is once for k in found)
