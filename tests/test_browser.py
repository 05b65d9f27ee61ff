"""The HTML report in a real browser: headless Chromium driven over the DevTools protocol.

One Chromium is started for the module (and always killed afterwards); each test opens the
generated report in a fresh tab from a `file://` URL and checks what a reader would see: no
script errors, no network access, working sort and filter, a page that renders (screenshots),
a complete page with JavaScript disabled, and a usable load time on a 154-kernel report.

Every wait has a deadline, so a hung browser fails the test instead of blocking CI. The module
is skipped when no Chromium/Chrome executable or the `websocket-client` package is available,
and the tests that need the shared report corpus skip when it is absent.
"""

from __future__ import annotations

import base64
import contextlib
import json
import math
import os
import re
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import CORPUS, corpus_files, make_kernel
from ncu_csv_writer import write_ncu_csv
from test_model import base_metrics

from ncu_roofline.cli import main as cli_main
from ncu_roofline.readers.record import RawReport

websocket = pytest.importorskip("websocket", reason="websocket-client is not installed (pip install '.[test]')")

BROWSER = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
if BROWSER is None:
    pytest.skip("no chromium, chromium-browser or google-chrome executable on PATH", allow_module_level=True)

pytestmark = pytest.mark.skipif(not corpus_files(), reason=f"shared report corpus not found at {CORPUS}")

SMALL_REPORT = "gpu-workshop__MW_Baseline.ncu-rep"  # 5 kernels
SMALL_KERNELS = 5
LARGE_REPORT = "self-join-mistic__profile.ncu-rep"  # 154 launches of 36 kernels (name, grid, block)
BASIC_REPORT = "esmm-research__profile.5c6231e.ncu-rep"  # basic set: SOL figures, no FLOP or bytes
LARGE_KERNELS = 36  # rows of the kernel table: one per kernel group
LARGE_LAUNCHES = 154

START_TIMEOUT_S = 30.0  # browser start-up, until DevTools listens
COMMAND_TIMEOUT_S = 20.0  # one DevTools command
LOAD_TIMEOUT_S = 30.0  # one page load
LARGE_LOAD_BUDGET_S = 10.0  # navigation start to load event, 154 kernels, on a slow CI machine
VIEWPORT = (1400, 1800)
SCREENS_DIR = Path("/tmp/ncu_roofline_screens")


class DevToolsError(RuntimeError):
    """A DevTools command failed, or the browser did not answer in time."""


class DevTools:
    """A minimal, single-threaded DevTools protocol client over one browser websocket.

    Commands are sent with an increasing id and the reply with that id is awaited; events that
    arrive meanwhile are kept per session so tests can inspect them afterwards.
    """

    def __init__(self, ws_url: str) -> None:
        # Chromium refuses websocket clients that send an Origin header unless allowed explicitly.
        self._ws = websocket.create_connection(ws_url, timeout=COMMAND_TIMEOUT_S, suppress_origin=True,
                                               enable_multithread=False)
        self._next_id = 0
        self.events: dict[str | None, list[dict[str, Any]]] = {}

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._ws.close()

    def _receive(self, deadline: float) -> dict[str, Any]:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise DevToolsError("timed out waiting for the browser")
        self._ws.settimeout(remaining)
        try:
            raw = self._ws.recv()
        except websocket.WebSocketTimeoutException as exc:
            raise DevToolsError("timed out waiting for the browser") from exc
        message = json.loads(raw)
        if "method" in message:
            self.events.setdefault(message.get("sessionId"), []).append(message)
        return message

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None,
             timeout: float = COMMAND_TIMEOUT_S) -> dict[str, Any]:
        """Send a command and return its result (raises DevToolsError on an error reply)."""
        self._next_id += 1
        command: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session is not None:
            command["sessionId"] = session
        self._ws.send(json.dumps(command))
        deadline = time.monotonic() + timeout
        while True:
            message = self._receive(deadline)
            if message.get("id") == self._next_id:
                if "error" in message:
                    raise DevToolsError(f"{method}: {message['error']}")
                return message.get("result", {})

    def wait_for(self, method: str, session: str | None, timeout: float,
                 where: Callable[[dict[str, Any]], bool] = lambda e: True,
                 start: int = 0) -> tuple[int, dict[str, Any]]:
        """The first event `method` of `session` at or after position `start` in its log, waiting
        until the deadline for it; returns its position and the event."""
        deadline = time.monotonic() + timeout
        seen = start
        while True:
            pending = self.events.get(session, [])
            for position in range(seen, len(pending)):
                event = pending[position]
                if event["method"] == method and where(event):
                    return position, event
            seen = max(seen, len(pending))
            try:
                self._receive(deadline)
            except DevToolsError as exc:
                raise DevToolsError(f"no {method} event within {timeout:.0f} s") from exc


