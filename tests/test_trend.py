"""`ncu-roofline trend`: dating and ordering runs, following kernels, drift, the four outputs, exit codes."""

from __future__ import annotations

import copy
import csv
import io
import json
import os
import re
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import CORPUS

from ncu_roofline.cli import main
from ncu_roofline.compare.dating import date_from_name, discover_runs, run_date
from ncu_roofline.compare.runs import Run, RunKernel
from ncu_roofline.compare.trend import SCHEMA, Trend, TrendRun, build_trend, least_squares_slope, trend
from ncu_roofline.render import TREND, RenderOptions, render

MW_BASE = CORPUS / "gpu-workshop__MW_Baseline.ncu-rep"
MW_HEAD = CORPUS / "gpu-workshop__MW_DivToMult.ncu-rep"
DAYS = ("2026-11-01", "2026-11-02", "2026-11-03", "2026-11-04")
GROWING = 3          # the index of the kernel whose duration grows by 3 % per run
NOISE = (0.004, -0.005, 0.003, -0.002)  # flat ±0.5 %, by run
HOSTILE = "<script>alert('x')</script> | *bold* `tick` [link](http://e.invalid) &amp; $x$"


def render_html(t: Trend, top: int = 12) -> str:
    return render(TREND, t, "html", RenderOptions(top=top))


def run_cli(*args: str | Path) -> Any:
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def base_doc() -> dict[str, Any]:
    if not MW_BASE.is_file():
        pytest.skip(f"corpus report {MW_BASE.name} not found in {CORPUS}")
    import ncu_roofline

    return ncu_roofline.analyze(MW_BASE).to_dict()


def write_batch(folder: Path, docs: dict[str, dict[str, Any]]) -> Path:
    """A batch output folder: `manifest.json` (ncu-roofline-batch/1) + reports/<name>.json."""
    (folder / "reports").mkdir(parents=True)
    entries = []
    for name, doc in docs.items():
        rel = f"reports/{name}.json"
        (folder / rel).write_text(json.dumps(doc), encoding="utf-8")
        rep = doc["reports"][0]
        entries.append({"path": rep["path"], "key": name, "sha256": "0" * 64, "status": "ok", "error": None,
                        "json": rel, "html": None, "kernel_count": rep["kernel_count"],
                        "total_duration_s": rep["total_duration_s"]})
    manifest = {"schema": "ncu-roofline-batch/1", "generator": {"name": "ncu-roofline", "version": "test"},
                "settings": {}, "reports": entries}
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return folder


def day_doc(base: dict[str, Any], run: int, *, report: str = "x.ncu-rep", rename: str | None = None,
            drop: int | None = None) -> dict[str, Any]:
    """The base analysis with kernel GROWING 3 % slower per run and the others flat ±0.5 %."""
    doc = copy.deepcopy(base)
    rep = doc["reports"][0]
    rep["path"] = f"/captures/{DAYS[run]}/{report}"
    for k in rep["kernels"]:
        if k["index"] == GROWING:
            k["duration_s"] *= 1.03 ** run
        else:
            k["duration_s"] *= 1 + NOISE[(run + k["index"]) % len(NOISE)]
        if rename is not None and k["index"] == 0:
            k["name"] = k["demangled_name"] = rename
    if drop is not None:
        rep["kernels"] = [k for k in rep["kernels"] if k["index"] != drop]
    return doc


@pytest.fixture
def nightly(tmp_path: Path, base_doc: dict[str, Any]) -> Path:
    """nightly/2026-11-0N/, created out of order with modification times in reverse date order."""
    parent = tmp_path / "nightly"
    for run in (2, 0, 3, 1):
        folder = write_batch(parent / DAYS[run], {"x": day_doc(base_doc, run, rename=HOSTILE)})
        stamp = 2_000_000_000 - 86_400 * run  # the later the date, the older the files
        os.utime(folder / "manifest.json", (stamp, stamp))
    return parent


def growing_name(base: dict[str, Any]) -> str:
    k = base["reports"][0]["kernels"][GROWING]
    return k["demangled_name"] or k["name"]


