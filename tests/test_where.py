"""Where in the code: each finding's top instructions by its own per-instruction counter.

Every entry is checked against NVIDIA's reader, opened here: its value is the counter at that PC, its share that
value over the sum of every instance, computed by hand. Hand-built actions check the arithmetic without the corpus.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS

import ncu_roofline
from ncu_roofline.api.analysis import analyze
from ncu_roofline.api.kernel import analyse_kernel
from ncu_roofline.knowledge.wording import Kind
from ncu_roofline.passes.finding import Finding
from ncu_roofline.passes.where import COUNTER_OF_KIND, NO_WHERE, attach_where
from ncu_roofline.readers import read_report, read_report_isolated
from ncu_roofline.readers.instructions import ActionInstructions, FetchedInstructions, Instruction, TopInstructions
from ncu_roofline.render import RenderOptions
from ncu_roofline.render.report import render_report_html, render_report_markdown
from ncu_roofline.views.where import NO_SASS, where_view

needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"shared report corpus not found at {CORPUS}")

HIGGS = "self-join-mistic__profileHiggs.out.ncu-rep"
CUTLASS = ("cutlass__report-s8.ncu-rep", "cutlass__report80.eba551e.ncu-rep")
# Captures with SourceCounters and findings of each kind: 2021 names (BIGCROSS3), no average threads (ilpProf).
WITH_COUNTERS = (HIGGS, "self-join-mistic__ilpProf.ncu-rep", "self-join-mistic__profileBIGCROSS3.out.ncu-rep",
                 "cutlass__report-s8.ncu-rep", "cs599k__2025-04-21-v1.ncu-rep",
                 "cudaprogramming__smemTranspose.ncu-rep", "gpu-workshop__MW_Baseline.ncu-rep",
                 "gpu-workshop__MW_DivToMult.ncu-rep")


# ---- by hand, with NVIDIA's reader -------------------------------------------------------------------------------

def _instanced(action: Any, name: str) -> dict[int, float]:
    m = action.metric_by_name(name)
    assert m is not None, name
    values: dict[int, float] = {}
    if m.num_instances():
        ids = m.correlation_ids()
        for i in range(m.num_instances()):
            values[ids.as_uint64(i)] = values.get(ids.as_uint64(i), 0.0) + m.as_double(i)
    return values


def _by_hand(action: Any, counter: str) -> dict[int, float]:
    """The counter an entry names, per PC, from the report's instanced metrics."""
    lanes = re.fullmatch(r"32\*inst_executed-(\w+)", counter)
    average = re.fullmatch(r"inst_executed\*\(32-(\w+)\)", counter)
    if lanes or average:
        executed = _instanced(action, "inst_executed")
        threads = _instanced(action, (lanes or average).group(1))  # type: ignore[union-attr]
        if lanes:
            return {pc: 32 * n - threads.get(pc, 0.0) for pc, n in executed.items() if n}
        return {pc: n * (32 - threads.get(pc, 0.0)) for pc, n in executed.items() if n}
    if counter.endswith("*"):
        summed: dict[int, float] = {}
        for name in action.metric_names():
            if name.startswith(counter[:-1]) and not name.endswith("_not_issued"):
                for pc, v in _instanced(action, name).items():
                    summed[pc] = summed.get(pc, 0.0) + v
        return summed
    return _instanced(action, counter)


def _actions(path: Path) -> list[Any]:
    import ncu_report

    ctx = ncu_report.load_report(str(path))
    out = []
    for r in range(ctx.num_ranges()):
        rng = ctx.range_by_idx(r)
        out.extend(rng.action_by_idx(j) for j in range(rng.num_actions()))
    out.append(ctx)  # keeps the report open as long as its actions
    return out


def _entries(doc: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any], dict[str, Any]]]:
    """(kernel, finding, entry) for every `where` entry of every launch of the document's first report."""
    return [(k, f, e) for k in doc["reports"][0]["kernels"] for f in k["diagnosis"] for e in f["where"] or []]


