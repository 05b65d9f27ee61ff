"""Tests of the `ncu --csv --page raw` reader and of `read_report`'s dispatch and input checks.

Hand-written CSV snippets pin the format rules; the parity tests write real reports of the shared
corpus as ncu would (`tests/ncu_csv_writer.py`), read them back and compare with the `.ncu-rep`
reader. Corpus tests skip, with the reason, when `../shared/reports` is absent.

NaN convention: ncu writes `n/a` for a metric it did not collect (read as absent) and `nan` for a
collected value that is NaN (read as a NaN Metric), so NaN metrics survive the round trip as NaN.
Metrics stored with an empty or missing string value come back absent.
"""

from __future__ import annotations

import csv
import math
import sys
from functools import cache
from pathlib import Path

import pytest
from ncu_csv_writer import format_number, write_ncu_csv

from ncu_roofline.errors import InputError
from ncu_roofline.knowledge import units
from ncu_roofline.readers import Metric, RawKernel, RawReport, read_report
from ncu_roofline.readers.csv_export import is_metric_column, parse_triple, read_csv_export
from ncu_roofline.readers.csv_impossible import cannot_be_negative, parse_value

REPORTS = Path(__file__).resolve().parents[1].parent / "shared" / "reports"
needs_corpus = pytest.mark.skipif(
    not REPORTS.is_dir(), reason=f"shared report corpus not found at {REPORTS}"
)

HEADER = (
    '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size",'
    '"Grid Size","Device","CC","device__attribute_display_name","dram__bytes_read.sum",'
    '"gpu__time_duration.sum","dram__throughput.avg.pct_of_peak_sustained_elapsed",'
    '"sm__cycles_elapsed.avg.per_second","dram__bytes_write.sum.per_second",'
    '"launch__func_cache_config","sm__inst_executed.sum","inst_executed"\n'
)
UNITS = (
    '"","","","","","","","","","","","","Kbyte","usecond","%","Ghz","Tbyte/second","","inst",'
    '"inst"\n'
)
ROW0 = (
    '"0","4242","app","node1","gemm_kernel","1","7","(256, 1, 1)","(128, 64, 1)","0","9.0",'
    '"NVIDIA H100 PCIe","10,240,000","1,234.5678","87.5","1.75","1.2","CachePreferNone","n/a",'
    '"4,096"\n'
)
ROW1 = (
    '"1","4242","app","node1","void scale<float>(float*, int)","1","13","(32,32,1)","(4,1,1)",'
    '"0","9.0","NVIDIA H100 PCIe","0.5","12.25","n/a","1.755","","CachePreferNone",'
    '"123,456,789","nan"\n'
)
PREAMBLE = (
    "==PROF== Connected to process 4242 (/home/u/app)\n"
    "==WARNING== Found outstanding GPU clock reset, trying to revert...Success.\n"
    '==PROF== Profiling "gemm_kernel" - 0: 0%....50%....100% - 9 passes\n'
    "==PROF== Disconnected from process 4242\n"
)
SAMPLE = PREAMBLE + HEADER + UNITS + ROW0 + ROW1

LFS_POINTER = (
    "version https://git-lfs.github.com/spec/v1\n"
    "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
    "size 1506769\n"
)


def _write(tmp_path: Path, text: str | bytes, name: str = "export.csv") -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8", newline="")
    return path


def _raises(path: Path, *phrases: str) -> InputError:
    with pytest.raises(InputError) as info:
        read_report(path)
    message = str(info.value)
    assert str(path) in message
    for phrase in phrases:
        assert phrase in message, message
    return info.value


# --------------------------------------------------------------------------- format rules


def test_sample_identity_and_preamble(tmp_path: Path) -> None:
    path = _write(tmp_path, SAMPLE)
    report = read_report(path)
    assert isinstance(report, RawReport)
    assert report.path == str(path)
    assert report.source_format == "csv"
    assert report.ncu_version is None
    assert report.warnings == ["Found outstanding GPU clock reset, trying to revert...Success."]
    assert len(report.kernels) == 2
    k0, k1 = report.kernels
    assert isinstance(k0, RawKernel)
    assert (k0.index, k1.index) == (0, 1)
    assert k0.name == k0.demangled_name == "gemm_kernel"
    assert k1.name == k1.demangled_name == "void scale<float>(float*, int)"
    assert (k0.process_name, k0.host_name) == ("app", "node1")
    assert (k0.stream_id, k1.stream_id) == (7, 13)
    assert (k0.block_size, k0.grid_size) == ((256, 1, 1), (128, 64, 1))
    assert (k1.block_size, k1.grid_size) == ((32, 32, 1), (4, 1, 1))
    # Device "0" is the ordinal ncu writes; the name comes from the display-name metric.
    assert k0.device == k1.device == "NVIDIA H100 PCIe"
    assert k0.compute_capability == "9.0"


def test_sample_metric_values_and_units_as_written(tmp_path: Path) -> None:
    k0, k1 = read_report(_write(tmp_path, SAMPLE)).kernels
    assert k0.metrics["dram__bytes_read.sum"] == Metric(10240000.0, "Kbyte")
    assert k0.metrics["gpu__time_duration.sum"] == Metric(1234.5678, "usecond")
    assert k0.metrics["dram__throughput.avg.pct_of_peak_sustained_elapsed"] == Metric(87.5, "%")
    assert k0.metrics["sm__cycles_elapsed.avg.per_second"] == Metric(1.75, "Ghz")
    assert k0.metrics["dram__bytes_write.sum.per_second"] == Metric(1.2, "Tbyte/second")
    assert k0.metrics["launch__func_cache_config"] == Metric("CachePreferNone", "")
    assert k0.metrics["device__attribute_display_name"] == Metric("NVIDIA H100 PCIe", "")
    assert k0.metrics["inst_executed"] == Metric(4096.0, "inst")  # a metric without `__`
    assert "sm__inst_executed.sum" not in k0.metrics  # n/a
    assert k1.metrics["sm__inst_executed.sum"] == Metric(123456789.0, "inst")
    assert "dram__throughput.avg.pct_of_peak_sustained_elapsed" not in k1.metrics  # n/a
    assert "dram__bytes_write.sum.per_second" not in k1.metrics  # empty cell
    assert k1.metrics["inst_executed"].is_nan
    assert k1.number("inst_executed") is None
    assert k1.metrics["dram__bytes_read.sum"] == Metric(0.5, "Kbyte")
    # Conversion happens later, from the unit as written.
    assert units.to_si(10240000.0, "Kbyte") == 1.024e10
    assert math.isclose(units.to_si(1234.5678, "usecond"), 1.2345678e-3, rel_tol=1e-15)
    assert units.to_si(1.2, "Tbyte/second") == 1.2e12
    assert set(k0.metrics) == {
        "device__attribute_display_name", "dram__bytes_read.sum", "gpu__time_duration.sum",
        "dram__throughput.avg.pct_of_peak_sustained_elapsed",
        "sm__cycles_elapsed.avg.per_second", "dram__bytes_write.sum.per_second",
        "launch__func_cache_config", "inst_executed",
    }


def test_identity_columns_win_over_metrics_and_name_columns(tmp_path: Path) -> None:
    text = (
        '"ID","Kernel Name","Function Name","Demangled Name","Mangled Name","Kernel Time",'
        '"Device","CC","device__attribute_display_name",'
        '"device__attribute_compute_capability_major","device__attribute_compute_capability_minor",'
        '"launch__grid_dim_x","launch__grid_dim_y","launch__grid_dim_z","launch__stream_id"\n'
        '"","","","","","","","","","","","","","",""\n'
        '"5","void k<2>(int)","k","void k<2>(int)","_Z1kILi2EEvi","2024-Jan-01 10:00:00",'
        '"Tesla T4","7.5","ignored","8","0","2","3","4","9"\n'
    )
    report = read_report(_write(tmp_path, text))
    (k,) = report.kernels
    assert k.index == 5
    assert (k.name, k.demangled_name, k.mangled_name) == ("k", "void k<2>(int)", "_Z1kILi2EEvi")
    assert (k.device, k.compute_capability) == ("Tesla T4", "7.5")
    assert k.grid_size == (2, 3, 4)  # no Grid Size column: taken from the launch__ metrics
    assert k.block_size is None
    assert k.stream_id == 9
    assert "Kernel Time" not in k.metrics


