"""A kernel that reads its data once gets no tiling advice: hand-computed DRAM reads per loaded byte,
and, on every kernel of the corpus, agreement with the cache hit rates Nsight Compute measured."""

from __future__ import annotations

import math
from functools import cache

import pytest
from conftest import CORPUS, corpus_files, make_kernel
from test_model import base_metrics

import ncu_roofline
from ncu_roofline.api.groups import KernelGroup
from ncu_roofline.api.kernel import AnalysedKernel, analyse_kernel
from ncu_roofline.knowledge import throughputs as T
from ncu_roofline.knowledge.recipes import L2_READS, LOAD_SECTORS
from ncu_roofline.passes.reuse import READS_ONCE, reads_once
from ncu_roofline.views.report import verdict

needs_corpus = pytest.mark.skipif(not corpus_files(), reason=f"shared report corpus not found at {CORPUS}")
FILES = [p.name for p in corpus_files()]
SECTORS = 1.5e6 / 32  # the sectors of the 1.5 MB that DRAM reads in `streaming`
LDG, TEXTURE = LOAD_SECTORS[0], "l1tex__t_sectors_pipe_tex_mem_texture.sum"
LDGSTS_BYPASS = "sm__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_bypass.sum"
LDGSTS_ACCESS = "sm__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_access.sum"


def streaming(ldg_sectors: float, **extra: tuple[float, str]) -> AnalysedKernel:
    """`base_metrics` with DRAM reads of 1.5e12 B/s for 1 µs (1.5 MB; with the 0.1 MB written, 80 % of the
    2 TB/s DRAM roof, under the 7.5 FLOP/byte ridge), its LDG sectors, and an L2 hit rate of 30 %."""
    m = base_metrics()
    m["dram__bytes_read.sum.per_second"] = (1.5e12, "byte/s")
    m[LDG] = (ldg_sectors, "sector")
    m["lts__t_sector_hit_rate.pct"] = (30.0, "%")
    m.update(extra)
    return analyse_kernel(make_kernel(m))


# (kind, lever) of the next steps that advise reuse through tiles (the words: "reuse tiles on chip", "tile and fuse",
# "Tile or fuse").
TILING = {("intensity_gap", "reuse"), ("intensity_gap", "batch"), ("reuse", "tile"), ("at_limit", "fewer_bytes")}


def members(kernels: list[AnalysedKernel], g: KernelGroup) -> list[AnalysedKernel]:
    """A group's launches among a report's kernels (a group keeps entries of them, `api.sums.LaunchEntry`)."""
    indices = {e.index for e in g.launches}
    return [k for k in kernels if k.raw.index in indices]


def _says_once(k: AnalysedKernel) -> bool:
    """A finding says the kernel reads each byte once: the intensity gap or the low-hit-rate note, with the
    DRAM reads per load byte it rests on, or per byte L1 asked L2 for."""
    return any(f.kind in ("intensity_gap", "reuse") and (f.figures.get("once") or f.figures.get("once_l2")) is not None
               for f in k.diagnosis)


def _tiling(k: AnalysedKernel) -> list[str]:
    """The findings of `k` whose next step is tiling advice."""
    return [f"{f.kind.value}/{f.lever}" for f in k.diagnosis if (f.kind.value, f.lever) in TILING]