# --------------------------------------------------------------------------------------------
# Pure helpers


def test_date_from_name() -> None:
    assert date_from_name("2026-11-01")[1] == "2026-11-01"  # type: ignore[index]
    assert date_from_name("2026-11-01T03:04")[1] == "2026-11-01T03:04"  # type: ignore[index]
    assert date_from_name("2026-11-01_030405-nightly")[1] == "2026-11-01T03:04:05"  # type: ignore[index]
    assert date_from_name("2026-11-01-main")[1] == "2026-11-01"  # type: ignore[index]
    assert date_from_name("2026-13-01") is None
    assert date_from_name("nightly-2026-11-01") is None
    assert date_from_name("2026-11-012") is None


def test_least_squares_slope() -> None:
    assert least_squares_slope([(0, 1.0), (1, 3.0), (2, 5.0)]) == pytest.approx(2.0)
    assert least_squares_slope([(0, 1.0)]) is None
    assert least_squares_slope([(1, 1.0), (1, 2.0)]) is None


def test_date_sources(tmp_path: Path) -> None:
    named = tmp_path / "2026-11-01.json"
    named.write_text("{}")
    assert run_date(named)[1:] == ("2026-11-01", "name")
    recorded = tmp_path / "run-a.json"
    recorded.write_text(json.dumps({"generated_at": "2026-10-02T01:02:03Z"}))
    assert run_date(recorded)[1:] == ("2026-10-02T01:02:03Z", "manifest")
    plain = tmp_path / "run-b.json"
    plain.write_text("{}")
    os.utime(plain, (1_700_000_000, 1_700_000_000))
    assert run_date(plain)[1:] == ("2023-11-14T22:13:20Z", "mtime")


# --------------------------------------------------------------------------------------------
# Following kernels and drift (synthetic runs, no corpus needed)


def kdict(name: str, duration: float | None, index: int, grid: int = 1) -> dict[str, Any]:
    return {"index": index, "name": name, "demangled_name": name, "grid_size": [grid, 1, 1],
            "block_size": [128, 1, 1], "nvtx_ranges": [], "usable": True, "duration_s": duration,
            "bound_by": "dram", "regime": "at_limit", "utilization": {"dram": 0.7}}


def trun(label: str, kernels: list[tuple[str, str, float]]) -> TrendRun:
    """A run from (report, name, duration) triples."""
    rks = [RunKernel(report, kdict(name, d, n)) for n, (report, name, d) in enumerate(kernels)]
    reports = sorted({r for r, _, _ in kernels})
    import datetime as dt

    return TrendRun(label, label, dt.datetime.fromisoformat(label), label, "name", Run(label, "json", reports, rks))


def test_missing_run_and_report_base_names() -> None:
    runs = [
        trun("2026-01-01", [("/a/1/p.ncu-rep", "k", 1e-3), ("/a/1/q.ncu-rep", "k", 2e-3)]),
        trun("2026-01-02", [("/a/2/q.ncu-rep", "k", 2e-3)]),
        trun("2026-01-03", [("/a/3/p.ncu-rep", "k", 1.2e-3), ("/a/3/q.ncu-rep", "k", 2e-3)]),
    ]
    t = build_trend(runs)
    by_key = {s.key: s for s in t.kernels}
    assert set(by_key) == {"p.ncu-rep: k grid=1x1x1 block=128x1x1", "q.ncu-rep: k grid=1x1x1 block=128x1x1"}
    p = by_key["p.ncu-rep: k grid=1x1x1 block=128x1x1"]
    assert p.durations == [1e-3, None, 1.2e-3]
    assert p.change_pct == pytest.approx(20.0) and p.drift
    assert p.slope_pct_per_run == pytest.approx(10.0)
    assert not by_key["q.ncu-rep: k grid=1x1x1 block=128x1x1"].drift
    doc = json.loads(t.to_json())
    assert doc["kernels"][0]["durations_s"] == [1e-3, None, 1.2e-3]