def test_cc_and_device_from_metrics_when_columns_are_absent(tmp_path: Path) -> None:
    text = (
        '"ID","Kernel Name","device__attribute_compute_capability_major",'
        '"device__attribute_compute_capability_minor","dram__bytes_read.sum"\n'
        '"","","","","byte"\n'
        '"0","k","8","6","1,000"\n'
    )
    (k,) = read_report(_write(tmp_path, text)).kernels
    assert k.compute_capability == "8.6"
    assert k.device is None
    assert k.metrics["dram__bytes_read.sum"] == Metric(1000.0, "byte")


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        ("10,240,000", 10240000.0),
        ("1,234.5", 1234.5),
        ("-1,234.5", -1234.5),
        ("0.5", 0.5),
        (".5", 0.5),
        ("12", 12.0),
        ("2.339232191525328e-09", 2.339232191525328e-09),
        ("1E+20", 1e20),
        (" 42 ", 42.0),
        ("inf", math.inf),
        ("-inf", -math.inf),
        ("n/a", None),
        ("N/A", None),
        ("", None),
        ("CachePreferNone", "CachePreferNone"),
        ("dram__bytes_read.sum,dram__bytes_write.sum", "dram__bytes_read.sum,dram__bytes_write.sum"),
        ("1,23", "1,23"),
        ("(256, 1, 1)", "(256, 1, 1)"),
    ],
)
def test_parse_value(cell: str, expected: float | str | None) -> None:
    assert parse_value(cell) == expected


def test_parse_value_nan() -> None:
    for cell in ("nan", "-nan", "NaN"):
        value = parse_value(cell)
        assert isinstance(value, float) and math.isnan(value)


def test_parse_triple_and_column_kinds() -> None:
    assert parse_triple("(256, 1, 1)") == (256, 1, 1)
    assert parse_triple("(32,32,1)") == (32, 32, 1)
    assert parse_triple("") is None
    assert parse_triple("n/a") is None
    for name in ("ID", "Process ID", "Kernel Name", "CC", "Device", "Estimated Speedup", ""):
        assert not is_metric_column(name)
    for name in ("dram__bytes_read.sum", "inst_executed", "derived_tempMetric0",
                 "group:memory__chart", "regex:^(?=.*l1tex)(?!.*mem).*.sum$"):
        assert is_metric_column(name)


def test_format_number_round_trips() -> None:
    assert format_number(1234.5678) == "1,234.5678"
    assert format_number(1024.0) == "1,024"
    assert format_number(-1234567.25) == "-1,234,567.25"
    assert format_number(1024.0, thousands=False) == "1024"
    assert format_number(math.nan) == "nan"
    for value in (1234.5678, 8450157065088758.0, 2.339232191525328e-09, 1e20, 0.1, 999.9999):
        assert parse_value(format_number(value)) == value


def test_program_output_before_header_is_skipped(tmp_path: Path) -> None:
    text = "device: NVIDIA GeForce RTX 4090\nresult ok\n" + HEADER + UNITS + ROW0
    report = read_report(_write(tmp_path, text, "run.txt"))  # no .csv suffix: sniffed
    assert len(report.kernels) == 1
    assert any("skipped 2 line(s)" in w for w in report.warnings)


def test_crlf_bom_and_trailing_prof_lines(tmp_path: Path) -> None:
    text = (HEADER + UNITS + ROW0 + "==PROF== Disconnected from process 4242\n").replace("\n", "\r\n")
    path = _write(tmp_path, b"\xef\xbb\xbf" + text.encode())
    (k,) = read_report(path).kernels
    assert k.metrics["gpu__time_duration.sum"] == Metric(1234.5678, "usecond")


@pytest.mark.parametrize("eol", ["\n", "\r\n", "\r"])
def test_line_endings_split_as_open_with_newline_empty_does(tmp_path: Path, eol: str) -> None:
    # A quoted cell may hold a line break; the line splitter must hand csv.reader whole lines.
    text = (HEADER + UNITS + ROW0).replace("\n", eol) + "==PROF== done" + eol
    (k,) = read_report(_write(tmp_path, text.encode())).kernels
    assert k.metrics["gpu__time_duration.sum"] == Metric(1234.5678, "usecond")


@pytest.mark.parametrize("eol", ["\n", "\r"])
def test_a_cell_longer_than_csv_readers_default_limit_is_read_whole(tmp_path: Path, eol: str) -> None:
    """A row csv.reader reads (an escaped quote in a cell, or lines that end at a bare CR) may hold a cell of more
    than 131,072 characters, csv's default field limit: a demangled name of heavily templated code. It is read."""
    name = 'void k<"x">(' + "int, " * 40_000 + "int)"
    text = (HEADER + UNITS + ROW0.replace('"gemm_kernel"', '"' + name.replace('"', '""') + '"')).replace("\n", eol)
    (k,) = read_report(_write(tmp_path, text.encode())).kernels
    assert k.name == name and len(name) > 131_072
    assert k.metrics["gpu__time_duration.sum"] == Metric(1234.5678, "usecond")


@pytest.mark.parametrize("eol", [b"\n", b"\r"])
def test_lines_are_read_as_they_are_needed_whatever_their_ends(tmp_path: Path, eol: bytes) -> None:
    """A 6 MB file of short lines: its first line comes after reading a small part of it, LF or bare CR
    (a CR-only file, as old Mac tools write, is not one 6 MB line held whole)."""
    from ncu_roofline.readers.csv_text import TextLines

    path = tmp_path / "long.csv"
    path.write_bytes(eol.join(b'"%d","x"' % i for i in range(600_000)) + eol)
    lines = TextLines(path, [])
    it = iter(lines)
    assert next(it) == '"0","x"' + eol.decode()
    assert next(it) == '"1","x"' + eol.decode()
    read = lines._open.buffer.tell() if hasattr(lines._open, "buffer") else lines._open.tell()
    assert read <= 2 << 20 < path.stat().st_size  # a read buffer's worth, not the whole file
    lines.close()


def test_utf16_export(tmp_path: Path) -> None:
    path = _write(tmp_path, (HEADER + UNITS + ROW0).encode("utf-16"))
    (k,) = read_report(path).kernels
    assert k.name == "gemm_kernel"


def test_non_utf8_text_is_read_with_a_warning(tmp_path: Path) -> None:
    data = (HEADER + UNITS + ROW0).replace("gemm_kernel", "gemm_k\xe9rnel").encode("latin-1")
    report = read_report(_write(tmp_path, data))
    assert report.kernels[0].name == "gemm_k\ufffdrnel"
    assert any("not valid UTF-8" in w for w in report.warnings)


def test_csv_named_ncu_rep_is_read_as_csv(tmp_path: Path) -> None:
    report = read_report(_write(tmp_path, SAMPLE, "export.ncu-rep"))
    assert report.source_format == "csv"
    assert len(report.kernels) == 2
    assert any("holds an ncu CSV export" in w for w in report.warnings)


def test_duplicate_ids_fall_back_to_row_numbers(tmp_path: Path) -> None:
    report = read_report(_write(tmp_path, HEADER + UNITS + ROW0 + ROW0))
    assert [k.index for k in report.kernels] == [0, 1]
    assert any("numbered by row" in w for w in report.warnings)


def test_read_csv_export_directly(tmp_path: Path) -> None:
    report = read_csv_export(_write(tmp_path, SAMPLE, "raw.CSV"))
    assert [k.name for k in report.kernels] == ["gemm_kernel", "void scale<float>(float*, int)"]


# --------------------------------------------------------------------------- bad input


def test_empty_file(tmp_path: Path) -> None:
    _raises(_write(tmp_path, ""), "empty")


