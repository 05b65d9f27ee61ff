"""A report's launch records, written out as its launches are analysed, so that no analysed launch is kept.

A report analysed by group (`FINDINGS_BY_GROUP`, more than 1,000 launches) keeps each launch as the record its
JSON document writes (`KernelModel.to_dict`: numbers and verdict, no findings), encoded once: in memory up to
`HELD_BYTES` (the 200 MB of 50,000 full-set launches: 0.4 s of system CPU less than a file's), then in a temporary
file. The record of a launch held as its group's longest is written once it is let go, or at the end (`put` by
position). Reading them back (`encoded`, `records`) gives them in launch order.
"""

from __future__ import annotations

import bisect
import contextlib
import json
import os
import tempfile
import threading
from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from ..readers.record import RawKernel
from .groups import GroupMaker
from .jsondoc import Encoded, encode_bytes
from .kernel import AnalysedKernel, run_passes
from .sums import extend_ints


@dataclass
class ReportTally:
    """What a report analysed by group says of all its launches, counted as they streamed by."""

    count: int
    unusable: int
    total: float | None  # every launch's duration, summed in launch order
    devices: list[str]
    units: dict[str, dict[str, Any]]  # the `units` catalogue: each unit as the first launch holding it has it


class RecipeSets:
    """The provenance and missing-quantity lists of a report's launches, each distinct one once (`recipe_sets` of
    the document; a launch names its own by index, `recipe_set`): the launches of one export header share them."""

    def __init__(self) -> None:
        self.listed: list[dict[str, Any]] = []
        self._known: dict[tuple[Any, ...], int] = {}

    def index(self, provenance: dict[str, str], missing: list[dict[str, str]]) -> int:
        key = (*provenance.items(), None, *(tuple(m.values()) for m in missing))
        found = self._known.get(key)
        if found is None:
            found = self._known[key] = len(self.listed)
            self.listed.append({"provenance": provenance, "missing": missing})
        return found


