"""Nsight Compute's rules compared with the findings by cause: every (rule, title) the corpus holds names a cause, and
the comparison agrees only where a finding of that cause exists. The causes of a finding are computed here again,
from its kind, variant, lever, roof and figures, apart from `passes.rules_comparison`."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

import pytest
from conftest import CORPUS, corpus_files

import ncu_roofline
from ncu_roofline.api.kernel import AnalysedKernel
from ncu_roofline.knowledge import throughputs as T
from ncu_roofline.passes.finding import Finding, Kind
from ncu_roofline.passes.rules_comparison import Cause, Relation, compare_with_rules, rule_causes

needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"shared report corpus not found at {CORPUS}")
FILES = [p.name for p in corpus_files()]

# Every (rule, title) of the corpus, titles as the reports write them -> the cause it speaks of ("none": a cause no
# finding names, so it never agrees; None: not compared at all).
EXPECTED: dict[tuple[str, str], str | None] = {
    ("AchievedOccupancy", ""): "achieved_occupancy",
    ("TheoreticalOccupancy", ""): "occupancy",
    ("Occupancy", "Occupancy Limiters"): "occupancy",
    ("IssueSlotUtilization", ""): "stalls",
    ("CPIStall", ""): "stalls",
    ("CPIStall", "Long Scoreboard"): "memory_wait",
    ("CPIStall", "Long Scoreboard Stalls"): "memory_wait",
    ("CPIStall", "long_scoreboard"): "memory_wait",
    ("CPIStallLongScoreboard", ""): "memory_wait",
    ("CPIStall", "Lg Throttle Stalls"): "lsu_queue",
    ("CPIStallWait", ""): None,
    ("FPInstructions", ""): "fma",
    ("FPInstructions", "FP32 Non-Fused Instructions"): "fma",
    ("HighPipeUtilization", ""): "compute_pipe",  # 2020.3's untitled busy pipe (its under-used one: see below)
    ("HighPipeUtilization", "High Utilization"): "compute_pipe",
    ("HighPipeUtilization", "Low Utilization"): "too_little_work|stalls",
    ("HighPipeUtilization", "Balanced"): None,
    ("LaunchConfiguration", ""): "small_grid|tail",
    ("LaunchConfiguration", "Small Grid"): "small_grid",
    ("LaunchConfiguration", "Tail Effect"): "tail",
    ("MemoryCacheAccessPattern", "L1TEX Global Load Access Pattern"): "coalescing",
    ("MemoryCacheAccessPattern", "L1TEX Global Store Access Pattern"): "coalescing",
    ("MemoryCacheAccessPattern", "L2 Load Access Pattern"): "coalescing",
    ("MemoryCacheAccessPattern", "L2 Store Access Pattern"): "coalescing",
    ("UncoalescedGlobalAccess", ""): "coalescing",
    ("UncoalescedSharedAccess", ""): "bank_conflicts",
    ("SharedMemoryConflicts", "Shared Load Bank Conflicts"): "bank_conflicts",
    ("SharedMemoryConflicts", "Shared Store Bank Conflicts"): "bank_conflicts",
    ("ThreadDivergence", ""): "divergence",
    ("WorkloadImbalance", "SMs Workload Imbalance"): "idle_sms",
    ("WorkloadImbalance", "L1 Slices Workload Imbalance"): "idle_sms",
    ("WorkloadImbalance", "SMSPs Workload Imbalance"): "none",
    ("WorkloadImbalance", "L2 Slices Workload Imbalance"): "none",
    ("MemoryL2Compression", ""): None,
    ("MemoryL2Compression", "Low Compression Rate"): None,
    ("PMSamplingData", ""): None,
    **{("SOLBottleneck", t): None for t in ("", "Balanced Throughput", "High Compute Throughput",
                                            "High Memory Throughput", "High Throughput", "Latency Issue",
                                            "Small Grid")},
    **{("SOLFPRoofline", t): None for t in ("", "FP64/32 Utilization", "Roofline Analysis")},
}

_MEMORY = ("dram", "l2", "l1")
_ISSUE = ("sm__issue_active", "sm__inst_executed")
_LSU = ("sm__inst_executed_pipe_lsu", "l1tex__lsuin_requests")
_SHARED = ("l1tex__data_pipe_lsu_wavefronts", "l1tex__data_bank_reads", "l1tex__data_bank_writes")


def _memory(roof: str | None) -> bool:
    return roof in _MEMORY or (roof in T.BY_ID and T.BY_ID[roof].group == "memory")


def _compute(roof: str | None) -> bool:
    flop = roof in ("fp64", "fp32", "fp16", "tensor")
    return roof not in _ISSUE and (flop or (roof in T.BY_ID and T.BY_ID[roof].group == "compute"))


def _at_peak(f: Finding) -> bool:
    return f.kind in (Kind.AT_LIMIT, Kind.UNIT_THROUGHPUT) and f.variant in ("high", "short")


def _short(f: Finding) -> bool:
    return _at_peak(f) and f.variant == "short"


def _occupancy_case(f: Finding) -> str:
    """The warps over the SMs' active cycles, from the finding's figures: at what the launch allows (and under
    three quarters of the warp slots), fewer, or neither."""
    achieved, theoretical = f.figures.get("achieved"), f.figures.get("theoretical")
    if not isinstance(achieved, float) or not isinstance(theoretical, float) or not theoretical or achieved >= 0.75:
        return ""
    return "allowed" if achieved >= 0.85 * theoretical else "fewer"


def _under_one_wave(f: Finding) -> bool:
    waves = f.figures.get("waves")
    return f.kind == Kind.TOO_LITTLE_WORK and isinstance(waves, float) and waves < 1.0


# A cause -> whether a finding is about it.
CAUSE_OF: dict[str, Callable[[Finding], bool]] = {
    "occupancy": lambda f: (f.kind == Kind.LATENCY and _occupancy_case(f) == "allowed")
    or (_short(f) and bool(f.figures.get("occ_by"))),
    "achieved_occupancy": lambda f: (f.kind == Kind.LATENCY and _occupancy_case(f) == "fewer")
    or (f.kind == Kind.TAIL_EFFECT and f.variant in ("occupancy", "uneven")),
    "stalls": lambda f: f.kind == Kind.LATENCY or (_short(f) and f.roof in _ISSUE)
    or (f.kind == Kind.LOCAL_MEMORY and f.figures.get("local_waits") is not None),  # its waits lead the stalls
    "memory_wait": lambda f: (f.kind == Kind.LATENCY and (_memory(f.roof) or f.lever == "stall_long_scoreboard"))
    or (_short(f) and _memory(f.roof)) or f.kind in (Kind.REUSE, Kind.LOCAL_MEMORY),
    "lsu_queue": lambda f: (_at_peak(f) and f.roof in _LSU) or f.kind == Kind.LOCAL_MEMORY
    or (f.kind == Kind.LATENCY and f.lever == "stall_lg_throttle"),
    "coalescing": lambda f: f.kind in (Kind.COALESCING, Kind.SECTOR_USE),
    "bank_conflicts": lambda f: f.kind == Kind.BANK_CONFLICTS
    or (_at_peak(f) and f.roof in _SHARED and f.lever not in ("lsu_no_shared", "lsu_no_conflicts")),
    "divergence": lambda f: f.kind == Kind.LANE_EFFICIENCY,
    "fma": lambda f: f.kind == Kind.FMA_BALANCE,
    "tail": lambda f: f.kind == Kind.TAIL_EFFECT and f.variant != "uneven",  # uneven: no partial wave's cost
    "small_grid": _under_one_wave,
    "idle_sms": lambda f: (f.kind == Kind.LATENCY and f.variant == "idle") or f.kind == Kind.TAIL_EFFECT
    or _under_one_wave(f),
    "too_little_work": lambda f: f.kind == Kind.TOO_LITTLE_WORK,
    "compute_pipe": lambda f: _at_peak(f) and _compute(f.roof),
    "none": lambda f: False,
}


@cache
def _kernels(name: str) -> list[AnalysedKernel]:
    return [k for r in ncu_roofline.analyze(CORPUS / name).reports for k in r.kernels if k.usable]


def _alone(k: AnalysedKernel, rule: dict[str, Any]) -> Relation | None:
    """How one rule result stands to the kernel's findings, were its estimate the largest."""
    one = dict(rule, speedup_pct=rule["speedup_pct"] or 1.0)
    note = compare_with_rules(k.diagnosis, [one], k.regime, k.not_applicable, k.limiter_share).estimate
    return None if note is None else note.relation


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_every_rule_agrees_only_with_a_finding_of_its_cause(name: str) -> None:
    wrong = []
    for k in _kernels(name):
        for rule in k.rules():
            key = (rule["rule"], rule["title"] or "")
            if key == ("HighPipeUtilization", "") and "under-utilized" in (rule["message"] or ""):
                key = ("HighPipeUtilization", "Low Utilization")  # 2020.3 wrote it untitled; its message tells
            assert key in EXPECTED, f"{key} is new: name the cause it speaks of in knowledge.rules and here"
            expected = EXPECTED[key]
            relation = _alone(k, rule)
            if expected is None:
                ok = relation is None
            else:
                same = [f for f in k.diagnosis if any(CAUSE_OF[c](f) for c in expected.split("|"))]
                ok = relation is not None and (relation == Relation.AGREES) == bool(same)
            if not ok:
                wrong.append(f"#{k.raw.index} {key}: {relation} vs {expected}: "
                             f"{[(f.kind.value, f.variant, f.lever, f.roof) for f in k.diagnosis]}")
    assert not wrong, "\n".join(wrong)