def test_a_kernel_whose_loads_all_came_from_dram_gets_no_tiling_advice() -> None:
    k = streaming(SECTORS)
    assert k.reuse["dram_reads_per_load_byte"] == pytest.approx(1.5e6 / (32 * SECTORS))  # 1.0
    assert (k.bound_by, k.regime) == ("dram", T.AT_LIMIT) and k.utilization["dram"] == pytest.approx(0.8)
    gap = next(f for f in k.diagnosis if f.kind == "intensity_gap")
    assert gap.lever == "reads_once" and gap.figures["once"] == pytest.approx(1.0) and _says_once(k)
    assert f"{gap.figures['once']:.2f}" == "1.00"  # DRAM read 1.00× the bytes of the sectors its loads asked for
    assert not _tiling(k)
    # no reuse to gain: the gap has no speed-up of its own (fusion or a narrower type depend on other kernels)
    assert gap.speedup is None and gap.basis == ("reads_once",)
    assert "reuse tiles" not in verdict(k) and "Tile" not in verdict(k)
    assert not any(f.kind == "reuse" for f in k.diagnosis)  # its 30 % L2 hits are no missed reuse
    # "about once": the same words stand for DRAM reads of 0.9-1.35x the bytes asked for, which is no exact once
    assert "about once" in (gap.words().next_step or "") and "about once" in gap.words().detail


def test_loads_that_caches_served_keep_the_tiling_advice() -> None:
    # texture fetches of as many sectors again: the loads asked for 3 MB, DRAM read 1.5 MB of it
    k = streaming(SECTORS, **{TEXTURE: (SECTORS, "sector")})
    assert k.reuse["dram_reads_per_load_byte"] == pytest.approx(0.5)
    gap = next(f for f in k.diagnosis if f.kind == "intensity_gap")
    assert gap.lever == "reuse" and "once" not in gap.figures and not _says_once(k)
    assert gap.speedup is not None and gap.speedup > 1 and gap.basis[0] == "with_ceilings"
    # the gap is worth most: the verdict's next step is its reuse advice
    assert max(k.diagnosis, key=lambda f: f.speedup or 0.0) is gap
    assert verdict(k).endswith(" " + gap.words().next_step)
    reuse = next(f for f in k.diagnosis if f.kind == "reuse")
    assert (reuse.variant, reuse.lever, reuse.figures["hit"]) == ("misses", "tile", pytest.approx(0.3))
    assert reuse.speedup is None and reuse.basis == ("hit_rate_unknown",)


def test_copies_the_sector_counts_do_not_see_leave_it_unknown() -> None:
    # cp.async copies counted as instructions, their sectors not: the loads' bytes are not known
    k = streaming(SECTORS, **{"smsp__inst_executed_op_ldgsts.sum": (1000.0, "inst")})
    assert "dram_reads_per_load_byte" not in k.reuse and not _says_once(k)
    # one of their two sector counts (those that bypass L1) is not enough: the others are not known
    k = streaming(SECTORS, **{"smsp__inst_executed_op_ldgsts.sum": (1000.0, "inst"),
                              LDGSTS_BYPASS: (SECTORS, "sector")})
    assert "dram_reads_per_load_byte" not in k.reuse and not _says_once(k)
    # with both counted, they are loads like the others (as many again: 0.5)
    k = streaming(SECTORS, **{"smsp__inst_executed_op_ldgsts.sum": (1000.0, "inst"),
                              LDGSTS_BYPASS: (SECTORS, "sector"), LDGSTS_ACCESS: (0.0, "sector")})
    assert k.reuse["dram_reads_per_load_byte"] == pytest.approx(0.5) and not _says_once(k)
    assert k.reuse["load_sector_bytes"] == pytest.approx(3e6)
    # a NaN texture count: not known (not taken as none)
    k = streaming(SECTORS, **{TEXTURE: (math.nan, "sector")})
    assert "dram_reads_per_load_byte" not in k.reuse
    # DRAM read ten times what the loads asked for (bulk copies, TMA, that no L1/TEX count sees), or twice
    # (over-fetch that could hide re-reads)
    for sectors, ratio in ((SECTORS / 10, 10.0), (SECTORS / 2, 2.0)):
        k = streaming(sectors)
        assert k.reuse["dram_reads_per_load_byte"] == pytest.approx(ratio) and not _says_once(k)
    # no load sector count at all: unknown
    assert "dram_reads_per_load_byte" not in analyse_kernel(make_kernel(base_metrics())).reuse


