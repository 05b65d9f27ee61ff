"""The HTML page, checked by parsing it: structure, self-containment, escaping, determinism."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from conftest import CORPUS, corpus_files
from markupsafe import escape
from test_views import HOSTILE, analysis_of, base_metrics, make_kernel

import ncu_roofline
from ncu_roofline.passes.finding import top_index
from ncu_roofline.render import REPORT, RenderOptions, render

needs_corpus = pytest.mark.skipif(not corpus_files(), reason=f"shared report corpus not found at {CORPUS}")


class Page(HTMLParser):
    """Collects what the tests look at."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[dict[str, str]] = []
        self.sections: list[str] = []
        self.urls: list[tuple[str, str, str]] = []
        self.scripts: list[str] = []
        self.text: list[str] = []
        self.ids: list[str] = []  # every element id, in document order
        self.details: dict[str, dict[str, str | None]] = {}  # <details> by id (or class): its attributes
        self.verdict: list[dict[str, str]] = []  # the verdict table's rows: cell class -> text
        self.strong: dict[str, list[str]] = {}  # the text of each <strong>, by the id of the block it is in
        self._in_script = False
        self._in_tbody = False
        self._table = ""
        self._cell: str | None = None
        self._strong: str | None = None
        self._blocks: list[str | None] = []  # the open <section>, <details> and <table> elements' ids

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.append(a["id"])
        if tag in ("section", "details", "table"):
            self._blocks.append(a.get("id"))
        if tag == "table":
            self._table = a.get("id", "")
        if tag == "tbody":
            self._in_tbody = self._table in ("kernel-table", "verdict")
        if tag == "tr" and self._in_tbody:
            (self.rows if self._table == "kernel-table" else self.verdict).append(
                a if self._table == "kernel-table" else {})
        if tag == "td" and self._in_tbody and self._table == "verdict":
            self._cell = (a.get("class") or "").split(" ")[0] or f"td{len(self.verdict[-1])}"
            self.verdict[-1][self._cell] = ""
        if tag == "strong":
            self._strong = ""
        if tag == "details":
            self.details[a.get("id") or a.get("class") or f"details{len(self.details)}"] = a
        if tag == "details" and "kernel" in (a.get("class") or ""):
            self.sections.append(a["id"])
        for key in ("src", "href", "xlink:href", "action", "poster"):
            if a.get(key):
                self.urls.append((tag, key, a[key]))
        if tag == "link":
            self.urls.append((tag, "link", a.get("href", "")))
        if tag == "script":
            self._in_script = True
            self.scripts.append("")

    def handle_endtag(self, tag):
        if tag == "tbody":
            self._in_tbody = False
        if tag == "script":
            self._in_script = False
        if tag == "td":
            self._cell = None
        if tag == "strong" and self._strong is not None:
            block = next((b for b in reversed(self._blocks) if b), "")
            self.strong.setdefault(block, []).append(self._strong)
            self._strong = None
        if tag in ("section", "details", "table") and self._blocks:
            self._blocks.pop()

    def handle_data(self, data):
        if self._in_script:
            self.scripts[-1] += data
            return
        self.text.append(data)
        if self._cell is not None:
            self.verdict[-1][self._cell] += data
        if self._strong is not None:
            self._strong += data


def render_html(analysis, redact: bool = False) -> str:
    return render(REPORT, analysis, "html", RenderOptions(redact=redact))


def parse(html: str) -> Page:
    page = Page()
    page.feed(html)
    page.close()
    return page


def test_hostile_kernel_names_are_escaped_everywhere() -> None:
    html = render_html(analysis_of(make_kernel(base_metrics(), name=HOSTILE, demangled_name=HOSTILE)))
    assert "</script><b>" not in html and "<b>x</b>" not in html
    page = parse(html)
    assert len(page.scripts) == 2  # the JSON data block and our own script, nothing injected
    data = json.loads(page.scripts[0])
    assert data["groups"][0]["demangled_name"] == HOSTILE  # the inline JSON round-trips the exact name
    assert page.rows[0]["data-name"].startswith(HOSTILE)  # attribute value unescapes to the name
    assert any(HOSTILE in t for t in page.text)  # and the text shows it literally


