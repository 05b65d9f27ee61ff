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
from ncu_roofline.passes.facts import BANK_CONFLICTS, GLOBAL_SECTORS
from ncu_roofline.passes.finding import Finding
from ncu_roofline.passes.levers import LSU_WAVEFRONTS
from ncu_roofline.readers import read_report_isolated


def _analyze(*args: object, **kwargs: object) -> ncu_roofline.Analysis:
    """`ncu_roofline.analyze` in the reader's child process (each kernel keeps the metrics the analysis read):
    NVIDIA's reader keeps the memory of every report it loads, and this module reads the corpus many times."""
    return ncu_roofline.analyze(*args, isolate=True, **kwargs)  # type: ignore[arg-type]


needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"shared report corpus not found at {CORPUS}")
FILES = [p.name for p in corpus_files()]
_BAD_WORDS = re.compile(r"\b(nan|inf|None|n/a)\b")  # n/a: how a non-finite figure is filled in
# Bases that say why a finding has no bound (their words start "none").
_NO_BOUND = ("other_bounds", "listed", "more_work", "at_limit", "at_limit_short", "gap_bounds", "unit_at_limit",
             "unit_short", "below_threshold", "below_ceilings", "no_headroom", "reads_once", "unmeasured",
             "hit_rate_unknown", "fusion_unknown", "local_cost", "no_pairs")


@cache
def _kernels(name: str) -> list[AnalysedKernel]:
    return [k for r in _analyze(CORPUS / name).reports for k in r.kernels if k.usable]


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
            w = f.words()
            said = [w.headline, w.next_step or "", w.detail, w.bound]
            if any(_BAD_WORDS.search(t) or "{" in t or "}" in t for t in said) or not w.headline:
                wrong.append(f"#{k.raw.index} {f.kind.value}/{f.variant}: {said}")
            if f.speedup is None and (not f.basis or not w.bound or not w.bound.startswith("none")):
                wrong.append(f"#{k.raw.index} {f.kind.value}: neither a speed-up nor why not ({f.basis})")
            if f.speedup is not None and f.basis and f.basis[0] in _NO_BOUND:
                wrong.append(f"#{k.raw.index} {f.kind.value}: speed-up {f.speedup} yet {f.basis}")
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
    share of the run that Nsight Compute's rule message states. No bound stands where the achieved occupancy
    Nsight Compute measured is at or under the last wave's own at equal block times (blocks of 20 µs and more):
    that measurement rules out the equal blocks whole waves need, and the finding says so instead."""
    from ncu_roofline.passes.tail import last_wave_occupancy, tail_time_share

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
            last = last_wave_occupancy(k.launch, waves, whole)
            theoretical = k.raw.number("sm__maximum_warps_per_active_cycle_pct")
            achieved = k.raw.number("sm__warps_active.avg.pct_of_peak_sustained_active")
            ruled_out = None not in (last, theoretical, achieved) and achieved / 100 <= last < theoretical / 100 \
                and k.q.duration_s.value / whole > 20e-6
            if ruled_out != (f.variant == "uneven"):
                wrong.append(f"#{k.raw.index}: {f.variant} with achieved {achieved} %, the last wave's {last}")
            if f.variant == "uneven":
                if f.speedup is not None or f.figures["tail_occupancy"] != pytest.approx(last) or \
                        f.figures["achieved"] != pytest.approx(achieved / 100):
                    wrong.append(f"#{k.raw.index}: uneven blocks with a bound {f.speedup} or {dict(f.figures)}")
                continue
            uniform = min(whole / waves, 1 / k.limiter_share)
            equal_times = f.variant == "uniform"  # the bound assumes every block takes the same time
            if equal_times != (f.basis[:1] == ("uniform_waves",)) or f.factor is not None or \
                    f.speedup > uniform * (1 + 1e-9) or f.speedup < 1.1 or \
                    (equal_times and f.speedup != pytest.approx(uniform)):
                wrong.append(f"#{k.raw.index}: factor {f.factor}, speed-up {f.speedup} for {waves} waves ({f.variant})")
            figures = f.figures
            if figures.get("uniform") != pytest.approx(1 / whole) or figures.get("waves") != pytest.approx(waves) or \
                    figures.get("whole") != whole:
                wrong.append(f"#{k.raw.index}: {dict(f.figures)}")
            # the headline's idle block-slot time is the last wave's empty slots over the share of the run it takes
            idle = figures.get("idle_slots")
            if idle is not None and idle != pytest.approx(figures["tail_share"] * (1 - (waves - whole + 1))):
                wrong.append(f"#{k.raw.index}: {idle} of block-slot time idle, {dict(f.figures)}")
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
    doc = json.loads(_analyze(CORPUS / "cs599k__silu-pytorch.ncu-rep").to_json())
    k = doc["reports"][0]["kernels"][0]
    (tail,) = [f for f in k["diagnosis"] if f["kind"] == "tail_effect"]
    a = k["launch"]["achieved_occupancy"]
    t = (0.625 - a) / ((0.625 - a) + (a - 0.375))
    assert t == pytest.approx(0.484, abs=1e-3)
    assert tail["speedup"] == pytest.approx(1 / ((1 - t) * 1.6)) and tail["factor"] is None
    assert tail["speedup"] == pytest.approx(1.21, abs=0.005)
    assert tail["program_gain"] == pytest.approx(1 - 1 / tail["speedup"])
    figures = tail["figures"]
    assert (figures["grid"], figures["waves"], figures["per_wave"]) == (1056, pytest.approx(1.6), pytest.approx(660))
    assert figures["last"] == pytest.approx(0.6) and figures["uniform"] == 0.5
    assert figures["work"] == pytest.approx(0.375)
    # the last wave leaves 40 % of the block slots empty for the 48.4 % of the run it takes: 19 % of block-slot
    # time, not the 20 % of equal block times
    assert figures["idle_slots"] == pytest.approx(t * 0.4) and "19 % of block-slot time idle" in tail["headline"]
    assert tail["variant"] == "occupancy" and tail["basis"] == ["measured_waves"]  # from the measured occupancy
    assert (figures["achieved"], figures["theoretical"]) == (pytest.approx(a), 0.625)
    assert figures["tail_share"] == pytest.approx(t)
    assert tail["lever"] == "library_grid" and figures["library"] == "PyTorch"  # a fixed grid: PyTorch's choice
    # Its 50 % assumes equal block times; the measured occupancy bounds the gain at 1 - 1/1.21 = 17 %.
    estimate = k["rules_relation"]["estimate"]
    assert estimate["relation"] == "agrees" and estimate["figures"]["match_kind"] == "tail_effect"
    assert estimate["figures"]["bound"] == pytest.approx(tail["speedup"])
    assert estimate["figures"]["saved"] == pytest.approx(0.17, abs=0.005) and estimate["figures"]["below_estimate"]
    assert k["diagnosis"][0]["kind"] == "unit_throughput"  # the limiter still leads


@needs_corpus
def test_blocks_of_unequal_times_get_no_tail_bound() -> None:
    """monte-carlo computeValue on an RTX 3080 (68 SMs): 1,220 blocks of 4 warps, 12 a SM at a theoretical 100 %
    (sm__maximum_warps_per_active_cycle_pct): 816 a wave, 1.50 waves. The last wave's 1,220 − 816 = 404 blocks
    spread over all 68 SMs, 404 / 68 = 5.94 of 12 block slots: 49.5 % occupancy. At equal block times the full
    wave runs at 100 % and the last at 49.5 %, yet Nsight Compute measured 16.6 %
    (sm__warps_active.avg.pct_of_peak_sustained_active): the blocks, or their warps, run for unequal times, and
    the 2 / 1.50 = 1.34x of equal blocks is no bound."""
    k = next(k for k in _kernels("monte-carlo-pi__profile.ncu-rep") if k.raw.name == "computeValue")
    assert (k.raw.number("launch__grid_size"), k.raw.number("launch__occupancy_limit_warps")) == (1220, 12)
    assert k.raw.number("sm__maximum_warps_per_active_cycle_pct") == 100
    achieved = k.raw.number("sm__warps_active.avg.pct_of_peak_sustained_active") / 100
    assert achieved == pytest.approx(0.166, abs=5e-4)
    (tail,) = [f for f in k.diagnosis if f.kind == "tail_effect"]
    assert (tail.variant, tail.speedup, tail.lever, tail.basis) == ("uneven", None, "even_work", ("uneven_blocks",))
    assert tail.figures["tail_occupancy"] == pytest.approx((1220 - 816) / 68 / 12)
    words = tail.words()
    assert words.headline == "Blocks end unevenly: occupancy 17 %, under the last wave's 50 %"
    assert "Nsight Compute measured 17 %" in words.detail and "1.34" not in words.detail
    latency = next(f for f in k.diagnosis if f.kind == "latency")
    assert "partial last wave" not in latency.words().detail  # the measurement says the tail is not it
    # more blocks would add no warps: more work in flight per warp, as its leading wait stalls (73 %) say
    assert latency.lever == "stall_wait" and "more blocks" not in (latency.words().next_step or "")


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
    assert tail.variant == "idle" and tail.basis == ("measured_waves",)  # from the SMs' measured activity
    assert (tail.figures["idle_sms"], tail.figures["sms"]) == (81, 108)
    assert tail.figures["active"] == pytest.approx(active) and tail.figures["tail_share"] == pytest.approx(t)
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
    assert tail.speedup == pytest.approx(2 / k.launch["waves_per_sm"]) and tail.variant == "uniform"
    assert tail.lever == "library_grid" and tail.figures["library"] == "CUB"  # the grid is CUB's choice


@needs_corpus
@pytest.mark.parametrize(("name", "index", "relation", "figures"), [
    # "Low Utilization" (every pipe under-used) at the DRAM roof: idle compute pipes are what a memory limit means
    ("cuda-mlp-inference__report.ncu-rep", 0, "idle_pipes_expected", {"lead_limit": "DRAM"}),
    # theoretical occupancy vs a grid of 64 blocks on 148 SMs: more blocks come first
    ("accelsim-test__n1000_int8_abt_view_algo64_profile.1528422.ncu-rep", 0, "more_blocks_first",
     {"lead_kind": "too_little_work"}),
    # achieved occupancy vs DRAM throughput at 90 %: at most 1.11× is left to the limit
    ("cs599k__profile.ncu-rep", 2, "past_high_use", {"lead_limit": "DRAM (busy cycles)"}),
    # theoretical occupancy vs issue slots at 67%, short of high use: the rest of their peak is for more warps
    ("cs599k__silu-2025-04-18-v9.ncu-rep", 0, "agrees", {"match_limit": "issue slots"}),
    ("cs599k__silu-pytorch.ncu-rep", 0, "agrees", {"match_kind": "tail_effect"}),  # Tail Effect vs the tail effect
    ("cudacode__naive.ncu-rep", 0, "agrees", {"match_kind": "unit_throughput"}),  # Lg Throttle vs the LSU pipe
    # L1TEX Global Load Access Pattern: the coalescing cap that was set aside, with Nsight Compute's own count
    ("cudacode__global_mem_coalesce.ncu-rep", 0, "set_aside", {"aside_kind": "coalescing"}),
    # Issue Slot Utilization (too few eligible warps) beside local memory that holds 97 % of L1's sectors while
    # long-scoreboard waits lead the stalls: the warps wait on those local loads
    ("cuda-gemm-practice__gemm_v9.ncu-rep", 0, "agrees", {"match_kind": "local_memory"}),
    # Shared Store Bank Conflicts (est. 20 %, of the stores' wavefronts) beside conflicts under a tenth of them all
    ("cuda-gemm-practice__gemm_v9.ncu-rep", 1, "under_a_tenth", {"small_kind": "bank_conflicts", "small_roof": "l1"}),
])
def test_rules_comparison_agrees_only_where_the_rule_speaks_of_a_finding(name: str, index: int, relation: str,
                                                                         figures: dict[str, str]) -> None:
    """A busy unit agrees only with the rules about that unit, and "Low Utilization" (HighPipeUtilization's
    finding that every pipe is under-used) never agrees with a kernel at a roof; a rule about a ceiling that was
    set aside gets the reason."""
    k = next(k for k in _kernels(name) if k.raw.index == index)
    d = k.to_dict()
    estimate = d["rules_relation"]["estimate"]
    assert estimate["relation"] == relation, estimate
    assert figures.items() <= estimate["figures"].items(), estimate
    if relation == "past_high_use":
        assert estimate["figures"]["share"] == pytest.approx(k.limiter_share)
        assert f"{estimate['figures']['left']:.3g}" == "1.11"
    if relation == "set_aside":
        assert estimate["figures"]["reason"].startswith("Nsight Compute counts no excessive global sectors")
    if relation == "under_a_tenth":  # 134,400 conflicts in 2,084,261 + 625,598 shared load and store wavefronts
        conflicts = k.raw.number("l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum")
        wavefronts = sum(k.raw.number(f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum") for op in ("ld", "st"))
        assert (conflicts, wavefronts) == (134400, 2709859)
        assert estimate["figures"]["cost"] == pytest.approx(conflicts / wavefronts)
        assert "takes 5 % off the L1 roof, under the tenth a finding needs" in d["rules_comparison"]
    if relation in ("set_aside", "not_ranked", "under_a_tenth"):  # the top finding, whose step the verdict gives
        from ncu_roofline.views.verdict import verdict

        shown = [f for f in d["diagnosis"] if f["kind"] == estimate["figures"]["top_kind"]]
        assert shown and verdict(k).endswith(shown[0]["next_step"]), verdict(k)
    assert d["rules_comparison"] and "this diagnosis" not in d["rules_comparison"]


@needs_corpus
def test_a_unit_short_of_high_use_names_the_occupancy_lever_nsight_compute_estimates() -> None:
    """silu v9 #0: issue slots at 67 %, at the limit but short of Nsight Compute's 80 %; its Theoretical Occupancy
    rule (est. 50 %) says registers hold the warps per scheduler to 8. The finding's next step names that lever
    for the last 33 %, and the comparison agrees, with this diagnosis's own bound: the peak at most 1 / 0.674 away."""
    k = _kernels("cs599k__silu-2025-04-18-v9.ncu-rep")[0]
    head = k.diagnosis[0]
    assert k.bound_by == "sm__issue_active" and round(k.limiter_share, 3) == 0.674
    assert (head.kind, head.variant, head.basis) == ("unit_throughput", "short", ("unit_short",))
    assert head.figures["rest"] == pytest.approx(1 - k.limiter_share)  # the last 33 %, for more work in flight
    limits = {n: k.raw.number(f"launch__occupancy_limit_{n}") for n in ("registers", "shared_mem", "blocks", "warps")}
    assert min(v for v in limits.values() if v) == limits["registers"] == head.figures["occ_blocks"]
    assert head.figures["occ_by"] == "registers" and head.figures["theoretical"] == pytest.approx(0.5, abs=0.01)
    estimate = k.to_dict()["rules_relation"]["estimate"]
    assert (estimate["relation"], estimate["title"], estimate["speedup_pct"]) == ("agrees", "Theoretical Occupancy",
                                                                                 pytest.approx(50.0, abs=0.5))
    assert estimate["figures"]["left"] == pytest.approx(1 / k.limiter_share)
    assert estimate["figures"]["match_limit"] == "issue slots" and "bound" not in estimate["figures"]


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
        short = k.limiter_share < 0.8
        where = (k.raw.index, k.raw.name, k.limiter_share, head.kind.value, head.variant, head.lever, head.basis)
        # the head says how far the peak is and what is left of it: the words "more work in flight reaches the rest"
        assert head.variant == ("short" if short else "high"), where
        assert head.figures["left"] == pytest.approx(1 / k.limiter_share), where
        assert head.figures["rest"] == pytest.approx(1 - k.limiter_share), where
        if head.kind == "at_limit":  # a roof's next step: wider, independent loads or instructions reach its last part
            # (or the register spills, where they are most of its bytes: passes.spills)
            assert head.lever in ("library", "spills") or head.lever.endswith("_short") == short, where
        else:
            assert head.kind == "unit_throughput" and head.basis[0] == ("unit_short" if short else "unit_at_limit"), \
                where