@pytest.mark.parametrize(("ratio", "once"), [(0.89, False), (0.9, True), (1.0, True), (1.35, True), (1.36, False)])
def test_reads_once_bounds(ratio: float, once: bool) -> None:
    assert READS_ONCE == (0.9, 1.35)
    assert (reads_once({"dram_reads_per_load_byte": ratio}) is not None) is once
    assert (reads_once({"dram_reads_per_load_byte": ratio, "l1_load_hit_rate": 0.1}) is not None) is once
    assert reads_once({"dram_reads_per_load_byte": ratio, "l1_load_hit_rate": 0.11}) is None  # its loads hit L1
    assert reads_once({}) is None


def test_loads_that_hit_l1_are_no_reading_once() -> None:
    k = streaming(SECTORS, **{"l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct": (40.0, "%")})
    assert k.reuse["dram_reads_per_load_byte"] == pytest.approx(1.0) and k.reuse["l1_load_hit_rate"] == 0.4
    assert not _says_once(k)


@cache
def _analysis(name: str) -> ncu_roofline.Analysis:
    return ncu_roofline.analyze(CORPUS / name)


def _by_hand(*launches: AnalysedKernel) -> float | None:
    """Σ DRAM read bytes ÷ Σ 32 × the load sectors, from the report's own counters."""
    read = asked = 0.0
    for k in launches:
        dram = k.raw.number("dram__bytes_read.sum")
        sectors = [k.raw.number(n) for n in LOAD_SECTORS]
        if dram is None or sectors[0] is None:
            return None
        read += dram
        asked += 32 * sum(s for s in sectors if s is not None)
    return read / asked if asked else None


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_reads_once_only_where_nsight_compute_measured_no_load_reuse(name: str) -> None:
    """Every launch and group that is said to read its data once: its ratio is the report's own counters'
    (DRAM read bytes ÷ 32 × the load sectors, summed over a group's launches), and Nsight Compute measured
    at most 10 % L1 hits for its global loads; or, where L1 served re-reads, DRAM read bytes ÷ 32 × the sectors
    L1 asked L2 to read, with at most 10 % of those lookups hitting in L2. None said to gets tiling advice or a
    low-hit-rate note."""
    analysis = _analysis(name)
    wrong = []
    for rep in analysis.reports:
        groups = [(g.summary, [k for k in members(rep.kernels, g) if k.q.duration_s and k.q.duration_s.value > 0])
                  for g in analysis.groups_of(rep)]
        for k, launches in [*((k, [k]) for k in rep.kernels), *groups]:
            if not k.usable:
                continue
            ratio, hand = k.reuse.get("dram_reads_per_load_byte"), _by_hand(*launches)
            if ratio is not None and (hand is None or abs(ratio - hand) > 1e-9 * hand):
                wrong.append(f"#{k.raw.index}: ratio {ratio}, by hand {hand}")
            hit = k.raw.number("l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct")
            if not _says_once(k):
                continue
            once = reads_once(k.reuse)
            if once is None or (ratio is None and "once" in once):
                wrong.append(f"#{k.raw.index}: said to read once with ratio {ratio}")
            elif "once_l2" in once:  # L1 served re-reads: what L1 asked L2 for, and L2's hits, by hand
                dram = sum(x.raw.number("dram__bytes_read.sum") for x in launches)
                asked = sum(x.raw.number(L2_READS[0]) for x in launches)
                hits = max(x.raw.number(L2_READS[1]) / x.raw.number(L2_READS[0]) for x in launches)
                if once["once_l2"] != pytest.approx(dram / (32 * asked), rel=1e-9) or hits > 0.1 or \
                        once["l2_read_hit"] != pytest.approx(hits, rel=1e-9):
                    wrong.append(f"#{k.raw.index}: said to read once from L2's side: {once}, {dram}, {asked}")
            elif hit is not None and hit > 10.0:
                wrong.append(f"#{k.raw.index}: said to read once, Nsight Compute's L1 load hit rate {hit:.1f} %")
            if _tiling(k):
                wrong.append(f"#{k.raw.index}: said to read once, and given tiling advice: {_tiling(k)}")
    assert not wrong, "\n".join(wrong)


