"""Every renderer of every document on awkward inputs, and every way a write can fail.

Inputs: an empty report (no kernel), one kernel, many kernels, NaN kernels and hostile names.
Each document (report, diff, trend) is rendered in every format its registry entry has; the
output must be text, name every kernel where the format lists kernels, and never leak the
hostile markup unescaped into HTML.
"""

from __future__ import annotations

import datetime
import os
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import make_kernel
from test_model import base_metrics

from ncu_roofline.api.analysis import Analysis, ReportResult
from ncu_roofline.api.kernel import analyse_kernel
from ncu_roofline.cli import main
from ncu_roofline.compare.diff import diff_runs
from ncu_roofline.compare.runs import run_from_document
from ncu_roofline.compare.trend import TrendRun, build_trend
from ncu_roofline.errors import OutputError
from ncu_roofline.render import DIFF, RENDERERS, REPORT, TREND, RenderOptions, render
from ncu_roofline.render.output import write_atomic

HOSTILE = "</script><b>x</b> & \"q\" 'y' | `z` @octocat\r\nvoid f<int, std::vector<float>>(T*) =1+1"


def _analysis(case: str) -> Analysis:
    if case == "empty":
        kernels = []
    elif case == "one":
        kernels = [analyse_kernel(make_kernel(base_metrics(), name="only"))]
    elif case == "many":
        kernels = [analyse_kernel(make_kernel(base_metrics(), index=i, name=f"k{i}")) for i in range(40)]
    elif case == "nan":
        nan = {name: (float("nan"), unit) for name, (_, unit) in base_metrics().items()}
        kernels = [analyse_kernel(make_kernel(nan, index=i, name=f"nan{i}")) for i in range(3)]
    else:
        kernels = [analyse_kernel(make_kernel(base_metrics(), index=i, name=f"{HOSTILE}{i}",
                                              demangled_name=f"{HOSTILE}{i}")) for i in range(3)]
    return Analysis([ReportResult(f"/tmp/{case}.ncu-rep", "ncu-rep", "2025.1.0.0", kernels)], [])


CASES = ("empty", "one", "many", "nan", "hostile")


def _check(text: str, fmt: str, case: str) -> None:
    assert isinstance(text, str) and text
    if case == "hostile" and fmt == "html":
        assert "</script><b>" not in text and "<b>x</b>" not in text


@pytest.mark.parametrize("fmt", sorted(RENDERERS[REPORT]))
@pytest.mark.parametrize("case", CASES)
def test_report_renderers(case: str, fmt: str) -> None:
    a = _analysis(case)
    text = render(REPORT, a, fmt, RenderOptions())
    _check(text, fmt, case)
    if fmt in ("json", "csv", "html") and case in ("one", "many"):
        for k in a.reports[0].kernels:
            assert k.raw.name in text


@pytest.mark.parametrize("fmt", sorted(RENDERERS[DIFF]))
@pytest.mark.parametrize("case", CASES)
def test_diff_renderers(case: str, fmt: str) -> None:
    base = run_from_document(_analysis(case).to_dict(), "base.json", "json")
    head = run_from_document(_analysis("one").to_dict(), "head.json", "json")
    _check(render(DIFF, diff_runs(base, head, fail_on_regression=5.0), fmt), fmt, case)


@pytest.mark.parametrize("fmt", sorted(RENDERERS[TREND]))
@pytest.mark.parametrize("case", CASES)
def test_trend_renderers(case: str, fmt: str) -> None:
    day = datetime.datetime(2026, 11, 1, tzinfo=datetime.timezone.utc)
    runs = [TrendRun(f"run{n}", f"run{n}.json", day + datetime.timedelta(days=n), f"2026-11-0{n + 1}", "name",
                     run_from_document(_analysis(c).to_dict(), f"run{n}.json", "json"))
            for n, c in enumerate((case, "one", case))]
    _check(render(TREND, build_trend(runs), fmt, RenderOptions(top=3)), fmt, case)


def test_batch_index_renderer(tmp_path: Path) -> None:
    """The batch index of reports of every case, one of them failed, in every format it has."""
    from ncu_roofline.batch.job import error_result, rows_and_summary
    from ncu_roofline.batch.manifest import manifest_entry, settings_for
    from ncu_roofline.render import BATCH_INDEX
    from ncu_roofline.settings import AnalysisSettings
    from ncu_roofline.views.batch_index import BatchIndex

    entries = []
    for case in CASES:
        doc = _analysis(case).to_dict()
        _, summary = rows_and_summary(doc)
        result = {"path": f"/tmp/{case}.ncu-rep", "sha256": "0" * 64, "status": "ok", "error": None,
                  "summary": summary}
        entries.append(manifest_entry(result, case, f"reports/{case}.json", f"reports/{case}.html", 0.1))
    entries.append(manifest_entry(error_result(HOSTILE, None, f"{HOSTILE}: the file is empty"), "bad", None, None, 0.0))
    index = BatchIndex(entries, settings_for(AnalysisSettings()), parquet=False)
    for fmt in sorted(RENDERERS[BATCH_INDEX]):
        _check(render(BATCH_INDEX, index, fmt), fmt, "hostile")


def test_csv_columns_match_the_rows() -> None:
    from ncu_roofline.api.rows import columns

    rows = _analysis("one").rows()
    assert list(rows[0]) == columns()
    assert render(REPORT, _analysis("empty"), "csv").splitlines() == [",".join(columns())]


def test_write_into_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(OutputError, match="does not exist"):
        write_atomic(tmp_path / "nowhere" / "out.html", "x")


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root writes into read-only folders")
def test_write_into_read_only_folder(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        with pytest.raises(OutputError, match="cannot write"):
            write_atomic(folder / "out.html", "x")
        assert list(folder.iterdir()) == []
    finally:
        folder.chmod(stat.S_IRWXU)


def test_cli_write_failures_are_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A failed write through the CLI: exit 2, one line naming the path, no traceback, nothing left."""
    from ncu_csv_writer import write_ncu_csv

    from ncu_roofline.readers.record import RawReport

    src = write_ncu_csv(RawReport("k.csv", "csv", [make_kernel(base_metrics())]), tmp_path / "k.csv")
    target = tmp_path / "missing" / "out.html"
    result = CliRunner().invoke(main, ["report", str(src), "-o", str(target)])
    assert result.exit_code == 2
    assert "Traceback" not in result.output and str(target) in result.output
    # An OS error during the write itself (a full disk, a read-only file system) is reported the same way.
    def refuse(*_args: object, **_kwargs: object) -> None:
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(os, "replace", refuse)
    out = tmp_path / "out.md"
    result = CliRunner().invoke(main, ["report", str(src), "-f", "md", "-o", str(out)])
    assert result.exit_code == 2 and "Read-only file system" in result.output and "Traceback" not in result.output
    assert not out.exists() and not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
