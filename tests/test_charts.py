"""Tests for `ncu_roofline.render.charts.roofline`: the SVG is well-formed, hooks and tooltips are there and
escaped, output is byte-stable, degenerate inputs still render, and the size stays small.

Figures are checked by structure (elements, attributes, texts), not by bytes across library
versions; byte equality is only checked between two renders in one process.
"""

from __future__ import annotations

import math
import random
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import matplotlib
import pytest

from ncu_roofline.render.charts.roofline import draw_roofline, render_roofline_svg
from ncu_roofline.render.charts.spec import (
    PALETTE,
    ChartSpec,
    Point,
    Roof,
    default_ranges,
    si_text,
    valid_points,
    valid_roofs,
)
from ncu_roofline.render.charts.svg import chart_style

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"
ET.register_namespace("", SVG_NS)
ET.register_namespace("xlink", XLINK_NS)
TITLE = f"{{{SVG_NS}}}title"
TEXT = f"{{{SVG_NS}}}text"

HOSTILE = '</script><b>x & "q"'


def axis_ranges(spec: ChartSpec) -> tuple[tuple[float, float], tuple[float, float]]:
    """The (x, y) limits a chart of `spec` uses, as `render_roofline_svg` finds them."""
    bandwidths, computes = valid_roofs(spec.roofs)
    return default_ranges(spec, bandwidths, computes, valid_points(spec.points))