@needs_corpus
@pytest.mark.parametrize("name", WITH_COUNTERS)
def test_every_entry_is_the_readers_value_and_share(name: str) -> None:
    path = CORPUS / name
    doc = analyze(path).to_dict()
    actions = _actions(path)
    found = _entries(doc)
    assert found, "a capture with SourceCounters and matching findings gives some `where`"
    for k, f, e in found:
        action = actions[k["index"]]
        assert action.name() == k["name"]
        values = _by_hand(action, e["counter"])
        total = math.fsum(values.values())
        assert e["value"] == pytest.approx(values[e["pc"]], rel=1e-12)
        assert e["share"] == pytest.approx(values[e["pc"]] / total, rel=1e-9)
        assert e["share"] >= 0.01
        sass = " ".join(action.sass_by_pc(e["pc"]).split())
        assert e["sass"] == (None if sass in ("", "???") else sass)  # None where the reader has no SASS text
        # the offset is from the start of the function that holds the PC: the largest start at or below it
        starts = [s for s in _function_starts(action) if s <= e["pc"]]
        assert e["offset"] == (e["pc"] - max(starts) if starts else None)
        # the top ones: none left out holds more than the last one shown
        shown = [x["pc"] for x in f["where"]]
        assert len(shown) <= 5 and [x["value"] for x in f["where"]] == sorted((x["value"] for x in f["where"]),
                                                                                reverse=True)
        if len(shown) < 5:
            assert all(v / total < 0.01 for pc, v in values.items() if pc not in shown)
        else:
            assert all(v <= f["where"][-1]["value"] for pc, v in values.items() if pc not in shown)
        assert f["kind"] in {k.value for k in COUNTER_OF_KIND}


def _function_starts(action: Any) -> list[int]:
    m = action.metric_by_name("launch__function_pcs")
    return [m.as_uint64(i) for i in range(m.num_instances())]


@needs_corpus
def test_higgs_one_load_holds_the_excessive_sectors() -> None:
    doc = analyze(CORPUS / HIGGS).to_dict()
    coalescing = [f for k in doc["reports"][0]["kernels"] for f in k["diagnosis"] if f["kind"] == "coalescing"]
    assert coalescing
    for f in coalescing:  # 98-99 % in each launch, but the last (a smaller one: 71 %)
        top = f["where"][0]
        assert top["sass"].startswith("LDG.E.64") and top["share"] > 0.7
        assert top["counter"] == "derived__memory_l2_theoretical_sectors_global_excessive"
    assert coalescing[0]["where"][0]["share"] == pytest.approx(0.99, abs=0.005)
    groups = [f for g in doc["reports"][0]["groups"] for f in g["diagnosis"] if f["kind"] == "coalescing"]
    assert groups and all(f["where"][0]["sass"].startswith("LDG.E.64") and f["where"][0]["share"] > 0.98
                          for f in groups)


@needs_corpus
@pytest.mark.parametrize("name", CUTLASS)
def test_cutlass_file_and_line_base_names_only_and_redact_drops_them(name: str) -> None:
    path = CORPUS / name
    analysis = analyze(path)
    doc = analysis.to_dict()
    entries = [e for g in doc["reports"][0]["groups"] for f in g["diagnosis"] for e in f["where"] or []]
    entries += [e for _, _, e in _entries(doc)]
    if not entries:
        # no finding of a kind with a counter: the source lines are checked on the reader's own tops
        raw = read_report(path).kernels[0]
        assert raw.instructions is not None
        top = raw.instructions.top("samples")
        assert top is not None
        entries = top.to_list()
    assert any(e["file"] and e["line"] for e in entries)
    for e in entries:
        assert e["file"] is None or ("/" not in e["file"] and "\\" not in e["file"])
    text = analysis.to_json()
    assert "cutlass/include" not in text and "/root/" not in text
    redacted = json.loads(analysis.to_json(redact=True))
    for g in redacted["reports"][0]["groups"]:
        for f in g["diagnosis"]:
            assert all(e["file"] is None and e["line"] is None for e in f["where"] or [])
    for _, _, e in _entries(redacted):
        assert e["file"] is None and e["line"] is None