@needs_corpus
@pytest.mark.parametrize(("name", "kernel", "once"), [
    ("cs599k__2025-04-21-77_06-MT.ncu-rep", "silu_kernel", True),  # elementwise: 1.00
    ("cuda-mlp-inference__report.ncu-rep", "matrix_addition2D", True),  # 1.21 (DRAM's 64-byte fetches)
    ("gpu-workshop__MW_Baseline.ncu-rep", "semi_discrete_step_232_gpu", True),  # 0.98
    # a stencil: 0.47 of its loads' bytes, L1 serving 54 % of them; 0.975 of the bytes L1 asked L2 for, 9.5 % hits
    ("gpu-workshop__MW_Baseline.ncu-rep", "compute_tendencies_x_309_gpu", True),
    ("gpu-workshop__MW_DivToMult.ncu-rep", "compute_tendencies_x_279_gpu", False),  # 0.98, but 11.9 % L2 hits
    ("cudacode__naive.ncu-rep", "naive_gemm", False),  # 0.03: L1 serves 95 % of its loads
    ("gpu-workshop__MW_Baseline.ncu-rep", "set_halo_values_x_419_gpu", False),  # 1.91: over-fetch, no claim
])
def test_streaming_kernels_of_the_corpus(name: str, kernel: str, once: bool) -> None:
    analysis = _analysis(name)
    found = [k for r in analysis.reports for k in r.kernels if k.raw.name == kernel]
    assert found and all(_says_once(k) is once for k in found if k.regime == T.AT_LIMIT)
    assert all((reads_once(k.reuse) is not None) is once for k in found)


@needs_corpus
def test_the_intensity_gap_stops_where_the_other_instructions_fill_the_issue_slots() -> None:
    """MW_Baseline's stencil: issue slots 51.7 % busy, and 9,412,608 + 4,706,304 of its 776,170,865 warp
    instructions are global loads and stores (L1's requests: the report has no SASS counts). Fewer bytes
    leave the rest: 0.517 × (1 − 14,118,912 / 776,170,865) = 50.8 %, so at most 1.97× (not 2.7× at its ALU
    pipe's 37 %)."""
    from ncu_roofline.passes.reuse import issue_without_memory

    analysis = _analysis("gpu-workshop__MW_Baseline.ncu-rep")
    (k,) = [k for k in analysis.reports[0].kernels if k.raw.name == "compute_tendencies_x_309_gpu"]
    issue = k.units["sm__issue_active"].share
    share, label = issue_without_memory(k)
    assert share == pytest.approx(issue * (1 - (9_412_608 + 4_706_304) / 776_170_865), rel=1e-12)
    assert round(issue, 3) == 0.517 and round(share, 3) == 0.508
    gap = next(f for f in k.diagnosis if f.kind == "intensity_gap")
    # it reads each byte from DRAM about once (what L1 asked L2 for, 9.5 % L2 hits): no bound of its own, and no
    # tiling; were it to move fewer bytes (fusion), the issue slots they leave bound it at 1 / 0.508 = 1.97×
    assert (gap.speedup, gap.lever, gap.basis) == (None, "reads_once", ("reads_once",))
    assert round(1 / share, 2) == 1.97 and gap.figures["cap_x"] == pytest.approx(1 / share)
    dram = k.utilization["dram"]  # 74 %: at the DRAM peak the bytes need fall only 0.740 / 0.508 = 1.46×
    assert round(dram, 3) == 0.740 and round(dram / share, 2) == 1.46
    assert gap.figures["busiest_label"] == gap.figures["cap_label"] == label
    assert gap.figures["busiest_share"] == gap.figures["cap_share"] == pytest.approx(share)
    assert gap.figures["after"] == pytest.approx(dram / share) and round(gap.figures["after"], 2) == 1.46


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_no_intensity_gap_past_the_issue_slots_that_fewer_bytes_leave(name: str) -> None:
    from ncu_roofline.passes.reuse import issue_without_memory

    def weighted(launches: list[AnalysedKernel]) -> tuple[float, str] | None:
        """A group's: its timed launches' own figures, weighted by their time (by hand, not `issue_left`)."""
        timed = [(k.q.duration_s.value, issue_without_memory(k)) for k in launches
                 if k.q.duration_s and k.q.duration_s.value > 0]
        if len(timed) < 2 or any(v is None for _, v in timed):
            return None
        return sum(d * v[0] for d, v in timed) / sum(d for d, _ in timed), ""

    analysis = _analysis(name)
    wrong = []
    for rep in analysis.reports:
        groups = [(g.summary, weighted(members(rep.kernels, g))) for g in analysis.groups_of(rep)]
        for k, own in [*((k, None) for k in rep.kernels), *groups]:
            left = (own or issue_without_memory(k)) if k.usable else None
            for f in k.diagnosis:
                if f.kind == "intensity_gap" and left and left[0] > 0 and f.speedup is not None \
                        and f.speedup > max(1.0, 1 / left[0]) * (1 + 1e-9):
                    wrong.append(f"#{k.raw.index}: ≤{f.speedup:.2f}× past 1 / {left[0]:.3f}")
    assert not wrong, "\n".join(wrong)


