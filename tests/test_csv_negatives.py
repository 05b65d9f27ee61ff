"""Negative values in an ncu CSV export: impossible only where the analysis reads them, named once per column.

Nsight Compute itself stores negative counters in exports nobody edited (an A100 full-set capture holds
`lts__t_sectors_srcunit_tex_op_red_lookup_miss.sum = -24` in row after row), in columns the analysis never
reads: those say nothing. A negative count, share or rate the analysis reads is left out (the quantity it
feeds is shown as not available, with the reason) and named in one warning line per file: each column with
its number of rows and its first value, however many rows hold one. What the analysis reads: the columns
its recipe and unit tables name (checked in every row, so a report read alone warns as an analysed one
does), and whatever else it asks a row for (checked where it asks).

Corpus tests skip, with the reason, when `../shared/reports` is absent.
"""

from __future__ import annotations

import csv
import math
import random
from pathlib import Path

import pytest
from conftest import CORPUS, corpus_files, make_kernel
from ncu_csv_writer import write_ncu_csv
from test_model import base_metrics

import ncu_roofline
from ncu_roofline.api.analysis import analyze_report
from ncu_roofline.readers import read_report
from ncu_roofline.readers.csv_cells import quoted_block
from ncu_roofline.readers.csv_export import analysis_columns
from ncu_roofline.readers.csv_impossible import ImpossibleValues, cannot_be_negative, lowest_value, parse_value
from ncu_roofline.readers.csv_rows import Columns, RowMetrics
from ncu_roofline.readers.record import RawReport

RED_MISS = "lts__t_sectors_srcunit_tex_op_red_lookup_miss.sum"  # negative in unedited A100 exports
RED_HIT = "lts__t_sectors_srcunit_tex_op_red_lookup_hit.sum"
DRAM_READ = "dram__bytes_read.sum"
DURATION = "gpu__time_duration.sum"
DRAM_SHARE = "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"
HFMA_PER_CYCLE = "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum.per_cycle_elapsed"
ROWS = 150  # more than two blocks of rows read at once (64 lines each)
ALONE = 140  # a row whose ID is not quoted: csv.reader reads it, on its own


def _export(tmp_path: Path, edit=None, rows: int = ROWS) -> Path:
    """An ncu-like export of `rows` launches of a small model kernel (DRAM bytes read as a raw count, so
    that leaving it out leaves the DRAM traffic without a recipe), holding the negative counters Nsight
    Compute itself writes in columns the analysis never reads; `edit(i, metrics)` changes launch i. Row
    `ALONE` is read on its own; once the first row is analysed, the others are read in blocks of rows whose
    number columns are parsed at once."""
    kernels = []
    for i in range(rows):
        metrics = base_metrics()
        del metrics["dram__bytes_read.sum.per_second"]
        metrics[DRAM_READ] = (5e5, "byte")
        metrics[DRAM_SHARE] = (12.5, "%")
        metrics[RED_MISS] = (-24.0 - i % 3, "sector")
        metrics[RED_HIT] = (-3.0 if i % 2 else 7.0, "sector")
        if edit is not None:
            edit(i, metrics)
        kernels.append(make_kernel(metrics, index=i, name=f"k{i % 4}"))
    path = write_ncu_csv(RawReport("n.csv", "csv", kernels), tmp_path / "n.csv", autoscale=False)
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace(f'\n"{ALONE}","', f"\n{ALONE},\"", 1), encoding="utf-8")
    return path


def _impossible(warnings: list[str]) -> list[str]:
    return [w for w in warnings if "impossible" in w]


def test_the_counters_nsight_compute_writes_negative_are_no_column_the_analysis_reads() -> None:
    assert RED_MISS not in analysis_columns() and RED_HIT not in analysis_columns()
    assert {DRAM_READ, DURATION, DRAM_SHARE} <= analysis_columns()
    assert not any(":" in name or " " in name for name in analysis_columns())  # names, not lists or notes


def test_negative_counters_the_analysis_never_reads_give_no_warning(tmp_path: Path) -> None:
    path = _export(tmp_path)
    assert path.read_text(encoding="utf-8").count('"-24"') == ROWS // 3
    assert read_report(path).warnings == []
    for report in (ncu_roofline.analyze(path).reports[0], analyze_report(path, compact=True)):
        assert report.warnings == []
        assert all(k.usable and k.q.bytes["dram"] is not None for k in report.kernels)


