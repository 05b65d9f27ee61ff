"""Findings never invent, on every kernel of the corpus: each ceiling applies, none contradicts the
measurement, bank conflicts are Nsight Compute's own, and the first finding is about the limiter."""

from __future__ import annotations

import json
import math
import re
from functools import cache

import pytest
from conftest import CORPUS, corpus_files

import ncu_roofline
from ncu_roofline.api.kernel import AnalysedKernel
from ncu_roofline.passes.ceilings import SIGNIFICANT, Ceiling

needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"shared report corpus not found at {CORPUS}")
FILES = [p.name for p in corpus_files()]
_BAD_WORDS = re.compile(r"\b(nan|inf|None)\b")


@cache
def _kernels(name: str) -> list[AnalysedKernel]:
    return [k for r in ncu_roofline.analyze(CORPUS / name).reports for k in r.kernels if k.usable]


def _achieved(k: AnalysedKernel, c: Ceiling) -> float:
    """The share of the ceiling's roof the kernel reaches; for a sector-use cap (on the bytes the accesses use)
    at a level whose bytes are (nearly) all the bytes it moved for them, the share of the bytes they use."""
    share = k.utilization[c.roof]
    moved, useful = c.evidence.get(f"{c.roof}_moved_bytes"), c.evidence.get(f"{c.roof}_useful_bytes")
    level = k.q.bytes.get(c.roof)
    if c.kind == "sector_use" and moved and useful is not None and level is not None \
            and moved * (1 - 1e-6) <= level.value <= moved / 0.9:  # those accesses are (nearly) all its traffic
        return share * min(1.0, useful / level.value)
    return share


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_no_ceiling_below_the_achieved_point(name: str) -> None:
    wrong = [f"#{k.raw.index} {c.kind} under {c.roof}: {c.factor:.3f} < achieved {_achieved(k, c):.3f}"
             for k in _kernels(name) for c in k.ceilings
             if c.roof in k.utilization and c.factor < _achieved(k, c) * (1 - 1e-6)]
    assert not wrong, "\n".join(wrong)


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_access_pattern_ceilings_only_where_those_instructions_ran(name: str) -> None:
    wrong = []
    for k in _kernels(name):
        for c in k.ceilings:
            if c.kind not in ("sector_use", "coalescing"):
                continue
            for op in ("ld", "st"):
                if any(key.startswith(f"{op}_") for key in c.evidence):
                    executed = k.raw.number(f"smsp__sass_inst_executed_op_global_{op}.sum")
                    if executed is not None and executed == 0:
                        wrong.append(f"#{k.raw.index} {c.kind}: {op} evidence with no global {op} instruction")
    assert not wrong, "\n".join(wrong)


