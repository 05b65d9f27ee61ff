"""The report page at 50,000 launches: its size and its load time in headless Chromium, against baselines.

    python benchmarks/bench_page.py [--launches 50000] [--names 300] [--csv]

The launches are the kernels of a real capture (`gpu-workshop__MW_Baseline.ncu-rep`, 5 kernels
with FLOP and byte counts) repeated under `--names` distinct kernel names (each name keeps one
launch configuration, so there are as many kernel groups as names), spread over NVTX ranges
`train/layer<n>/op<m>`. By default the analysed launches are copied in memory (this measures the
page, not the reader); `--csv` writes them with `tests/ncu_csv_writer.py` and reads them back,
as `ncu-roofline report big.csv` would (no NVTX state then: a CSV carries none).

Measured in the same run, each load the best of 3 (navigation start to the load event, from
`performance.getEntriesByType("navigation")`):

- baseline 1: the page of the 5-kernel capture itself (what any page costs to load);
- baseline 2: a bare page with one static table row per launch (7 cells, no chart, no script),
  the layout this page avoids;
- the report page (budget: 10 MB and 2 s, at 50,000 and at 200,000 launches), and the time to page its launch
  list. A page still loading after a minute (the static rows at 200,000 launches) is shown as `> 60`.

Ratios are printed against both baselines. Exit status 0 whatever the verdicts; 2 when the
capture or Chromium (with the `websocket-client` package) is missing.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import dataclasses
import html
import json
import math
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if (ROOT / "ncu_roofline").is_dir():
    sys.path.insert(0, str(ROOT))  # benchmark this checkout, not whatever is installed
sys.path.insert(1, str(ROOT / "tests"))  # ncu_csv_writer

SOURCE = ROOT.parent / "shared" / "reports" / "gpu-workshop__MW_Baseline.ncu-rep"
SIZE_BUDGET = 10_000_000
LOAD_BUDGET_S = 2.0  # the columnar-scale target: at 200,000 launches too
LOAD_WAIT_S = 60.0
REPEATS = 3


class Chromium:
    """A headless Chromium driven over one DevTools websocket (a minimal client, one tab at a time)."""

    def __init__(self, executable: str, profile: Path) -> None:
        import websocket

        self.process = subprocess.Popen(
            [executable, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--disable-dev-shm-usage", f"--user-data-dir={profile}", "--remote-debugging-port=0", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            errors="replace", start_new_session=True)
        found = threading.Event()
        url: list[str] = []

        def drain() -> None:
            assert self.process.stderr is not None
            for line in self.process.stderr:
                match = re.search(r"DevTools listening on (ws://\S+)", line)
                if match and not found.is_set():
                    url.append(match.group(1))
                    found.set()
            found.set()

        threading.Thread(target=drain, daemon=True).start()
        if not found.wait(30) or not url:
            self.stop()
            raise RuntimeError("Chromium did not start DevTools within 30 s")
        self.events: list[dict[str, Any]] = []
        self.next_id = 0
        self.session = ""
        try:
            self.ws = websocket.create_connection(url[0], timeout=60, suppress_origin=True)
            target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
            self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            self.send("Page.enable", session=self.session)
            self.send("Runtime.enable", session=self.session)
        except BaseException:
            self.stop()
            raise

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> Any:
        self.next_id += 1
        command: dict[str, Any] = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            command["sessionId"] = session
        self.ws.send(json.dumps(command))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            if "method" in message:
                self.events.append(message)

    def evaluate(self, expression: str) -> Any:
        reply = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                               "awaitPromise": True}, self.session)
        if "exceptionDetails" in reply:
            raise RuntimeError(f"JavaScript failed: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def load(self, path: Path) -> float:
        """Open a file and return navigation start to load event end, in seconds (from the page); infinity when
        it has not loaded after `LOAD_WAIT_S` (a baseline of static rows at 200,000 launches)."""
        import websocket

        self.send("Page.navigate", {"url": "about:blank"}, self.session)
        self.send("Page.navigate", {"url": path.as_uri()}, self.session)
        deadline = time.monotonic() + LOAD_WAIT_S
        while time.monotonic() < deadline:
            try:
                value = self.evaluate("(() => { const t = performance.getEntriesByType('navigation')[0];"
                                      " return document.URL.startsWith('file:') && t && t.loadEventEnd > 0 ?"
                                      " (t.loadEventEnd - t.startTime) / 1000 : null; })()")
            except websocket.WebSocketTimeoutException:  # the renderer busy past the socket's own minute
                return math.inf
            if value is not None:
                return float(value)
            time.sleep(0.05)
        return math.inf

    def errors(self) -> list[str]:
        return [json.dumps(e["params"])[:200] for e in self.events if e.get("method") == "Runtime.exceptionThrown"
                or (e.get("method") == "Runtime.consoleAPICalled" and e["params"].get("type") == "error")]

    def stop(self) -> None:
        import os
        import signal

        with contextlib.suppress(Exception):
            self.ws.close()  # absent when the connection failed
        with contextlib.suppress(ProcessLookupError):
            os.killpg(os.getpgid(self.process.pid), signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=5)


def build_analysis(launches: int, names: int, via_csv: bool, workdir: Path) -> Any:
    """The analysis of `launches` launches of `names` kernels (see the module docstring)."""
    import ncu_roofline
    from ncu_roofline.api.analysis import Analysis, ReportResult

    base = ncu_roofline.analyze(SOURCE).reports[0]
    if via_csv:
        from ncu_csv_writer import write_ncu_csv

        from ncu_roofline.readers import read_report
        from ncu_roofline.readers.record import RawReport

        raws = read_report(SOURCE).kernels
        kernels = []
        for i in range(launches):
            raw, j = raws[i % len(raws)], i % names
            name = f"layer{j}_{raw.name}"
            kernels.append(dataclasses.replace(raw, index=i, name=name,
                                               demangled_name=f"void ns::{name}<{j % 7}>(float *, int)"))
        path = write_ncu_csv(RawReport("big.csv", "csv", kernels), workdir / "big.csv")
        return ncu_roofline.analyze(path)
    models = []
    for i in range(launches):
        model = copy.copy(base.kernels[i % len(base.kernels)])
        j = i % names
        name = f"layer{j}_{model.raw.name}"
        model.raw = dataclasses.replace(model.raw, index=i, name=name,
                                        demangled_name=f"void ns::{name}<{j % 7}>(float *, int)",
                                        nvtx_ranges=[f"train/layer{j % 24}/op{j % 5}"])
        models.append(model)
    return Analysis([ReportResult(base.path, base.source_format, base.ncu_version, models)], [])


def naive_page(analysis: Any) -> str:
    """One static row per launch: the layout the report page does not use (the second baseline)."""
    rows = []
    for k in analysis.reports[0].kernels:
        d = k.q.duration_s.value if k.q.duration_s else None
        rows.append(f"<tr><td>{k.raw.index}</td><td>{html.escape(k.raw.name)}</td><td>{d}</td>"
                    f"<td>{html.escape(k.bound_by or '')}</td><td>{k.limiter_share}</td><td>{k.regime}</td>"
                    "<td></td></tr>")
    return ("<!DOCTYPE html><html><head><meta charset='utf-8'><title>naive</title></head><body><table>"
            + "\n".join(rows) + "</table></body></html>")


def best_load(browser: Chromium, path: Path) -> float:
    first = browser.load(path)
    if math.isinf(first):  # one wait of a minute is enough to say so
        return first
    return min([first, *(browser.load(path) for _ in range(REPEATS - 1))])


def ratio(value: float, base: float) -> str:
    """`value / base`, or its bound where one of them did not load (`> Nx`, `< Nx`)."""
    if math.isinf(value) and math.isinf(base):
        return "n/a"
    if math.isinf(value):
        return f"> {LOAD_WAIT_S / base:.0f}x"
    if math.isinf(base):
        return f"< {value / LOAD_WAIT_S:.2f}x"
    return f"{value / base:.2f}x"


def seconds(value: float) -> str:
    return f"> {LOAD_WAIT_S:g}" if math.isinf(value) else f"{value:.3f}"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--launches", type=int, default=50_000)
    parser.add_argument("--names", type=int, default=300)
    parser.add_argument("--csv", action="store_true", help="go through a CSV export and the CSV reader")
    args = parser.parse_args(argv[1:])
    executable = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if not SOURCE.is_file():
        print(f"bench_page: capture not found: {SOURCE}", file=sys.stderr)
        return 2
    try:
        import websocket  # noqa: F401
    except ImportError:
        executable = None
    if executable is None:
        print("bench_page: needs chromium and the websocket-client package", file=sys.stderr)
        return 2

    import ncu_roofline
    from ncu_roofline.render import REPORT, render

    with tempfile.TemporaryDirectory(prefix="bench_page-") as tmp:
        work = Path(tmp)
        started = time.perf_counter()
        analysis = build_analysis(args.launches, args.names, args.csv, work)
        built_s = time.perf_counter() - started
        started = time.perf_counter()
        big = render(REPORT, analysis, "html")
        render_s = time.perf_counter() - started
        small = render(REPORT, ncu_roofline.analyze(SOURCE), "html")
        pages = {"small": work / "small.html", "naive": work / "naive.html", "big": work / "big.html"}
        pages["small"].write_text(small, encoding="utf-8")
        pages["naive"].write_text(naive_page(analysis), encoding="utf-8")
        pages["big"].write_text(big, encoding="utf-8")
        browser = Chromium(executable, work / "profile")
        try:
            loads = {name: best_load(browser, path) for name, path in pages.items()}  # the report page last
            paging = math.inf if math.isinf(loads["big"]) else browser.evaluate("""(() => {
                const next = Array.from(document.querySelectorAll('#launch-list button'))
                    .find(b => b.textContent.startsWith('next'));
                const t = performance.now();
                for (let n = 0; n < 20; n++) next.click();
                const search = document.querySelector('#launch-list input');
                search.value = 'layer1';
                search.dispatchEvent(new Event('input'));
                return (performance.now() - t) / 1000;
            })()""")
            errors = browser.errors()
        finally:
            browser.stop()
        sizes = {name: path.stat().st_size for name, path in pages.items()}
    groups = len(analysis.groups_of(analysis.reports[0]))
    print(f"ncu-roofline {ncu_roofline.__version__}: {args.launches:,} launches of {groups} kernels "
          f"({'via CSV' if args.csv else 'in memory'}; built in {built_s:.1f} s, page rendered in {render_s:.1f} s), "
          f"Chromium load best of {REPEATS}")
    print()
    print(f"{'page':<34} {'bytes':>12} {'load s':>8} {'x small':>8} {'x naive':>8}")
    for name, label in (("small", "baseline 1: 5-kernel report page"),
                        ("naive", f"baseline 2: {args.launches:,} static rows"),
                        ("big", f"report page, {args.launches:,} launches")):
        print(f"{label:<34} {sizes[name]:>12,} {seconds(loads[name]):>8} {ratio(loads[name], loads['small']):>8} "
              f"{ratio(loads[name], loads['naive']):>8}")
    print()
    size_ok, load_ok = sizes["big"] <= SIZE_BUDGET, loads["big"] <= LOAD_BUDGET_S
    print(f"page size {sizes['big']:,} bytes, budget {SIZE_BUDGET:,}: {'PASS' if size_ok else 'FAIL'}")
    print(f"load {seconds(loads['big'])} s, budget {LOAD_BUDGET_S:g} s: {'PASS' if load_ok else 'FAIL'}")
    print(f"20 pages of the launch list and one filter: {seconds(paging)} s")
    print(f"script errors: {errors or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