def test_reading_once_is_a_dram_lever_only() -> None:
    """At the L2 roof (8.5 MB through L2 at 10 TB/s for 1 µs: 85 %, above DRAM's 80 %), DRAM reads per load
    byte of 1 say nothing about L2's bytes: the generic advice stands."""
    k = streaming(SECTORS, **{"lts__t_bytes.sum": (8.5e6, "byte"),
                              "lts__t_bytes.sum.peak_sustained": (5000.0, "byte/cycle"),
                              "lts__cycles_elapsed.avg.per_second": (2e9, "hz")})
    assert k.bound_by == "l2" and k.regime == T.AT_LIMIT and reads_once(k.reuse) is not None
    assert not _says_once(k)
    gap = next(f for f in k.diagnosis if f.kind == "intensity_gap")
    assert gap.figures["level"] == "L2"
    assert gap.lever == "reuse" and "once" not in gap.figures and gap.basis != ("reads_once",)


def test_the_low_hit_rate_note_of_another_dram_limit_says_it_reads_once() -> None:
    from types import SimpleNamespace

    from ncu_roofline.passes.reuse import reuse_note

    reuse = {"l2_hit_rate": 0.3, "dram_reads_per_load_byte": 1.0}
    (note,) = reuse_note(SimpleNamespace(bound_by="dram__bytes_read"), reuse)
    assert (note.kind, note.variant, note.lever) == ("reuse", "reads_once", "fuse")  # no tiling: nothing to reuse
    assert note.figures["once"] == 1.0 and note.figures["hit"] == 0.3 and note.speedup is None
    assert reuse_note(SimpleNamespace(bound_by="dram"), reuse) == []  # the intensity gap says it
    (tile,) = reuse_note(SimpleNamespace(bound_by="dram__bytes_read"), {"l2_hit_rate": 0.3})
    assert (tile.variant, tile.lever) == ("misses", "tile") and "once" not in tile.figures
    assert reuse_note(SimpleNamespace(bound_by="l2"), reuse) == []


