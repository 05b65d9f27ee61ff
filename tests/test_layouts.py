"""Container layouts nobody has shown us yet, built in memory from the shared reports.

Each layout is a copy of a real report with its blocks edited: an empty block, session records
moved or removed, unknown record kinds, repeated results, a capture stopped on a code record. Each
must be read with the kernels NVIDIA's reader finds (repeats once) and the edit stated: a note in
the warnings and in `completeness`. A cut inside a record, lengths that do not add up and a file
with no kernel result are still refused. A launch with no duration at the end of a file (a stopped
capture) is set aside, named, and the others analysed.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import CORPUS, corpus_files, make_kernel
from mutation import Block, blocks
from ncu_csv_writer import write_ncu_csv

import ncu_roofline
from ncu_roofline.cli import main
from ncu_roofline.errors import InputError
from ncu_roofline.readers import read_report
from ncu_roofline.readers.container import UNCHECKABLE, scan_container
from ncu_roofline.readers.record import RawReport

needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"shared report corpus not found at {CORPUS}")
NAIVE = "cudacode__naive.ncu-rep"           # 2 kernels, 2024-era layout with every session record
MANY = "cudaprogramming__readSegmentUnroll.ncu-rep"  # 36 kernels


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _block(header: bytes) -> bytes:
    """A block with this header and no payload."""
    return struct.pack("<I", len(header)) + header


EMPTY = _block(b"\x08\x00\x10\x00\x28\x00")                       # 0 code records, 0 results, 0 bytes
UNKNOWN_FIELD = _varint(100 << 3) + _varint(1)  # no report writes it (NVIDIA's reader aborts on 9 as a number)
UNKNOWN_SESSION = _block(b"\x08\x00\x10\x00\x1a\x03" + _varint(99 << 3) + b"\x01" + b"\x28\x00")


def _parts(name: str) -> tuple[bytes, list[Block], list[bytes]]:
    data = (CORPUS / name).read_bytes()
    bs = blocks(data)
    return data[: bs[0].start], bs, [data[b.start: b.end] for b in bs]


def _read(tmp_path: Path, name: str, data: bytes) -> ncu_roofline.api.analysis.ReportResult:
    path = tmp_path / name
    path.write_bytes(data)
    report = ncu_roofline.analyze(path, isolate=False).reports[0]
    return report


def _stated(report: ncu_roofline.api.analysis.ReportResult, words: str) -> None:
    assert any(words in w for w in report.warnings), report.warnings
    assert words in report.completeness and report.completeness.endswith(UNCHECKABLE)
    assert len(report.warnings) == 1  # one line on standard error per file


def _first(bs: list[Block], kind: str, session: int = 0) -> int:
    return next(i for i, b in enumerate(bs) if b.kind == kind and (not session or b.session == session))


@needs_corpus
def test_an_empty_block_is_read_and_stated(tmp_path: Path) -> None:
    head, bs, parts = _parts(NAIVE)
    at = _first(bs, "result") + 1
    report = _read(tmp_path, "empty.ncu-rep", head + b"".join([*parts[:at], EMPTY, *parts[at:]]))
    assert len(report.kernels) == 2
    _stated(report, f"block(s) hold no record at all (block {at})")


@needs_corpus
def test_session_records_removed_or_moved_are_read_and_stated(tmp_path: Path) -> None:
    head, bs, parts = _parts(NAIVE)
    device, system = _first(bs, "session", 6), _first(bs, "session", 4)
    without = [p for i, p in enumerate(parts) if i not in (device, system)]
    report = _read(tmp_path, "no-session.ncu-rep", head + b"".join(without))
    assert len(report.kernels) == 2
    _stated(report, "no device or system record of the session")
    # The device record before the first kernel, not after it.
    moved = [parts[0], parts[device], *[p for i, p in enumerate(parts) if i not in (0, device)]]
    report = _read(tmp_path, "moved.ncu-rep", head + b"".join(moved))
    assert len(report.kernels) == 2
    _stated(report, "session records sit before the first kernel result (block 1)")
    # No session-start record at all.
    report = _read(tmp_path, "no-start.ncu-rep", head + b"".join(parts[1:]))
    assert len(report.kernels) == 2
    _stated(report, "does not open with the session-start record")


@needs_corpus
def test_one_kernel_and_none_of_the_once_per_session_records(tmp_path: Path) -> None:
    """A real layout: a one-kernel capture that ends right after its first result."""
    head, bs, parts = _parts(NAIVE)
    report = _read(tmp_path, "first-only.ncu-rep", head + b"".join(parts[: _first(bs, "result") + 1]))
    assert len(report.kernels) == 1 and report.kernels[0].usable
    _stated(report, "no device or system record of the session")


@needs_corpus
def test_unknown_record_kinds_are_read_and_stated(tmp_path: Path) -> None:
    head, bs, parts = _parts(NAIVE)
    at = _first(bs, "session", 4)
    report = _read(tmp_path, "unknown-session.ncu-rep", head + b"".join([*parts[:at], UNKNOWN_SESSION, *parts[at:]]))
    assert len(report.kernels) == 2
    _stated(report, "session records of kind(s) 99 not seen in any known report")
    # An unknown field appended to the header of a code record.
    source = _first(bs, "source")
    b = bs[source]
    raw = (CORPUS / NAIVE).read_bytes()
    header = raw[b.start + 4: b.payload] + UNKNOWN_FIELD
    edited = struct.pack("<I", len(header)) + header + raw[b.payload: b.end]
    report = _read(tmp_path, "unknown-field.ncu-rep", head + b"".join([*parts[:source], edited, *parts[source + 1:]]))
    assert len(report.kernels) == 2
    _stated(report, "block headers hold field(s) 100 not seen in any known report")


@needs_corpus
def test_repeated_results_are_analysed_once(tmp_path: Path) -> None:
    head, bs, parts = _parts(MANY)
    results = [i for i, b in enumerate(bs) if b.kind == "result"]
    twice = [i for i in results[3:9]]
    extra = b"".join(parts[i] for i in twice)  # these kernels' results again
    report = _read(tmp_path, "repeated.ncu-rep", head + b"".join(parts) + extra)
    assert len(report.kernels) == len(results) == 36
    names = [k.raw.name for k in report.kernels]
    import ncu_report
    ctx = ncu_report.load_report(str(CORPUS / MANY))
    assert names == [ctx.range_by_idx(0).action_by_idx(j).name() for j in range(36)]
    _stated(report, "6 kernel result(s) appear twice")


@needs_corpus
def test_results_out_of_order_are_read_in_file_order(tmp_path: Path) -> None:
    head, bs, parts = _parts(MANY)
    results = [i for i, b in enumerate(bs) if b.kind == "result"]
    a, b = results[5], results[20]
    swapped = list(parts)
    swapped[a - 1: a + 1], swapped[b - 1: b + 1] = parts[b - 1: b + 1], parts[a - 1: a + 1]
    report = _read(tmp_path, "swapped.ncu-rep", head + b"".join(swapped))
    assert len(report.kernels) == 36
    _stated(report, "not in launch order")


@needs_corpus
def test_a_capture_stopped_on_a_code_record_keeps_the_kernels_before(tmp_path: Path) -> None:
    """ncu writes a kernel's code record before its result: a capture stopped in between ends on it."""
    head, bs, parts = _parts(NAIVE)
    last = max(i for i, b in enumerate(bs) if b.kind == "result")
    source = parts[_first(bs, "source")]
    report = _read(tmp_path, "stopped.ncu-rep", head + b"".join([*parts[:last], source]))
    assert len(report.kernels) == 1
    _stated(report, "ends with the code record of a kernel but not its result")