def test_a_negative_count_the_analysis_reads_is_one_warning_for_its_column(tmp_path: Path) -> None:
    def edit(i: int, metrics: dict) -> None:
        if i % 3 == 0:
            metrics[DRAM_READ] = (-5.0 - i, "byte")

    path = _export(tmp_path, edit)
    for warnings in (read_report(path).warnings, ncu_roofline.analyze(path).reports[0].warnings,
                     analyze_report(path, compact=True).warnings):
        (warning,) = warnings  # one line for the 50 rows; nothing about the counters nobody reads
        assert warning.startswith("50 impossible value(s) in 1 column(s) the analysis reads were left out, shown "
                                  "as not available")
        assert "kernel 0 (k0): dram__bytes_read.sum = -5 byte (the first of 50 rows)" in warning
        assert RED_MISS not in warning and RED_HIT not in warning
    report = analyze_report(path, compact=True)
    for k in report.kernels:
        left_out = k.raw.index % 3 == 0
        assert (DRAM_READ not in k.raw.metrics) is left_out
        assert (k.q.bytes["dram"] is None) is left_out
        if left_out:  # not available, and why
            reason = next(m.reason for m in k.missing if m.quantity == "traffic_bytes.dram")
            assert "lacks dram__bytes_read.sum" in reason


def test_a_negative_duration_is_left_out_with_one_warning(tmp_path: Path) -> None:
    """The first row's duration is read, so every later row parses it at once: in a block, or alone."""
    def edit(i: int, metrics: dict) -> None:
        if i in (1, 70, ALONE):
            metrics[DURATION] = (-1000.0, "ns")

    path = _export(tmp_path, edit)
    report = analyze_report(path, compact=True)
    (warning,) = report.warnings
    assert "kernel 1 (k1): gpu__time_duration.sum = -1000 ns (the first of 3 rows)" in warning
    for k in report.kernels:
        bad = k.raw.index in (1, 70, ALONE)
        assert (DURATION not in k.raw.metrics) is bad and k.usable is not bad
        if bad:
            assert k.q.duration_s is None and "gpu__time_duration.sum" in (k.q.unusable_reason or "")


def test_a_share_down_to_minus_one_percent_is_noise_kept_as_read(tmp_path: Path) -> None:
    def edit(i: int, metrics: dict) -> None:
        metrics[DRAM_SHARE] = (-0.07 if i % 2 else -1.0, "%")  # Nsight Compute's own noise around zero
        if i == 101:
            metrics[DRAM_SHARE] = (-1.5, "%")  # past it

    path = _export(tmp_path, edit)
    report = read_report(path)
    (warning,) = report.warnings
    assert warning.startswith("1 impossible value(s)")
    assert f"kernel 101 (k1): {DRAM_SHARE} = -1.5 % (1 row)" in warning
    assert report.kernels[1].metrics[DRAM_SHARE].value == -0.07
    assert report.kernels[2].metrics[DRAM_SHARE].value == -1.0
    assert DRAM_SHARE not in report.kernels[101].metrics


def test_a_column_the_tables_name_is_checked_in_every_row_read_or_not(tmp_path: Path) -> None:
    """DRAM sectors are named by the recipe tables, but this kernel's analysis has the bytes and never reads
    them: every row checks them still (a block of rows in one search, a row alone on its own), so that the
    file says the same whether it is analysed or read alone."""
    sectors = "dram__sectors_read.sum"

    def edit(i: int, metrics: dict) -> None:
        metrics[sectors] = (-8.0 if i in (70, ALONE) else 8.0, "sector")

    path = _export(tmp_path, edit)
    assert sectors in analysis_columns()
    for report in (read_report(path), analyze_report(path, compact=True)):
        (warning,) = report.warnings
        assert f"kernel 70 (k2): {sectors} = -8 sector (the first of 2 rows)" in warning
    assert sectors not in analyze_report(path, compact=True).kernels[0].raw.metrics  # never read