def test_a_group_reads_once_only_where_every_launch_does() -> None:
    """Summed bytes, the highest L1 hit rate; no figure where the sum would read once while a launch does not
    (0.8 and 1.6 without hit rates sum to 1.2), or where a launch lacks its bytes."""
    from ncu_roofline.passes.reuse import summed_reuse

    a = {"dram_reads_per_load_byte": 1.0, "load_sector_bytes": 3e6, "l1_load_hit_rate": 0.02, "l2_hit_rate": 0.4}
    b = {"dram_reads_per_load_byte": 1.2, "load_sector_bytes": 1e6, "l1_load_hit_rate": 0.08}
    g = summed_reuse([a, b], a)
    assert g["dram_reads_per_load_byte"] == pytest.approx((1.0 * 3e6 + 1.2 * 1e6) / 4e6)  # 1.05
    assert g["load_sector_bytes"] == 4e6 and g["l1_load_hit_rate"] == 0.08 and g["l2_hit_rate"] == 0.4
    assert reads_once(g) == {"once": pytest.approx(1.05)}
    c = {"dram_reads_per_load_byte": 0.8, "load_sector_bytes": 1e6, "l1_load_hit_rate": 0.12}
    d = {"dram_reads_per_load_byte": 1.6, "load_sector_bytes": 1e6, "l1_load_hit_rate": 0.04}
    assert reads_once(c) is None and reads_once(d) is None
    mixed = summed_reuse([a, c], a)  # one reads once, one does not: the sum (0.95, 12 % hits) says no
    assert mixed["dram_reads_per_load_byte"] == pytest.approx(0.95) and reads_once(mixed) is None
    both_out = summed_reuse([c, d], c)  # neither reads once: the summed figure stands, and says no
    assert both_out["dram_reads_per_load_byte"] == pytest.approx(1.2) and reads_once(both_out) is None
    assert both_out["l1_load_hit_rate"] == 0.12
    bare = [{k: v for k, v in r.items() if k != "l1_load_hit_rate"} for r in (c, d)]
    assert "dram_reads_per_load_byte" not in summed_reuse(bare, bare[0])  # 1.2 would read once: no figure
    assert "dram_reads_per_load_byte" not in summed_reuse([a, {"l1_load_hit_rate": 0.0}], a)


def test_a_groups_issue_cap_weighs_each_launchs_own_counts() -> None:
    """Launch a: 1 µs, issue slots 60 % busy, 100 of its 1,000 warp instructions global loads and stores;
    launch b: 3 µs, 40 % busy, 500 of 1,000. Fewer bytes leave a 0.6 × 0.9 = 54 % and b 0.4 × 0.5 = 20 %: the
    group, by time, (1 × 0.54 + 3 × 0.20) / 4 = 28.5 % (not b's counts on the group's 45 %: 22.5 %)."""
    from ncu_roofline.passes.reuse import ISSUE_LESS_MEMORY, issue_left, issue_without_memory

    def launch(ns: float, issue_pct: float, memory: float) -> AnalysedKernel:
        m = base_metrics()
        m["gpu__time_duration.sum"] = (ns, "ns")
        m["sm__issue_active.avg.pct_of_peak_sustained_elapsed"] = (issue_pct, "%")
        m["smsp__inst_executed.sum"] = (1000.0, "inst")
        m["smsp__sass_inst_executed_op_global_ld.sum"] = (memory / 2, "inst")
        m["smsp__sass_inst_executed_op_global_st.sum"] = (memory / 2, "inst")
        return analyse_kernel(make_kernel(m))

    a, b = launch(1000.0, 60.0, 100.0), launch(3000.0, 40.0, 500.0)
    assert issue_without_memory(a)[0] == pytest.approx(0.54) and issue_without_memory(b)[0] == pytest.approx(0.20)
    share, label = issue_left(b, [(1e-6, a, []), (3e-6, b, [])])
    assert share == pytest.approx((1 * 0.54 + 3 * 0.20) / 4) and label == ISSUE_LESS_MEMORY
    assert issue_left(a, [(1e-6, a, [])]) == issue_without_memory(a)  # one launch: its own figure


