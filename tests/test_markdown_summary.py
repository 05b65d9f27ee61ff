"""The Markdown summary a pull-request reviewer reads (`report -f md`): every kernel row of the table names its top
finding and that finding's next step (or "–" where it has none), the legend is one line, and no sentence speaks of
"this diagnosis"; and the words of the comparison with Nsight Compute's rules (`knowledge.rules_words`) fill."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS, corpus_files, make_kernel
from test_model import base_metrics

import ncu_roofline
from ncu_roofline.api.analysis import Analysis, ReportResult
from ncu_roofline.api.kernel import analyse_kernel
from ncu_roofline.knowledge.rules_words import TEMPLATES, Relation, sentence
from ncu_roofline.knowledge.wording import fields, fill
from ncu_roofline.render import REPORT, RenderOptions, render
from ncu_roofline.render.markdown import md_escape
from ncu_roofline.render.report import TOP_KERNELS
from ncu_roofline.views.report import build_report_view

FILES = [p.name for p in corpus_files()] or ["(no corpus)"]
LEGEND_CHARS = 130  # one line as a pull-request comment shows it
_CELL = re.compile(r"(?<!\\)\|")


@cache
def _analysis(name: str) -> Analysis:
    return ncu_roofline.analyze(CORPUS / name)


def _markdown(analysis: Analysis) -> str:
    return render(REPORT, analysis, "md", RenderOptions())


def _table(md: str) -> tuple[list[str], list[list[str]]]:
    """The paragraph above the kernel table (its lines) and the table's kernel rows (their cells)."""
    lines = md.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("| Kernel | Launches |"))
    assert lines[head - 1] == "", lines[head - 2: head + 1]
    start = head - 1
    while start > 0 and lines[start - 1] != "":
        start -= 1
    legend = lines[start: head - 1]
    rows = []
    for line in lines[head + 2:]:
        if not line.startswith("|"):
            break
        if not line.startswith("| … "):  # "… N more": the rest of the kernels
            rows.append([cell.strip() for cell in _CELL.split(line)[1:-1]])
    return legend, rows


def _check(analysis: Analysis) -> str:
    """Every kernel row against the view it is written from: the top finding's headline, its next step or "–"."""
    md = _markdown(analysis)
    view = build_report_view(analysis)
    legend, rows = _table(md)
    assert len(legend) == 1 and len(legend[0]) <= LEGEND_CHARS, legend
    header = next(line for line in md.splitlines() if line.startswith("| Kernel |"))
    columns = [c.strip() for c in _CELL.split(header)[1:-1]]
    assert columns[-2:] == ["Top finding", "Next step"], columns
    groups = view["groups"][:TOP_KERNELS]
    assert len(rows) == len(groups)
    for cells, group in zip(rows, groups, strict=True):
        assert len(cells) == len(columns), cells
        top: dict[str, Any] | None = group["top_finding"]
        step = top.get("next_step") if top else None
        assert cells[-1] == (md_escape(step) if step else "–"), (group["short_name"], cells[-1], step)
        assert cells[-1], group["short_name"]
        if top is None:
            assert cells[-2] == "–"
        else:
            assert cells[-2].startswith(md_escape(top["headline"])), (cells[-2], top["headline"])
            assert (md_escape(f"({top['speedup_text']} faster)") in cells[-2]) == bool(top["speedup_text"]), cells[-2]
    assert "this diagnosis" not in md.lower(), md
    return md


def test_a_hand_built_kernel_row_has_its_finding_and_next_step() -> None:
    models = [analyse_kernel(make_kernel(base_metrics(), index=i, name=f"k{i}")) for i in range(2)]
    _check(Analysis([ReportResult("/tmp/capture.ncu-rep", "ncu-rep", "2025.1.0.0 (build 1)", models)], []))


@pytest.mark.parametrize("name", FILES)
def test_every_kernel_row_has_its_next_step(name: str, corpus: Path) -> None:
    """Over the corpus: each row's last cell is its top finding's next step, or "–" where that finding has none;
    one line of legend above the table; never "this diagnosis"."""
    _check(_analysis(name))