def expected_verdict(a) -> list[tuple[str, str | None]]:
    """From the analysis: for the kernels with the most GPU time (at most 5), the top finding's headline (the one
    worth most, as the CSV picks it) and the verdict's next step (the top finding's, else the first one's)."""
    groups = sorted((g for r in a.reports for g in a.groups_of(r)), key=lambda g: -(g.stats.total or 0.0))
    out = []
    for g in groups[:5]:
        words = [f.words() for f in g.summary.diagnosis]
        i = top_index([f.speedup for f in g.summary.diagnosis], [f.kind.value for f in g.summary.diagnosis],
                      [f.variant for f in g.summary.diagnosis])
        assert i is not None
        out.append((words[i].headline, words[i].next_step or next((w.next_step for w in words if w.next_step), None)))
    return out


def test_structure_and_no_external_resources() -> None:
    kernels = [make_kernel(base_metrics(), index=i, name=f"k{i}") for i in range(12)]
    html = render_html(analysis_of(*kernels))
    page = parse(html)
    assert len(page.rows) == 12
    assert len(page.sections) == 12 and len(set(page.sections)) == 12
    # the verdict first, under the title: the 5 kernels with the most time, then the charts and the table
    order = [page.ids.index(i) for i in ("summary", "verdict", "overview", "kernels")]
    assert order == sorted(order)
    assert len(page.verdict) == 5
    assert all(set(r) >= {"name", "headline", "next-step"} for r in page.verdict)
    # the conventions collapsed under "About these numbers"
    assert "open" not in page.details["about"] and page.ids.index("about") < page.ids.index("overview")
    for tag, key, url in page.urls:
        assert url.startswith("#"), (tag, key, url)  # in-page links only: no network, no files
    assert "@import" not in html and "url(http" not in html
    assert re.search(r"<details class=\"kernel\" id=\"r0k11\">", html)  # many kernels: collapsed
    assert re.search(r"<details class=\"kernel\" id=\"r0k0\" open>", html)  # ... but the longest stay open