class Tab:
    """One page target attached in flat mode: navigate, evaluate JavaScript, read events."""

    def __init__(self, devtools: DevTools) -> None:
        self.devtools = devtools
        self.target_id = devtools.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = devtools.send("Target.attachToTarget",
                                     {"targetId": self.target_id, "flatten": True})["sessionId"]
        self.send("Page.enable")

    def send(self, method: str, params: dict[str, Any] | None = None,
             timeout: float = COMMAND_TIMEOUT_S) -> dict[str, Any]:
        return self.devtools.send(method, params, self.session, timeout)

    def events(self, method: str) -> list[dict[str, Any]]:
        return [e["params"] for e in self.devtools.events.get(self.session, []) if e["method"] == method]

    def navigate(self, url: str, timeout: float = LOAD_TIMEOUT_S) -> float:
        """Open `url` and wait for its load event; returns the seconds that took.

        Only a load event after the main frame committed to `url` counts, so a late one from the
        tab's initial about:blank cannot end the wait early.
        """
        started = time.monotonic()
        mark = len(self.devtools.events.get(self.session, []))
        reply = self.send("Page.navigate", {"url": url}, timeout=timeout)
        if reply.get("errorText"):
            raise DevToolsError(f"navigation to {url} failed: {reply['errorText']}")
        committed, _ = self.devtools.wait_for(
            "Page.frameNavigated", self.session, timeout, start=mark,
            where=lambda e: "parentId" not in e["params"]["frame"]
            and e["params"]["frame"]["url"].startswith(url.split(":", 1)[0] + ":"))
        self.devtools.wait_for("Page.loadEventFired", self.session,
                               max(1.0, timeout - (time.monotonic() - started)), start=committed + 1)
        return time.monotonic() - started

    def evaluate(self, expression: str, await_promise: bool = False) -> Any:
        """The JSON value of a JavaScript expression evaluated in the page."""
        reply = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                               "awaitPromise": await_promise})
        if "exceptionDetails" in reply:
            raise DevToolsError(f"JavaScript failed: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def settle(self) -> None:
        """Wait until the page has painted twice (layout and charts done)."""
        self.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))",
                      await_promise=True)

    def count(self, selector: str) -> int:
        """Matching elements, through the DOM domain (works with page scripts disabled)."""
        root = self.send("DOM.getDocument", {"depth": 0})["root"]["nodeId"]
        return len(self.send("DOM.querySelectorAll", {"nodeId": root, "selector": selector})["nodeIds"])

    def screenshot(self, path: Path) -> bytes:
        data = base64.b64decode(self.send("Page.captureScreenshot", {"format": "png"}, timeout=60)["data"])
        path.write_bytes(data)
        return data

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.devtools.send("Target.closeTarget", {"targetId": self.target_id}, timeout=5)