def test_repeated_launches_are_one_series_of_their_median() -> None:
    """A run's launches of one kernel and launch configuration are one group: the series follows the
    median launch (what `diff` compares), keeps the count and the GPU time, and coverage counts that."""
    runs = [
        trun("2026-01-01", [("r.ncu-rep", "gemm", 1.0e-3), ("r.ncu-rep", "gemm", 1.1e-3),
                            ("r.ncu-rep", "gemm", 9.0e-3), ("r.ncu-rep", "add", 1.0e-4)]),
        # one launch fewer, and one slow outlier: the median moves by 0.5 %, the total by -89 %
        trun("2026-01-02", [("r.ncu-rep", "gemm", 1.0e-3), ("r.ncu-rep", "gemm", 1.01e-3),
                            ("r.ncu-rep", "add", 1.0e-4)]),
        trun("2026-01-03", [("r.ncu-rep", "gemm", 1.2e-3), ("r.ncu-rep", "gemm", 1.3e-3),
                            ("r.ncu-rep", "gemm", 1.25e-3), ("r.ncu-rep", "add", 1.0e-4)]),
    ]
    t = build_trend(runs)
    assert [s.name for s in t.kernels] == ["gemm", "add"]  # not one series per launch
    gemm = t.kernels[0]
    assert gemm.key == "gemm grid=1x1x1 block=128x1x1"
    assert gemm.durations == pytest.approx([1.1e-3, 1.005e-3, 1.25e-3])  # medians
    assert gemm.values("launches") == [3, 2, 3]
    assert gemm.totals == pytest.approx([11.1e-3, 2.01e-3, 3.75e-3])
    assert gemm.change_pct == pytest.approx((1.25 - 1.1) / 1.1 * 100) and gemm.drift
    # coverage: GPU time (totals), 11.2 ms in the first run, all of it timed again in the last
    assert t.coverage["first_s"] == pytest.approx(11.2e-3) and t.coverage["share"] == pytest.approx(1.0)
    assert t.top(1)[0] is gemm and gemm.total_duration_s == pytest.approx(16.86e-3)
    doc = json.loads(t.to_json())
    assert doc["schema"] == SCHEMA == "ncu-roofline-trend/3"
    entry = next(k for k in doc["kernels"] if k["name"] == "gemm")
    assert entry["launches"] == [3, 2, 3] and entry["total_s"] == pytest.approx([11.1e-3, 2.01e-3, 3.75e-3])
    rows = list(csv.DictReader(io.StringIO(render(TREND, t, "csv", RenderOptions()))))
    assert len(rows) == 6  # one row per group per run, not per launch
    first = next(r for r in rows if r["run"] == "2026-01-01" and r["kernel"] == "gemm")
    assert first["launches"] == "3"
    assert (float(first["duration_s"]), float(first["total_s"])) == pytest.approx((1.1e-3, 11.1e-3))


def test_launch_configurations_are_separate_series() -> None:
    """The same kernel on two grids is two groups, each followed on its own."""
    def run(label: str, small: float, large: float) -> TrendRun:
        import datetime as dt

        rks = [RunKernel("r.ncu-rep", kdict("k", small, 0, grid=1)),
               RunKernel("r.ncu-rep", kdict("k", large, 1, grid=8)),
               RunKernel("r.ncu-rep", kdict("k", small, 2, grid=1))]
        return TrendRun(label, label, dt.datetime.fromisoformat(label), label, "name",
                        Run(label, "json", ["r.ncu-rep"], rks))

    t = build_trend([run("2026-01-01", 1e-3, 8e-3), run("2026-01-02", 1e-3, 9e-3)])
    by_key = {s.key: s for s in t.kernels}
    assert set(by_key) == {"k grid=1x1x1 block=128x1x1", "k grid=8x1x1 block=128x1x1"}
    assert by_key["k grid=1x1x1 block=128x1x1"].values("launches") == [2, 2]
    assert by_key["k grid=8x1x1 block=128x1x1"].drift and not by_key["k grid=1x1x1 block=128x1x1"].drift