def _shared_op_counts(k: AnalysedKernel) -> tuple[float, float] | None:
    """(wavefronts, conflicts) of the shared loads (ldmatrix included), stores and atomics; None without them."""
    pairs = [(k.raw.number(f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum"),
              k.raw.number(f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum"))
             for op in ("ld", "st", "atom")]
    held = [(w, c) for w, c in pairs if w is not None and c is not None]
    return (sum(w for w, _ in held), sum(c for _, c in held)) if held else None


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_bank_conflicts_agree_with_nsight_compute(name: str) -> None:
    """The factor is Nsight Compute's own conflict count over the shared accesses' wavefronts (the pipe's total
    counts other accesses too: 1,048,576 in a transpose with no shared memory); a kernel that issues no shared
    access gets no bank-conflict ceiling; where the source-level counts see the conflicts too, the degree agrees
    with theirs ((ideal + excess) ÷ ideal)."""
    wrong = []
    for k in _kernels(name):
        ceiling = next((x for x in k.ceilings if x.kind == "bank_conflicts"), None)
        ops = _shared_op_counts(k)
        if ops is None:
            w = k.raw.number("l1tex__data_pipe_lsu_wavefronts_mem_shared.sum")
            c = k.raw.number("l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum")
            if w and c is not None and ceiling is not None and abs(ceiling.factor - (w - c) / w) > 1e-9:
                wrong.append(f"#{k.raw.index}: factor {ceiling.factor:.3f}, Nsight Compute's totals {(w - c) / w:.3f}")
            continue
        w, c = ops
        if not w:
            if ceiling is not None:
                wrong.append(f"#{k.raw.index}: a bank-conflict ceiling where the kernel issues no shared access")
            elif not any(x.kind == "bank_conflicts" for x in k.not_applicable):
                wrong.append(f"#{k.raw.index}: no shared access, and no reason given for the missing ceiling")
            continue
        if ceiling is None:
            continue
        if abs(ceiling.factor - min(1.0, (w - c) / w)) > 1e-9:
            wrong.append(f"#{k.raw.index}: factor {ceiling.factor:.3f}, Nsight Compute {(w - c) / w:.3f}")
        ideal = k.raw.number("memory_l1_wavefronts_shared_ideal")
        excess = k.raw.number("derived__memory_l1_wavefronts_shared_excessive")
        if ideal and excess and c > 0.5 * w:  # both see many conflicts: the degrees agree
            ours, theirs = w / (w - c), (ideal + excess) / ideal
            if abs(ours / theirs - 1) > 0.15:
                wrong.append(f"#{k.raw.index}: {ours:.1f} wavefronts per conflict-free one, source-level {theirs:.1f}×")
    assert not wrong, "\n".join(wrong)


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_findings_lead_with_the_limiter_and_say_what_they_are_worth(name: str) -> None:
    wrong = []
    for k in _kernels(name):
        if not k.diagnosis:
            if k.regime is not None:
                wrong.append(f"#{k.raw.index}: a verdict ({k.regime}) with no finding")
            continue
        if k.diagnosis[0].limit != k.bound_by:
            wrong.append(f"#{k.raw.index}: first finding about {k.diagnosis[0].limit}, limiter {k.bound_by}")
        said = [(f.kind, f.roof, f.factor) for f in k.diagnosis if f.factor is not None]
        if len(said) != len(set(said)) or sum(f.kind == "lane_efficiency" for f in k.diagnosis) > 1:
            wrong.append(f"#{k.raw.index}: a ceiling said twice, or two lane efficiencies: {said}")
        for f in k.diagnosis:
            if _BAD_WORDS.search(f.text) or _BAD_WORDS.search(f.action):
                wrong.append(f"#{k.raw.index} {f.kind}: {f.text}")
            if f.speedup is None and not f.speedup_note:
                wrong.append(f"#{k.raw.index} {f.kind}: neither a speed-up nor why not")
            if f.speedup is not None and not f.speedup >= 1:
                wrong.append(f"#{k.raw.index} {f.kind}: speed-up {f.speedup}")
    assert not wrong, "\n".join(wrong)


def _tail_rule(k: AnalysedKernel) -> bool:
    return any(r.rule == "LaunchConfiguration" and r.title == "Tail Effect" for r in k.raw.rules)


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_tail_effect_where_nsight_compute_finds_one_and_from_its_waves(name: str) -> None:
    """Where Nsight Compute's Tail Effect rule fired, the diagnosis has a tail-effect finding unless the
    kernel has too little work to speak of waves, or the achieved occupancy it measured shows that the
    last wave cost too little to be worth one; every tail-effect finding is the report's own
    launch__waves_per_multiprocessor: at most ceil(waves) / waves (exactly that where every block is
    taken to last the same), capped by the busiest limit's headroom, and it states the partial wave's
    share of the run that Nsight Compute's rule message states."""
    from ncu_roofline.passes.tail import tail_time_share

    wrong = []
    for k in _kernels(name):
        tails = [f for f in k.diagnosis if f.kind == "tail_effect"]
        waves = k.raw.number("launch__waves_per_multiprocessor")
        if _tail_rule(k) and k.regime != "too_little_work" and not tails:
            measured = tail_time_share(k.launch, waves, math.ceil(waves)) if waves else None
            if measured is None or measured >= 1 / math.ceil(waves):
                wrong.append(f"#{k.raw.index}: Nsight Compute's Tail Effect rule fired, no tail-effect finding")
        for f in tails:
            if waves is None or waves <= 1 or k.regime == "too_little_work":
                wrong.append(f"#{k.raw.index}: tail effect with {waves} waves ({k.regime})")
                continue
            whole = math.ceil(waves)
            uniform = min(whole / waves, 1 / k.limiter_share)
            equal_times = "if every block takes the same time" in f.text
            if f.factor is not None or f.speedup > uniform * (1 + 1e-9) or f.speedup < 1.1 or \
                    (equal_times and f.speedup != pytest.approx(uniform)):
                wrong.append(f"#{k.raw.index}: factor {f.factor}, speed-up {f.speedup} for {waves} waves")
            if f"take {1 / whole:.0%} of the run" not in f.text and f"takes {1 / whole:.0%} of the run" not in f.text:
                wrong.append(f"#{k.raw.index}: {f.text}")
            rule = next((r for r in k.raw.rules if r.rule == "LaunchConfiguration" and r.title == "Tail Effect"), None)
            if rule is not None and rule.speedup_pct is not None and \
                    rule.speedup_pct != pytest.approx(100 / whole, abs=0.5):
                wrong.append(f"#{k.raw.index}: Nsight Compute puts the partial wave at {rule.speedup_pct} %")
    assert not wrong, "\n".join(wrong)


@needs_corpus
def test_silu_partial_wave_bound_is_hand_computed() -> None:
    """cs599k silu (basic set, GH200): 1,056 blocks of 256 threads, 5 blocks per SM at 62.5 % theoretical
    occupancy on 132 SMs: 660 blocks a wave, 1.6 waves; the last wave's 396 blocks hold 3 of 5 block
    slots on every SM (37.5 % occupancy). Equal block times would give the last wave 50 % of the run
    (Nsight Compute's rule says the same); the measured 50.4 % achieved occupancy gives
    T = (0.625 - 0.504) / ((0.625 - 0.504) + (0.504 - 0.375)) = 0.484. At the full wave's pace all the
    work takes (1 - 0.484) x 1.6 of the run: up to 1.21x (issue slots at 77 % allow 1.29x); one
    kernel, so the program gains 1 - 1 / 1.21 = 17 %."""
    doc = json.loads(ncu_roofline.analyze(CORPUS / "cs599k__silu-pytorch.ncu-rep").to_json())
    k = doc["reports"][0]["kernels"][0]
    (tail,) = [f for f in k["diagnosis"] if f["kind"] == "tail_effect"]
    a = k["launch"]["achieved_occupancy"]
    t = (0.625 - a) / ((0.625 - a) + (a - 0.375))
    assert t == pytest.approx(0.484, abs=1e-3)
    assert tail["speedup"] == pytest.approx(1 / ((1 - t) * 1.6)) and tail["factor"] is None
    assert tail["speedup"] == pytest.approx(1.21, abs=0.005)
    assert tail["program_gain"] == pytest.approx(1 - 1 / tail["speedup"])
    assert "1,056 blocks make 1.60 waves (about 660 blocks run at once)" in tail["text"]
    assert "60% full" in tail["text"] and "would take 50% of the run for 38% of the work" in tail["text"]
    assert "(50% of the theoretical 62%) puts it at most at about 48%" in tail["text"]
    assert "PyTorch's choice" in tail["action"] and "problem size" not in tail["action"]  # a fixed grid
    # Its 50 % assumes equal block times; the measured occupancy bounds the gain at 1 - 1/1.21 = 17 %.
    assert ("agrees with this diagnosis on the cause; this diagnosis bounds the gain at ≤1.21× (17% of the "
            "time: tail effect), less than Nsight Compute's estimate: see that finding for why") \
        in k["rules_comparison"]
    assert k["diagnosis"][0]["kind"] == "unit_throughput"  # the limiter still leads


@needs_corpus
def test_tail_bound_follows_the_sms_measured_activity() -> None:
    """self-join distanceCalculationsKernel on an A100 (108 SMs): 459 blocks, 432 a wave, 1.06 waves; the last
    wave's 27 blocks leave 81 SMs without a block. Equal block times would give it 50 % of the run (1.88x), but
    the SMs were active sm__cycles_active.avg ÷ gpc__cycles_elapsed.max = 84 % of the run, and a last wave of
    T leaves 81/108 of them idle for T: T ≤ 0.16 / 0.75 = 0.22, (1 − 0.22) × 1.06 of the run at the full waves'
    pace: up to 1.20x, within the latency's whole headroom."""
    k = next(k for k in _kernels("self-join-mistic__profile.ncu-rep")
             if k.raw.name.startswith("distanceCalculationsKernel") and k.launch["grid_blocks"] == 459)
    active = k.raw.number("sm__cycles_active.avg") / k.raw.number("gpc__cycles_elapsed.max")
    assert k.launch["sm_active_share"] == pytest.approx(active) and active == pytest.approx(0.84, abs=0.005)
    t = (1 - active) / (81 / 108)
    (tail,) = [f for f in k.diagnosis if f.kind == "tail_effect"]
    assert tail.speedup == pytest.approx(1 / ((1 - t) * k.launch["waves_per_sm"]))
    assert tail.speedup == pytest.approx(1.20, abs=0.005)
    assert "leaving 81 of the 108 SMs without a block" in tail.text and "active 84% of the elapsed" in tail.text
    (latency,) = [f for f in k.diagnosis if f.kind == "latency"]
    assert latency.speedup == pytest.approx(1 / k.limiter_share)  # the whole headroom: the tail's part within it


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_no_tail_longer_than_the_sms_measured_idle_time_allows(name: str) -> None:
    """A last wave of fewer blocks than SMs leaves SMs idle for as long as it lasts: its share of the run (the
    tail-effect bound's T = 1 − (ceil(w) − 1) ÷ (bound × w)) is at most the SMs' idle share (1 − sm__cycles_active
    ÷ elapsed cycles) over the share of SMs it leaves idle."""
    wrong = []
    for k in _kernels(name):
        active, grid, sms = (k.launch.get(n) for n in ("sm_active_share", "grid_blocks", "sm_count"))
        for f in (f for f in k.diagnosis if f.kind == "tail_effect"):
            waves = k.launch["waves_per_sm"]
            whole = math.ceil(waves)
            idle_sms = sms - min(sms, grid - (whole - 1) * grid / waves) if grid and sms else 0
            if active is None or idle_sms < 1 or f.speedup * k.limiter_share >= 1 - 1e-9:
                continue  # no SM left idle, no measured activity, or the bound is the limiter's headroom
            t = 1 - (whole - 1) / (f.speedup * waves)
            if t > (1 - active) / (idle_sms / sms) + 1e-6:
                wrong.append(f"#{k.raw.index}: last wave {t:.2f} of the run, SMs idle {1 - active:.2f}")
    assert not wrong, "\n".join(wrong)


@needs_corpus
def test_tail_bound_follows_the_measured_occupancy() -> None:
    """cs599k rms_norm (A100-class, 114 SMs): 1,024 blocks at 8 per SM and 100 % theoretical occupancy,
    1.12 waves; the last wave's 112 blocks sit one per SM on 112 SMs (12.5 % occupancy). Equal block
    times would give it 50 % of the run and 1.78x; the measured 78.5 % achieved occupancy gives
    T = 0.215 / (0.215 + 112/114 x (0.785 - 0.125)) = 0.249 and (1 - 0.249) x 1.123 of the run at the
    full waves' pace: up to 1.19x. CUB's radix-sort launches of 1.36-1.64 waves: their measured
    occupancy leaves no tail worth 1.1x, so they have no tail-effect finding; the one of 1.80 waves
    (achieved 33.5 % of 37.5 %) is consistent with equal block times: 2 / 1.80 = 1.11x, and its grid
    is CUB's choice."""
    k = next(k for k in _kernels("cs599k__2025-04-21-v1.ncu-rep") if k.raw.index == 0)
    (tail,) = [f for f in k.diagnosis if f.kind == "tail_effect"]
    launch = k.launch
    assert launch["grid_blocks"] == 1024 and launch["sm_count"] == 114 and launch["theoretical_occupancy"] == 1.0
    short = 1.0 - launch["achieved_occupancy"]
    t = short / (short + 112 / 114 * (launch["achieved_occupancy"] - 0.125))
    assert t == pytest.approx(0.249, abs=1e-3)
    assert tail.speedup == pytest.approx(1 / ((1 - t) * launch["waves_per_sm"]))
    assert tail.speedup == pytest.approx(1.19, abs=0.01)
    sort = [k for k in _kernels("self-join-mistic__profile.ncu-rep") if "Onesweep" in k.raw.name
            and 1.3 < k.launch["waves_per_sm"] < 1.7]
    assert len(sort) >= 5 and not [f for k in sort for f in k.diagnosis if f.kind == "tail_effect"]
    k = next(k for k in _kernels("self-join-mistic__profile.ncu-rep") if k.raw.index == 126)
    (tail,) = [f for f in k.diagnosis if f.kind == "tail_effect"]
    assert tail.speedup == pytest.approx(2 / k.launch["waves_per_sm"]) and "CUB's choice" in tail.action


@needs_corpus
@pytest.mark.parametrize(("name", "index", "says"), [
    # "Low Utilization" (every pipe under-used) at the DRAM roof: idle compute pipes are what a memory limit means
    ("cuda-mlp-inference__report.ncu-rep", 0, "is for compute pipes left idle, as they are in a kernel at its "
                                              "memory limit"),
    # theoretical occupancy vs a grid of 64 blocks on 148 SMs: more blocks come first
    ("accelsim-test__n1000_int8_abt_view_algo64_profile.1528422.ncu-rep", 0, "is for more warps in flight per SM, "
                                                                            "while this launch gives the GPU too "
                                                                            "little work to fill it"),
    # achieved occupancy vs DRAM throughput at 90 %: at most 1.11× is left to the limit
    ("cs599k__profile.ncu-rep", 2, "is for hiding latency (more warps or work in flight), but the limit this "
                                   "diagnosis leads with is at 90% of its peak: at most 1.11× is left to it"),
    # theoretical occupancy vs issue slots at 67%, short of high use: the rest of their peak is for more warps
    ("cs599k__silu-2025-04-18-v9.ncu-rep", 0, "agrees with this diagnosis"),
    ("cs599k__silu-pytorch.ncu-rep", 0, "agrees with this diagnosis"),  # Tail Effect vs the tail-effect finding
    ("cudacode__naive.ncu-rep", 0, "agrees with this diagnosis"),  # Lg Throttle Stalls vs the LSU pipe at its limit
    # L1TEX Global Load Access Pattern: the coalescing cap this diagnosis set aside, with Nsight Compute's own count
    ("cudacode__global_mem_coalesce.ncu-rep", 0, "speaks of coalescing, which this diagnosis set aside: Nsight "
                                                 "Compute counts no excessive global sectors"),
])
def test_rules_comparison_agrees_only_where_the_rule_speaks_of_a_finding(name: str, index: int, says: str) -> None:
    """A busy unit agrees only with the rules about that unit, and "Low Utilization" (HighPipeUtilization's
    finding that every pipe is under-used) never agrees with a kernel at a roof; a rule about a ceiling this
    diagnosis set aside gets the reason."""
    k = next(k for k in _kernels(name) if k.raw.index == index)
    text = k.to_dict()["rules_comparison"]
    assert says in text, text
    assert ("agrees with this diagnosis" in text) is (says == "agrees with this diagnosis"), text


@needs_corpus
def test_a_unit_short_of_high_use_names_the_occupancy_lever_nsight_compute_estimates() -> None:
    """silu v9 #0: issue slots at 67 %, at the limit but short of Nsight Compute's 80 %; its Theoretical Occupancy
    rule (est. 50 %) says registers hold the warps per scheduler to 8. The finding's next step names that lever
    for the last 33 %, and the comparison agrees, with this diagnosis's own bound: the peak at most 1 / 0.674 away."""
    k = _kernels("cs599k__silu-2025-04-18-v9.ncu-rep")[0]
    head = k.diagnosis[0]
    assert k.bound_by == "sm__issue_active" and round(k.limiter_share, 3) == 0.674
    assert "toward its own peak (the last 33%), check the warp-stall reasons" in head.action
    assert "the theoretical occupancy of 50% caps the warps in flight: raise it with fewer registers" in head.action
    assert k.to_dict()["rules_comparison"] == (
        "Nsight Compute's largest estimated speed-up (Theoretical Occupancy, 50 %) agrees with this diagnosis on the "
        f"cause; this diagnosis puts the limit's own peak at most {1 / k.limiter_share:.3g}× away.")


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_every_limit_short_of_high_use_says_what_reaches_toward_its_peak(name: str) -> None:
    """At the limit but under Nsight Compute's 80 %, the head finding's next step names more work in flight (a unit:
    from the occupancy Nsight Compute measured; a roof: more bytes or instructions in flight); from 80 %, only less
    work."""
    for k in _kernels(name):
        if k.regime != "at_limit" or not k.diagnosis or k.limiter_share is None:
            continue
        head = k.diagnosis[0]
        reaches = "toward its own peak (the last" in head.action or "reaches toward the roof's last" in head.action
        assert reaches == (k.limiter_share < 0.8), (k.raw.index, k.raw.name, k.limiter_share, head.action)


def test_the_comparison_sentences_keep_to_what_each_rule_speaks_of() -> None:
    """Hand-made heads and Nsight Compute estimates: Low Utilization never agrees with a roof short of high use; a
    stall rule (a throttled pipe) is not called hiding latency; "more blocks come first" only for a grid under one
    wave; the untitled 2020.3 under-utilized rule is read as Low Utilization beside a memory limit."""
    from ncu_roofline.passes.finding import Finding
    from ncu_roofline.passes.rules_comparison import compare_with_rules

    def rule(name: str, title: str = "", message: str = "") -> list[dict[str, object]]:
        return [{"rule": name, "title": title, "name": name, "message": message, "speedup_pct": 40.0}]

    short = Finding("at_limit", "dram", None, "at 70% of the DRAM roof, short of pressing against it", "fewer bytes",
                    "dram", None, "at its limit: less work for this roof makes it faster; the roof itself is at most "
                    "1.43× away")
    low = compare_with_rules([short], rule("HighPipeUtilization", "Low Utilization"), "at_limit", [], 0.7)
    assert "agrees" not in low and "is for compute pipes left idle, as they are in a kernel at its memory limit" in low
    assert "agrees with this diagnosis on the cause; this diagnosis puts the limit's own peak at most 1.43× away" in \
        compare_with_rules([short], rule("TheoreticalOccupancy"), "at_limit", [], 0.7)
    pipe = Finding("unit_throughput", "sm__pipe_fma_cycles_active", None, "FMA pipe at 85% of peak", "less work",
                   "sm__pipe_fma_cycles_active", None, "at its limit: only less work for this unit makes it faster")
    throttle = compare_with_rules([pipe], rule("CPIStall", "Math Pipe Throttle Stalls"), "at_limit", [], 0.85)
    assert "hiding latency" not in throttle and "does not rank" in throttle
    assert "is for hiding latency" in compare_with_rules([pipe], rule("AchievedOccupancy"), "at_limit", [], 0.85)
    idle = Finding("too_little_work", "dram", None, "every measured limit is under 5% of its peak", "more work", "dram",
                   None, "no bound")
    assert "more blocks come first" not in compare_with_rules([idle], rule("TheoreticalOccupancy"), "too_little_work")
    small = Finding("too_little_work", "dram", None, "the grid has 64 blocks for 148 SMs: 84 SMs have nothing to run "
                    "(0.43 waves)", "more work", "dram", None, "no bound")
    assert "more blocks come first" in compare_with_rules([small], rule("TheoreticalOccupancy"), "too_little_work")
    dram = Finding("at_limit", "dram", None, "at 85% of the DRAM roof: the kernel presses against it", "fewer bytes",
                   "dram", None, "at its limit: only less work for this roof makes it faster")
    untitled = rule("HighPipeUtilization", "", "All pipelines are under-utilized. Either this kernel is very small")
    assert "is for compute pipes left idle" in compare_with_rules([dram], untitled, "at_limit", [], 0.85)


def test_rule_kinds_by_title_then_rule() -> None:
    from ncu_roofline.passes.rules_comparison import rule_kinds

    assert rule_kinds("HighPipeUtilization", "Low Utilization") == {"latency", "too_little_work", "latency:idle_sms"}
    assert "unit_throughput@compute" in rule_kinds("HighPipeUtilization", "High Pipe Utilization")
    assert rule_kinds("LaunchConfiguration", "Tail Effect") == {"tail_effect"}
    assert rule_kinds("LaunchConfiguration", "") == {"too_little_work", "tail_effect", "latency:idle_sms"}
    assert rule_kinds("MemoryL2Compression", "Low Compression Rate") is None
    # Older releases write titles as ids; "Balanced" (no pipe stands out) speaks of no finding.
    assert rule_kinds("CPIStall", "long_scoreboard") == rule_kinds("CPIStall", "Long Scoreboard Stalls")
    assert rule_kinds("CPIStall", "lg_throttle") == rule_kinds("CPIStall", "Lg Throttle Stalls")
    assert "reuse" in rule_kinds("CPIStall", "long_scoreboard")
    assert rule_kinds("HighPipeUtilization", "Balanced") is None
    # 2020.3 wrote "All pipelines are under-utilized" with no title: the opposite of a busy pipe.
    untitled = "All pipelines are under-utilized. Either this kernel is very small or it doesn't issue enough warps"
    assert rule_kinds("HighPipeUtilization", "", untitled) == rule_kinds("HighPipeUtilization", "Low Utilization")
    assert "unit_throughput@compute" in rule_kinds("HighPipeUtilization", "", "Shared is the highest-utilized")
    # An access pattern speaks of the sectors its requests touch, not of any memory limit.
    pattern = rule_kinds("MemoryCacheAccessPattern", "L2 Load Access Pattern")
    assert rule_kinds("UncoalescedGlobalAccess", "") == pattern == {"coalescing", "sector_use"}


def test_an_access_pattern_rule_agrees_only_with_a_finding_about_the_sectors() -> None:
    """Nsight Compute's largest estimate is its UncoalescedGlobalAccess rule (31 %): a diagnosis that names only a
    memory limit below the threshold does not agree with it on the cause; one with a coalescing finding does."""
    from ncu_roofline.passes.finding import Finding
    from ncu_roofline.passes.rules_comparison import compare_with_rules

    head = Finding("unit_throughput", "l2_throughput", None, "L2 throughput at 39% of peak", "see below",
                   "l2_throughput", None, "below the threshold: see the latency finding")
    latency = Finding("latency", "l2_throughput", None, "the rest is latency", "hide it", "l2_throughput", 2.57, "")
    rules = [{"rule": "UncoalescedGlobalAccess", "title": "", "name": "Uncoalesced Global Accesses",
              "speedup_pct": 30.8}]
    alone = compare_with_rules([head, latency], rules, "latency")
    assert alone == ("Nsight Compute's largest estimated speed-up (Uncoalesced Global Accesses, 31 %) points at "
                     "something this diagnosis does not rank; this diagnosis leads with unit throughput.")
    coalescing = Finding("coalescing", "l1", 0.5, "global loads touch 16.0 sectors per request", "coalesce",
                         "l2_throughput", 2.0, "roof ÷ ceiling = 1 / 0.50")
    assert compare_with_rules([head, latency, coalescing], rules, "latency") == (
        "Nsight Compute's largest estimated speed-up (Uncoalesced Global Accesses, 31 %) agrees with this diagnosis on "
        "the cause; this diagnosis bounds the gain at ≤2× (50% of the time: coalescing).")


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_intensity_gap_bound_is_what_the_compute_side_allows(name: str) -> None:
    """An intensity gap's bound is the compute roof times the kernel's own FP-mix ceilings under it, over
    the FLOP/s it reaches, and never past the busiest arithmetic pipe or FLOP roof, nor the issue slots
    that its instructions other than global loads and stores take: fewer bytes leave the kernel's
    arithmetic as it is, and more FLOP on the same bytes loads the same pipes."""
    from ncu_roofline.passes.ceilings import SIGNIFICANT

    wrong = []
    for k in _kernels(name):
        for f in k.diagnosis:
            if f.kind != "intensity_gap" or f.speedup is None:
                continue
            factors = [c.factor for c in k.ceilings if c.roof == k.dominant_precision and c.factor < SIGNIFICANT
                       and c.kind != "issue_share"]
            expected = k.compute_roof() * math.prod(factors) / k.achieved_flop_per_s
            arithmetic = ("sm__pipe_fma", "sm__pipe_alu", "sm__pipe_fp64", "sm__pipe_tensor", "sm__pipe_tc",
                          "sm__pipe_shared", "sm__inst_executed_pipe_fp16", "sm__inst_executed_pipe_xu")
            compute = [u.share for uid, u in k.units.items() if uid.startswith(arithmetic) and u.parent is not None]
            compute += [v for r, v in k.utilization.items() if v and r not in ("dram", "l2", "l1")]
            issued = k.raw.number("smsp__inst_executed.sum")
            for ld, st in (("smsp__sass_inst_executed_op_global_ld.sum", "smsp__sass_inst_executed_op_global_st.sum"),
                           ("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
                            "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum")):
                moving = (k.raw.number(ld), k.raw.number(st))
                if "sm__issue_active" in k.units and issued and None not in moving:
                    compute.append(k.units["sm__issue_active"].share * (1 - (moving[0] + moving[1]) / issued))
                    break
            if compute:  # fewer bytes leave its arithmetic; more FLOP on the same bytes loads the same pipes
                expected = min(expected, max(1.0, 1 / max(compute)))
            if f.speedup != pytest.approx(expected) or "e+" in f.text:
                wrong.append(f"#{k.raw.index}: {f.speedup} against {expected}; {f.text}")
    assert not wrong, "\n".join(wrong)


@needs_corpus
def test_matrix_addition_intensity_gap_is_capped_by_its_own_ceilings() -> None:
    """matrix_addition2D (FP32 adds only, at the DRAM roof): the FP32 roof is 146x what it reaches, but with
    no FMA its FP32 work reaches at most 50 % of it (73x), and 129 / 2 = 64x more FLOP per byte gets
    there. Its FP32 instructions' 10 % of the issue slots would rise with them, so that ceiling does
    not bound this finding, nor does its LSU pipe (fusion removes loads and stores). Its FMA pipe at
    9.7 % would stop it at 10x; the issue slots (14.0 % busy) stop it first: less the 63,000 + 31,500
    global loads and stores of its 632,520 warp instructions they stay 11.9 % busy: at 8.4x fewer bytes. It reads
    each input once (DRAM read 1.21x the sectors its loads asked for), so no reuse within it gives those bytes:
    the gap has no speed-up of its own (it was ranked first, "up to 8.4x"), only advice on fusion and types."""
    k = next(k for k in _kernels("cuda-mlp-inference__report.ncu-rep") if k.raw.index == 0)
    (gap,) = [f for f in k.diagnosis if f.kind == "intensity_gap"]
    ceilings = {c.kind: c.factor for c in k.ceilings if c.roof == "fp32"}
    assert ceilings["fma_balance"] == pytest.approx(0.5) and ceilings["issue_share"] == pytest.approx(0.099, abs=1e-3)
    assert k.compute_roof() / k.achieved_flop_per_s == pytest.approx(146, abs=1)
    assert k.compute_roof() * 0.5 / k.achieved_flop_per_s == pytest.approx(73, abs=1)
    fma = k.units["sm__pipe_fma_cycles_active"].share
    assert fma == pytest.approx(0.10, abs=0.01)
    left = k.units["sm__issue_active"].share * (1 - (63_000 + 31_500) / 632_520)
    assert round(left, 3) == 0.119 and gap.speedup is None and k.reuse["dram_reads_per_load_byte"] == pytest.approx(
        1.21, abs=0.005)
    assert gap.speedup_note.startswith("no bound for this kernel alone: it reads its data about once (DRAM read 1.21×")
    assert all(words in gap.action for words in ("nothing to reuse", "fuse with the kernels", "lower precision"))
    assert all(f.speedup is None for f in k.diagnosis)  # nothing ranks ahead of the limiter on a gain it cannot have
    dram = k.utilization["dram"]  # 88 %: the bytes fall dram / left = 7.42× at the DRAM peak, 1 / left as busy as now
    assert round(dram, 2) == 0.88 and round(dram / left, 2) == 7.42
    assert ("issue slots (less its global loads and stores), at 12%, saturates first, once the bytes fall about "
            "7.42× (with DRAM then at its peak) to 8.4× (with DRAM as busy as now, 88%)") in gap.text
    assert "needs 129× more FLOP per byte" in gap.text
    assert "(64× to reach what its ceilings allow: fma balance 50%)" in gap.text


@needs_corpus
def test_lane_efficiency_explains_an_fp64_pipe_limiter() -> None:
    """searchKernelCOSStree: the FP64 pipe is the limiter at 20 %; 17.3 of 32 lanes do work (Nsight
    Compute's ThreadDivergence rule says the same). The lane efficiency caps the FP64 roof (useful
    FLOP) at 54 % and is a finding; it does not cap the pipe's busy share (a divergent warp instruction
    holds the pipe whatever its active lanes), so the latency that remains is measured against the
    pipe's peak: 1 / 0.20, not 0.54 / 0.20."""
    k = _kernels("self-join-mistic__profileBIGCROSS3.out.ncu-rep")[0]
    assert k.bound_by == "sm__pipe_fp64_cycles_active"
    kinds = {f.kind: f for f in k.diagnosis}
    assert kinds["lane_efficiency"].factor == pytest.approx(17.3 / 32, abs=0.01)
    assert "caps the FP64 roof at 54%" in kinds["lane_efficiency"].text
    assert "is at 20% of its peak: the rest is latency" in kinds["latency"].text
    assert "ceilings allow" not in kinds["latency"].text
    assert kinds["latency"].speedup == pytest.approx(1.0 / k.limiter_share)


@needs_corpus
def test_lane_efficiency_explains_an_issue_slot_limiter() -> None:
    """nodeByPoint5 (Higgs, launch #0): the issue slots are the busiest limit at 30 %, below the threshold;
    14.32 of 32 lanes do useful work per warp instruction (Nsight Compute's ThreadDivergence rule warns on the
    same launch). A warp instruction takes its issue slot whatever its active lanes, so warps whose threads take
    one path issue up to 32 / 14.32 = 2.23× fewer instructions for the same work: a finding beside the latency,
    not capped by the memory side (its busiest, L1/TEX wavefronts, is at 25 %: 4×)."""
    k = _kernels("self-join-mistic__profileHiggs.out.ncu-rep")[0]
    lanes = k.raw.number("smsp__thread_inst_executed_pred_on_per_inst_executed.ratio")
    assert k.bound_by == "sm__issue_active" and k.regime == "latency" and lanes == pytest.approx(14.32, abs=0.01)
    assert any(r.get("rule") == "ThreadDivergence" and r.get("severity") == "warning" for r in k.rules())
    kinds = {f.kind: f for f in k.diagnosis}
    lane = kinds["lane_efficiency"]
    assert lane.speedup == pytest.approx(32 / lanes)
    assert lane.text.endswith("caps the useful work of the issue slots at 45%")
    assert lane.speedup_note.startswith("32 lanes ÷ the lanes that do useful work = 1 / 0.45: warps whose 32 lanes "
                                        "all do useful work (no divergence, no predicated-off lanes) issue as many")
    assert lane.speedup_note.endswith("; counted apart from the latency finding")
    assert kinds["latency"].speedup == pytest.approx(1 / k.limiter_share)  # the same instructions: unchanged


@needs_corpus
def test_one_lane_efficiency_finding_when_another_precisions_roof_is_near_the_busiest() -> None:
    """Higgs nodeByPoint5 #0 with its FP32 roof made 29 % (within a tenth of the issue slots' 30 %) and a lane
    ceiling under it too: the lanes are one count, so one lane-efficiency finding, about the issue slots."""
    import copy
    import dataclasses

    from ncu_roofline.passes.diagnosis import diagnose

    k = _kernels("self-join-mistic__profileHiggs.out.ncu-rep")[0]
    m = copy.copy(k)
    m.utilization = dict(k.utilization, fp32=0.29)
    lane = next(c for c in k.ceilings if c.kind == "lane_efficiency")
    found = [f for f in diagnose(m, [*k.ceilings, dataclasses.replace(lane, roof="fp32")], {})
             if f.kind == "lane_efficiency"]
    assert len(found) == 1 and found[0].text.endswith("caps the useful work of the issue slots at 45%")


_ISSUE_UNITS = ("sm__issue_active", "sm__inst_executed")


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_divergence_is_a_finding_wherever_the_issue_slots_lead(name: str) -> None:
    """Over every launch whose busiest limit is an instruction-issue unit (no roof of its own): where a
    lane-efficiency ceiling caps its useful work, the diagnosis names it, with a bound of 32 ÷ the useful lanes
    (never past the memory side's headroom); where none does, no lane-efficiency finding appears."""
    for k in _kernels(name):
        if k.bound_by not in _ISSUE_UNITS or not k.diagnosis:
            continue
        lanes = [c for c in k.ceilings if c.kind == "lane_efficiency" and c.factor < SIGNIFICANT]
        found = [f for f in k.diagnosis if f.kind == "lane_efficiency"]
        assert len(found) == min(1, len(lanes)), (k.raw.index, k.raw.name)
        for f in found:
            on = k.raw.number("smsp__thread_inst_executed_pred_on_per_inst_executed.ratio")
            assert on is not None and f.factor == pytest.approx(on / 32)
            assert f.speedup is not None and 1.0 <= f.speedup <= 32 / on * (1 + 1e-9)


@needs_corpus
def test_rms_norm_launches_get_their_coalescing_finding_whichever_limit_leads() -> None:
    """cs599k v1 rms_norm: four launches of one kernel, below every limit. L2 throughput (37-39 %) and L1/TEX
    wavefronts (36-37 %) trade places as the busiest; the global loads touch 16 sectors per request where 8
    would do (Nsight Compute's UncoalescedGlobalAccess rule: 43 % excessive sectors, est. 31 %). Every launch gets
    the coalescing finding, ≤ 1 / 0.5 = 2× (under the 1 / 0.389 = 2.57× of the busiest limit's headroom)."""
    kernels = _kernels("cs599k__2025-04-21-v1.ncu-rep")
    assert [k.bound_by for k in kernels] == ["l2_throughput"] * 3 + ["l1tex__data_pipe_lsu_wavefronts"]
    for k in kernels:
        found = [f for f in k.diagnosis if f.kind == "coalescing"]
        assert len(found) == 1 and found[0].speedup == pytest.approx(2.0), k.raw.index
        assert found[0].text.startswith("global loads touch 16.0 sectors per request where 8.0 would hold")
        within = "is within a tenth of the busiest limit, L2 throughput at" in found[0].text
        assert within == (k.bound_by == "l2_throughput"), k.raw.index
    first = kernels[0].diagnosis[2].text
    assert first.endswith("caps the L1 roof at 50% (L1/TEX (wavefronts) at 36% is within a tenth of the busiest "
                          "limit, L2 throughput at 39%)")


@needs_corpus
def test_a_near_busiest_limits_ceiling_stops_at_the_busiest_limits_headroom() -> None:
    """The same launch (#0: L2 throughput busiest at 38.9 %, L1/TEX wavefronts at 35.8 %) with its coalescing
    ceiling made 0.1: roof ÷ ceiling would be 10×, the compute side (issue slots at 31 %) caps it at 3.2×, and the
    busiest limit, whose work a fix at L1 may leave as it is, at 1 / 0.389 = 2.57×."""
    import dataclasses

    from ncu_roofline.passes.diagnosis import diagnose

    k = _kernels("cs599k__2025-04-21-v1.ncu-rep")[0]
    ceilings = [dataclasses.replace(c, factor=0.1) if c.kind == "coalescing" and c.factor < 0.9 else c
                for c in k.ceilings]
    found = next(f for f in diagnose(k, ceilings, {}) if f.kind == "coalescing")
    assert found.speedup == pytest.approx(1 / k.limiter_share) and round(1 / k.limiter_share, 2) == 2.57
    assert found.speedup_note.endswith("; capped at 1 / 0.389 by L2 throughput, the busiest limit, at 39%")


def _limits_near_the_busiest(k: AnalysedKernel) -> list[tuple[str | None, str | None]]:
    """(roof, unit) of the busiest limit and of every limit at 90 % of its share or more (a unit's own roof)."""
    from ncu_roofline.knowledge.throughputs import related_roof

    share = k.limiter_share or 0.0
    near: list[tuple[str | None, str | None]] = [
        (k.bound_by, None) if k.limiter_is_roof else (related_roof(k.bound_by or ""), k.bound_by)]
    near += [(r, None) for r, v in k.utilization.items() if v >= 0.9 * share]
    near += [(related_roof(uid), uid) for uid, u in k.units.items() if u.parent is not None and u.share >= 0.9 * share]
    return near


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_below_every_limit_each_access_ceiling_is_a_finding_ranked_only_near_the_busiest(name: str) -> None:
    """Below every limit or with too little work, every memory-access ceiling (sector use, coalescing, bank
    conflicts) is a finding (nothing computed is dropped unsaid). Below every limit it is ranked, with a bound
    never past the busiest limit's headroom, where its level's roof or a unit whose work shows under it is within a
    tenth of the busiest limit's share; otherwise, and always with too little work, it has no bound and says why."""
    memory = ("sector_use", "coalescing", "bank_conflicts")
    for k in _kernels(name):
        if k.regime not in ("latency", "too_little_work") or not k.limiter_share:
            continue
        near = {roof for roof, _ in _limits_near_the_busiest(k)} if k.regime == "latency" else set()
        expected = {(c.kind, c.roof, round(c.factor, 6)) for c in k.ceilings
                    if c.kind in memory and c.factor < SIGNIFICANT}
        found = {(f.kind, f.roof, round(f.factor or 0.0, 6)): f for f in k.diagnosis if f.kind in memory}
        assert set(found) == expected, (k.raw.index, k.raw.name, set(found), expected)
        for (_, roof, _), f in found.items():
            if roof in near:
                assert f.speedup is not None and f.speedup <= max(1.0, 1.0 / k.limiter_share) * (1 + 1e-9)
            else:
                assert f.speedup is None and f.speedup_note.startswith("no bound: "), (k.raw.index, f.kind)
                assert "; fixing this means fewer " in f.speedup_note


@needs_corpus
def test_an_access_ceiling_far_from_the_busiest_limit_is_listed_without_a_bound() -> None:
    """Higgs nodeByPoint5 #0: the issue slots lead at 30 %, L1/TEX wavefronts at 25 % (under 90 % of it); its
    global loads touch more sectors than they use (Nsight Compute's UncoalescedGlobalAccess: 22 % excessive
    sectors). The coalescing ceiling is a finding with no bound, after the ranked ones; with too little work
    (MW_Baseline's set_halo_values kernels) likewise."""
    k = _kernels("self-join-mistic__profileHiggs.out.ncu-rep")[0]
    assert k.units["l1tex__data_pipe_lsu_wavefronts"].share < 0.9 * k.limiter_share
    last = k.diagnosis[-1]
    assert (last.kind, last.roof, last.speedup) == ("coalescing", "l1", None)
    assert last.text.endswith("caps the L1 roof at 78%")
    assert last.speedup_note == ("no bound: the busiest limit is issue slots, not this one; fixing this means fewer L1 "
                                 "sectors or wavefronts and less waiting on them, worth a share of the run the report "
                                 "does not measure")
    halo = _kernels("gpu-workshop__MW_Baseline.ncu-rep")[0]
    assert [f.kind for f in halo.diagnosis] == ["too_little_work", "coalescing"]
    assert halo.diagnosis[1].speedup_note.startswith("no bound: the launch's too little work bounds the kernel first")


def test_co_limits_are_the_sub_units_and_roofs_within_a_tenth() -> None:
    """Hand-made shares: the busiest at 0.40; a unit at 0.361 (over 90 %) and a roof at 0.37 count, a unit at 0.359 and
    the memory headline (no parent: its sub-units are named) at 0.39 do not."""
    from types import SimpleNamespace

    from ncu_roofline.passes.co_limits import co_limits

    def unit(share: float, parent: str | None = "memory_throughput") -> SimpleNamespace:
        return SimpleNamespace(share=share, parent=parent)

    m = SimpleNamespace(limiter_share=0.40, bound_by="l2_throughput", utilization={"l1": 0.37, "dram": 0.2},
                        units={"l2_throughput": unit(0.40), "l1tex__data_pipe_lsu_wavefronts": unit(0.361),
                               "dram__throughput": unit(0.359), "memory_throughput": unit(0.39, None)})
    found = co_limits(m)  # type: ignore[arg-type]
    assert [(c.id, c.roof, c.share, c.is_roof) for c in found] == [
        ("l1", "l1", 0.37, True), ("l1tex__data_pipe_lsu_wavefronts", "l1", 0.361, False)]
    assert co_limits(SimpleNamespace(limiter_share=0.0, bound_by="x", utilization={}, units={})) == []  # type: ignore[arg-type]


LATENCY_UNIT_NOTE = ("the unit's peak ÷ its busy share: how far hiding latency can take the same instructions "
                     "before that unit saturates; a fix that removes work (the ceiling findings) is counted apart "
                     "and can go past it")


@needs_corpus
def test_no_ceiling_lowers_a_units_latency_bound_but_a_roofs() -> None:
    """Over every corpus kernel below its limit: under a unit, the latency bound is the unit's peak ÷
    its share (a tail effect's bound is within it); under a roof, what the ceilings under it allow ÷ its
    utilisation."""
    seen = {"unit": 0, "roof": 0}
    for name in FILES:
        for k in _kernels(name):
            for f in k.diagnosis:
                if f.kind != "latency" or f.speedup is None or not k.limiter_share:
                    continue
                if k.limiter_is_roof:
                    seen["roof"] += 1
                    assert f.speedup <= 1.0 / k.limiter_share * (1 + 1e-9)
                else:
                    seen["unit"] += 1
                    assert f.speedup == pytest.approx(max(1.0, 1.0 / k.limiter_share)), (name, k.raw.name)
                    # the bound is for the same instructions: a fix that removes work is not within it
                    assert f.speedup_note.startswith(LATENCY_UNIT_NOTE), (name, k.raw.name)
    assert seen["unit"] > 10


@needs_corpus
@pytest.mark.parametrize("name", FILES)
@pytest.mark.parametrize("group_by", ["launch", "name"])
def test_a_groups_findings_are_about_the_groups_limiter(name: str, group_by: str) -> None:
    """A group's row names its limiter (from its launches' weighted shares) and its top finding: the
    findings are the diagnosis of those limits, so the first is about that limiter and quotes its
    share; a tail effect only where every launch has the same waves."""
    from ncu_roofline.api.groups import group_kernels

    kernels = [k for r in ncu_roofline.analyze(CORPUS / name).reports for k in r.kernels]
    wrong = []
    for g in group_kernels(kernels, group_by):
        s = g.summary
        if not s.diagnosis:
            continue
        head = s.diagnosis[0]
        if head.limit != s.bound_by or any(f.limit != s.bound_by for f in s.diagnosis):
            wrong.append(f"{g.longest.raw.name}: limiter {s.bound_by}, findings about {[f.limit for f in s.diagnosis]}")
        if s.regime != "too_little_work" and s.limiter_share is not None and f"{s.limiter_share:.0%}" not in head.text:
            wrong.append(f"{g.longest.raw.name}: {head.text} (share {s.limiter_share:.0%})")
        written = g.to_dict()  # the JSON, CSV and Parquet rows: the same findings as the page
        if written["diagnosis"] != [f.to_dict() for f in s.diagnosis] or written["diagnosis"][0]["limit"] != s.bound_by:
            wrong.append(f"{g.longest.raw.name}: written findings {[f['limit'] for f in written['diagnosis']]}")
        alone = len(g.launches) == 1 and g.launches[0].usable  # Nsight Compute's estimate beside it: the launch's
        if alone and written["rules_comparison"] != g.launches[0].to_dict()["rules_comparison"]:
            wrong.append(f"{g.longest.raw.name}: rules comparison {written['rules_comparison']!r}")
        waves = {k.launch.get("waves_per_sm") for k in g.launches}
        if len(waves) > 1 and any(f.kind == "tail_effect" for f in s.diagnosis):
            wrong.append(f"{g.longest.raw.name}: a tail effect over launches of {sorted(map(str, waves))} waves")
    assert not wrong, "\n".join(wrong)


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_a_ceilings_bound_stops_at_the_other_sides_busiest_limit(name: str) -> None:
    """Fewer sectors per request or fewer bank conflicts leave the instructions as they are; FMA fusion
    or less divergence leaves the bytes: a ceiling's speed-up never passes 1 / the busiest share on the
    side its fix does not change (instruction pipes and FLOP roofs; memory units and byte roofs)."""
    memory_side, compute_side = {"sector_use", "coalescing", "bank_conflicts"}, {"fma_balance", "issue_share",
                                                                                  "lane_efficiency", "tensor_share"}
    wrong = []
    for k in _kernels(name):
        for f in k.diagnosis:
            if f.speedup is None or f.kind not in memory_side | compute_side:
                continue
            side = "compute" if f.kind in memory_side else "memory"
            shares = [u.share for uid, u in k.units.items() if u.group == side and u.parent is not None
                      and not (f.kind == "bank_conflicts" and uid.startswith("sm__mio"))]
            shares += [v for r, v in k.utilization.items() if v and (r in ("dram", "l2", "l1")) == (side == "memory")]
            if shares and f.speedup > max(1.0, 1 / max(shares)) * (1 + 1e-9):
                wrong.append(f"#{k.raw.index} {f.kind}: ≤{f.speedup:.2f}× past 1 / {max(shares):.2f}")
    assert not wrong, "\n".join(wrong)


@needs_corpus
def test_reference_gemm_coalescing_bound_stops_at_its_xu_pipe() -> None:
    """cutlass ReferenceGemm (s8): its accesses use 11 % of what a coalesced pattern would (≤ 9x by the
    ceiling alone), but its XU pipe (int-to-float conversions) runs at 38 % and coalescing does not change
    that work: up to 1 / 0.38 = 2.6x."""
    k = next(k for k in _kernels("cutlass__report-s8.ncu-rep") if k.raw.index == 1)
    (f,) = [f for f in k.diagnosis if f.kind == "coalescing"]
    xu = k.units["sm__inst_executed_pipe_xu"].share
    assert xu == pytest.approx(0.38, abs=0.01) and f.factor == pytest.approx(0.11, abs=0.01)
    assert f.speedup == pytest.approx(1 / xu) and "XU pipe" in f.speedup_note


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_an_at_limit_verdict_against_nsight_computes_latency_issue_says_why(name: str) -> None:
    """Where Nsight Compute's Bottleneck rule says "Latency Issue" (its SM and memory headlines under
    60 %) and this verdict is at a limit, the limiter is a figure its headlines leave out (L2 throughput
    in a capture whose memory breakdown lacks it) or a roof, and the comparison says so."""
    wrong = []
    for k in _kernels(name):
        latency = any(r.rule == "SOLBottleneck" and r.title == "Latency Issue" for r in k.raw.rules)
        if not latency or k.regime != "at_limit":
            continue
        text = k.to_dict()["rules_comparison"]
        sm = (k.raw.number("sm__throughput.avg.pct_of_peak_sustained_elapsed") or 0) / 100
        memory = (k.raw.number("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed") or 0) / 100
        if "Bottleneck rule reads a latency issue" not in text or max(sm, memory) >= 0.6:
            wrong.append(f"#{k.raw.index}: {text!r} (SM {sm:.0%}, memory {memory:.0%})")
        if k.bound_by in k.units and k.units[k.bound_by].parent is None:
            wrong.append(f"#{k.raw.index}: bound by a headline at {k.limiter_share:.0%} under a latency issue")
    assert not wrong, "\n".join(wrong)


@needs_corpus
def test_cutlass_cp_async_kernels_are_not_called_uncoalesced() -> None:
    """CUTLASS GEMMs load with cp.async: no LDG, so no "uses 0 of every 32 bytes" and no L2 cap at 3 %."""
    for name in ("cutlass__report80.eba551e.ncu-rep", "cutlass__report-s8.ncu-rep"):
        k = _kernels(name)[0]
        assert not [c for c in k.ceilings if c.kind == "sector_use" and "ld_bytes_used_per_sector" in c.evidence]
        assert any("asynchronous copies" in n.reason for n in k.not_applicable)


@needs_corpus
def test_rtx2080ti_sgemm_bank_conflicts_are_nsight_computes_count() -> None:
    k = _kernels("nsight-compute-files__3136_64_64_rtx2080ti_sgemm.ncu-rep")[0]
    c = next(x for x in k.ceilings if x.kind == "bank_conflicts")
    # loads and stores: 141,200 wavefronts, 6,400 conflicts (the pipe's total, 152,084, counts other accesses too);
    # 0.95, not the 0.55 of wavefronts per instruction
    assert c.factor == pytest.approx((141200 - 6400) / 141200)


@needs_corpus
def test_nsight_compute_rules_listed_with_their_speedups() -> None:
    import json

    doc = json.loads(ncu_roofline.analyze(CORPUS / "cudacode__naive.ncu-rep").to_json())
    rules = doc["reports"][0]["kernels"][0]["nsight_compute_rules"]
    assert rules[0]["speedup_pct"] == pytest.approx(16.86, abs=0.01) and rules[0]["speedup_kind"] == "local"
    estimates = [r["speedup_pct"] for r in rules if r["speedup_pct"] is not None]
    assert estimates == sorted(estimates, reverse=True) and len(estimates) == 3
    assert "@section" not in " ".join(r["message"] for r in rules)  # section links read as their names


@needs_corpus
def test_web_links_in_rule_messages_read_as_label_and_address() -> None:
    doc = json.loads(ncu_roofline.analyze(CORPUS / "cs599k__silu-pytorch.ncu-rep").to_json())
    messages = " ".join(r["message"] for k in doc["reports"][0]["kernels"] for r in k["nsight_compute_rules"])
    assert "@url:" not in messages
    assert ("Hardware Model (https://docs.nvidia.com/nsight-compute/ProfilingGuide/index.html#metrics-hw-model)"
            in messages)


def test_rule_text_is_escaped_in_the_page() -> None:
    from conftest import make_kernel
    from test_model import base_metrics

    from ncu_roofline.api.analysis import Analysis, ReportResult
    from ncu_roofline.api.kernel import analyse_kernel
    from ncu_roofline.readers.rules import rule_from_dict
    from ncu_roofline.render import REPORT, render

    rule = rule_from_dict({"rule_identifier": "CPIStall", "name": "Warp Stall", "section_identifier": "X",
                           "rule_message": {"title": "<b>t</b>", "message": "</script><img src=x> & @section:A:B@",
                                            "type": 2},
                           "speedup_estimation": {"type": 1, "speedup": 12.5}})
    k = analyse_kernel(make_kernel(base_metrics(), rules=[rule]))
    html = render(REPORT, Analysis([ReportResult("/tmp/x.ncu-rep", "ncu-rep", "2025.1", [k])], []), "html")
    assert "</script><img" not in html and "<b>t</b>" not in html
    assert "&lt;/script&gt;&lt;img src=x&gt; &amp; B" in html and "est. 12 % (global)" in html


@needs_corpus
def test_l1_chart_bytes_and_peak_derived_from_the_writeback_counter() -> None:
    """L1 bytes = write-back active cycles x 128 (Nsight Compute's chart definition); peak = rate ÷ its %."""
    naive = _kernels("cudacode__naive.ncu-rep")[0]
    cycles = naive.raw.number("l1tex__lsu_writeback_active_mem_lg.sum")
    pct = naive.raw.number("l1tex__lsu_writeback_active_mem_lg.sum.pct_of_peak_sustained_elapsed")
    duration = naive.q.duration_s.value
    assert naive.q.bytes["l1"].value == pytest.approx(cycles * 128) and naive.q.bytes["l1"].definition == "chart"
    assert naive.peaks["l1"].value == pytest.approx(cycles * 128 / duration / (pct / 100))
    assert naive.utilization["l1"] == pytest.approx(pct / 100)
    copy = _kernels("cudaprogramming__smemTranspose.ncu-rep")[1]  # copyGmem: write-back, not its global subset
    assert copy.q.bytes["l1"].value == pytest.approx(201_326_592) and copy.q.bytes["l1"].definition == "chart"
    # on Hopper the cycle counter x 128 is exactly the newer derived byte metric
    hopper = _kernels("cs599k__2025-04-21-v1.ncu-rep")[0]
    derived = hopper.raw.number("derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.per_second")
    assert hopper.raw.number("l1tex__lsu_writeback_active_mem_lgds.sum") * 128 == pytest.approx(
        derived * hopper.q.duration_s.value, rel=1e-6)


@needs_corpus
def test_a_cap_names_the_fp64_pipe_where_volta_shared_pipe_ties_it() -> None:
    """On a V100 the shared pipe counts FP64 work too (its share equals the FP64 pipe's exactly): among
    equal shares the cap names the FP64 pipe, the earlier and more specific unit."""
    k = _kernels("gpu-workshop__MW_DivToMult.ncu-rep")[2]
    units = k.units
    assert units["sm__pipe_shared_cycles_active"].share == units["sm__pipe_fp64_cycles_active"].share
    (gap,) = [f for f in k.diagnosis if f.kind == "intensity_gap"]
    assert "by FP64 pipe at 52%" in gap.speedup_note and "shared pipe" not in gap.speedup_note


@needs_corpus
def test_no_latency_bound_where_the_report_measures_few_limits() -> None:
    """readSegmentUnroll holds DRAM reads and L1 global bytes, no SM or memory throughput and no L2
    roof: readOffsetUnroll4's DRAM reads at 31 % say nothing of its L2 (it reads 8.4 MB from DRAM
    but loads 33.6 MB through L1), so its latency finding states no bound."""
    kernels = [k for k in _kernels("cudaprogramming__readSegmentUnroll.ncu-rep")
               if k.raw.name.startswith("readOffsetUnroll4")]
    assert kernels
    for k in kernels:
        assert "sm_throughput" not in k.units and "l2" not in k.utilization
        latency = next(f for f in k.diagnosis if f.kind == "latency")
        assert latency.speedup is None and latency.text.startswith("the busiest limit the report holds, DRAM")
        assert latency.speedup_note.startswith("no bound: the report holds neither")


@needs_corpus
def test_a_library_kernels_next_steps_are_the_librarys() -> None:
    """CUB's radix sort, PyTorch's elementwise and cuBLAS's GEMM kernels: no next step tells the reader to edit their
    code; each says whose code it is and what a caller can change, and so does the verdict where it
    names a lever (a kernel at a limit). Other kernels never read so."""
    from ncu_roofline.passes.libraries import library_of
    from ncu_roofline.views.report import verdict

    seen: set[str] = set()
    worded: set[str | None] = set()
    for name in FILES:
        for k in _kernels(name):
            library = library_of(k)
            own_code = f"This is {library}'s own kernel: the next step says"
            if k.regime == "at_limit":  # its verdict names a lever: whose it is too
                assert (own_code in verdict(k)) == (library is not None), (name, k.raw.name, verdict(k))
                worded.add(library)
            else:
                assert "own kernel: the next step" not in verdict(k)
            for f in k.diagnosis:
                owned = f.action.startswith(f"this is {library}'s own kernel, not code to edit")
                if library is None:
                    assert "own kernel, not code to edit" not in f.action
                elif f.kind == "tail_effect":
                    assert f.action.startswith(f"the grid is {library}'s choice")
                elif f.action.endswith(": the findings below say what holds the kernel back"):
                    assert not owned  # a pointer to the next findings, not a fix to wrap
                else:
                    assert owned, (name, k.raw.name, f.kind, f.action)
                    seen.add(library)
    # cuBLAS's kernels of the corpus: two with too little work, and the RTX 3080 sgemm beside gemm_v9 at a limit
    assert seen == {"CUB", "PyTorch", "cuBLAS"} and worded == {None, "CUB", "PyTorch", "cuBLAS"}


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_what_is_said_does_not_depend_on_the_metrics_being_kept(name: str) -> None:
    """`report` lets each launch's metrics go once it is analysed; groups are diagnosed, and verdicts worded,
    later. Every group's findings and every verdict read the same as with every metric at hand."""
    from ncu_roofline.views.report import verdict

    def said(analysis: ncu_roofline.Analysis) -> list[object]:
        out: list[object] = []
        for rep in analysis.reports:
            out += [(k.raw.index, verdict(k)) for k in rep.kernels]
            out += [(g.display_name, verdict(g.summary), [f.to_dict() for f in g.summary.diagnosis])
                    for g in analysis.groups_of(rep)]
        return out

    kept = ncu_roofline.analyze(CORPUS / name)
    let_go = ncu_roofline.analyze(CORPUS / name, keep_metrics=False)
    assert all(not k.raw.metrics for r in let_go.reports for k in r.kernels)
    assert said(let_go) == said(kept)


NO_CAP = "none: this leaves the whole roof"


def _said_of(k: AnalysedKernel) -> list[str]:
    """Every sentence the outputs print about a launch or group: its verdict, findings and ceilings."""
    from ncu_roofline.views.report import verdict

    return [verdict(k), *(f"{f.text}. {f.action}" for f in k.diagnosis),
            *(f"{c.detail}. {c.action}" for c in k.ceilings)]


def _with_groups(name: str) -> list[AnalysedKernel]:
    analysis = ncu_roofline.analyze(CORPUS / name)
    return [k for rep in analysis.reports for k in [*rep.kernels, *(g.summary for g in analysis.groups_of(rep))]
            if k.usable]


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_no_advice_about_accesses_the_kernel_does_not_make(name: str) -> None:
    """No vector loads for a kernel that executed no global loads (neither by SASS nor by L1's requests; and
    where one of them counts loads, vector loads stay advised); no padding or swizzling against bank
    conflicts where Nsight Compute counted none; a ceiling that leaves the whole roof asks for nothing."""
    wrong = []
    for k in _with_groups(name):
        counts = [v for n in ("smsp__sass_inst_executed_op_global_ld.sum",
                              "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum") if (v := k.raw.number(n)) is not None]
        loads = max(counts) if counts else None  # SASS counts miss generic loads: L1's requests count them
        conflicts = k.raw.number("l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum")
        for text in _said_of(k):
            if loads == 0 and "vector loads" in text:
                wrong.append(f"#{k.raw.index} no LDG: {text[:120]}")
            if loads and "cut non-FP instructions" in text and "vector loads" not in text:
                wrong.append(f"#{k.raw.index} {loads:,.0f} loads, yet no vector loads: {text[:120]}")
            if conflicts == 0 and ("swizzle" in text or "bank-conflicted" in text):
                wrong.append(f"#{k.raw.index} no bank conflicts: {text[:120]}")
        wrong += [f"#{k.raw.index} {c.kind} at 100 %: {c.detail[:60]} / {c.action}" for c in k.ceilings
                  if c.factor >= 0.995 and (c.action != NO_CAP or c.detail.startswith("only"))]
    assert not wrong, "\n".join(wrong)


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_a_busy_unit_is_set_against_bytes_that_count_its_traffic(name: str) -> None:
    """"While L2 bytes reach only N %" only where the L2 bytes hold all but at most a fifth of the traffic: a
    chart definition of L2 -> L1 reads leaves out the stores (32 B a store sector), one of L1's global and local
    write-back the shared memory (at most 128 B a wavefront)."""
    wrong = []
    for k in _with_groups(name):
        for text in _said_of(k)[:2]:  # the verdict and the first finding: the unit limiter's sentences
            said = re.search(r"while (\S+) (?:work|bytes).*? reach(?:es)? only", text)
            if said and k.bound_by in k.units:  # a gap to show: the roof well under the unit (at most 3/4 of it)
                roof = said.group(1).lower()
                if not k.utilization[roof] < 0.75 * k.units[k.bound_by].share:
                    wrong.append(f"#{k.raw.index} {roof} at {k.utilization[roof]:.2f} beside the unit at "
                                 f"{k.units[k.bound_by].share:.2f}: {text[:100]}")
            for level, lv in (("L1", "l1"), ("L2", "l2")):
                if f"while {level} bytes" not in text or "reach only" not in text:
                    continue
                counted, recipe = k.q.bytes[lv].value, k.q.bytes[lv].recipe
                if lv == "l2" and ("xbar2l1tex_read" in recipe or "lts2xbar" in recipe):
                    left_out = 32 * k.raw.number("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum")
                elif lv == "l1" and "mem_lgds" not in recipe:
                    left_out = 128 * k.raw.number("l1tex__data_pipe_lsu_wavefronts_mem_shared.sum")
                else:
                    continue
                if left_out > 0.2 * (counted + left_out):
                    wrong.append(f"#{k.raw.index} {level}: {left_out:,.0f} B left out of {counted:,.0f}: {text[:100]}")
    assert not wrong, "\n".join(wrong)


@needs_corpus
def test_the_stores_of_a_transpose_are_not_compared_with_l2_reads() -> None:
    """naiveGmem: the crossbar-to-L2 requests are 91 % busy with 16,777,216 store sectors (537 MB, 32 per store
    request) while the chart's L2 bytes count 67,108,864 bytes of reads, fewer than DRAM's 102 MB: its L2 bytes
    are then the SMs' tag traffic (604 MB, the stores included), and only those are set against the unit ("25 %"),
    never the reads alone ("1 %"). naive_gemm keeps its contrast: 65,536 shared wavefronts (8.4 MB at most)
    beside 8.59 GB of L1 write-back."""
    from ncu_roofline.views.report import verdict

    (transpose,) = [k for k in _kernels("cudaprogramming__smemTranspose.ncu-rep") if k.raw.name == "naiveGmem"]
    assert transpose.raw.number("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum") == 16_777_216
    l2 = transpose.q.bytes["l2"]
    assert l2.definition == "tags" and l2.value == 32 * transpose.raw.number("lts__t_sectors_srcunit_tex.sum")
    assert l2.value > 32 * 16_777_216
    assert round(transpose.units[transpose.bound_by].share, 2) == 0.91
    assert "reach only 1%" not in verdict(transpose) and "reach only 25%" in transpose.diagnosis[0].text
    gemm = _kernels("cudacode__naive.ncu-rep")[0]
    assert gemm.raw.number("l1tex__data_pipe_lsu_wavefronts_mem_shared.sum") == 65_536
    assert round(gemm.q.bytes["l1"].value / 1e9, 2) == 8.59
    assert "while L1 bytes" in verdict(gemm) and "reach only 42 %" in verdict(gemm)


@needs_corpus
def test_an_rng_kernel_busy_issuing_is_told_of_its_alu_not_of_vector_loads() -> None:
    """PyTorch's Philox kernel (silu-v8 #0) executes no global loads; its issue slots are 67 % busy and its ALU
    pipe 60 % (Nsight Compute's HighPipeUtilization names the ALU too)."""
    from ncu_roofline.views.report import verdict

    k = _kernels("cs599k__silu-2025-04-18-v8.ncu-rep")[0]
    assert k.raw.number("smsp__sass_inst_executed_op_global_ld.sum") == 0 and k.bound_by == "sm__issue_active"
    text = verdict(k)
    assert "issue an instruction in 67% of cycles" in text and "the busiest pipe is the ALU pipe, at 60%" in text
    assert "vector loads" not in text and "almost every cycle" not in text


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_mma_instructions_are_tensor_work_at_any_pipe_share(name: str) -> None:
    """A kernel whose tensor pipe counted IMMA, DMMA or GMMA instructions did tensor work that no counter here
    turns into FLOP: its FLOP are incomplete, never a negligible pipe with a CUDA-core total (or, where the report
    holds no CUDA-core count either, there are no FLOP counts at all: accelsim's B200 basic-set capture)."""
    from ncu_roofline.knowledge.recipes import MMA_INSTRUCTION_SHARES

    wrong = [f"#{k.raw.index} {k.raw.name}: {k.flags}" for k in _kernels(name)
             if any((k.raw.number(n) or 0) > 0 for n in MMA_INSTRUCTION_SHARES)
             and k.q.tensor_pipe_utilization is not None and not k.q.tensor_paths
             and ("tensor_pipe_negligible" in k.flags
                  or not ("flop_incomplete" in k.flags or ("no_flop_counts" in k.flags and k.total_flop is None
                          and all(k.q.flop[p] is None for p in ("fp64", "fp32", "fp16")))))]
    assert not wrong, "\n".join(wrong)


@needs_corpus
def test_an_int8_cutlass_gemm_of_a_twelfth_of_a_wave_is_tensor_work() -> None:
    """cutlass report-s8 #0: mma.sync on int8 (IMMA at 5.7 % of its peak over the active cycles, 7,488 ldmatrix)
    in 36 blocks for 108 SMs: its tensor pipe's elapsed share is 2.85 %, under the 5 % that counts as noise
    without MMA instructions. Its 147,456 FP32 epilogue FLOP are not its work: no FLOP/s, no point."""
    k = _kernels("cutlass__report-s8.ncu-rep")[0]
    assert round(k.raw.number("sm__inst_executed_pipe_tensor_op_imma.avg.pct_of_peak_sustained_active"), 2) == 5.70
    assert round(k.q.tensor_pipe_utilization.value, 4) == 0.0285 and k.q.flop["fp32"].value == 147_456
    assert "flop_incomplete" in k.flags and "tensor_pipe_negligible" not in k.flags
    assert k.achieved_flop_per_s is None and k.intensity == {"dram": None, "l2": None, "l1": None}


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_no_gain_from_a_fix_that_leaves_the_bounding_limit_as_it_is(name: str) -> None:
    """A kernel at its limit gains nothing from a fix that leaves that limit's work as it is: no projected
    speed-up capped by the limiter itself (its headroom is there whatever is fixed)."""
    from ncu_roofline.views.labels import long_label

    wrong = []
    for k in _with_groups(name):
        if k.regime != "at_limit" or k.bound_by is None:
            continue
        labels = {long_label(k.bound_by), f"the {k.bound_by.upper()} roof"}
        if k.bound_by in k.units:
            labels.add(k.units[k.bound_by].label)
        wrong += [f"#{k.raw.index} {f.kind} ≤{f.speedup:.2f}×: {f.speedup_note}" for f in k.diagnosis
                  if f.speedup is not None and any(f" by {label} at " in f.speedup_note for label in labels)]
    assert not wrong, "\n".join(wrong)


@needs_corpus
def test_coalescing_gives_nothing_to_a_gemm_bound_by_load_store_issue() -> None:
    """naive_gemm: the LSU pipe (load/store instruction issue) is at 83 %, its limit; its loads touch 2.5 sectors
    per request, a broadcast load (1 sector for 4 bytes) beside coalesced ones, and Nsight Compute counts no
    excessive sectors: no coalescing finding at all (an average of bytes per sector said "2.1 would do")."""
    k = _kernels("cudacode__naive.ncu-rep")[0]
    assert k.bound_by == "sm__inst_executed_pipe_lsu" and round(k.limiter_share, 2) == 0.83
    assert not [f for f in k.diagnosis if f.kind == "coalescing"]
    assert any(n.kind == "coalescing" and "no excessive global sectors" in n.reason for n in k.not_applicable)


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_no_coalescing_loss_where_nsight_compute_counts_no_excess(name: str) -> None:
    """Where Nsight Compute's own count of excessive global sectors is 0, no coalescing cap is below 1."""
    wrong = [f"#{k.raw.index} {k.raw.name[:40]}: {c.detail}" for k in _kernels(name)
             if k.raw.number("derived__memory_l2_theoretical_sectors_global_excessive") == 0
             for c in k.ceilings if c.kind == "coalescing" and c.factor < 1]
    assert not wrong, "\n".join(wrong)


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_no_fp16_work_where_nsight_compute_saw_no_fp16_instruction_issued(name: str) -> None:
    """HFMA2s counted on Ampere or later while Nsight Compute's FP16 datapath share is 0 (and no HADD2/HMUL2) are
    the compiler's HFMA2.MMA register moves: no FP16 FLOP, no FP16 dominant precision (7 kernels of FP32 silu and
    rms_norm on A100/H100 had 4-277 M FP16 "FLOP")."""
    wrong = []
    for k in _kernels(name):
        shares = [k.raw.number(f"sm__inst_executed_pipe_{pipe}.avg.pct_of_peak_sustained_active")
                  for pipe in ("fp16", "fma_type_fp16")]
        halves = [k.raw.number(f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum") for op in ("hadd", "hmul")]
        if float(k.raw.compute_capability or 0) < 8 or not any(v == 0 for v in shares) \
                or any(v is not None and v > 0 for v in shares + halves):
            continue
        fp16 = k.q.flop.get("fp16")
        if (fp16 is not None and fp16.value > 0) or k.dominant_precision == "fp16":
            wrong.append(f"#{k.raw.index} {k.raw.name[:40]}: FP16 {fp16.value if fp16 else None}")
    assert not wrong, "\n".join(wrong)


def _nsight_excess(k: AnalysedKernel) -> tuple[float, float] | None:
    """(excessive, total) global sectors as Nsight Compute's source counters count them, where held."""
    for prefix in ("memory_l2_theoretical_sectors_global", "memory_l2_sectors_global"):  # the 2021-era name second
        total, ideal = (k.raw.number(f"{prefix}{s}") for s in ("", "_ideal"))
        if total is not None and ideal is not None and total > 0:
            return total - ideal, total
    return None


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_coalescing_caps_claim_the_excessive_sectors_nsight_compute_counts(name: str) -> None:
    """Where Nsight Compute counts excessive global sectors, there is a coalescing cap, and the sectors the caps
    call excessive (each direction's sectors × (1 - factor)) are Nsight Compute's count within 5 % (the MW halo
    exchanges, nodeByPoint5 and the transpose hold no bytes-per-sector ratio, or only its count is right)."""
    wrong = []
    for k in _kernels(name):
        excess = _nsight_excess(k)
        if excess is None or excess[0] == 0:
            continue
        caps = [c for c in k.ceilings if c.kind == "coalescing"]
        claimed = sum(v * (1 - c.factor) for c in caps for key, v in c.evidence.items()
                      if key in ("ld_sectors", "st_sectors", "global_sectors"))
        if not caps or not excess[0] / 1.05 <= claimed <= excess[0] * 1.05:
            wrong.append(f"#{k.raw.index} {k.raw.name[:40]}: Nsight Compute {excess[0]:,.0f} of {excess[1]:,.0f}, "
                         f"caps claim {claimed:,.0f}")
    assert not wrong, "\n".join(wrong)


@needs_corpus
def test_coalescing_caps_quote_nsight_computes_rule() -> None:
    """The MW halo exchange: Nsight Compute's rule says "16384 excessive sectors (33% of the total 49152 sectors)";
    the cap says the same figures."""
    k = next(k for k in _kernels("gpu-workshop__MW_Baseline.ncu-rep") if k.raw.name.startswith("set_halo_values"))
    rule = next(r.message for r in k.raw.rules if r.rule == "UncoalescedGlobalAccess" and r.message)
    assert "16384 excessive sectors (33% of the total 49152 sectors)" in rule
    cap = next(c for c in k.ceilings if c.kind == "coalescing")
    assert cap.factor == pytest.approx(32768 / 49152)
    assert "touch 49,152 sectors" in cap.detail and "16,384 excessive sectors (33% of them" in cap.detail


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_latency_is_named_only_where_every_limit_was_measured(name: str) -> None:
    """"Limited by latency … not by a roof or a unit" only where the report holds Nsight Compute's SM and memory
    throughputs, or a roof at every memory level; readSegmentUnroll's capture holds DRAM reads alone."""
    from ncu_roofline.views.report import verdict

    wrong = []
    for k in _with_groups(name):
        text = verdict(k)
        headlines = all(k.raw.number(n) is not None for n in (
            "sm__throughput.avg.pct_of_peak_sustained_elapsed",
            "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"))
        roofs = all(lv in k.utilization for lv in ("dram", "l2", "l1"))
        if "not by a roof or a unit" in text and not (headlines or roofs):
            wrong.append(f"#{k.raw.index}: {text[:100]}")
        if k.regime == "latency" and not (headlines or roofs) and "the report holds" not in text:
            wrong.append(f"#{k.raw.index} says nothing of what it lacks: {text[:100]}")
    assert not wrong, "\n".join(wrong)


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_local_memory_is_named_where_it_is_a_twentieth_of_the_memory_instructions(name: str) -> None:
    """A local-memory finding exactly where local loads and stores are 5 % or more of the memory instructions
    (global and local, warp level), by Nsight Compute's own counts."""
    wrong = []
    for k in _with_groups(name):
        local = [k.raw.number(n) for n in ("sass__inst_executed_local_loads", "sass__inst_executed_local_stores")]
        glob = [k.raw.number(n) for n in ("sass__inst_executed_global_loads", "sass__inst_executed_global_stores")]
        if None in local or None in glob:
            continue
        notable = sum(local) > 0 and sum(local) >= 0.05 * (sum(local) + sum(glob))
        named = any(f.kind == "local_memory" for f in k.diagnosis)
        if notable != named:
            wrong.append(f"#{k.raw.index} local {sum(local):,.0f} global {sum(glob):,.0f}: finding {named}")
    assert not wrong, "\n".join(wrong)


@needs_corpus
def test_a_kernel_that_spills_is_told_so() -> None:
    """PMKID (GTX 1080, 253 registers a thread): 17,991,800 local loads and 20,253,084 local stores against
    2,720,575 global loads and 2,753,165 global stores: 87 % of its memory instructions; 164,023,478 of its
    300,861,401 L2 transactions (55 %) are local."""
    (k,) = _kernels("pmkid-brute-force__profile.nsight-cuprof-report")
    (f,) = [f for f in k.diagnosis if f.kind == "local_memory"]
    local, total = 17_991_800 + 20_253_084, 17_991_800 + 20_253_084 + 2_720_575 + 2_753_165
    assert round(local / total, 2) == 0.87 and round(164_023_478 / (164_023_478 + 136_837_923), 2) == 0.55
    assert f.text == (f"{local:,} of its {total:,} global and local memory instructions (warp level) are local loads "
                      "and stores (87%), with 253 registers per thread: register spills or a local array; they make "
                      "55% of its global and local L2 transactions")
    assert f.speedup is None and "-Xptxas -v" in f.action


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_the_verdict_and_the_latency_finding_say_the_same_of_warps(name: str) -> None:
    from ncu_roofline.views.report import verdict

    wrong = []
    for k in _with_groups(name):
        latency = [f.text for f in k.diagnosis if f.kind == "latency"]
        if latency and "not too few warps" in latency[0] and "too few warps in flight" in verdict(k):
            wrong.append(f"#{k.raw.index}: {verdict(k)[:120]}")
    assert not wrong, "\n".join(wrong)


@needs_corpus
def test_the_top_finding_is_the_one_worth_most_in_markdown_and_csv() -> None:
    """PMKID: too little work (≤20×) before the local-memory finding, which projects no gain; naive_gemm: no
    finding projects a gain (coalescing gives nothing under its LSU limit), so the table names the busy unit."""
    import csv
    import io

    from click.testing import CliRunner

    from ncu_roofline.cli import main

    for name, label, kind in (("pmkid-brute-force__profile.nsight-cuprof-report", "too little work ≤20×",
                               "too_little_work"), ("cudacode__naive.ncu-rep", "busy unit", "unit_throughput")):
        md = CliRunner().invoke(main, ["report", str(CORPUS / name), "-f", "md"]).stdout
        row = next(line for line in md.splitlines() if line.startswith("| ") and " | 100.0 % | " in line)
        assert row.endswith(f"| {label} |")
        out = CliRunner().invoke(main, ["report", str(CORPUS / name), "-f", "csv", "--groups"]).stdout
        (group,) = list(csv.DictReader(io.StringIO(out)))
        assert group["top_finding"] == kind


@needs_corpus
def test_a_latency_row_shows_its_latency_finding() -> None:
    """readOffsetUnroll2 (DRAM reads alone, below the threshold): no finding projects a gain; the table shows
    the latency finding, not the busy unit that points to it."""
    from click.testing import CliRunner

    from ncu_roofline.cli import main

    md = CliRunner().invoke(main, ["report", str(CORPUS / "cudaprogramming__readSegmentUnroll.ncu-rep"), "-f", "md"])
    rows = [line for line in md.stdout.splitlines() if line.startswith("| readOffsetUnroll2")]
    assert rows and all(row.endswith("| latency or an unmeasured limit | latency |") for row in rows)


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_a_stated_cap_gives_the_stated_bound(name: str) -> None:
    """"capped at 1 / s" beside a bound of b: 1 / s rounds to b as printed (s with three digits)."""
    wrong = []
    for k in _with_groups(name):
        for f in k.diagnosis:
            cap = re.search(r"capped at 1 / ([0-9.]+)", f.speedup_note)
            if cap and f.speedup is not None and abs(1 / float(cap.group(1)) - f.speedup) > 0.006 * f.speedup:
                wrong.append(f"#{k.raw.index} {f.kind}: 1 / {cap.group(1)} against ≤{f.speedup:.3g}×")
    assert not wrong, "\n".join(wrong)


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_instruction_roofline_points_are_under_their_roofs(name: str) -> None:
    """Each memory space's point counts the same instructions on both axes (Ding & Williams): its height is
    that space's load/store warp instructions per second, never the kernel's warp instructions of all kinds,
    so it is under the issue peak and under its intensity × the L1 transaction peak."""
    wrong = []
    for k in _kernels(name):
        ir = k.instruction_roofline
        if not ir:
            continue
        duration = k.q.duration_s.value if k.q.duration_s is not None else None
        for space in ("global", "shared"):
            point = ir.get(space)
            if point is None or duration is None:
                continue
            rate = point["inst"] / duration
            if not math.isclose(point["inst_per_s"], rate, rel_tol=1e-12) or rate > ir["warp_inst_per_s"] * (1 + 1e-9):
                wrong.append(f"#{k.raw.index} {space}: {point['inst_per_s']:.4g} inst/s, not its own {rate:.4g}")
            issue = ir.get("issue_peak_warp_inst_per_s")
            if issue is not None and point["inst_per_s"] > issue * 1.01:
                wrong.append(f"#{k.raw.index} {space}: {point['inst_per_s']:.4g} inst/s over the issue peak "
                             f"{issue:.4g}")
            l1 = ir.get("l1_transactions_per_s_peak")
            if space == "global" and l1 is not None and point["inst_per_s"] > point["inst_per_transaction"] * l1 * 1.01:
                wrong.append(f"#{k.raw.index} global: {point['inst_per_s']:.4g} inst/s over its L1 roof "
                             f"{point['inst_per_transaction'] * l1:.4g}")
    assert not wrong, "\n".join(wrong)


@needs_corpus
def test_instruction_roofline_chart_draws_each_spaces_own_rate() -> None:
    """The H100 capture whose global point was drawn 5× above its L1 roof (all warp instructions on y)."""
    from ncu_roofline.views.report import build_report_view

    view = build_report_view(ncu_roofline.analyze(CORPUS / "cs599k__2025-04-21-v1.ncu-rep"))
    (chart,) = view["instruction_charts"]
    l1 = next(r["value"] for r in chart["roofs"] if r["name"] == "l1")
    issue = next(r["value"] for r in chart["roofs"] if r["name"] == "issue")
    assert chart["points"]
    for p in chart["points"]:
        assert p["flop_per_s"] <= min(issue, p["intensity"] * l1) * 1.01, p


@needs_corpus
def test_fma_balance_bound_counts_only_the_pairs_that_can_fuse() -> None:
    """compute_tendencies_x_279_gpu: dadd 1.92 G, dmul 3.40 G, dfma 8.02 G thread instructions. At most
    min(dadd, dmul) pairs fuse: 13.35 G instructions become 11.43 G, ≤1.17× (not 1 / 0.80 = 1.25×)."""
    (k,) = [k for k in _kernels("gpu-workshop__MW_Baseline.ncu-rep") if k.raw.name == "compute_tendencies_x_279_gpu"]
    c = next(c for c in k.ceilings if c.kind == "fma_balance" and c.roof == "fp64")
    a, m, f = (c.evidence[f"fp64_{op}_thread_inst"] for op in ("dadd", "dmul", "dfma"))
    expected = (a + m + f) / (a + m + f - min(a, m))
    assert expected == pytest.approx(1.168, abs=1e-3) and c.factor == pytest.approx(0.80, abs=5e-3)
    finding = next(x for x in k.diagnosis if x.kind == "fma_balance")
    assert finding.speedup == pytest.approx(expected, rel=1e-9)


def test_fma_balance_of_adds_alone_has_no_fix_bound() -> None:
    """A matrix addition (adds only) reaches half the FMA roof at most, but has nothing to fuse."""
    from ncu_roofline.passes.ceilings import Ceiling
    from ncu_roofline.passes.fusion import fma_action, fusion_bound

    c = Ceiling("fma_balance", "fp32", 0.5, 1e12, {"fp32_fadd_thread_inst": 1e6, "fp32_fmul_thread_inst": 0.0,
                                                   "fp32_ffma_thread_inst": 0.0, "fma_share": 0.0},
                "0% of FP32 instructions are FMA", fma_action("fp32", 1e6, 0.0))
    speedup, note = fusion_bound(c.roof, c.factor, c.evidence)
    assert speedup is None and "no pair to fuse" in note
    assert "no multiplies to pair with" in c.action and "fuse multiplies" not in c.action
    assert "already an FMA" in fma_action("fp32", 0.0, 0.0)
    assert fusion_bound("fp32", 1.0, {"fp32_fadd_thread_inst": 0.0, "fp32_fmul_thread_inst": 0.0,
                                      "fp32_ffma_thread_inst": 5.0})[1].endswith("work is FMA only)")


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_at_the_roof_never_says_no_speed_up_against_its_own_intensity_gap(name: str) -> None:
    wrong = []
    for k in _kernels(name):
        head = next((f for f in k.diagnosis if f.kind == "at_limit"), None)
        gap = next((f for f in k.diagnosis if f.kind == "intensity_gap" and f.speedup is not None), None)
        if head is not None and gap is not None and "intensity-gap finding bounds" not in head.speedup_note:
            wrong.append(f"#{k.raw.index}: {head.speedup_note!r} beside a gap of {gap.speedup:.3g}×")
    assert not wrong, "\n".join(wrong)


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_no_shared_memory_advice_for_a_kernel_without_shared_memory(name: str) -> None:
    """`esmm basic` allocates no shared memory (static and dynamic 0; the 1 KB of launch__shared_mem_per_block
    is the driver's): its busy L1 wavefronts cannot be bank conflicts, and no tile is there to pad."""
    wrong = []
    for k in _kernels(name):
        static = k.raw.number("launch__shared_mem_per_block_static")
        dynamic = k.raw.number("launch__shared_mem_per_block_dynamic")
        if static != 0 or dynamic != 0:
            continue
        for f in k.diagnosis:
            words = f"{f.text} {f.action}"
            if "shared-memory tiles" in words or "bank-conflicted" in words:
                wrong.append(f"#{k.raw.index} {k.raw.name}: {words[:120]}")
    assert not wrong, "\n".join(wrong)


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_a_kernel_that_reads_its_data_once_gets_no_intensity_gap_speedup(name: str) -> None:
    """A launch or group whose DRAM reads match what its loads asked for, with few L1 hits (`reads_once`), can
    gain no reuse within itself: its DRAM intensity gap projects no speed-up (which would rank it first, "up to
    8.4×" on a matrix addition at 88 % of DRAM), and its advice is fusion or a narrower type, not tiling."""
    from ncu_roofline.passes.reuse import reads_once

    wrong = []
    for k in _with_groups(name):
        once = reads_once(k.reuse)
        for f in k.diagnosis:
            if once is None or f.kind != "intensity_gap" or f.roof != "dram":
                continue
            if f.speedup is not None:
                wrong.append(f"#{k.raw.index} {k.raw.name[:40]}: reads once ({once:.2f}) but up to {f.speedup:.2f}×")
            if "reuse tiles" in f.action or "fuse with the kernels" not in f.action:
                wrong.append(f"#{k.raw.index} {k.raw.name[:40]}: {f.action[:100]}")
    assert not wrong, "\n".join(wrong)


def _sm_active_share(k: AnalysedKernel) -> float | None:
    """SM active ÷ elapsed cycles, straight from the report (the elapsed stored, or the SM clock × duration)."""
    active, elapsed = k.raw.number("sm__cycles_active.avg"), k.raw.number("sm__cycles_elapsed.avg")
    clock = k.raw.metrics.get("sm__cycles_elapsed.avg.per_second")
    if elapsed is None and clock is not None and clock.unit in ("hz", "cycle/second", "cycle/s") and k.q.duration_s:
        elapsed = float(clock.value) * k.q.duration_s.value
    if elapsed is None:
        elapsed = k.raw.number("gpc__cycles_elapsed.max")  # the GPCs' clock is the SMs
    return active / elapsed if active is not None and elapsed else None


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_latency_names_idle_sms_and_leaves_the_tail_its_part(name: str) -> None:
    """Where the SMs had no warp for 20 % or more of the run (rms_norm_vector_kernel_float4: active 63 % of the
    elapsed cycles), the latency finding names idle SMs, never stalls within warps alone; neither its bound nor the
    tail effect's passes the whole headroom (1 / the limiter's share), and beside a tail the latency says the
    tail's bound is within its own, not more on top (2.57x and 1.19x were both claimed of a 2.57x headroom)."""
    wrong = []
    for k in _kernels(name):
        latency = next((f for f in k.diagnosis if f.kind == "latency"), None)
        if latency is None:
            continue
        active = _sm_active_share(k)
        where = f"#{k.raw.index} {k.raw.name[:40]}"
        if active is not None and active <= 0.8 - 1e-9 and "idle SMs before stalls within warps" not in latency.text:
            wrong.append(f"{where}: SMs active {active:.0%} of the run, yet: {latency.text[-90:]}")
        if active is not None and active > 0.8 + 1e-9 and "idle SMs" in latency.text:
            wrong.append(f"{where}: SMs active {active:.0%}, called idle")
        tail = next((f for f in k.diagnosis if f.kind == "tail_effect"), None)
        share = k.limiter_share
        for f in (latency, tail):
            if f is not None and f.speedup and share and f.speedup > 1 / share * (1 + 1e-9):
                wrong.append(f"{where}: {f.kind} {f.speedup:.2f}x past a {1 / share:.2f}x headroom")
        if tail and tail.speedup and latency.speedup and "is part of it, not more on top" not in latency.speedup_note:
            wrong.append(f"{where}: the latency does not say the tail's {tail.speedup:.2f}x is within it")
    assert not wrong, "\n".join(wrong)


@needs_corpus
def test_an_idle_sm_latency_keeps_what_the_occupancy_says_of_the_active_cycles() -> None:
    """The Triton rms_norm (GH200): SMs idle 25 % of the run, so the latency finding names idle SMs first, then,
    for the active cycles, the 50 % theoretical occupancy that caps the warps (56 registers a thread); Nsight
    Compute's largest estimate, Theoretical Occupancy (50 %), agrees with that."""
    k = _kernels("cs599k__rms_norm_triton_looping.ncu-rep")[0]
    (latency,) = [f for f in k.diagnosis if f.kind == "latency"]
    assert "idle SMs before stalls within warps" in latency.text
    assert "; in their active cycles (achieved occupancy 43% of a theoretical 50%)" in latency.text
    assert "the theoretical occupancy of 50% caps the warps in flight" in latency.action
    text = k.to_dict()["rules_comparison"]
    assert text.startswith("Nsight Compute's largest estimated speed-up (Theoretical Occupancy, 50 %) agrees")


@needs_corpus
def test_the_worth_most_list_says_its_shares_do_not_add() -> None:
    """BIGCROSS3's searchKernelCOSStree: latency (≤5.06×, 80 % of the GPU time) and lane efficiency (≤1.85×,
    46 %) are fixes that compound; the Markdown list says each share is for its fix alone."""
    from ncu_roofline.render import REPORT, RenderOptions, render

    md = render(REPORT, ncu_roofline.analyze(CORPUS / "self-join-mistic__profileBIGCROSS3.out.ncu-rep"), "md",
                RenderOptions())
    head = next(line for line in md.splitlines() if line.startswith("Worth most to the program"))
    assert "each for its fix alone: the shares of one kernel's fixes do not add up" in head


@needs_corpus
def test_a_section_with_several_bounds_says_they_do_not_add() -> None:
    """The HTML section of the same kernel says it under its findings; a section with one bound does not."""
    import re

    from ncu_roofline.render import REPORT, RenderOptions, render

    page = render(REPORT, ncu_roofline.analyze(CORPUS / "self-join-mistic__profileBIGCROSS3.out.ncu-rep"), "html",
                  RenderOptions())
    sections = re.findall(r'<details class="kernel".*?</details>', page, flags=re.S)
    counts = [section.count("Fixing this could make the kernel up to") for section in sections]
    assert max(counts) > 1  # searchKernelCOSStree's latency and lane efficiency
    for section, bounds in zip(sections, counts, strict=True):
        said = "fixes of one kernel compound or overlap, so their gains do not add up" in section
        assert said == (bounds > 1), (bounds, said)


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_a_latency_at_the_launchs_occupancy_names_what_nsight_compute_says_limits_it(name: str) -> None:
    """Where the warps that run are all the launch allows, the latency finding names the resource Nsight Compute's
    launch__occupancy_limit_* gives the fewest blocks per SM (searchKernelCOSStree: registers, 1 block, 145 per
    thread; the Triton rms_norm: registers, 4 blocks; nodeCalculationsKernel: the blocks-per-SM limit, 32)."""
    names = {"registers": "registers", "shared_mem": "shared memory", "blocks": "the blocks-per-SM limit",
             "warps": "the warp slots"}
    wrong, seen = [], 0
    for k in _kernels(name):
        limits = {names[n]: v for n in names if (v := k.raw.number(f"launch__occupancy_limit_{n}")) is not None}
        for f in k.diagnosis:
            if f.kind != "latency" or "with as many warps as the launch allows" not in f.text or not limits:
                continue
            seen += 1
            fewest = min(limits.values())
            binding = [n for n, v in limits.items() if v == fewest]
            if f"({' and '.join(binding)} allow" not in f.text or f" {fewest:.0f} block" not in f.text:
                wrong.append(f"#{k.raw.index} {k.raw.name[:40]}: {limits} / {f.text[-120:]}")
    assert not wrong, "\n".join(wrong)
    if name == "self-join-mistic__profileBIGCROSS3.out.ncu-rep":
        assert seen and "fewer registers per thread than its 145" in next(
            f.action for k in _kernels(name) for f in k.diagnosis if f.kind == "latency")


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_idle_compute_pipes_are_called_expected_only_at_a_memory_limit(name: str) -> None:
    """"compute pipes left idle, as they are in a kernel at its memory limit" only where the limiter is a memory level
    or a memory unit (by Nsight Compute's own grouping), and the set-aside reason quoted is one of the kernel's."""
    from ncu_roofline.knowledge import throughputs as T

    wrong = []
    for k in _kernels(name):
        text = k.to_dict()["rules_comparison"]
        memory = k.bound_by in ("dram", "l2", "l1") or (k.bound_by in T.BY_ID and T.BY_ID[k.bound_by].group == "memory")
        if "compute pipes left idle" in text and not memory:
            wrong.append(f"#{k.raw.index} {k.raw.name[:40]}: bound by {k.bound_by}")
        if "which this diagnosis set aside: " in text and not any(n.reason in text for n in k.not_applicable):
            wrong.append(f"#{k.raw.index} {k.raw.name[:40]}: {text[:120]}")
    assert not wrong, "\n".join(wrong)


@needs_corpus
def test_a_busy_fp64_pipe_beside_a_busy_xu_pipe_points_at_divisions() -> None:
    """compute_tendencies_x_279_gpu: the FP64 pipe at 70 % is its limit and the XU pipe, which starts each FP64
    division (MUFU.RCP64H), is at 13 %: the lever names divisions first-hand (MW_DivToMult, which multiplies by
    reciprocals, runs that kernel 1.78x faster). The FMA-balance bound (1.17x) stays what the mix allows."""
    k = next(k for k in _kernels("gpu-workshop__MW_Baseline.ncu-rep") if k.raw.name == "compute_tendencies_x_279_gpu")
    assert k.bound_by == "sm__pipe_fp64_cycles_active" and round(k.units["sm__inst_executed_pipe_xu"].share, 3) == 0.133
    head = k.diagnosis[0]
    assert "the XU pipe, which starts each FP64 division and square root" in head.action
    assert "is at 13%: divisions or square roots are likely a good part of the FP64 instructions" in head.action
    faster = next(d for d in _kernels("gpu-workshop__MW_DivToMult.ncu-rep")
                  if d.raw.name == "compute_tendencies_x_279_gpu")
    assert k.q.duration_s.value / faster.q.duration_s.value == pytest.approx(1.78, abs=0.01)


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_an_at_limit_roof_is_pressed_against_only_from_nsight_computes_high_throughput(name: str) -> None:
    """"Presses against it" and "not more parallelism" only from 80 % of the roof (Nsight Compute's Speed-Of-Light
    rule's mark for high use); below, the finding states what is left to the roof itself, 1 / share. A busy unit
    likewise: "only less work" from 80 %, what is left to its peak below."""
    from ncu_roofline.passes.diagnosis import ratio_text

    wrong = []
    for k in _kernels(name):
        for f in k.diagnosis:
            if f.kind != "at_limit":
                continue
            share = k.limiter_share or 0.0
            pressed = "presses against it" in f.text and "not more parallelism" in f.action
            left = f"up to {ratio_text(1 / share)}× is left to the roof itself" in f.text if share else False
            if (share >= 0.8) != pressed or (share < 0.8) != left or f.speedup is not None:
                wrong.append(f"#{k.raw.index} {k.raw.name[:30]} at {share:.1%}: {f.text!r}")
        head = k.diagnosis[0] if k.diagnosis else None
        if head is not None and head.kind == "unit_throughput" and k.regime == "at_limit":  # a busy unit alike
            share = k.limiter_share or 0.0
            only = head.speedup_note.startswith("at its limit: only less work")
            left = f"its own peak is at most {ratio_text(1 / share)}× away" in head.speedup_note
            if (share >= 0.8) != only or (share < 0.8) != left:
                wrong.append(f"#{k.raw.index} {k.raw.name[:30]} unit at {share:.1%}: {head.speedup_note!r}")
    assert not wrong, "\n".join(wrong)