def test_blank_lines_only(tmp_path: Path) -> None:
    _raises(_write(tmp_path, "\n\n  \n"), "blank")


def test_header_only(tmp_path: Path) -> None:
    _raises(_write(tmp_path, PREAMBLE + HEADER), "no units row", "0 kernels")


def test_header_and_units_without_rows(tmp_path: Path) -> None:
    _raises(_write(tmp_path, PREAMBLE + HEADER + UNITS), "0 kernels")


def test_missing_units_row(tmp_path: Path) -> None:
    _raises(_write(tmp_path, HEADER + ROW0 + ROW1), "line 2", "no units row")


def test_ragged_last_row_is_truncated(tmp_path: Path) -> None:
    cut = ROW1[: ROW1.index('"12.25"')] + "\n"
    _raises(_write(tmp_path, PREAMBLE + HEADER + UNITS + ROW0 + cut), "line 8", "truncated")


def test_ragged_middle_row(tmp_path: Path) -> None:
    _raises(_write(tmp_path, HEADER + UNITS + '"0","x"\n' + ROW1), "line 3", "has 2 field(s)")


def test_cut_inside_last_quoted_value(tmp_path: Path) -> None:
    _raises(_write(tmp_path, HEADER + UNITS + ROW0[: ROW0.rindex("096")]), "line 3", "truncated")


def test_no_header(tmp_path: Path) -> None:
    text = "==PROF== Connected to process 1\n==ERROR== The application returned an error code (1).\n"
    _raises(_write(tmp_path, text), "no CSV header", "The application returned an error code")


def test_binary_garbage(tmp_path: Path) -> None:
    garbage = bytes(range(256)) * 8
    _raises(_write(tmp_path, garbage, "garbage.csv"), "not a CSV text file")
    _raises(_write(tmp_path, garbage, "garbage.bin"), "unrecognised content")
    _raises(_write(tmp_path, b"hello world\n", "notes.txt"), "unrecognised content")


def test_report_named_csv(tmp_path: Path) -> None:
    _raises(_write(tmp_path, b"NVR\x00" + bytes(100), "r.csv"), "Nsight Compute report", ".ncu-rep")


def test_details_page(tmp_path: Path) -> None:
    text = (
        '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream",'
        '"Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit",'
        '"Metric Value"\n'
        '"0","1","p","h","k","1","7","(256, 1, 1)","(4, 1, 1)","0","8.6",'
        '"GPU Speed Of Light Throughput","DRAM Frequency","Ghz","6.79"\n'
    )
    _raises(_write(tmp_path, text), "--page details", "--page raw",
            "ncu --import FILE.ncu-rep --csv --page raw")


def test_metric_labels_instead_of_names(tmp_path: Path) -> None:
    text = '"ID","Kernel Name","DRAM Frequency","Duration"\n"","","Ghz","usecond"\n"0","k","6.79","1.5"\n'
    _raises(_write(tmp_path, text), "no metric columns")


def test_directory(tmp_path: Path) -> None:
    _raises(tmp_path, "is a directory")


def test_missing_path(tmp_path: Path) -> None:
    _raises(tmp_path / "nope.ncu-rep", "no such file")
    _raises(tmp_path / "nope.csv", "no such file")


@pytest.mark.parametrize("name", ["x.csv", "x.ncu-rep", "x"])
def test_git_lfs_pointer(tmp_path: Path, name: str) -> None:
    _raises(_write(tmp_path, LFS_POINTER, name), "Git LFS pointer", "git lfs pull")


# --------------------------------------------------------------------------- shared corpus

PARITY_FILES = [
    "gpu-workshop__MW_Baseline.ncu-rep",
    "cudaprogramming__smemTranspose.ncu-rep",
    "cs599k__2025-04-21-v1.ncu-rep",
    "pmkid-brute-force__profile.nsight-cuprof-report",
    "bad/real_all-metrics-NaN__self-join-mistic__profileHIGGS.out.ncu-rep",
]
SCALED_UNITS = {
    "nsecond", "usecond", "msecond", "second", "Kbyte", "Mbyte", "Gbyte", "Tbyte",
    "Kbyte/second", "Mbyte/second", "Gbyte/second", "Tbyte/second", "Khz", "Mhz", "Ghz",
}


@cache
def _corpus_report(name: str) -> RawReport:
    return read_report(REPORTS / name)


def _expected_metrics(kernel: RawKernel) -> dict[str, Metric]:
    """What a CSV export can carry: every metric except empty or missing strings, and except the
    negative counts and shares the CSV reader leaves out as impossible (a share Nsight Compute writes
    a little below zero, -0.07 % for a `.min` tensor-pipe share on Hopper, is kept)."""
    return {
        name: m for name, m in kernel.metrics.items()
        if (m.is_number and not (float(m.value) < 0 and cannot_be_negative(name)
                                 and not ("pct" in name and float(m.value) >= -1.0)))
        or (isinstance(m.value, str) and m.value.strip())
    }


@needs_corpus
@pytest.mark.parametrize("name", PARITY_FILES)
@pytest.mark.parametrize(
    ("autoscale", "thousands"), [(True, True), (False, True), (True, False)]
)
def test_csv_parity_with_report(tmp_path: Path, name: str, autoscale: bool, thousands: bool) -> None:
    report = _corpus_report(name)
    path = write_ncu_csv(report, tmp_path / "export.csv", autoscale=autoscale, thousands=thousands)
    back = read_report(path)
    assert back.source_format == "csv"
    assert len(back.kernels) == len(report.kernels)
    written_units: set[str] = set()
    for a, b in zip(report.kernels, back.kernels, strict=False):
        assert b.index == a.index
        assert b.name == a.name
        assert b.device == a.device
        assert b.compute_capability == a.compute_capability
        assert b.grid_size == a.grid_size
        assert b.block_size == a.block_size
        assert b.stream_id == a.stream_id
        assert b.sm_count == a.sm_count
        expected = _expected_metrics(a)
        assert set(b.metrics) == set(expected)
        for metric_name, want in expected.items():
            got = b.metrics[metric_name]
            written_units.add(got.unit)
            if not want.is_number:
                if isinstance(parse_value(str(want.value)), str):
                    assert got == Metric(str(want.value).strip(), want.unit), metric_name
                continue
            assert got.is_number, metric_name
            if want.is_nan:
                assert got.is_nan, metric_name
                continue
            if not autoscale:
                assert got == want, metric_name
            want_si = units.to_si(float(want.value), want.unit)
            got_si = units.to_si(float(got.value), got.unit)
            assert math.isclose(got_si, want_si, rel_tol=1e-9, abs_tol=0.0), (
                metric_name, want, got,
            )
    if autoscale and "pmkid" not in name and "NaN" not in name:
        assert written_units & SCALED_UNITS - {"second", "nsecond"}  # prefixes were really used


@needs_corpus
@pytest.mark.parametrize(
    ("name", "phrases"),
    [
        ("synthetic_empty.ncu-rep", ("empty",)),
        ("synthetic_git-lfs-pointer.ncu-rep", ("Git LFS pointer", "git lfs pull")),
        ("synthetic_bad-magic__nsight-training__CuVectorAddDrv.ncu-rep",
         ("not an Nsight Compute report",)),
        ("synthetic_truncated-64B__nsight-training__CuVectorAddDrv.ncu-rep", ("truncated",)),
    ],
)
def test_bad_corpus_files(name: str, phrases: tuple[str, ...]) -> None:
    _raises(REPORTS / "bad" / name, *phrases)


@needs_corpus
@pytest.mark.parametrize(
    "name",
    [
        "real_all-metrics-NaN__self-join-mistic__profileHIGGS.out.ncu-rep",
        "real_all-metrics-NaN__self-join-mistic__profileMSDKT5.out.ncu-rep",
    ],
)
def test_all_nan_reports_load(name: str) -> None:
    report = read_report(REPORTS / "bad" / name)
    assert report.source_format == "ncu-rep"
    assert len(report.kernels) == 1
    (kernel,) = report.kernels
    assert kernel.metrics["gpu__time_duration.sum"].is_nan
    assert kernel.number("gpu__time_duration.sum") is None


