"""Read the CSV that `ncu --csv --page raw` (or `ncu --import R.ncu-rep --csv --page raw`) writes.

Layout: optional `==PROF==` / `==WARNING==` / `==ERROR==` lines (and, when ncu profiled a live
program, that program's own output) before one header row; the header starts with identity
columns (`"ID","Process ID","Process Name","Host Name","Kernel Name",...,"Device","CC"`, the set
varies by ncu version) followed by metric names (`dram__bytes_read.sum`, ...); then one units row
(empty under identity columns); then one row per profiled kernel.

Decisions, so both readers give the same RawKernel:
- Values keep the unit as written (`usecond`, `Kbyte`, `Tbyte/second`); `units.to_si` converts.
- Numbers may carry thousands separators (`"10,240,000"`, `"1,234.5"`) and become floats;
  `nan`/`inf` become float NaN/inf; `n/a` or an empty cell means missing (metric left out);
  any other text stays a string.
- A column is identity when its header is one ncu writes for identity (`ID`, `Kernel Name`,
  `CC`, ...) or, having no `__`, reads like a label (holds a space or starts upper-case). Every
  other column is a metric: `dram__bytes_read.sum`, `group:...`, but also the source-counter
  metrics without `__` (`inst_executed`, `memory_l2_sectors_global`, `derived_tempMetric0`).
- `ID` becomes `RawKernel.index` when every row has a distinct whole-number ID (the normal case:
  0, 1, 2, ... in row order); otherwise rows are numbered 0, 1, 2, ... and a warning says so.
- `Kernel Name` fills `name` and `demangled_name`; `Function Name` wins for `name` and
  `Demangled Name` for `demangled_name`; `Mangled Name` fills `mangled_name`.
- `Device` is the CUDA device ordinal in real exports (`"0"`); a purely numeric Device is not a
  name, so the `device__attribute_display_name` metric names the GPU. A non-numeric Device wins.
- Identity columns win over the equivalent `device__`/`launch__` metrics where both are present.
- `==WARNING==` texts go to `RawReport.warnings` (as do `==ERROR==` texts, marked as errors).
- Repeated header or units rows (exports joined with `cat`, or a header ncu wrote again for a
  second process) are not kernels: rows identical to the header or to the units row are skipped
  with a warning; a second header with other columns means two different exports were joined,
  which is refused (`RepeatedRows`).
- A negative count, share or rate the analysis reads is left out, with one warning per file naming
  its columns (`csv_rows.py`); a column it never reads is never checked (Nsight Compute itself
  writes negative counters it has no use for). What it reads: every column its recipe and unit
  tables name (`analysis_columns`), in every row, and whatever else it asks a row for.
- The file is read as it is iterated (`CsvExport`, lines from `csv_text.py`, up to 64 lines ahead
  so that a block of rows parses its number columns at once): a fault further down is raised when
  the reading reaches it, and the kernels handed out before it are no report.
"""

from __future__ import annotations

import collections
import csv
import dataclasses
import functools
import itertools
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..knowledge import recipes, throughputs
from .csv_cells import CellPicker, plain_row, quoted_block
from .csv_header import REEXPORT_HINT, RepeatedRows, check_layout, is_metric_column, metric_columns
from .csv_impossible import ImpossibleValues
from .csv_rows import Columns, RowMetrics
from .csv_text import Marker, TextLines
from .ncu_rep import identity_reads, kernel_from_metrics
from .record import RawKernel, RawReport

CSV_UNCHECKABLE = ("an export cut between two kernel rows cannot be checked for completeness: the CSV "
                   "records no kernel count")

# The header row: ncu always writes the ID column first.
_HEADER_START_RE = re.compile(r'^\s*(?:"ID"|ID)\s*,')
_METRIC_NAME_RE = re.compile(r"^[a-z][a-z0-9_]*__[a-z0-9_.]+$")
_TRIPLE_RE = re.compile(r"^\(?\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\)?$")
_INT_RE = re.compile(r"^\d+$")
_BLOCK_ROWS = 64  # lines read as one block: ~2 MB of a full-set export
# csv.reader refuses a cell of more than 131,072 characters by default, where the rows read as bytes take any; a
# demangled name of templated code can be longer. Raised for the process (csv keeps one limit) once an export is read.
_FIELD_LIMIT = (1 << 31) - 1