class LaunchRecords:
    """The encoded launch records of one report, by position: in memory, then in a temporary file past
    `HELD_BYTES` (`_Spool`). The file has no name (`tempfile.TemporaryFile`) unless it is `shared`: then it crosses
    a process boundary by its name, which the process that takes it over removes (a reader's child makes it in its
    pool's folder, removed with the pool). Pickled without a name, the records travel as bytes."""

    def __init__(self, keep: bool = True, shared: bool = False) -> None:
        self.keep = keep  # False: positions only, no record (`analyze_report(..., launch_records=False)`)
        self.sets = RecipeSets()
        self._name: str | None = None
        if shared:
            fd, self._name = tempfile.mkstemp(prefix="ncu-roofline-launches-")
            self._file = _Spool(os.fdopen(fd, "w+b", buffering=1 << 20))
        else:
            self._file = _Spool()
        self._at = array("q")  # per position: offset, length (-1: not written yet)
        self._index: array[int] | list[int] = array("q")  # per position: the launch's index
        self._set = array("q")  # per position: its recipe set, as first listed
        self._end = 0

    def __getstate__(self) -> dict[str, Any]:
        self._file.flush()  # (a shared file is opened by its name)
        state = {"keep": self.keep, "sets": self.sets, "name": self._name, "at": self._at, "index": self._index,
                 "set": self._set, "end": self._end, "renumber": self._renumber}
        if self._name is None:  # no other process can open it: its bytes go along
            state["data"] = self._file.read_at(self._end, 0)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.sets, self._name, self._at, self._index, self._set, self._end = (
            state["sets"], state["name"], state["at"], state["index"], state["set"], state["end"])
        self._renumber, self.keep = state["renumber"], state["keep"]
        if self._name is None:
            self._file = _Spool()
            self._file.write(state["data"])
            return
        file = open(self._name, "r+b")  # noqa: SIM115 (held until closed)
        file.seek(0, os.SEEK_END)
        self._file = _Spool(file)
        self.forget()

    def forget(self) -> None:
        """Remove the file's name (a shared one, once taken over): it lives on while this process holds it open;
        pickled from here on, its bytes go along."""
        if self._name is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._name)
            self._name = None

    def reserve_many(self, indices: list[int]) -> int:
        """Positions for the next launches (`indices`: their own), in order; returns the first."""
        first = len(self._index)
        self._at.extend([-1, 0] * len(indices))
        self._index = extend_ints(self._index, indices)
        self._set.extend([-1] * len(indices))
        return first

    def put(self, position: int, record: dict[str, Any]) -> None:
        """A launch's record (`provenance` and `missing` moved into the report's `recipe_sets`)."""
        if not self.keep:
            return
        found, data = self.encode(record)
        self.put_many([position], found, data, [len(data)])

    def encode(self, record: dict[str, Any]) -> tuple[int, bytes]:
        """A launch's record as `put` writes it: its recipe set (`provenance` and `missing` moved there) and its
        JSON text."""
        record["recipe_set"] = found = self.sets.index(record.pop("provenance"), record.pop("missing"))
        return found, encode_bytes(record)

    def put_many(self, positions: list[int], found: int, data: bytes, lengths: list[int]) -> None:
        """Records as `encode` makes them, one after the other in `data` (`lengths`), of launches that share a
        recipe set."""
        self._file.write(data)
        at, sets, end = self._at, self._set, self._end
        for position, length in zip(positions, lengths, strict=True):
            sets[position] = found
            at[2 * position], at[2 * position + 1] = end, length
            end += length
        self._end = end

    def in_order(self) -> None:
        """Number the recipe sets by their first launch (a record written late, a group's longest launch, listed
        its set first): as a report analysed launch by launch lists them."""
        if not self.keep:
            return
        order: dict[int, int] = {}
        for found in self._set:
            if found not in order:
                order[found] = len(order)
        if all(old == new for old, new in order.items()):
            return
        self.sets.listed = [self.sets.listed[old] for old in order]
        self._renumber = order

    _renumber: dict[int, int] | None = None

    def written(self, redact: bool, kept: set[int] | None, lazy: bool) -> Iterator[Any]:
        """The records as the document writes them: encoded (`lazy`) or as dicts, without NVTX ranges (`redact`),
        only the launches `kept` (None: all)."""
        renumber = self._renumber
        for n, data in enumerate(self.encoded()):
            if kept is not None and self._index[n] not in kept:
                continue
            if renumber is not None:
                old = self._set[n]
                data = data.replace(b'"recipe_set":%d,' % old, b'"recipe_set":%d,' % renumber[old], 1)  # keys sorted
            if redact and b'"nvtx_ranges":[]' not in data:
                d = decode_record(data)
                d["nvtx_ranges"] = []
                yield Encoded(encode_bytes(d)) if lazy else d
            else:
                yield Encoded(data) if lazy else decode_record(data)

    def __len__(self) -> int:
        return len(self._index)

    def encoded(self) -> Iterator[bytes]:
        """Each record as its JSON text, in launch order."""
        if not self.keep:
            raise ValueError("this analysis kept no launch records (`analyze(..., launch_records=False)`): "
                             "analyse the report again to write its launches")
        at, count = self._at, len(self._index)
        n = 0
        while n < count:  # the records that follow one another in the file, read at once (up to `_READ_TOGETHER`)
            offset = at[2 * n]
            if offset < 0:
                raise RuntimeError(f"launch record {n} was never written")
            end, stop = n + 1, offset + at[2 * n + 1]
            while end < count and at[2 * end] == stop and stop - offset < _READ_TOGETHER:
                stop += at[2 * end + 1]
                end += 1
            data = self._file.read_at(stop - offset, offset)
            start = 0
            for m in range(n, end):
                length = at[2 * m + 1]
                yield data[start:start + length]
                start += length
            n = end

    def close(self) -> None:
        self._file.close()
        self.forget()