def test_row_metrics_parse_on_demand_and_agree_as_a_mapping() -> None:
    from ncu_roofline.readers.csv_rows import RowMetrics

    columns = {"a__x.sum": (0, "byte"), "b__y.sum": (1, ""), "c__z.avg": (2, "%"), "d__w.sum": (3, ""),
               "e__v.sum": (4, "")}
    row = ["1,024", "", " n/A ", "nan", "text"]
    m = RowMetrics(row, columns)
    assert m["a__x.sum"] == Metric(1024.0, "byte")
    assert "b__y.sum" not in m and "c__z.avg" not in m and m.get("b__y.sum") is None
    assert m["d__w.sum"].is_nan and m["e__v.sum"].value == "text"
    assert list(m) == ["a__x.sum", "d__w.sum", "e__v.sum"] and len(m) == 3
    assert {n: m[n] for n in m}  # every name it lists can be read
    m.drop("a__x.sum")
    assert "a__x.sum" not in m and list(m) == ["d__w.sum", "e__v.sum"]
    with pytest.raises(KeyError):
        m["zz__unknown.sum"]


_TRICKY_CELLS = ["", " ", "n/a", " N/A ", "1,024", "1,23", " 1.5 ", "1_000", "\u0661\u0662", "nan", "-nan", "inf",
                 "-inf", "Infinity", "+-", "1e5e", ".5", "-3", "1E+20", "text", "0x10", "5.", "-1,234.5",
                 "12,345,678", "1234,567", "1,234,", " 1,234", "1,234 ", "1,234e", "1,234.5e3", "+1,234E+2",
                 ".5,000", "1e3,000", "1,234.", "a\x00b"]


def _hot_and_cold(header: list[str], first: list[str]):
    from ncu_roofline.readers.csv_rows import Columns, RowMetrics

    hot = Columns((name, (i, "byte" if i % 2 else "")) for i, name in enumerate(header))
    cold = Columns(hot.items())
    learnt = RowMetrics(first, hot)
    for name in header[:-1]:  # the last column is never read, so never learnt
        learnt.get(name)
    hot.learn_hot(learnt)
    return hot, cold, RowMetrics


def test_hot_columns_parse_every_cell_as_a_read_on_demand_does() -> None:
    """The columns learnt from the first row are parsed at once in later rows: each value, its kind and
    its absence must be exactly what a read on demand gives, cell by cell (a seeded mix of the cells a
    hand-edited export holds), and a column not learnt is still read on demand."""
    import random

    header = [f"u{i}__m.sum" for i in range(12)]
    hot, cold, row_metrics = _hot_and_cold(header, [str(float(i)) for i in range(12)])
    assert hot.hot is not None and hot.hot.names == tuple(header[:-1])
    rng = random.Random(7)
    rows = [[str(rng.random() * 10 ** rng.randint(-9, 12)) for _ in header] for _ in range(20)]  # all numbers
    rows += [[rng.choice(_TRICKY_CELLS + ["2.5"] * 10) for _ in header] for _ in range(300)]
    fast = 0
    for row in rows:
        a, b = row_metrics(row, hot), row_metrics(row, cold)
        fast += list(a.hot_values) == header[:-1] and all(type(v) is float for v in a.hot_values.values())
        for name in header:
            got, want = a.get(name), b.get(name)
            if want is not None and isinstance(want.value, float) and want.value != want.value:
                assert got is not None and got.value != got.value and got.unit == want.unit
            else:
                assert got == want and type(got) is type(want), (name, row[header.index(name)])
                if want is not None:
                    assert type(got.value) is type(want.value)
        assert list(a) == list(b) and len(a) == len(b)
    assert fast >= 20  # the all-number rows took the one-loop path


@pytest.mark.parametrize("arrow_from", [0, 10**9], ids=["arrow", "float"])
def test_a_block_of_rows_reads_as_each_row_does(monkeypatch, arrow_from: int) -> None:
    """Runs of all-quoted rows are read as one block (one quote search, the number columns of every row
    cut and parsed at once): each row's cells, values, kinds and absences must be exactly what the row
    read on its own gives (a seeded mix of plain, grouped and tricky cells, in blocks of every size), whichever
    converts the cells, Arrow or `float`."""
    import random

    from ncu_roofline.readers import csv_numbers
    from ncu_roofline.readers.csv_cells import plain_row, quoted_block

    monkeypatch.setattr(csv_numbers, "ARROW_FROM", arrow_from)

    header = [f"u{i}__m.sum" for i in range(12)]
    hot, cold, row_metrics = _hot_and_cold(header, [str(float(i)) for i in range(12)])
    rng = random.Random(5)
    grouped = ["1,024", "12,345,678", "-1,234.5", "+1,234E+2", "1,234.5e3", "2.5", "7", "1e-05"]
    tricky = [c for c in _TRICKY_CELLS if "\x00" not in c]
    whole = 0
    for _ in range(150):
        pool = grouped if rng.random() < 0.6 else grouped + tricky
        rows = [[rng.choice(pool) for _ in header] for _ in range(rng.randint(2, 9))]
        lines = ['"' + '","'.join(r) + '"' + rng.choice(["\n", "\r\n"]) for r in rows]
        lines = [line for line in lines if plain_row(line.encode())]
        if len(lines) < 2:
            continue
        block = quoted_block([line.encode() for line in lines])  # the lines `TextLines.take_rows` reads
        assert len(block) == len(lines)
        for line, row in zip(lines, block, strict=True):
            alone = next(csv.reader([line]))  # the row read alone
            assert [row[i] for i in (0, -1)] == [alone[i] for i in (0, -1)]
            assert row == alone and list(row) == list(alone)
            a, b = row_metrics(row, hot), row_metrics(alone, cold)
            for name in header:
                got, want = a.get(name), b.get(name)
                if want is not None and isinstance(want.value, float) and want.value != want.value:
                    assert got is not None and got.value != got.value and got.unit == want.unit
                else:
                    assert got == want and type(got) is type(want), (name, list(alone))
            assert list(a) == list(b)
        parsed = block[0].block.parsed if block[0].block is not None else None
        whole += sum(values is not None for values in parsed[1]) if parsed else 0
    assert whole >= 300  # rows of numbers took the block's one-pass reading


@pytest.mark.parametrize("chunk", [None, 8])
def test_plain_rows_taken_at_once_are_the_lines_the_iteration_gives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   chunk: int | None) -> None:
    """`TextLines.take_rows` hands the next all-quoted UTF-8 rows (a row in another script too), counted as
    the iteration counts them, and leaves the first other line (a marker, a row that is not UTF-8, a bare CR, a quoted
    line break, a blank line, a last line without its end) to the iteration: taking and iterating in turns gives every
    line the iteration alone gives, on the same line numbers. So it does where what it reads at once is shorter than a
    line (`chunk`: a longer line is read whole, one longer than the largest read is left to the iteration)."""
    from ncu_roofline.readers import csv_text
    from ncu_roofline.readers.csv_text import TextLines

    if chunk is not None:
        monkeypatch.setattr(csv_text, "_FIRST_CHUNK", chunk)
        monkeypatch.setattr(csv_text, "_LARGEST_CHUNK", 4 * chunk)  # a line of 44 bytes is longer
    text = (b'"ID","Kernel Name"\n"","x"\n"0","a"\n"1","b"\r\n"2","c"\n==PROF== marker\n"3","d"\n"4","\xc3\xa9"\n'
            b'"4b","\xff"\n"5","e"\n"6","f"\r"7","g"\n"8","h"\n"9","i\nj"\n"10","k"\n\n"11","l"\n'
            b'"12","a line longer than the largest read"\n"13","m"\n"14","last"')
    path = _write(tmp_path, text)
    alone = TextLines(path, [])
    expected = [(alone.line_no, line) for line in alone]
    mixed = TextLines(path, [])
    lines = iter(mixed)
    header = next(lines)  # nothing is taken before the first line
    got = [(mixed.line_no, header)]
    taking = True
    while True:
        taken = mixed.take_rows(2) if taking else []
        if taken:
            first = mixed.line_no - len(taken) + 1
            got += [(first + k, row.line().decode()) for k, row in enumerate(taken)]
        else:
            line = next(lines, None)
            if line is None:
                break
            got.append((mixed.line_no, line))
        taking = not taking
    assert got == expected
    assert (mixed.last_line, mixed.last_text, [m.text for m in mixed.markers]) == (
        alone.last_line, alone.last_text, [m.text for m in alone.markers])
    greedy = TextLines(path, [])
    lines, taken_all = iter(greedy), []
    while next(lines, None) is not None:  # a line left to the iteration, then all that can be taken
        taken_all += [row.line() for row in greedy.take_rows(100)]
    assert b'"4","\xc3\xa9"\n' in taken_all and b'"4b","\xff"\n' not in taken_all  # taken where it is UTF-8