class Browser:
    """A headless Chromium process in its own process group, killed on `stop()`."""

    def __init__(self, executable: str, profile: Path) -> None:
        self.profile = profile
        self.stderr_lines: list[str] = []
        self.process = subprocess.Popen(
            [executable, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--disable-dev-shm-usage", f"--user-data-dir={profile}", "--remote-debugging-port=0",
             "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            text=True, errors="replace", start_new_session=True,
        )
        found = threading.Event()
        self.ws_url = ""

        def drain() -> None:  # keeps reading so a chatty browser never blocks on a full pipe
            assert self.process.stderr is not None
            for line in self.process.stderr:
                self.stderr_lines.append(line.rstrip())
                match = re.search(r"DevTools listening on (ws://\S+)", line)
                if match and not found.is_set():
                    self.ws_url = match.group(1)
                    found.set()
            found.set()  # stderr closed: the browser exited

        threading.Thread(target=drain, name="chromium-stderr", daemon=True).start()
        if not found.wait(START_TIMEOUT_S) or not self.ws_url:
            self.stop()
            tail = "\n".join(self.stderr_lines[-20:])
            raise DevToolsError(f"{executable} did not start DevTools within {START_TIMEOUT_S:.0f} s:\n{tail}")

    def stop(self) -> None:
        """Terminate the whole process group (browser, renderers, zygote), then remove the profile."""
        try:
            pgid = os.getpgid(self.process.pid)
        except ProcessLookupError:
            pgid = None
        for sig in (signal.SIGTERM, signal.SIGKILL):  # politely, then the stragglers of the group
            if pgid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pgid, sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=5)
        shutil.rmtree(self.profile, ignore_errors=True)


# --------------------------------------------------------------------------------------------- fixtures

@pytest.fixture(scope="module")
def devtools(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevTools]:
    """One browser for the module, connected over DevTools; always killed at the end."""
    assert BROWSER is not None
    browser = Browser(BROWSER, tmp_path_factory.mktemp("chromium-profile"))
    request.addfinalizer(browser.stop)
    client = DevTools(browser.ws_url)
    request.addfinalizer(client.close)
    yield client


@pytest.fixture
def tab(request: pytest.FixtureRequest, devtools: DevTools) -> Tab:
    """A fresh tab with its own event log, closed after the test."""
    page = Tab(devtools)
    request.addfinalizer(page.close)
    return page


def _generate(name: str, out_dir: Path) -> Path:
    source = CORPUS / name
    if not source.is_file():
        pytest.skip(f"shared report {source} not found")
    out = out_dir / (Path(name).stem + ".html")
    result = CliRunner().invoke(cli_main, ["report", str(source), "-o", str(out), "--force"])
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def small_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The HTML report of the 5-kernel capture (generated once for the module)."""
    return _generate(SMALL_REPORT, tmp_path_factory.mktemp("report-small"))


@pytest.fixture(scope="module")
def large_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The HTML report of the 154-kernel capture."""
    return _generate(LARGE_REPORT, tmp_path_factory.mktemp("report-large"))


def _screens_dir() -> Path | None:
    """Where copies of the screenshots go for a human to look at; None when it cannot be made."""
    try:
        SCREENS_DIR.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return SCREENS_DIR if os.access(SCREENS_DIR, os.W_OK) else None


def _keep_copy(path: Path) -> None:
    target = _screens_dir()
    if target is not None:
        with contextlib.suppress(OSError):
            shutil.copyfile(path, target / path.name)


def _errors(tab: Tab) -> list[str]:
    """Script exceptions, console errors and browser log errors seen by the tab so far."""
    found = []
    for e in tab.events("Runtime.exceptionThrown"):
        details = e["exceptionDetails"]
        found.append(f"exception: {details.get('exception', {}).get('description') or details.get('text')}")
    for e in tab.events("Runtime.consoleAPICalled"):
        if e["type"] in ("error", "assert"):
            found.append(f"console.{e['type']}: {[a.get('value', a.get('description')) for a in e['args']]}")
    for e in tab.events("Log.entryAdded"):
        if e["entry"]["level"] == "error":
            found.append(f"log: {e['entry'].get('text')} ({e['entry'].get('url', '')})")
    return found


