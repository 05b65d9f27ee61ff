"""The wording catalog: every entry within its limits, whatever figures fill it, and every finding of the corpus
worded within them; the findings reference generated from it. Only these tests (and the wording golden files)
assert words."""

from __future__ import annotations

import os
import re
from functools import cache
from pathlib import Path

import pytest
from conftest import CORPUS, corpus_files

import ncu_roofline
from ncu_roofline.knowledge import catalog as C
from ncu_roofline.knowledge import throughputs as T
from ncu_roofline.knowledge.unit_steps import UNIT_STEPS
from ncu_roofline.knowledge.wording import Kind, Template, fields, fill

DOCS = Path(__file__).resolve().parents[1] / "docs" / "findings.md"
HEADLINE_WORDS, NEXT_STEP_WORDS, DETAIL_WORDS = 12, 20, 60
_LEFTOVER = re.compile(r"[{}]|\b(nan|inf|None)\b")
needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"shared report corpus not found at {CORPUS}")
# The longest label a figure of each kind can hold: the worst case for the word limits.
_LONGEST_UNIT = max((u.label for u in T.UNITS), key=lambda s: len(s.split()))
_TEXT_FIGURES = {"unit": _LONGEST_UNIT, "label": _LONGEST_UNIT, "limit": "DRAM", "level": "DRAM",
                 "precision": "FP32", "caps": "issue slots", "co_label": _LONGEST_UNIT,
                 "top_label": _LONGEST_UNIT, "other_label": "issue slots (less its global loads and stores)",
                 "cap_label": "issue slots (less its global loads and stores)", "busiest_label": _LONGEST_UNIT,
                 "roof_label": "DRAM", "worst_op": "stores", "alone": "multiplies",
                 "occ_by": "the blocks-per-SM limit", "library": "cuBLAS", "one_direction": "", "tiny": "",
                 "spill_at_least": "", "spill_about": "",
                 "l2_at_least": "", "no_roof": "", "stalls_unmeasured": "",
                 "tail_part": "", "mixed_headline": "", "mixed_summed": ""}


def words(text: str) -> int:
    return len(text.split())


def _worst(template: Template) -> dict[str, object]:
    """Figures that fill every segment of a template (each alternative's), labels at their longest."""
    names = {n for seg in template for s in ((seg,) if isinstance(seg, str) else seg) for n in fields(s)}
    return {n: _TEXT_FIGURES.get(n, 123456.789) for n in names}


def _alternatives(template: Template) -> list[Template]:
    """The template once per alternative of its first choice segment (each worded alone)."""
    choice = next((i for i, s in enumerate(template) if not isinstance(s, str)), None)
    if choice is None:
        return [template]
    return [(*template[:choice], alt, *template[choice + 1:]) for alt in template[choice]]  # type: ignore[union-attr]


def _nested_parentheses(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += ch == "("
        if depth > 1:
            return True
        depth -= ch == ")"
    return False


@pytest.mark.parametrize("key", list(C.CATALOG), ids=lambda k: f"{k[0].value}-{k[1]}")
def test_every_entry_is_within_its_limits_with_every_figure_present(key: tuple[Kind, str]) -> None:
    entry = C.CATALOG[key]
    for t in _alternatives(entry.headline):
        headline = fill(t, _worst(t))
        assert words(headline) <= HEADLINE_WORDS and re.search(r"\d", headline), headline
    for t in _alternatives(entry.detail):
        detail = fill(t, _worst(t))
        assert not _nested_parentheses(detail), detail
    assert entry.section


@pytest.mark.parametrize("key", list(C.NEXT_STEPS), ids=lambda k: f"{k[0]}-{k[1]}")
def test_every_next_step_is_one_short_imperative_sentence(key: tuple[str, str]) -> None:
    for t in _alternatives(C.NEXT_STEPS[key]):
        step = fill(t, _worst(t))
        assert words(step) <= NEXT_STEP_WORDS and step.endswith(".") and step[0].isupper(), step
        assert ". " not in step[:-1] and "(" not in step, step


def test_every_kind_has_an_entry_and_every_unit_a_next_step() -> None:
    assert {k for k, _ in C.CATALOG} == set(Kind)
    assert {u.id for u in T.UNITS} <= set(UNIT_STEPS)


def test_a_segment_without_its_figure_is_left_out() -> None:
    t: Template = ("DRAM at {share:pct}", ", ceilings allow {reachable:pct}", (" A {x:x}.", " No x."))
    assert fill(t, {"share": 0.5}) == "DRAM at 50 % No x."
    assert fill(t, {"share": 0.5, "reachable": 0.75, "x": 146.2}) == "DRAM at 50 %, ceilings allow 75 % A 146×."


@cache
def _diagnoses() -> list[tuple[str, dict]]:
    out = []
    for path in corpus_files():
        doc = ncu_roofline.analyze(path).to_dict()
        for r in doc["reports"]:
            for item in (*r["kernels"], *r["groups"]):
                out += [(f"{path.name} {item.get('name', '')[:40]}", f) for f in item.get("diagnosis") or []]
    return out


@needs_corpus
def test_every_finding_of_the_corpus_is_worded_within_the_limits() -> None:
    wrong = []
    found = _diagnoses()
    assert found
    for where, f in found:
        assert {"kind", "headline", "next_step", "detail"} <= set(f), where
        head, step, detail, bound = f["headline"], f["next_step"], f["detail"], f["bound_note"]
        if words(head) > HEADLINE_WORDS or not re.search(r"\d", head):
            wrong.append(f"{where}: headline {head!r}")
        if step is not None and (words(step) > NEXT_STEP_WORDS or not step.endswith(".")):
            wrong.append(f"{where}: next step {step!r}")
        if words(detail) > DETAIL_WORDS or _nested_parentheses(detail):
            wrong.append(f"{where}: detail {detail!r}")
        if any(_LEFTOVER.search(text or "") for text in (head, step, detail, bound)):
            wrong.append(f"{where}: a figure left unfilled: {head} / {step} / {detail} / {bound}")
        if f["kind"] not in {k.value for k in Kind}:
            wrong.append(f"{where}: kind {f['kind']}")
    assert not wrong, "\n".join(wrong[:30])


def test_the_findings_reference_is_generated_from_the_catalog() -> None:
    text = C.reference()
    if os.environ.get("NCU_ROOFLINE_REGOLD"):
        DOCS.parent.mkdir(exist_ok=True)
        DOCS.write_text(text, encoding="utf-8")
    assert DOCS.read_text(encoding="utf-8") == text, "docs/findings.md is stale: NCU_ROOFLINE_REGOLD=1 regenerates it"
    for kind in Kind:
        assert f"## `{kind.value}`" in text