# A record's integers: a launch's number, its NVTX range's, its SM count, its stream, its grid and block sizes.
_INTEGERS = ("index", "range_index", "sm_count", "stream_id")
_TRIPLES = ("grid_size", "block_size")


def decode_record(data: bytes) -> dict[str, Any]:
    """A launch record (`LaunchRecords.put`; an `Encoded` one too) as a dict, its integers exact: orjson reads one
    past 64 bits (a hand-edited export's) as a float, so such a record is read again by the standard library."""
    d: dict[str, Any] = orjson.loads(memoryview(data))  # a view: orjson refuses a subclass of bytes
    if any(type(d.get(key)) is float for key in _INTEGERS) or any(
            type(v) is float for key in _TRIPLES for v in (d.get(key) or ())):
        d = json.loads(data)
    return d


class _Spool:
    """The bytes of a report's launch records, appended: in memory while the records every report of the process
    holds there come to at most `HELD_BYTES` (a JSON document of 50,000 full-set launches holds about 200 MB of
    them), then in a temporary file (`_unnamed`) from the first byte on; or in the `file` given from the start (a
    shared one)."""

    __slots__ = ("_chunks", "_size", "_starts", "_written", "file")

    def __init__(self, file: Any = None) -> None:
        self.file = file
        self._written = False  # to the file since it was last flushed
        self._chunks: list[bytes] = []
        self._starts: list[int] = []  # where each chunk starts
        self._size = 0  # the bytes held in memory

    def write(self, data: bytes) -> None:
        global _held
        if self.file is None:
            with _HELD_LOCK:
                room = _held + len(data) <= HELD_BYTES
                if room:
                    _held += len(data)
            if room:
                self._starts.append(self._size)
                self._chunks.append(bytes(data))
                self._size += len(data)
                return
            self.file = _unnamed()
            for chunk in self._chunks:
                self.file.write(chunk)
            self._let_go()
        self.file.write(data)
        self._written = True

    def _let_go(self) -> None:  # the bytes held in memory (moved to the file, or closed)
        global _held
        with _HELD_LOCK:
            _held -= self._size
        self._chunks, self._starts, self._size = [], [], 0

    def __del__(self) -> None:
        if self._size:
            with contextlib.suppress(Exception):  # (at the interpreter's exit, the lock may be gone)
                self._let_go()

    def flush(self) -> None:
        if self._written:
            self.file.flush()
            self._written = False

    def read_at(self, length: int, offset: int) -> bytes:
        """`length` bytes at `offset`."""
        if self.file is not None:
            self.flush()
            return _read_at(self.file, length, offset)
        k = bisect.bisect_right(self._starts, offset) - 1
        pieces: list[bytes] = []
        while length > 0:
            if k >= len(self._chunks):
                raise OSError(f"launch records end {length} bytes short of what was written")
            chunk, at = self._chunks[k], offset - self._starts[k]
            piece = chunk[at:at + length] if at or length < len(chunk) else chunk
            pieces.append(piece)
            length -= len(piece)
            offset += len(piece)
            k += 1
        return pieces[0] if len(pieces) == 1 else b"".join(pieces)

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
        self._let_go()


HELD_BYTES = 256 << 20  # launch records held in memory, by every report of the process together
_held = 0
_HELD_LOCK = threading.Lock()


def _unnamed() -> Any:
    """A temporary file without a name (POSIX), or removed once closed (Windows)."""
    return tempfile.TemporaryFile(prefix="ncu-roofline-launches-", buffering=1 << 20)


def _read_at(file: Any, length: int, offset: int) -> bytes:
    """`length` bytes of a flushed file at `offset`, its position left at the end (where records are appended)."""
    if _PREAD is not None:  # at most a gigabyte a read (Linux stops one at 2 GiB, others may refuse more)
        pieces: list[bytes] = []
        got = 0
        while got < length:
            piece: bytes = _PREAD(file.fileno(), min(length - got, _READ_AT_MOST), offset + got)
            if not piece:
                raise OSError(f"launch records end {length - got} bytes short of what was written")
            pieces.append(piece)
            got += len(piece)
        return pieces[0] if len(pieces) == 1 else b"".join(pieces)
    file.seek(offset)  # no pread (Windows)
    data: bytes = file.read(length)
    file.seek(0, os.SEEK_END)
    if len(data) < length:
        raise OSError(f"launch records end {length - len(data)} bytes short of what was written")
    return data