def _rows(tab: Tab) -> list[str]:
    return tab.evaluate("Array.from(document.querySelectorAll('#kernel-table tbody tr'))"
                        ".map(r => r.getAttribute('data-kernel'))")


def _open(tab: Tab, report: Path) -> float:
    tab.send("Runtime.enable")
    tab.send("Log.enable")
    seconds = tab.navigate(report.as_uri())
    tab.settle()
    return seconds


# ------------------------------------------------------------------------------------------------ tests

def test_loads_without_errors(tab: Tab, small_report: Path) -> None:
    _open(tab, small_report)
    assert _errors(tab) == []
    assert len(_rows(tab)) == SMALL_KERNELS


def test_no_network_access(tab: Tab, small_report: Path) -> None:
    tab.send("Network.enable")
    _open(tab, small_report)
    urls = [e["request"]["url"] for e in tab.events("Network.requestWillBeSent")]
    assert small_report.as_uri() in urls
    outside = [u for u in urls if not u.startswith(("file://", "data:"))]
    assert outside == [], f"the report fetched {outside}"


def _duration_column(tab: Tab) -> tuple[list[str], list[float]]:
    """Row order and the Duration cells' data-v (NaN when empty)."""
    order, values = tab.evaluate("""(() => {
        const th = Array.from(document.querySelectorAll('#kernel-table thead th'))
            .find(h => h.textContent.trim().startsWith('Duration'));
        const rows = Array.from(document.querySelectorAll('#kernel-table tbody tr'));
        return [rows.map(r => r.getAttribute('data-kernel')),
                rows.map(r => r.cells[th.cellIndex].getAttribute('data-v'))];
    })()""")
    return order, [float(v) if v not in (None, "") else math.nan for v in values]


def _click_duration(tab: Tab) -> None:
    clicked = tab.evaluate("""(() => {
        const th = Array.from(document.querySelectorAll('#kernel-table th[data-sort]'))
            .find(h => h.textContent.trim().startsWith('Duration'));
        if (!th) return false;
        th.click();
        return true;
    })()""")
    assert clicked, "no sortable Duration header in #kernel-table"


def _known_first(values: list[float]) -> list[float]:
    """The values before the first missing one; asserts that missing values come last."""
    known = [v for v in values if not math.isnan(v)]
    assert values[: len(known)] == known, f"missing durations are not sorted last: {values}"
    return known


def test_sort_by_duration(tab: Tab, small_report: Path) -> None:
    _open(tab, small_report)
    before, _ = _duration_column(tab)
    _click_duration(tab)
    ascending_order, ascending = _duration_column(tab)
    assert ascending_order != before
    assert sorted(ascending_order) == sorted(before)
    known = _known_first(ascending)
    assert known == sorted(known) and len(known) == SMALL_KERNELS
    _click_duration(tab)
    descending_order, descending = _duration_column(tab)
    known = _known_first(descending)
    assert known == sorted(known, reverse=True)
    assert descending_order != ascending_order


def _pick_substring(names: list[str]) -> str:
    """A word of one kernel name that matches some rows but not all."""
    for name in names:
        for word in re.split(r"[^0-9A-Za-z]+", name):
            hits = sum(word.lower() in n.lower() for n in names)
            if len(word) >= 3 and 0 < hits < len(names):
                return word
    pytest.fail(f"no name substring separates the kernels: {names}")