@pytest.mark.parametrize("bad", ['"{i}","k""q{pad}"\n', '"{i}","\xff{pad}"\n'])
def test_rows_a_block_cannot_take_are_not_read_many_times_over(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               bad: str) -> None:
    """Rows that open with a quote but no block takes (an escaped quote, a byte that is not UTF-8), every one of
    them or every other one, of one length or of three: `take_rows` checks the first line on its own before it reads
    more, and leaves the rows read with one a block cannot start at to the iteration, so the file is read a few
    times at most, not a chunk of 64 rows for every line."""
    from ncu_roofline.readers import csv_text
    from ncu_roofline.readers.csv_text import TextLines

    read: list[int] = []
    real = csv_text._line_ends  # (what is read at once is scanned for its lines)
    monkeypatch.setattr(csv_text, "_line_ends", lambda data, limit: read.append(len(data)) or real(data, limit))
    for every, pad in ((1, 0), (2, 0), (1, 90)):
        rows = [bad.format(i=i, pad="x" * (i % 3 * pad)) if i % every == 0 else f'"{i}","ok"\n' for i in range(30000)]
        data = ('"ID","Kernel Name"\n' + "".join(rows)).encode("latin-1")
        lines = TextLines(_write(tmp_path, data, f"every{every}_{pad}.csv"), [])
        source, count = iter(lines), 0
        read.clear()
        while True:
            count += len(lines.take_rows(64))
            if next(source, None) is None:
                break
            count += 1
        assert count == 30001 and sum(read) < 4 * len(data)  # (about a line, then two, of 12 bytes at a time)


@pytest.mark.parametrize("cut", ["header", "middle"])
def test_lines_cut_at_bare_crs_keep_their_place_among_rows_taken_at_once(tmp_path: Path, cut: str) -> None:
    """A line holding bare CRs is cut into lines that the iteration hands out one by one: no row is taken from the
    file at once (`TextLines.take_rows`) before the last of them, so the rows keep their order and line numbers."""
    rows = [ROW0.replace('"0"', f'"{i}"', 1) for i in range(2, 8)]
    lf = HEADER + UNITS + ROW0 + ROW1 + "".join(rows)
    if cut == "header":
        text = HEADER[:-1] + "\r" + UNITS[:-1] + "\r" + ROW0 + ROW1 + "".join(rows)
    else:
        text = HEADER + UNITS + ROW0[:-1] + "\r" + ROW1[:-1] + "\r" + "".join(rows)
    expected = read_report(_write(tmp_path, lf, "lf.csv")).kernels
    got = read_report(_write(tmp_path, text, "cr.csv")).kernels
    assert [(k.index, k.name) for k in got] == [(k.index, k.name) for k in expected] and len(got) == 8
    broken = text + '"8","4242"\n"9"' + ROW1[3:]  # a short row: its line number is the file's
    _raises(_write(tmp_path, broken, "short.csv"), f"line {broken.replace(chr(13), chr(10)).count(chr(10)) - 1} has")


def test_a_block_stops_at_the_first_row_that_is_not_all_quoted_at_its_width() -> None:
    from ncu_roofline.readers.csv_cells import plain_row, quoted_block

    row = b'"1","2","3"\n'
    assert len(quoted_block([row, row, b'"1","2"\n', row])) == 2  # another width
    assert len(quoted_block([row, b'"1","2"x","3"\n', row])) == 1  # a quote of a cell's own
    assert len(quoted_block([row, b'"1", "2","3"\n'])) == 1  # a blank between two cells
    assert quoted_block([b'"1","2""\n', row]) == []  # an odd number of quotes
    assert len(quoted_block([row, b'"1","\x002","3"\n', row])) == 1  # a NUL: csv.reader decides
    assert not plain_row(b'x"1","2","3"\n') and not plain_row(b'"1","2\r","3"\n')  # not taken as such at all
    assert plain_row('"1","\u00e9"\n'.encode()) and not plain_row(b'"1","\xff"\n')  # UTF-8 or not
    assert plain_row(b'"1","2"\r\n')
    block = quoted_block([row] * 3)
    assert [list(r) for r in block] == [["1", "2", "3"]] * 3 and block[0].block is not None


def test_a_row_of_a_block_kept_long_holds_its_own_line_not_the_blocks_text() -> None:
    """The rows of a block share the text read (no line copied each); `own` gives a row a copy of its line alone,
    from which it reads as before."""
    from ncu_roofline.readers.csv_cells import quote_numbers, quoted_block

    rows = quoted_block([b'"a","bc",""\r\n', b'"d","","e,f"\n', b'"g","h","i"\n'])
    assert rows[0]._text is rows[1]._text and len(rows[1]._text) == 38
    rows[0].block.release()
    rows[1].own()
    assert rows[1]._text == b'"d","","e,f"\n' and rows[1].line() == rows[1]._text and rows[1].text_length() == 13
    assert [rows[1][i] for i in range(3)] == ["d", "", "e,f"] and rows[1].pick(*quote_numbers([2])) == ["e,f"]
    assert rows[2].cells() == ["g", "h", "i"] and rows[0][1] == "bc"


def test_a_block_gives_a_cell_every_row_holds_alike_and_none_for_one_that_differs() -> None:
    """`RowBlock.same_cells`: the same text in every row, not a longer one that starts alike, not one of the same
    length that differs (in its first or last character)."""
    from ncu_roofline.readers.csv_cells import quote_numbers, quoted_block

    rows = quoted_block([b'"1","ab,cd","x","pq","a"\n', b'"2","ab,cd","xy","pr","a"\n',
                         b'"3","ab,cd","x","pq","b"\n'])
    block = rows[0].block
    assert block.same_cells(*quote_numbers([1, 2, 3, 4, 0])) == ["ab,cd", None, None, None, None]
    assert block.same_cells(*quote_numbers([1, 3])) == ["ab,cd", None]
    same = quoted_block([b'"1",""\n', b'"2",""\n'])[0].block
    assert same.same_cells(*quote_numbers([1])) == [""]


def test_a_row_of_a_block_reads_each_cell_on_its_own_once_the_block_let_its_text_go() -> None:
    """A block's row finds its quotes in its own line when a cell is read alone: after the block's text is gone too,
    whichever line end it has."""
    from ncu_roofline.readers.csv_cells import quote_numbers, quoted_block

    rows = quoted_block([b'"a","bc",""\r\n', b'"d","","e,f"\n', b'"","x","y"\r'])
    rows[0].block.release()
    assert [rows[1][i] for i in range(3)] == ["d", "", "e,f"] and rows[0][-1] == "" and rows[0][1] == "bc"
    assert rows[2].pick(*quote_numbers([2, 0])) == ["y", ""] and rows[2].cells() == ["", "x", "y"]
    assert [len(r) for r in rows] == [3, 3, 3] and rows[0].cells() == ["a", "bc", ""]
    with pytest.raises(IndexError):
        rows[1][3]