def test_the_comparison_keeps_to_what_each_rule_speaks_of() -> None:
    """Hand-made heads and Nsight Compute estimates: Low Utilization never agrees with a roof short of high use; a
    stall rule (a throttled pipe) is not called hiding latency; "more blocks first" only for a grid under one
    wave; the untitled 2020.3 under-utilized rule is read as Low Utilization beside a memory limit."""
    from ncu_roofline.passes.finding import Finding, Kind
    from ncu_roofline.passes.rules_comparison import Relation, compare_with_rules

    def rule(name: str, title: str = "", message: str = "") -> list[dict[str, object]]:
        return [{"rule": name, "title": title, "name": name, "message": message, "speedup_pct": 40.0}]

    def relation(*args: object) -> Relation | None:
        note = compare_with_rules(*args).estimate  # type: ignore[arg-type]
        return None if note is None else note.relation

    short = Finding(Kind.AT_LIMIT, "short", "dram", None, "dram", lever="fewer_bytes_short",
                    figures={"limit": "DRAM", "share": 0.7, "rest": 0.3, "left": 1 / 0.7})
    assert relation([short], rule("HighPipeUtilization", "Low Utilization"), "at_limit", [], 0.7) == \
        Relation.IDLE_PIPES_EXPECTED
    # a limit short of high use is about occupancy only where its figures name what caps the warps
    assert relation([short], rule("TheoreticalOccupancy"), "at_limit", [], 0.7) == Relation.NOT_RANKED
    agrees = compare_with_rules([short.with_figures(occ_by="registers")], rule("TheoreticalOccupancy"), "at_limit",
                                [], 0.7).estimate
    assert agrees is not None and agrees.relation == Relation.AGREES
    assert agrees.figures["left"] == pytest.approx(1.43, abs=0.005) and agrees.figures["match_limit"] == "DRAM"
    pipe = Finding(Kind.UNIT_THROUGHPUT, "high", "sm__pipe_fma_cycles_active", None, "sm__pipe_fma_cycles_active",
                   figures={"unit": "FMA pipe", "share": 0.85, "rest": 0.15, "left": 1 / 0.85})
    assert relation([pipe], rule("CPIStall", "Math Pipe Throttle Stalls"), "at_limit", [], 0.85) == Relation.NOT_RANKED
    assert relation([pipe], rule("AchievedOccupancy"), "at_limit", [], 0.85) == Relation.PAST_HIGH_USE
    idle = Finding(Kind.TOO_LITTLE_WORK, "idle_limits", "dram", None, "dram", figures={"threshold": 0.05})
    assert relation([idle], rule("TheoreticalOccupancy"), "too_little_work") != Relation.MORE_BLOCKS_FIRST
    small = Finding(Kind.TOO_LITTLE_WORK, "few_blocks", "dram", None, "dram",
                    figures={"grid": 64, "sms": 148, "idle_sms": 84, "waves": 0.43})
    assert relation([small], rule("TheoreticalOccupancy"), "too_little_work") == Relation.MORE_BLOCKS_FIRST
    dram = Finding(Kind.AT_LIMIT, "high", "dram", None, "dram", lever="fewer_bytes",
                   figures={"limit": "DRAM", "share": 0.85, "rest": 0.15, "left": 1 / 0.85})
    untitled = rule("HighPipeUtilization", "", "All pipelines are under-utilized. Either this kernel is very small")
    assert relation([dram], untitled, "at_limit", [], 0.85) == Relation.IDLE_PIPES_EXPECTED