def label_outlines(spec: ChartSpec) -> list[tuple[str, list[tuple[float, float]]]]:
    """Every label drawn inside the plot area (roofs', ceilings', walls'), each with the polygon it covers in
    display coordinates: what a check for overlapping labels compares."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from ncu_roofline.render.charts.ceilings import text_outline

    with chart_style():
        fig, _hooks = draw_roofline(spec)
        renderer = FigureCanvasAgg(fig).get_renderer()
        return [(t.get_text(), text_outline(t, renderer)) for ax in fig.axes for t in ax.texts if t.get_text()]


def h100_roofs(tensor: bool = True) -> list[Roof]:
    roofs = [
        Roof("dram", "bandwidth", 3.35e12, "DRAM 3.35 TB/s"),
        Roof("l2", "bandwidth", 10.1e12, "L2 10.1 TB/s"),
        Roof("l1", "bandwidth", 33.4e12, "L1 33.4 TB/s"),
        Roof("fp64", "compute", 33.5e12, "FP64 33.5 TFLOP/s"),
        Roof("fp32", "compute", 66.9e12, "FP32 66.9 TFLOP/s"),
        Roof("fp16", "compute", 133.8e12, "FP16 134 TFLOP/s"),
    ]
    if tensor:
        roofs.append(Roof("tensor:src_fp16_dst_fp32", "compute", 989e12, "Tensor FP16 989 TFLOP/s"))
    return roofs


def kernel_points(n_kernels: int, seed: int = 7) -> list[Point]:
    """Three levels per kernel, under the roofs, with C++-ish names."""
    rnd = random.Random(seed)
    bounds: list[str | None] = ["dram", "l2", "l1", "fp32", "fp16", "tensor:src_fp16_dst_fp32", None]
    points = []
    for k in range(n_kernels):
        i_dram = 10 ** rnd.uniform(-1.3, 2.6)
        i_l2 = i_dram / 10 ** rnd.uniform(0, 0.8)
        i_l1 = i_l2 / 10 ** rnd.uniform(0, 1.0)
        flop = min(3.35e12 * i_dram, 10.1e12 * i_l2, 33.4e12 * i_l1, 66.9e12) * 10 ** rnd.uniform(-2, 0)
        name = f"void gemm<float, {k}>(Params<T> const&)" if k % 2 else f"elementwise_add_{k}"
        bound = bounds[k % len(bounds)]
        for level, intensity in (("dram", i_dram), ("l2", i_l2), ("l1", i_l1)):
            points.append(Point(f"k{k}", level, intensity, flop, bound, name))
    return points


def parse(svg: str) -> ET.Element:
    assert svg.startswith("<svg"), svg[:80]
    assert "<?xml" not in svg and "<!DOCTYPE" not in svg
    root = ET.fromstring(svg)
    assert root.tag == f"{{{SVG_NS}}}svg"
    return root


def hooked(root: ET.Element, attribute: str) -> list[ET.Element]:
    return [el for el in root.iter() if attribute in el.attrib]


def texts(root: ET.Element) -> list[str]:
    return [el.text or "" for el in root.iter(TEXT)]


@pytest.fixture(scope="module")
def spec() -> ChartSpec:
    return ChartSpec("H100 SXM: test", h100_roofs(), kernel_points(12),
                     annotations=["2 kernels with no FLOP are not drawn"])


@pytest.fixture(scope="module")
def svg(spec: ChartSpec) -> str:
    return render_roofline_svg(spec)


def test_one_hooked_group_per_point_with_tooltip(spec: ChartSpec, svg: str) -> None:
    root = parse(svg)
    points = hooked(root, "data-kernel")
    assert len(points) == len(spec.points)
    expected = sorted((p.kernel_id, p.level) for p in spec.points)
    assert sorted((el.get("data-kernel", ""), el.get("data-level", "")) for el in points) == expected
    for el in points:
        assert el.get("class") == "pt"
        title = el.find(TITLE)
        assert title is not None and title.text
        point = next(p for p in spec.points
                     if p.kernel_id == el.get("data-kernel") and p.level == el.get("data-level"))
        assert point.label in title.text
        assert point.level.upper() in title.text
        assert "FLOP/byte" in title.text and "FLOP/s" in title.text


def test_levels_of_one_kernel_are_linked(spec: ChartSpec, svg: str) -> None:
    links = hooked(parse(svg), "data-link")
    assert sorted(el.get("data-link", "") for el in links) == sorted({p.kernel_id for p in spec.points})


def test_roofs_and_ridges_have_ids_and_tooltips(svg: str) -> None:
    root = parse(svg)
    by_id = {el.get("id"): el for el in root.iter() if el.get("id")}
    for name in ("dram", "l2", "l1", "fp64", "fp32", "fp16", "tensor-src_fp16_dst_fp32"):
        roof = by_id[f"roof-{name}"]
        assert roof.get("class") == "roof"
        title = roof.find(TITLE)
        assert title is not None and title.text
    assert by_id["roof-dram"].get("data-kind") == "bandwidth"
    assert by_id["roof-fp32"].get("data-kind") == "compute"
    assert by_id["roof-tensor-src_fp16_dst_fp32"].get("data-roof") == "tensor:src_fp16_dst_fp32"
    for level in ("dram", "l2", "l1"):
        ridge_title = by_id[f"ridge-{level}"].find(TITLE)
        assert ridge_title is not None and "FLOP/byte" in (ridge_title.text or "")


def test_labels_ticks_and_legends_are_text(svg: str) -> None:
    shown = texts(parse(svg))
    for expected in ("DRAM 3.35 TB/s", "FP32 66.9 TFLOP/s", "1 TFLOP/s", "100 GFLOP/s", "0.1", "1", "10",
                     "100", "Level", "Busiest limit", "2 kernels with no FLOP are not drawn",
                     "H100 SXM: test", "Arithmetic intensity (FLOP/byte)"):
        assert expected in shown, expected


def test_ids_unique_and_references_resolve(svg: str) -> None:
    root = parse(svg)
    ids = [el.get("id") for el in root.iter() if el.get("id")]
    assert len(ids) == len(set(ids))
    refs = set(re.findall(r'url\(#([^)]+)\)', svg)) | set(re.findall(r'href="#([^"]+)"', svg))
    assert refs and refs <= set(ids)
    assert not [i for i in ids if re.fullmatch(r"(line2d|text|patch|axes|figure)_\d+", i or "")]


def test_hostile_names_are_escaped() -> None:
    points = [Point(HOSTILE, "dram", 2.0, 1e12, "dram", HOSTILE),
              Point(HOSTILE, "l2", 1.0, 1e12, "dram", HOSTILE)]
    roofs = [Roof("dram", "bandwidth", 2e12, f"DRAM {HOSTILE} $x$"),
             Roof("fp32", "compute", 3e13, "FP32 \x00\x1b 30 TFLOP/s")]
    spec = ChartSpec(f"title {HOSTILE} $\\alpha$", roofs, points, annotations=[HOSTILE],
                     id_prefix='c1"><b>')
    svg = render_roofline_svg(spec)
    assert "</script>" not in svg and "<b>" not in svg
    root = parse(svg)
    (element, _other) = hooked(root, "data-kernel")
    assert element.get("data-kernel") == HOSTILE
    title = element.find(TITLE)
    assert title is not None and (title.text or "").startswith(HOSTILE)
    shown = texts(root)
    assert f"title {HOSTILE} $\\alpha$" in shown  # no mathtext: dollars stay dollars
    assert HOSTILE in shown
    assert "FP32  30 TFLOP/s" in shown  # control characters dropped, still well-formed XML
    assert all(re.fullmatch(r"[A-Za-z0-9_-]+", el.get("id") or "x") for el in root.iter())


def test_same_input_same_bytes_whatever_the_callers_rcparams(spec: ChartSpec, svg: str) -> None:
    assert render_roofline_svg(spec) == svg
    with matplotlib.rc_context({"lines.linewidth": 5.0, "font.size": 20, "svg.hashsalt": None,
                                "svg.fonttype": "path", "axes.facecolor": "black"}):
        assert render_roofline_svg(spec) == svg


def test_empty_spec_says_nothing_to_plot() -> None:
    root = parse(render_roofline_svg(ChartSpec("empty", [], [], annotations=["0 kernels in report"])))
    shown = texts(root)
    assert "nothing to plot" in shown and "0 kernels in report" in shown
    assert not hooked(root, "data-kernel")


def test_unplottable_points_are_skipped() -> None:
    good = Point("k0", "dram", 1.0, 1e12, None, "good")
    bad = [Point("k1", "dram", 0.0, 1e12, None, "zero"), Point("k2", "dram", -1.0, 1e12, None, "neg"),
           Point("k3", "dram", math.nan, 1e12, None, "nan"), Point("k4", "dram", 1.0, math.inf, None, "inf"),
           Point("k5", "dram", 1.0, 0.0, None, "no flop")]
    root = parse(render_roofline_svg(ChartSpec("t", h100_roofs(), [good, *bad])))
    assert [el.get("data-kernel") for el in hooked(root, "data-kernel")] == ["k0"]
    only_bad = parse(render_roofline_svg(ChartSpec("t", [], bad)))
    assert "nothing to plot" in texts(only_bad)


@pytest.mark.parametrize("roofs", [
    [Roof("dram", "bandwidth", 2e12, "DRAM 2 TB/s")],
    [Roof("fp32", "compute", 3e13, "FP32 30 TFLOP/s")],
    [],
], ids=["bandwidth-only", "compute-only", "points-only"])
def test_partial_roofs_still_draw(roofs: list[Roof]) -> None:
    points = kernel_points(3)
    root = parse(render_roofline_svg(ChartSpec("partial", roofs, points)))
    assert len(hooked(root, "data-kernel")) == len(points)
    assert len(hooked(root, "data-roof")) == len(roofs)


def test_default_axes_depend_on_roofs_only() -> None:
    roofs = h100_roofs()
    (x_low, x_high), (y_low, y_high) = axis_ranges(ChartSpec("", roofs, []))
    # Lowest ridge FP64/L1 ~ 1.0 -> /100 -> 0.01; highest tensor/DRAM ~ 295 -> x100 -> 1e5.
    assert (x_low, x_high) == pytest.approx((1e-2, 1e5))
    # DRAM at the left edge 3.35e10 / 10 -> 1e9; 2 x 989 TFLOP/s -> half decade 3.16e15.
    assert (y_low, y_high) == pytest.approx((1e9, 10**15.5))
    inside = [Point("k", "dram", 1.0, 1e12, None, "k")]
    assert axis_ranges(ChartSpec("", roofs, inside)) == axis_ranges(ChartSpec("", roofs, []))
    outside = [Point("k", "dram", 1e-4, 1e6, None, "k")]
    (wide_x_low, _), (wide_y_low, _) = axis_ranges(ChartSpec("", roofs, outside))
    assert wide_x_low < 1e-4 and wide_y_low < 1e6
    explicit = ChartSpec("", roofs, outside, x_range=(0.1, 10.0), y_range=(1e10, 1e14))
    assert axis_ranges(explicit) == ((0.1, 10.0), (1e10, 1e14))


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="kind"):
        render_roofline_svg(ChartSpec("", [Roof("dram", "bytes", 1e12, "x")], []))
    with pytest.raises(ValueError, match="x_range"):
        axis_ranges(ChartSpec("", h100_roofs(), [], x_range=(10.0, 1.0)))


def test_values_past_the_float_range_give_a_note_not_a_chart() -> None:
    """Roofs 600 decades apart (edited counters) cannot be placed on a log chart: a paragraph says so."""
    roofs = [Roof("dram", "bandwidth", 1e-300, "DRAM"), Roof("fp32", "compute", 1e300, "FP32")]
    out = render_roofline_svg(ChartSpec("H100 <x>", roofs, []))
    assert out.startswith('<p class="note">H100 &lt;x&gt;: chart not drawn.') and "<svg" not in out


def test_id_prefix_and_duplicate_roof_names() -> None:
    roofs = [Roof("dram", "bandwidth", 2e12, "DRAM 2 TB/s"),
             Roof("dram", "bandwidth", 1.6e12, "DRAM measured 1.6 TB/s"),
             Roof("fp32", "compute", 3e13, "FP32 30 TFLOP/s")]
    root = parse(render_roofline_svg(ChartSpec("", roofs, [], id_prefix="gpu0-")))
    ids = {el.get("id") for el in root.iter() if el.get("id", "").startswith("gpu0-")}
    assert {"gpu0-roof-dram", "gpu0-roof-dram-2", "gpu0-roof-fp32", "gpu0-ridge-dram"} <= ids


def test_flop_formatting() -> None:
    assert si_text(1e12, "FLOP/s", 3) == "1 TFLOP/s"
    assert si_text(1e11, "FLOP/s", 3) == "100 GFLOP/s"
    assert si_text(999.7e9, "FLOP/s", 3) == "1 TFLOP/s"
    assert si_text(3.35e15, "FLOP/s", 3) == "3.35 PFLOP/s"
    assert si_text(500.0, "FLOP/s", 3) == "500 FLOP/s"


def test_many_kernels_stay_small() -> None:
    spec = ChartSpec("154 kernels", h100_roofs(), kernel_points(154),
                     annotations=["L1 bytes: Nsight Compute definition"])
    svg = render_roofline_svg(spec)
    size = len(svg.encode("utf-8"))
    print(f"\n154 kernels x 3 levels: {size / 1024:.1f} KiB of SVG")
    assert size < 300 * 1024
    assert len(hooked(parse(svg), "data-kernel")) == 154 * 3


def test_png_uses_the_same_drawing(spec: ChartSpec, tmp_path: Path) -> None:
    out = tmp_path / "chart.png"
    with chart_style():
        fig, _hooks = draw_roofline(spec)
        fig.savefig(out, format="png", dpi=110, metadata={"Software": None})
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_ridge_is_in_the_charts_own_unit() -> None:
    """An Instruction Roofline's ridge is in warp instructions per transaction, not FLOP/byte."""
    roofs = [Roof("l1", "bandwidth", 896e9, "L1 896 Gsectors/s"),
             Roof("issue", "compute", 896e9, "issue 896 Gwarp inst/s")]
    spec = ChartSpec("Instruction Roofline", roofs, [Point("k0", "global", 0.25, 1e11, "l1", "k")],
                     x_label="Warp instructions per transaction", y_label="Warp instructions per second",
                     x_unit="inst/transaction", y_unit="inst/s")
    root = parse(render_roofline_svg(spec))
    ridge = next(el for el in root.iter() if el.get("id") == "ridge-l1").find(TITLE)
    assert ridge is not None and ridge.text is not None
    assert ridge.text.endswith(": 1 inst/transaction") and "FLOP" not in ridge.text


