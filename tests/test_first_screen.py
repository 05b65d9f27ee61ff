"""The HTML report's first screen in a real browser: the verdict comes first.

At 1400 × 900 px, before any scrolling, a reader sees for the kernels with the most GPU time what bounds each
and how far it is from its peak, the top finding's headline with its bound, and the next step. The headline and
the next step are taken from the JSON document of the same capture (not written here), and found by their
rendered position in headless Chromium (the DevTools client of `test_browser`). A check that could not fail is
no check: each test then pushes the verdict below the fold and sees the same measurement fail.

Skipped when no Chromium or `websocket-client` is available, or without the shared report corpus.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import CORPUS, corpus_files, manifest

from ncu_roofline.cli import main as cli_main
from ncu_roofline.passes.finding import top_index

pytest.importorskip("websocket", reason="websocket-client is not installed (pip install '.[test]')")
if not (shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")):
    pytest.skip("no chromium, chromium-browser or google-chrome executable on PATH", allow_module_level=True)

import test_browser as browser  # after the skips: it needs both
from test_browser import Tab, _assert_png, _errors, _keep_copy, _open

pytestmark = pytest.mark.skipif(not corpus_files(), reason=f"shared report corpus not found at {CORPUS}")

WIDTH, FOLD = 1400, 900  # the first screen
CAPTURES = {  # capture -> the section set it was taken with (MANIFEST.tsv)
    "esmm-research__profile.5c6231e.ncu-rep": "basic",  # 6 kernels, unit throughputs only, a warning
    "self-join-mistic__profile.ncu-rep": "basic",  # 36 kernels: five rows in the verdict
    "cuda-gemm-practice__gemm_v9.ncu-rep": "full",
    "self-join-mistic__profileHiggs.out.ncu-rep": "full",  # 14 launches of one kernel
}

# Where on the page, before scrolling, a text is rendered: the deepest visible elements whose text holds it (in a
# closed <details> an element has no box, so it does not count), with their top and bottom in viewport px.
_WHERE = """((needle) => {
    const norm = s => s.replace(/\\s+/g, ' ').trim();
    const want = norm(needle);
    const out = [];
    for (const el of document.body.querySelectorAll('*')) {
        if (el.closest('script, style, svg') || !norm(el.textContent).includes(want)) continue;
        if (Array.from(el.children).some(c => norm(c.textContent).includes(want))) continue;
        if (el.getClientRects().length === 0) continue;
        const r = el.getBoundingClientRect();
        out.push({top: r.top, bottom: r.bottom, tag: el.tagName.toLowerCase(),
                  block: (el.closest('[id]') || {}).id || ''});
    }
    return {scrollY: window.scrollY, hits: out};
})"""


@pytest.fixture(scope="module")
def devtools(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> browser.DevTools:
    """One headless Chromium for the module (as `test_browser`'s), always killed at the end."""
    assert browser.BROWSER is not None
    chromium = browser.Browser(browser.BROWSER, tmp_path_factory.mktemp("chromium-profile"))
    request.addfinalizer(chromium.stop)
    client = browser.DevTools(chromium.ws_url)
    request.addfinalizer(client.close)
    return client


@pytest.fixture
def tab(request: pytest.FixtureRequest, devtools: browser.DevTools) -> Tab:
    page = Tab(devtools)
    request.addfinalizer(page.close)
    return page


def _expected(capture: Path, tmp_path: Path) -> dict[str, Any]:
    """The kernel with the most GPU time in the JSON document, its top finding (the one worth most, as the page and
    the CSV pick it) and the verdict's next step (the top finding's, else the first finding's that has one)."""
    out = tmp_path / "capture.json"
    result = CliRunner().invoke(cli_main, ["report", str(capture), "-f", "json", "-o", str(out), "--force"])
    assert result.exit_code == 0, result.output
    doc = json.loads(out.read_text(encoding="utf-8"))
    groups = [g for r in doc["reports"] for g in r["groups"]]
    first = max(groups, key=lambda g: g["share_of_gpu_time"] or 0.0)
    findings = first["diagnosis"]
    assert findings, f"{capture.name}: the kernel with the most GPU time has no finding"
    index = top_index([f["speedup"] for f in findings], [f["kind"] for f in findings],
                      [f["variant"] for f in findings])
    assert index is not None
    top = findings[index]
    step = top["next_step"] or next((f["next_step"] for f in findings if f["next_step"]), None)
    return {"kernel": first["display_name"], "headline": top["headline"], "next_step": step}


def _page(capture: Path, tmp_path: Path) -> Path:
    out = tmp_path / (capture.stem + ".html")
    result = CliRunner().invoke(cli_main, ["report", str(capture), "-o", str(out), "--force"])
    assert result.exit_code == 0, result.output
    return out


def _first_screen(tab: Tab, text: str) -> list[dict[str, Any]]:
    """The elements that show `text` within the first screen (the page unscrolled)."""
    where = tab.evaluate(f"{_WHERE}({json.dumps(text)})")
    assert where["scrollY"] == 0
    return [h for h in where["hits"] if h["top"] >= 0 and h["bottom"] <= FOLD]


@pytest.mark.parametrize("name", list(CAPTURES))
def test_the_top_findings_headline_is_on_the_first_screen(tab: Tab, name: str, tmp_path: Path) -> None:
    capture = CORPUS / name
    if not capture.is_file():
        pytest.skip(f"shared report {capture} not found")
    listed = manifest().get(name, {}).get("section_set")
    assert listed in (None, CAPTURES[name]), f"{name} is a {listed}-set capture, not {CAPTURES[name]}"
    expected = _expected(capture, tmp_path)
    page = _page(capture, tmp_path)
    tab.send("Emulation.setDeviceMetricsOverride",
             {"width": WIDTH, "height": FOLD, "deviceScaleFactor": 1, "mobile": False})
    _open(tab, page)
    assert _errors(tab) == []

    headline = _first_screen(tab, expected["headline"])
    assert headline, f"{name}: {expected['headline']!r} is not within the first {FOLD} px"
    assert any(h["block"] == "verdict" for h in headline), headline  # in the verdict, not by chance elsewhere
    if expected["next_step"]:
        assert _first_screen(tab, expected["next_step"]), f"{name}: the next step is not on the first screen"
    assert _first_screen(tab, expected["kernel"]), f"{name}: the kernel's name is not on the first screen"

    # The conventions are there, collapsed; a basic set says what it lacks in one line, its list collapsed.
    about = tab.evaluate("(() => { const d = document.getElementById('about');"
                         " return d && [d.tagName, d.open, d.textContent.includes('FLOP convention')]; })()")
    assert about == ["DETAILS", False, True]
    if CAPTURES[name] == "basic":
        line = _first_screen(tab, "Not in the capture:")
        assert line and all(h["block"] == "not-collected" for h in line)
        assert tab.evaluate("document.querySelector('#not-collected details').open") is False
        assert "ncu $(ncu-roofline metrics" in tab.evaluate("document.querySelector('#not-collected p').textContent")

    shot = tmp_path / f"first-screen-{Path(name).stem}.png"
    _assert_png(tab.screenshot(shot), shot)
    _keep_copy(shot)

    # The same measurement, with the verdict pushed below the fold, finds nothing: the check can fail.
    tab.evaluate("document.getElementById('summary').style.marginTop = '2000px'")
    tab.settle()
    assert _first_screen(tab, expected["headline"]) == []