def test_the_table_names_the_same_cause_for_every_corpus_rule() -> None:
    """`knowledge.rules` and the table above agree, rule by rule (titles as each release writes them)."""
    for (rule, title), expected in EXPECTED.items():
        got = rule_causes(rule, title)
        want = None if expected is None else frozenset() if expected == "none" else \
            frozenset(Cause(c) for c in expected.split("|"))
        assert got == want, (rule, title, got)


def _rule(name: str, title: str = "") -> list[dict[str, Any]]:
    return [{"rule": name, "title": title, "name": name, "message": "", "speedup_pct": 50.0}]


def test_an_occupancy_rule_never_agrees_with_coalescing() -> None:
    """Theoretical Warps beside a kernel whose findings are about coalescing and latency with full SMs: no agreement
    (a latency finding alone is not about occupancy); with the warps at what registers allow, it agrees."""
    coalescing = Finding(Kind.COALESCING, "cap", "l1", 0.5, "l2_throughput", 2.0, lever="coalesce",
                         figures={"caps": "L1", "factor": 0.5})
    full = Finding(Kind.LATENCY, "full", "l2_throughput", None, "l2_throughput", 2.5, lever="in_flight",
                   figures={"achieved": 0.9, "theoretical": 1.0, "share": 0.4})
    for rule in ("TheoreticalOccupancy", "Occupancy", "AchievedOccupancy"):
        note = compare_with_rules([coalescing, full], _rule(rule), "latency").estimate
        assert note is not None and note.relation == Relation.NOT_RANKED, (rule, note)
    allowed = Finding(Kind.LATENCY, "at_allowed", "l2_throughput", None, "l2_throughput", 2.5, lever="registers",
                      figures={"achieved": 0.31, "theoretical": 0.33, "occ_by": "registers", "share": 0.4})
    note = compare_with_rules([coalescing, allowed], _rule("TheoreticalOccupancy"), "latency").estimate
    assert note is not None and note.relation == Relation.AGREES and note.figures["match_kind"] == "latency"
    # the same case under a library's lever (its figures still tell it) and behind idle SMs
    for variant, lever in (("at_allowed", "library"), ("idle", "idle")):
        hidden = Finding(Kind.LATENCY, variant, "l2_throughput", None, "l2_throughput", 2.5, lever=lever,
                         figures={"achieved": 0.31, "theoretical": 0.33, "share": 0.4})
        note = compare_with_rules([hidden], _rule("TheoreticalOccupancy"), "latency").estimate
        assert note is not None and note.relation == Relation.AGREES, (variant, note)
    fewer = Finding(Kind.LATENCY, "fewer_warps", "l2_throughput", None, "l2_throughput", 2.5, lever="more_warps",
                    figures={"achieved": 0.2, "theoretical": 0.5, "share": 0.4})
    assert compare_with_rules([fewer], _rule("TheoreticalOccupancy"), "latency").estimate.relation == \
        Relation.NOT_RANKED  # type: ignore[union-attr]
    assert compare_with_rules([fewer], _rule("AchievedOccupancy"), "latency").estimate.relation == \
        Relation.AGREES  # type: ignore[union-attr]