_READ_AT_MOST = 1 << 30
_READ_TOGETHER = 1 << 20  # about the bytes of consecutive records read in one call (one record more at most)
_PREAD = getattr(os, "pread", None)


class Streamed:
    """What `analyze_report` keeps of a report: its launches counted (the last one kept, for `stopped`) and, analysed
    by group, its launch records, the launches held as their group's longest (by position), and what the report says
    of all its launches (time, units, devices)."""

    def __init__(self, maker: GroupMaker, keep_records: bool = True, shared: bool = False) -> None:
        self.maker = maker
        self.keep_records, self.shared = keep_records, shared
        self.records: LaunchRecords | None = None
        self.count = 0
        self.total: float | None = None  # every launch's duration, summed in order (`ReportResult.total_duration_s`)
        self.held: dict[int, tuple[int, AnalysedKernel, str]] = {}  # id -> (position, launch, group key)
        self.units: dict[str, dict[str, Any]] = {}
        self.recipes: dict[str, str] = {}
        self.unusable = 0
        self.devices: set[str] = set()
        self.last: AnalysedKernel | None = None
        self.numbered = Numbered()
        self.timed_before = False  # a launch before the last one has a duration
        self.pending: dict[int, None] = {}  # ids of the launches held whose passes are still to run
        self.let_go: Callable[[RawKernel], None] = _keep  # what a launch's metrics become once it is analysed

    def by_group(self) -> None:
        """Analyse the report by group: its launch records are written out as its blocks are added."""
        self.records = LaunchRecords(self.keep_records, self.shared)
        self.maker.keep = False

    def hold(self, position: int, k: AnalysedKernel, key: str) -> None:
        """Hold a launch as its group's longest so far; its passes run once no later launch replaces it
        (`run_pending`), its metrics kept until its group is made (`let_go_held`): the group's findings read them."""
        self.held[id(k)] = (position, k, key)
        self.pending[id(k)] = None
        own = getattr(k.raw.metrics, "own", None)  # (a CSV row's values: not a view of its block's)
        if own is not None:
            own()

    def release(self, k: AnalysedKernel, key: str) -> None:
        """Let go a launch held (a longer one replaced it): its record written, its pass results and metrics let go."""
        position, launch, _ = self.held.pop(id(k))
        self.pending.pop(id(k), None)
        without_passes(launch)
        self._put(position, launch, key)
        self.let_go(launch.raw)

    def held_rows(self) -> set[int]:
        """The ids of the rows (`RawKernel`) of the launches held: their metrics are kept."""
        return {id(k.raw) for _, k, _ in self.held.values()}

    def run_pending(self) -> None:
        """Run the passes of the launches held that have not run them, in launch order (before the reader's last
        word: what the passes read may add to its warnings)."""
        for _, k, _ in sorted((self.held[i] for i in self.pending), key=lambda item: item[0]):
            run_passes(k)
        self.pending.clear()

    def let_go_held(self) -> None:
        """Let go the metrics of the launches held, once their groups are made."""
        for _, k, _ in self.held.values():
            self.let_go(k.raw)

    def _put(self, position: int, k: AnalysedKernel, key: str) -> None:
        assert self.records is not None
        if not self.keep_records:
            return
        d = k.to_dict(False, self.recipes, findings=False)
        d["group_key"] = key
        self.records.put(position, d)

    def finish(self) -> list[AnalysedKernel]:
        """The launches held (each group's longest), their records written, in launch order."""
        self.run_pending()
        held = sorted(self.held.values(), key=lambda item: item[0])
        for position, k, key in held:
            self._put(position, k, key)
        assert self.records is not None
        self.records.in_order()
        return [k for _, k, _ in held]

    def count_launch(self, k: AnalysedKernel) -> None:
        """Count a launch analysed on its own (a report analysed by launch), as `add_block` counts a block's."""
        self.timed_before = self.timed_before or (self.last is not None and self.last.q.duration_s is not None)
        self.count += 1
        self.unusable += not k.usable
        self.last = k

    def stopped(self) -> str | None:
        """The warning for a report whose last launch has no duration (absent, or every metric NaN) while an
        earlier launch has one: the sign of a capture stopped while that kernel was profiled. The launch is set
        aside like any unusable one. A capture that collected no duration at all (`--metrics` without it) is not
        one."""
        last = self.last
        if last is None or self.count < 2 or not last.q.no_duration or not self.timed_before:
            return None
        analysed = self.count - 1 - self.unusable + (0 if last.usable else 1)
        return (f"the last launch (#{last.raw.index}, {last.raw.name}) has no duration, unlike the launches before "
                "it: the capture was likely stopped while profiling it, or the profiler could not collect it; it is "
                f"set aside, {analysed:,} other launch(es) are analysed")

    def tally(self) -> ReportTally:
        return ReportTally(self.count, self.unusable, self.total, sorted(self.devices), self.units)


