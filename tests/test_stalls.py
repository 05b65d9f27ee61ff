"""Warp-stall reasons: each reason's share of the stall cycles, read under every Nsight Compute version's names, and
what latency findings say of them (the reasons that lead, or, without stall data, that the cause is not measured).

Shares are checked against values read with NVIDIA's reader here, by hand: a reason's value over the sum of every
reason's in the same metric family, `selected` left out.
"""

from __future__ import annotations

import json
import math
from functools import cache
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from conftest import CORPUS, corpus_files, make_kernel, manifest

import ncu_roofline
from ncu_roofline.knowledge import catalog as C
from ncu_roofline.knowledge.stalls import COLLECT, FAMILIES, STALLS
from ncu_roofline.passes.stalls import OWN_LEVER, leading, stall_figures, stall_reasons
from ncu_roofline.readers import read_report

needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"shared report corpus not found at {CORPUS}")
RATIO = "smsp__average_warps_issue_stalled_{}_per_issue_active.ratio"
_ASSERTED = ("stalls within each warp hold", "Stalls, dependencies", "Stall cycles", "stalls and dependencies")


def _model(metrics: dict[str, float]) -> Any:
    """The least a pass reads: a kernel's raw metrics, with no kept facts (read from the metrics)."""
    return SimpleNamespace(raw=make_kernel(metrics), facts=None)


# --- hand-built kernels: exact arithmetic -----------------------------------------------------------------------

def test_a_share_is_the_reason_over_every_reason_but_selected() -> None:
    m = _model({RATIO.format("long_scoreboard"): 6.0, RATIO.format("barrier"): 3.0, RATIO.format("wait"): 1.0,
                RATIO.format("selected"): 1.0, RATIO.format("sleeping"): 0.0})
    found = stall_reasons(m)
    assert found is not None
    assert [(r.id, share) for r, share in found] == [("long_scoreboard", 0.6), ("barrier", 0.3), ("wait", 0.1)]


def test_no_stall_metric_is_none_and_no_stall_cycle_is_empty() -> None:
    assert stall_reasons(_model({"gpu__time_duration.sum": 1000.0})) is None
    assert stall_reasons(_model({RATIO.format("barrier"): 0.0, RATIO.format("selected"): 1.0})) == []


def test_the_first_family_held_is_read_never_a_mix() -> None:
    # WarpStateStats' ratios beside sampled counts: the ratios alone, whatever the sample counts say
    m = _model({RATIO.format("barrier"): 1.0, RATIO.format("wait"): 3.0,
                "smsp__pcsamp_warps_issue_stalled_long_scoreboard": 1000.0})
    assert [(r.id, s) for r, s in stall_reasons(m) or []] == [("wait", 0.75), ("barrier", 0.25)]


@pytest.mark.parametrize("template", FAMILIES)
def test_every_family_is_read_with_its_own_spelling(template: str) -> None:
    no_instruction = next(r for r in STALLS if r.id == "no_instruction")
    spelled = no_instruction.names[FAMILIES.index(template)]
    m = _model({spelled: 1.0, template.format("membar"): 3.0})
    assert [(r.id, s) for r, s in stall_reasons(m) or []] == [("membar", 0.75), ("no_instruction", 0.25)]


def test_a_reason_leads_from_a_quarter_and_half_again_the_next() -> None:
    lsb, bar = (next(r for r in STALLS if r.id == i) for i in ("long_scoreboard", "barrier"))
    assert leading([(lsb, 0.3), (bar, 0.19)]) is lsb  # 0.3 >= 1.5 × 0.19
    assert leading([(lsb, 0.3), (bar, 0.21)]) is None  # too close to tell
    assert leading([(lsb, 0.24)]) is None  # under a quarter of the stall cycles
    assert leading([]) is None


def test_stall_figures_name_the_leaders_and_their_lever() -> None:
    m = _model({RATIO.format("long_scoreboard"): 7.0, RATIO.format("barrier"): 2.0, RATIO.format("wait"): 1.0})
    lever, figures, evidence = stall_figures(m, "full", "in_flight")
    assert lever == "stall_long_scoreboard"
    assert figures == {"stall1": "long scoreboard", "stall1_share": 0.7, "stall2": "barrier", "stall2_share": 0.2}
    assert evidence == (RATIO.format("long_scoreboard"), RATIO.format("barrier"))
    for variant in OWN_LEVER:  # idle SMs, an unmeasured limit: their own lever first
        assert stall_figures(m, variant, "idle")[0] == "idle"
        # but more work in flight per warp, the lever of fewer warps on a grid that fills the SMs, is what the
        # leading reason's lever says how to do
        assert stall_figures(m, variant, "in_flight")[0] == "stall_long_scoreboard"
    # a runner-up under a tenth of the stall cycles is not named
    small = _model({RATIO.format("wait"): 95.0, RATIO.format("drain"): 5.0})
    assert stall_figures(small, "full", "in_flight")[1] == {"stall1": "wait", "stall1_share": 0.95}
    assert stall_figures(_model({}), "full", "in_flight") == ("in_flight", {"stalls_unmeasured": ""}, ())
    # warps waiting to be selected are plenty, no cause of latency: never the lever
    plenty = _model({RATIO.format("not_selected"): 6.0, RATIO.format("wait"): 1.0})
    assert stall_figures(plenty, "full", "in_flight")[0] == "in_flight"


