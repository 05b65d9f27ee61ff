"""Input readers: turn an Nsight Compute report or its CSV export into the neutral `RawReport`.

`read_report` picks the reader from the file's first bytes and name:
- the `NVR\\0` report signature -> the `.ncu-rep` reader;
- `.csv` (any case), or text that looks like an ncu CSV export (`"ID"`, `==PROF==`, ... in its
  first 64 KiB) -> the CSV reader, whatever the file is called;
- `.ncu-rep` / `.nsight-cuprof-report` -> the `.ncu-rep` reader, which explains empty files,
  Git LFS pointers and wrong signatures;
- anything else -> InputError naming the file.

Only regular files are read (a device or a pipe is refused before it is opened).
`open_report` hands the kernels out one at a time (a CSV export is parsed row by row as they are
taken, so a caller that keeps only what it needs of each never holds the file);
`read_report_isolated` runs NVIDIA's reader in a child process (`isolation.py`).
"""

from __future__ import annotations

import dataclasses
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from .container import MAGIC
from .csv_export import CsvExport
from .isolation import AVAILABLE as ISOLATION_AVAILABLE
from .isolation import ReaderCrashed, shared_pool
from .ncu_rep import LFS_PREFIX, detach, read_ncu_rep, sniff_problem
from .record import Metric, RawKernel, RawReport

__all__ = ["Metric", "OpenReport", "RawKernel", "RawReport", "ReaderCrashed", "detect_format", "open_report",
           "read_report", "read_report_isolated"]

REPORT_SUFFIXES = (".ncu-rep", ".nsight-cuprof-report")
# What an analysis's reader processes import once (`api.analysis.analyze(..., isolate=True)`).
ANALYSIS_PRELOAD = ("ncu_roofline.api.analysis", "ncu_report")
COMMAND = "ncu-roofline"
# The commands that read `.ncu-rep` files in the analysis's reader processes (`batch` has a pool of its own).
_READING_COMMANDS = frozenset({"report", "diff", "trend", "github"})


def start_for_command(argv: list[str]) -> int:
    """When this process is the `ncu-roofline` command about to read `.ncu-rep` files (told by its arguments
    alone, before they are parsed), start their reader processes now, so that their start-up overlaps the rest of
    the package loading: a JSON report of one small capture takes 0.44 s instead of 0.60 s. A library import, a
    notebook, a reader process itself, `--help` or `batch` start nothing. Returns how many files were counted."""
    if not ISOLATION_AVAILABLE or not argv or Path(argv[0]).name != COMMAND:
        return 0
    words = [a for a in argv[1:] if not a.startswith("-")]
    if not words or words[0] not in _READING_COMMANDS or any(a in ("-h", "--help") for a in argv[1:]):
        return 0
    return start_readers(words[1:])


def start_readers(paths: Iterable[str | Path]) -> int:
    """Start the reader processes `analyze(..., isolate=True)` will read these `.ncu-rep` files in, now: their
    start-up (a fresh interpreter importing the analysis and NVIDIA's reader, about 0.3 s) then overlaps whatever
    the caller does before it analyses. Told by the name, without opening the file (`analyze` sniffs each one): a
    report named otherwise only misses the head start. Returns how many files were counted."""
    if not ISOLATION_AVAILABLE:
        return 0
    count = sum(1 for path in paths if str(path).lower().endswith(REPORT_SUFFIXES))
    if count:
        shared_pool(ANALYSIS_PRELOAD).warm(count)
    return count
_PASS_HINT = (
    "pass a .ncu-rep report, or the CSV written by `ncu --csv --page raw` "
    "(e.g. `ncu --import R.ncu-rep --csv --page raw > R.csv`)"
)
_CSV_MARKERS = ('"ID"', "==PROF==", "==WARNING==", "==ERROR==")
_SNIFF_BYTES = 65536


def _as_text(data: bytes) -> str | None:
    """The bytes as text when they decode as UTF-8 / UTF-16 text (a cut last character is fine)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data[: len(data) - len(data) % 2].decode("utf-16", errors="ignore")
    if b"\x00" in data:
        return None
    for cut in range(4):  # the sample may end inside a multi-byte character
        try:
            return data[: len(data) - cut].decode("utf-8-sig")
        except UnicodeDecodeError:
            continue
    return None


def _looks_like_csv(text: str) -> bool:
    return any(marker in text for marker in _CSV_MARKERS)


def _check_path(path: Path) -> None:
    """Refuse what is not a regular file before anything opens it (a FIFO would block, /dev/zero never end)."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise InputError(path, "no such file", _PASS_HINT) from None
    except OSError as exc:
        raise InputError(path, f"cannot read the file ({exc.strerror or exc})") from exc
    if stat.S_ISDIR(mode):
        raise InputError(
            path,
            "is a directory, not a report file",
            f"pass the report files inside it (e.g. {path}/*.ncu-rep), not the folder",
        )
    if not stat.S_ISREG(mode):
        raise InputError(path, "not a regular file (a device, pipe or socket)", _PASS_HINT)