def test_rule_kinds_by_title_then_rule() -> None:
    from ncu_roofline.passes.rules_comparison import Cause as C
    from ncu_roofline.passes.rules_comparison import rule_causes

    assert rule_causes("HighPipeUtilization", "Low Utilization") == {C.TOO_LITTLE_WORK, C.STALLS}
    assert rule_causes("HighPipeUtilization", "High Pipe Utilization") == {C.COMPUTE_PIPE}
    assert rule_causes("LaunchConfiguration", "Tail Effect") == {C.TAIL}
    assert rule_causes("LaunchConfiguration", "") == {C.SMALL_GRID, C.TAIL}
    assert rule_causes("MemoryL2Compression", "Low Compression Rate") is None
    # Older releases write titles as ids; "Balanced" (no pipe stands out) speaks of no finding.
    assert rule_causes("CPIStall", "long_scoreboard") == rule_causes("CPIStall", "Long Scoreboard Stalls")
    assert rule_causes("CPIStall", "lg_throttle") == rule_causes("CPIStall", "Lg Throttle Stalls") == {C.LSU_QUEUE}
    assert rule_causes("CPIStall", "long_scoreboard") == {C.MEMORY_WAIT}
    assert rule_causes("HighPipeUtilization", "Balanced") is None
    # 2020.3 wrote "All pipelines are under-utilized" with no title: the opposite of a busy pipe.
    untitled = "All pipelines are under-utilized. Either this kernel is very small or it doesn't issue enough warps"
    assert rule_causes("HighPipeUtilization", "", untitled) == rule_causes("HighPipeUtilization", "Low Utilization")
    assert rule_causes("HighPipeUtilization", "", "Shared is the highest-utilized") == {C.COMPUTE_PIPE}
    # An access pattern speaks of the sectors its requests touch, not of any memory limit.
    pattern = rule_causes("MemoryCacheAccessPattern", "L2 Load Access Pattern")
    assert rule_causes("UncoalescedGlobalAccess", "") == pattern == {C.COALESCING}


def test_an_access_pattern_rule_agrees_only_with_a_finding_about_the_sectors() -> None:
    """Nsight Compute's largest estimate is its UncoalescedGlobalAccess rule (31 %): findings that name only a
    memory limit below the threshold do not agree with it on the cause; with a coalescing finding, they do."""
    from ncu_roofline.passes.finding import Finding, Kind
    from ncu_roofline.passes.rules_comparison import Relation, compare_with_rules

    head = Finding(Kind.UNIT_THROUGHPUT, "below", "l2_throughput", None, "l2_throughput",
                   figures={"unit": "L2 throughput", "share": 0.39, "rest": 0.61, "left": 1 / 0.39})
    latency = Finding(Kind.LATENCY, "no_ceiling", "l2_throughput", None, "l2_throughput", 2.57, lever="in_flight",
                      figures={"share": 0.39})
    rules = [{"rule": "UncoalescedGlobalAccess", "title": "", "name": "Uncoalesced Global Accesses",
              "speedup_pct": 30.8}]
    alone = compare_with_rules([head, latency], rules, "latency")
    assert alone.bottleneck is None and alone.estimate is not None
    assert (alone.estimate.relation, alone.estimate.rule, alone.estimate.title) == (
        Relation.NOT_RANKED, "UncoalescedGlobalAccess", "Uncoalesced Global Accesses")
    # the finding the verdict's next step comes from: the latency's 2.57x, not the busiest unit it names first
    assert (alone.estimate.figures["top_kind"], alone.estimate.figures["top_bound"]) == ("latency", 2.57)
    assert alone.estimate.text().endswith("The top finding is latency, ≤2.57×.")
    coalescing = Finding(Kind.COALESCING, "cap", "l1", 0.5, "l2_throughput", 2.0, lever="coalesce",
                         figures={"caps": "L1", "factor": 0.5})
    both = compare_with_rules([head, latency, coalescing], rules, "latency").to_dict()["estimate"]
    assert both["relation"] == "agrees" and both["speedup_pct"] == 30.8
    assert both["figures"] == {"match_kind": "coalescing", "bound": 2.0, "saved": 0.5, "below_estimate": False}


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
            w = f.words()  # how the ratios print: never with an exponent
            if f.speedup != pytest.approx(expected) or any("e+" in t for t in (w.headline, w.detail, w.bound)):
                wrong.append(f"#{k.raw.index}: {f.speedup} against {expected}; {w.headline}; {w.detail}")
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
    # no bound for this kernel alone: it reads its data about once (DRAM read 1.21× what its loads asked for)
    assert gap.basis == ("reads_once",) and gap.figures["once"] == pytest.approx(k.reuse["dram_reads_per_load_byte"])
    assert gap.lever == "reads_once"  # nothing to reuse: fuse with the kernels beside it, or a narrower type
    assert all(f.speedup is None for f in k.diagnosis)  # nothing ranks ahead of the limiter on a gain it cannot have
    dram = k.utilization["dram"]  # 88 %: the bytes fall dram / left = 7.42× at the DRAM peak, 1 / left as busy as now
    assert round(dram, 2) == 0.88 and round(dram / left, 2) == 7.42
    # the issue slots less its global loads and stores, at 12 %, saturate first, once the bytes fall about 7.42×
    from ncu_roofline.passes.reuse import ISSUE_LESS_MEMORY

    figures = gap.figures
    assert (figures["busiest_label"], figures["cap_label"]) == (ISSUE_LESS_MEMORY, ISSUE_LESS_MEMORY)
    assert figures["busiest_share"] == pytest.approx(left, rel=1e-3)
    assert figures["cap_share"] == figures["busiest_share"]
    assert figures["after"] == pytest.approx(dram / figures["busiest_share"]) and round(figures["after"], 2) == 7.42
    assert figures["cap_x"] == pytest.approx(1 / figures["busiest_share"]) and round(figures["cap_x"], 1) == 8.4
    assert round(figures["gap"]) == 129  # 129× more FLOP per byte reach the compute roof
    # 64× reach what its FP ceilings allow (its FMA balance, 50 %)
    assert figures["kept_gap"] == pytest.approx(0.5 * figures["gap"]) and int(figures["kept_gap"]) == 64


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
    lane = kinds["lane_efficiency"]  # caps the FP64 roof at 54 %
    assert lane.roof == "fp64" and "FP64 roof" in lane.figures["caps"] and round(lane.factor, 2) == 0.54
    latency = kinds["latency"]  # the pipe at 20 % of its peak: the rest is latency
    assert latency.figures["share"] == pytest.approx(k.limiter_share) and round(k.limiter_share, 2) == 0.20
    assert latency.figures["reachable"] is None and latency.basis[0] == "peak_over_share"  # no "ceilings allow"
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
    # caps the useful work of the issue slots at 45 %: no roof of their own
    assert lane.roof == k.dominant_precision and lane.figures["caps"].endswith("issue slots")
    assert round(lane.factor, 2) == 0.45 and lane.figures["lanes"] == pytest.approx(lanes)
    # 32 lanes ÷ the lanes that do useful work, counted apart from the latency finding
    assert lane.basis == ("lanes", "lanes_apart")
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
    assert len(found) == 1 and found[0].figures["caps"].endswith("issue slots") and found[0].basis[0] == "lanes"
    assert round(found[0].factor, 2) == 0.45


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
        # global loads touch 16.0 sectors per request where 8.0 would hold them
        (cap,) = [c for c in k.ceilings if c.kind == "coalescing" and c.factor == found[0].factor]
        assert (cap.evidence["ld_sectors_per_request"], cap.evidence["ld_ideal_sectors_per_request"]) == (16, 8)
        assert found[0].roof == "l1" and "ld_sectors_per_request" in found[0].evidence
        # within a tenth of the busiest limit, L2 throughput, where that leads
        within = found[0].figures.get("co_label") is not None
        assert within == (k.bound_by == "l2_throughput"), k.raw.index
        if within:
            assert found[0].figures["top_label"] == "L2 throughput", k.raw.index
            assert found[0].figures["top_share"] == pytest.approx(k.limiter_share), k.raw.index
    # caps the L1 roof at 50 % (L1/TEX (wavefronts) at 36 % is within a tenth of the busiest limit, L2 throughput at
    # 39 %)
    first = kernels[0].diagnosis[2]
    assert first.kind == "coalescing" and "L1 roof" in first.figures["caps"] and first.factor == 0.5
    assert (first.figures["co_label"], round(first.figures["co_share"], 2)) == ("L1/TEX (wavefronts)", 0.36)
    assert (first.figures["top_label"], round(first.figures["top_share"], 2)) == ("L2 throughput", 0.39)


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
    # capped at 1 / 0.389 by L2 throughput, the busiest limit, after the compute side's cap
    assert found.basis[-1] == "capped_busiest" and "capped_other" in found.basis
    assert found.figures["top_x"] == pytest.approx(1 / k.limiter_share)
    assert found.figures["top_label"] == "L2 throughput"
    assert found.figures["other_x"] == pytest.approx(1 / k.units["sm__issue_active"].share)
    assert round(found.figures["other_x"], 1) == 3.2 and found.figures["other_label"] == "issue slots"


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
        # one finding per cause (passes.causes): L2's and DRAM's sector use of the same accesses are one finding
        found = {(f.kind, f.roof, round(f.figures["factor"], 6)): f for f in k.diagnosis if f.kind in memory}
        assert set(found) <= expected, (k.raw.index, k.raw.name, set(found), expected)
        assert {(kind, roof) for kind, roof, _ in expected if kind != "sector_use"} | \
            {kind for kind, _, _ in expected if kind == "sector_use"} == \
            {(kind, roof) for kind, roof, _ in found if kind != "sector_use"} | \
            {kind for kind, _, _ in found if kind == "sector_use"}, (k.raw.index, set(found), expected)
        for (_, roof, _), f in found.items():
            if roof not in k.utilization:  # no roof to cap: what was observed, no cap, no bound
                assert f.factor is None and f.speedup is None and f.basis == ("no_roof",), (k.raw.index, f.basis)
            elif roof in near:
                assert f.speedup is not None and f.speedup <= max(1.0, 1.0 / k.limiter_share) * (1 + 1e-9)
            else:
                # no bound: listed, with the busiest limit that bounds the kernel instead
                assert f.speedup is None and f.basis == ("listed",), (k.raw.index, f.kind, f.basis)
                assert f.figures.get("top_label"), (k.raw.index, f.kind)


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
    assert "L1 roof" in last.figures["caps"] and round(last.factor, 2) == 0.78  # caps the L1 roof at 78 %
    # no bound: the busiest limit is issue slots, not this one
    assert last.basis == ("listed",) and last.figures["top_label"] == "issue slots" and last.lever == "coalesce"
    halo = _kernels("gpu-workshop__MW_Baseline.ncu-rep")[0]
    assert [f.kind for f in halo.diagnosis] == ["too_little_work", "coalescing"]
    # no bound: the launch's too little work bounds the kernel first; and the report gives no L1 roof to cap
    assert "l1" not in halo.utilization and halo.diagnosis[1].factor is None
    assert halo.regime == "too_little_work" and halo.diagnosis[1].basis == ("no_roof",)
    assert halo.diagnosis[1].speedup is None and halo.diagnosis[1].figures["top_label"]


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
                    assert f.basis[0] in ("ceilings_over_reached", "roof_over_reached"), (name, k.raw.name, f.basis)
                else:
                    seen["unit"] += 1
                    assert f.speedup == pytest.approx(max(1.0, 1.0 / k.limiter_share)), (name, k.raw.name)
                    # the unit's peak ÷ its busy share: the same instructions, a fix that removes work is not within it
                    assert f.basis[0] == "peak_over_share", (name, k.raw.name, f.basis)
    assert seen["unit"] > 10