def test_every_reason_has_a_next_step_and_every_latency_entry_words_the_stalls() -> None:
    assert {r.lever for r in STALLS} <= {lever for kind, lever in C.NEXT_STEPS if kind == "latency"}
    for (kind, variant), _entry in C.CATALOG.items():
        if kind.value != "latency":
            continue
        measured = C.words("latency", variant, None, {"label": "DRAM", "share": 0.2, "achieved": 0.5,
                                                       "theoretical": 0.9, "idle": 0.3, "stall1": "barrier",
                                                       "stall1_share": 0.6, "stall2": "wait", "stall2_share": 0.2})
        unmeasured = C.words("latency", variant, None, {"label": "DRAM", "share": 0.2, "achieved": 0.5,
                                                         "theoretical": 0.9, "idle": 0.3, "stalls_unmeasured": ""})
        assert not any(p in unmeasured.detail for p in _ASSERTED), unmeasured.detail
        if variant == "idle":  # idle SMs, measured: the leading stall of the active cycles, nothing to collect
            assert "Stall cycles: barrier 60 %." in measured.detail and COLLECT not in unmeasured.detail
        else:
            assert "Stall cycles: barrier 60 %, wait 20 %." in measured.detail, variant
            assert COLLECT in unmeasured.detail, unmeasured.detail


# --- the corpus: NVIDIA's reader read by hand -------------------------------------------------------------------

def _by_hand(path: Path, index: int, template: str) -> dict[str, float]:
    """Each reason's share of the stall cycles of one launch (its index in the report), from the values NVIDIA's
    reader gives for the metrics of one family, `selected` left out."""
    ncu_report = pytest.importorskip("ncu_report")
    ctx = ncu_report.load_report(str(path))
    actions = [r.action_by_idx(i) for r in (ctx.range_by_idx(n) for n in range(ctx.num_ranges()))
               for i in range(r.num_actions())]
    action = actions[index]
    head, tail = template.split("{}")
    values = {n[len(head):len(n) - len(tail)]: action.metric_by_name(n).as_double() for n in action.metric_names()
              if n.startswith(head) and n.endswith(tail) and not n.endswith("_not_issued" + tail)}
    values.pop("selected")
    total = math.fsum(v for v in values.values() if v > 0)
    return {reason: v / total for reason, v in values.items() if v > 0}


# (capture, launch index, family, the reason that leads, its share to 3 figures)
HAND = [
    ("cuda-gemm-practice__gemm_v9.ncu-rep", 0, FAMILIES[0], "long_scoreboard", 0.709),  # 2023.2, RTX 3080
    ("cudaprogramming__smemTranspose.ncu-rep", 4, FAMILIES[0], "long_scoreboard", 0.549),  # barrier second
    ("monte-carlo-pi__profile.ncu-rep", 0, FAMILIES[0], "wait", 0.772),  # 2020.2.1
    ("pmkid-brute-force__profile.nsight-cuprof-report", 0, FAMILIES[2], "long_scoreboard", 0.547),  # earliest
    ("nsight-training__manual_nvtx.ncu-rep", 1, FAMILIES[3], "long_scoreboard", 0.952),  # sampled only
]


def _reason_id(spelled: str, template: str) -> str:
    """The id of the reason a family spells `spelled` (every reason a capture holds is in the table)."""
    return next(r.id for r in STALLS if r.names[FAMILIES.index(template)] == template.format(spelled))


@needs_corpus
@pytest.mark.parametrize(("name", "index", "template", "top", "share"), HAND, ids=[h[0] for h in HAND])
def test_shares_match_nvidias_reader_in_process_isolated_and_from_csv(tmp_path: Path, name: str, index: int,
                                                                      template: str, top: str, share: float) -> None:
    from ncu_csv_writer import write_ncu_csv

    path = CORPUS / name
    expected = {_reason_id(reason, template): v for reason, v in _by_hand(path, index, template).items()}
    assert max(expected, key=expected.__getitem__) == top and round(expected[top], 3) == share
    csv_path = write_ncu_csv(read_report(path), tmp_path / f"{name}.csv")
    for how, analysis in (("in process", ncu_roofline.analyze(path)),
                          ("child process", ncu_roofline.analyze(path, isolate=True)),
                          ("metrics let go", ncu_roofline.analyze(path, isolate=True, keep_metrics=False)),
                          ("CSV export", ncu_roofline.analyze(csv_path))):
        kernel = next(k for k in analysis.reports[0].kernels if k.raw.index == index)
        found = stall_reasons(kernel)
        assert found is not None, how
        assert {r.id: s for r, s in found} == pytest.approx(expected, rel=1e-9), how