@pytest.mark.parametrize("arrow_from", [0, 10**9], ids=["arrow", "float"])
def test_rows_of_numbers_read_at_once_as_parse_value_reads_each_cell(monkeypatch, arrow_from: int) -> None:
    """A row is all numbers where `parse_value` reads each cell as a float and the cell holds only the characters of a
    number (digits, `.eE+-`, thousands commas); its values are `parse_value`'s, bit for bit (a seeded search over
    short cells, rows of three), whichever converts the cells, Arrow or `float`."""
    import random
    import struct

    from ncu_roofline.readers import csv_numbers
    from ncu_roofline.readers.csv_impossible import parse_value
    from ncu_roofline.readers.csv_numbers import row_numbers

    monkeypatch.setattr(csv_numbers, "ARROW_FROM", arrow_from)

    def plain(cell: str) -> float | None:
        value = parse_value(cell)
        return value if type(value) is float and cell and not cell.strip("0123456789.eE+-,") else None

    rng = random.Random(3)
    numbers = ["1", "12", "123", "4567", ",123", ",123", ",12", ",", ".5", ".", "e7", "E-3", "e400", "-", "+"]
    others = ["x", " ", "nan", "inf", "n/a", "", "1_0", "\u00e9", "e", "0x1"]

    def cell() -> str:
        if rng.random() < 0.7:  # a number as ncu writes one: grouped, plain, fraction, exponent
            value = rng.uniform(-1e7, 1e7) * 10.0 ** rng.randint(-30, 30)
            return rng.choice([f"{value:,.{rng.randint(0, 3)}f}", repr(value), f"{int(value):,}", f"{value:.3E}"])
        pieces = numbers if rng.random() < 0.8 else numbers + others
        return "".join(rng.choice(pieces) for _ in range(rng.randint(0, 4)))

    whole = 0
    for _ in range(8_000):
        row = [cell() for _ in range(3)]
        want = [plain(cell) for cell in row]
        matrix, rows = row_numbers(row)
        assert bool(rows[0]) == all(v is not None for v in want), row
        if rows[0]:
            whole += 1
            got = matrix[0].tolist()
            assert [struct.pack("d", v) for v in got] == [struct.pack("d", v) for v in want], row  # type: ignore[arg-type]
    assert whole > 300


def test_an_export_reads_the_same_without_pyarrow(tmp_path: Path, monkeypatch) -> None:
    """pyarrow converts a block's number cells; an environment without it (installed with `--no-deps`) reads the
    same values with `float`, and a small export never imports it."""
    import random

    from ncu_roofline.readers import csv_numbers

    rng = random.Random(11)
    header = ["ID", "Kernel Name", *(f"u{i}__m.sum" for i in range(40))]
    lines = [",".join(f'"{h}"' for h in header), ",".join(['""', '""'] + ['"byte"'] * 40)]
    for i in range(300):
        cells = [f"{rng.random() * 10 ** rng.randint(0, 9):,.{rng.randint(0, 3)}f}" for _ in range(40)]
        lines.append(",".join([f'"{i}"', '"k"', *(f'"{c}"' for c in cells)]))
    path = _write(tmp_path, "\n".join(lines) + "\n")

    def values() -> list[list[object]]:  # each read as the analysis reads it: the first kernel's names at once after
        from ncu_roofline.readers.csv_export import CsvExport

        return [[k.metrics[name].value for name in header[2:]] for k in CsvExport(path).kernels()]

    monkeypatch.setattr(csv_numbers, "ARROW_FROM", 0)
    with_arrow = values()
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # `import pyarrow` raises ImportError
    monkeypatch.setitem(sys.modules, "pyarrow.compute", None)
    monkeypatch.setattr(csv_numbers, "_arrow", None)
    assert values() == with_arrow and csv_numbers._arrow is False
    assert len(with_arrow) == 300 and all(len(v) == 40 for v in with_arrow)


def test_hot_columns_read_thousands_separators_in_one_pass(monkeypatch) -> None:
    """ncu writes "2,048": a row of grouped numbers still takes the one-pass reading (no cell is read
    alone), with each value what `parse_value` gives."""
    from ncu_roofline.readers import csv_rows

    header = [f"u{i}__m.sum" for i in range(6)]
    hot, cold, row_metrics = _hot_and_cold(header, [str(float(i)) for i in range(6)])
    row = ["2,048", "-1,234.5", "12,345,678", "7", "1,234.5e3", "9"]
    want = {n: row_metrics(row, cold).get(n) for n in header[:-1]}

    def cell_by_cell(cell: str, unit: str) -> None:
        raise AssertionError(f"{cell!r} read alone")

    monkeypatch.setattr(csv_rows, "_read_cell", cell_by_cell)
    values, metrics, impossible = hot.hot.parse(row)
    assert not metrics and values.tolist() == [2048.0, -1234.5, 12345678.0, 7.0, 1234.5e3]
    assert impossible == (("u1__m.sum", -1234.5),)  # a count cannot be negative: found in the same pass
    assert want["u1__m.sum"] is None  # and left out, as a read on demand leaves it out
    assert all(values[hot.hot.index[n]] == m.value for n, m in want.items() if m is not None)
    got = row_metrics(row, hot)
    assert {n: got.get(n) for n in header[:-1]} == want  # each a metric of the column's unit, made when asked


def test_hot_columns_are_learnt_from_the_first_kernel_of_an_export() -> None:
    from ncu_roofline.api.kernel import analyse_kernel
    from ncu_roofline.readers import open_report

    opened = open_report(SHIPPED)
    kernels = iter(opened.kernels)
    first = next(kernels)
    columns = first.metrics.possible_names
    assert getattr(columns, "hot", None) is None
    analyse_kernel(first)
    second = next(kernels)
    assert columns.hot is not None and "gpu__time_duration.sum" in columns.hot.names
    assert set(columns.hot.names) <= set(first.metrics.fetched())
    assert second.metrics.get("gpu__time_duration.sum") is not None
    opened.close()


def test_impossible_cells_finds_negative_numbers_and_text() -> None:
    from ncu_roofline.readers.csv_impossible import impossible_cells

    row = ["-5", " -1e3", "-nan", "-inf", "5", "-", "x-1", "n/a", "nan", "", "2,048", "0x10", "1.2.3", "e "]
    signed = [(i, f"m{i}") for i in range(len(row))]
    assert impossible_cells(row, signed) == [("m0", -5.0), ("m1", -1000.0), ("m3", -math.inf), ("m5", "-"),
                                             ("m6", "x-1"), ("m11", "0x10"), ("m12", "1.2.3"), ("m13", "e")]
    assert impossible_cells(["1", "1.2.3"], [(0, "m0"), (1, "m1")]) == [("m1", "1.2.3")]  # only number characters
    labels = [(i, f"breakdown:m{i}__x.avg.pct") for i in range(len(row))]  # lists of metrics, as text
    assert impossible_cells(row, labels) == [(labels[0][1], -5.0), (labels[1][1], -1000.0), (labels[3][1], -math.inf)]


SHIPPED = Path(__file__).resolve().parents[1] / "sample_reports" / "MODELLED_decode-gemm-sweep_H100-SXM.csv"


def _edited(tmp_path: Path, edit) -> tuple[Path, list[str], list[list[str]]]:
    """The shipped sample with `edit(header, kernel_rows)` applied to its cells, written as ncu quotes."""
    import csv

    lines = SHIPPED.read_text(encoding="utf-8").splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    rows = list(csv.reader(lines[at:]))
    header, kernels = rows[0], rows[2:]
    edit(header, kernels)
    path = tmp_path / "edited.csv"
    with path.open("w", encoding="utf-8", newline="") as fh:
        fh.write("".join(lines[:at]))
        csv.writer(fh, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)
    return path, header, kernels


def _numeric(cell: str) -> bool:
    return isinstance(parse_value(cell), float)


