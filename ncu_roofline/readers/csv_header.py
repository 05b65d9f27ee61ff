"""What the header and units rows of an ncu CSV export say: which columns are metrics, which metric each
column holds and in what unit, and the repeats of those rows further down.

- A column is identity when its header is one ncu writes for identity (`ID`, `Kernel Name`, `CC`, ...) or,
  having no `__`, reads like a label (holds a space or starts upper-case); every other is a metric.
- `metric_columns`: each metric's column and unit, less what an edit made unreadable, each said once in the
  file's notes: a metric named twice is read from its first column; a duration or byte count whose unit is not
  a time or byte unit is left out (a value in an unknown unit is no value), as is one with no unit where another
  duration or byte count has one (Pascal-era exports have none anywhere: read as ns and bytes).
- `RepeatedRows`: repeats of the header and units rows among the kernel rows (joined exports) are skipped;
  a second header with other columns is refused.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from ..errors import InputError
from ..knowledge import units

REEXPORT_HINT = "re-export it with `ncu --import FILE.ncu-rep --csv --page raw > FILE.csv`"

# Identity headers written by the ncu versions seen so far (the set varies by version).
IDENTITY_COLUMNS = frozenset({
    "ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Kernel Time", "Context",
    "Stream", "Block Size", "Grid Size", "Device", "CC", "Section Name", "Function Name",
    "Demangled Name", "Mangled Name",
})
_PREFIXED_METRIC_RE = re.compile(r"^[a-z][a-z_]*:")
_NAMED_LIMIT = 5


def is_metric_column(name: str) -> bool:
    """True for metric headers (`dram__bytes_read.sum`, `inst_executed`), False for identity ones."""
    if "__" in name or _PREFIXED_METRIC_RE.match(name):
        return True
    return not (not name or name in IDENTITY_COLUMNS or " " in name or name[0].isupper())


class RepeatedRows:
    """Tells the repeats of the header and units rows among the rows after them (`skip`), and
    refuses a second header with other columns; `warning` names the lines skipped."""

    def __init__(self, path: Path, header: Sequence[str], units: Sequence[str], hint: str) -> None:
        self._path, self._hint = path, hint
        self._names = [h.strip() for h in header]
        self._units = [u.strip() for u in units]
        self._skipped: list[int] = []

    def skip(self, line_no: int, row: Sequence[str], id_cell: str) -> bool:
        """Whether `row` (ending on line `line_no`, `id_cell` its cell under the first ID column) repeats the
        header or the units row."""
        ident = id_cell.strip()
        if ident and ident != "ID":
            return False  # a kernel row (the cheap test: a repeat has "ID" or nothing there)
        cells = [c.strip() for c in row]
        if cells in (self._names, self._units):
            self._skipped.append(line_no)
            return True
        if ident == "ID":
            raise InputError(self._path, f"line {line_no} is a second header row with other columns: two "
                                         "different exports were joined", self._hint)
        return False

    @property
    def warning(self) -> str:
        skipped = self._skipped
        if not skipped:
            return ""
        lines = ", ".join(map(str, skipped[:_NAMED_LIMIT])) + (" …" if len(skipped) > _NAMED_LIMIT else "")
        return (f"skipped {len(skipped)} repeated header or units row(s) (line {lines}): "
                "exports joined, or a header written again")


def check_layout(path: Path, header: list[str], header_line: int) -> None:
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


def metric_columns(header: list[str], units_row: Sequence[str], notes: list[str]) -> list[tuple[int, str, str]]:
    """The metric columns of an export: (position, name, unit as written), in header order, each metric once and
    only where its unit can be what its name says (`_first_of_each`, `_with_known_units`); `notes` gets one line
    per kind of edit found."""
    return _with_known_units(_first_of_each(header, units_row, notes), notes)


def _first_of_each(header: list[str], units: Sequence[str], notes: list[str]) -> list[tuple[int, str, str]]:
    """The metric columns (position, name, unit), each name's first only: a name the header repeats (an edited
    or pasted-together file; ncu writes each once) is read from its first column, and a note says so."""
    columns: dict[str, tuple[int, str, str]] = {}
    repeated: dict[str, list[int]] = {}
    for i, name in enumerate(header):
        if not is_metric_column(name):
            continue
        if name in columns:
            repeated.setdefault(name, [columns[name][0] + 1]).append(i + 1)
            continue
        columns[name] = (i, name, units[i].strip())
    if repeated:
        shown = "; ".join(f"{name} (columns {', '.join(map(str, at))})"
                          for name, at in list(repeated.items())[:_NAMED_LIMIT])
        more = f" and {len(repeated) - _NAMED_LIMIT} more" if len(repeated) > _NAMED_LIMIT else ""
        notes.append(f"the header names {len(repeated)} metric(s) more than once: {shown}{more}; the first column of "
                     "each is read (ncu writes each once: the file was edited or joined)")
    return list(columns.values())


def _dimension(name: str) -> str | None:
    """The SI unit a column must be in for its values to mean what its name says (`knowledge.units`): a
    duration's `s`, a byte count's `byte`; None where the name does not fix it (or the analysis does not need it)."""
    base, _, rollup = name.partition(".")
    if rollup in ("sum", "avg", "min", "max", ""):
        if base == "gpu__time_duration":
            return "s"
        if "bytes" in base and rollup == "sum":
            return "byte"
    return None


def _with_known_units(columns: list[tuple[int, str, str]], notes: list[str]) -> list[tuple[int, str, str]]:
    """`columns` less those whose unit contradicts their name (`_dimension`: an edited units row, `furlong` under a
    duration): a value in an unknown unit is no value, so such a column is left out and a note names it. An empty
    unit is unknown too where another duration or byte count has one: Pascal-era exports leave those units empty
    (durations are then read as nanoseconds, `knowledge.recipes`), but a newer one emptied by hand would be read
    1,000x off."""
    kept, wrong = [], []
    with_units = any(unit and _dimension(name) for _, name, unit in columns)
    for column in columns:
        _, name, unit = column
        wanted = _dimension(name)
        if wanted is not None and ((unit and units.si_factor(unit)[1] != wanted) or (not unit and with_units)):
            wrong.append(f"{name} in {unit!r}" if unit else f"{name} with no unit")
            continue
        kept.append(column)
    if wrong:
        more = f" and {len(wrong) - _NAMED_LIMIT} more" if len(wrong) > _NAMED_LIMIT else ""
        shown = "; ".join(wrong[:_NAMED_LIMIT])
        notes.append(f"{len(wrong)} column(s) hold no unit or one their metric cannot have ({shown}{more}): the units "
                     "row was edited; their values are left out, shown as not available")
    return kept