def test_noisy_last_point_with_falling_fit_is_not_drift() -> None:
    durations = [1.0e-3, 0.9e-3, 0.8e-3, 0.7e-3, 1.06e-3]
    runs = [trun(f"2026-01-0{n + 1}", [("r.ncu-rep", "k", d)]) for n, d in enumerate(durations)]
    (s,) = build_trend(runs).kernels
    assert s.change_pct == pytest.approx(6.0) and s.slope_pct_per_run is not None and s.slope_pct_per_run < 0
    assert not s.drift


def test_jitter_guard() -> None:
    runs = [trun(f"2026-01-0{n + 1}", [("r.ncu-rep", "tiny", 2e-6 * 1.1 ** n)]) for n in range(3)]
    assert not build_trend(runs).kernels[0].drift  # 21 % of 2 µs: launch jitter
    assert build_trend(runs, min_duration_s=0, min_delta_s=0).kernels[0].drift


def test_json_documents_without_corpus(tmp_path: Path) -> None:
    """`report -f json` documents as runs; no corpus needed."""
    for day in ("2026-02-03", "2026-02-01", "2026-02-02"):
        d = int(day[-1]) - 1
        kernels = [kdict("steady", 1e-3, 0), kdict("climbing", 2e-3 * 1.1 ** d, 1), kdict(HOSTILE, 1e-3, 2)]
        doc = {"schema": "ncu-roofline/2", "reports": [{"path": f"/c/{day}/app.ncu-rep", "kernels": kernels}]}
        (tmp_path / f"{day}.json").write_text(json.dumps(doc), encoding="utf-8")
    files = sorted(tmp_path.glob("*.json"), reverse=True)
    result = run_cli("trend", *files, "--fail-on-drift")
    assert result.exit_code == 1 and "climbing" in result.stderr
    doc = json.loads(result.stdout)
    assert [r["label"] for r in doc["runs"]] == ["2026-02-01", "2026-02-02", "2026-02-03"]
    assert doc["drifting"] == ["climbing grid=1x1x1 block=128x1x1"]
    html = render_html(trend(files))
    assert html.count("<script") == 1 and "<script src" not in html and html.count('class="trend-chart') == 3
    one = run_cli("trend", files[0])
    assert one.exit_code == 2 and "at least 2" in one.stderr and str(files[0]) in one.stderr


# --------------------------------------------------------------------------------------------
# Batch folders built from a real analysis


def test_drift_found_and_ordered_by_folder_date(nightly: Path, base_doc: dict[str, Any]) -> None:
    folders = [nightly / d for d in ("2026-11-03", "2026-11-01", "2026-11-04", "2026-11-02")]
    t = trend(folders)
    assert [r.label for r in t.runs] == list(DAYS)
    assert {r.date_source for r in t.runs} == {"name"}
    assert [s.name for s in t.drifting] == [growing_name(base_doc)]
    s = t.drifting[0]
    assert s.change_pct == pytest.approx(9.2727, abs=1e-3)
    assert s.slope_pct_per_run == pytest.approx(3.0, abs=0.15)
    assert s.runs_present == 4 and s.bound_first_last() == ("dram", "dram")
    others = [k for k in t.kernels if k is not s]
    assert len(others) == len(base_doc["reports"][0]["kernels"]) - 1
    assert all(abs(k.change_pct or 0) < 1.0 and not k.drift for k in others)
    assert t.kernels[0] is s  # sorted by change
    totals = t.totals
    assert all(x is not None for x in totals) and totals[-1] > totals[0]  # type: ignore[operator]


