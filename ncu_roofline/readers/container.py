"""The `.ncu-rep` container, checked without NVIDIA's reader: is this a whole report?

`ncu_report.load_report` reads whatever it is given: a cut file loses its tail kernels silently,
a file with doubled blocks doubles its kernels, and some edits abort the whole process. So the
container is walked here first, in O(blocks), straight from a memory map (nothing is copied but
a few small records), and every inconsistency becomes a reason to refuse the file.

Layout, as measured on every report of the shared corpus (Nsight Compute 2019.x to 2025.2);
records are protobuf messages, field numbers given:

    "NVR\\0", u32 n, FileHeader[n]                       FileHeader: 1 = format version
    then blocks up to the end of the file, each:
    u32 n, BlockHeader[n], payload[BlockHeader.5]
        BlockHeader: 1 = code records, 2 = kernel results, 3 = session record,
                     4 = metric-name table, 5 = payload size, 6 = process record
        payload: (u32 m, record[m]) for each code record then each result, filling it exactly
        result record: 1 = thread id, 2 = API call id (rising in launch order), ...

A whole report opens with a session-start record (session details whose first field is 2),
then the first kernel's code record and result (that result block alone carries the
metric-name table), then the session records ncu writes once (device = 6, tool versions = 8
and 5, system = 4, and, from about 2023, the tool's path = 11), then more code and result
blocks.

What that lets us tell: a cut inside a block, block lengths that do not add up, a file that
does not open with the session record, a first result without its metric-name table, a file
that ends on a code record or before the session's device and system records, no kernel
result at all, and any session record or kernel result (same process, thread and API call)
found twice, as appended copies and duplicated blocks give. Results out of launch order
(swapped blocks) are flagged, not refused: nothing is lost. What it cannot tell: the container
records no kernel count and no end marker, so a copy cut exactly between two kernels' blocks
after the session records, or one with whole kernel blocks deleted, reads as a whole report
with fewer kernels (`UNCHECKABLE`).
"""

from __future__ import annotations

import hashlib
import mmap
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field

MAGIC = b"NVR\x00"
MAX_FILE_HEADER = 1 << 16      # the FileHeader is 2 bytes in every known report
MAX_BLOCK_HEADER = 64 << 20    # the largest (first result, with the metric-name table) is ~100 KiB
MAX_RECORDS = 1 << 20          # records per block: 1 in every known report
SESSION_START, SESSION_DEVICE, SESSION_SYSTEM = 2, 6, 4
UNCHECKABLE = ("a copy cut between the records of two kernels, or one missing whole kernel records, cannot be "
               "checked for completeness: the container records no kernel count or end marker")
_COPY_AGAIN = "copy or download it again; a partial or damaged report is not analysed"


Buffer = bytes | mmap.mmap  # what the scan reads: the file's bytes, or a read-only memory map of it


class _Malformed(Exception):
    """A protobuf record that does not decode (bad varint, field or length)."""


@dataclass
class ContainerScan:
    """What the container says about a file: its counts, and why it is not whole (if it is not)."""

    size: int
    blocks: int = 0
    sources: int = 0
    results: int = 0              # kernel results in the whole blocks read, in file order
    session_end: int = 0          # where the last session block ends (the version string is before)
    problem: str | None = None    # why the file is not a whole report; None: whole as far as can be told
    hint: str = ""
    warnings: list[str] = field(default_factory=list)

    @property
    def whole(self) -> bool:
        return self.problem is None