@needs_corpus
def test_proven_loss_is_still_refused(tmp_path: Path) -> None:
    raw = (CORPUS / NAIVE).read_bytes()
    bs = blocks(raw)
    result = bs[_first(bs, "result")]
    cases = {
        "cut-in-record.ncu-rep": raw[: (result.payload + result.end) // 2],
        "cut-in-header.ncu-rep": raw[: result.start + 10],
        "no-result.ncu-rep": raw[: result.start],
    }
    longer = bytearray(raw)  # a record's length edited: the block's records no longer fill its payload
    (n,) = struct.unpack_from("<I", raw, result.payload)
    struct.pack_into("<I", longer, result.payload, n - 3)
    cases["lengths.ncu-rep"] = bytes(longer)
    for name, data in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        scan = scan_container(data)
        assert scan.problem is not None, name
        with pytest.raises(InputError) as info:
            read_report(path)
        assert str(path) in info.value.message


@needs_corpus
def test_the_last_launch_without_a_duration_is_set_aside_named(tmp_path: Path) -> None:
    """A real capture whose last launch has every metric NaN: exit 0, one warning, the others analysed."""
    path = CORPUS / "esmm-research__profile.5c6231e.ncu-rep"
    out = tmp_path / "o.json"
    result = CliRunner().invoke(main, ["report", str(path), "-f", "json", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "the last launch (#5, one_d_vec) has no duration, unlike the launches before it" in result.stderr
    assert "capture was likely stopped" in result.stderr and "5 other launch(es) are analysed" in result.stderr
    doc = json.loads(out.read_text())["reports"][0]
    assert doc["kernel_count"] == 6 and doc["unusable_kernel_count"] == 1
    assert sum(1 for k in doc["kernels"] if k["bound_by"] is not None) == 5
    assert any("has no duration" in w for w in doc["warnings"])


def _export(tmp_path: Path, name: str, nan_at: int) -> Path:
    """A 3-launch CSV export whose launch `nan_at` has a NaN duration (every other figure kept)."""
    kernels = []
    for i in range(3):
        metrics: dict[str, float | tuple[float, str] | str] = {
            "gpu__time_duration.sum": (float("nan") if i == nan_at else 10_000.0, "nsecond"),
            "dram__bytes_read.sum": (4e6, "byte"), "dram__bytes_write.sum": (1e6, "byte"),
            "device__attribute_display_name": "Test GPU"}
        kernels.append(make_kernel(metrics, index=i, name=f"k{i}", grid_size=(64, 1, 1), block_size=(256, 1, 1)))
    return write_ncu_csv(RawReport(name, "csv", kernels), tmp_path / name)


def test_a_stopped_csv_export_warns_too(tmp_path: Path) -> None:
    """The same for an export whose last row's duration is NaN; a NaN launch elsewhere is only unusable."""
    report = ncu_roofline.analyze(_export(tmp_path, "stopped.csv", 2)).reports[0]
    assert report.kernels[-1].q.no_duration and not report.kernels[-1].usable
    assert [k.usable for k in report.kernels] == [True, True, False]
    assert [w for w in report.warnings if "has no duration" in w] == [
        "the last launch (#2, k2) has no duration, unlike the launches before it: the capture was likely stopped "
        "while profiling it, or the profiler could not collect it; it is set aside, 2 other launch(es) are analysed"]
    report = ncu_roofline.analyze(_export(tmp_path, "middle.csv", 1)).reports[0]
    assert not report.kernels[1].usable
    assert not any("has no duration" in w for w in report.warnings)


@needs_corpus
def test_a_capture_without_any_duration_is_not_called_stopped() -> None:
    """`--metrics` without gpu__time_duration: every launch lacks it, and nothing was stopped."""
    report = ncu_roofline.analyze(CORPUS / "cs599k__silu-2025-04-19-v1.ncu-rep").reports[0]
    assert all(k.q.no_duration for k in report.kernels)
    assert not any("stopped" in w for w in report.warnings), report.warnings


@needs_corpus
def test_distinct_results_that_share_a_launch_identity_are_both_kept(tmp_path: Path) -> None:
    """The kernels of one CUDA graph launch may share a thread and API call: only a byte-for-byte repeat is one."""
    raw = (CORPUS / MANY).read_bytes()
    bs = blocks(raw)
    results = [b for b in bs if b.kind == "result"]
    # The API call id (field 2, a varint) of launch 3's record set to launch 0's; its values are left as they are.
    def call_of(b: Block) -> tuple[int, int, int]:
        pos = b.payload + 4
        assert raw[pos] == 0x08  # field 1 (thread), a varint
        pos += 1
        while raw[pos] & 0x80:
            pos += 1
        pos += 1
        assert raw[pos] == 0x10  # field 2 (API call), a varint
        start = pos + 1
        end = start
        while raw[end] & 0x80:
            end += 1
        return start, end + 1, end + 1 - start
    a, b = call_of(results[0]), call_of(results[3])
    if a[2] != b[2]:
        pytest.skip("the two call ids are not of one length in this capture")
    data = bytearray(raw)
    data[b[0]: b[1]] = raw[a[0]: a[1]]
    path = tmp_path / "shared-identity.ncu-rep"
    path.write_bytes(bytes(data))
    report = read_report(path)
    assert len(report.kernels) == 36 and not any("appear twice" in w for w in report.warnings)


@needs_corpus
def test_a_zero_length_header_is_an_empty_block_and_a_zero_fill_is_refused(tmp_path: Path) -> None:
    head, bs, parts = _parts(NAIVE)
    at = _first(bs, "result") + 1
    report = _read(tmp_path, "zero-header.ncu-rep", head + b"".join([*parts[:at], b"\0" * 4, *parts[at:]]))
    assert len(report.kernels) == 2
    _stated(report, f"block(s) hold no record at all (block {at})")
    filled = head + b"".join([*parts[:at], b"\0" * 4096, *parts[at:]])
    assert "zero bytes stand at byte" in (scan_container(filled).problem or "")
    assert "with data after them" in (scan_container(filled + b"\0" * 4096).problem or "")


@needs_corpus
@pytest.mark.parametrize("zeros", [4, 60, 64, 1000, 1 << 20])
def test_zeros_to_the_end_of_a_whole_report_are_read_with_a_note(tmp_path: Path, zeros: int) -> None:
    """A whole report padded with zeros (a preallocated copy, or one whose end never arrived): NVIDIA's reader
    reads every kernel before them, so it is read too, with a note that kernels after them may be missing."""
    whole = (CORPUS / NAIVE).read_bytes()
    report = _read(tmp_path, "padded.ncu-rep", whole + b"\0" * zeros)
    assert [k.raw.name for k in report.kernels] == [k.name for k in read_report(CORPUS / NAIVE).kernels]
    assert all(k.usable for k in report.kernels)
    _stated(report, f"the file ends in {zeros:,} zero bytes (from byte {len(whole):,}")
    assert scan_container(whole + b"\0" * zeros).problem is None
    hole = scan_container(whole + b"\0" * zeros + b"\1")  # one byte of data after them: not padding
    assert hole.zero_tail is None and (hole.problem is not None or hole.cut)
    assert zeros < 64 or "with data after them" in hole.problem  # a shorter run reads as empty blocks


@needs_corpus
def test_batch_states_what_the_reader_noticed(tmp_path: Path) -> None:
    """batch says per file what `report` says: on standard error, in the manifest and on the index page."""
    folder = tmp_path / "in"
    folder.mkdir()
    head, bs, parts = _parts(NAIVE)
    (folder / "first-only.ncu-rep").write_bytes(head + b"".join(parts[: _first(bs, "result") + 1]))
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["batch", str(folder), "-o", str(out)])
    assert result.exit_code == 0, result.output
    path = folder / "first-only.ncu-rep"
    assert f"ncu-roofline: warning: {path}: read with notes: the file holds no device or system" in result.stderr
    entry = json.loads((out / "manifest.json").read_text())["reports"][0]
    assert len(entry["warnings"]) == 1 and "no device or system record" in entry["warnings"][0]
    assert "no device or system record" in (out / "index.html").read_text()


@needs_corpus
@pytest.mark.parametrize("zeros", [3, 63, 1003])
def test_zeros_nvidia_cannot_read_past_say_how_to_cut_them(tmp_path: Path, zeros: int) -> None:
    """Zeros to the end in other than whole 4-byte steps: NVIDIA's reader finds no kernel at all. The refusal says
    so, counts the zeros and gives the length to cut the copy to, which then reads whole."""
    whole = (CORPUS / NAIVE).read_bytes()
    path = tmp_path / "padded.ncu-rep"
    path.write_bytes(whole + b"\0" * zeros)
    with pytest.raises(InputError) as caught:
        read_report(path)
    assert f"ends in {zeros:,} zero bytes after its 2 kernel result(s)" in caught.value.reason
    assert f"truncate -s {len(whole)} COPY" in caught.value.hint
    with path.open("r+b") as fh:
        fh.truncate(len(whole))
    assert len(read_report(path).kernels) == 2



@needs_corpus
def test_a_header_the_walk_cannot_pass_is_named_when_nvidia_finds_nothing(tmp_path: Path) -> None:
    """A file header whose length is edited: the walk stops at its first block and NVIDIA's reader finds no kernel;
    the refusal names where the walk stopped, not a count of results it never reached."""
    data = bytearray((CORPUS / NAIVE).read_bytes())
    data[4:6] = b"\xff\xff"
    path = tmp_path / "header.ncu-rep"
    path.write_bytes(bytes(data))
    with pytest.raises(InputError) as caught:
        read_report(path)
    assert "its container cannot be walked from block 0 (at byte 65," in caught.value.reason
    assert "holds 0 kernel result" not in caught.value.reason


@needs_corpus
def test_kernels_nvidia_finds_no_metric_of_are_named_and_said(tmp_path: Path) -> None:
    """256 zero bytes in the middle of each capture's first kernel result (its lengths intact, so the walk passes
    it): wherever NVIDIA's reader then finds no metric of that kernel, the report is read, warns that kernel 0's
    record is damaged and calls it `kernel 0`; wherever it finds metrics, no such warning."""
    import ncu_report

    paths, bare = [], {}
    for source in corpus_files():
        data = bytearray(source.read_bytes())
        first = next(b for b in blocks(bytes(data)) if b.kind == "result")
        middle = (first.start + first.end) // 2
        data[middle:middle + 256] = bytes(256)
        path = tmp_path / source.name
        path.write_bytes(bytes(data))
        ctx = ncu_report.load_report(str(path))
        actions = [ctx.range_by_idx(r).action_by_idx(a) for r in range(ctx.num_ranges())
                   for a in range(ctx.range_by_idx(r).num_actions())]
        if actions:
            paths.append(path)
            bare[str(path)] = not actions[0].metric_names()
    analysis = ncu_roofline.analyze(paths, strict=False, isolate=True)
    reports = {r.path: r for r in analysis.reports}
    assert any(bare.values()) and not all(bare.values())
    for path, none in bare.items():
        said = [w for w in reports[path].warnings if "finds no metric of" in w]
        if none:
            assert said and "(kernel 0" in said[0], path
            assert reports[path].kernels[0].raw.name == "kernel 0", path
        else:
            assert not said, path


@needs_corpus
def test_zeros_before_the_first_kernel_result_are_refused_as_such(tmp_path: Path) -> None:
    """A copy that is zeros from before its first kernel result to its end holds no kernel: refused, saying the
    zeros run to the end (not that data follows them)."""
    head, bs, parts = _parts(NAIVE)
    before = head + b"".join(parts[: _first(bs, "result")])
    problem = scan_container(before + b"\0" * 4096).problem or ""
    assert "where block 2 should start, before its first kernel result" in problem
    assert "with data after them" in (scan_container(before + b"\0" * 4096 + b"\1").problem or "")