@needs_corpus
@pytest.mark.parametrize("name", FILES)
@pytest.mark.parametrize("group_by", ["launch", "name"])
def test_a_groups_findings_are_about_the_groups_limiter(name: str, group_by: str) -> None:
    """A group's row names its limiter (from its launches' weighted shares) and its top finding: the
    findings are the diagnosis of those limits, so the first is about that limiter and quotes its
    share; a tail effect only where every launch has the same waves."""
    from ncu_roofline.api.groups import group_kernels

    kernels = [k for r in _analyze(CORPUS / name).reports for k in r.kernels]
    wrong = []
    for g in group_kernels(kernels, group_by):
        s = g.summary
        if not s.diagnosis:
            continue
        head = s.diagnosis[0]
        if head.limit != s.bound_by or any(f.limit != s.bound_by for f in s.diagnosis):
            wrong.append(f"{g.longest.raw.name}: limiter {s.bound_by}, findings about {[f.limit for f in s.diagnosis]}")
        if s.regime != "too_little_work" and s.limiter_share is not None and \
                head.figures.get("share") != pytest.approx(s.limiter_share):  # the head quotes the limiter's share
            wrong.append(f"{g.longest.raw.name}: {head.kind.value} {dict(head.figures)} (share {s.limiter_share:.0%})")
        written = g.to_dict()  # the JSON, CSV and Parquet rows: the same findings as the page
        if written["diagnosis"] != [f.to_dict() for f in s.diagnosis] or written["diagnosis"][0]["limit"] != s.bound_by:
            wrong.append(f"{g.longest.raw.name}: written findings {[f['limit'] for f in written['diagnosis']]}")
        alone = len(g.launches) == 1 and g.launches[0].usable  # Nsight Compute's estimate beside it: the launch's
        launch = g.longest.to_dict() if alone else {}
        if alone and written["rules_relation"] != launch["rules_relation"]:
            wrong.append(f"{g.longest.raw.name}: rules comparison {written['rules_relation']!r}")
        indices = {e.index for e in g.launches}
        waves = {k.launch.get("waves_per_sm") for k in kernels if k.raw.index in indices}
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
    assert f.speedup == pytest.approx(1 / xu) and "capped_other" in f.basis  # capped by the XU pipe
    assert f.figures["other_label"].startswith("XU pipe") and f.figures["other_share"] == xu


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
        note = k.to_dict()["rules_relation"]["bottleneck"]
        sm = (k.raw.number("sm__throughput.avg.pct_of_peak_sustained_elapsed") or 0) / 100
        memory = (k.raw.number("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed") or 0) / 100
        if note is None or note["relation"] != "bottleneck_latency_vs_limit" or max(sm, memory) >= 0.6:
            wrong.append(f"#{k.raw.index}: {note!r} (SM {sm:.0%}, memory {memory:.0%})")
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

    doc = json.loads(_analyze(CORPUS / "cudacode__naive.ncu-rep").to_json())
    rules = doc["reports"][0]["kernels"][0]["nsight_compute_rules"]
    assert rules[0]["speedup_pct"] == pytest.approx(16.86, abs=0.01) and rules[0]["speedup_kind"] == "local"
    estimates = [r["speedup_pct"] for r in rules if r["speedup_pct"] is not None]
    assert estimates == sorted(estimates, reverse=True) and len(estimates) == 3
    assert "@section" not in " ".join(r["message"] for r in rules)  # section links read as their names


@needs_corpus
def test_web_links_in_rule_messages_read_as_label_and_address() -> None:
    doc = json.loads(_analyze(CORPUS / "cs599k__silu-pytorch.ncu-rep").to_json())
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
    raw = read_report_isolated(CORPUS / "cs599k__2025-04-21-v1.ncu-rep").kernels[hopper.raw.index]  # every metric
    derived = raw.number("derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.per_second")
    assert raw.number("l1tex__lsu_writeback_active_mem_lgds.sum") * 128 == pytest.approx(
        derived * hopper.q.duration_s.value, rel=1e-6)


