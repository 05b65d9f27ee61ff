"""Notebooks: the `Analysis` display and plot, the frames' labels, Categoricals and lists, and docs/notebook.ipynb.

The notebook is run the light way: each code cell in order in one namespace (no Jupyter kernel), the value of
each cell's last expression kept as Jupyter would display it.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from conftest import corpus_files
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from test_smoke import _analysis

import ncu_roofline
from ncu_roofline.api.frame import limit_label
from ncu_roofline.render.csv import csv_cell, flat_text
from ncu_roofline.render.notebook import NOTEBOOK_GROUPS
from ncu_roofline.views.labels import named_limit, short_label

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
SAMPLE = ROOT / "sample_reports" / "MODELLED_decode-gemm-sweep_H100-SXM.csv"


@pytest.fixture(scope="module")
def sample() -> ncu_roofline.Analysis:
    return ncu_roofline.analyze(SAMPLE)


def _markers(fig: Figure) -> list[tuple[str, float]]:
    """The kernels' markers of a roofline figure as (marker, x): one-point lines, not the white ridge dots."""
    return [(str(line.get_marker()), float(line.get_xdata()[0])) for ax in fig.axes for line in ax.lines
            if len(line.get_xdata()) == 1 and line.get_linestyle() == "None" and line.get_markerfacecolor() != "white"]


# The display


def test_repr_html_shows_the_top_groups_and_a_roofline(sample) -> None:
    html = sample._repr_html_()
    groups = sample.groups
    assert html.count("<table") == 1 and html.count("<svg") == 1
    assert "<script" not in html and "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "") \
        .replace('xmlns:xlink="http://www.w3.org/1999/xlink"', "")
    rows = re.findall(r"<tr><td>(\d+)</td><td title=\"[^\"]*\">([^<]*)</td>", html)
    assert [name for _, name in rows] == list(groups["display_name"])  # the most GPU time first
    first = re.search(r"<tr><td>1</td>.*?</tr>", html, re.S)
    assert first is not None
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", first.group(0))
    # limit, its utilisation, regime, next step of the top finding
    assert cells[5:8] == [groups["bound_by_label"][0], f"{groups['bound_utilization'][0] * 100:.0f} %", "at limit"]
    assert cells[8].startswith("Do less") and cells[8].endswith(".")
    assert html.count('class="pt"') == 3 * len(groups)  # every group charted at its three levels


def test_repr_html_is_bounded() -> None:
    many = _analysis("many")  # 40 kernels of 40 names: 40 groups
    html = many._repr_html_()
    assert len(re.findall(r"<tr><td>\d+</td>", html)) == NOTEBOOK_GROUPS
    assert "30 more kernels" in html
    points = re.findall(r'class="pt" data-kernel="([^"]+)"', html)
    assert 0 < len(set(points)) <= NOTEBOOK_GROUPS


def test_repr_html_escapes_hostile_names() -> None:
    html = _analysis("hostile")._repr_html_()
    assert "</script><b>" not in html and "<b>x</b>" not in html
    assert "&lt;/script&gt;&lt;b&gt;x&lt;/b&gt;" in html


def test_repr_html_of_nothing() -> None:
    html = _analysis("empty")._repr_html_()
    assert "0 kernels" in html and "<svg" not in html and "<table" not in html


