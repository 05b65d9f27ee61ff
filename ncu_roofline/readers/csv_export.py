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
- Repeated header/units rows are skipped and negative counts, shares and rates left out, each
  with a warning (`csv_rows.py`).
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from .container import MAGIC
from .csv_rows import (
    RowMetrics,
    cannot_be_negative,
    drop_repeated_headers,
    impossible_values_warning,
    negative_cells,
)
from .ncu_rep import LFS_PREFIX, kernel_from_metrics, sniff_problem
from .record import RawKernel, RawReport

CSV_UNCHECKABLE = ("an export cut between two kernel rows cannot be checked for completeness: the CSV "
                   "records no kernel count")
REEXPORT_HINT = "re-export it with `ncu --import FILE.ncu-rep --csv --page raw > FILE.csv`"

# Identity headers written by the ncu versions seen so far (the set varies by version).
IDENTITY_COLUMNS = frozenset({
    "ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Kernel Time", "Context",
    "Stream", "Block Size", "Grid Size", "Device", "CC", "Section Name", "Function Name",
    "Demangled Name", "Mangled Name",
})
# `==PROF== ...`, `==WARNING== ...`, `==ERROR== ...` (and any other `==WORD==` ncu marker).
_EOL_RE = re.compile(r"\r\n|\r|\n")
_MARKER_RE = re.compile(r"^==([A-Z]+)==\s?")
# The header row: ncu always writes the ID column first.
_HEADER_START_RE = re.compile(r'^\s*(?:"ID"|ID)\s*,')
_PREFIXED_METRIC_RE = re.compile(r"^[a-z][a-z_]*:")
_TRIPLE_RE = re.compile(r"^\(?\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\)?$")
_INT_RE = re.compile(r"^\d+$")
# Bytes other than tab, LF, FF, CR and ESC below 0x20 (or DEL) do not occur in text exports.
_CONTROL_BYTES = frozenset(set(range(0x20)) - {0x09, 0x0A, 0x0C, 0x0D, 0x1B}) | {0x7F}


@dataclass
class _Marker:
    """One `==WORD== text` line found anywhere in the file."""

    line_no: int
    kind: str
    text: str


class _Lines:
    """Physical lines of the text, minus ncu marker lines, remembering the last line number read."""

    def __init__(self, text: str) -> None:
        self._text = text
        self.line_no = 0
        self.markers: list[_Marker] = []

    def _physical(self) -> Iterator[str]:
        # Lines end at LF, CR or CR LF (as `open(..., newline="")` splits them), each sliced from
        # the text when reached: no copy of the whole file (io.StringIO holds 4 bytes a character).
        text, start, end = self._text, 0, len(self._text)
        while start < end:
            eol = _EOL_RE.search(text, start)
            stop = eol.end() if eol else end
            yield text[start:stop]
            start = stop

    def __iter__(self) -> Iterator[str]:
        for line in self._physical():
            self.line_no += 1
            match = _MARKER_RE.match(line)
            if match:
                self.markers.append(_Marker(self.line_no, match.group(1), line[match.end():].strip()))
                continue
            yield line


def is_metric_column(name: str) -> bool:
    """True for metric headers (`dram__bytes_read.sum`, `inst_executed`), False for identity ones."""
    if "__" in name or _PREFIXED_METRIC_RE.match(name):
        return True
    return not (not name or name in IDENTITY_COLUMNS or " " in name or name[0].isupper())


def parse_triple(cell: str) -> tuple[int, int, int] | None:
    """`(256, 1, 1)` (brackets and spaces optional) as a tuple; None when empty or unreadable."""
    match = _TRIPLE_RE.match(cell.strip())
    if match is None:
        return None
    return (int(match.group(1)), int(match.group(2)), int(match.group(3)))