def test_a_column_only_the_analysis_asks_for_is_checked_where_it_asks(tmp_path: Path) -> None:
    """The FP16 recipe reads the hfma count's per-cycle form where the raw count is absent: a form no table
    names, so a report read alone never checks it, and the analysis, which reads it, does."""
    def edit(i: int, metrics: dict) -> None:
        if i == 80:
            metrics[HFMA_PER_CYCLE] = (-10.0, "inst/cycle")

    path = _export(tmp_path, edit)
    assert HFMA_PER_CYCLE not in analysis_columns()
    assert read_report(path).warnings == []
    (warning,) = analyze_report(path, compact=True).warnings
    assert f"kernel 80 (k0): {HFMA_PER_CYCLE} = -10 inst/cycle (1 row)" in warning


def test_one_line_names_at_most_five_columns() -> None:
    found = ImpossibleValues()
    for row in range(3):
        for c in range(7):
            found.note(f"u{c}__m.sum", row, -1.0 - c, "byte")
    warning = found.warning(lambda p: f"kernel {p}")
    assert warning.startswith("21 impossible value(s) in 7 column(s)")
    assert "kernel 0: u0__m.sum = -1 byte (the first of 3 rows); " in warning
    assert "u4__m.sum" in warning and "u5__m.sum" not in warning and warning.endswith("; +2 more column(s)")
    assert ImpossibleValues().warning(str) == ""


def test_a_text_left_out_is_written_so_that_every_character_shows() -> None:
    """Text where a count belongs is quoted in the warning, cut after 40 characters, a character that does not
    print (a NUL of a damaged file, a control character) written as its escape."""
    found = ImpossibleValues()
    found.note("a__m.sum", 4, "1.\x002048", "byte")
    found.note("b__m.sum", 2, "µs \t" + "x" * 50, "")
    warning = found.warning(lambda p: f"kernel {p}")
    assert 'a__m.sum = "1.\\x002048" (1 row)' in warning and "\x00" not in warning
    assert f'b__m.sum = "µs \\t{"x" * 36}…" (1 row)' in warning  # 40 characters, the tab one of them
    found.note("c__m.sum", 1, "x" * 39 + "\x00abc", "")  # an escape is never cut
    assert f'c__m.sum = "{"x" * 39}\\x00…" (1 row)' in found.warning(lambda p: f"kernel {p}")


_CELLS = ["5", "2,048", "-3", "-1,024.5", " -2", "-0.5", "-1.5", "-0", "-inf", "-nan", "n/a", "", "1e-05", "x-1",
          "1.2.3", "5-", "e", "hello ", "1,2,3", "nan", "N/A"]


