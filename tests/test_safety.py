"""Hostile kernel names in every Markdown and CSV output: no mention, link, broken row or formula."""

from __future__ import annotations

import csv
import datetime
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from conftest import make_kernel
from ncu_csv_writer import write_ncu_csv
from test_diff import kernel, make_run, run_cli
from test_model import base_metrics

from ncu_roofline.api.analysis import Analysis, ReportResult
from ncu_roofline.api.kernel import analyse_kernel
from ncu_roofline.compare.diff import diff_runs
from ncu_roofline.compare.runs import run_from_document
from ncu_roofline.compare.trend import TrendRun, build_trend
from ncu_roofline.readers.record import RawReport
from ncu_roofline.render import DIFF, REPORT, TREND, RenderOptions, render
from ncu_roofline.render.csv import csv_cell
from ncu_roofline.render.diff_markdown import COMMENT_LIMIT, fit
from ncu_roofline.render.markdown import comment_length, md_code, md_escape

NAMES = ["@octocat ping", "line\rbreak\nkernel", "see http://e.invalid/x and www.e.invalid", "team @org/team | x"]
FORMULA = '=HYPERLINK("x")'


# ---------------------------------------------------------------------------------------------
# Markdown


def test_md_escape_and_md_code() -> None:
    text = md_escape("@octocat see http://e.invalid www.e.invalid #12 a@b.c\r\nnext")
    assert "@octocat" not in text and "@&#8203;octocat" in text and "a@&#8203;b.c" in text
    assert "http://" not in text and "http&#58;//" in text and "www&#46;e" in text
    assert "\\#&#8203;12" in text and "\r" not in text and "\n" not in text
    assert md_code("a`b") == "``a`b``" and md_code("`x`") == "`` `x` ``"
    assert md_code("a|b", table=True) == "`a\\|b`" and md_code("a|b") == "`a|b`"
    assert md_code("x\ry\nz") == "`x y z`" and md_code("") == "(no name)"


def _outside_code(md: str) -> str:
    return re.sub(r"(`+)(?:(?!\1).)+?\1", "", md)


def _check_markdown(md: str) -> None:
    assert "\r" not in md
    outside = _outside_code(md)
    assert not re.search(r"@[A-Za-z]", outside), [line for line in outside.splitlines() if "@" in line]
    assert "http://" not in outside and not re.search(r"\bwww\.", outside)
    for block in re.split(r"\n(?!\|)", md):  # every table: the same number of cells in every row
        rows = [line for line in block.splitlines() if line.startswith("|")]
        widths = {len(re.findall(r"(?<!\\)\|", row)) for row in rows}
        assert len(widths) <= 1, rows


def _analysis(names: list[str]) -> Analysis:
    kernels = [analyse_kernel(make_kernel(base_metrics(), index=i, name=n, demangled_name=n))
               for i, n in enumerate(names)]
    return Analysis([ReportResult("/tmp/hostile.ncu-rep", "ncu-rep", "2025.1.0.0", kernels)], [])


def test_every_markdown_writer_neutralises_names() -> None:
    _check_markdown(render(REPORT, _analysis(NAMES), "md", RenderOptions()))
    base = [kernel(n, 1e-3) for n in NAMES]
    head = [kernel(n, 2e-3) for n in NAMES[:2]] + [kernel(n + " new", 1e-3) for n in NAMES[2:]]
    md = render(DIFF, diff_runs(make_run(base), make_run(head), fail_on_regression=5), "md", RenderOptions())
    _check_markdown(md)
    assert "`@octocat ping`" in md and "`line break kernel`" in md  # names as code spans, line breaks gone
    day = datetime.datetime(2026, 11, 1)
    runs = []
    for n in range(3):
        doc = {"schema": "ncu-roofline/2", "reports": [{"path": "@octocat/x.ncu-rep", "kernels": [
            kernel(name, 1e-3 * (1.2 ** n), index=i) for i, name in enumerate(NAMES)]}]}
        runs.append(TrendRun(f"@octocat-{n}", "x", day + datetime.timedelta(days=n), f"2026-11-0{n + 1}", "name",
                             run_from_document(doc, "x", "json")))
    md = render(TREND, build_trend(runs), "md", RenderOptions())
    _check_markdown(md)
    assert "drifting" in md and "`@octocat ping`" in md


