"""Register spills (`passes.spills`): local memory's share of each level's traffic, and a spill finding that comes
first where local bytes are most of a limit's. Figures by hand from NVIDIA's reader values (`raw.number`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import CORPUS, corpus_files

import ncu_roofline
from ncu_roofline.api.kernel import AnalysedKernel
from ncu_roofline.knowledge import throughputs as T
from ncu_roofline.passes.finding import Kind
from ncu_roofline.passes.rules_comparison import Cause, rule_causes
from ncu_roofline.passes.spills import MOSTLY, SPILL_LEVELS, local_traffic

needs_corpus = pytest.mark.skipif(not corpus_files(), reason=f"shared report corpus not found at {CORPUS}")
GEMM = "cuda-gemm-practice__gemm_v9.ncu-rep"
L1 = "l1tex__t_sectors_pipe_lsu_mem_{}_op_{}.sum"


def _launches(name: str) -> list[AnalysedKernel]:
    return [k for r in ncu_roofline.analyze(CORPUS / name).reports for k in r.kernels if k.usable]


def _with_groups(path: Path) -> list[AnalysedKernel]:
    analysis = ncu_roofline.analyze(path)
    return [k for rep in analysis.reports for k in [*rep.kernels, *(g.summary for g in analysis.groups_of(rep))]
            if k.usable]


def _n(k: AnalysedKernel, name: str) -> float:
    value = k.raw.number(name)
    return 0.0 if value is None else value


@needs_corpus
def test_gemm_v9_local_traffic_per_level_by_hand() -> None:
    """gemm (RTX 3080, 40 registers a thread): L1 local sectors 121,395,258 + 73,196,960 against global 976,774 +
    4,096,064 (97 %); Nsight Compute's L2 sectors of local requests 194,368,160 against global 5,072,864 (97 %);
    DRAM moved 2,882,523,776 + 2,297,211,648 bytes, of which at most 32 bytes per sector of every other access that
    reaches L2 (the global sectors, and the 49,643 L2 sectors from outside L1/TEX) are not local: at least 97 %."""
    k = next(k for k in _launches(GEMM) if k.raw.name == "gemm")
    local = _n(k, L1.format("local", "ld")) + _n(k, L1.format("local", "st"))
    glob = _n(k, L1.format("global", "ld")) + _n(k, L1.format("global", "st"))
    assert (local, glob) == (121_395_258 + 73_196_960, 976_774 + 4_096_064)
    l2_local, l2_global = (_n(k, f"memory_l2_theoretical_sectors_{s}") for s in ("local", "global"))
    other = glob + sum(_n(k, L1.format("global", op)) for op in ("atom", "red")) + sum(
        _n(k, n) for n in ("l1tex__t_sectors_pipe_tex_mem_texture.sum",
                           "l1tex__t_sectors_pipe_tex_mem_surface_op_ld.sum",
                           "sm__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_access.sum",
                           "sm__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_bypass.sum"))
    other += _n(k, "lts__t_sectors.sum") - _n(k, "lts__t_sectors_srcunit_tex.sum")
    dram = _n(k, "dram__bytes_read.sum") + _n(k, "dram__bytes_write.sum")
    assert dram == 2_882_523_776 + 2_297_211_648
    t = local_traffic(k)
    assert t is not None
    assert t.l1_share == pytest.approx(local / (local + glob))
    assert t.l2_share == pytest.approx(l2_local / (l2_local + l2_global)) and "l2" not in t.at_least
    assert t.dram_share == pytest.approx((dram - 32 * other) / dram) and "dram" in t.at_least
    assert round(t.l1_share, 2) == round(t.l2_share, 2) == round(t.dram_share, 2) == 0.97
    assert t.instructions == _n(k, "sass__inst_executed_local_loads") + _n(k, "sass__inst_executed_local_stores")


@needs_corpus
def test_gemm_v9_is_told_to_remove_its_spills_first_with_a_bound() -> None:
    """At the DRAM roof (80 %), with at least 97 % of DRAM's bytes local: no intensity gap (its 0.17 FLOP per byte
    counts spilled registers), the head's next step points at the spills, and the spill finding comes next, bounded
    by DRAM's time without the local bytes: 1 / (1 − share), under the headroom of every limit the fix leaves (the
    busiest arithmetic pipe, the issue slots less the local instructions, L2 less its local bytes)."""
    k = next(k for k in _launches(GEMM) if k.raw.name == "gemm")
    t = local_traffic(k)
    assert t is not None and k.bound_by == "dram" and k.regime == "at_limit"
    head, spill = k.diagnosis[:2]
    assert (head.kind, head.lever, head.basis[0]) == (Kind.AT_LIMIT, "spills", "spills_bound")
    assert head.figures["spill_share"] == pytest.approx(t.dram_share) and head.figures["spill_level"] == "DRAM"
    assert not any(f.kind == Kind.INTENSITY_GAP or f.lever in ("batch", "reuse") for f in k.diagnosis)
    assert (spill.kind, spill.roof, spill.lever) == (Kind.LOCAL_MEMORY, "dram", "registers")
    # DRAM's local share is a lower bound (DRAM less 32 B for every other L2 sector), so DRAM without it could
    # fall further: the bound is 1 / the busiest share the fix leaves, each known from below
    assert spill.basis == ("spill_leaves",) and spill.figures["spill_at_least"] == ""
    issued = _n(k, "smsp__inst_executed.sum")
    issue_left = k.units["sm__issue_active"].share * (1 - t.instructions / issued)
    arithmetic = max([k.units[u].share for u in ("sm__pipe_alu_cycles_active", "sm__pipe_fma_cycles_active")]
                     + [k.utilization.get("fp32", 0.0)])
    l1 = [k.utilization.get("l1", 0.0)] + [u.share for uid, u in k.units.items()
                                           if u.group == "memory" and u.parent is not None
                                           and T.related_roof(uid) == "l1"]
    leaves = max([issue_left, arithmetic] + [share * (1 - t.l1_share) for share in l1])
    assert spill.figures["other_share"] == pytest.approx(leaves)
    assert spill.speedup == pytest.approx(1 / leaves) and spill.speedup > 10
    assert spill.figures["regs"] == 40 and spill.figures["raise_regs"] == 40


@needs_corpus
def test_spills_that_are_not_most_of_a_busy_limit_get_no_bound() -> None:
    """monte-carlo-pi: initRNG and computeValue are busiest on the ALU pipe (25 %, 14 %); their memory levels are
    under 8 %, far from it, so their spills cost latency the report does not bound. computeValue's DRAM moved
    68 MB, less than 32 bytes for each L2 sector of its global accesses and of units outside L1/TEX: no lower bound
    on its local share there."""
    for k in _launches("monte-carlo-pi__profile.ncu-rep"):
        (f,) = [f for f in k.diagnosis if f.kind == Kind.LOCAL_MEMORY]
        assert f.speedup is None and f.basis == ("local_cost",) and "spill_share" not in f.figures
        t = local_traffic(k)
        assert t is not None and t.l2_share is not None and "l2" in t.at_least
        glob = sum(_n(k, L1.format("global", op)) for op in ("ld", "st", "atom", "red"))
        tex = _n(k, "lts__t_sectors_srcunit_tex.sum")
        assert t.l2_share <= (tex - glob) / tex + 1e-12  # L2's L1/TEX sectors less the global ones, at most
        if k.raw.name == "computeValue":
            outside = _n(k, "lts__t_sectors.sum") - tex
            dram = _n(k, "dram__bytes_read.sum") + _n(k, "dram__bytes_write.sum")
            assert t.dram_share is None and 32 * (glob + outside) > dram > 32 * glob


@needs_corpus
@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name)
def test_no_intensity_or_batching_lever_for_mostly_local_bytes(path: Path) -> None:
    """Corpus invariant: where local bytes are most of the limiter's bytes, no intensity gap about that level and no
    batching lever; the spill finding, where bounded, comes right after the head."""
    for k in _with_groups(path):
        t = local_traffic(k)
        level = k.bound_by if k.bound_by in ("l1", "l2", "dram") else T.related_roof(k.bound_by or "")
        if t is None or level not in SPILL_LEVELS or (t.share(level) or 0.0) < MOSTLY:
            continue
        assert not any(f.kind == Kind.INTENSITY_GAP and f.roof == k.bound_by for f in k.diagnosis), k.raw.name
        assert not any(f.lever == "batch" for f in k.diagnosis), k.raw.name
        spill = [i for i, f in enumerate(k.diagnosis) if f.kind == Kind.LOCAL_MEMORY]
        assert spill == [1], (k.raw.name, [f.kind for f in k.diagnosis])


STALL_RATIO = "smsp__average_warps_issue_stalled_{}_per_issue_active.ratio"


def _stall_shares(k: AnalysedKernel) -> dict[str, float]:
    """Each reason's share of the stall cycles, from the launch's own ratios (`selected` left out), by hand."""
    head, tail = STALL_RATIO.split("{}")
    values = {n[len(head):-len(tail)]: float(m.value) for n, m in k.raw.metrics.items()
              if n.startswith(head) and n.endswith(tail) and not n.endswith("_not_issued" + tail)}
    values.pop("selected", None)
    total = sum(v for v in values.values() if v > 0)
    return {r: v / total for r, v in values.items() if v > 0} if total else {}


@needs_corpus
@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name)
def test_local_waits_are_the_leading_long_scoreboard_share_where_local_loads_hold_most_of_l1(path: Path) -> None:
    """Corpus invariant: a local-memory finding states the long-scoreboard share of the stall cycles exactly where
    local loads hold at least half of L1's global and local load sectors and that reason leads (a quarter of the
    cycles and half again the next), all by hand from the launch's metrics; the comparison with Nsight Compute's
    rules then takes the stalls to be the finding's and says so."""
    for k in _launches(path.name):
        found = next((f for f in k.diagnosis if f.kind == Kind.LOCAL_MEMORY), None)
        if found is None or STALL_RATIO.format("selected") not in k.raw.metrics:
            continue
        shares = sorted(_stall_shares(k).items(), key=lambda rv: -rv[1])
        leads = (bool(shares) and shares[0][0] == "long_scoreboard" and shares[0][1] >= 0.25
                 and (len(shares) < 2 or shares[0][1] >= 1.5 * shares[1][1]))
        local, glob = (k.raw.number(L1.format(space, "ld")) for space in ("local", "global"))
        loads = local is not None and glob is not None and local + glob > 0 and local >= 0.5 * (local + glob)
        if leads and loads:
            assert found.figures["local_waits"] == pytest.approx(shares[0][1]), k.raw.name
            estimate = k.to_dict()["rules_relation"]["estimate"]
            top = max((r for r in k.rules() if r["speedup_pct"]), key=lambda r: r["speedup_pct"], default=None)
            if top is not None and (rule_causes(top["rule"], top["title"], top["message"]) or set()) & {
                    Cause.STALLS, Cause.MEMORY_WAIT}:  # too few eligible warps, or warps waiting on memory
                assert estimate["relation"] == "agrees"
                assert estimate["figures"]["local_waits"] == pytest.approx(shares[0][1])
        else:
            assert found.figures["local_waits"] is None, k.raw.name