@needs_corpus
def test_a_cap_names_the_fp64_pipe_where_volta_shared_pipe_ties_it() -> None:
    """On a V100 the shared pipe counts FP64 work too (its share equals the FP64 pipe's exactly): among
    equal shares the cap names the FP64 pipe, the earlier and more specific unit."""
    k = _kernels("gpu-workshop__MW_DivToMult.ncu-rep")[2]
    units = k.units
    assert units["sm__pipe_shared_cycles_active"].share == units["sm__pipe_fp64_cycles_active"].share
    (gap,) = [f for f in k.diagnosis if f.kind == "intensity_gap"]
    assert "capped_arith" in gap.basis  # capped by the FP64 pipe at 52 %, not the shared pipe
    assert gap.figures["cap_label"] == "FP64 pipe" and round(gap.figures["cap_share"], 2) == 0.52
    assert gap.figures["cap_share"] == units["sm__pipe_fp64_cycles_active"].share


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
        # the busiest limit the report holds, DRAM reads: latency, or a limit not measured
        assert latency.speedup is None and latency.variant == "unmeasured" and latency.basis == ("unmeasured",)
        assert latency.figures["label"].startswith("DRAM") and latency.lever == "collect"


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
            where = (name, k.raw.name)
            stepped = _verdict_step(k)  # the finding whose next step the verdict shows
            if stepped is not None:
                assert verdict(k).endswith(stepped.words().next_step or ""), (*where, verdict(k))
                assert (stepped.lever in ("library", "library_grid")) == (library is not None), (*where, stepped.lever)
                if k.regime == "at_limit":  # its verdict names a lever: whose it is too
                    worded.add(library)
            for f in k.diagnosis:
                owned = f.lever == "library" and f.figures.get("library") == library
                if library is None:
                    assert f.lever not in ("library", "library_grid"), (*where, f.kind.value)
                elif f.kind == "tail_effect":  # the grid is the library's choice
                    assert f.lever == "library_grid" and f.figures.get("library") == library, (*where, f.lever)
                elif f.lever is None:
                    assert not owned  # nothing to do here (a pointer to the next findings): no fix to wrap
                else:
                    assert owned, (*where, f.kind.value, f.lever)
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

    kept = _analyze(CORPUS / name)
    let_go = _analyze(CORPUS / name, keep_metrics=False)
    assert all(not k.raw.metrics for r in let_go.reports for k in r.kernels)
    assert said(let_go) == said(kept)


NO_CAP = "none: this leaves the whole roof"


# Next steps (`knowledge.catalog`, `knowledge.unit_steps`) that advise vector loads, and padding or swizzling
# shared-memory tiles against bank conflicts.
_VECTOR_LOADS = ("issue_vector", "vector", "sm__inst_executed_pipe_lsu", "l1tex__lsuin_requests")
_AGAINST_CONFLICTS = ("pad", "l1tex__data_pipe_lsu_wavefronts")


def _levers(k: AnalysedKernel) -> set[str]:
    """The next steps the findings of a launch or group name (the verdict's is one of them), and the ones a library's
    kernel would get as one's own code: its limiter's (`unit_lever`) and its ceilings' (`ceiling_lever`)."""
    from ncu_roofline.passes.ceiling_figures import ceiling_lever
    from ncu_roofline.passes.levers import unit_lever

    levers = {f.lever for f in k.diagnosis} | {ceiling_lever(k, c)[0] for c in k.ceilings}
    if k.bound_by in k.units:
        levers.add(unit_lever(k, k.units[k.bound_by]))
    return {lever for lever in levers if lever is not None}


def _verdict_step(k: AnalysedKernel) -> Finding | None:
    """The finding whose next step the verdict shows: the top finding's (`step_index`), else the first with one."""
    from ncu_roofline.passes.finding import top_index

    if not k.diagnosis:
        return None
    top = k.diagnosis[top_index([f.speedup for f in k.diagnosis], [f.kind.value for f in k.diagnosis],
                                 [f.variant for f in k.diagnosis]) or 0]
    return top if top.lever is not None else next((f for f in k.diagnosis if f.lever is not None), None)


def _with_groups(name: str) -> list[AnalysedKernel]:
    analysis = _analyze(CORPUS / name)
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
        for lever in _levers(k):
            if loads == 0 and lever in _VECTOR_LOADS:
                wrong.append(f"#{k.raw.index} no LDG: {lever}")
            if loads and lever in ("no_loads", "issue_no_loads"):
                wrong.append(f"#{k.raw.index} {loads:,.0f} loads, yet no vector loads: {lever}")
            if conflicts == 0 and lever in _AGAINST_CONFLICTS:
                wrong.append(f"#{k.raw.index} no bank conflicts: {lever}")
        for c in k.ceilings:  # a ceiling's own words
            if loads == 0 and "vector loads" in c.action:
                wrong.append(f"#{k.raw.index} no LDG: {c.action[:120]}")
            if conflicts == 0 and any("swizzle" in t or "bank-conflicted" in t for t in (c.detail, c.action)):
                wrong.append(f"#{k.raw.index} no bank conflicts: {c.detail[:60]} / {c.action[:60]}")
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
        for f in k.diagnosis:  # the unit limiter's finding: its roof's bytes or work "reach only N %" beside it
            said = f.figures.get("roof_label") if f.kind == "unit_throughput" else None
            if said is None:
                continue
            text = f"{f.kind.value} {dict(f.figures)}"
            roof = str(said).lower()
            if f.figures["roof_share"] != k.utilization[roof] or k.bound_by not in k.units:
                wrong.append(f"#{k.raw.index} {roof}: {text[:200]}")
            # a gap to show: the roof well under the unit (at most 3/4 of it)
            elif not k.utilization[roof] < 0.75 * k.units[k.bound_by].share:
                wrong.append(f"#{k.raw.index} {roof} at {k.utilization[roof]:.2f} beside the unit at "
                             f"{k.units[k.bound_by].share:.2f}: {text[:200]}")
            for lv in ("l1", "l2"):
                if roof != lv:
                    continue
                counted, recipe = k.q.bytes[lv].value, k.q.bytes[lv].recipe
                if lv == "l2" and ("xbar2l1tex_read" in recipe or "lts2xbar" in recipe):
                    left_out = 32 * k.raw.number("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum")
                elif lv == "l1" and "mem_lgds" not in recipe:
                    left_out = 128 * k.raw.number("l1tex__data_pipe_lsu_wavefronts_mem_shared.sum")
                else:
                    continue
                if left_out > 0.2 * (counted + left_out):
                    wrong.append(f"#{k.raw.index} {lv}: {left_out:,.0f} B left out of {counted:,.0f}: {text[:200]}")
    assert not wrong, "\n".join(wrong)


@needs_corpus
def test_the_stores_of_a_transpose_are_not_compared_with_l2_reads() -> None:
    """naiveGmem: the crossbar-to-L2 requests are 91 % busy with 16,777,216 store sectors (537 MB, 32 per store
    request) while the chart's L2 bytes count 67,108,864 bytes of reads, fewer than DRAM's 102 MB: its L2 bytes
    are then the SMs' tag traffic (604 MB, the stores included), and only those are set against the unit ("25 %"),
    never the reads alone ("1 %"). naive_gemm keeps its contrast: 65,536 shared wavefronts (8.4 MB at most)
    beside 8.59 GB of L1 write-back."""
    (transpose,) = [k for k in _kernels("cudaprogramming__smemTranspose.ncu-rep") if k.raw.name == "naiveGmem"]
    assert transpose.raw.number("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum") == 16_777_216
    l2 = transpose.q.bytes["l2"]
    assert l2.definition == "tags" and l2.value == 32 * transpose.raw.number("lts__t_sectors_srcunit_tex.sum")
    assert l2.value > 32 * 16_777_216
    assert round(transpose.units[transpose.bound_by].share, 2) == 0.91
    head = transpose.diagnosis[0]  # its L2 bytes reach only 25 % (its tag traffic), never 1 % (the reads alone)
    assert (head.kind, head.figures["roof_label"]) == ("unit_throughput", "L2")
    assert round(head.figures["roof_share"], 2) == 0.25 and head.figures["roof_share"] == transpose.utilization["l2"]
    gemm = _kernels("cudacode__naive.ncu-rep")[0]
    assert gemm.raw.number("l1tex__data_pipe_lsu_wavefronts_mem_shared.sum") == 65_536
    assert round(gemm.q.bytes["l1"].value / 1e9, 2) == 8.59
    head = gemm.diagnosis[0]  # while its L1 bytes reach only 42 %
    assert (head.kind, head.figures["roof_label"]) == ("unit_throughput", "L1")
    assert round(head.figures["roof_share"], 2) == 0.42