def test_comment_stays_under_the_limit() -> None:
    base = [kernel(f"kernel_{n}_" + "x" * 200, 1e-3, grid=(n + 1, 1, 1)) for n in range(3000)]
    head = [kernel(f"kernel_{n}_" + "x" * 200, 2e-3, grid=(n + 1, 1, 1)) for n in range(3000)]
    md = render(DIFF, diff_runs(make_run(base), make_run(head), fail_on_regression=5), "md", RenderOptions())
    assert comment_length(md) <= COMMENT_LIMIT and "… 2950 more" in md
    body = [f"- line {n} " + "y" * 100 for n in range(200)]
    text = fit(["# title", ""], body, ["_footer_"], limit=5000)
    assert comment_length(text) <= 5000 and text.rstrip().endswith("_footer_")
    assert re.search(r"_… \d+ more lines left out to stay under GitHub's 5,000-character comment limit", text)
    huge = fit(["z" * 9000], [], ["_footer_"], limit=5000)
    assert comment_length(huge) <= 5000 and "cut to stay under" in huge


# ---------------------------------------------------------------------------------------------
# CSV


@pytest.mark.parametrize(("value", "cell"), [
    (FORMULA, "'" + FORMULA), ("+cmd", "'+cmd"), ("-x", "'-x"), ("@SUM(A1)", "'@SUM(A1)"), ("\tx", "'\tx"),
    ("\rx", "'\rx"), ("-1.5", "-1.5"), ("+2", "+2"), ("1e5", "1e5"), ("plain", "plain"), (-2.5, "-2.5"), (-3, -3),
    (None, ""), (float("nan"), ""),
])
def test_csv_cell(value: Any, cell: Any) -> None:
    assert csv_cell(value) == cell


def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def _hostile_csv(path: Path) -> Path:
    kernels = [make_kernel(base_metrics(), index=0, name=FORMULA, demangled_name=FORMULA),
               make_kernel(base_metrics(), index=1, name="-neg", demangled_name="-neg")]
    return write_ncu_csv(RawReport(str(path), "csv", kernels), path)


def test_report_csv_neutralises_formulas(tmp_path: Path) -> None:
    out = tmp_path / "k.csv"
    assert run_cli("report", _hostile_csv(tmp_path / "in.csv"), "-o", out).exit_code == 0
    rows = _rows(out.read_text(encoding="utf-8"))
    assert [r["name"] for r in rows] == ["'" + FORMULA, "'-neg"]
    assert float(rows[0]["duration_s"]) == pytest.approx(1e-6)  # numbers stay numbers


def test_batch_kernels_csv_neutralises_and_parquet_keeps_raw(tmp_path: Path) -> None:
    from ncu_roofline.batch.run import run_batch

    inputs = tmp_path / "in"
    inputs.mkdir()
    _hostile_csv(inputs / "hostile.csv")
    assert run_batch([str(inputs)], tmp_path / "out", jobs=1).failed == 0
    rows = _rows((tmp_path / "out" / "kernels.csv").read_text(encoding="utf-8"))
    assert sorted(r["name"] for r in rows) == sorted(["'" + FORMULA, "'-neg"])
    assert all(float(r["duration_s"]) > 0 for r in rows)
    parquet = tmp_path / "out" / "kernels.parquet"
    if parquet.is_file():
        pq = pytest.importorskip("pyarrow.parquet")
        assert sorted(pq.read_table(parquet).column("name").to_pylist()) == sorted([FORMULA, "-neg"])


def test_trend_csv_neutralises_formulas(tmp_path: Path) -> None:
    files = []
    for day in ("2026-02-01", "2026-02-02"):
        doc = {"schema": "ncu-roofline/2", "reports": [{"path": f"/c/{day}/app.ncu-rep",
                                                        "kernels": [kernel(FORMULA, 1e-3, index=0)]}]}
        path = tmp_path / f"{day}.json"
        path.write_text(json.dumps(doc), encoding="utf-8")
        files.append(path)
    out = tmp_path / "t.csv"
    assert run_cli("trend", *files, "-o", out).exit_code == 0
    rows = _rows(out.read_text(encoding="utf-8"))
    assert {r["kernel"] for r in rows} == {"'" + FORMULA} and all(r["key"].startswith("'=") for r in rows)
    assert all(float(r["duration_s"]) == pytest.approx(1e-3) for r in rows)