def test_long_scoreboard_at_a_memory_limit_past_high_use() -> None:
    """Warps waiting on memory while DRAM is at 90 %: the wait is the limit itself; short of high use, more bytes in
    flight reach the peak, what the stall rule speaks of."""
    high = Finding(Kind.AT_LIMIT, "high", "dram", None, "dram", lever="fewer_bytes",
                   figures={"limit": "DRAM", "share": 0.9, "rest": 0.1, "left": 1 / 0.9})
    rule = _rule("CPIStall", "Long Scoreboard Stalls")
    note = compare_with_rules([high], rule, "at_limit", [], 0.9).estimate
    assert note is not None and note.relation == Relation.PAST_HIGH_USE
    short = Finding(Kind.AT_LIMIT, "short", "dram", None, "dram", lever="fewer_bytes_short",
                    figures={"limit": "DRAM", "share": 0.7, "rest": 0.3, "left": 1 / 0.7})
    note = compare_with_rules([short], rule, "at_limit", [], 0.7).estimate
    assert note is not None and note.relation == Relation.AGREES and note.figures["match_limit"] == "DRAM"


def test_a_tail_estimate_beside_blocks_of_unequal_times() -> None:
    """Nsight Compute's Tail Effect estimate assumes equal block times (its message says so); where the occupancy it
    measured rules them out, the comparison says that, and its Achieved Occupancy rule (workload imbalance) agrees
    with the uneven blocks."""
    uneven = Finding(Kind.TAIL_EFFECT, "uneven", "dram", None, "dram", None, lever="even_work",
                     basis=("uneven_blocks",), figures={"achieved": 0.166, "theoretical": 1.0, "tail_occupancy": 0.495})
    for rule, title in (("LaunchConfiguration", "Tail Effect"), ("LaunchConfiguration", "")):
        note = compare_with_rules([uneven], _rule(rule, title), "latency").estimate
        assert note is not None and note.relation == Relation.UNEQUAL_BLOCKS, (rule, title, note)
        assert note.text() == (f"Nsight Compute's top estimate ({title or rule}, 50 %) assumes equal block times; "
                               "the occupancy it measured, 17 %, rules them out.")
    note = compare_with_rules([uneven], _rule("AchievedOccupancy"), "latency").estimate
    assert note is not None and note.relation == Relation.AGREES and note.figures["match_kind"] == "tail_effect"