def _keep(raw: RawKernel) -> None:
    """A launch's metrics kept as they are (`Streamed.let_go` by default)."""


def without_passes(k: AnalysedKernel) -> None:
    """A launch's pass results let go (a report analysed by group keeps them for each group's longest launch), the
    missing quantities its ceilings added among them: its launches then share one recipe set."""
    if k.passes_missing:
        k.missing = k.missing[:-k.passes_missing]
        k.passes_missing = 0
    k.ceilings, k.diagnosis, k.reuse, k.not_applicable, k.precision_options = [], [], {}, [], []
    k.instruction_roofline = None


class Numbered:
    """The numbers and names of a streamed report's launches, all a reader's last word reads of them
    (`OpenReport.finish`: a CSV export's renumbering and the rows its warnings name), in a few bytes a launch
    instead of each launch's `RawKernel`."""

    def __init__(self) -> None:
        self.index: array[int] | list[int] = array("q")
        self._names = array("I")  # per launch: its (name, demangled name) in `_known`
        self._known: dict[tuple[str, str], int] = {}
        self._pairs: list[tuple[str, str]] = []

    def add_many(self, rows: Sequence[RawKernel]) -> None:
        """Number these launches, in order, after those numbered before."""
        known, pairs = self._known, self._pairs
        codes = []
        for k in rows:
            pair = (k.name, k.demangled_name)
            code = known.get(pair)
            if code is None:
                code = known[pair] = len(pairs)
                pairs.append(pair)
            codes.append(code)
        self.index = extend_ints(self.index, [k.index for k in rows])
        self._names.extend(codes)

    def kernels(self) -> list[RawKernel]:
        """The launches as `RawKernel`s without metrics, each made when read (a change to one is not kept: a streamed
        export is read again where its launches need renumbering, `analysis.analyze_report`)."""
        return _Made(self)


class _Made(list):  # type: ignore[type-arg]
    """`Numbered.kernels`: a list in name only; its items are made when read."""

    def __init__(self, numbered: Numbered) -> None:
        super().__init__()
        self._numbered = numbered

    def __len__(self) -> int:
        return len(self._numbered.index)

    def __getitem__(self, position: Any) -> Any:
        if not isinstance(position, int):
            raise TypeError("launches are read one at a time")
        if position < 0:
            position += len(self)
        name, demangled = self._numbered._pairs[self._numbered._names[position]]
        return RawKernel(self._numbered.index[position], name, demangled, {})

    def __iter__(self) -> Iterator[RawKernel]:
        for position in range(len(self)):
            yield self[position]