@needs_corpus
def test_html_and_markdown_show_where_and_redact_leaves_the_files_out() -> None:
    analysis = analyze(CORPUS / "cutlass__report-s8.ncu-rep")
    html = render_report_html(analysis, RenderOptions())
    assert 'class="where"' in html and "LDG.E" in html and ".cu:" in html
    redacted = render_report_html(analysis, RenderOptions(redact=True))
    assert 'class="where"' in redacted and ".cu:" not in redacted
    markdown = render_report_markdown(ncu_roofline.analyze(CORPUS / HIGGS), RenderOptions())
    assert "Top instruction: `" in markdown


@needs_corpus
def test_a_csv_export_has_no_where(tmp_path: Path) -> None:
    from ncu_csv_writer import write_ncu_csv

    csv_path = tmp_path / "higgs.csv"
    write_ncu_csv(read_report(CORPUS / HIGGS), csv_path)
    doc = analyze(csv_path).to_dict()
    findings = [f for k in doc["reports"][0]["kernels"] for f in k["diagnosis"]]
    assert any(f["kind"] == "coalescing" for f in findings)
    assert all(f["where"] is None for f in findings)


@needs_corpus
@pytest.mark.parametrize("name", (HIGGS, "cutlass__report-s8.ncu-rep", "cs599k__2025-04-21-v1.ncu-rep"))
def test_child_process_gives_the_same_where(name: str) -> None:
    path = CORPUS / name

    def wheres(doc: dict[str, Any]) -> list[Any]:
        report = doc["reports"][0]
        return [[f["where"] for f in k["diagnosis"]] for k in [*report["kernels"], *report["groups"]]]

    here = wheres(analyze(path).to_dict())
    assert any(w for launch in here for w in launch)
    assert wheres(analyze(path, isolate=True).to_dict()) == here
    # the raw kernels read in a child process bring the top instructions of every counter back
    raw = [analyse_kernel(k) for k in read_report_isolated(path).kernels]
    assert [[f.where.to_list() if f.where else None for f in k.diagnosis] for k in raw] == here[:len(raw)]
    assert all(isinstance(k.raw.instructions, FetchedInstructions) for k in raw)


# ---- hand-built ----------------------------------------------------------------------------------------------------

class _Ids:
    def __init__(self, pcs: list[int]) -> None:
        self.pcs = pcs

    def as_uint64(self, i: int) -> int:
        return self.pcs[i]


class _Metric:
    def __init__(self, values: dict[int, float]) -> None:
        self.pcs, self.values = list(values), list(values.values())

    def has_correlation_ids(self) -> bool:
        return True

    def correlation_ids(self) -> _Ids:
        return _Ids(self.pcs)

    def num_instances(self) -> int:
        return len(self.pcs)

    def as_double(self, i: int) -> float:
        return self.values[i]

    def as_uint64(self, i: int) -> int:
        return self.pcs[i]


class _Source:
    def file_name(self) -> str:
        return "C:\\build\\kernels\\gemm.cu"

    def line(self) -> int:
        return 42


class _Action:
    def __init__(self, metrics: dict[str, dict[int, float]]) -> None:
        self.metrics = metrics
        self.asked: list[str] = []

    def metric_names(self) -> list[str]:
        return list(self.metrics)

    def metric_by_name(self, name: str) -> _Metric | None:
        self.asked.append(name)
        return _Metric(self.metrics[name]) if name in self.metrics else None

    def sass_by_pc(self, pc: int) -> str:
        return f"  OP{pc:x}   R1, R2 "

    def source_info(self, pc: int) -> _Source | None:
        return _Source() if pc == 0x1010 else None


def test_lanes_lost_shares_and_offsets_by_hand() -> None:
    action = _Action({
        "launch__function_pcs": {0x1000: 0.0},
        "inst_executed": {0x1000: 10.0, 0x1010: 10.0, 0x1020: 0.0, 0x1030: 1000.0},
        "thread_inst_executed_true": {0x1000: 320.0, 0x1010: 160.0, 0x1020: 0.0, 0x1030: 31990.0},
    })
    top = ActionInstructions(None, action).top("lanes_lost")
    assert top is not None and top.recipe == "32*inst_executed-thread_inst_executed_true"
    # lost: 0, 160, -, 10 of 170 in all
    assert top.total == 170.0
    assert [(i.offset, i.value) for i in top.instructions] == [(0x10, 160.0), (0x30, 10.0)]
    first = top.instructions[0]
    assert first == Instruction(0x1010, 0x10, "OP1010 R1, R2", 160.0, 160.0 / 170.0, "gemm.cu", 42)
    assert first.to_dict("c", redact=True)["file"] is None