@needs_corpus
def test_an_rng_kernel_busy_issuing_is_told_of_its_alu_not_of_vector_loads() -> None:
    """PyTorch's Philox kernel (silu-v8 #0) executes no global loads; its issue slots are 67 % busy and its ALU
    pipe 60 % (Nsight Compute's HighPipeUtilization names the ALU too)."""
    from ncu_roofline.passes.levers import unit_lever

    k = _kernels("cs599k__silu-2025-04-18-v8.ncu-rep")[0]
    assert k.raw.number("smsp__sass_inst_executed_op_global_ld.sum") == 0 and k.bound_by == "sm__issue_active"
    head = k.diagnosis[0]  # the issue slots busy in 67 % of cycles: short of high use, not "almost every cycle"
    assert (head.kind, head.variant, head.figures["unit"], round(head.figures["share"], 2)) == \
        ("unit_throughput", "short", "issue slots", 0.67)
    # PyTorch's kernel: the library's next step; as one's own code, fewer instructions without vector loads
    assert head.lever == "library" and unit_lever(k, k.units[k.bound_by]) == "issue_no_loads"
    pipes = {uid: u.share for uid, u in k.units.items() if uid.startswith(("sm__pipe_", "sm__inst_executed_pipe_"))}
    alu = pipes["sm__pipe_alu_cycles_active"]  # the busiest pipe, at 60 % (the finding's figures do not name it)
    assert round(alu, 2) == 0.60 and alu == max(pipes.values())


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
        # a bound capped by another limit names it: the other side's busiest (`capped_other`), the busiest arithmetic
        # pipe or FLOP roof (`capped_arith`)
        wrong += [f"#{k.raw.index} {f.kind.value} ≤{f.speedup:.2f}×: {f.basis} {dict(f.figures)}" for f in k.diagnosis
                  if f.speedup is not None and any(basis in f.basis and f.figures.get(label) in labels for basis, label
                                                   in (("capped_other", "other_label"), ("capped_arith", "cap_label")))]
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
        headlines = all(k.raw.number(n) is not None for n in (
            "sm__throughput.avg.pct_of_peak_sustained_elapsed",
            "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"))
        roofs = all(lv in k.utilization for lv in ("dram", "l2", "l1"))
        for f in (f for f in k.diagnosis if f.kind == "latency"):  # latency, or a limit the report does not measure
            if (f.variant == "unmeasured") != (not (headlines or roofs)):
                wrong.append(f"#{k.raw.index}: a latency finding of {f.variant} (measured: {headlines or roofs})")
            if f.variant == "unmeasured" and (f.speedup is not None or f.basis != ("unmeasured",)):
                wrong.append(f"#{k.raw.index}: {f.speedup} ({f.basis}) where a limit is not measured")
        if k.regime == "latency" and not (headlines or roofs):
            # the verdict says what the report lacks: its head names the unmeasured limit, or its step collects it
            step = _verdict_step(k)
            lacks = (k.diagnosis[0].kind, k.diagnosis[0].variant) == ("latency", "unmeasured") or \
                (step is not None and step.lever == "collect")
            if not lacks:
                wrong.append(f"#{k.raw.index} says nothing of what it lacks: {verdict(k)[:100]}")
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
    # local of its total global and local memory instructions (warp level) are local loads and stores (87 %), with 253
    # registers per thread: register spills or a local array; they make 55 % of its global and local L2 transactions
    assert (f.variant, f.figures["local"], f.figures["total"], f.figures["regs"]) == ("spills", local, total, 253)
    assert f.figures["share"] == pytest.approx(local / total)
    assert f.figures["l2_share"] == pytest.approx(164_023_478 / (164_023_478 + 136_837_923))
    assert f.speedup is None and f.basis == ("local_cost",) and f.lever == "registers"  # `-Xptxas -v` prints spills


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_the_verdict_and_the_latency_finding_say_the_same_of_warps(name: str) -> None:
    from ncu_roofline.views.report import verdict

    more_warps = {"more_warps", "occupancy", "registers", "shared_memory", "block_limit", "warp_slots"}
    levers = {"idle": {"idle"}, "full": {"in_flight"}, "at_allowed": more_warps - {"more_warps"},
              "fewer_warps": {"more_warps", "in_flight"}, "occupancy_unknown": {"more_warps"},
              "unmeasured": {"collect"}, "no_ceiling": {"idle", "in_flight", *more_warps}}
    wrong = []
    for k in _with_groups(name):
        steps = [w.next_step for f in k.diagnosis if (w := f.words()).next_step]
        if steps and not any(verdict(k).endswith(step) for step in steps):  # the verdict's step is a finding's
            wrong.append(f"#{k.raw.index}: {verdict(k)[:120]}")
        latency = [f for f in k.diagnosis if f.kind == "latency"]
        if not latency:
            continue
        f = latency[0]
        # a stall reason that clearly leads the measured stall cycles gives its own lever (not over idle SMs, an
        # unmeasured limit or the occupancy cap, which come first; over fewer warps only in place of more work in
        # flight)
        by_stall = (f.lever or "").startswith("stall_") and f.figures.get("stall1") is not None and \
            f.variant not in ("idle", "unmeasured", "at_allowed")
        if f.lever not in levers[f.variant] | {"library"} and not by_stall:
            wrong.append(f"#{k.raw.index}: a latency of {f.variant} with the lever {f.lever}")
        # warps short of what the launch allows: more blocks, unless the grid already fills the SMs twice or more,
        # or its blocks end unevenly (then more work in flight per warp, as the leading stall says where one leads)
        waves = k.launch.get("waves_per_sm")
        in_flight = f.lever == "in_flight" or (f.lever or "").startswith("stall_")
        uneven = any(g.kind == "tail_effect" and g.variant == "uneven" for g in k.diagnosis)
        if f.variant == "fewer_warps" and in_flight != ((waves is not None and waves >= 2) or uneven):
            wrong.append(f"#{k.raw.index}: {waves} waves, yet {f.lever}")
        # SMs nearly full of warps (not too few warps): no finding asks for more warps in flight
        if f.variant == "full" and any(g.lever in more_warps for g in k.diagnosis):
            wrong.append(f"#{k.raw.index}: full of warps, yet {[g.lever for g in k.diagnosis]}")
    assert not wrong, "\n".join(wrong)


@needs_corpus
def test_the_top_finding_is_the_one_worth_most_in_markdown_and_csv() -> None:
    """PMKID: too little work (≤20×) before the local-memory finding, which projects no gain; naive_gemm: no
    finding projects a gain (coalescing gives nothing under its LSU limit), so the table shows the busy unit. The
    row's finding cell is its headline with its bound, its last cell the finding's next step."""
    import csv
    import io

    from click.testing import CliRunner

    from ncu_roofline.cli import main

    for name, kind in (("pmkid-brute-force__profile.nsight-cuprof-report", "too_little_work"),
                       ("cudacode__naive.ncu-rep", "unit_throughput")):
        analysis = _analyze(CORPUS / name)
        (group,) = analysis.groups_of(analysis.reports[0])
        top = next(f for f in group.summary.diagnosis if f.kind == kind)
        words = top.words()
        md = CliRunner().invoke(main, ["report", str(CORPUS / name), "-f", "md"]).stdout
        row = next(line for line in md.splitlines() if line.startswith("| ") and " | 100.0 % | " in line)
        cells = [c.strip() for c in row.strip("|").split(" | ")]
        assert cells[-2].replace("\\", "").startswith(words.headline), cells[-2]
        assert (top.speedup is not None) == ("faster" in cells[-2])
        assert cells[-1].replace("\\", "") == (words.next_step or "–")
        out = CliRunner().invoke(main, ["report", str(CORPUS / name), "-f", "csv", "--groups"]).stdout
        (row_csv,) = list(csv.DictReader(io.StringIO(out)))
        assert row_csv["top_finding"] == kind


@needs_corpus
def test_a_latency_row_shows_its_latency_finding() -> None:
    """readOffsetUnroll2 (DRAM reads alone, below the threshold): latency cannot be told from a limit the capture
    did not measure; the row shows that finding and its step (collect the SpeedOfLight section), before the tail
    effect's bound."""
    from click.testing import CliRunner

    from ncu_roofline.cli import main

    path = CORPUS / "cudaprogramming__readSegmentUnroll.ncu-rep"
    analysis = _analyze(path)
    groups = [g for g in analysis.groups_of(analysis.reports[0]) if g.name.startswith("readOffsetUnroll2")]
    latency = [f for g in groups for f in g.summary.diagnosis if f.variant == "unmeasured"]
    assert groups and len(latency) == len(groups)
    md = CliRunner().invoke(main, ["report", str(path), "-f", "md"])
    rows = [line for line in md.stdout.splitlines() if line.startswith("| readOffsetUnroll2")]
    heads = {md_text(f.words().headline) for f in latency}
    step = md_text(latency[0].words().next_step or "")
    assert len(rows) == len(groups)
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split(" | ")]
        assert cells[-2] in heads and cells[-1] == step, cells[-2:]