def test_parent_folder_and_json(nightly: Path, base_doc: dict[str, Any]) -> None:
    result = run_cli("trend", nightly)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["schema"] == SCHEMA
    assert [r["label"] for r in doc["runs"]] == list(DAYS)
    assert all(r["date_source"] == "name" and r["date"] == r["label"] and r["total_gpu_time_s"] > 0
               for r in doc["runs"])
    for k in doc["kernels"]:
        assert {"key", "name", "durations_s", "utilization", "bound_by", "change_pct", "slope_pct_per_run",
                "drift"} <= set(k)
        assert len(k["durations_s"]) == len(k["utilization"]) == len(k["bound_by"]) == 4
    drifting = [k for k in doc["kernels"] if k["drift"]]
    assert [k["name"] for k in drifting] == [growing_name(base_doc)]
    assert doc["drifting"] == [drifting[0]["key"]]
    assert "NaN" not in result.output and "Infinity" not in result.output
    again = run_cli("trend", *[nightly / d for d in reversed(DAYS)])
    assert again.output == result.output  # deterministic, and the order is the dates'


def test_mtime_order_when_names_have_no_date(tmp_path: Path, base_doc: dict[str, Any]) -> None:
    for n, name in enumerate(("zeta", "alpha", "mid")):  # mtime order: zeta, alpha, mid
        folder = write_batch(tmp_path / "runs" / name, {"x": day_doc(base_doc, n)})
        stamp = 1_800_000_000 + 3600 * n
        os.utime(folder / "manifest.json", (stamp, stamp))
    t = trend([tmp_path / "runs"])
    assert [r.label for r in t.runs] == ["zeta", "alpha", "mid"]
    assert {r.date_source for r in t.runs} == {"mtime"}
    assert t.runs[0].date_text.endswith("Z")


class Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: list[str] = []
        self.figures: list[str] = []
        self.svgs = 0
        self.refs: list[str] = []
        self.tags: Counter[str] = Counter()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.tags[tag] += 1
        if a.get("id"):
            self.ids.append(a["id"] or "")
        if tag == "figure":
            self.figures.append(a.get("class") or "")
        if tag == "svg":
            self.svgs += 1
        for name in ("src", "href", "xlink:href"):
            if a.get(name):
                self.refs.append(a[name] or "")


def test_html(nightly: Path, tmp_path: Path, base_doc: dict[str, Any]) -> None:
    out = tmp_path / "trend.html"
    result = run_cli("trend", nightly, "-o", out)
    assert result.exit_code == 0, result.output
    assert result.output.strip() == f"Wrote {out}"
    html = out.read_text(encoding="utf-8")
    page = Page()
    page.feed(html)
    page.close()
    kernels = len(base_doc["reports"][0]["kernels"])
    charts = [c for c in page.figures if "trend-chart" in c]
    assert len(charts) == min(12, kernels)
    assert sum(1 for c in charts if "drifting" in c) == 1
    assert page.svgs == len(charts) + 1  # and the total GPU time chart
    assert len(page.ids) == len(set(page.ids)), [i for i, n in Counter(page.ids).items() if n > 1]
    # self-contained: our one inline script, no stylesheet link, image or fetch of any kind
    assert page.tags["script"] == 1 and page.tags["link"] == 0 and page.tags["img"] == 0
    assert all(ref.startswith("#") for ref in page.refs), page.refs
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)
    assert "@import" not in html and "url(http" not in html
    # the hostile name is text everywhere: the table, the captions and the SVG titles
    assert html.count("<script") == 1 and "alert('x')</" not in html
    assert "&lt;script&gt;" in html
    assert "DRIFT" in html and growing_name(base_doc) in html
    for day in DAYS:
        assert day in html