# (capture, its one kernel's launch index, the reason that leads, the latency finding's variant and lever)
LEADS = [  # fewer warps than the launch allows (17 % of 100 %) from blocks that end unevenly over 1.50 waves: more
         # blocks add none, so more work in flight per warp, as the leading wait stalls say
         ("monte-carlo-pi__profile.ncu-rep", 1, "wait", "fewer_warps", "stall_wait"),
         # fewer warps (28 % of 33 %) over 4.49 waves, where more blocks add none: more work in flight per warp,
         # as the leading wait stalls (77 %) say: break dependent chains, not issue loads early
         ("monte-carlo-pi__profile.ncu-rep", 0, "wait", "fewer_warps", "stall_wait"),
         # as many warps as the launch allows: what caps them stays the lever (32 blocks per SM)
         ("self-join-mistic__ilpProf.ncu-rep", 0, "long_scoreboard", "at_allowed", "block_limit")]


@needs_corpus
@pytest.mark.parametrize(("name", "index", "reason", "variant", "lever"), LEADS, ids=[x[0] for x in LEADS])
def test_a_latency_finding_names_its_leading_stall_and_its_lever(name: str, index: int, reason: str, variant: str,
                                                                 lever: str) -> None:
    path = CORPUS / name
    share = _by_hand(path, index, FAMILIES[0])[reason]
    label = next(r.label for r in STALLS if r.id == reason)
    for isolate in (False, True):
        doc = ncu_roofline.analyze(path, isolate=isolate).to_dict()["reports"][0]
        items = [k for k in doc["kernels"] if k["index"] == index]
        items += [g for g in doc["groups"] if index in g["launch_indices"]]  # diagnosed once its metrics are gone
        assert len(items) == 2
        for item in items:
            (f,) = [f for f in item["diagnosis"] if f["kind"] == "latency"]
            assert (f["variant"], f["lever"], f["figures"]["stall1"]) == (variant, lever, label)
            assert f["figures"]["stall1_share"] == pytest.approx(share, rel=1e-9)
            assert RATIO.format(reason) in f["evidence"]
            assert f"Stall cycles: {label} {share * 100:.0f} %" in f["detail"]


# --- the corpus invariant -------------------------------------------------------------------------------------------

@cache
def _latency_findings() -> list[tuple[str, str, dict[str, Any]]]:
    """(capture, where, finding) for every latency finding of every launch and group of the corpus."""
    out = []
    for path in corpus_files():
        doc = json.loads(ncu_roofline.analyze(path).to_json())
        for r in doc["reports"]:
            for item in (*r["kernels"], *r["groups"]):
                out += [(path.name, str(item.get("name", ""))[:40], f) for f in item.get("diagnosis") or []
                        if f["kind"] == "latency"]
    return out


@needs_corpus
def test_full_sets_name_their_stall_reasons_and_other_captures_assert_no_stall_cause() -> None:
    sets = {name: row["section_set"] for name, row in manifest().items()}
    found = _latency_findings()
    assert found
    wrong = []
    for name, where, f in found:
        figures, words = f["figures"], f"{f['headline']} {f['detail']}"
        if sets.get(name) == "full" and not ("stall1" in figures and "stall1_share" in figures):
            wrong.append(f"{name} {where}: a full set's latency finding names no stall reason: {f['detail']}")
        if "stalls_unmeasured" in figures:
            collect = f["variant"] != "idle"  # idle SMs are the measured cause: no stall cause to collect
            if "stall1" in figures or any(p in words for p in _ASSERTED) or (COLLECT in f["detail"]) != collect:
                wrong.append(f"{name} {where}: no stall data, yet: {f['detail']}")
        elif "stall1" not in figures:
            wrong.append(f"{name} {where}: neither stall reasons nor their absence: {f['detail']}")
        elif f["figures"]["stall1"] not in f["detail"]:
            wrong.append(f"{name} {where}: the leading stall is not in the words: {f['detail']}")
    assert not wrong, "\n".join(wrong[:20])
    basic = [f for name, _, f in found if sets.get(name) == "basic"]
    assert basic and all("stalls_unmeasured" in f["figures"] for f in basic)