def md_text(text: str) -> str:
    from ncu_roofline.render.markdown import md_escape

    return md_escape(text)


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_a_stated_cap_gives_the_stated_bound(name: str) -> None:
    """"capped at x by …" beside a bound of b: the last cap stated is b, and none stated is under it."""
    caps = {"capped_other": "other_x", "capped_busiest": "top_x", "capped_arith": "cap_x"}
    wrong = []
    for k in _with_groups(name):
        for f in k.diagnosis:
            stated = [f.figures.get(caps[b]) for b in f.basis if b in caps]
            if not stated or f.speedup is None:
                continue
            if None in stated or stated[-1] != pytest.approx(f.speedup) or min(stated) < f.speedup * (1 - 1e-9):
                wrong.append(f"#{k.raw.index} {f.kind.value}: capped at {stated} against ≤{f.speedup:.3g}×")
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

    view = build_report_view(_analyze(CORPUS / "cs599k__2025-04-21-v1.ncu-rep"))
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
    import dataclasses

    from ncu_roofline.passes.ceiling_figures import ceiling_lever
    from ncu_roofline.passes.ceilings import Ceiling
    from ncu_roofline.passes.fusion import fma_action, fusion_bound

    c = Ceiling("fma_balance", "fp32", 0.5, 1e12, {"fp32_fadd_thread_inst": 1e6, "fp32_fmul_thread_inst": 0.0,
                                                   "fp32_ffma_thread_inst": 0.0, "fma_share": 0.0},
                "0% of FP32 instructions are FMA", fma_action("fp32", 1e6, 0.0))
    assert fusion_bound(c.roof, c.factor, c.evidence) == (None, ("no_pairs",), {})  # no pair to fuse
    # its next step: fewer FP32 instructions, its adds having no multiplies to pair with
    assert ceiling_lever(None, c) == ("no_pairs", {"alone": "adds"})  # type: ignore[arg-type]
    assert "no multiplies to pair with" in c.action and "fuse multiplies" not in c.action
    assert "already an FMA" in fma_action("fp32", 0.0, 0.0)
    # work of FMA only: nothing to fuse either
    assert fusion_bound("fp32", 1.0, {"fp32_fadd_thread_inst": 0.0, "fp32_fmul_thread_inst": 0.0,
                                      "fp32_ffma_thread_inst": 5.0}) == (None, ("no_pairs",), {})
    paired = dict(c.evidence, fp32_fmul_thread_inst=5e5)  # 1.5 M instructions, 0.5 M pairs: 1.5 / 1.0
    assert fusion_bound("fp32", 0.5, paired) == (pytest.approx(1.5), ("fusion",), {
        "pairs": 5e5, "inst_now": 1.5e6, "inst_after": 1e6})
    assert ceiling_lever(None, dataclasses.replace(c, evidence=paired)) == ("fuse", {})  # type: ignore[arg-type]


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_at_the_roof_never_says_no_speed_up_against_its_own_intensity_gap(name: str) -> None:
    wrong = []
    for k in _kernels(name):
        head = next((f for f in k.diagnosis if f.kind == "at_limit"), None)
        gap = next((f for f in k.diagnosis if f.kind == "intensity_gap" and f.speedup is not None), None)
        # the head's bound: none at this intensity, the intensity-gap finding bounds fewer bytes
        if head is not None and gap is not None and head.basis[:1] != ("gap_bounds",):
            wrong.append(f"#{k.raw.index}: {head.basis} beside a gap of {gap.speedup:.3g}×")
        if head is not None and gap is None and "gap_bounds" in head.basis:
            wrong.append(f"#{k.raw.index}: {head.basis} with no gap that bounds")
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
        # no next step about shared memory it has (bank conflicts, padded tiles, less of it per block, its data banks)
        said = _levers(k) & {*_AGAINST_CONFLICTS, "shared_memory", "l1tex__data_bank_reads", "l1tex__data_bank_writes",
                             "sm__inst_executed_pipe_lsu"}  # (its step cuts shared-memory round trips)
        said |= {f.kind.value for f in k.diagnosis if f.kind == "bank_conflicts"}
        if said:
            wrong.append(f"#{k.raw.index} {k.raw.name}: {sorted(said)}")
        head = k.diagnosis[0] if k.diagnosis else None
        if head is not None and k.bound_by == "l1tex__data_pipe_lsu_wavefronts" and k.regime == "at_limit" and \
                head.lever not in ("lsu_no_shared", "library"):  # its wavefronts: uncoalesced global accesses
            wrong.append(f"#{k.raw.index} {k.raw.name}: L1 wavefronts, yet {head.lever}")
    assert not wrong, "\n".join(wrong)


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_a_kernel_that_reads_its_data_once_gets_no_intensity_gap_speedup(name: str) -> None:
    """A launch or group whose DRAM reads match what its loads asked for, with few L1 hits, or what L1 asked L2
    for, with few L2 hits (`reads_once`), can
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
                wrong.append(f"#{k.raw.index} {k.raw.name[:40]}: reads once ({once}) but up to {f.speedup:.2f}×")
            # fuse with the kernels beside it or store a narrower type, not tiles to reuse
            if f.lever not in ("reads_once", "library") or \
                    any(f.figures.get(key) != pytest.approx(value) for key, value in once.items()):
                wrong.append(f"#{k.raw.index} {k.raw.name[:40]}: {f.lever} {dict(f.figures)}")
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
        idle = latency.variant == "idle"  # idle SMs before stalls within warps
        if active is not None and active <= 0.8 - 1e-9 and \
                (not idle or latency.figures["idle"] != pytest.approx(1 - active) or
                 latency.lever not in ("idle", "library")):
            wrong.append(f"{where}: SMs active {active:.0%} of the run, yet: {latency.variant} {dict(latency.figures)}")
        if active is not None and active > 0.8 + 1e-9 and (idle or latency.figures.get("idle") is not None):
            wrong.append(f"{where}: SMs active {active:.0%}, called idle")
        tail = next((f for f in k.diagnosis if f.kind == "tail_effect"), None)
        share = k.limiter_share
        for f in (latency, tail):
            if f is not None and f.speedup and share and f.speedup > 1 / share * (1 + 1e-9):
                wrong.append(f"{where}: {f.kind} {f.speedup:.2f}x past a {1 / share:.2f}x headroom")
        # the tail-effect finding's bound is part of it, not more on top
        within = "tail_within" in latency.basis and latency.figures.get("tail_bound") == tail.speedup if tail else False
        if tail and tail.speedup and latency.speedup and not within:
            wrong.append(f"{where}: the latency does not say the tail's {tail.speedup:.2f}x is within it")
    assert not wrong, "\n".join(wrong)


@needs_corpus
def test_an_idle_sm_latency_keeps_what_the_occupancy_says_of_the_active_cycles() -> None:
    """The Triton rms_norm (GH200): SMs idle 25 % of the run, so the latency finding names idle SMs first, then,
    for the active cycles, the 50 % theoretical occupancy that caps the warps (56 registers a thread); Nsight
    Compute's largest estimate, Theoretical Occupancy (50 %), agrees with that."""
    k = _kernels("cs599k__rms_norm_triton_looping.ncu-rep")[0]
    (latency,) = [f for f in k.diagnosis if f.kind == "latency"]
    # idle SMs before stalls within warps
    assert latency.variant == "idle" and latency.figures["idle"] == pytest.approx(1 - k.launch["sm_active_share"])
    assert round(latency.figures["idle"], 2) == 0.25
    # in their active cycles: achieved occupancy 43 % of a theoretical 50 %
    assert round(latency.figures["achieved"], 2) == 0.43 and latency.figures["theoretical"] == 0.5
    # the theoretical occupancy of 50 % caps the warps in flight: registers (56 a thread) allow 4 blocks an SM
    assert (latency.figures.get("occ_by"), latency.figures.get("occ_blocks"), latency.figures.get("regs")) == \
        ("registers", 4, 56), (latency.lever, dict(latency.figures))
    estimate = k.to_dict()["rules_relation"]["estimate"]
    assert (estimate["relation"], estimate["title"]) == ("agrees", "Theoretical Occupancy")
    assert estimate["speedup_pct"] == pytest.approx(50.0, abs=0.5)


@needs_corpus
def test_the_worth_most_list_says_its_shares_do_not_add() -> None:
    """BIGCROSS3's searchKernelCOSStree: latency (≤5.06×, 80 % of the GPU time) and lane efficiency (≤1.85×,
    46 %) are fixes that compound; the Markdown list says each share is for its fix alone."""
    from ncu_roofline.render import REPORT, RenderOptions, render

    md = render(REPORT, _analyze(CORPUS / "self-join-mistic__profileBIGCROSS3.out.ncu-rep"), "md",
                RenderOptions())
    head = next(line for line in md.splitlines() if line.startswith("Worth most to the program"))
    assert "each for its fix alone: the shares of one kernel's fixes do not add up" in head


