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

needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"shared report corpus not found at {CORPUS}")
FILES = [p.name for p in corpus_files()]
_BAD_WORDS = re.compile(r"\b(nan|inf|None)\b")


@cache
def _kernels(name: str) -> list[AnalysedKernel]:
    return [k for r in ncu_roofline.analyze(CORPUS / name).reports for k in r.kernels if k.usable]


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_no_ceiling_below_the_achieved_point(name: str) -> None:
    wrong = [f"#{k.raw.index} {c.kind} under {c.roof}: {c.factor:.3f} < achieved {k.utilization[c.roof]:.3f}"
             for k in _kernels(name) for c in k.ceilings
             if c.roof in k.utilization and c.factor < k.utilization[c.roof] * (1 - 1e-6)]
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


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_bank_conflicts_agree_with_nsight_compute(name: str) -> None:
    wrong = []
    for k in _kernels(name):
        w = k.raw.number("l1tex__data_pipe_lsu_wavefronts_mem_shared.sum")
        c = k.raw.number("l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum")
        ceiling = next((x for x in k.ceilings if x.kind == "bank_conflicts"), None)
        if w is None or c is None or not w:
            continue
        expected = (w - c) / w
        if ceiling is None:
            continue
        if abs(ceiling.factor - expected) > 0.1:
            wrong.append(f"#{k.raw.index}: factor {ceiling.factor:.3f}, Nsight Compute {expected:.3f}")
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
    """Where Nsight Compute's Tail Effect rule fired, the diagnosis has a tail-effect finding (unless the
    kernel has too little work to speak of waves); every tail-effect finding is the report's own
    launch__waves_per_multiprocessor: ceil(waves) / waves, capped by the busiest limit's headroom, with
    the partial wave's share of the run that Nsight Compute's rule message states."""
    wrong = []
    for k in _kernels(name):
        tails = [f for f in k.diagnosis if f.kind == "tail_effect"]
        if _tail_rule(k) and k.regime != "too_little_work" and not tails:
            wrong.append(f"#{k.raw.index}: Nsight Compute's Tail Effect rule fired, no tail-effect finding")
        for f in tails:
            waves = k.raw.number("launch__waves_per_multiprocessor")
            if waves is None or waves <= 1 or k.regime == "too_little_work":
                wrong.append(f"#{k.raw.index}: tail effect with {waves} waves ({k.regime})")
                continue
            whole = math.ceil(waves)
            expected = min(whole / waves, 1 / k.limiter_share)
            if f.factor is not None or f.speedup != pytest.approx(expected):
                wrong.append(f"#{k.raw.index}: factor {f.factor}, speed-up {f.speedup} for {waves} waves")
            if f"takes {1 / whole:.0%} of the run" not in f.text:
                wrong.append(f"#{k.raw.index}: {f.text}")
            rule = next((r for r in k.raw.rules if r.rule == "LaunchConfiguration" and r.title == "Tail Effect"), None)
            if rule is not None and rule.speedup_pct is not None and \
                    rule.speedup_pct != pytest.approx(100 / whole, abs=0.5):
                wrong.append(f"#{k.raw.index}: Nsight Compute puts the partial wave at {rule.speedup_pct} %")
    assert not wrong, "\n".join(wrong)


@needs_corpus
def test_silu_partial_wave_bound_is_hand_computed() -> None:
    """cs599k silu (basic set, GH200): 1,056 blocks of 256 threads, 5 blocks per SM at 62.5 % theoretical
    occupancy on 132 SMs: 660 blocks a wave, 1.6 waves. Two wave-times for 1.6 waves of work: up to
    2 / 1.6 = 1.25x; issue slots at 77 % allow 1.29x, so the bound stands; one kernel, so the program
    gains 1 - 1 / 1.25 = 20 %. Nsight Compute's rule: the partial wave is up to 50 % of the run."""
    doc = json.loads(ncu_roofline.analyze(CORPUS / "cs599k__silu-pytorch.ncu-rep").to_json())
    k = doc["reports"][0]["kernels"][0]
    (tail,) = [f for f in k["diagnosis"] if f["kind"] == "tail_effect"]
    assert tail["speedup"] == pytest.approx(2 / 1.6) and tail["factor"] is None
    assert tail["program_gain"] == pytest.approx(0.2)
    assert "1,056 blocks make 1.60 waves (about 660 blocks run at once)" in tail["text"]
    assert "60% full" in tail["text"] and "takes 50% of the run for 38% of the work" in tail["text"]
    assert "agrees with this diagnosis" in k["rules_comparison"]
    assert k["diagnosis"][0]["kind"] == "unit_throughput"  # the limiter still leads


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
    assert c.factor == pytest.approx((152084 - 6400) / 152084)  # 0.96, not the 0.55 of wavefronts per instruction


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
    transpose = _kernels("cudaprogramming__smemTranspose.ncu-rep")[0]  # was a global-only subset, 604 MB
    assert transpose.q.bytes["l1"].value == pytest.approx(201_326_592)
    # on Hopper the cycle counter x 128 is exactly the newer derived byte metric
    hopper = _kernels("cs599k__2025-04-21-v1.ncu-rep")[0]
    derived = hopper.raw.number("derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.per_second")
    assert hopper.raw.number("l1tex__lsu_writeback_active_mem_lgds.sum") * 128 == pytest.approx(
        derived * hopper.q.duration_s.value, rel=1e-6)