def _varint(buf: Buffer, pos: int, end: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= end or shift > 63:
            raise _Malformed
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7


def _fields(buf: Buffer, pos: int, end: int) -> Iterator[tuple[int, int, int, int]]:
    """(field, wire type, value or start, stop) for each field of the record in buf[pos:end]."""
    while pos < end:
        key, pos = _varint(buf, pos, end)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise _Malformed
        if wire == 0:
            value, pos = _varint(buf, pos, end)
            yield number, wire, value, pos
        elif wire in (1, 5, 2):
            if wire == 2:
                length, pos = _varint(buf, pos, end)
            else:
                length = 8 if wire == 1 else 4
            if pos + length > end:
                raise _Malformed
            yield number, wire, pos, pos + length
            pos += length
        else:  # groups (3, 4) are not used by these records; 6 and 7 do not exist
            raise _Malformed


def _first_varint(buf: Buffer, start: int, stop: int, wanted: int) -> int | None:
    for number, wire, value, _ in _fields(buf, start, stop):
        if number == wanted and wire == 0:
            return value
    return None


@dataclass
class _Header:
    sources: int = 0
    results: int = 0
    payload: int = 0
    session: tuple[int, int] | None = None
    table: int = 0
    process: bytes = b""


def _block_header(buf: Buffer, start: int, stop: int) -> _Header:
    h = _Header()
    for number, wire, a, b in _fields(buf, start, stop):
        if wire == 0 and number in (1, 2, 5):
            if number == 1:
                h.sources = a
            elif number == 2:
                h.results = a
            else:
                h.payload = a
        elif wire == 2 and number == 3:
            h.session = (a, b)
        elif wire == 2 and number == 4:
            h.table = b - a
        elif wire == 2 and number == 6:
            h.process = bytes(buf[a:min(b, a + 4096)])
    return h


def _session_kind(buf: Buffer, span: tuple[int, int]) -> int:
    for number, _, _, _ in _fields(buf, span[0], span[1]):
        return number
    return 0


class _Walk:
    """The state of one walk over the blocks: what was seen, and the first problem found."""

    def __init__(self, buf: Buffer, scan: ContainerScan) -> None:
        self.buf = buf
        self.scan = scan
        self.kinds: list[str] = []            # "session", "source" or "result", per block
        self.sessions_seen: set[int] = set()
        self.session_blocks: dict[bytes, int] = {}
        self.launches: dict[tuple[bytes, int, int], int] = {}
        self.last_call: dict[bytes, int] = {}
        self.first_result_table: int | None = None
        self.first_result_block = 0

    def refuse(self, problem: str, hint: str = _COPY_AGAIN) -> None:
        self.scan.problem, self.scan.hint = problem, hint

    def result(self, block: int, process: bytes, start: int, stop: int) -> bool:
        """Note one kernel result; False (with the problem set) when it repeats an earlier one."""
        thread = call = None
        for number, wire, value, _ in _fields(self.buf, start, stop):
            if wire == 0 and number == 1:
                thread = value
            elif wire == 0 and number == 2:
                call = value
            if thread is not None and call is not None:
                break
        if thread is None or call is None:
            return True  # no launch identity to compare (not seen in any known report)
        key = (process, thread, call)
        if key in self.launches:
            self.refuse(f"the file holds the same kernel result twice (block {block} repeats block "
                        f"{self.launches[key]}: same process, thread and API call): blocks were duplicated "
                        "or a copy was appended, which would double its kernels", _COPY_AGAIN)
            return False
        self.launches[key] = block
        previous = self.last_call.get(process)
        if previous is not None and call < previous and not self.scan.warnings:
            self.scan.warnings.append(
                f"the kernel results are not in launch order (block {block} holds API call {call}, after "
                f"call {previous}): blocks may have been swapped; the kernels are listed in file order")
        self.last_call[process] = max(call, previous or 0)
        return True


def _walk_payload(walk: _Walk, block: int, h: _Header, start: int) -> bool:
    """Check that the payload holds exactly the records the header announces; note each result."""
    buf, end = walk.buf, start + h.payload
    count = h.sources + h.results
    if count * 5 > h.payload or count > MAX_RECORDS:
        walk.refuse(f"the file is damaged: block {block} at byte {start:,} announces {count:,} records in "
                    f"{h.payload:,} bytes")
        return False
    pos = start
    for n in range(count):
        if pos + 4 > end:
            break
        (length,) = struct.unpack_from("<I", buf, pos)
        if length == 0:  # no record is empty; a run of zeros is damage, not thousands of records
            walk.refuse(f"the file is damaged: block {block} (at byte {start:,}) holds an empty record")
            return False
        if pos + 4 + length > end:
            pos = end + 1
            break
        if n >= h.sources and not walk.result(block, h.process, pos + 4, pos + 4 + length):
            return False
        pos += 4 + length
    if pos != end:
        walk.refuse(f"the file is damaged: the records of block {block} (at byte {start:,}) do not fill "
                    f"the {h.payload:,} bytes its header announces (block lengths edited?)")
        return False
    return True


def _walk_blocks(walk: _Walk, offset: int) -> None:
    buf, scan = walk.buf, walk.scan
    size = scan.size
    while offset < size:
        block = scan.blocks
        if offset + 4 > size:
            walk.refuse(f"the file is truncated: it ends {size - offset} byte(s) into a block length",
                        _partial_hint(scan.results))
            return
        (length,) = struct.unpack_from("<I", buf, offset)
        start, stop = offset + 4, offset + 4 + length
        if stop > size:
            walk.refuse(f"the file is truncated or damaged: a block runs past the end of the file "
                        f"({size:,} bytes on disk, {stop:,} expected)", _partial_hint(scan.results))
            return
        if length == 0 or length > MAX_BLOCK_HEADER:
            walk.refuse(f"the file is damaged: block {block} at byte {offset:,} has a header of {length:,} bytes")
            return
        try:
            h = _block_header(buf, start, stop)
            if stop + h.payload > size:
                walk.refuse(f"the file is truncated or damaged: the records of block {block} run past the end "
                            f"of the file ({size:,} bytes on disk, {stop + h.payload:,} expected)",
                            _partial_hint(scan.results))
                return
            if not _block_kind(walk, block, h, start, stop) or not _walk_payload(walk, block, h, stop):
                return
        except _Malformed:
            walk.refuse(f"the file is damaged: block {block} at byte {offset:,} holds a record that does not decode")
            return
        scan.blocks += 1
        scan.sources += h.sources
        scan.results += h.results
        offset = stop + h.payload
        if walk.kinds[-1] == "session":
            scan.session_end = offset


def _block_kind(walk: _Walk, block: int, h: _Header, start: int, stop: int) -> bool:
    """Classify the block (session, code or result) and check what its kind allows."""
    if h.session is not None and not h.sources and not h.results:
        kind = _session_kind(walk.buf, h.session)
        header = hashlib.sha256(walk.buf[start:stop]).digest()
        if header in walk.session_blocks:
            walk.refuse(f"the file holds the same session record twice (block {block} repeats block "
                        f"{walk.session_blocks[header]}): blocks were duplicated, or two copies joined")
            return False
        walk.session_blocks[header] = block
        walk.sessions_seen.add(kind)
        walk.kinds.append("session")
        if block == 0 and kind != SESSION_START:
            walk.refuse("the file does not open with the session record every report starts with: "
                        "blocks are missing or out of order")
            return False
        return True
    if block == 0:
        walk.refuse("the file does not open with the session record every report starts with: "
                    "blocks are missing or out of order")
        return False
    if not h.sources and not h.results:
        walk.refuse(f"the file is damaged: block {block} announces no record at all")
        return False
    if h.results and walk.first_result_table is None:
        walk.first_result_table, walk.first_result_block = h.table, block
        if not h.table:
            walk.refuse(f"the first kernel result (block {block}) lacks the metric-name table that the "
                        "block of the first kernel carries: blocks are missing or out of order")
            return False
    walk.kinds.append("result" if h.results else "source")
    return True


def _partial_hint(whole_results: int) -> str:
    if whole_results:
        return (f"only the first {whole_results} kernel(s) are whole; a partial report is not analysed; "
                "copy or download it again")
    return "no kernel could be read from it; copy or download it again"


def _check_order(walk: _Walk) -> None:
    """What a whole report holds, once every block has been read."""
    scan = walk.scan
    if not scan.results:
        walk.refuse(f"the file holds no kernel result: its {scan.blocks} block(s) end before the first "
                    "kernel result, as a report cut short does", "copy or download it again")
        return
    if walk.kinds[-1] == "source":
        walk.refuse(f"the file ends with the code record of a kernel but not its result: it was cut short after "
                    f"{scan.results} kernel(s)", _COPY_AGAIN)
        return
    for kind, what in ((SESSION_DEVICE, "device"), (SESSION_SYSTEM, "system")):
        if kind not in walk.sessions_seen:
            walk.refuse(f"the file lacks the {what} record of the session, which follows the first kernel: it was cut "
                        f"short after {scan.results} kernel(s), or blocks were deleted", _COPY_AGAIN)
            return


def scan_container(buf: Buffer) -> ContainerScan:
    """Walk the container of a report (bytes or an mmap starting with the magic); never raises."""
    scan = ContainerScan(size=len(buf))
    if scan.size < 8:
        scan.problem = f"the file is truncated: only {scan.size} bytes, shorter than a report header"
        scan.hint = _partial_hint(0)
        return scan
    (header_size,) = struct.unpack_from("<I", buf, 4)
    offset = 8 + header_size
    if header_size == 0 or header_size > MAX_FILE_HEADER:
        scan.problem = f"the file is damaged: its header announces {header_size:,} bytes"
        scan.hint = _COPY_AGAIN
        return scan
    if offset > scan.size:
        scan.problem = f"the file is truncated: only {scan.size} bytes, shorter than its header"
        scan.hint = _partial_hint(0)
        return scan
    try:
        version = _first_varint(buf, 8, offset, 1)
    except _Malformed:
        version = None
    if version is None:
        scan.problem, scan.hint = "the file is damaged: its header does not decode", _COPY_AGAIN
        return scan
    walk = _Walk(buf, scan)
    _walk_blocks(walk, offset)
    if scan.problem is None:
        _check_order(walk)
    return scan