def test_filter_by_name(tab: Tab, small_report: Path) -> None:
    _open(tab, small_report)
    names = tab.evaluate("Array.from(document.querySelectorAll('#kernel-table tbody tr'))"
                         ".map(r => r.getAttribute('data-name'))")
    needle = _pick_substring(names)
    typed = f"{needle[:1].upper()}{needle[1:]}"  # the filter ignores case
    visible = tab.evaluate(f"""(() => {{
        const box = document.getElementById('kernel-filter');
        box.value = {json.dumps(typed)};
        box.dispatchEvent(new Event('input', {{bubbles: true}}));
        return Array.from(document.querySelectorAll('#kernel-table tbody tr'))
            .map(r => r.getClientRects().length > 0);
    }})()""")
    expected = [needle.lower() in n.lower() for n in names]
    assert visible == expected
    assert 0 < sum(visible) < len(names)
    cleared = tab.evaluate("""(() => {
        const box = document.getElementById('kernel-filter');
        box.value = '';
        box.dispatchEvent(new Event('input', {bubbles: true}));
        return Array.from(document.querySelectorAll('#kernel-table tbody tr'))
            .every(r => r.getClientRects().length > 0);
    })()""")
    assert cleared


def _assert_png(data: bytes, path: Path) -> None:
    assert data.startswith(b"\x89PNG\r\n\x1a\n"), f"{path} is not a PNG"
    assert len(data) > 20_000, f"{path} is only {len(data)} bytes: a blank page?"