def test_fallbacks_min_share_and_at_most_five() -> None:
    samples = {0x2000 + 16 * n: float(n) for n in range(1, 20)}
    samples[0x2400] = 0.5  # under 1 % of the sum
    action = _Action({"smsp__pcsamp_warps_issue_stalled_wait": samples,
                      "smsp__pcsamp_warps_issue_stalled_wait_not_issued": {0x2000: 1e9},
                      "inst_executed": {0x2000: 4.0}, "derived__avg_thread_executed": {0x2000: 30.0}})
    source = ActionInstructions(None, action)
    top = source.top("samples")
    assert top is not None and top.recipe == "smsp__pcsamp_warps_issue_stalled_*"
    assert top.total == sum(samples.values())
    assert [i.value for i in top.instructions] == [19.0, 18.0, 17.0, 16.0, 15.0]
    assert all(i.offset is None for i in top.instructions)  # no function start in the report
    lanes = source.top("lanes_lost")
    assert lanes is not None and lanes.instructions[0].value == 8.0  # 4 × (32 − 30)
    assert source.top("excessive_global_sectors") is None  # not in the report
    assert source.fetched().top("samples") == top and source.fetched().top("excessive_shared_wavefronts") is None


def test_only_counters_asked_for_are_read() -> None:
    action = _Action({"smsp__pcsamp_sample_count": {0x10: 1.0}})
    source = ActionInstructions(None, action)
    assert source.top("samples", read=False) is None and action.asked == []
    source.top("samples")
    assert source.top("samples", read=False) is not None
    assert set(source.fetched().tops) == {"samples"}


def test_attach_where_fills_the_kinds_with_a_counter_only() -> None:
    top = TopInstructions("excessive_global_sectors", "m", 10.0, (Instruction(1, 0, "LDG", 9.0, 0.9),))
    source = FetchedInstructions({"excessive_global_sectors": top})
    findings = [Finding(Kind.COALESCING, "cap", "l2", 0.5, "dram"), Finding(Kind.AT_LIMIT, "high", "dram", None,
                                                                             "dram"),
                Finding(Kind.LATENCY, "no_ceiling", None, None, None)]
    out = attach_where(findings, source)
    assert [f.where for f in out] == [top, None, None]
    assert attach_where(findings, None) == findings
    assert out[0].to_dict()["where"] == [{"pc": 1, "offset": 0, "sass": "LDG", "counter": "m", "value": 9.0,
                                          "share": 0.9, "file": None, "line": None}]


def test_offsets_count_from_the_function_that_holds_the_pc() -> None:
    """Two functions in the launch's code: each PC's offset is from the largest start at or below it."""
    action = _Action({"launch__function_pcs": {0x1000: 0.0, 0x2000: 0.0},
                      "smsp__pcsamp_sample_count": {0x0800: 1.0, 0x1040: 5.0, 0x2010: 4.0}})
    top = ActionInstructions(None, action).top("samples")
    assert top is not None
    assert [(i.pc, i.offset) for i in top.instructions] == [(0x1040, 0x40), (0x2010, 0x10), (0x0800, None)]


class _NoSassAction(_Action):
    def sass_by_pc(self, pc: int) -> str:
        return "???" if pc == 0x10 else ""


def test_no_sass_text_is_none_and_the_view_shows_a_dash() -> None:
    action = _NoSassAction({"smsp__pcsamp_sample_count": {0x10: 3.0, 0x20: 1.0}})
    top = ActionInstructions(None, action).top("samples")
    assert top is not None and [i.sass for i in top.instructions] == [None, None]
    view = where_view("samples", top.to_list())
    assert view is not None and [(r["sass"], r["sass_known"]) for r in view["rows"]] == [(NO_SASS, False)] * 2
    assert view["from_launch"] is None