@needs_corpus
def test_gemm_v9_issue_slot_estimate_agrees_through_its_local_waits() -> None:
    """gemm: long scoreboard leads the stall cycles and local loads hold 99 % of L1's load sectors; Nsight Compute's
    top estimate, Issue Slot Utilization, speaks of too few eligible warps: those waits."""
    k = next(k for k in _launches(GEMM) if k.raw.name == "gemm")
    waits = _stall_shares(k)["long_scoreboard"]
    text = k.to_dict()["rules_comparison"]
    assert text.startswith("Nsight Compute's top estimate (Issue Slot Utilization, 97 %) agrees on the cause.")
    assert f"Long-scoreboard waits, mostly on local memory, are {waits:.0%} of the kernel's stall cycles." \
        .replace("%", " %") in text


@needs_corpus
def test_a_local_memory_findings_evidence_needs_no_raw_metrics() -> None:
    """A group's diagnosis runs after `report` let its launches' metrics go: its local-memory finding names the
    counters it rests on from the launch's kept facts, as the launch's own finding does."""
    from ncu_roofline.passes.spills import local_memory

    k = next(k for k in _launches(GEMM) if k.raw.name == "gemm")
    before = local_memory(k)
    assert before and L1.format("local", "ld") in before[0].evidence
    k.raw.metrics = {}
    assert [f.evidence for f in local_memory(k)] == [f.evidence for f in before]