def test_a_rule_whose_ceiling_takes_under_a_tenth() -> None:
    """A bank-conflict rule beside a conflict ceiling that takes 5 % off L1: no finding, and the comparison says how
    little, against the tenth a finding needs; a ceiling of that kind that takes more, yet makes no finding (its
    roof is not the limit), is not ranked."""
    from ncu_roofline.passes.ceilings import Ceiling

    head = Finding(Kind.UNIT_THROUGHPUT, "short", "sm__issue_active", None, "sm__issue_active",
                   figures={"unit": "issue slots", "share": 0.65, "left": 1 / 0.65})
    rule = _rule("SharedMemoryConflicts", "Shared Store Bank Conflicts")
    small = Ceiling("bank_conflicts", "l1", 0.95, None, {}, "", "")
    note = compare_with_rules([head], rule, "at_limit", [], 0.65, [small]).estimate
    assert note is not None and note.relation == Relation.UNDER_A_TENTH
    assert note.figures["cost"] == pytest.approx(0.05) and note.figures["small_kind"] == "bank_conflicts"
    assert note.text() == ("Nsight Compute's top estimate (Shared Store Bank Conflicts, 50 %) is about bank conflicts. "
                           "Here that ceiling takes 5 % off the L1 roof, under the tenth a finding needs. The top "
                           "finding is the issue slots limit.")
    large = Ceiling("bank_conflicts", "l1", 0.8, None, {}, "", "")
    assert compare_with_rules([head], rule, "at_limit", [], 0.65, [large]).estimate.relation == \
        Relation.NOT_RANKED  # type: ignore[union-attr]