def test_analyze_results_have_the_display_however_analysis_was_imported(sample) -> None:
    from ncu_roofline.api.analysis import Analysis, analyze

    assert Analysis is ncu_roofline.Analysis
    result = analyze(SAMPLE)
    assert callable(result._repr_html_) and callable(result.plot)
    # A fresh interpreter that names only the api module: the package facade runs first all the same.
    code = ("from ncu_roofline.api.analysis import analyze\n"
            f"a = analyze({str(SAMPLE)!r})\n"
            "print('<svg' in a._repr_html_(), type(a.plot()).__name__)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "MPLBACKEND": "Agg"})
    assert out.stdout.split() == ["True", "Figure"]


# The plot


def test_plot_returns_a_figure_on_agg(sample) -> None:
    fig = sample.plot()
    assert isinstance(fig, Figure) and isinstance(fig.canvas, FigureCanvasAgg)
    (ax,) = fig.axes
    assert ax.get_xscale() == ax.get_yscale() == "log"
    assert ax.get_title(loc="left") == "NVIDIA H100 80GB HBM3 (MODELLED): hierarchical roofline"
    assert ax.get_xlabel() == "Arithmetic intensity (FLOP/byte)"
    assert len(_markers(fig)) == 3 * len(sample.groups)


def test_plot_picks_levels_and_kernels(sample) -> None:
    groups = sample.groups
    fig = sample.plot(level="dram", kernels=2)
    assert sorted(_markers(fig)) == sorted(("o", x) for x in groups["intensity_dram_flop_per_byte"][:2])
    assert fig.axes[0].get_title(loc="left").endswith("(DRAM)")
    fig = sample.plot(level=["l1", "l2"], kernels="n1024")
    assert sorted(m for m, _ in _markers(fig)) == ["^", "s"]
    fig = sample.plot(kernels=["decode_n1", "decode_n4"], gpu="H100")
    assert len(_markers(fig)) == 3 * 4  # n1, n16, n1024 and n4 contain one of the texts
    assert len(_markers(sample.plot(gpu=0))) == len(_markers(sample.plot()))


@pytest.mark.parametrize(("options", "words"), [
    ({"level": "dram2"}, "level must be one or more of dram, l2, l1"),
    ({"level": []}, "level must be"),
    ({"kernels": "no_such_kernel"}, "no kernel's name contains 'no_such_kernel'"),
    ({"kernels": 0}, "at least 1"),
    ({"gpu": "A100"}, "no GPU of this analysis match 'A100'"),
    ({"gpu": 1}, "has 1 GPU(s)"),
])
def test_plot_says_what_the_analysis_does_not_hold(sample, options: dict[str, Any], words: str) -> None:
    with pytest.raises(ValueError, match=re.escape(words)):
        sample.plot(**options)


def test_plot_of_nothing() -> None:
    with pytest.raises(ValueError, match="no kernel to chart"):
        _analysis("empty").plot()


# The frames


def test_frames_have_labels_categoricals_and_lists(sample) -> None:
    for df in (sample.kernels, sample.groups):
        columns = list(df.columns)
        assert columns[columns.index("bound_by") + 1] == "bound_by_label"
        assert isinstance(df["bound_by"].dtype, pd.CategoricalDtype)
        assert list(df["bound_by"].cat.categories) == ["dram", "tensor"]  # roofs in their order, those present
        assert list(df["regime"].cat.categories) == ["at_limit", "latency", "too_little_work"]
        assert str(df["bound_by_label"].dtype) == "string"
        assert df["flags"].map(type).eq(list).all() and df["nvtx_ranges"].map(type).eq(list).all()
    kernels, groups = sample.kernels, sample.groups
    assert list(kernels["bound_by_label"]) == ["DRAM"] * 5 + ["Tensor"]
    assert groups["limiters"][0] == {"tensor": 1} and groups["regimes"][0] == {"at_limit": 1}


@pytest.mark.parametrize(("limit", "regime", "share", "label"), [
    ("dram", "at_limit", 0.9, "DRAM"),
    ("tensor", "latency", 0.3, "Tensor"),
    ("sm__pipe_fp64_cycles_active", "at_limit", 0.9, "FP64 pipe"),
    ("l1tex__some_subunit", "latency", 0.2, "l1tex__some_subunit"),  # no label known: its metric name
    ("dram", "too_little_work", 0.049, "nothing busy"),
    ("dram", "too_little_work", 0.05, "DRAM"),  # too little work for the grid, a limit busy enough to name
    (None, "too_little_work", None, "nothing busy"),
    (None, None, None, None),
])
def test_limit_label(limit: str | None, regime: str | None, share: float | None, label: str | None) -> None:
    assert limit_label(limit, regime, share) == label


def test_frame_labels_are_the_pages(corpus) -> None:
    """Every launch and group of the corpus: the frame's label is the one the report page shows."""
    analysis = ncu_roofline.analyze([*corpus_files(), SAMPLE])
    page = [short_label(n) if (n := named_limit(k)) else None for _, k in analysis.models]
    assert [None if pd.isna(v) else v for v in analysis.kernels["bound_by_label"]] == page
    assert "FP64 pipe" in page and "nothing busy" in page
    summaries = [g.summary for r in analysis.reports for g in analysis.groups_of(r)]
    page = [short_label(n) if (n := named_limit(s)) else None for s in summaries]
    assert [None if pd.isna(v) else v for v in analysis.groups["bound_by_label"]] == page


def test_rows_hold_lists_and_the_csv_joins_them() -> None:
    rows = _analysis("one").rows()
    assert isinstance(rows[0]["flags"], list) and isinstance(rows[0]["nvtx_ranges"], list)
    assert flat_text(["a", "b"]) == "a;b" and flat_text({"dram": 3, "fp32": 1}) == "dram:3;fp32:1"
    assert flat_text([]) == "" and flat_text(1.5) == 1.5
    assert csv_cell(["-x", "y"]) == "'-x;y"  # joined first, then kept from running as a formula


def test_csv_of_groups_is_flat(sample) -> None:
    from ncu_roofline.render import REPORT, RenderOptions, render

    text = render(REPORT, sample, "csv", RenderOptions(groups=True))
    header, first = text.splitlines()[:2]
    row = dict(zip(header.split(","), first.split(","), strict=True))
    assert row["limiters"] == "tensor:1" and row["regimes"] == "at_limit:1" and row["flags"] == ""
    assert "bound_by_label" not in header  # the CSV keeps its columns


# The notebook


def _run_notebook(path: Path) -> list[Any]:
    """Run each code cell of `path` in order in one namespace; the value of each cell's last expression."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    namespace: dict[str, Any] = {"__name__": "__notebook__"}
    shown = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        tree = ast.parse("".join(cell["source"]))
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        exec(compile(tree, str(path), "exec"), namespace)
        shown.append(eval(compile(ast.Expression(last.value), str(path), "eval"), namespace) if last else None)
    return shown


def test_notebook_is_v4_with_outputs_cleared() -> None:
    nb = json.loads((DOCS / "notebook.ipynb").read_text(encoding="utf-8"))
    assert nb["nbformat"] == 4
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert code and all(c["outputs"] == [] and c["execution_count"] is None for c in code)
    assert len({c["id"] for c in nb["cells"]}) == len(nb["cells"])


def test_notebook_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(DOCS)  # as Jupyter runs it: from the notebook's folder
    shown = _run_notebook(DOCS / "notebook.ipynb")
    analysis, groups, kernels, fig = shown
    html = analysis._repr_html_()
    assert "<table" in html and "<svg" in html
    assert isinstance(groups, pd.DataFrame) and "bound_by_label" in groups and len(groups) == 6
    assert isinstance(kernels, pd.DataFrame) and len(kernels) == 5
    assert isinstance(fig, Figure) and len(_markers(fig)) == 4