def crowded_spec() -> ChartSpec:
    """Seven ceilings, four of them within 20 % of the FP32 roof (as FMA balance, lane efficiency and issue
    share often are), three under the memory roofs, among the points of twelve kernels."""
    fp32, l1, l2, dram = 66.9e12, 33.4e12, 10.1e12, 3.35e12
    ceilings = [Roof("fp32", "compute", fp32 * f, f"FP32 {name} {f:.0%}")
                for name, f in (("FMA balance", 0.95), ("lane efficiency", 0.91), ("issue share", 0.86),
                                ("FMA balance (long label)", 0.79))]
    ceilings += [Roof("l1", "bandwidth", l1 * 0.5, "L1 coalescing 50 %"),
                 Roof("l2", "bandwidth", l2 * 0.22, "L2 sector use 22 %"),
                 Roof("dram", "bandwidth", dram * 0.8, "DRAM page locality 80 %")]
    return ChartSpec("crowded", h100_roofs(tensor=False), kernel_points(12), ceilings=ceilings,
                     width_in=6.0, height_in=3.9)


def test_ceiling_labels_overlap_no_other_label() -> None:
    """Every ceiling's label is placed where it overlaps no other label: neither another ceiling's, nor a
    roof's (the sloped ones as the rotated boxes they are)."""
    from ncu_roofline.render.charts.ceilings import overlap

    spec = crowded_spec()
    outlines = label_outlines(spec)
    ceiling_labels = {c.label for c in spec.ceilings}
    assert ceiling_labels <= {text for text, _ in outlines}
    clashes = [(a, b) for i, (a, pa) in enumerate(outlines) for b, pb in outlines[i + 1:]
               if (a in ceiling_labels or b in ceiling_labels) and overlap(pa, pb)]
    assert clashes == []