@needs_corpus
def test_a_section_with_several_bounds_says_they_do_not_add() -> None:
    """The HTML section of the same kernel says it under its findings; a section with one bound does not."""
    from ncu_roofline.render import REPORT, RenderOptions, render

    page = render(REPORT, _analyze(CORPUS / "self-join-mistic__profileBIGCROSS3.out.ncu-rep"), "html",
                  RenderOptions())
    sections = [part.split("<h3>Nsight Compute")[0] for part in page.split('<details class="kernel"')[1:]]
    counts = [section.count('<span class="bound"') for section in sections]
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
    # Nsight Compute's limit -> (its name in the words, the lever); where several tie, the first is named
    names = {"registers": ("registers", "registers"), "shared_mem": ("shared memory", "shared_memory"),
             "blocks": ("the blocks-per-SM limit", "block_limit"), "warps": ("the warp slots", "warp_slots")}
    wrong, seen = [], 0
    for k in _kernels(name):
        limits = {names[n]: v for n in names if (v := k.raw.number(f"launch__occupancy_limit_{n}")) is not None}
        for f in k.diagnosis:  # with as many warps as the launch allows
            if f.kind != "latency" or f.variant != "at_allowed" or not limits:
                continue
            seen += 1
            fewest = min(limits.values())
            binding = [n for n, v in limits.items() if v == fewest]
            named = (f.figures.get("occ_by"), f.figures.get("occ_blocks"))
            if named != (binding[0][0], fewest) or f.lever not in (binding[0][1], "library"):
                wrong.append(f"#{k.raw.index} {k.raw.name[:40]}: {limits} / {f.lever} {named}")
    assert not wrong, "\n".join(wrong)
    if name == "self-join-mistic__profileBIGCROSS3.out.ncu-rep":  # fewer registers per thread than its 145
        assert seen and next((f.lever, f.figures["regs"]) for k in _kernels(name) for f in k.diagnosis
                             if f.kind == "latency") == ("registers", 145)


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_idle_compute_pipes_are_called_expected_only_at_a_memory_limit(name: str) -> None:
    """"compute pipes left idle, as they are in a kernel at its memory limit" only where the limiter is a memory level
    or a memory unit (by Nsight Compute's own grouping), and the set-aside reason quoted is one of the kernel's."""
    from ncu_roofline.knowledge import throughputs as T

    wrong = []
    for k in _kernels(name):
        estimate = k.to_dict()["rules_relation"]["estimate"] or {"relation": None, "figures": {}}
        memory = k.bound_by in ("dram", "l2", "l1") or (k.bound_by in T.BY_ID and T.BY_ID[k.bound_by].group == "memory")
        if estimate["relation"] == "idle_pipes_expected" and not memory:
            wrong.append(f"#{k.raw.index} {k.raw.name[:40]}: bound by {k.bound_by}")
        reason = estimate["figures"].get("reason")
        if estimate["relation"] == "set_aside" and not any(n.reason == reason for n in k.not_applicable):
            wrong.append(f"#{k.raw.index} {k.raw.name[:40]}: {reason!r}")
    assert not wrong, "\n".join(wrong)


@needs_corpus
def test_a_busy_fp64_pipe_beside_a_busy_xu_pipe_points_at_divisions() -> None:
    """compute_tendencies_x_279_gpu: the FP64 pipe at 70 % is its limit and the XU pipe, which starts each FP64
    division (MUFU.RCP64H), is at 13 %: the lever names divisions first-hand (MW_DivToMult, which multiplies by
    reciprocals, runs that kernel 1.78x faster). The FMA-balance bound (1.17x) stays what the mix allows."""
    k = next(k for k in _kernels("gpu-workshop__MW_Baseline.ncu-rep") if k.raw.name == "compute_tendencies_x_279_gpu")
    assert k.bound_by == "sm__pipe_fp64_cycles_active" and round(k.units["sm__inst_executed_pipe_xu"].share, 3) == 0.133
    head = k.diagnosis[0]
    # the XU pipe, which starts each FP64 division and square root, at 13 %: divisions are likely a good part of it
    from ncu_roofline.passes.levers import BUSY_XU

    assert (head.kind, head.roof, head.lever) == ("unit_throughput", "sm__pipe_fp64_cycles_active", "fp64_division")
    assert k.units["sm__inst_executed_pipe_xu"].share >= BUSY_XU
    faster = next(d for d in _kernels("gpu-workshop__MW_DivToMult.ncu-rep")
                  if d.raw.name == "compute_tendencies_x_279_gpu")
    assert k.q.duration_s.value / faster.q.duration_s.value == pytest.approx(1.78, abs=0.01)


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_an_at_limit_roof_is_pressed_against_only_from_nsight_computes_high_throughput(name: str) -> None:
    """"Presses against it" and "not more parallelism" only from 80 % of the roof (Nsight Compute's Speed-Of-Light
    rule's mark for high use); below, the finding states what is left to the roof itself, 1 / share. A busy unit
    likewise: "only less work" from 80 %, what is left to its peak below."""
    from ncu_roofline.passes.reuse import reads_once

    wrong = []
    for k in _kernels(name):
        for f in k.diagnosis:
            if f.kind != "at_limit":
                continue
            share = k.limiter_share or 0.0
            high = share >= 0.8
            # presses against it, only less work at this roof (its lever's words, not more parallelism) from 80 %;
            # below, what is left to the roof itself, 1 / share, and more in flight reaches it
            once = reads_once(k.reuse) if f.roof == "dram" else None  # it reads each byte once: no tiles to reuse
            lever = ("less_work" if f.roof not in ("dram", "l2", "l1") else "fewer_bytes" if once is None else
                     "fewer_bytes_once") + ("" if high else "_short")
            basis = "at_limit" if high else "at_limit_short"
            if f.variant != ("high" if high else "short") or f.lever not in (lever, "library", "spills") or \
                    f.basis[0] not in (basis, "gap_bounds", "spills_bound") or \
                    f.figures["left"] != pytest.approx(1 / share) or f.speedup is not None:
                wrong.append(f"#{k.raw.index} {k.raw.name[:30]} at {share:.1%}: {f.variant} {f.lever} {f.basis}")
        head = k.diagnosis[0] if k.diagnosis else None
        if head is not None and head.kind == "unit_throughput" and k.regime == "at_limit":  # a busy unit alike
            share = k.limiter_share or 0.0
            # only less work from 80 %; below, its own peak at most 1 / share away
            basis = "unit_at_limit" if share >= 0.8 else "unit_short"
            if head.basis[0] != basis or head.figures["left"] != pytest.approx(1 / share) or head.speedup is not None:
                wrong.append(f"#{k.raw.index} {k.raw.name[:30]} unit at {share:.1%}: {head.variant} {head.basis}")
    assert not wrong, "\n".join(wrong)


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_an_l1_wavefront_step_says_how_to_tell_its_two_causes_apart(name: str) -> None:
    """An L1 wavefront limit whose step names both uncoalesced global accesses and bank conflicts says how to collect
    the counters that tell them apart exactly where the capture holds neither (Nsight Compute's conflict count,
    L1's global load sectors), and never where it holds one."""
    wrong = []
    for k in _kernels(name):
        held = [n for n in (BANK_CONFLICTS, GLOBAL_SECTORS[0]) if k.raw.metrics.get(n) is not None]
        for f in k.diagnosis:
            if f.kind != "unit_throughput" or f.lever not in (LSU_WAVEFRONTS, "lsu_unsplit"):
                continue
            told = "--section MemoryWorkloadAnalysis_Tables" in f.words().detail
            if told == bool(held) or (f.lever == "lsu_unsplit") == bool(held):
                wrong.append(f"#{k.raw.index}: holds {held or 'neither'}, told: {told}")
    assert not wrong, "\n".join(wrong)


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_idle_lanes_are_never_said_to_cap_issue_slots(name: str) -> None:
    """Divergence leaves lanes idle in every instruction issued; it caps no issue slot (a divergent warp issues as
    often) but the useful work per slot. A lane-efficiency finding says "capped" only of a roof's useful work."""
    wrong = [f"#{k.raw.index}: {f.words().headline!r}" for k in _kernels(name) for f in k.diagnosis
             if f.kind == "lane_efficiency" and "capped" in f.words().headline
             and not str(f.figures.get("caps")).endswith("roof")]
    assert not wrong, "\n".join(wrong)


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_fusing_is_a_step_for_idle_sms_only_where_idle_time_fits_a_ramp(name: str) -> None:
    """SMs idle longer than a launch's ramp-up and drain (20 µs) are not idle from the launch's edges, which fusing
    kernels hides: an idle-SM latency step suggests fusing exactly where the idle time is that short."""
    wrong = []
    for k in _kernels(name):
        active, duration = k.launch.get("sm_active_share"), k.q.duration_s.value if k.q.duration_s else None
        for f in k.diagnosis:
            if f.kind != "latency" or f.lever != "idle" or active is None or duration is None:
                continue
            short = (1 - active) * duration <= 20e-6
            if ("fuse short kernels" in (f.words().next_step or "")) != short:
                wrong.append(f"#{k.raw.index}: idle {(1 - active) * duration * 1e6:.1f} µs: {f.words().next_step}")
    assert not wrong, "\n".join(wrong)


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_a_few_blocks_headline_names_the_block_slots_its_bound_fills(name: str) -> None:
    """A grid of fewer blocks than SMs, bounded by spreading its work over every block slot: where SMs hold more
    than one block, the bound is past filling the idle SMs alone (SMs ÷ blocks), and the headline names the slots."""
    wrong = []
    for k in _kernels(name):
        for f in k.diagnosis:
            if f.kind != "too_little_work" or f.variant != "few_blocks" or f.speedup is None:
                continue
            grid, sms = f.figures["grid"], f.figures["sms"]
            assert isinstance(grid, float) and isinstance(sms, float)
            past_sms = f.speedup > sms / grid * 1.01
            if past_sms != ("block slots" in f.words().headline):
                wrong.append(f"#{k.raw.index}: ≤{f.speedup:.2f}× for {grid:.0f} blocks on {sms:.0f} SMs: "
                             f"{f.words().headline}")
    assert not wrong, "\n".join(wrong)
