"""The `.ncu-rep` container, walked without NVIDIA's reader: what the file holds, and what it may lack.

`ncu_report.load_report` reads whatever it is given: a cut file loses its tail kernels silently, a file
with doubled blocks doubles its kernels, and some edits abort the whole process. So the container is
walked here first, in O(blocks), from a memory map (nothing is copied but a few small records). The walk
refuses a file only where it proves data lost and nothing readable; everything else is a note.

Layout, as measured on the reports of the shared corpus (Nsight Compute 2019.x to 2025.2);
records are protobuf messages, field numbers given:

    "NVR\\0", u32 n, FileHeader[n]                       FileHeader: 1 = format version
    then blocks up to the end of the file, each:
    u32 n, BlockHeader[n], payload[BlockHeader.5]
        BlockHeader: 1 = code records, 2 = kernel results, 3 = session record,
                     4 = metric-name table, 5 = payload size, 6 = process record,
                     7 = a number (some 2020-2021 releases; not read)
        payload: (u32 m, record[m]) for each code record then each result, filling it exactly
        result record: 1 = thread id, 2 = API call id (rising in launch order), ...

A report usually opens with a session-start record (session details whose first field is 2),
then the first kernel's code record and result (that result block carries the metric-name
table), then the session records ncu writes once (device = 6, tool versions = 8 and 5,
system = 4, and, from about 2023, the tool's path = 11), then more code and result blocks.
Seen in real captures and read whole by NVIDIA's reader: one-entry metric-name table blocks (2023.3),
no system record (2020.2), no once-per-session record (a one-kernel capture, 2025.1).

Refused (`problem`), as proof that data was lost: a block's records do not fill the bytes its header
announces, zeros stand where a block should start with data after them (a zero-filled hole), or no
kernel result is whole. Read to the cut (`cut`, noted): a file ending inside a block after whole
results (NVIDIA's reader gives those and a partial kernel, which `ncu_rep` leaves out). Noted and read
(`notes`): zeros from a block's start to the end (padding), a block with no record, a session record
missing, repeated or out of place, a field or session kind not seen before, results out of launch
order, results repeated byte for byte (analysed once: `duplicates`), a file ending on a code record
(the capture stopped while profiling that kernel), a header that does not decode (the walk stops; the
kernels after it are as NVIDIA's reader finds them). What it cannot tell: the container records no
kernel count and no end marker, so a copy cut exactly between two kernels' blocks, or one with whole
kernel blocks deleted, reads as a whole report with fewer kernels (`UNCHECKABLE`).
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
ZERO_FILL = 64                 # zero bytes in a row where a block starts: a zero-filled copy, not an empty block
SESSION_START, SESSION_DEVICE, SESSION_SYSTEM = 2, 6, 4
UNCHECKABLE = ("a copy cut between the records of two kernels, or one missing whole kernel records, cannot be "
               "checked for completeness: the container records no kernel count or end marker")
_COPY_AGAIN = "copy or download it again; a partial or damaged report is not analysed"


Buffer = bytes | mmap.mmap  # what the scan reads: the file's bytes, or a read-only memory map of it


class _Malformed(Exception):
    """A protobuf record that does not decode (bad varint, field or length)."""


@dataclass
class ContainerScan:
    """What the container says about a file: its counts, why it is refused (if it is), what it may lack."""

    size: int
    blocks: int = 0
    results: int = 0              # kernel results in the blocks read, in file order, repeats included
    session_end: int = 0          # where the last session block ends (the version string is before)
    problem: str | None = None    # proof that data was lost: the file is refused; None: it is read
    hint: str = ""
    notes: list[str] = field(default_factory=list)  # what the walk saw that a whole report lacks; read anyway
    duplicates: dict[int, int] = field(default_factory=dict)  # result index -> the earlier result it repeats
    walked: bool = True           # False: a header did not decode, and the blocks after it were not walked
    zero_tail: int | None = None  # where zeros start that run to the end of the file (padding), if they do
    stopped_at: str = ""          # where and why the walk stopped early (`walked` False)
    cut: bool = False             # the file ends inside a block, after `results` whole kernel results

    @property
    def whole(self) -> bool:
        """Not refused (the file is read, `notes` saying what it may lack)."""
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


KNOWN_HEADER_FIELDS = frozenset(range(1, 8))  # 7: a varint some 2020-2021 releases write in every header
KNOWN_SESSION_KINDS = frozenset((SESSION_START, 4, 5, SESSION_DEVICE, 8, 11))


@dataclass
class _Header:
    sources: int = 0
    results: int = 0
    payload: int = 0
    session: tuple[int, int] | None = None
    table: int = 0
    process: bytes = b""
    unknown: tuple[int, ...] = ()   # header fields not seen in any known report


def _block_header(buf: Buffer, start: int, stop: int) -> _Header:
    h = _Header()
    unknown: set[int] = set()
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
        elif number not in KNOWN_HEADER_FIELDS:
            unknown.add(number)
    h.unknown = tuple(sorted(unknown))
    return h


def _session_kind(buf: Buffer, span: tuple[int, int]) -> int:
    """The first field of a session record: its kind (0 for an empty record, -1 for one that does not decode)."""
    try:
        for number, _, _, _ in _fields(buf, span[0], span[1]):
            return number
    except _Malformed:
        return -1
    return 0


def _blocks_text(blocks: list[int], most: int = 3) -> str:
    shown = ", ".join(str(b) for b in blocks[:most])
    return shown + (f" and {len(blocks) - most:,} more" if len(blocks) > most else "")


class _Walk:
    """The state of one walk over the blocks: what was seen, and what a whole report would not show."""

    def __init__(self, buf: Buffer, scan: ContainerScan) -> None:
        self.buf = buf
        self.scan = scan
        self.kinds: list[str] = []            # "session", "source", "result", "table" or "empty", per block
        self.sessions_seen: set[int] = set()
        self.session_records: set[bytes] = set()  # digests of the session records seen
        # launch identity (process, thread, API call) -> the results that carry it: (index, record's byte range)
        self.launches: dict[tuple[bytes, int, int], list[tuple[int, tuple[int, int]]]] = {}
        self.last_call: dict[bytes, int] = {}
        self.first_result_seen = False
        self.next_result = 0                  # the file-order index of the next kernel result
        # what the walk noticed, by kind, each a list of block numbers (one note per kind, at the end)
        self.seen: dict[str, list[int]] = {}
        self.unknown_fields: set[int] = set()
        self.unknown_sessions: set[int] = set()
        self.out_of_order: tuple[int, int, int] | None = None   # (block, call, previous call)

    def refuse(self, problem: str, hint: str = _COPY_AGAIN) -> None:
        self.scan.problem, self.scan.hint = problem, hint

    def cut(self, where: str) -> None:
        """The file ends inside a block (`where`): with whole kernel results before it, they are read (NVIDIA's
        reader reads them) and a note says what is missing; with none, there is nothing to read."""
        scan = self.scan
        if not scan.results:
            self.refuse(f"the file is truncated: {where}", _NOTHING_WHOLE)
            return
        scan.cut = True
        scan.notes.append(f"the file is cut short ({where}): its first {scan.results:,} kernel result(s) are whole "
                          "and read; a kernel whose record the cut runs through is left out, and any after it are "
                          "missing (copy or download the file again for the rest)")

    def saw(self, kind: str, block: int) -> None:
        self.seen.setdefault(kind, []).append(block)

    def result(self, block: int, process: bytes, start: int, stop: int) -> None:
        """Note one kernel result: a byte-for-byte repeat of an earlier one, and its launch order.

        A repeat is told by the whole record, not the launch identity alone: the kernels of one CUDA graph
        launch, or of one cooperative launch on several devices, may share a thread and API call and still
        differ. Records are compared only where the identity repeats (no hashing of every result).
        """
        index = self.next_result
        self.next_result += 1
        thread = call = None
        try:
            for number, wire, value, _ in _fields(self.buf, start, stop):
                if wire == 0 and number == 1:
                    thread = value
                elif wire == 0 and number == 2:
                    call = value
                if thread is not None and call is not None:
                    break
        except _Malformed:
            self.saw("undecodable result", block)
            return
        if thread is None or call is None:
            return  # no launch identity (not seen in any known report): nothing to compare
        same = self.launches.setdefault((process, thread, call), [])
        record = self.buf[start:stop]
        for earlier, (a, b) in same:
            if b - a == stop - start and self.buf[a:b] == record:
                self.saw("repeated result", block)
                self.scan.duplicates[index] = earlier
                return
        same.append((index, (start, stop)))
        previous = self.last_call.get(process)
        if previous is not None and call < previous and self.out_of_order is None:
            self.out_of_order = (block, call, previous)
        self.last_call[process] = max(call, previous or 0)


def _walk_payload(walk: _Walk, block: int, h: _Header, start: int) -> bool:
    """Check that the payload holds exactly the records the header announces; note each result."""
    buf, end = walk.buf, start + h.payload
    count = h.sources + h.results
    if count * 5 > h.payload or count > MAX_RECORDS:
        walk.refuse(f"the file is damaged: block {block} at byte {start:,} announces {count:,} records in "
                    f"{h.payload:,} bytes, more than fit: the block lengths do not add up")
        return False
    pos = start
    for n in range(count):
        if pos + 4 > end:
            break
        (length,) = struct.unpack_from("<I", buf, pos)
        if length == 0:  # no record is empty; a run of zeros is damage, not thousands of records
            walk.refuse(f"the file is damaged: block {block} (at byte {start:,}) holds an empty record where its "
                        "header announces data: the block lengths do not add up")
            return False
        if pos + 4 + length > end:
            pos = end + 1
            break
        if n >= h.sources:
            walk.result(block, h.process, pos + 4, pos + 4 + length)
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
        if scan.results and not buf[offset] and _zeros_to_end(buf, offset):  # after kernels, to the end: padding
            scan.zero_tail = offset
            scan.notes.append(
                f"the file ends in {size - offset:,} zero bytes (from byte {offset:,}, where block {block} should "
                "start): padding, or a copy whose end never arrived; the kernels before them are read, and any "
                "after them are missing")
            return
        if offset + 4 > size:
            walk.cut(f"it ends {size - offset} byte(s) into the length of block {block}")
            return
        (length,) = struct.unpack_from("<I", buf, offset)
        start, stop = offset + 4, offset + 4 + length
        if length == 0:
            run = buf[offset: min(size, offset + ZERO_FILL)]
            if len(run) == ZERO_FILL and not any(run):  # a zero-filled or sparse copy, not a block
                after = ("before its first kernel result" if _zeros_to_end(buf, offset)
                         else "with data after them")  # (after kernel results, zeros to the end are padding)
                walk.refuse(f"the file is damaged: {ZERO_FILL:,} or more zero bytes stand at byte {offset:,}, "
                            f"where block {block} should start, {after}")
                return
            walk.saw("empty", block)  # an all-default header encodes to nothing: an empty block, nothing lost
            walk.kinds.append("empty")
            scan.blocks += 1
            offset = start
            continue
        if length > MAX_BLOCK_HEADER:
            _stop_walk(walk, block, offset, f"its header length reads {length:,} bytes")
            return
        if stop > size:
            walk.cut(f"block {block} runs past the end of the file: {size:,} bytes on disk, {stop:,} expected")
            return
        try:
            h = _block_header(buf, start, stop)
        except _Malformed:
            _stop_walk(walk, block, offset, "its header does not decode")
            return
        if stop + h.payload > size:
            walk.cut(f"the records of block {block} run past the end of the file: {size:,} bytes on disk, "
                     f"{stop + h.payload:,} expected")
            return
        _block_kind(walk, block, h)
        if not _walk_payload(walk, block, h, stop):
            return
        scan.blocks += 1
        scan.results += h.results
        offset = stop + h.payload
        if walk.kinds[-1] == "session":
            scan.session_end = offset


_ZEROS = bytes(1 << 20)


def _zeros_to_end(buf: Buffer, offset: int) -> bool:
    """Whether every byte from `offset` on is zero (4 KiB first, then 1 MiB at a time: an empty block costs a page)."""
    size, step = len(buf), 4096
    while offset < size:
        chunk = buf[offset:min(size, offset + step)]
        if chunk != _ZEROS[:len(chunk)]:
            return False
        offset += len(chunk)
        step = len(_ZEROS)
    return True


def _stop_walk(walk: _Walk, block: int, offset: int, why: str) -> None:
    """A block whose header cannot be read: the walk cannot find the blocks after it, which proves no loss."""
    walk.scan.walked = False
    walk.scan.stopped_at = f"block {block} (at byte {offset:,}: {why})"
    walk.scan.notes.append(
        f"block {block} (at byte {offset:,}) cannot be walked: {why}; the container was checked up to there "
        f"({walk.scan.results} kernel result(s)), and the kernels after it are those NVIDIA's reader finds: "
        "some may be missing or damaged")


def _block_kind(walk: _Walk, block: int, h: _Header) -> None:
    """Classify the block (session, code, result, metric-name table or empty) and note what is unusual."""
    if h.unknown:
        walk.unknown_fields.update(h.unknown)
        walk.saw("unknown field", block)
    if h.session is not None and not h.sources and not h.results:
        kind = _session_kind(walk.buf, h.session)
        digest = hashlib.sha256(walk.buf[h.session[0]:h.session[1]]).digest()
        if digest in walk.session_records:
            walk.saw("repeated session", block)
        walk.session_records.add(digest)
        if kind == -1:
            walk.saw("undecodable session", block)
        elif kind not in KNOWN_SESSION_KINDS:
            walk.unknown_sessions.add(kind)
            walk.saw("unknown session", block)
        if kind in (SESSION_DEVICE, SESSION_SYSTEM) and not walk.first_result_seen:
            walk.saw("early session", block)
        walk.sessions_seen.add(kind)
        walk.kinds.append("session")
        if block == 0 and kind != SESSION_START:
            walk.saw("no start", block)
        return
    if block == 0:
        walk.saw("no start", block)
    if not h.sources and not h.results:
        walk.kinds.append("table" if h.table else "empty")
        if not h.table:
            walk.saw("empty", block)
        return
    if h.results and not walk.first_result_seen:
        walk.first_result_seen = True
        if not h.table:
            walk.saw("first result without table", block)
    walk.kinds.append("result" if h.results else "source")


_NOTES = {
    "empty": "{n} block(s) hold no record at all (block {blocks}); nothing is missing from the kernels",
    "no start": "the file does not open with the session-start record every known report starts with",
    "early session": "session records sit before the first kernel result (block {blocks}), not after it",
    "repeated session": "{n} session record(s) appear twice (block {blocks}); each is read once",
    "repeated result": ("{n} kernel result(s) appear twice (block {blocks}): blocks were duplicated or a copy "
                        "appended; each launch is analysed once"),
    "undecodable result": ("the launch identity of {n} kernel result(s) does not decode (block {blocks}): "
                           "their values may be damaged, and a repeat of them cannot be told"),
    "undecodable session": "{n} session record(s) do not decode (block {blocks}): they are damaged",
    "first result without table": ("the first kernel result (block {blocks}) carries no metric-name table: "
                                   "blocks may be missing or out of order"),
}


def _finish_notes(walk: _Walk) -> None:
    """One note per kind of thing seen, in a fixed order, each naming its blocks."""
    scan = walk.scan
    notes: list[str] = []
    for kind, text in _NOTES.items():
        blocks = walk.seen.get(kind)
        if blocks:
            notes.append(text.format(n=f"{len(blocks):,}", blocks=_blocks_text(blocks)))
    if walk.unknown_fields:
        notes.append(f"block headers hold field(s) {', '.join(map(str, sorted(walk.unknown_fields)))} not seen in "
                     f"any known report (block {_blocks_text(walk.seen['unknown field'])}): a newer layout, read "
                     "as NVIDIA's reader reads it")
    if walk.unknown_sessions:
        notes.append(f"session records of kind(s) {', '.join(map(str, sorted(walk.unknown_sessions)))} not seen in "
                     f"any known report (block {_blocks_text(walk.seen['unknown session'])}): a newer layout, "
                     "read as NVIDIA's reader reads it")
    if walk.out_of_order is not None:
        block, call, previous = walk.out_of_order
        notes.append(f"the kernel results are not in launch order (block {block} holds API call {call}, after "
                     f"call {previous}): blocks may have been swapped; the kernels are listed in file order")
    scan.notes[:0] = notes


_NOTHING_WHOLE = "no kernel could be read from it; copy or download it again"


def _check_end(walk: _Walk) -> None:
    """What a whole report holds, once every block has been read: only no result at all is refused."""
    scan = walk.scan
    if not scan.results:
        if scan.walked:
            walk.refuse(f"the file holds no kernel result: its {scan.blocks} block(s) end before the first "
                        "kernel result, as a report cut short does", "copy or download it again")
        return
    if not scan.walked or scan.cut:  # (a cut file's last blocks and session records are the cut's to explain)
        return
    if walk.kinds[-1] == "source":
        scan.notes.append(f"the file ends with the code record of a kernel but not its result: the capture was "
                          f"likely stopped while profiling it; that launch is missing, the {scan.results} "
                          "before it are read")
    missing = [what for kind, what in ((SESSION_DEVICE, "device"), (SESSION_SYSTEM, "system"))
               if kind not in walk.sessions_seen]
    if missing:
        scan.notes.append(f"the file holds no {' or '.join(missing)} record of the session (written once, after "
                          "the first kernel): the capture may have stopped early, or its release wrote none; "
                          "the analysis reads the device from each kernel's own metrics")


def scan_container(buf: Buffer) -> ContainerScan:
    """Walk the container of a report (bytes or an mmap starting with the magic); never raises."""
    scan = ContainerScan(size=len(buf))
    if scan.size < 8:
        scan.problem = f"the file is truncated: only {scan.size} bytes, shorter than a report header"
        scan.hint = _NOTHING_WHOLE
        return scan
    (header_size,) = struct.unpack_from("<I", buf, 4)
    offset = 8 + header_size
    if header_size == 0 or header_size > MAX_FILE_HEADER:
        scan.problem = f"the file is damaged: its header announces {header_size:,} bytes"
        scan.hint = _COPY_AGAIN
        return scan
    if offset > scan.size:
        scan.problem = f"the file is truncated: only {scan.size} bytes, shorter than its header"
        scan.hint = _NOTHING_WHOLE
        return scan
    try:
        version = _first_varint(buf, 8, offset, 1)
    except _Malformed:
        version = None
    if version is None:
        scan.notes.append("the file header does not decode")
    walk = _Walk(buf, scan)
    _walk_blocks(walk, offset)
    if scan.problem is None:
        _check_end(walk)
        _finish_notes(walk)
    return scan