def test_ceiling_labels_keep_their_lines_order() -> None:
    """Labels of ceilings under a compute roof read top to bottom in the order of their lines."""
    spec = crowded_spec()
    tops = {text: max(y for _, y in outline) for text, outline in label_outlines(spec)}
    flat = [c.label for c in sorted(spec.ceilings, key=lambda c: -c.value) if c.kind == "compute"]
    assert [tops[label] for label in flat] == sorted((tops[label] for label in flat), reverse=True)


def test_overlap_of_outlines() -> None:
    from ncu_roofline.render.charts.ceilings import overlap

    square = [(0.0, 0.0), (2.0, 0.0), (2.0, 2.0), (0.0, 2.0)]
    diamond = [(3.0, 1.0), (4.0, 0.0), (5.0, 1.0), (4.0, 2.0)]
    assert overlap(square, [(1.0, 1.0), (3.0, 1.0), (3.0, 3.0), (1.0, 3.0)])
    assert not overlap(square, diamond)
    assert not overlap(square, [(2.0, 0.0), (3.0, 0.0), (3.0, 2.0), (2.0, 2.0)])  # touching is not overlapping
    assert overlap(square, [(-1.0, 1.0), (3.0, 1.0)])  # a segment through it
    assert not overlap([(2.5, -1.0), (4.0, 0.5)], square)  # a 45° segment past its corner