@pytest.mark.parametrize("variant", sorted(v for _, v in NO_WHERE))
def test_latency_of_idle_sms_an_unmeasured_limit_or_the_occupancy_cap_has_no_where(variant: str) -> None:
    top = TopInstructions("samples", "m", 10.0, (Instruction(1, 0, "LDG", 9.0, 0.9),))
    source = FetchedInstructions({"samples": top})
    out = attach_where([Finding(Kind.LATENCY, variant, None, None, None),
                        Finding(Kind.LATENCY, "full", None, None, None)], source)
    assert [f.where for f in out] == [None, top]


@needs_corpus
def test_a_groups_where_says_its_launch() -> None:
    """A group of several launches shows the instructions of its longest launch, and its caption says which."""
    analysis = analyze(CORPUS / HIGGS)
    html = render_report_html(analysis, RenderOptions())
    longest = {g["findings_from_launch"] for g in analysis.to_dict()["reports"][0]["groups"] if g["launches"] > 1
               and any(f["where"] for f in g["diagnosis"])}
    assert longest
    assert all(f"from launch #{i}</caption>" in html for i in longest)


class _BrokenAction(_Action):
    def sass_by_pc(self, pc: int) -> str:
        raise RuntimeError("damaged code block")


def test_a_reader_error_on_the_code_leaves_no_where_and_reads_on() -> None:
    """NVIDIA's reader failing on a damaged per-instruction block costs the finding its `where`, nothing else; a
    counter whose code reads is still read."""
    action = _BrokenAction({"smsp__pcsamp_sample_count": {0x10: 3.0, 0x20: 1.0}})
    instructions = ActionInstructions(None, action)
    assert instructions.top("samples") is None
    assert instructions.fetched().top("samples") is None
    fine = ActionInstructions(None, _NoSassAction({"smsp__pcsamp_sample_count": {0x10: 3.0}})).top("samples")
    assert fine is not None and len(fine.instructions) == 1


def _view(shares: list[float]) -> Any:
    return where_view("excessive_global_sectors", [
        {"pc": 16 * n, "offset": 16 * n, "sass": "LDG.E R0, [R2.64]", "counter": "c", "value": s * 100, "share": s,
         "file": None, "line": None} for n, s in enumerate(shares)])


def test_the_top_instruction_says_how_many_after_it_hold_as_much() -> None:
    from ncu_roofline.knowledge.catalog import page_words
    from ncu_roofline.views.where import alike

    # rms_norm's unvectorised float4: four scalar loads of a quarter each
    none = {"alike": None, "alike_one": None, "alike_more": None}
    assert alike(_view([0.25, 0.25, 0.25, 0.25])) == none | {"alike": 3}
    assert alike(_view([0.5, 0.25, 0.25])) == none
    assert alike(_view([0.3])) == none
    assert alike(_view([0.2, 0.2, 0.1])) == none | {"alike_one": ""}
    assert alike(_view([0.254, 0.246])) == none  # both show as "25 %"
    # every one of the five listed: more may hold as much past the list
    assert alike(_view([0.059] * 5)) == none | {"alike_more": 4}
    assert alike(_view([0.059] * 4)) == none | {"alike": 3}
    assert page_words("top_instruction", {"place": "+0x05e0", "share": "8.4 %", "counter": "lanes lost",
                                          **alike(_view([0.084, 0.084, 0.01]))}) == (
        "At +0x05e0: 8.4 % of the lanes lost; one more holds as much")
    words = page_words("top_instruction", {"sass": "LDG.E", "place": "+0x0870", "share": "25 %",
                                           "counter": "excessive global sectors", "source": None,
                                           **alike(_view([0.25] * 4))})
    assert words == "At LDG.E +0x0870: 25 % of the excessive global sectors; 3 more hold as much"


@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared report corpus not found")
def test_rms_norms_four_scalar_loads_are_named_as_four() -> None:
    from ncu_roofline.render.report import render_report_markdown

    md = render_report_markdown(analyze(CORPUS / "cs599k__2025-04-21-v1.ncu-rep"), RenderOptions())
    assert ("Top instruction: `LDG.E R19, desc[UR6][R12.64]` at +0x0870 (25 % of the excessive global sectors; "
            "3 more hold as much).") in md