def test_every_way_a_row_is_read_leaves_out_the_same_values_and_notes_each_once() -> None:
    """A row's cells are checked where the analysis reads them: columns learnt from the first row in one pass
    per block (or per row), the tables' other columns (`watched`) at the row's creation, any other on demand.
    Each way must leave out exactly what a read on demand leaves out, and note each value once (a seeded mix of
    counts, shares and columns that may be negative, read in blocks and alone)."""
    header = [f"u{i}__m.sum" for i in range(6)] + [f"s{i}__m.avg.pct_of_peak_sustained_elapsed" for i in range(3)]
    header += ["free_metric", "u9__m"]  # no rollup: may be negative
    texts = ["breakdown:s9__m.avg.pct_of_peak_sustained_elapsed", "breakdown:s8__m.avg.pct_of_peak_sustained_elapsed",
             "free_text"]  # read as text of the first row; the first is watched, the second not
    header += texts
    watched = [header[4], header[7], texts[0], "not__in_the_header.sum"]

    def columns(learnt: bool) -> Columns:
        cols = Columns(((name, (i, "")) for i, name in enumerate(header)), watched=watched if learnt else ())
        if learnt:  # the first row's analysis read these: every later row parses them at once
            first = RowMetrics(["1.0"] * (len(header) - 3) + ["a,b", "a,b", "c"], cols)
            for name in header[:3] + header[5:7] + header[9:]:
                first.get(name)
            cols.learn_hot(first)
            assert cols.hot is not None and cols.always is not None and cols.hot.texts == tuple(texts)
        return cols

    rng = random.Random(17)
    for trial in range(120):
        rows = [[rng.choice(_CELLS if rng.random() < 0.3 else ["7", "-4", "0.5"]) for _ in header]
                for _ in range(rng.randint(2, 9))]
        for j in range(len(header) - 3, len(header)):  # a text column: the same cell in every row of the block, or not
            same = rng.choice([*_CELLS, "a,b", "a,b", "c"]) if rng.random() < 0.7 else None
            for r in rows:
                r[j] = same if same is not None else rng.choice([*_CELLS, "a,b", "c"])
        lines = ['"' + '","'.join(r) + '"\n' for r in rows]
        hot, cold = columns(True), columns(False)
        read = [RowMetrics(row, hot, k) for k, row in enumerate(quoted_block([line.encode() for line in lines])
                                                                  if trial % 2 else
                                                                  [next(csv.reader([line])) for line in lines])]
        assert all(row is not None for row in read)
        for name in watched[:3]:  # the other columns the analysis may read: checked as each row is made, read or not
            held = [r[header.index(name)] for r in rows]
            assert hot.impossible.columns.get(name, [0])[0] == sum(_left_out(name, cell) for cell in held), name
        alone = [RowMetrics(row, cold, k) for k, row in enumerate(rows)]
        for a, b in zip(read, alone, strict=True):
            got, want = ({n: repr(m.get(n)) for n in header} for m in (a, b))
            assert got == want
            for m in (a, b):  # what a row lists is what it reads
                assert set(m) == {n for n in header if m.get(n) is not None} and len(m) == len(set(m))
        assert hot.impossible.columns == cold.impossible.columns  # every value noted once, where it was read
        assert cold.impossible.columns  # some were
        for name, (count, position, value, _) in cold.impossible.columns.items():
            cells = [r[header.index(name)] for r in rows]
            assert count == sum(_left_out(name, cell) for cell in cells)
            assert parse_value(cells[position]) == value


def _left_out(name: str, cell: str) -> bool:
    """Whether a cell of a count, share or rate column is left out: a number below what it can hold, or text where a
    number belongs (NaN and missing cells never are; a `breakdown:` column holds text)."""
    value = parse_value(cell)
    if isinstance(value, str):
        return lowest_value(name) > -math.inf and ":" not in name
    return isinstance(value, float) and value < lowest_value(name)


def test_a_value_never_read_is_never_checked() -> None:
    """A row checks, at its creation, only the columns it parses at once and those the tables name: the
    negative counter of a column nobody reads is neither left out nor noted until someone reads it."""
    header = ["u0__m.sum", "u1__m.sum", RED_MISS]
    cols = Columns(((name, (i, "sector")) for i, name in enumerate(header)), watched=["u1__m.sum"])
    row = RowMetrics(["-1", "-2", "-24"], cols, 3)
    assert set(cols.impossible.columns) == {"u1__m.sum"}  # the watched column, at once
    assert row.get("u0__m.sum") is None  # a count read on demand: left out, noted
    assert set(cols.impossible.columns) == {"u1__m.sum", "u0__m.sum"}
    assert cols.impossible.columns["u0__m.sum"] == [1, 3, -1.0, "sector"]


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"shared report corpus not found at {CORPUS}")
def test_the_corpus_holds_counters_nsight_compute_wrote_negative() -> None:
    """The corpus test below is worth something: unedited captures there hold negative counts."""
    negative = {name for p in corpus_files() if "self-join-mistic" in p.name for k in read_report(p).kernels
                for name, m in k.metrics.items() if m.is_number and float(m.value) < 0 and cannot_be_negative(name)}
    assert RED_MISS in negative


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"shared report corpus not found at {CORPUS}")
@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name)
def test_an_unedited_export_of_every_corpus_report_gives_no_warning(tmp_path: Path, path: Path) -> None:
    """Each corpus report written as ncu writes its CSV export: the reader adds no warning of its own to
    those the export carries (`==WARNING==` lines), read alone or analysed."""
    report = read_report(path)
    export = write_ncu_csv(report, tmp_path / "export.csv")
    assert read_report(export).warnings == report.warnings
    analysed = analyze_report(export, compact=True).warnings
    assert not _impossible(analysed), analysed