def test_a_groups_intensity_gap_stops_at_its_weighted_issue_cap() -> None:
    """Two launches of one kernel at the DRAM roof (`streaming`, 4.8× under the ridge): issue slots 60 % busy
    with 10 % of the instructions global loads and stores (1 µs), and 80 % with 50 % (2 µs: DRAM stays at 80 %,
    its bytes are a rate). Fewer bytes leave 54 % and 40 %: the group's gap stops at 1 / ((54 + 2 × 40) / 3 %) =
    2.24×, where the longest launch's counts on the group's 73 % would give 1 / 36.7 % = 2.73×. Their loads ask
    for twice the bytes DRAM reads (caches serve re-reads): reuse can raise their intensity."""
    from ncu_roofline.api.groups import group_kernels
    from ncu_roofline.passes.reuse import issue_without_memory

    def launch(index: int, ns: float, issue_pct: float, memory: float) -> AnalysedKernel:
        return streaming(2 * SECTORS * ns / 1000.0, **{
            "gpu__time_duration.sum": (ns, "ns"),
            "sm__issue_active.avg.pct_of_peak_sustained_elapsed": (issue_pct, "%"),
            "smsp__inst_executed.sum": (1000.0, "inst"),
            "smsp__sass_inst_executed_op_global_ld.sum": (memory / 2, "inst"),
            "smsp__sass_inst_executed_op_global_st.sum": (memory / 2, "inst")})

    a, b = launch(0, 1000.0, 60.0, 100.0), launch(1, 2000.0, 80.0, 500.0)
    b.raw.index = 1
    assert [issue_without_memory(k)[0] for k in (a, b)] == [pytest.approx(0.54), pytest.approx(0.40)]
    (group,) = group_kernels([a, b])
    assert group.summary.bound_by == "dram" and len(group.launches) == 2
    gap = next(f for f in group.summary.diagnosis if f.kind == "intensity_gap")
    assert gap.speedup == pytest.approx(3 / (0.54 + 2 * 0.40))
    # `report` lets every launch's metrics go once it is analysed: the group, diagnosed later, says the same
    for k in (a, b):
        k.raw.metrics = {}
    (again,) = group_kernels([a, b])
    assert [f.to_dict() for f in again.summary.diagnosis] == [f.to_dict() for f in group.summary.diagnosis]


@needs_corpus
def test_a_stencil_whose_re_reads_l1_serves_reads_each_byte_from_dram_once() -> None:
    """MW_Baseline's compute_tendencies_x_309_gpu: L1 serves 53.9 % of its global load sectors, so DRAM reads only
    0.47× the bytes its loads ask for. L1 asks L2 to read 38,815,206 sectors (1,242,086,592 bytes), L2 hits
    3,675,329 of them (9.5 %), and DRAM reads 1,211,155,072 bytes: 0.975×. Past L1 no cache served a second read:
    tiling has nothing more to keep from DRAM, and the intensity gap bounds nothing of its own."""
    (k,) = [k for k in _analysis("gpu-workshop__MW_Baseline.ncu-rep").reports[0].kernels
            if k.raw.name == "compute_tendencies_x_309_gpu"]
    asked, hits = (k.raw.number(n) for n in L2_READS)
    assert (asked, hits, k.raw.number("dram__bytes_read.sum")) == (38_815_206, 3_675_329, 1_211_155_072)
    assert reads_once(k.reuse) == {"once_l2": pytest.approx(1_211_155_072 / (32 * 38_815_206)),
                                   "l2_read_hit": pytest.approx(3_675_329 / 38_815_206)}
    gap = next(f for f in k.diagnosis if f.kind == "intensity_gap")
    assert "DRAM read 0.98× what L1 missed, L2 hit 9 %: DRAM sends each byte about once." in gap.words().detail
    assert gap.words().next_step.startswith("Fuse with the kernels beside it") and not _tiling(k)