def test_a_kept_figure_shows_nothing_of_the_chart_before() -> None:
    """Charts are drawn one after another on one kept figure per size (`charts/reuse.py`): the second of two
    different charts holds none of the first's labels, and is the same SVG as when drawn on a new figure."""
    from concurrent.futures import ThreadPoolExecutor

    from ncu_roofline.render.charts.reuse import figure_for
    from ncu_roofline.render.charts.svg import chart_style

    with chart_style():
        assert figure_for(6.5, 4.25)[0] is figure_for(6.5, 4.25)[0]  # kept, not built anew
    small = {"width_in": 6.0, "height_in": 3.9, "annotations": ["one line of notes"]}
    first = ChartSpec("First chart", h100_roofs(), kernel_points(6, seed=1), id_prefix="first-",
                      ceilings=[Roof("fp32", "compute", 50e12, "FP32 first ceiling 75 %")],
                      walls=[(2.0, "first wall")], **small)
    second = ChartSpec("Second chart", [Roof("dram", "bandwidth", 0.9e12, "DRAM second 0.9 TB/s"),
                                        Roof("fp32", "compute", 20e12, "FP32 second 20 TFLOP/s")],
                       [Point("s0", "l2", 3.0, 1e12, "fp32", "second_kernel")], id_prefix="second-",
                       **{**small, "annotations": ["other notes"]})
    empty = ChartSpec("Empty chart", [], [], **{**small, "annotations": ["no kernels"]})
    overflow = ChartSpec("Overflow chart", [Roof("dram", "bandwidth", 1e-300, "DRAM"),
                                            Roof("fp32", "compute", 1e300, "FP32")], [], **small)

    def alone(spec: ChartSpec) -> str:  # a new thread keeps no figure: drawn on a new one
        with ThreadPoolExecutor(1) as pool:
            return pool.submit(render_roofline_svg, spec).result()

    first_labels = set(texts(parse(render_roofline_svg(first)))) - set(texts(parse(alone(second))))
    assert {"First chart", "FP32 first ceiling 75 %", "first wall", "Tensor FP16 989 TFLOP/s"} <= first_labels
    first_marks = ("First", "first", "elementwise_add_0", "one line of notes", "Tensor")  # in labels, ids, tooltips
    for before, after in ((first, second), (first, empty), (empty, second), (second, first), (overflow, second)):
        render_roofline_svg(before)
        svg = render_roofline_svg(after)
        assert svg == alone(after)
        if after is not first:
            assert not first_labels & set(texts(parse(svg)))
            assert [mark for mark in first_marks if mark in svg] == []