def detect_format(path: str | Path) -> str:
    """`ncu-rep` or `csv`: which reader `read_report` would use; InputError when neither fits."""
    path = Path(path)
    _check_path(path)
    if path.suffix.lower() == ".csv":
        return "csv"
    try:
        with path.open("rb") as fh:
            sample = fh.read(_SNIFF_BYTES)
    except OSError as exc:
        raise InputError(path, f"cannot read the file ({exc.strerror or exc})") from exc
    head = sample[:64]
    if head.startswith(MAGIC):
        return "ncu-rep"
    text = _as_text(sample)
    if text is not None and _looks_like_csv(text):
        return "csv"
    if path.suffix.lower() in REPORT_SUFFIXES:
        return "ncu-rep"
    if not head:
        raise InputError(path, "the file is empty (0 bytes)", _PASS_HINT)
    if head.startswith(LFS_PREFIX):
        raise InputError(path, sniff_problem(head) or "this is a Git LFS pointer")
    raise InputError(
        path,
        "not an Nsight Compute report or ncu CSV export (unrecognised content)",
        _PASS_HINT,
    )


@dataclass
class OpenReport:
    """An input file being read: its kernels one at a time, then the RawReport of those kept.

    A CSV export is parsed row by row as `kernels` is iterated (the file is never held whole);
    a `.ncu-rep` report is opened whole by NVIDIA's reader and reads its metrics on demand.
    Iterate `kernels` to the end, then call `finish` with the kernels (the same objects): a
    fault further down the file raises InputError from the iteration.
    """

    path: Path
    kernels: Iterator[RawKernel]
    finish: Callable[[list[RawKernel]], RawReport]
    close: Callable[[], None] = lambda: None  # the file, when the reading stops early or fails
    # Whether `finish` numbers the kernels by row, not as they were handed out (a CSV export whose IDs cannot
    # number them: known once they are read); `open_report(..., by_row=True)` numbers them so from the start.
    renumbered: Callable[[], bool] = lambda: False


def open_report(path: str | Path, by_row: bool = False) -> OpenReport:
    """Open one input file (`.ncu-rep` or `ncu --csv --page raw` export) to read its kernels in turn (`by_row`: a
    CSV export's kernels numbered by row from the start, `OpenReport.renumbered`)."""
    path = Path(path)
    if detect_format(path) == "ncu-rep":
        raw = read_ncu_rep(path)
        return OpenReport(path, iter(raw.kernels), lambda kernels: dataclasses.replace(raw, kernels=kernels))
    export = CsvExport(path, by_row)

    def finish(kernels: list[RawKernel]) -> RawReport:
        report = export.report(kernels)
        suffix = path.suffix.lower()
        if suffix in REPORT_SUFFIXES:
            report.warnings.append(f"the file is named {suffix} but holds an ncu CSV export; it was read as CSV")
        return report

    return OpenReport(path, export.kernels(), finish, export.close, lambda: export.renumbered)


def read_report(path: str | Path) -> RawReport:
    """Read one input file (`.ncu-rep` or `ncu --csv --page raw` export) into a RawReport.

    NVIDIA's reader runs in this process (its metrics are read on demand); `read_report_isolated`
    runs it in a child process instead.
    """
    opened = open_report(path)
    try:
        return opened.finish(list(opened.kernels))
    finally:
        opened.close()


def read_materialized(path: str) -> RawReport:
    """`read_report` with every metric value read (a RawReport that pickles: no native objects)."""
    report = read_report(path)
    for kernel in report.kernels:
        kernel.metrics = {name: kernel.metrics[name] for name in kernel.metrics}
        detach(kernel, every_counter=True)  # the rule results and the top instructions, read on demand until now
    return report


def read_report_isolated(path: str | Path, timeout: float | None = None) -> RawReport:
    """`read_report` with NVIDIA's reader in the shared child process (`isolation.shared_pool`).

    Every metric value is read there and sent back, so this costs about as much as reading all
    of them; a crash of the reader raises `ReaderCrashed` (an InputError naming the file).
    """
    path = Path(path)
    if detect_format(path) != "ncu-rep":
        return read_report(path)
    report: RawReport = shared_pool().call(read_materialized, str(path), path=str(path), timeout=timeout)
    return report