def test_html_is_reproducible(nightly: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    t = trend([nightly])
    assert render_html(t) == render_html(trend([nightly]))


def test_markdown(nightly: Path, base_doc: dict[str, Any]) -> None:
    result = run_cli("trend", nightly, "-f", "md")
    assert result.exit_code == 0, result.output
    md = result.output
    assert "**Total GPU time:**" in md and "1 kernel drifting" in md
    table = [line for line in md.splitlines() if line.startswith("| ") and "%/run" in line]
    assert len(table) == 1
    assert f"`{growing_name(base_doc)}`" in table[0] and "+9.3 %" in table[0]  # names are code spans
    assert "<script>" not in md  # names escaped (the hostile kernel is not drifting, so absent anyway)
    calm = run_cli("trend", nightly, "-f", "md", "--drift", "20")
    assert "No kernel drifting" in calm.output


def test_csv(nightly: Path, tmp_path: Path, base_doc: dict[str, Any]) -> None:
    out = tmp_path / "trend.csv"
    result = run_cli("trend", nightly, "-o", out)
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))
    kernels = len(base_doc["reports"][0]["kernels"])
    assert len(rows) == 4 * kernels
    assert list(rows[0])[:9] == ["run", "date", "report", "kernel", "launches", "duration_s", "total_s", "bound_by",
                                 "utilization"]
    assert [r["run"] for r in rows[::kernels]] == list(DAYS)
    growing = [r for r in rows if r["kernel"] == growing_name(base_doc)]
    assert float(growing[-1]["duration_s"]) / float(growing[0]["duration_s"]) == pytest.approx(1.03 ** 3)
    assert any(r["kernel"] == HOSTILE for r in rows)


def test_fail_on_drift(nightly: Path, tmp_path: Path, base_doc: dict[str, Any]) -> None:
    out = tmp_path / "t.json"
    result = CliRunner().invoke(main, ["trend", str(nightly), "-o", str(out), "--fail-on-drift"])
    assert result.exit_code == 1
    assert out.is_file()  # written anyway
    assert growing_name(base_doc) in result.stderr and "+9.3 %" in result.stderr
    calm = run_cli("trend", nightly, "--fail-on-drift", "--drift", "10")
    assert calm.exit_code == 0


def test_unusable_input(nightly: Path, tmp_path: Path) -> None:
    one = run_cli("trend", nightly / DAYS[0])
    assert one.exit_code == 2
    assert "at least 2" in one.stderr and DAYS[0] in one.stderr and "Traceback" not in one.output
    assert len(one.stderr.strip().splitlines()) == 1
    empty = tmp_path / "empty"
    empty.mkdir()
    nothing = run_cli("trend", empty, nightly / DAYS[0])
    assert nothing.exit_code == 2 and str(empty) in nothing.stderr and "nothing to read" in nothing.stderr
    missing = run_cli("trend", tmp_path / "nope", nightly)
    assert missing.exit_code == 2 and "nope" in missing.stderr
    same_twice = run_cli("trend", nightly / DAYS[0], nightly / DAYS[0])
    assert same_twice.exit_code == 2
    assert len(discover_runs([nightly, nightly / DAYS[1]])) == 4


def test_refuses_to_overwrite(nightly: Path, tmp_path: Path) -> None:
    out = tmp_path / "t.md"
    out.write_text("keep")
    result = run_cli("trend", nightly, "-o", out)
    assert result.exit_code == 2 and "--force" in result.stderr and out.read_text() == "keep"
    assert run_cli("trend", nightly, "-o", out, "--force").exit_code == 0
    assert out.read_text().startswith("### Roofline trend")


# --------------------------------------------------------------------------------------------
# Real `ncu-roofline batch` output


@pytest.mark.skipif(not (MW_BASE.is_file() and MW_HEAD.is_file()), reason=f"corpus reports not found in {CORPUS}")
def test_real_batch_folders(tmp_path: Path) -> None:
    from ncu_roofline.batch.run import run_batch

    for day, source in (("2026-11-01", MW_BASE), ("2026-11-02", MW_HEAD)):
        inputs = tmp_path / "in" / day
        inputs.mkdir(parents=True)
        (inputs / "mw.ncu-rep").write_bytes(source.read_bytes())
        assert run_batch([str(inputs)], tmp_path / "out" / day, jobs=1).failed == 0
    result = run_cli("trend", tmp_path / "out")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert [r["label"] for r in doc["runs"]] == ["2026-11-01", "2026-11-02"]
    assert all(k["runs_present"] == 2 for k in doc["kernels"])  # every kernel followed across both
    assert doc["total"]["change_pct"] < 0  # DivToMult is the faster version