def test_an_infinite_duration_is_not_a_measurement(tmp_path) -> None:
    """`inf` in gpu__time_duration (a hand-edited or damaged export): the duration comes from the
    row's own elapsed cycles ÷ clock, never infinity."""
    def edit(header, kernels):
        kernels[1][header.index("gpu__time_duration.sum")] = "inf"

    path, header, kernels = _edited(tmp_path, edit)
    k = ncu_roofline_analyze(path).reports[0].kernels[1]
    cycles = parse_value(kernels[1][header.index("sm__cycles_elapsed.avg")])
    clock = parse_value(kernels[1][header.index("sm__cycles_elapsed.avg.per_second")])
    assert isinstance(cycles, float) and isinstance(clock, float)
    duration = k.q.duration_s
    assert k.usable and duration is not None
    assert duration.value == pytest.approx(cycles / (clock * 1e9))  # the export's clock is in GHz
    assert duration.recipe == "sm__cycles_elapsed.avg ÷ sm__cycles_elapsed.avg.per_second"
    assert duration.note.endswith("(the report's gpu__time_duration is NaN or infinite)")
    assert "duration_from_cycles" in k.flags


@pytest.mark.parametrize("fmt", ["html", "json", "md", "csv"])
def test_every_number_infinite_gives_unusable_kernels_not_a_crash(tmp_path, fmt) -> None:
    from click.testing import CliRunner

    from ncu_roofline.cli import main

    def edit(header, kernels):
        for row in kernels:
            for i, cell in enumerate(row):
                if _numeric(cell):
                    row[i] = "inf"

    path, _, kernels = _edited(tmp_path, edit)
    out = tmp_path / f"out.{fmt}"
    result = CliRunner().invoke(main, ["report", str(path), "-f", fmt, "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output and out.stat().st_size > 0
    report = ncu_roofline_analyze(path).reports[0]
    assert len(report.kernels) == len(kernels)
    for k in report.kernels:
        assert not k.usable and k.raw.sm_count is None  # the SM count cell is inf too: not a count
        assert "infinite (gpu__time_duration.sum" in (k.q.unusable_reason or "")


def test_minus_infinity_is_an_impossible_value_left_out(tmp_path) -> None:
    def edit(header, kernels):
        kernels[0][header.index("dram__bytes_read.sum")] = "-inf"

    path, _, _ = _edited(tmp_path, edit)
    report = ncu_roofline_analyze(path).reports[0]
    assert any("dram__bytes_read.sum = -inf" in w for w in report.warnings)
    assert "dram__bytes_read.sum" not in report.kernels[0].raw.metrics


def ncu_roofline_analyze(path: Path):
    import ncu_roofline

    return ncu_roofline.analyze(path)


EXTREMES = ("inf", "-inf", "1e308", "-1e308", "nan", "0", "-0", "1e-320", "9" * 400,
            "1,000,000,000,000,000,000,000", "n/a", "")


@pytest.mark.filterwarnings("error::RuntimeWarning")  # nor print numpy's warnings of an overflow
def test_extreme_cells_never_crash_the_analysis_or_any_output(tmp_path) -> None:
    """Hand-edited or damaged exports: 15 % of the cells of the shipped sample replaced by extreme
    values, 25 seeds. Every output is written; a value a chart cannot place gives a note, not a crash."""
    import random

    from ncu_roofline.render import REPORT, RenderOptions, render

    not_drawn = 0
    for seed in range(25):
        rng = random.Random(seed)

        def edit(header, kernels, rng=rng):
            for row in kernels:
                for i in range(len(row)):
                    if rng.random() < 0.15:
                        row[i] = rng.choice(EXTREMES)

        path, _, _ = _edited(tmp_path, edit)
        try:
            analysis = ncu_roofline_analyze(path)
        except InputError:
            continue  # e.g. an edited ID or name column: refused with a message
        analysis.to_json()
        analysis.rows()
        page = render(REPORT, analysis, "html", RenderOptions())
        render(REPORT, analysis, "md", RenderOptions())
        render(REPORT, analysis, "csv", RenderOptions())
        not_drawn += "chart not drawn. Its values lie outside what a chart can show" in page
    assert not_drawn > 0  # the charts' guard was reached, and said so on the page


def test_a_zero_peak_is_no_roof_and_says_why(tmp_path) -> None:
    """An edited `dram__*.peak_sustained` of 0 gives no DRAM roof (no division by it), and the reason
    names the formula that came out zero rather than claiming the metrics are absent."""
    def edit(header, kernels):
        for i, name in enumerate(header):
            if name.startswith("dram__") and name.endswith(".peak_sustained"):
                kernels[0][i] = "0"

    path, _, _ = _edited(tmp_path, edit)
    k = ncu_roofline_analyze(path).reports[0].kernels[0]
    assert k.peaks.get("dram") is None and k.utilization.get("dram") is None
    reason = next(m.reason for m in k.missing if m.quantity == "peaks.dram")
    assert reason.startswith("no DRAM bandwidth peak: the report's values give a zero peak or one past the "
                             "float range (")
    assert ".peak_sustained" in reason


def _read_every_metric(path: Path) -> tuple[list[tuple[object, ...]], int]:
    """Every kernel of an export with every header metric read, the first kernel's read first (so that
    later rows parse what it read at once, in blocks where they can), and how many rows a block parsed."""
    from ncu_roofline.readers.csv_export import CsvExport

    export = CsvExport(path)
    out: list[tuple[object, ...]] = []
    parsed = 0
    for kernel in export.kernels():
        block = getattr(getattr(kernel.metrics, "_row", None), "block", None)
        if block is not None and block.parsed is not None:
            parsed += block.parsed[1][kernel.metrics._row.position] is not None
        metrics = {name: repr(kernel.metrics.get(name)) for name in export.header}
        out.append((kernel.index, kernel.name, kernel.grid_size, kernel.block_size, metrics))
    return out, parsed


@needs_corpus
@pytest.mark.parametrize("name", sorted(p.name for p in REPORTS.glob("*.ncu-rep")) if REPORTS.is_dir() else [])
def test_every_corpus_report_reads_the_same_in_blocks_as_row_by_row(tmp_path: Path, name: str,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Invariant over the corpus: an export of each report's kernels, repeated past one block (70 rows),
    reads the same, value for value (kind, unit, absence), whether its rows' number columns are parsed
    64 rows at once or each row on its own."""
    import dataclasses

    from ncu_roofline.readers import csv_export

    report = _corpus_report(name)
    kernels = [dataclasses.replace(report.kernels[i % len(report.kernels)], index=i) for i in range(70)]
    path = write_ncu_csv(RawReport(name, "csv", kernels), tmp_path / "export.csv")
    in_blocks, parsed = _read_every_metric(path)
    monkeypatch.setattr(csv_export, "_BLOCK_ROWS", 1)  # a batch of one line: never a block
    row_by_row, none = _read_every_metric(path)
    assert row_by_row == in_blocks and len(in_blocks) == 70
    assert none == 0 and parsed >= 35  # most rows took the block reading (one with a missing cell reads alone)


def test_a_metric_the_header_repeats_is_read_from_its_first_column(tmp_path: Path) -> None:
    """A header naming one metric twice (an edited or pasted-together export): its first column is read, never a
    later one silently, and one warning names the metric and both columns."""
    header = HEADER.rstrip("\n") + ',"gpu__time_duration.sum"\n'
    units = UNITS.rstrip("\n") + ',"second"\n'
    rows = ROW0.rstrip("\n") + ',"999"\n' + ROW1.rstrip("\n") + ',"999"\n'
    report = read_report(_write(tmp_path, header + units + rows))
    durations = [k.metrics["gpu__time_duration.sum"] for k in report.kernels]
    assert [(m.value, m.unit) for m in durations] == [(1234.5678, "usecond"), (12.25, "usecond")]
    (warning,) = [w for w in report.warnings if "more than once" in w]
    assert "gpu__time_duration.sum (columns 14, 21)" in warning
    assert not any("more than once" in w for w in read_report(_write(tmp_path, SAMPLE, "plain.csv")).warnings)


@pytest.mark.parametrize("cell", ["hello", "0x10", "5%", "1,2,3"])
def test_text_where_a_count_belongs_is_left_out_and_said(tmp_path: Path, cell: str) -> None:
    """Text in a duration or byte-count cell (a hand edit): read as not available, never as a number, and named in
    the file's warning with its kernel, as an impossible negative count is; text in a label column is not."""
    row = ROW0.replace('"1,234.5678"', f'"{cell}"').replace('"CachePreferNone"', '"hello"')
    report = read_report(_write(tmp_path, HEADER + UNITS + row + ROW1))
    assert report.kernels[0].metrics.get("gpu__time_duration.sum") is None
    assert report.kernels[0].metrics["launch__func_cache_config"].value == "hello"  # a label: kept as text
    (warning,) = [w for w in report.warnings if "impossible value" in w]
    assert f'kernel 0 (gemm_kernel): gpu__time_duration.sum = "{cell}" (1 row)' in warning
    assert "launch__func_cache_config" not in warning


def test_a_column_whose_unit_contradicts_its_metric_is_left_out(tmp_path: Path) -> None:
    """An edited units row (`furlong` under the duration, `inst` under a byte count): the values cannot be put in
    seconds or bytes, so the columns are left out (not available, never read as base units) and one warning names
    them; units ncu writes for those metrics pass."""
    units = UNITS.replace('"Kbyte","usecond"', '"inst","furlong"')
    report = read_report(_write(tmp_path, HEADER + units + ROW0 + ROW1))
    for k in report.kernels:
        assert k.metrics.get("gpu__time_duration.sum") is None and k.metrics.get("dram__bytes_read.sum") is None
        assert k.metrics.get("sm__inst_executed.sum") is not None or k.index == 0  # the rest is read as before
    (warning,) = [w for w in report.warnings if "cannot have" in w]
    assert "gpu__time_duration.sum in 'furlong'" in warning and "dram__bytes_read.sum in 'inst'" in warning
    assert not any("cannot have" in w for w in read_report(_write(tmp_path, SAMPLE, "plain.csv")).warnings)


def test_an_emptied_unit_under_a_duration_is_left_out_where_other_columns_have_units(tmp_path: Path) -> None:
    """A duration whose unit cell is empty where a byte count has its unit (a hand edit): reading it as nanoseconds,
    as a Pascal-era export (no unit under any duration or byte count) is read, would put a microsecond value 1,000x
    off. The column is left out and named; the same value in an export without such units is read as nanoseconds."""
    units = UNITS.replace('"usecond"', '""')
    report = read_report(_write(tmp_path, HEADER + units + ROW0 + ROW1))
    assert all(k.metrics.get("gpu__time_duration.sum") is None for k in report.kernels)
    assert report.kernels[0].metrics["dram__bytes_read.sum"].unit == "Kbyte"  # the other columns are read
    (warning,) = [w for w in report.warnings if "cannot have" in w]
    assert "gpu__time_duration.sum with no unit" in warning
    bare = read_report(_write(tmp_path, HEADER + '""' + ',""' * (UNITS.count(",")) + "\n" + ROW0 + ROW1, "bare.csv"))
    assert not any("cannot have" in w for w in bare.warnings)
    assert bare.kernels[0].metrics["gpu__time_duration.sum"].value == 1234.5678


def test_a_repeated_identity_column_is_read_from_its_last_cell(tmp_path: Path) -> None:
    """A header naming an identity column twice (a hand edit) reads the last one, for the ID as for the others."""
    from ncu_roofline.readers.csv_export import read_csv_export

    path = tmp_path / "twice.csv"
    path.write_text('"ID","Kernel Name","ID","Kernel Name","gpu__time_duration.sum"\n"","","","","nsecond"\n'
                    '"0","a","7","x","100"\n"1","a","8","y","100"\n"2","a","9","y","100"\n')
    report = read_csv_export(path)
    assert [(k.index, k.name) for k in report.kernels] == [(7, "x"), (8, "y"), (9, "y")]


# --------------------------------------------------------------------------- launches of one kernel


class _Recording(dict[str, Metric]):
    """Metrics that note every name read."""

    def __init__(self, values: dict[str, Metric]) -> None:
        super().__init__(values)
        self.read: list[str] = []

    def get(self, name: str, default: object = None) -> Metric | None:  # type: ignore[override]
        self.read.append(name)
        return super().get(name, default)  # type: ignore[return-value]


_IDENTITY_FIELDS = {"compute_capability": "9.0", "device": "GPU", "sm_count": 132, "grid_size": (1, 1, 1),
                    "block_size": (32, 1, 1), "stream_id": 7}


@pytest.mark.parametrize("missing", [None, "launch__grid_dim_y", "launch__block_dim_x", "launch__stream_id"])
@pytest.mark.parametrize("given", range(1 << len(_IDENTITY_FIELDS)))
def test_identity_reads_read_what_kernel_from_metrics_reads(given: int, missing: str | None) -> None:
    from ncu_roofline.readers.ncu_rep import _FROM_METRICS, identity_reads, kernel_from_metrics

    identity = {f: v for bit, (f, v) in enumerate(_IDENTITY_FIELDS.items()) if given >> bit & 1}
    values = {n: Metric(3.0) for _, names, _ in _FROM_METRICS for n in names if n != missing}
    values["device__attribute_display_name"] = Metric("GPU")
    alone, keyed = _Recording(values), _Recording(values)
    kernel_from_metrics(0, "k", "k", alone, **identity)
    held = identity_reads(keyed, identity)
    assert sorted(set(keyed.read)) == sorted(set(alone.read))  # a triple's axes up to the first missing one
    assert held == tuple(values.get(n) for n in dict.fromkeys(keyed.read))


def test_a_kernels_launches_made_alike_keep_their_own_values(tmp_path: Path) -> None:
    # Three launches of one kernel: the second is made from the first (`RawKernel.again`), the third holds
    # another SM count and device name in its metrics and is made anew; each equals the launch read alone.
    header = ('"ID","Kernel Name","Stream","device__attribute_display_name",'
              '"device__attribute_multiprocessor_count","dram__bytes_read.sum"\n')
    rows = ['"0","k","7","GPU A","132","1,000"\n', '"1","k","7","GPU A","132","2,000"\n',
            '"2","k","7","GPU B","114","3,000"\n']
    kernels = read_report(_write(tmp_path, header + '"","","","","","byte"\n' + "".join(rows))).kernels
    assert [(k.index, k.device, k.sm_count, k.stream_id) for k in kernels] == [
        (0, "GPU A", 132, 7), (1, "GPU A", 132, 7), (2, "GPU B", 114, 7)]
    for k, row in zip(kernels, rows, strict=True):
        (alone,) = read_report(_write(tmp_path, header + '"","","","","","byte"\n' + row, "one.csv")).kernels
        assert k == alone
        assert k.metrics["dram__bytes_read.sum"] == alone.metrics["dram__bytes_read.sum"]
    kernels[1].nvtx_ranges.append("mine")
    assert kernels[0].nvtx_ranges == [] and kernels[2].nvtx_ranges == []


@pytest.mark.parametrize("where", [63, 64, 200])
def test_a_row_read_alone_takes_a_cell_longer_than_csv_readers_limit(tmp_path: Path, where: int) -> None:
    """An all-quoted row outside a block (the one left after a full block of 64, or any row once rows are not read
    in blocks) is read as a block of one: a cell past csv.reader's 131,072-character limit (a long demangled
    template name) is read, not refused, and the row stays a `QuotedRow` (no list of every cell)."""
    import ncu_roofline
    from ncu_roofline.readers.csv_cells import QuotedRow

    header = '"ID","Kernel Name","gpu__time_duration.sum","dram__bytes_read.sum"\n"","","nsecond","byte"\n'
    long_name = "k<" + "x" * 140_000 + ">"
    rows = [f'"{i}","{long_name if i == where else "k"}","1","2"\n' for i in range(where + 2)]
    path = _write(tmp_path, header + "".join(rows))
    report = read_report(path)
    assert len(report.kernels) == where + 2 and report.kernels[where].name == long_name
    assert all(type(k.metrics._row) is QuotedRow for k in report.kernels)  # type: ignore[attr-defined]
    analysed = ncu_roofline.analyze(path)
    assert [k.raw.name for k in analysed.reports[0].kernels].count(long_name) == 1