def test_screenshots(tab: Tab, small_report: Path, tmp_path: Path) -> None:
    width, height = VIEWPORT
    tab.send("Emulation.setDeviceMetricsOverride",
             {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
    _open(tab, small_report)
    shots = []
    page = tmp_path / "report-top.png"
    _assert_png(tab.screenshot(page), page)
    shots.append(page)
    for anchor, name in (("kernels", "report-table.png"), ("r0k2", "report-kernel-r0k2.png")):
        assert tab.evaluate(f"""(() => {{
            const el = document.getElementById({json.dumps(anchor)});
            if (!el) return false;
            el.scrollIntoView({{block: 'start'}});
            return true;
        }})()"""), f"no #{anchor} on the page"
        tab.settle()
        path = tmp_path / name
        _assert_png(tab.screenshot(path), path)
        shots.append(path)
    for path in shots:
        _keep_copy(path)


def test_complete_without_javascript(tab: Tab, small_report: Path) -> None:
    tab.send("Emulation.setScriptExecutionDisabled", {"value": True})
    tab.navigate(small_report.as_uri())
    assert tab.count("#kernel-table tbody tr[data-kernel]") == SMALL_KERNELS
    assert tab.count("details.kernel") == SMALL_KERNELS
    assert tab.count("figure.chart svg") >= 1
    # Parsed as markup only when scripting is off: proof that the page's script really did not run.
    assert tab.count(".noscript-note") == 1


def test_large_report_loads_quickly(tab: Tab, large_report: Path, tmp_path: Path) -> None:
    width, height = VIEWPORT
    tab.send("Emulation.setDeviceMetricsOverride",
             {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
    seconds = _open(tab, large_report)
    in_page = tab.evaluate("(() => { const t = performance.getEntriesByType('navigation')[0];"
                           " return t.loadEventEnd > 0 ? (t.loadEventEnd - t.startTime) / 1000 : null; })()")
    print(f"\n{LARGE_REPORT}: {large_report.stat().st_size} bytes, load event after {seconds:.2f} s "
          f"(in-page {in_page if in_page is None else round(in_page, 2)} s)")
    assert seconds < LARGE_LOAD_BUDGET_S
    assert _errors(tab) == []
    assert len(_rows(tab)) == LARGE_KERNELS
    started = time.monotonic()
    _click_duration(tab)
    order, values = _duration_column(tab)
    sort_seconds = time.monotonic() - started
    known = _known_first(values)
    assert known == sorted(known) and len(order) == LARGE_KERNELS
    assert sort_seconds < 2.0, f"sorting {LARGE_KERNELS} rows took {sort_seconds:.2f} s"
    assert tab.count("#launch-list tbody tr") == 25  # the first page of the launch list
    assert f"of {LARGE_LAUNCHES} launches" in tab.evaluate("document.getElementById('launch-list').textContent")
    tab.evaluate("window.scrollTo(0, 0)")
    tab.settle()
    path = tmp_path / "report-large-top.png"
    _assert_png(tab.screenshot(path), path)
    _keep_copy(path)


@pytest.fixture(scope="module")
def basic_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The HTML report of a basic-set capture: no FLOP or byte counts, only unit throughputs."""
    return _generate(BASIC_REPORT, tmp_path_factory.mktemp("report-basic"))


def test_basic_set_page_has_a_chart_and_names_the_busy_unit(tab: Tab, basic_report: Path, tmp_path: Path) -> None:
    width, height = VIEWPORT
    tab.send("Emulation.setDeviceMetricsOverride",
             {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
    _open(tab, basic_report)
    assert _errors(tab) == []
    # the Speed-Of-Light chart: one hover target per kernel that has both headline figures
    assert tab.count("figure.chart svg g.pt title") >= 5
    badges = tab.evaluate("""(() => {
        const th = Array.from(document.querySelectorAll('#kernel-table thead th'))
            .find(h => h.textContent.trim().startsWith('Busiest limit'));
        return Array.from(document.querySelectorAll('#kernel-table tbody tr'))
            .map(r => r.cells[th.cellIndex].querySelector('.badge')).filter(b => b).map(b => b.textContent);
    })()""")
    assert "LSU pipe (load/store issue)" in badges and "L1/TEX (wavefronts)" in badges
    assert tab.evaluate("(() => { const el = document.getElementById('sol-0'); if (!el) return false;"
                        " el.scrollIntoView({block: 'start'}); return true; })()")
    tab.settle()
    path = tmp_path / "report-basic-sol.png"
    _assert_png(tab.screenshot(path), path)
    _keep_copy(path)


MANY_LAUNCHES = 3000
MANY_KERNELS = 60
HOSTILE = "</script><b>x</b> & \"q\" 'y' | `z` @octocat void f<int, std::vector<float>>(T*)"


@pytest.fixture(scope="module")
def many_launches_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """3,000 launches of 60 kernels (hand-built, a hostile name among them), read from an ncu CSV."""
    folder = tmp_path_factory.mktemp("report-many")
    kernels = []
    for i in range(MANY_LAUNCHES):
        j = i % MANY_KERNELS
        metrics = base_metrics()
        metrics["gpu__time_duration.sum"] = (1000.0 + 37 * j + i % 7, "ns")
        name = HOSTILE if j == 0 else f"void ns::kernel_{j}<{j % 4}>(float *, int)"
        kernels.append(make_kernel(metrics, index=i, name=name, demangled_name=name, grid_size=(64, 1, 1),
                                   block_size=(128, 1, 1)))
    src = write_ncu_csv(RawReport("many.csv", "csv", kernels), folder / "many.csv")
    out = folder / "many.html"
    result = CliRunner().invoke(cli_main, ["report", str(src), "-o", str(out), "--force"])
    assert result.exit_code == 0, result.output
    return out


def _launch_status(tab: Tab) -> str:
    return tab.evaluate("document.querySelector('#launch-list .pager-controls span').textContent.trim()")


def test_thousands_of_launches_page_in_the_browser(tab: Tab, many_launches_report: Path) -> None:
    width, height = VIEWPORT
    tab.send("Emulation.setDeviceMetricsOverride",
             {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
    _open(tab, many_launches_report)
    assert _errors(tab) == []
    assert tab.count("#kernel-table tbody tr[data-kernel]") == MANY_KERNELS  # one row per kernel group
    assert tab.count("main b") == 0  # the hostile name injected nothing
    # the launch list pages through every launch from the inline JSON table
    assert tab.count("#launch-list tbody tr") == 25
    assert _launch_status(tab).startswith("1–25 of 3,000 launches")
    first = tab.evaluate("document.querySelector('#launch-list tbody tr').getAttribute('data-launch')")
    tab.evaluate("Array.from(document.querySelectorAll('#launch-list button'))"
                 ".find(b => b.textContent.startsWith('next')).click()")
    assert _launch_status(tab).startswith("26–50 of 3,000 launches")
    assert tab.evaluate("document.querySelector('#launch-list tbody tr').getAttribute('data-launch')") != first
    filtered = tab.evaluate("""(() => {
        const box = document.querySelector('#launch-list input');
        box.value = 'kernel_17<';
        box.dispatchEvent(new Event('input'));
        return document.querySelector('#launch-list .pager-controls span').textContent.trim();
    })()""")
    assert filtered.startswith("1–25 of 50 launches")
    # the overview chart: one marker per kernel group, sized by time, with hover text
    titles = tab.evaluate("Array.from(document.querySelectorAll('#overview svg g.pt > title')).map(t => t.textContent)")
    assert len(titles) == MANY_KERNELS and all("50 launches" in t and "of GPU time" in t for t in titles)
    assert any(t.startswith("f<…>(…)\n") for t in titles)  # the hostile name, shortened
    # a kernel's launches expand under its row
    expanded = tab.evaluate("""(() => {
        const button = document.querySelector('#kernel-table button.expand');
        button.click();
        const row = button.closest('tr').nextElementSibling;
        return [row.className, row.querySelectorAll('table.launch-table > tbody > tr').length,
                button.getAttribute('aria-expanded')];
    })()""")
    assert expanded == ["launch-rows", 20, "true"]
    _click_duration(tab)  # sorting folds the expanded launches away
    assert tab.count("tr.launch-rows") == 0
    assert _errors(tab) == []


MULTI_REPORTS = ("cudacode__naive.ncu-rep", "cudacode__global_mem_coalesce.ncu-rep",
                 "gpu-workshop__MW_Baseline.ncu-rep", "cutlass__report-s8.ncu-rep")


def test_multi_report_page_keeps_its_width_and_names_each_rows_report(tab: Tab, tmp_path: Path) -> None:
    """Four reports on one page: the title names the first and how many more; the kernel table, one column wider
    (Report), scrolls inside its box rather than widening the page; each row and each launch says its report."""
    sources = [CORPUS / name for name in MULTI_REPORTS]
    if not all(p.is_file() for p in sources):
        pytest.skip("shared reports for the multi-report page not found")
    out = tmp_path / "multi.html"
    result = CliRunner().invoke(cli_main, ["report", *map(str, sources), "-o", str(out), "--force"])
    assert result.exit_code == 0, result.output
    tab.send("Emulation.setDeviceMetricsOverride", {"width": 1300, "height": 1600, "deviceScaleFactor": 1,
                                                     "mobile": False})
    _open(tab, out)
    assert _errors(tab) == []
    facts = tab.evaluate("""(() => {
        const box = document.querySelector('.table-scroll');
        const heads = Array.from(document.querySelectorAll('#kernel-table thead th')).map(th => th.textContent.trim());
        const col = heads.indexOf('Report');
        return {title: document.title, pageWidth: document.documentElement.scrollWidth, viewport: window.innerWidth,
                boxWidth: box.clientWidth, tableWidth: box.scrollWidth, heads: heads,
                reports: Array.from(document.querySelectorAll('#kernel-table tbody tr'))
                    .map(r => r.cells[col].textContent),
                launchHeads: Array.from(document.querySelectorAll('#launch-list thead th')).map(th => th.textContent)};
    })()""")
    assert facts["title"] == "Roofline: cudacode__naive.ncu-rep and 3 more"
    assert facts["pageWidth"] <= facts["viewport"], facts  # the page itself does not scroll sideways
    assert facts["tableWidth"] >= facts["boxWidth"]
    assert facts["heads"][:3] == ["#", "Kernel", "Report"]
    assert set(facts["reports"]) == set(MULTI_REPORTS)
    assert "Report" in facts["launchHeads"]
    path = tmp_path / "report-multi.png"
    _assert_png(tab.screenshot(path), path)
    _keep_copy(path)
