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
from test_views import HOSTILE, analysis_of, base_metrics, make_kernel

import ncu_roofline
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
        self._in_script = False
        self._in_tbody = False
        self._table = ""

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self._table = a.get("id", "")
        if tag == "tbody":
            self._in_tbody = self._table == "kernel-table"
        if tag == "tr" and self._in_tbody:
            self.rows.append(a)
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

    def handle_data(self, data):
        if self._in_script:
            self.scripts[-1] += data
        else:
            self.text.append(data)


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


def test_structure_and_no_external_resources() -> None:
    kernels = [make_kernel(base_metrics(), index=i, name=f"k{i}") for i in range(12)]
    html = render_html(analysis_of(*kernels))
    page = parse(html)
    assert len(page.rows) == 12
    assert len(page.sections) == 12 and len(set(page.sections)) == 12
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


@needs_corpus
def test_real_report_page() -> None:
    a = ncu_roofline.analyze(CORPUS / "gpu-workshop__MW_Baseline.ncu-rep")
    page = parse(render_html(a))
    assert len(page.rows) == 5 and len(page.sections) == 5
    text = " ".join(page.text)
    assert "Tesla V100-SXM2-32GB" in text and "2022.2.0.0 (build 31140043)" in text
    assert "Bound by DRAM bandwidth at 74 % of the roof" in text
    assert "ncu --metrics" in text  # what is missing, and how to collect it
    red = render_html(a, redact=True)
    assert str(CORPUS) not in red


@needs_corpus
def test_report_with_nothing_to_plot_says_so() -> None:
    a = ncu_roofline.analyze(CORPUS / "fuzigrad__output.ncu-rep")
    html = render_html(a)
    assert ("NVIDIA GeForce RTX 3080</strong>: no kernel here can be placed on a roofline: 1 kernel has no FLOP "
            "counts in the capture. Run <code>ncu $(ncu-roofline metrics) …</code>") in html
    assert "Speed Of Light" in html
    assert len(parse(html).rows) == 1  # 100 launches of one kernel: one row, the launches in the list
    assert len(json.loads(parse(html).scripts[0])["launches"]["rows"]) == 100


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
