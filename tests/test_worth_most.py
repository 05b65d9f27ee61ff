"""'Worth most to the program': findings ranked by the share of the GPU time × (1 − 1 / bound) over every kernel, and
the kernel with the most GPU time always listed, first where its top finding has no bound."""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest
from conftest import CORPUS, corpus_files

import ncu_roofline
from ncu_roofline.api.analysis import Analysis
from ncu_roofline.knowledge.catalog import page_words
from ncu_roofline.render import REPORT, RenderOptions, render
from ncu_roofline.render.markdown import md_escape
from ncu_roofline.views.groups import share_text
from ncu_roofline.views.report import build_report_view
from ncu_roofline.views.verdict import worth_most

needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"shared report corpus not found at {CORPUS}")
FILES = [p.name for p in corpus_files()]


def _finding(headline: str, speedup: float | None) -> dict[str, Any]:
    return {"headline": headline, "speedup": speedup, "speedup_text": f"≤{speedup}×" if speedup else "",
            "next_step": None, "bound_note": "none: at its limit, only less work at this roof makes it faster",
            "why_none": "at its limit, only less work at this roof makes it faster"}


def _group(gid: str, duration_s: float, total_s: float, *bounds: float | None) -> dict[str, Any]:
    findings = [_finding(f"{gid}-{n}", b) for n, b in enumerate(bounds)]
    return {"id": gid, "short_name": gid, "duration_s": duration_s, "share": duration_s / total_s,
            "findings": findings, "top_finding": findings[0] if findings else None}


def test_ranked_by_share_times_what_the_bound_saves() -> None:
    """Hand-computed: b (30 % of the time, ≤2×) is worth 15 %, c (10 %, ≤5×) 8 %, a's ≤1.1× (60 %) 5.45 %, d's
    ≤1.5× (0.1 %) 0.033 %; a holds the most time and is among them, so nothing is added."""
    groups = [_group("a", 0.6, 1.0, None, 1.1), _group("b", 0.3, 1.0, 2.0), _group("c", 0.1, 1.0, 5.0),
              _group("d", 0.001, 1.0, 1.5)]
    listed = worth_most(groups, top=5)
    got = [(i["finding"]["headline"], i["gain"]) for i in listed["items"]]
    assert got == [("b-0", pytest.approx(0.15)), ("c-0", pytest.approx(0.08)),
                   ("a-1", pytest.approx(0.6 * (1 - 1 / 1.1))), ("d-0", pytest.approx(0.001 / 3))]
    assert (listed["ranked"], listed["largest_added"]) == (4, False)


def test_the_largest_kernel_without_a_bound_comes_first() -> None:
    """97.7 % of the time in a kernel at its limit (no bound): it leads the list with its top finding, ahead of three
    kernels of at most 0.1 % each."""
    groups = [_group("big", 0.977, 1.0, None), *(_group(f"s{n}", 0.001, 1.0, 2.0) for n in range(3))]
    listed = worth_most(groups, top=5)
    assert [i["group"]["id"] for i in listed["items"]] == ["big", "s0", "s1", "s2"]
    lead = listed["items"][0]
    assert lead["finding"] is groups[0]["top_finding"] and lead["gain"] is None and lead["share"] == 0.977
    assert (listed["ranked"], listed["largest_added"]) == (3, True)


def test_the_largest_kernel_with_a_small_bound_follows_the_top() -> None:
    """Its top finding has a bound that does not rank among the top two: it follows them, at its own worth."""
    groups = [_group("big", 0.5, 1.0, 1.01), _group("x", 0.3, 1.0, 3.0), _group("y", 0.2, 1.0, 2.0)]
    listed = worth_most(groups, top=2)
    assert [(i["group"]["id"], i["gain"]) for i in listed["items"]] == [
        ("x", pytest.approx(0.2)), ("y", pytest.approx(0.1)), ("big", pytest.approx(0.5 * (1 - 1 / 1.01)))]


def test_nothing_to_list() -> None:
    assert worth_most([])["items"] == []
    assert worth_most([_group("u", 0.0, 1.0)])["items"] == []  # no time, no finding


@cache
def _analysis(name: str) -> Analysis:
    return ncu_roofline.analyze(CORPUS / name)


def _items(md: str) -> list[str]:
    return md.split("Worth most to the program")[1].split("\n\n")[1].splitlines() if "Worth most" in md else []


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_the_kernel_with_the_most_time_is_always_listed(name: str) -> None:
    """Over the corpus: the list is the findings worth most, share × (1 − 1 / bound) by hand from the view, then
    the kernel with the most GPU time where none of its own ranks: first without a bound."""
    analysis = _analysis(name)
    groups = build_report_view(analysis)["groups"]
    gains = sorted((g["share"] * (1 - 1 / f["speedup"]) for g in groups for f in g["findings"]
                    if f["speedup"] and f["speedup"] > 1 and g["share"]), reverse=True)
    listed = worth_most(groups)
    bounded = [i["gain"] for i in listed["items"] if i["gain"] is not None]
    assert bounded[:5] == pytest.approx(gains[:5])
    largest = max(groups, key=lambda g: g["duration_s"] or 0.0, default=None)
    if largest is None or not largest["duration_s"] or largest["top_finding"] is None:
        return
    assert any(i["group"]["id"] == largest["id"] for i in listed["items"])
    items = _items(render(REPORT, analysis, "md", RenderOptions()))
    assert any(item.startswith(f"- {md_escape(largest['short_name'])}: ") for item in items), items
    if listed["largest_added"] and listed["items"][0]["gain"] is None:
        assert items[0].startswith(f"- {md_escape(largest['short_name'])}: "), items[0]
        lead = listed["items"][0]
        bound = lead["finding"]["why_none"]  # why there is none, as the catalog words it
        assert page_words("worth_largest", {"share": share_text(lead["share"]),
                                            "bound": md_escape(bound) if bound else None}) in items[0]


@needs_corpus
def test_read_segment_unroll_leads_with_its_largest_kernel() -> None:
    """readSegmentUnroll: readOffset's launches hold the most time (11.1 %) at DRAM's limit, with no bound; the four
    tail effects (≤0.8 % each) follow it."""
    md = render(REPORT, _analysis("cudaprogramming__readSegmentUnroll.ncu-rep"), "md", RenderOptions())
    head = next(line for line in md.splitlines() if line.startswith("Worth most to the program"))
    assert "and the kernel with the most GPU time" in head
    items = _items(md)
    assert items[0].startswith("- readOffset\\(…\\) \\[grid 8192×1×1\\]: ")
    assert "(11.1 % of GPU time, the most of any kernel; no speed-up projected: " in items[0]
    assert len(items) == 5 and all("worth up to" in item for item in items[1:])
