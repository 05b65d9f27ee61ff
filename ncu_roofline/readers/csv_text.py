"""The text of an ncu CSV export, as it is read (never the whole file at once).

An export of 50,000 full-set launches is 1.4 GB of text; holding it as one string, and every row
as a list of cells, would cost several times that. `TextLines` reads the file as buffered bytes
instead, decoding one line at a time (a file whose lines end at a bare CR only, through a text
stream): lines end at LF, CR or CR LF (as `open(..., newline="")` splits them), ncu's
`==WORD==` marker lines are set aside wherever they occur, and the last line read is kept for the
truncation checks. The usual rows are not split into lines at all: `take_rows` reads the next block of
them from the file at once, as one text their rows share.

Decoding: UTF-8 (a byte-order mark is dropped). Bytes that are not UTF-8 become U+FFFD, one per
byte, and a warning says how many and where the first one is (its offset is found by a second
read of the file, only then). UTF-16 with a byte-order mark (PowerShell's `>` writes it) is
decoded whole: such files are small hand-made exports. Before any line is read, the first 64 KiB
are checked for what is not a CSV text file at all: an empty file, a Git LFS pointer, a
`.ncu-rep` report, binary data.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ..errors import InputError
from .container import MAGIC
from .csv_cells import QuotedRow, plain_row, quoted_text
from .ncu_rep import LFS_PREFIX, sniff_problem

_SAMPLE_BYTES = 65536
_FIRST_CHUNK = 2 << 20  # what `TextLines.take_rows` reads first (64 full-set rows of about 28 kB)
_LARGEST_CHUNK = 256 << 20  # a line longer than this is left to the iteration
_MARKER_RE = re.compile(r"^==([A-Z]+)==\s?")
_ESCAPED_RE = re.compile("[\udc80-\udcff]")  # an undecodable byte, as `surrogateescape` keeps it
# Bytes other than tab, LF, FF, CR and ESC below 0x20 (or DEL) do not occur in text exports.
_CONTROL_BYTES = frozenset(set(range(0x20)) - {0x09, 0x0A, 0x0C, 0x0D, 0x1B}) | {0x7F}


@dataclass
class Marker:
    """One `==WORD== text` line found anywhere in the file."""

    line_no: int
    kind: str
    text: str


def not_text(path: Path, why: str) -> InputError:
    return InputError(
        path,
        f"not a CSV text file ({why})",
        "pass a .ncu-rep report, or the CSV text written by `ncu --csv --page raw`",
    )


def _check_head(path: Path, head: bytes) -> None:
    """InputError for a file that is not CSV text, from its first 64 KiB."""
    if not head:
        raise InputError(
            path,
            "the file is empty (0 bytes)",
            "export the CSV again with `ncu --csv --page raw` (e.g. `ncu --import R.ncu-rep "
            "--csv --page raw > R.csv`)",
        )
    if head.startswith(LFS_PREFIX):
        raise InputError(path, sniff_problem(head[:64]) or "this is a Git LFS pointer")
    if head.startswith(MAGIC):
        raise InputError(
            path,
            "this is an Nsight Compute report (.ncu-rep), not a CSV export",
            "rename it to end in .ncu-rep, or export CSV with "
            "`ncu --import FILE.ncu-rep --csv --page raw > FILE.csv`",
        )
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return
    controls = sum(1 for b in head if b in _CONTROL_BYTES)
    if b"\x00" in head or controls > max(2, len(head) // 100):
        raise not_text(path, "it contains binary data")


_BARE_CR_RE = re.compile(r"(?<=\r)(?!\n)")  # after a CR that no LF follows


def _bare_cr_lines(line: str) -> list[str]:
    """A line read up to a LF, cut after each CR that no LF follows (each ends a line of its own)."""
    return [piece for piece in _BARE_CR_RE.split(line) if piece]


def _line_ends(data: bytes, limit: int) -> list[int]:
    """Where each of the first `limit` whole lines of `data` (each ending at a LF) ends."""
    ends: list[int] = []
    find, at = data.find, 0
    while len(ends) < limit:
        at = find(b"\n", at) + 1
        if not at:
            break
        ends.append(at)
    return ends


def _plain_lines(data: bytes, ends: list[int]) -> int:
    """How many of these leading lines of `data` are lines `plain_row` takes."""
    taken, at = 0, 0
    for end in ends:
        if not plain_row(data[at:end]):
            break
        taken, at = taken + 1, end
    return taken


class TextLines:
    """Physical lines of an export, minus ncu marker lines; `line_no` is the last line's number.

    Iterate once. `warnings` receives the decoding warning when the iteration ends.
    """

    def __init__(self, path: Path, warnings: list[str]) -> None:
        self.path = path
        self.warnings = warnings
        self.line_no = 0
        self.last_line = ""  # the last physical line (markers included)
        self.last_text = ""  # the last one that is not blank
        self.markers: list[Marker] = []
        self.undecodable = 0
        self._open: IO[Any] | None = None
        self._bytes: IO[bytes] | None = None  # the file read as bytes, once past its first line
        self._chunk = _FIRST_CHUNK  # bytes `take_rows` reads at once, learnt from the lines it read
        self._alone_until = 0  # lines before this offset are left to the iteration (`take_rows` could take none)
        try:
            with path.open("rb") as fh:
                head = fh.read(_SAMPLE_BYTES)
        except OSError as exc:
            raise InputError(path, f"cannot read the file ({exc.strerror or exc})") from exc
        _check_head(path, head)
        self._utf16 = head.startswith((b"\xff\xfe", b"\xfe\xff"))
        self._cr_only = b"\r" in head and b"\n" not in head

    def _physical(self) -> Iterator[str]:
        try:
            if self._utf16:
                data = self.path.read_bytes()
                try:
                    text = data.decode("utf-16")
                except UnicodeDecodeError as exc:
                    raise not_text(self.path, f"undecodable UTF-16 at byte {exc.start}") from exc
                del data
                yield from io.StringIO(text, newline="")  # small hand-made files: held whole
                return
            first = True
            for line in self._utf8_lines():
                if first:
                    line, first = line.removeprefix("\ufeff"), False
                if not line.isascii() and _ESCAPED_RE.search(line):  # isascii: O(1) in CPython
                    line, n = _ESCAPED_RE.subn("\ufffd", line)
                    self.undecodable += n
                yield line
        except OSError as exc:
            raise InputError(self.path, f"cannot read the file ({exc.strerror or exc})") from exc
        if self.undecodable:
            self.warnings.append(
                f"the file is not valid UTF-8 (first bad byte at offset {self._first_bad_byte()}); "
                f"{self.undecodable} undecodable byte(s) were replaced with U+FFFD")

    def _utf8_lines(self) -> Iterator[str]:
        """The file's lines, decoded (surrogates for bytes that are not UTF-8).

        Read as bytes and decoded a line at a time: a text stream's own line splitting costs five
        times as much on rows of 30 kB (its decoder works in 8 kB chunks). A UTF-8 character never
        holds a LF byte, so no line cuts one; a bare CR ends a line too (`_bare_cr_lines`), as
        `open(..., newline="")` reads it. A file whose lines end at a bare CR only (no LF in its
        first 64 KiB) is read through a text stream, which splits it without holding it whole.
        """
        if self._cr_only:
            with self.path.open("r", encoding="utf-8", errors="surrogateescape", newline="",
                                buffering=1 << 20) as text:
                self._open = text
                yield from text
            return
        with self.path.open("rb", buffering=1 << 20) as fh:
            self._open = fh
            seekable = fh.seekable()
            while True:
                raw = fh.readline()
                if not raw:
                    break
                line = raw.decode("utf-8", "surrogateescape")
                cr = line.find("\r")
                if cr == -1 or (cr == len(line) - 2 and line[-1] == "\n"):  # LF or CR LF: the usual
                    self._bytes = fh if seekable else None  # the next lines may be taken (its BOM dropped by now)
                    yield line
                else:
                    self._bytes = None  # none taken while the pieces of this one are handed out
                    yield from _bare_cr_lines(line)

    def take_rows(self, limit: int) -> list[QuotedRow]:
        """The next lines, up to `limit`, that are all-quoted UTF-8 rows of one width with no other line end, read as
        one block (`csv_cells.quoted_text`: a block of one where only one is), counted as the iteration counts its lines
        (`line_no`, `last_line`, `last_text`). Their bytes are read from the file at once (twice the lines taken before,
        up to `limit`, of the length of the lines read before; the file is then set at the first line not taken), and
        the rows share them. None are taken where the file is not read as UTF-8 lines ending in LF (a UTF-16 file, one
        of bare CRs, one that cannot seek), before its first line, or while the pieces of a line cut at bare CRs are
        handed out; the first line that is not such a row is left for the iteration, and so is a line longer than
        `_LARGEST_CHUNK`. The first line is read and checked on its own first; where a block cannot start at it though
        it is such a row, the lines read with it are left to the iteration too: no line is read many times over."""
        fh = self._bytes
        if fh is None or fh.closed:
            return []
        start = fh.tell()
        if start < self._alone_until:
            return []
        first = fh.readline()  # (from the buffer the iteration reads on from, where none is taken)
        fh.seek(start)
        if not plain_row(first):
            return []
        data = fh.read(min(max(self._chunk, len(first)), _LARGEST_CHUNK))
        ends = _line_ends(data, limit)
        if not ends:  # (the file changed under the reading: its lines are left to the iteration)
            fh.seek(start)
            return []
        plain = _plain_lines(data, ends)
        rows = quoted_text(data, ends[:plain]) if plain else []
        taken = len(rows)
        fh.seek(start + (ends[taken - 1] if taken else 0))
        # the next read: twice the lines taken (up to `limit`), of these lines' length, and the longest of them
        longest = max(b - a for a, b in zip([0, *ends], ends, strict=False))
        self._chunk = min(ends[-1] // len(ends) * (min(limit, 2 * taken) if taken else limit) + longest * 9 // 8,
                          _LARGEST_CHUNK)
        if not taken:  # the lines read as such rows are read on their own, as after a block's last row
            self._alone_until = start + ends[max(plain, 1) - 1]
            return []
        self.line_no += taken
        self.last_line = self.last_text = data[ends[taken - 2] if taken > 1 else 0:ends[taken - 1]].decode()
        return rows

    def close(self) -> None:
        """Close the file now (a read stopped early, or by a fault, leaves nothing open)."""
        if self._open is not None:
            self._open.close()
            self._open = None

    def _first_bad_byte(self) -> str:
        offset = 0
        try:
            with self.path.open("rb") as fh:
                bom = fh.read(3)
                start = 3 if bom == b"\xef\xbb\xbf" else 0
                fh.seek(start)
                offset = start
                carry = b""
                while chunk := fh.read(1 << 20):
                    data = carry + chunk
                    try:
                        data.decode("utf-8")
                        carry = b""
                    except UnicodeDecodeError as exc:
                        if exc.end == len(data) and exc.reason == "unexpected end of data":
                            carry = data[exc.start:]  # a character cut by the chunk boundary
                            offset += exc.start
                            continue
                        return str(offset + exc.start)
                    offset += len(data)
        except OSError:
            return "unknown"
        return str(offset)  # the file ends inside a character: it starts there

    def __iter__(self) -> Iterator[str]:
        for line in self._physical():
            self.line_no += 1
            self.last_line = line
            if not line.isspace():
                self.last_text = line
            if line.startswith("=="):
                match = _MARKER_RE.match(line)
                if match:
                    self.markers.append(Marker(self.line_no, match.group(1), line[match.end():].strip()))
                    continue
            yield line