@pytest.mark.parametrize("name", FILES)
def test_the_worth_most_list_names_headline_bound_share_and_step(name: str, corpus: Path) -> None:
    """Each item of "Worth most to the program": the kernel, the finding's headline, its bound, the share of the GPU
    time it is worth, and its next step where it has one."""
    analysis = _analysis(name)
    md = _markdown(analysis)
    if "Worth most to the program" not in md:
        return
    items = md.split("Worth most to the program")[1].split("\n\n")[1].splitlines()
    assert items and all(item.startswith("- ") for item in items), items
    findings = [(k, f) for k in build_report_view(analysis)["groups"] for f in k["findings"]]
    for item in items:
        match = re.search(r" \(≤(\S+)× faster, worth up to (<?[\d.]+ %) of GPU time\)\.", item) or re.search(
            r" \((<?[\d.]+ %) of GPU time, the most of any kernel; "
            r"(no speed-up projected: .*?[^\\]|no speed-up projected)\)\.",
            item)  # no speed-up projected: the bound note as it is
        assert match, item
        named = [(k, f) for k, f in findings if item.startswith(f"- {md_escape(k['short_name'])}: "
                                                                f"{md_escape(f['headline'])} (")]
        assert named, item
        steps = {f["next_step"] for _, f in named}
        tail = item[match.end():].strip()
        if " Top instruction: " in f" {tail}":  # where in the code, after the step (`where`)
            tail, _, where = f" {tail}".partition(" Top instruction: ")
            tail = tail.strip()
            assert any(f["where"] and (top := f["where"]["rows"][0])["place"] in where
                       and (not top["sass_known"] or top["sass"] in where) for _, f in named), item
        assert tail in {md_escape(s) if s else "" for s in steps}, (item, steps)


# ------------------------------------------------------------------ the comparison's words

SAMPLE: dict[str, Any] = {
    "what": "L1TEX Global Load Access Pattern", "speedup_pct": 97.0, "match_kind": "tail_effect", "bound": 1.21,
    "saved": 0.17, "below_estimate": True, "left": 1.25, "match_limit": "DRAM (busy cycles)",
    "aside_kind": "bank_conflicts", "aside_roof": "l1", "reason": "Nsight Compute counts no bank conflicts",
    "lead_kind": "too_little_work", "lead_variant": "few_blocks", "lead_limit": "LSU pipe (load/store issue)",
    "share": 0.9, "unit": "L2 throughput", "roof": "dram", "achieved": 0.17,
    "top_kind": "local_memory", "top_variant": "spills", "top_limit": "DRAM", "top_bound": 44.0,
    "small_kind": "bank_conflicts", "small_roof": "l1", "cost": 0.05, "local_waits": 0.71,
}


def _segments(template: Any) -> list[str]:
    return [alt for segment in template for alt in ((segment,) if isinstance(segment, str) else segment)]


@pytest.mark.parametrize("relation", list(Relation))
def test_each_rules_template_fills_with_no_braces_left(relation: Relation) -> None:
    """Every segment and alternative of every relation's template fills from its figures with no brace left, and the
    filled words are short plain sentences (at most 25 words) that never speak of "this diagnosis"."""
    template = TEMPLATES[relation]
    # `rules_words._shown`
    derived = {"match_label", "aside_label", "lead_label", "top_label", "small_label", "roof_label", "latency_below"}
    for segment in _segments(template):
        assert set(fields(segment)) <= set(SAMPLE) | derived, segment
    text = sentence(relation, SAMPLE)
    assert text and "{" not in text and "}" not in text, text
    assert "this diagnosis" not in text.lower() and "ncu-roofline" not in text.lower()
    for said in re.split(r"(?<=[.;])\s+", text):
        assert len(said.split()) <= 25, said
    # an unfilled segment is left out, never printed with its braces
    assert "{" not in fill(template, {}) and "}" not in fill(template, {})


def test_each_rules_segment_alone_fills() -> None:
    """Each alternative on its own (not only the first that fills) renders with no brace left."""
    from ncu_roofline.knowledge.rules_words import _shown

    shown = _shown(SAMPLE)
    for relation, template in TEMPLATES.items():
        for segment in _segments(template):
            filled = fill((segment,), shown)
            assert filled.strip() and "{" not in filled and "}" not in filled, (relation, segment, filled)