def parse_triple(cell: str) -> tuple[int, int, int] | None:
    """`(256, 1, 1)` (brackets and spaces optional) as a tuple; None when empty or unreadable."""
    match = _TRIPLE_RE.match(cell.strip())
    if match is None:
        return None
    return (int(match.group(1)), int(match.group(2)), int(match.group(3)))


@functools.cache
def analysis_columns() -> frozenset[str]:
    """Every metric name the knowledge tables give the model (`knowledge.recipes`: its recipes, peaks and
    the counts its passes weigh; `knowledge.throughputs`: the unit throughputs): the columns any analysis
    of an export may read, checked for impossible values in every row, analysed or not, so that a report
    read alone warns as one analysed does. Found by walking the tables' values (strings in tuples, dicts
    and dataclasses): a table added there is covered without a list kept here. The stored forms of a count
    the resolver falls back to (per cycle, per second) are checked where the analysis reads them."""
    found: set[str] = set()
    pending: list[object] = [value for module in (recipes, throughputs) for name, value in vars(module).items()
                             if name.isupper()]
    while pending:
        value = pending.pop()
        if isinstance(value, str):
            if _METRIC_NAME_RE.match(value):  # a metric's name, not a note, a label or a `breakdown:` list
                found.add(value)
        elif isinstance(value, dict):
            pending.extend(value.values())
        elif isinstance(value, (tuple, list, set, frozenset)):
            pending.extend(value)
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            pending.extend(getattr(value, field.name) for field in dataclasses.fields(value))
    return frozenset(found)


def _marker_summary(markers: list[Marker], kind: str) -> str:
    texts = [m.text for m in markers if m.kind == kind and m.text]
    if not texts:
        return ""
    more = f" (+{len(texts) - 1} more)" if len(texts) > 1 else ""
    return f"; ncu reported: {texts[0]}{more}"


_IDENTITIES_KEPT = 4096  # distinct launch identities an export remembers (repeated launches share one)


_LIKE_KEPT = 16  # launches of one identity kept to make the next ones like (`_Identity.like`)


class _Identity:
    """What a row's identity cells but its ID give its `RawKernel` (the same cells give the same: the launches of
    one kernel read them once): its kernel, function and demangled names, the other fields (`_parse_identity`), and
    a launch made for each reading of the metrics the rest of its fields come from (`like`, by `identity_reads`: the
    next launch that reads the same is made from it, `RawKernel.again`)."""

    __slots__ = ("demangled", "fields", "function", "kernel", "like")

    def __init__(self, cells: dict[str, str]) -> None:
        self.kernel = cells.get("Kernel Name", "")
        self.function = cells.get("Function Name", "")
        self.demangled = cells.get("Demangled Name", "")
        self.fields = _parse_identity(cells)
        self.like: dict[tuple[Any, ...], RawKernel] = {}

    def launch(self, index: int, name: str, demangled: str, metrics: RowMetrics) -> RawKernel:
        """The row's kernel, as `kernel_from_metrics` makes it (reading the same metrics, as it reads them)."""
        held = identity_reads(metrics, self.fields)  # (metrics of a float or a string: they hash)
        like = self.like.get(held)
        if like is not None:
            return like.again(index, metrics)
        kernel = kernel_from_metrics(index, name, demangled, metrics, **self.fields)
        if len(self.like) < _LIKE_KEPT:  # (a copy: a launch's metrics are let go once it is analysed)
            self.like[held] = kernel.again(kernel.index, {})
        return kernel


def _parse_identity(cells: dict[str, str]) -> dict[str, object]:
    out: dict[str, object] = {}
    for column, field_name in (("Process Name", "process_name"), ("Host Name", "host_name"),
                               ("Mangled Name", "mangled_name")):
        if cells.get(column):
            out[field_name] = cells[column]
    device = cells.get("Device", "")
    if device and not _INT_RE.match(device):
        out["device"] = device
    if cells.get("CC"):
        out["compute_capability"] = cells["CC"]
    for column, field_name in (("Grid Size", "grid_size"), ("Block Size", "block_size")):
        triple = parse_triple(cells.get(column, ""))
        if triple is not None:
            out[field_name] = triple
    stream = cells.get("Stream", "")
    if _INT_RE.match(stream):
        out["stream_id"] = int(stream)
    return out


