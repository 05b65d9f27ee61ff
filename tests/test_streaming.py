"""The paths that keep `report` small at 50,000 launches: the CSV read row by row, the JSON written
one launch at a time, raw metrics let go once analysed, and the progress line.

Each is checked for giving exactly what the whole-document path gives (same kernels, same text),
and for failing the same way on damaged input. Timings and memory are in `benchmarks/`.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_csv_reader import HEADER, ROW0, ROW1, SAMPLE, UNITS, _write

from ncu_roofline import analyze
from ncu_roofline.api.jsondoc import LazyList, dumps, iter_dump_bytes, iter_dumps
from ncu_roofline.cli import main
from ncu_roofline.cli.report import Progress
from ncu_roofline.errors import InputError
from ncu_roofline.readers import read_report
from ncu_roofline.readers.csv_export import CsvExport
from ncu_roofline.readers.csv_impossible import impossible_cells
from ncu_roofline.readers.csv_rows import Columns, RowMetrics
from ncu_roofline.readers.record import Metric, metric_names_starting


def _row(i: int) -> str:
    return ROW0.replace('"0","4242"', f'"{i}","4242"', 1)


def test_kernels_are_yielded_before_a_later_row_is_read(tmp_path: Path) -> None:
    # The second kernel row is damaged (one field too many): the first kernel has been handed out
    # before the reader reaches it, and the fault then stops the iteration with the line named.
    bad = ROW1.rstrip("\n") + ',"extra"\n'
    export = CsvExport(_write(tmp_path, HEADER + UNITS + ROW0 + bad + _row(2)))
    kernels = export.kernels()
    first = next(kernels)
    assert first.name == "gemm_kernel" and first.index == 0
    with pytest.raises(InputError, match=r"line 4 has 21 field\(s\) but the header has 20: the file is "
                                         r"malformed"):
        next(kernels)


def test_report_before_the_rows_are_read_is_refused(tmp_path: Path) -> None:
    export = CsvExport(_write(tmp_path, SAMPLE))
    with pytest.raises(RuntimeError, match="before kernels"):
        export.report([])


def test_a_cut_last_row_is_still_found(tmp_path: Path) -> None:
    short = HEADER + UNITS + ROW0 + ROW1[: len(ROW1) // 2]
    with pytest.raises(InputError, match=r"line 4 has 11 field.* the export looks truncated"):
        read_report(_write(tmp_path, short))
    in_quotes = HEADER + UNITS + ROW0 + ROW1[: ROW1.rindex("nan") + 2]  # ... "na: every field, one unclosed
    with pytest.raises(InputError, match="line 4 ends inside a quoted value"):
        read_report(_write(tmp_path, in_quotes))


def test_header_faults_are_raised_when_the_export_is_opened(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no CSV header row"):
        CsvExport(_write(tmp_path, "hello\nworld\n"))


def test_bad_bytes_are_counted_and_the_first_is_placed_in_the_file(tmp_path: Path) -> None:
    # Two bad bytes, the first 2 MiB into the file (past the reader's first buffer), another later.
    filler = "".join(_row(i) for i in range(2, 2 + (2 << 20) // len(ROW0) + 1))
    head = (HEADER + UNITS + ROW0 + filler).encode()
    tail = _row(99_999).replace("gemm_kernel", "gemm_k\udce9rnel").encode("utf-8", "surrogateescape")
    tail += _row(100_000).replace("app", "\udcffpp").encode("utf-8", "surrogateescape")
    report = read_report(_write(tmp_path, head + tail))
    (warning,) = [w for w in report.warnings if "not valid UTF-8" in w]
    offset = len(head) + tail.index(b"\xe9")
    assert f"first bad byte at offset {offset})" in warning
    assert "2 undecodable byte(s)" in warning
    assert report.kernels[-2].name == "gemm_k\ufffdrnel"


def test_utf16_exports_are_still_read(tmp_path: Path) -> None:
    report = read_report(_write(tmp_path, (HEADER + UNITS + ROW0 + ROW1).encode("utf-16")))
    assert [k.index for k in report.kernels] == [0, 1]


def test_repeated_ids_renumber_every_kernel_by_row(tmp_path: Path) -> None:
    report = read_report(_write(tmp_path, HEADER + UNITS + _row(5) + _row(5) + _row(3)))
    assert [k.index for k in report.kernels] == [0, 1, 2]
    assert any("numbered by row" in w for w in report.warnings)


def test_impossible_cells_behind_any_white_space_are_found() -> None:
    row = ["1", "\x0b-5", "\u2003-2", "5-", "-3"]
    signed = [(i, f"m{i}") for i in range(len(row))]
    assert impossible_cells(row, signed) == [("m1", -5.0), ("m2", -2.0), ("m3", "5-"), ("m4", -3.0)]
    assert impossible_cells(["1", "2e-5", "n/a", ""], [(i, f"m{i}") for i in range(4)]) == []
    # a share down to -1 % is Nsight Compute's own noise around zero; past it, or a count, is impossible
    shares = [(0, "sm__pipe_tensor_cycles_active.min.pct_of_peak_sustained_elapsed"), (1, "x__y.sum.pct"),
              (2, "dram__bytes_read.sum"), (3, "lts__t_sector_hit_rate.pct")]
    assert impossible_cells(["-0.0654", "-1.5", "-0.0654", "-1"], shares) == [("x__y.sum.pct", -1.5),
                                                                            ("dram__bytes_read.sum", -0.0654)]


def test_names_under_a_prefix_skip_empty_and_dropped_cells() -> None:
    columns = Columns({"sm__ops_path_tensor_a.sum": (0, ""), "sm__ops_path_tensor_b.sum": (1, ""),
                       "sm__ops_path_tensor_c.sum": (2, ""), "dram__bytes.sum": (3, "")})
    m = RowMetrics(["1", "", "3", "4"], columns)
    m.drop("sm__ops_path_tensor_c.sum")
    assert metric_names_starting(m, "sm__ops_path_tensor_") == ["sm__ops_path_tensor_a.sum"]
    plain = {"sm__ops_path_tensor_x.sum": Metric(1.0), "other": Metric(2.0)}
    assert metric_names_starting(plain, "sm__ops_path_tensor_") == ["sm__ops_path_tensor_x.sum"]


def test_iter_dumps_writes_what_dumps_writes() -> None:
    doc = {"b": [1, {"z": LazyList(lambda: iter([{"x": float("nan")}, {"y": "é"}]))}], "a": 1.5,
           "c": {"d": LazyList(lambda: iter(()))}}
    plain = {"b": [1, {"z": [{"x": float("nan")}, {"y": "é"}]}], "a": 1.5, "c": {"d": []}}
    assert "".join(iter_dumps(doc)) == dumps(plain)
    assert json.loads("".join(iter_dumps(doc)))["b"][1]["z"][0] == {"x": None}
    assert b"".join(iter_dump_bytes(doc)) == dumps(plain).encode("utf-8")  # what files are written from
    huge = {"n": LazyList(lambda: iter([2 ** 70, {1: "÷"}]))}  # orjson refuses both: the standard library's
    assert b"".join(iter_dump_bytes(huge)).decode("utf-8") == dumps({"n": [2 ** 70, {1: "÷"}]})


def test_a_lazy_lists_items_written_together_write_what_dumps_writes(monkeypatch) -> None:
    """A LazyList's items are written a batch of bytes at a time: every boundary between batches, a batch of one
    item, the last batch and an empty list read as `dumps` writes them."""
    from ncu_roofline.api import jsondoc

    items = [{"i": i, "pad": "x" * (i % 7)} for i in range(23)]
    for size in (1, 20, 45, 10 ** 6):
        monkeypatch.setattr(jsondoc, "_BATCH_BYTES", size)
        doc = {"a": LazyList(lambda: iter(items)), "b": LazyList(lambda: iter(()))}
        pieces = list(iter_dump_bytes(doc))
        assert b"".join(pieces) == dumps({"a": items, "b": []}).encode("utf-8")
        batches = sum(b'"i":' in piece for piece in pieces)  # the pieces that hold items
        assert batches == len(items) if size == 1 else batches == 1 if size == 10 ** 6 else 1 < batches < len(items)


def test_json_on_standard_output_is_the_file_text(tmp_path: Path) -> None:
    src = _write(tmp_path, HEADER + UNITS + ROW0 + ROW1)
    out = tmp_path / "r.json"
    runner = CliRunner()
    assert runner.invoke(main, ["report", str(src), "-f", "json", "-o", str(out)]).exit_code == 0
    shown = runner.invoke(main, ["report", str(src), "-f", "json", "-o", "-"])
    assert shown.exit_code == 0 and shown.stdout_bytes == out.read_bytes() and "÷" in shown.stdout


def test_dumps_reads_back_as_the_standard_library_writes_it() -> None:
    """orjson writes compact documents; what it refuses (an integer past 64 bits) falls back to the
    standard library, with the same separators, and non-finite floats are null either way."""
    doc = {"b": [1, -0.0, 1e-7, 1.5e300, "é ×", None, True], "a": {"2": float("inf"), "1": float("nan")},
           "n": 2**70, "t": (1, 2)}
    text = dumps(doc)
    assert text.endswith("\n") and ", " not in text
    assert json.loads(text) == {"a": {"1": None, "2": None}, "b": [1, -0.0, 1e-7, 1.5e300, "é ×", None, True],
                                "n": 2**70, "t": [1, 2]}
    assert text.index('"a"') < text.index('"b"') < text.index('"n"')  # sorted keys
    small = {"k": [0.1, 3, "x"], "j": float("nan")}
    assert dumps(small) == '{"j":null,"k":[0.1,3,"x"]}\n'
    assert dumps({1: "x", "0": 2}) == '{"0":2,"1":"x"}\n'  # int keys as strings, sorted
    import dataclasses
    import datetime

    @dataclasses.dataclass
    class Stray:
        x: int = 1

    for stray in (Stray(), datetime.datetime(2026, 1, 1)):  # refused, as the standard library refuses them
        with pytest.raises(TypeError):
            dumps({"a": stray})


def test_json_pieces_are_the_document(tmp_path: Path) -> None:
    paths = [_write(tmp_path, SAMPLE, "a.csv"), _write(tmp_path, HEADER + UNITS + ROW1, "b.csv")]
    analysis = analyze(paths)
    assert "".join(analysis.json_pieces()) == analysis.to_json()
    assert "".join(analysis.json_pieces(redact=True)) == analysis.to_json(redact=True)


def test_report_json_file_is_the_whole_document(tmp_path: Path) -> None:
    path = _write(tmp_path, SAMPLE)
    out = tmp_path / "out.json"
    result = CliRunner().invoke(main, ["report", str(path), "-f", "json", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_text(encoding="utf-8") == analyze([path], isolate=True).to_json()
    piped = CliRunner().invoke(main, ["report", str(path), "-f", "json"])
    assert piped.stdout == out.read_text(encoding="utf-8")


def test_dropping_raw_metrics_changes_no_output(tmp_path: Path) -> None:
    path = _write(tmp_path, SAMPLE)
    kept = analyze([path], isolate=True)
    dropped = analyze([path], isolate=True, keep_metrics=False)
    assert all(k.raw.metrics == {} for k in dropped.reports[0].kernels)
    assert all(len(k.raw.metrics) > 0 for k in kept.reports[0].kernels)
    assert dropped.to_json() == kept.to_json()


def test_progress_reaches_every_file(tmp_path: Path) -> None:
    seen: list[tuple[str, int]] = []
    paths = [_write(tmp_path, SAMPLE, "a.csv"), _write(tmp_path, HEADER + UNITS + ROW1, "b.csv")]
    analyze(paths, progress=lambda p, n: seen.append((Path(p).name, n)))
    assert seen == [("a.csv", 2), ("b.csv", 1)]


def test_progress_line_on_a_terminal_only(monkeypatch: pytest.MonkeyPatch) -> None:
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    quiet = Progress(tty=False)
    quiet("x.csv", 10)
    quiet.close()
    assert err.getvalue() == ""
    shown = Progress(tty=True, redact=True)
    shown.DELAY_S = shown.EVERY_S = 0.0
    shown("/runs/x.csv", 12_500)
    assert "analysing x.csv: 12,500 launches" in err.getvalue() and "/runs" not in err.getvalue()
    shown.close()
    assert err.getvalue().endswith("\r\x1b[K")


def test_a_plain_rows_cells_agree_with_csv_reader() -> None:
    """A line the block path takes (`plain_row`, then `quoted_block`) reads as csv.reader reads it; every
    all-quoted row with no quote or line break in a cell is taken, in any script."""
    import csv
    import random

    from ncu_roofline.readers.csv_cells import plain_row, quoted_block

    rng = random.Random(12)
    hits = 0
    alphabet = ['a', '1', ',', '"', '","', '\n', '\r', '\r\n', ' ', '\u00e9', '\u6838', '""', '.', '-']
    for _ in range(3000):
        cells = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 4))) for _ in range(rng.randint(1, 6))]
        buf = io.StringIO(newline="")
        quoting = rng.choice([csv.QUOTE_ALL, csv.QUOTE_MINIMAL])
        csv.writer(buf, quoting=quoting, lineterminator=rng.choice(["\n", "\r\n"])).writerow(cells)
        text = buf.getvalue()
        first = io.StringIO(text, newline="").readline().encode()  # the first physical line, as bytes
        taken = quoted_block([first, first]) if plain_row(first) else []
        if taken:
            for row in taken:
                assert first == text.encode() and list(row) == next(csv.reader(io.StringIO(text, newline=""))) == cells
                assert [row[i] for i in range(len(cells))] == cells
            hits += 1
        elif quoting == csv.QUOTE_ALL and not any(c in cell for cell in cells for c in '"\r\n'):
            raise AssertionError(f"a plain quoted row fell back: {text!r}")
    assert hits > 200  # the block path was taken often enough to mean something


def test_a_quoted_row_reads_as_the_list_of_its_cells() -> None:
    from ncu_roofline.readers.csv_cells import QuotedRow, quote_numbers, quoted_block

    cells = ["0", "gemm<float>(int, int)", "", "2,048", " -1", "n/a", "1e-05", ",", "\u6838"]
    for eol in ("\n", "\r\n"):
        line = ('"' + '","'.join(cells) + '"' + eol).encode()
        for row in (*quoted_block([line]), *quoted_block([line, line])):  # a row alone, rows of a block
            assert isinstance(row, QuotedRow) and len(row) == len(cells)
            assert [row[i] for i in range(len(cells))] == cells and [row[-i] for i in range(1, 10)] == cells[::-1]
            assert row.pick(*quote_numbers([7, 1, 3, 8])) == [",", "gemm<float>(int, int)", "2,048", "\u6838"]
            assert row[2:4] == ["", "2,048"] and list(row) == cells and row == cells
            with pytest.raises(IndexError):
                row[len(cells)]
    for line in (b'"a","b"c"\n', b'"a",x"b"\n', b'"a" ,"b"\n', b'"a";"b"\n', b'"\n'):  # csv.reader reads those
        assert quoted_block([line]) == []
    assert quoted_block([b'"a"\n']) == [["a"]]


def test_lines_split_as_a_text_stream_with_newline_empty_splits_them(tmp_path: Path) -> None:
    # The reader reads bytes and decodes a line at a time: its lines must be those of
    # `open(..., newline="")` (LF, CR and CR LF end a line) for any mix of line ends, a byte-order
    # mark and bytes that are not UTF-8.
    import random

    from ncu_roofline.readers.csv_text import TextLines

    rng = random.Random(13)
    pieces = [b"a", b'"x"', b",", b"\n", b"\r", b"\r\n", b"\r\r", b"\n\r", b"\xc3\xa9", b"\xff", b"\xe2\x82", b" "]
    for trial in range(300):
        data = (b"\xef\xbb\xbf" if trial % 3 == 0 else b"") + b"ID" + b"".join(
            rng.choice(pieces) for _ in range(rng.randint(0, 40)))
        path = tmp_path / "lines.csv"
        path.write_bytes(data)
        with path.open(encoding="utf-8", errors="surrogateescape", newline="") as fh:
            expected = [line.removeprefix("\ufeff") if i == 0 else line for i, line in enumerate(fh)]
        expected = [line.replace("\udcff", "\ufffd").replace("\udce2", "\ufffd").replace("\udc82", "\ufffd")
                    for line in expected]
        assert list(TextLines(path, [])) == expected, data


def _unnamed(i: str) -> str:
    """ROW0 with ID `i` and no kernel name."""
    return ROW0.replace('"0","4242","app","node1","gemm_kernel"', f'"{i}","4242","app","node1",""', 1)


def test_rows_named_by_index_and_warnings_use_the_final_numbers(tmp_path: Path) -> None:
    # IDs that cannot number the rows (a repeat, a word): kernels are numbered by row, and the names
    # made from the number and the warnings about impossible values say those numbers.
    negative = _unnamed("x").replace('"10,240,000"', '"-5"', 1)
    report = read_report(_write(tmp_path, HEADER + UNITS + _unnamed("1") + _unnamed("1") + negative))
    assert [(k.index, k.name, k.demangled_name) for k in report.kernels] == [
        (0, "kernel 0", "kernel 0"), (1, "kernel 1", "kernel 1"), (2, "kernel 2", "kernel 2")]
    (warning,) = [w for w in report.warnings if "impossible value" in w]
    assert "kernel 2 (kernel 2): dram__bytes_read.sum = -5" in warning
    good = read_report(_write(tmp_path, HEADER + UNITS + _unnamed("7") + negative.replace('"x"', '"9"'), "b.csv"))
    assert [(k.index, k.name) for k in good.kernels] == [(7, "kernel 7"), (9, "kernel 9")]
    assert any("kernel 9 (kernel 9)" in w for w in good.warnings)


def test_a_cut_inside_quotes_is_found_behind_trailing_blank_space(tmp_path: Path) -> None:
    text = HEADER + UNITS + ROW0 + ROW1[: ROW1.rindex("nan") + 2] + "\n   "
    with pytest.raises(InputError, match="ends inside a quoted value"):
        read_report(_write(tmp_path, text))


def test_a_character_cut_at_the_end_of_the_file_is_placed(tmp_path: Path) -> None:
    whole = (HEADER + UNITS + ROW0 + "==PROF== Disconnected ").encode() + "é".encode()[:1]  # half a character
    report = read_report(_write(tmp_path, whole))
    assert len(report.kernels) == 1
    assert any(f"first bad byte at offset {len(whole) - 1})" in w for w in report.warnings)


def test_a_failed_read_leaves_no_file_open(tmp_path: Path) -> None:
    import gc
    import os

    bad = _write(tmp_path, HEADER + UNITS + ROW0 + ROW1.rstrip("\n") + ',"extra"\n' + _row(2))
    analysis = analyze([bad, _write(tmp_path, SAMPLE, "good.csv")], strict=False, isolate=True)
    assert len(analysis.errors) == 1 and len(analysis.reports) == 1
    gc.collect()
    fds = os.listdir("/proc/self/fd") if os.path.isdir("/proc/self/fd") else []
    held = {os.path.realpath(f"/proc/self/fd/{fd}") for fd in fds if os.path.exists(f"/proc/self/fd/{fd}")}
    assert str(bad.resolve()) not in held
    assert analysis.errors[0].__traceback__ is None


def test_an_output_stream_that_fails_leaves_the_old_file(tmp_path: Path) -> None:
    from ncu_roofline.render.output import write_atomic

    target = tmp_path / "out.json"
    target.write_text("old", encoding="utf-8")

    def pieces():
        yield "{"
        raise ValueError("broken launch")

    with pytest.raises(ValueError, match="broken launch"):
        write_atomic(target, pieces(), force=True)
    assert target.read_text(encoding="utf-8") == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]  # no temporary file left


def test_no_row_outlives_its_launch_analysis(tmp_path: Path) -> None:
    # With keep_metrics=False no RowMetrics (the row's cells) is left once the analysis returns; with
    # the isolated path's compaction each kernel keeps a plain dict of the metrics read.
    import gc

    text = HEADER + UNITS + "".join(_row(i) for i in range(50))
    path = _write(tmp_path, text)

    def rows_alive() -> int:
        gc.collect()
        return sum(1 for o in gc.get_objects() if type(o) is RowMetrics)

    before = rows_alive()
    dropped = analyze([path], isolate=True, keep_metrics=False)
    assert rows_alive() == before
    compact = analyze([path], isolate=True)
    assert rows_alive() == before
    assert all(type(k.raw.metrics) is dict and k.raw.metrics for k in compact.reports[0].kernels)
    kept = analyze([path])  # the API default keeps every row's metrics at hand
    assert rows_alive() == before + 50
    assert len(dropped.reports[0].kernels) == len(kept.reports[0].kernels) == 50


def test_rows_read_in_blocks_keep_their_order_their_line_numbers_and_their_values(tmp_path: Path) -> None:
    """Runs of all-quoted rows are read 64 lines ahead and parse their number columns as one block;
    rows csv.reader must read (a quoted line break, here in the kernel name) and ncu's marker lines
    cut the runs anywhere: the kernels come out in file order with the values each row holds, and a
    fault further down names its own line."""
    broken = _row(70).replace("gemm_kernel", "gemm\nkernel")
    rows = [_row(i) for i in range(1, 70)] + [broken] + ["==WARNING== a note\n"] + [_row(i) for i in range(71, 200)]
    text = HEADER + UNITS + ROW0 + "".join(rows)
    export = CsvExport(_write(tmp_path, text))
    kernels, blocks = [], 0
    for kernel in export.kernels():
        if not kernels:  # what the analysis reads of the first kernel is parsed at once in later rows
            for name in export.header:
                kernel.metrics.get(name)
        else:
            row = kernel.metrics._row
            block = getattr(row, "block", None)
            blocks += block is not None and bool(block.parsed and block.parsed[1])
        kernels.append(kernel)
    report = export.report(kernels)
    assert [k.index for k in report.kernels] == list(range(200))
    assert report.kernels[70].name == "gemm\nkernel" and report.kernels[71].name == "gemm_kernel"
    for kernel in report.kernels:
        assert kernel.metrics["dram__bytes_read.sum"] == Metric(10_240_000.0, "Kbyte")
        assert kernel.metrics["gpu__time_duration.sum"] == Metric(1234.5678, "usecond")
    assert blocks >= 150  # most rows took the block reading
    assert any("a note" in w for w in report.warnings)
    # line numbers: header 1, units 2, kernel 0 on 3, kernel i on 3 + i (+1 for the break, +1 for the marker)
    bad = _row(150).rstrip("\n") + ',"extra"\n'
    damaged = text.replace(_row(150), bad)
    with pytest.raises(InputError, match=r"line 155 has 21 field\(s\)"):
        read_report(_write(tmp_path, damaged))


def test_rows_hold_no_block_text_where_no_columns_are_parsed_at_once(tmp_path: Path) -> None:
    """Where the first kernel's reading learns no columns to parse at once (nothing read of it), the
    block it came in lets its text go and no later block is formed: a later kernel holds its own line
    only; the first block's rows hold the text they share, no second copy of it."""
    text = HEADER + UNITS + ROW0 + "".join(_row(i) for i in range(1, 200))
    export = CsvExport(_write(tmp_path, text))
    kept = list(export.kernels())
    assert len(kept) == 200
    blocks = [getattr(k.metrics._row, "block", None) for k in kept]
    assert all(b is None or b.text is None for b in blocks)
    assert all(b is None for b in blocks[64:])  # after the first batch, no block at all
    assert kept[0].metrics._row._text is kept[62].metrics._row._text  # (one text, not a line copied each)
    assert kept[150].metrics._row.text_length() == len(kept[150].metrics._row._text)
    assert kept[150].metrics["dram__bytes_read.sum"] == Metric(10_240_000.0, "Kbyte")