def test_svg_is_what_savefig_writes(spec: ChartSpec, svg: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """`svg.figure_svg` draws with its own renderer (one text-size cache for all charts) where the chart has no
    layout engine: the same bytes as matplotlib's `savefig`."""
    from ncu_roofline.render.charts import svg as svg_module

    crowded = render_roofline_svg(crowded_spec())
    monkeypatch.setattr(svg_module, "_draw_svg", lambda fig, buffer: fig.savefig(
        buffer, format="svg", metadata=svg_module.SVG_METADATA))
    assert render_roofline_svg(spec) == svg
    assert render_roofline_svg(crowded_spec()) == crowded


def test_a_chart_drawn_on_kept_axes_is_the_chart_drawn_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """Charts on the same axes copy the first one's ticks, grid and labels: the bytes are those of a whole draw,
    and a kept text that does not fit (another figure, a clip path the chart lacks) is not used."""
    from ncu_roofline.render.charts import svg as svg_module

    small = {"width_in": 3.7, "height_in": 3.0}
    charts = [ChartSpec(f"chart {n}", h100_roofs(), kernel_points(6)[n * 6:n * 6 + 6], **small) for n in range(3)]
    charts.append(ChartSpec("other unit", h100_roofs(), kernel_points(3), y_unit="IOP/s", **small))
    monkeypatch.setattr(svg_module, "_KEPT_AXES", {})
    kept = [render_roofline_svg(spec) for spec in charts]
    assert len(svg_module._KEPT_AXES) == 2  # FLOP/s and IOP/s: tick labels differ, so do the axes
    for spec, svg in zip(charts, kept, strict=True):
        svg_module._KEPT_AXES.clear()
        assert render_roofline_svg(spec) == svg
    assert "IOP/s" in kept[3] and "IOP/s" not in kept[0]
    # The axes' text is the earlier chart's: a mark put into it shows up in the next chart
    svg_module._KEPT_AXES.clear()
    render_roofline_svg(charts[0])
    key, (head, axes_text, clips) = next(iter(svg_module._KEPT_AXES.items()))
    assert "Arithmetic intensity" in axes_text
    svg_module._KEPT_AXES[key] = (head, axes_text.replace("Arithmetic intensity", "Kept intensity"), clips)
    assert "Kept intensity" in render_roofline_svg(charts[1]) and "Kept intensity" not in render_roofline_svg(charts[3])
    for stale in ((head.replace("<svg", "<svg data-x=\"1\"", 1), axes_text, clips), (head, axes_text, {"p-none"})):
        svg_module._KEPT_AXES.clear()
        render_roofline_svg(charts[0])
        key = next(iter(svg_module._KEPT_AXES))
        svg_module._KEPT_AXES[key] = (stale[0], "<g>stale</g>", stale[2])
        assert render_roofline_svg(charts[1]) == kept[1]


def test_sol_chart_writes_one_circle_per_kernel_where_the_axes_place_it() -> None:
    from ncu_roofline.render.charts.sol import SolPoint, render_sol_svg

    points = [SolPoint(f"k{n}", (n % 10) / 10, (n // 10) / 10, ("dram", "fp32", "lsu", None)[n % 4], n % 3 == 0,
                       f"{HOSTILE} {n}", size=None if n % 2 else 8.0, note="note" if n == 5 else "")
              for n in range(100)]
    unplaceable = [SolPoint(f"bad{n}", sm, 0.5, "dram", False, "bad") for n, sm in enumerate((math.nan, math.inf))]
    root = parse(render_sol_svg("GPU <x>", points + unplaceable, 0.6, "s3-"))
    groups = [g for g in root.iter(f"{{{SVG_NS}}}g") if g.get("class") == "pt"]
    assert [g.get("data-kernel") for g in groups] == [p.kernel_id for p in points]
    clips = {c.get("id"): c.find(f"{{{SVG_NS}}}rect") for c in root.iter(f"{{{SVG_NS}}}clipPath")}
    boxes = {name: tuple(float(rect.get(k, "nan")) for k in ("x", "y", "width", "height"))
             for name, rect in clips.items() if rect is not None}
    left, top, width, height = boxes.pop("s3-sol-clip")
    # the plot area matplotlib itself clips the threshold lines to, in the same SVG
    assert [pytest.approx(box, abs=2e-3) for box in boxes.values()] == [(left, top, width, height)]
    for point, group in zip(points, groups, strict=True):
        title, circle = list(group)
        assert title.text == f"{HOSTILE} {point.kernel_id[1:]}: SM {point.sm:.0%}, memory {point.memory:.0%}" + (
            "\nnote" if point.note else "")
        # x runs 0-105 % across the plot area, y 0-105 % up it
        assert float(circle.get("cx", "nan")) == pytest.approx(left + width * point.sm * 100 / 105, abs=2e-3)
        assert float(circle.get("cy", "nan")) == pytest.approx(top + height * (1 - point.memory * 100 / 105), abs=2e-3)
        assert float(circle.get("r", "nan")) == (8.0 if point.size else 5.5) / 2
        assert ("fill-opacity: 0;" in circle.get("style", "")) == point.hollow


def test_sol_legend_names_each_colours_limits_as_the_tables_do() -> None:
    from ncu_roofline.render.charts.sol import SolPoint, render_sol_svg

    def point(n: int, family: str | None, label: str) -> SolPoint:
        return SolPoint(f"k{n}", 0.5, 0.5, family, False, f"kernel {n}", bound_label=label)

    limits = ["L1/TEX (wavefronts)", "LSU pipe (load/store issue)", "L1/TEX (wavefronts)", "DRAM"]
    points = [point(n, "l1" if n < 3 else "dram", label) for n, label in enumerate(limits)]
    points += [point(10 + n, "xbar", f"unit {n}") for n in range(5)] + [point(20, "fp32", "")]
    points += [point(30, None, "nothing busy")]  # no limiter: a colour of its own, not "other"'s
    root = parse(render_sol_svg("GPU", points, 0.6, "s0-"))
    shown = texts(root)
    legend = shown[shown.index("Busiest limit") + 1:]
    assert legend == ["L1/TEX (wavefronts)", "LSU pipe (load/store issue)", "DRAM", "unit 0", "unit 1", "unit 2",
                      "+2 more", "FP32", "nothing busy"]
    # each colour's legend marker is the colour of its points
    styles = " ".join(el.get("style", "") for el in root.iter() if el.tag.endswith(("use", "path")))
    for family in ("l1", "dram", "other", "fp32", None):
        assert PALETTE[family].lower() in styles.lower(), family