class CsvExport:
    """An export read as it is iterated: `kernels()` yields each row's kernel, then `report()`.

    The header is read (and checked) when the export is opened; each kernel row is parsed when
    reached, so a consumer that keeps only what it needs of each kernel never holds the file.
    A fault found further down (a malformed row, a cut last row) raises InputError from the
    iteration: the kernels yielded before it are not a report.
    """

    def __init__(self, path: str | Path, by_row: bool = False) -> None:
        self.path = Path(path)
        self.by_row = by_row  # every row numbered by its position from the start (the IDs cannot number them)
        self._decoding: list[str] = []
        self._lines = TextLines(self.path, self._decoding)
        self._source = iter(self._lines)
        self._skipped: list[str] = []  # lines before the header
        self._notes: list[str] = []  # repeated rows, IDs, impossible values
        self._renumber = False
        self._unnamed: list[tuple[int, bool]] = []  # (row position, demangled name too) of rows with no name
        self._impossible = ImpossibleValues()  # the values its rows left out where they were read
        self._done = False
        self._blocks = True  # rows read in blocks (`TextLines.take_rows`): until no columns are learnt to parse at once
        if csv.field_size_limit() < _FIELD_LIMIT:
            csv.field_size_limit(_FIELD_LIMIT)
        skipped = 0
        header: list[str] | None = None
        for line in self._source:
            if _HEADER_START_RE.match(line):
                header = [name.strip() for name in next(csv.reader([line]))]
                break
            if line.strip():
                skipped += 1
        self.header_line = self._lines.line_no
        if header is None:
            if not skipped and not self._lines.markers:
                reason = "the file holds only blank lines (no CSV header row)"
            else:
                reason = ('no CSV header row found (expected a row starting "ID","Process ID",...)'
                          + _marker_summary(self._lines.markers, "ERROR"))
            raise InputError(self.path, reason,
                             "pass the CSV written by `ncu --csv --page raw`, or a .ncu-rep report")
        check_layout(self.path, header, self.header_line)
        if skipped:
            self._skipped.append(f"skipped {skipped} line(s) before the CSV header (program output?)")
        self.header = header

    def kernels(self) -> Iterator[RawKernel]:
        """Each kernel row as a RawKernel, in file order (iterate once)."""
        path, header = self.path, self.header
        rows = self._rows()
        first = next(rows, None)
        if first is None:
            raise InputError(
                path,
                f"the CSV has a header row (line {self.header_line}) but no units row and no kernel rows "
                "(0 kernels)" + _marker_summary(self._lines.markers, "ERROR"),
                "the export stops after the header; " + REEXPORT_HINT,
            )
        units_line, units = first
        id_column = header.index("ID")
        if units[id_column].strip():
            raise InputError(
                path,
                f"line {units_line} should be the units row (empty under the ID column) but its ID is "
                f"{units[id_column].strip()!r}: the CSV has no units row",
                "without units the values cannot be converted; " + REEXPORT_HINT,
            )
        repeated = RepeatedRows(path, header, units, REEXPORT_HINT)
        metrics_at = metric_columns(header, units, self._notes)
        identity_columns = [(i, name) for i, name in enumerate(header) if not is_metric_column(name)]
        identity_names = [name for _, name in identity_columns]
        identity_cells = CellPicker([i for i, _ in identity_columns])
        id_at = len(identity_names) - 1 - identity_names[::-1].index("ID")  # a repeated column: its last, as a dict
        known: dict[tuple[str, ...], _Identity] = {}  # by the identity cells but the ID
        columns = Columns(((name, (i, unit)) for i, name, unit in metrics_at), impossible=self._impossible,
                          watched=analysis_columns())
        seen_ids = SeenIds()
        count = 0
        first_id = identity_names.index("ID")  # (the repeats' test reads the first, as the units row's does)
        for line_no, row in rows:
            cells = identity_cells(row)
            if repeated.skip(line_no, row, cells[first_id]):
                continue
            ident = cells[id_at].strip()
            key = (*cells[:id_at], *cells[id_at + 1:])
            found = known.get(key)
            if found is None:
                if len(known) >= _IDENTITIES_KEPT:
                    known.clear()
                found = known[key] = _Identity({name: cell.strip() for name, cell in zip(identity_names, cells,
                                                                                         strict=True)})
            if _INT_RE.match(ident) and seen_ids.first(number := int(ident)):
                index = count if self.by_row else number
            else:
                index = count
                self._renumber = True
            metrics = RowMetrics(row, columns, count)
            name = found.function or found.kernel
            count += 1
            if name:
                yield found.launch(index, name, found.demangled or found.kernel or name, metrics)
            else:  # named by its index; `report` renames it if the IDs turn out not to number rows
                name = f"kernel {index}"
                self._unnamed.append((count - 1, not found.demangled))
                yield kernel_from_metrics(index, name, found.demangled or found.kernel or name, metrics, **found.fields)
            if count == 1:  # the first kernel has been used (analysed, where this feeds an analysis)
                columns.learn_hot(metrics)
                if columns.hot is None:  # no columns to parse at once: blocks would only hold text
                    self._blocks = False
                    block = getattr(row, "block", None)
                    if block is not None:
                        block.release()
        if repeated.warning:
            self._notes.append(repeated.warning)
        if not count:
            raise InputError(
                path,
                "the CSV export holds no kernel rows (0 kernels)" + _marker_summary(self._lines.markers, "ERROR"),
                "an export cut after its units row looks like this (copy it again); otherwise check that "
                "ncu's kernel filters (-k, --launch-skip, --launch-count) matched a launch",
            )
        if self._renumber:
            self._notes.append("the ID column is missing, not numeric or repeats; kernels are numbered by row")
        self._done = True

    def _rows(self) -> Iterator[tuple[int, Sequence[str]]]:
        """Every non-blank row after the header with the line it ends on; a row is checked against the
        header once the next one is read (the last row may be cut, any other is damaged)."""
        path, width = self.path, len(self.header)
        pending: tuple[int, Sequence[str]] | None = None
        for row_line, row in self._lines_read():
            if len(row) <= 1 and not "".join(row).strip():
                continue  # a blank line (a units row of empty cells is not blank: it has many)
            if pending is not None:
                _check_width(path, pending, width, last=False)
                yield pending
            pending = (row_line, row)
        if pending is None:
            return
        _check_width(path, pending, width, last=True)
        if not self._lines.last_line.endswith(("\n", "\r")) and self._lines.last_text.count('"') % 2:
            raise InputError(path, f"line {pending[0]} ends inside a quoted value: the export looks truncated",
                             REEXPORT_HINT)
        yield pending

    def _lines_read(self) -> Iterator[tuple[int, Sequence[str]]]:
        """Each row as `_rows` takes it, blank ones too: runs of all-quoted rows read from the file at once as one
        block (`TextLines.take_rows`, up to `_BLOCK_ROWS` lines) while the reader parses columns at once (`_blocks`);
        any other line on its own: an all-quoted row as a block of one (no cell too long for csv.reader, no list of
        every cell), else by csv.reader (which may read on over the next lines to end a quoted line break)."""
        path, lines, source = self.path, self._lines, self._source
        back: collections.deque[tuple[int, str]] = collections.deque()  # lines read ahead, not yet rows
        made: collections.deque[Any] = collections.deque()  # the last blocks formed
        last_no = 0

        def reading_on() -> Iterator[str]:  # the lines after one, for csv.reader: those read ahead first
            nonlocal last_no
            while back:
                last_no, ahead = back.popleft()
                yield ahead
            for ahead in source:
                last_no = lines.line_no
                yield ahead

        ended = False
        while True:
            if not back and not ended:
                block = lines.take_rows(_BLOCK_ROWS) if self._blocks else []  # the usual rows, read at once
                if block:
                    first_no = lines.line_no - len(block) + 1
                    if block[0].block is not None:
                        made.append(block[0].block)
                        if len(made) > 2:
                            made.popleft().parsed = None
                    for k, quoted_row in enumerate(block):
                        yield first_no + k, quoted_row
                    continue
                line = next(source, None)  # any other line, on its own
                if line is None:
                    ended = True
                else:
                    back.append((lines.line_no, line))
            if not back:
                if ended:
                    return
                continue
            last_no, line = back.popleft()
            raw = line.encode("utf-8", "surrogatepass")
            alone = quoted_block([raw]) if plain_row(raw) else []  # an all-quoted row alone: as a block reads one
            if alone:
                yield last_no, alone[0]
                continue
            try:  # csv decides (it may read on, to end a quoted line break)
                row = next(csv.reader(itertools.chain((line,), reading_on())))
            except csv.Error as exc:
                raise InputError(path, f"line {last_no}: malformed CSV ({exc})",
                                 "the export may be truncated or damaged; " + REEXPORT_HINT) from exc
            yield last_no, row

    @property
    def renumbered(self) -> bool:
        """Whether `report` numbers the kernels by row (their IDs are missing, not numeric or repeat): known once
        the rows are read to the end."""
        return self._renumber

    def close(self) -> None:
        """Close the file (after the last row, or when the reading stops early)."""
        self._lines.close()

    def report(self, kernels: list[RawKernel]) -> RawReport:
        """The RawReport of the kernels `kernels()` yielded (each renumbered by row when the IDs cannot
        number them), with every warning of the file."""
        if not self._done:
            raise RuntimeError("CsvExport.report() before kernels() was read to the end")
        if self._renumber:
            for position, kernel in enumerate(kernels):
                kernel.index = position
            for position, demangled_too in self._unnamed:
                kernels[position].name = f"kernel {position}"
                if demangled_too:
                    kernels[position].demangled_name = kernels[position].name
        notes = list(self._notes)
        impossible = self._impossible.warning(lambda p: f"kernel {kernels[p].index} ({kernels[p].name})")
        if impossible:  # the values read up to now: the analysis reads each kernel as it is handed out
            notes.append(impossible)
        markers = self._lines.markers
        warnings = [m.text for m in markers if m.kind == "WARNING" and m.text]
        warnings += self._decoding + self._skipped
        warnings += [f"ncu error: {m.text}" for m in markers if m.kind == "ERROR" and m.text]
        warnings += notes
        return RawReport(path=str(self.path), source_format="csv", kernels=kernels, ncu_version=None,
                         warnings=warnings, completeness=CSV_UNCHECKABLE)


