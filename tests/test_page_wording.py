"""What the report page and summary say: counts in the right number, the launches' limiters said once, a group
limiter no launch has said plainly, the banner of a chart with nothing to place worded from its reasons,
next steps that are actions, and multi-report pages that say which report a row comes from."""

from __future__ import annotations

import json
import re

import pytest
from conftest import CORPUS, make_kernel
from test_groups import launch
from test_model import base_metrics

import ncu_roofline
from ncu_roofline.api.analysis import Analysis, ReportResult
from ncu_roofline.api.groups import group_kernels
from ncu_roofline.api.kernel import analyse_kernel
from ncu_roofline.knowledge import throughputs as T
from ncu_roofline.render import REPORT, RenderOptions, render
from ncu_roofline.views.groups import group_view
from ncu_roofline.views.report import build_report_view, kernel_view
from ncu_roofline.views.wording import count, page_title, report_names

ELAPSED = "__dot__avg__dot__pct_of_peak_sustained_elapsed"
FLOP_OPS = [f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum" for op in ("ffma", "fadd", "fmul", "dadd",
                                                                                "dmul", "dfma")]


def analysis(*reports: tuple[str, list]) -> Analysis:
    return Analysis([ReportResult(path, "ncu-rep", "2025.1", kernels) for path, kernels in reports], [])


def html_of(a: Analysis) -> str:
    return render(REPORT, a, "html", RenderOptions())