def test_deterministic_with_source_date_epoch(monkeypatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    a = analysis_of(make_kernel(base_metrics(), name="one"), make_kernel(base_metrics(), index=1, name="two"))
    first, second = render_html(a), render_html(a)
    assert first == second
    assert "2023-11-14 22:13 UTC" in first


def test_findings_show_headline_and_next_step_with_their_detail_collapsed() -> None:
    a = analysis_of(make_kernel(base_metrics(), name="k"))
    html = render_html(a)
    (k,) = a.reports[0].kernels
    assert k.diagnosis
    for f in k.diagnosis:
        w = f.words()
        assert f'<strong class="headline">{escape(w.headline)}</strong>' in html
        if w.next_step:
            assert f'<span class="action">{escape(w.next_step)}</span>' in html
        assert escape(w.detail) in html
    # each finding's detail, bound and section are on demand, collapsed
    assert html.count('<details class="finding-detail">') == len(k.diagnosis)


def test_a_capture_without_flop_counts_says_what_is_missing_in_one_line() -> None:
    metrics = base_metrics()
    for op in ("ffma", "fadd", "fmul", "dadd", "dmul", "dfma"):
        del metrics[f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum"]
    del metrics["smsp__sass_thread_inst_executed_op_hfma_pred_on.sum.per_cycle_elapsed"]
    page = parse(render_html(analysis_of(make_kernel(metrics, name="k"))))
    assert page.ids.index("verdict") < page.ids.index("not-collected") < page.ids.index("overview")
    text = " ".join(page.text)
    line = text.split("Not in the capture:")[1].split("Each missing quantity")[0]
    assert "FLOP counts" in line and "ncu $(ncu-roofline metrics --arch 9.0" in line
    assert "open" not in page.details["missing-all"]  # each quantity with its options: on demand
    assert "work_flop" not in line and "ncu --metrics smsp__sass_thread_inst_executed_op_fadd_pred_on" in text


@needs_corpus
def test_real_report_page() -> None:
    a = ncu_roofline.analyze(CORPUS / "gpu-workshop__MW_Baseline.ncu-rep")
    page = parse(render_html(a))
    assert len(page.rows) == 5 and len(page.sections) == 5
    text = " ".join(page.text)
    assert "Tesla V100-SXM2-32GB" in text and "2022.2.0.0 (build 31140043)" in text
    expected = expected_verdict(a)
    assert all(r["headline"].strip().startswith(h) for r, (h, _) in zip(page.verdict, expected, strict=True))
    assert page.strong["verdict"] == [h for h, _ in expected]  # each headline in bold
    assert [r["next-step"].strip() for r in page.verdict] == [step or "–" for _, step in expected]
    assert "ncu --metrics" in text  # what is missing, and how to collect it
    red = render_html(a, redact=True)
    assert str(CORPUS) not in red


def launch_rows(data: dict) -> list[list]:
    """The page's launch columns (`views.groups.launch_data`) as rows [index, group, ns, limit, permille, regime,
    nvtx], decoded as the page's script decodes them (each index the sum of the differences before it)."""
    names = ("index", "group", "ns", "limit", "permille", "regime", "nvtx")
    columns = data["columns"]
    rows = [[columns[name][i] if name in columns else None for name in names] for i in range(data["count"])]
    index = 0
    for row in rows:
        index += row[0]
        row[0] = index
    return rows


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name)
def test_the_page_lists_every_launch_as_it_was_analysed(path: Path) -> None:
    """Every launch of every corpus capture in the page's launch columns (made from the columns its group keeps,
    `LaunchColumns.by_kind`): its index, duration, limiter, limiter share and regime as its own analysis gives them."""
    from ncu_roofline.views.labels import regime_label, short_label
    from ncu_roofline.views.report import build_report_view

    a = ncu_roofline.analyze(path)
    data = build_report_view(a)["launch_data"]
    rows = launch_rows(data)
    kernels = sorted(((n, k) for n, r in enumerate(a.reports) for k in r.kernels), key=lambda t: (t[0], t[1].raw.index))
    assert len(rows) == len(kernels)

    def rounded(v: float | None, scale: float) -> int | None:
        return round(v * scale) if v is not None and abs(v * scale) < float("inf") else None

    for row, (_, k) in zip(rows, kernels, strict=True):
        index, _, ns, limit, permille, regime, _ = row
        assert index == k.raw.index
        assert ns == rounded(k.q.duration_s.value if k.q.duration_s is not None else None, 1e9)
        assert (data["limits"][limit]["label"] if limit is not None else None) == (
            short_label(k.bound_by) if k.bound_by else None)
        assert permille == rounded(k.limiter_share, 1000)
        assert (data["regimes"][regime] if regime is not None else None) == (
            regime_label(k.regime) if k.regime else None)


@needs_corpus
def test_report_with_nothing_to_plot_says_so() -> None:
    a = ncu_roofline.analyze(CORPUS / "fuzigrad__output.ncu-rep")
    html = render_html(a)
    assert ("NVIDIA GeForce RTX 3080</strong>: no kernel here can be placed on a roofline: 1 kernel has no FLOP "
            "counts in the capture. Run <code>ncu $(ncu-roofline metrics) …</code>") in html
    assert "Speed Of Light" in html
    assert len(parse(html).rows) == 1  # 100 launches of one kernel: one row, the launches in the list
    launches = json.loads(parse(html).scripts[0])["launches"]
    rows = launch_rows(launches)  # as the page's script reads the columns back
    assert launches["count"] == len(rows) == 100
    kernels = sorted(a.reports[0].kernels, key=lambda k: k.raw.index)
    assert [r[0] for r in rows] == [k.raw.index for k in kernels]
    assert [r[2] for r in rows] == [round(k.q.duration_s.value * 1e9) for k in kernels]
    assert "nvtx" not in launches["columns"] and all(r[6] is None for r in rows)  # no NVTX: the column is left out


@needs_corpus
def test_installed_package_renders_html(tmp_path) -> None:
    """A non-editable install must carry its templates (run from outside the source tree)."""
    probe = subprocess.run([sys.executable, "-c", "import ncu_roofline, sys; print(ncu_roofline.__file__)"],
                           cwd=tmp_path, capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip("ncu-roofline is not installed in this environment (source-tree run)")
    installed = Path(probe.stdout.strip())
    if "site-packages" not in installed.parts:
        pytest.skip("ncu-roofline is installed in editable mode")
    out = tmp_path / "r.html"
    proc = subprocess.run([sys.executable, "-m", "ncu_roofline", "report",
                           str(CORPUS / "cudacode__naive.ncu-rep"), "-o", str(out)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"Wrote {out}"
    assert len(parse(out.read_text()).rows) == 1  # two launches of one kernel: one group row