def _decode(path: Path, data: bytes, warnings: list[str]) -> str:
    """The file's text; InputError for anything that is not a CSV text file."""
    if not data:
        raise InputError(
            path,
            "the file is empty (0 bytes)",
            "export the CSV again with `ncu --csv --page raw` (e.g. `ncu --import R.ncu-rep "
            "--csv --page raw > R.csv`)",
        )
    head = data[:64]
    if head.startswith(LFS_PREFIX):
        raise InputError(path, sniff_problem(head) or "this is a Git LFS pointer")
    if head.startswith(MAGIC):
        raise InputError(
            path,
            "this is an Nsight Compute report (.ncu-rep), not a CSV export",
            "rename it to end in .ncu-rep, or export CSV with "
            "`ncu --import FILE.ncu-rep --csv --page raw > FILE.csv`",
        )
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        # PowerShell's `>` redirection writes UTF-16 with a byte-order mark.
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise _not_text(path, f"undecodable UTF-16 at byte {exc.start}") from exc
    sample = data[:65536]
    controls = sum(1 for b in sample if b in _CONTROL_BYTES)
    if b"\x00" in sample or controls > max(2, len(sample) // 100):
        raise _not_text(path, "it contains binary data")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        text = data.decode("utf-8-sig", errors="replace")
        bad = text.count("\ufffd")
        warnings.append(
            f"the file is not valid UTF-8 (first bad byte at offset {exc.start}); "
            f"{bad} undecodable byte sequence(s) were replaced with U+FFFD"
        )
        return text


def _not_text(path: Path, why: str) -> InputError:
    return InputError(
        path,
        f"not a CSV text file ({why})",
        "pass a .ncu-rep report, or the CSV text written by `ncu --csv --page raw`",
    )


def _marker_summary(markers: list[_Marker], kind: str) -> str:
    texts = [m.text for m in markers if m.kind == kind and m.text]
    if not texts:
        return ""
    more = f" (+{len(texts) - 1} more)" if len(texts) > 1 else ""
    return f"; ncu reported: {texts[0]}{more}"


def _check_layout(path: Path, header: list[str], header_line: int) -> None:
    names = set(header)
    if "Metric Name" in names or "Metric Value" in names:
        raise InputError(
            path,
            f"line {header_line} is the header of the `--page details` (one row per metric) CSV "
            "layout; only the `--page raw` CSV (one row per kernel) is supported",
            REEXPORT_HINT,
        )
    if not any(is_metric_column(name) for name in header):
        raise InputError(
            path,
            f"the header (line {header_line}) has no metric columns (names like "
            "`dram__bytes_read.sum`)",
            "export with metric names, not labels: `ncu --import FILE.ncu-rep --csv --page raw "
            "--print-metric-name name > FILE.csv`",
        )


def _read_rows(
    path: Path, lines: _Lines, rows_source: Iterator[str]
) -> list[tuple[int, list[str]]]:
    """Every non-blank CSV row after the header, with the file line number it ends on."""
    rows: list[tuple[int, list[str]]] = []
    reader = csv.reader(rows_source)
    while True:
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            raise InputError(
                path,
                f"line {lines.line_no}: malformed CSV ({exc})",
                "the export may be truncated or damaged; " + REEXPORT_HINT,
            ) from exc
        if len(row) <= 1 and not "".join(row).strip():
            continue  # a blank line (a units row of empty cells is not blank: it has many)
        rows.append((lines.line_no, row))
    return rows


def _identity(cells: dict[str, str]) -> dict[str, object]:
    """RawKernel keyword arguments from the identity columns that hold a value."""
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


def _indices(rows: list[tuple[int, dict[str, str]]], warnings: list[str]) -> list[int]:
    ids = [cells.get("ID", "") for _, cells in rows]
    if all(_INT_RE.match(i) for i in ids) and len(set(map(int, ids))) == len(ids):
        return [int(i) for i in ids]
    warnings.append("the ID column is missing, not numeric or repeats; kernels are numbered by row")
    return list(range(len(rows)))


def read_csv_export(path: Path) -> RawReport:
    """Read every kernel of an `ncu --csv --page raw` export; raise InputError for anything unusable."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(path, f"cannot read the file ({exc.strerror or exc})") from exc
    warnings: list[str] = []
    text = _decode(path, data, warnings)
    del data  # only the text is needed from here on

    lines = _Lines(text)
    source = iter(lines)
    skipped = 0
    header: list[str] | None = None
    for line in source:
        if _HEADER_START_RE.match(line):
            header = [name.strip() for name in next(csv.reader([line]))]
            break
        if line.strip():
            skipped += 1
    header_line = lines.line_no
    if header is None:
        if not text.strip():
            reason = "the file holds only blank lines (no CSV header row)"
        else:
            reason = (
                'no CSV header row found (expected a row starting "ID","Process ID",...)'
                + _marker_summary(lines.markers, "ERROR")
            )
        raise InputError(
            path, reason, "pass the CSV written by `ncu --csv --page raw`, or a .ncu-rep report"
        )
    _check_layout(path, header, header_line)
    if skipped:
        warnings.append(f"skipped {skipped} line(s) before the CSV header (program output?)")

    rows = _read_rows(path, lines, source)
    warnings[:0] = [m.text for m in lines.markers if m.kind == "WARNING" and m.text]
    warnings.extend(f"ncu error: {m.text}" for m in lines.markers if m.kind == "ERROR" and m.text)

    if not rows:
        raise InputError(
            path,
            f"the CSV has a header row (line {header_line}) but no units row and no kernel rows "
            "(0 kernels)" + _marker_summary(lines.markers, "ERROR"),
            "the export stops after the header; " + REEXPORT_HINT,
        )
    for index, (line_no, row) in enumerate(rows):
        if len(row) != len(header):
            last = index == len(rows) - 1
            why = (
                "the export looks truncated (cut off while it was written or copied)"
                if last and len(row) < len(header)
                else "the file is malformed or was edited"
            )
            raise InputError(
                path,
                f"line {line_no} has {len(row)} field(s) but the header has {len(header)}: {why}",
                REEXPORT_HINT,
            )
    if not text.endswith(("\n", "\r")) and text.rstrip().splitlines()[-1].count('"') % 2:
        raise InputError(
            path,
            f"line {rows[-1][0]} ends inside a quoted value: the export looks truncated",
            REEXPORT_HINT,
        )

    id_column = header.index("ID")
    units_line, units = rows[0]
    if units[id_column].strip():
        raise InputError(
            path,
            f"line {units_line} should be the units row (empty under the ID column) but its ID is "
            f"{units[id_column].strip()!r}: the CSV has no units row",
            "without units the values cannot be converted; " + REEXPORT_HINT,
        )
    data_rows = drop_repeated_headers(path, header, units, rows[1:], warnings, REEXPORT_HINT)
    if not data_rows:
        raise InputError(
            path,
            "the CSV export holds no kernel rows (0 kernels)" + _marker_summary(lines.markers, "ERROR"),
            "an export cut after its units row looks like this (copy it again); otherwise check that "
            "ncu's kernel filters (-k, --launch-skip, --launch-count) matched a launch",
        )

    metric_columns = [(i, name, units[i].strip()) for i, name in enumerate(header)
                      if is_metric_column(name)]
    identity_columns = [(i, name) for i, name in enumerate(header) if not is_metric_column(name)]
    cells_by_row = [
        (line_no, {name: row[i].strip() for i, name in identity_columns})
        for line_no, row in data_rows
    ]
    indices = _indices(cells_by_row, warnings)

    columns = {name: (i, unit) for i, name, unit in metric_columns}
    signed = [(i, name) for i, name, _ in metric_columns if cannot_be_negative(name)]
    kernels: list[RawKernel] = []
    impossible: list[tuple[str, str, float]] = []
    for index, (_, row), (_, cells) in zip(indices, data_rows, cells_by_row, strict=False):
        metrics = RowMetrics(row, columns)
        kernel_name = cells.get("Kernel Name", "")
        name = cells.get("Function Name") or kernel_name or f"kernel {index}"
        demangled = cells.get("Demangled Name") or kernel_name or name
        for n, value in negative_cells(row, signed):
            metrics.drop(n)
            impossible.append((f"kernel {index} ({name})", n, value))
        kernels.append(kernel_from_metrics(index, name, demangled, metrics, **_identity(cells)))
    if impossible:
        warnings.append(impossible_values_warning(impossible))
    return RawReport(
        path=str(path), source_format="csv", kernels=kernels, ncu_version=None, warnings=warnings,
        completeness=CSV_UNCHECKABLE,
    )