def text_of(html: str) -> str:
    """The page's visible words (no markup, no scripts), as one line."""
    html = re.sub(r"<(script|style|svg)\b.*?</\1>", " ", html, flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def section(html: str, kernel_id: str) -> str:
    start = html.index(f'<details class="kernel" id="{kernel_id}"')
    return html[start:html.index("</details>\n", start)]


# ---------------------------------------------------------------- counts


def test_count_writes_the_noun_in_the_right_number() -> None:
    assert count(1, "kernel") == "1 kernel" and count(3, "kernel") == "3 kernels"
    assert count(1, "launch") == "1 launch" and count(1024, "launch") == "1,024 launches"
    assert count(0, "range") == "0 ranges" and count(2, "smaller range") == "2 smaller ranges"


BAD_COUNT = re.compile(r"\b1 (kernels|launches|ranges|reports|runs|groups|rows|findings)\b|each of the 1\b|"
                       r"\ball 1 launches\b|\b1 (kernel|launch) (have|are)\b")


@pytest.mark.parametrize("launches", [1, 2])
def test_a_one_kernel_page_writes_its_counts_in_the_singular(launches: int) -> None:
    """One kernel (one launch, or two of one group): no "each of the 1 kernel", "1 launches", "1 kernels"."""
    a = analysis(("/tmp/one.ncu-rep", [launch(i, 1000, 6e5) for i in range(launches)]))
    page = text_of(html_of(a))
    assert BAD_COUNT.search(page) is None, BAD_COUNT.search(page)
    assert "One section for each" not in page
    md = render(REPORT, a, "md", RenderOptions())
    assert BAD_COUNT.search(md) is None


def test_the_section_budget_sentence_counts_both_sides() -> None:
    """More groups than sections: "each of the 24 kernels …; the other 1 kernel … is in the table only"."""
    from ncu_roofline.views.groups import MAX_GROUP_SECTIONS

    kernels = [launch(i, 1000 + i, 6e5, name=f"k{i}") for i in range(MAX_GROUP_SECTIONS + 1)]
    page = text_of(html_of(analysis(("/tmp/many.ncu-rep", kernels))))
    assert (f"One section for each of the {MAX_GROUP_SECTIONS} kernels with the most GPU time; the other 1 kernel "
            "(") in page
    assert "of GPU time) is in the table only" in page


def test_the_launch_pager_says_launch_for_one() -> None:
    js = (ncu_roofline.render.html.templates_dir() / "report.js").read_text(encoding="utf-8")
    assert '(shown.length === 1 ? " launch" : " launches")' in js


# ---------------------------------------------------------------- the launches' limiters


def test_the_limiter_per_launch_tally_is_on_the_page_once() -> None:
    """Three launches bound by DRAM, one by FP32: "Limiter per launch: DRAM × 3, FP32 × 1" once; the line on the
    launch that disagrees names it (#3) without a second tally."""
    busy = [launch(i, 1000, 1.6e6) for i in range(3)]
    odd = launch(3, 1000, 1e5)
    html = html_of(analysis(("/tmp/capture.ncu-rep", [*busy, odd])))
    (g,) = group_kernels([*busy, odd])
    part = section(html, f"r0k{g.longest.raw.index}")
    assert part.count("Limiter per launch:") == 1
    assert part.count("FP32 × 1</span>") == 1 and part.count("DRAM × 3</span>") == 1
    assert "<strong>1 launch has another limiter</strong> than the kernel's (DRAM): launch #3." in part


def headline_launch(index: int, l1: float, l2: float):
    """Memory throughput 50 % (the busiest memory unit), its L1/TEX and L2 sub-units at `l1` and `l2` %."""
    return launch(index, 1000, 6e5, **{f"gpu__compute_memory_throughput{ELAPSED}": (50.0, "%"),
                                       f"sm__throughput{ELAPSED}": (20.0, "%"),
                                       f"l1tex__data_pipe_lsu_wavefronts{ELAPSED}": (l1, "%"),
                                       f"lts__t_tag_requests{ELAPSED}": (l2, "%")})


def test_a_group_limiter_no_launch_has_says_what_the_sums_and_the_launches_show() -> None:
    """Launch 0 is bound by L1/TEX (50 %, L2 40 %), launch 1 by L2 (50 %, L1 40 %): summed, the memory headline
    (50 %) tops both sub-units (45 % each). The group's limiter is said as what the sums show, the launches'
    limiters beside it; never "no launch alone"."""
    launches = [headline_launch(0, 50.0, 40.0), headline_launch(1, 40.0, 50.0)]
    (g,) = group_kernels(launches)
    assert g.summary.bound_by == T.MEM and g.limiters == {"l1tex__data_pipe_lsu_wavefronts": 1,
                                                          "lts__t_tag_requests": 1}
    view = group_view(kernel_view, 0, g, g.stats.total, set())
    assert view["bound_note"] == ("busiest over the 2 launches summed; per launch: L1/TEX (wavefronts) in 1, "
                                  "L2 (tag requests) in 1")
    # memory throughput at 50 % of peak over the 2 launches summed: Nsight Compute's memory headline, the busiest
    # memory unit of each launch, whose sum tops each unit's own
    head = g.summary.diagnosis[0]
    assert (head.kind, head.limit, head.figures["share"]) == ("unit_throughput", T.MEM, pytest.approx(0.5))
    assert head.figures["mixed_headline"] == "" and head.figures["mixed_launches"] == 2
    words = head.words()
    assert "50 %" in words.headline and "2 launches" in words.detail and "no launch alone" not in words.detail
    a = analysis(("/tmp/capture.ncu-rep", launches))
    md = render(REPORT, a, "md", RenderOptions())
    assert "memory throughput: busiest over the 2 launches summed; per launch:" in md
    assert "no launch alone" not in md and "no launch alone" not in html_of(a)
    assert "<strong>All 2 launches have another limiter</strong>" in html_of(a)


# ---------------------------------------------------------------- the banner of a chart with nothing to place


def no_flop_counts(index: int = 0, name: str = "k"):
    metrics = base_metrics()
    for op in FLOP_OPS:
        del metrics[op]
    del metrics["smsp__sass_thread_inst_executed_op_hfma_pred_on.sum.per_cycle_elapsed"]
    return analyse_kernel(make_kernel(metrics, index=index, name=name))


def no_fp_work(index: int = 0, name: str = "copy"):
    metrics = base_metrics()
    for op in FLOP_OPS:
        metrics[op] = (0.0, "inst")
    del metrics["smsp__sass_thread_inst_executed_op_hfma_pred_on.sum.per_cycle_elapsed"]
    return analyse_kernel(make_kernel(metrics, index=index, name=name))


def banner(a: Analysis) -> str:
    (chart,) = build_report_view(a)["charts"]
    assert chart["points"] == []
    html = html_of(a)
    start = html.index('<p class="panel"><strong>Test GPU</strong>')
    return text_of(html[start:html.index("</p>", start)])


def test_the_banner_of_zero_flop_counts_asks_for_no_other_capture() -> None:
    """Counts present but zero (a copy, an integer kernel): nothing to collect, so no `ncu` command, and never
    "holds no FLOP or byte counts"."""
    text = banner(analysis(("/tmp/int.ncu-rep", [no_fp_work()])))
    assert "no kernel did floating-point work: the capture holds FLOP counts and they are zero" in text
    assert "ncu-roofline metrics" not in text and "holds no FLOP or byte counts" not in text


def test_the_banner_of_absent_counts_says_how_to_collect_them() -> None:
    text = banner(analysis(("/tmp/basic.ncu-rep", [no_flop_counts()])))
    assert "no kernel here can be placed on a roofline: 1 kernel has no FLOP counts in the capture" in text
    assert "Run ncu $(ncu-roofline metrics) …" in text


def test_the_banner_of_mixed_reasons_names_each() -> None:
    text = banner(analysis(("/tmp/mixed.ncu-rep", [no_fp_work(0, "a"), no_fp_work(1, "b"),
                                                    no_flop_counts(2, "c")])))
    assert ("no kernel here can be placed on a roofline: 2 kernels did no floating-point work (their FLOP counts "
            "are in the capture and zero: integer or data-movement work); 1 kernel has no FLOP counts") in text
    assert "Run ncu $(ncu-roofline metrics)" in text


@pytest.mark.skipif(not (CORPUS / "cutlass__report80.eba551e.ncu-rep").is_file(), reason="shared corpus not present")
def test_the_cutlass_integer_gemm_banner_says_its_counts_are_zero() -> None:
    html = html_of(ncu_roofline.analyze(CORPUS / "cutlass__report80.eba551e.ncu-rep"))
    assert "holds no FLOP or byte counts" not in html
    assert "no kernel did floating-point work: the capture holds FLOP counts and they are zero" in html


# ---------------------------------------------------------------- next steps


def fp64_bound(compute_capability: str, name: str = "stencil", xu: float | None = None):
    m = base_metrics()
    m.update({f"sm__throughput{ELAPSED}".replace("__dot__", "."): (80.0, "%"),
              f"sm__pipe_fp64_cycles_active{ELAPSED}".replace("__dot__", "."): (80.0, "%"),
              f"gpu__compute_memory_throughput{ELAPSED}".replace("__dot__", "."): (20.0, "%"),
              "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum": (2e6, "inst")})
    if xu is not None:  # the XU pipe, which starts each FP64 division and square root
        m[f"sm__inst_executed_pipe_xu{ELAPSED}".replace("__dot__", ".")] = (xu, "%")
    k = analyse_kernel(make_kernel(m, name=name, compute_capability=compute_capability))
    assert k.bound_by == "sm__pipe_fp64_cycles_active" and k.regime == "at_limit"
    return k


def test_an_fp64_pipe_bound_kernel_gets_actions_in_this_gpus_terms() -> None:
    """FP32's roof is 2× FP64's in base_metrics. On sm_80 and sm_90 the FP64 tensor cores (DMMA) are a lever; on
    sm_86 (no FP64 tensor cores) they are not named."""
    ampere = fp64_bound("8.0").diagnosis[0]
    # check that the kernel needs double precision (no silent promotion), then FP32 or mixed precision
    assert (ampere.kind, ampere.lever) == ("unit_throughput", "fp64_own")
    assert ampere.figures["fp32_ratio"] == 2.0 and ampere.figures["dmma_ratio"] == 2.0  # FP64 tensor cores (DMMA)
    words = ampere.words()
    assert "FP32" in words.next_step and "2×" in words.detail and "DMMA" in words.detail
    assert "work reach " not in words.detail  # "FP64 work reaches", as "L1 bytes reach"
    ga102 = fp64_bound("8.6").diagnosis[0]
    assert ga102.lever == "fp64_own" and ga102.figures["dmma_ratio"] is None and "DMMA" not in ga102.words().detail
    # an XU pipe busy beside it (5 % or more): divisions or square roots, whose reciprocal is the lever
    divides = fp64_bound("8.0", xu=6.0).diagnosis[0]
    assert divides.lever == "fp64_division" and "reciprocal" in divides.words().next_step
    assert fp64_bound("8.0", xu=4.0).diagnosis[0].lever == "fp64_own"


def test_an_fp64_library_kernel_leaves_the_source_advice_out() -> None:
    """cuBLAS's DGEMM: the precision is the caller's choice (the routine called), there is no source to check
    for double literals; the next step says so."""
    head = fp64_bound("7.0", name="volta_dgemm_128x64_nn").diagnosis[0]
    # cuBLAS's own kernel, not code to edit: the caller's levers (another routine, shape or precision)
    assert head.lever == "fp64_library" and head.figures["dmma_ratio"] is None  # a lower-precision routine
    words = head.words()
    assert "precision" in words.next_step and "library" in words.next_step
    step = words.next_step + words.detail
    assert "1.0f" not in step and "promotion" not in step and "DMMA" not in step  # Volta has no FP64 tensor cores


# ---------------------------------------------------------------- pages of several reports


def test_page_title_names_the_first_report_and_how_many_more() -> None:
    assert page_title(["/a/x.ncu-rep"]) == "Roofline: x.ncu-rep"
    assert page_title(["/a/x.ncu-rep", "/b/y.ncu-rep", "/c/z.ncu-rep"]) == "Roofline: x.ncu-rep and 2 more"
    assert page_title([]) == "Roofline"


def test_report_names_tell_apart_inputs_of_one_file_name() -> None:
    assert report_names(["/a/x.ncu-rep", "/b/y.ncu-rep"]) == ["x.ncu-rep", "y.ncu-rep"]
    assert report_names(["/a/x.ncu-rep", "/b/x.ncu-rep"]) == ["/a/x.ncu-rep", "/b/x.ncu-rep"]
    assert report_names(["/a/x.ncu-rep", "/b/x.ncu-rep"], redact=True) == ["x.ncu-rep (input 1)",
                                                                           "x.ncu-rep (input 2)"]


def test_a_multi_report_page_has_a_report_column_and_a_short_title() -> None:
    two = analysis(("/runs/first.ncu-rep", [launch(0, 1000, 6e5, name="a")]),
                   ("/runs/second.ncu-rep", [launch(0, 2000, 6e5, name="b")]),
                   ("/runs/third.ncu-rep", [launch(0, 3000, 6e5, name="c")]))
    html = html_of(two)
    assert "<title>Roofline: first.ncu-rep and 2 more</title>" in html
    assert '<th data-sort="str" title="the input file these launches come from">Report</th>' in html
    rows = re.findall(r'<tr class="[^"]*" data-name=.*?</tr>', html, flags=re.S)
    assert len(rows) == 3
    assert [re.search(r'<td class="report" data-v="([^"]+)">', r).group(1) for r in rows] == [
        "third.ncu-rep", "second.ncu-rep", "first.ncu-rep"]  # the most GPU time first
    assert '<div class="table-scroll">\n<table id="kernel-table"' in html  # scrolls in its box, not the page
    data = json.loads(re.search(r'<script type="application/json" id="report-data">(.*?)</script>', html,
                                flags=re.S).group(1))
    assert data["launches"]["reports"] == ["first.ncu-rep", "second.ncu-rep", "third.ncu-rep"]  # the launch list's
    # each kernel's section says which report it is from (two reports may hold kernels of the same name)
    headings = re.findall(r'<summary><strong>(\w+)</strong> <span class="muted">([^<]*)', html)
    assert [(name, text.split(" · ")[0]) for name, text in headings] == [
        ("c", "third.ncu-rep"), ("b", "second.ncu-rep"), ("a", "first.ncu-rep")]


def test_a_one_report_page_has_no_report_column() -> None:
    html = html_of(analysis(("/runs/only.ncu-rep", [launch(0, 1000, 6e5)])))
    assert 'class="report"' not in html and ">Report</th>" not in html
    assert re.search(r'<summary><strong>\w+</strong> <span class="muted">launch #0 · ', html)
    assert "<title>Roofline: only.ncu-rep</title>" in html