class SeenIds:
    """The kernel IDs an export's rows hold so far: a bit per ID below `DENSE` (ncu numbers rows 0, 1, 2, ...: 200,000
    launches take 25 kB, not the 14 MB of a set of them), a set above."""

    DENSE = 1 << 24  # a bitmap of at most 2 MiB

    def __init__(self) -> None:
        self._bits = bytearray()
        self._others: set[int] = set()

    def first(self, number: int) -> bool:
        """Whether `number` is seen for the first time (it is seen from now on)."""
        if number >= self.DENSE:
            if number in self._others:
                return False
            self._others.add(number)
            return True
        byte, bit = number >> 3, 1 << (number & 7)
        bits = self._bits
        if byte >= len(bits):
            grow = max(byte + 1 - len(bits), len(bits))  # doubling: amortised growth
            bits.extend(bytes(min(grow, (self.DENSE >> 3) - len(bits))))
        if bits[byte] & bit:
            return False
        bits[byte] |= bit
        return True


def _check_width(path: Path, row: tuple[int, Sequence[str]], width: int, last: bool) -> None:
    line_no, cells = row
    if len(cells) == width:
        return
    why = ("the export looks truncated (cut off while it was written or copied)" if last and len(cells) < width
           else "the file is malformed or was edited")
    raise InputError(path, f"line {line_no} has {len(cells)} field(s) but the header has {width}: {why}",
                     REEXPORT_HINT)


def read_csv_export(path: str | Path) -> RawReport:
    """Read every kernel of an `ncu --csv --page raw` export; raise InputError for anything unusable."""
    export = CsvExport(path)
    return export.report(list(export.kernels()))
