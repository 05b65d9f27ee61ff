"""The public entry point: `analyze(paths)` -> `Analysis` (pandas frame + JSON contract)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..knowledge.peaks_file import UserPeaks
from ..readers import REPORT_SUFFIXES, detect_format, open_report
from ..readers.csv_rows import RowMetrics
from ..readers.isolation import AVAILABLE as ISOLATION_AVAILABLE
from ..readers.isolation import Call, shared_pool
from ..readers.ncu_rep import detach
from ..settings import DEFAULT_THRESHOLD, GROUP_BY_LAUNCH, AnalysisSettings
from ..version import __version__
from .focus import Focus, FocusSummary, focus_kernels
from .groups import (
    FINDINGS_BY_GROUP,
    FINDINGS_BY_LAUNCH,
    KernelGroup,
    group_duration,
    group_kernels,
    group_key,
    longest_key,
)
from .jsondoc import LazyList, dumps, iter_dump_bytes, iter_dumps
from .kernel import AnalysedKernel, model_launch, run_passes
from .nvtx import nvtx_rollup
from .rows import group_row, kernel_row

if TYPE_CHECKING:  # pandas is imported lazily: the CLI's JSON path does not need it
    import pandas as pd

# /2: `bound_by` names the busiest limit, a roof or a unit throughput (`bound_kind`), `utilization`
# holds every roof's and unit's share, regimes are at_limit / latency / too_little_work.
# /3: a unit's label, group, parent and recipe are listed once per report (`units`); a kernel keeps
# its shares in `utilization` and, in `unit_recipes`, only the recipes that differ from the list.
# /5: a launch's `provenance` and `missing` are listed once per report in `recipe_sets`, named by its
# `recipe_set`; a report of more than 1,000 launches has its findings per group (`findings`: "group"), and then
# its launches hold no ceilings, diagnosis or rules.
SCHEMA = "ncu-roofline/5"


@dataclass
class ReportResult:
    """One analysed input file."""

    path: str
    source_format: str
    ncu_version: str | None
    kernels: list[AnalysedKernel]
    warnings: list[str] = field(default_factory=list)
    focus: FocusSummary | None = None  # set when `api.focus` left launches out
    completeness: str = ""  # what the reader could not check about the file being whole
    findings: str = FINDINGS_BY_LAUNCH  # each launch's own, or per group from its longest launch (`analyze_report`)
    group_by: str = GROUP_BY_LAUNCH  # how `analyze_report` grouped the launches to find each group's longest
    threshold: float = DEFAULT_THRESHOLD

    @property
    def devices(self) -> list[str]:
        return sorted({k.raw.device for k in self.kernels if k.raw.device})

    @property
    def total_duration_s(self) -> float | None:
        values = [k.q.duration_s.value for k in self.kernels if k.q.duration_s is not None]
        return sum(values) if values else None

    def units(self) -> dict[str, dict[str, Any]]:
        """Every unit throughput any launch holds: id -> label, group, parent and the recipe of the
        first launch that has it (the `units` catalogue of the JSON document)."""
        found: dict[str, dict[str, Any]] = {}
        for k in self.kernels:
            for uid, unit in k.units.items():
                if uid not in found:
                    found[uid] = unit.describe()
        return found

    @property
    def share_total_s(self) -> float | None:
        """The GPU time shares are taken of: every launch of the file, also those a focus left out."""
        return self.focus.total_duration_s if self.focus is not None else self.total_duration_s

    def to_dict(self, redact: bool = False, groups: list[KernelGroup] | None = None,
                lazy: bool = False) -> dict[str, Any]:
        """The report as the `ncu-roofline/5` document writes it (`groups`: as `Analysis.groups_of`).

        `lazy`: `kernels` is a `jsondoc.LazyList` that makes each launch's dict as it is encoded.
        """
        if groups is None:
            groups = group_kernels(self.kernels, self.group_by, self.threshold, self.share_total_s, self.findings)
        key_of = {id(k): g.key for g in groups for k in g.launches}
        names = {g.key: g.display_name for g in groups}
        total = self.share_total_s
        total_s = self.total_duration_s  # once: it sums every launch
        units = self.units()
        recipes = {uid: u["recipe"] for uid, u in units.items()}

        by_launch = self.findings == FINDINGS_BY_LAUNCH
        sets = RecipeSets()

        def launches() -> Iterator[dict[str, Any]]:
            for k in self.kernels:
                d = k.to_dict(redact, recipes, findings=by_launch)
                d["group_key"] = key_of.get(id(k))
                d["recipe_set"] = sets.index(d.pop("provenance"), d.pop("missing"))
                yield _with_program_gain(d, total_s) if by_launch else d

        return {
            "path": os.path.basename(self.path) if redact else self.path,
            "source_format": self.source_format,
            "ncu_version": self.ncu_version,
            "devices": self.devices,
            "kernel_count": len(self.kernels),
            "unusable_kernel_count": sum(1 for k in self.kernels if not k.usable),
            "total_duration_s": total_s,
            "warnings": list(self.warnings),
            "completeness": self.completeness or None,
            "kernels": LazyList(launches) if lazy else list(launches()),
            "group_count": len(groups),
            "groups": [g.to_dict(redact) for g in groups],
            "nvtx_rollup": [] if redact else [n.to_dict(total, names) for n in nvtx_rollup(groups)],
            "focus": self.focus.to_dict() if self.focus is not None else None,
            "units": units,
            "findings": self.findings,
            "recipe_sets": sets.listed,  # after `kernels` in the document: a lazy `kernels` fills it as encoded
        }


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


def with_recipe_set(report: dict[str, Any], launch: dict[str, Any]) -> dict[str, Any]:
    """A launch record of a report document with its `provenance` and `missing` in place (`ncu-roofline/5` lists
    them once per report, in `recipe_sets`; earlier documents hold them in each launch)."""
    if "missing" in launch:
        return launch
    held = report["recipe_sets"][launch["recipe_set"]]
    return {**launch, "provenance": held["provenance"], "missing": held["missing"]}


def _with_program_gain(d: dict[str, Any], total_s: float | None) -> dict[str, Any]:
    """Each finding's worth to the whole program: time share × (1 − 1 / speed-up)."""
    share = d["duration_s"] / total_s if d["duration_s"] and total_s else None
    for f in d.get("diagnosis", []):
        speedup = f.get("speedup")
        f["program_gain"] = (share * (1 - 1 / speedup) if share is not None and speedup and speedup > 1
                             else None)
    return d


@dataclass
class Analysis:
    """The result of `analyze`: every report, every kernel, and the files that failed."""

    reports: list[ReportResult]
    errors: list[InputError]
    settings: AnalysisSettings = field(default_factory=AnalysisSettings)
    _groups: dict[int, list[KernelGroup]] = field(default_factory=dict, init=False, repr=False, compare=False)

    def groups_of(self, report: ReportResult) -> list[KernelGroup]:
        """The kernel groups of one of this analysis's reports (by `settings.group_by`), the most time first."""
        found = self._groups.get(id(report))
        if found is None:
            found = self._groups[id(report)] = group_kernels(report.kernels, self.settings.group_by,
                                                             self.settings.threshold, report.share_total_s,
                                                             report.findings)
        return found

    @property
    def models(self) -> list[tuple[ReportResult, AnalysedKernel]]:
        return [(r, k) for r in self.reports for k in r.kernels]

    @property
    def kernels(self) -> pd.DataFrame:
        """One row per kernel, typed columns with units in their names (nullable: NA = absent)."""
        from .frame import frame_from_rows

        return frame_from_rows(self.rows())

    def rows(self, redact: bool = False) -> list[dict[str, Any]]:
        """One flat row per kernel (the columns of `kernels` and of the CSV output)."""
        rows: list[dict[str, Any]] = []
        for report in self.reports:
            path = os.path.basename(report.path) if redact else report.path
            key_of = {id(k): g.key for g in self.groups_of(report) for k in g.launches}
            rows.extend(kernel_row(path, dict(k.to_dict(redact), group_key=key_of.get(id(k))))
                        for k in report.kernels)
        return rows

    @property
    def groups(self) -> pd.DataFrame:
        """One row per kernel group (the columns of `report --format csv --groups`)."""
        from .frame import frame_from_rows

        return frame_from_rows(self.group_rows())

    def group_rows(self, redact: bool = False) -> list[dict[str, Any]]:
        """One flat row per kernel group of every report, the most GPU time first within a report."""
        rows: list[dict[str, Any]] = []
        for report in self.reports:
            path = os.path.basename(report.path) if redact else report.path
            rows.extend(group_row(path, g.to_dict(redact)) for g in self.groups_of(report))
        return rows

    def to_dict(self, redact: bool = False, lazy: bool = False) -> dict[str, Any]:
        """The `ncu-roofline/5` document (docs/reference/json.md); `lazy`: as `json_pieces` needs it."""
        return {
            "schema": SCHEMA,
            "generator": {"name": "ncu-roofline", "version": __version__},
            "settings": self.settings.to_dict(redact),
            "reports": [r.to_dict(redact, self.groups_of(r), lazy) for r in self.reports],
            "errors": [{"path": os.path.basename(e.path) if redact else e.path, "message": e.message}
                       for e in self.errors],
        }

    def focused(self, focus: Focus) -> Analysis:
        """This analysis with only the launches `focus` keeps in each report, and what it left out."""
        if not focus.active:
            return self
        reports = []
        for r in self.reports:
            kept, summary = focus_kernels(r.kernels, focus, self.settings.group_by, self.settings.threshold,
                                          r.findings)
            reports.append(dataclasses.replace(r, kernels=kept, focus=summary))
        return Analysis(reports, list(self.errors), self.settings)

    def to_json(self, redact: bool = False, indent: int | None = None) -> str:
        """The `ncu-roofline/3` JSON document (deterministic: sorted keys, no NaN).

        Compact by default (json's C encoder only serves `indent=None`); pass `indent=2` to read it.
        """
        return dumps(self.to_dict(redact), indent)

    def json_pieces(self, redact: bool = False) -> Iterator[str]:
        """`to_json()` in pieces, the same text: each launch's dict is made and encoded in turn (what
        `report -f json` writes, so that 50,000 launches are never one document in memory)."""
        return iter_dumps(self.to_dict(redact, lazy=True))

    def json_bytes(self, redact: bool = False) -> Iterator[bytes]:
        """`json_pieces` as UTF-8 bytes (what `report -f json` writes to a file or standard output)."""
        return iter_dump_bytes(self.to_dict(redact, lazy=True))


Progress = Callable[[str, int], None]  # (file, launches analysed so far in it)
PROGRESS_EVERY = 500  # launches between two progress calls within one file
# Up to this many launches in a report, every launch gets its own findings; above it, each group gets them from its
# longest launch (`FINDINGS_BY_GROUP`), unless `AnalysisSettings.launch_findings` asks for them per launch.
LAUNCH_FINDINGS_UP_TO = 1000


def analyze_report(path: str | Path, settings: AnalysisSettings | None = None,
                   compact: bool = False, keep_metrics: bool = True,
                   progress: Progress | None = None) -> ReportResult:
    """Read one file and model every kernel in it (raises InputError for unusable files).

    `compact`: once a CSV kernel is analysed, keep only the metrics the analysis read (its row
    of a few hundred cells is freed), as the isolated `.ncu-rep` path does. `keep_metrics=False`:
    keep none (`raw.metrics` becomes empty once the kernel is analysed; nothing after the analysis
    reads them, and 50,000 launches hold half a gigabyte of them). `progress` is called every
    `PROGRESS_EVERY` launches and once at the end.
    """
    settings = settings or AnalysisSettings()
    opened = open_report(path)  # a CSV export is parsed row by row as this loop reaches it
    kernels: list[AnalysedKernel] = []
    raws = []
    longest: dict[str, AnalysedKernel] = {}  # group key -> its longest launch so far (`group_kernels` picks it so)
    by_launch = True
    try:
        for k in opened.kernels:
            launch = model_launch(k, settings)
            if by_launch and len(kernels) == LAUNCH_FINDINGS_UP_TO and not settings.launch_findings:
                by_launch = False  # from here on, findings per group: only each group's longest launch keeps its own
                held = {id(g) for g in longest.values()}
                for other in kernels:
                    if id(other) not in held:
                        _without_passes(other)
            key = group_key(launch, settings.group_by)
            before = longest.get(key)
            if before is None or _longer(launch, before):
                longest[key] = launch
                if before is not None and not by_launch:
                    _without_passes(before)
            if by_launch or longest[key] is launch:
                run_passes(launch)
            kernels.append(launch)
            raws.append(k)
            if not keep_metrics:
                k.metrics = {}
            elif compact and isinstance(k.metrics, RowMetrics):
                k.metrics = k.metrics.fetched()
            if progress is not None and len(kernels) % PROGRESS_EVERY == 0:
                progress(str(path), len(kernels))
        raw = opened.finish(raws)
    finally:
        opened.close()
    if progress is not None:
        progress(str(path), len(kernels))
    warnings = list(raw.warnings)
    stopped = stopped_capture_warning(kernels)
    if stopped:
        warnings.append(stopped)
    return ReportResult(raw.path, raw.source_format, raw.ncu_version, kernels, warnings,
                        completeness=raw.completeness, findings=FINDINGS_BY_LAUNCH if by_launch else FINDINGS_BY_GROUP,
                        group_by=settings.group_by, threshold=settings.threshold)


def _longer(launch: AnalysedKernel, than: AnalysedKernel) -> bool:
    """Whether `launch` (read after `than`) is its group's longest instead, as `group_kernels` picks it: a timed
    launch over an untimed one, else by `longest_key`."""
    if group_duration(launch) is None:
        return False
    return group_duration(than) is None or longest_key(launch) > longest_key(than)


def _without_passes(k: AnalysedKernel) -> None:
    """A launch's pass results let go (a report analysed by group keeps them for each group's longest launch), the
    missing quantities its ceilings added among them: its launches then share one recipe set."""
    if k.passes_missing:
        k.missing = k.missing[:-k.passes_missing]
        k.passes_missing = 0
    k.ceilings, k.diagnosis, k.reuse, k.not_applicable, k.precision_options = [], [], {}, [], []
    k.instruction_roofline = None


def stopped_capture_warning(kernels: list[AnalysedKernel]) -> str | None:
    """The warning for a file whose last launch has no duration (absent, or every metric NaN) while an earlier
    launch has one: the sign of a capture stopped while that kernel was profiled. The launch is set aside like
    any unusable one. A capture that collected no duration at all (`--metrics` without it) is not one."""
    if len(kernels) < 2 or not kernels[-1].q.no_duration:
        return None
    if all(k.q.duration_s is None for k in kernels[:-1]):
        return None
    last = kernels[-1]
    analysed = sum(1 for k in kernels[:-1] if k.usable)
    return (f"the last launch (#{last.raw.index}, {last.raw.name}) has no duration, unlike the launches before it: "
            "the capture was likely stopped while profiling it, or the profiler could not collect it; it is set "
            f"aside, {analysed:,} other launch(es) are analysed")


# Imported by the reader's child process before it forks, so each call starts warm.
ISOLATED_PRELOAD = ("ncu_roofline.api.analysis", "ncu_report")


def analyse_detached(path: str, settings: AnalysisSettings, keep_metrics: bool = True) -> ReportResult:
    """`analyze_report`, made to cross a process boundary (what the reader's child process runs).

    The analysis runs where the report is open; each kernel then keeps, as a plain dict, only the
    metrics the analysis read, and its rule results as a tuple (`readers.ncu_rep.detach`), which is
    what makes it pickle.
    """
    report = analyze_report(path, settings, keep_metrics=keep_metrics)
    for kernel in report.kernels:
        detach(kernel.raw)
    return report


def analyze_isolated(path: str | Path, settings: AnalysisSettings, timeout: float | None = None) -> ReportResult:
    """`analyze_report` with a `.ncu-rep` read in the shared child process (CSV exports: here).

    A crash of NVIDIA's reader costs this file only: `readers.ReaderCrashed`, an InputError.
    """
    if not ISOLATION_AVAILABLE or detect_format(path) != "ncu-rep":
        return analyze_report(path, settings, compact=True)
    result: ReportResult = shared_pool(ISOLATED_PRELOAD).call(analyse_detached, str(path), settings,
                                                              path=str(path), timeout=timeout)
    return result


def _without_frames(exc: InputError) -> InputError:
    """The error without its tracebacks: a kept error must not keep the failed read's frames (its open
    file, the launches analysed before the fault) alive as long as `Analysis.errors`."""
    chained: BaseException | None = exc
    visited: set[int] = set()
    while chained is not None and id(chained) not in visited:
        visited.add(id(chained))
        chained.__traceback__ = None
        chained = chained.__cause__ or chained.__context__
    return exc


def start_readers(paths: Iterable[str | Path]) -> None:
    """Start the reader processes `analyze(..., isolate=True)` will read these `.ncu-rep` files in, now:
    their start-up (a fresh interpreter importing the analysis and NVIDIA's reader, about 0.3 s)
    then overlaps whatever the caller does before it analyses (a command loading its renderer)."""
    if not ISOLATION_AVAILABLE:
        return
    # Told by the name, without opening the file (`analyze` sniffs each one): a report named otherwise
    # only misses the head start.
    count = sum(1 for path in paths if str(path).lower().endswith(REPORT_SUFFIXES))
    if count:
        shared_pool(ISOLATED_PRELOAD).warm(count)


def analyze(paths: str | Path | Iterable[str | Path], settings: AnalysisSettings | None = None, *,
            threshold: float | None = None, peaks: str | Path | UserPeaks | None = None,
            bytes_definition: str | None = None, strict: bool = True, isolate: bool = False,
            keep_metrics: bool = True, progress: Progress | None = None) -> Analysis:
    """Analyse one or more reports (`.ncu-rep`, `.nsight-cuprof-report`, or ncu `--page raw` CSV).

    Pass an `AnalysisSettings`, or its fields as keywords for convenience (`peaks` may be a
    peaks-file path; see `ncu_roofline.knowledge.peaks_file`). With `strict=True` (the default)
    the first unusable file raises `InputError`; with `strict=False` bad files are collected in
    `Analysis.errors` and the others are analysed.

    With `isolate=True` (what every command uses) NVIDIA's reader runs in child processes
    (`analyze_isolated`, several files in parallel): a report that crashes it is an InputError like
    any other, and each kernel's `raw.metrics` then holds only the metrics the analysis read. The
    default reads in this process, with every metric of each report at hand (so does `isolate=True`
    for a `.ncu-rep` where the platform is not POSIX; a CSV export read with `isolate=True` keeps the
    metrics the analysis read). `keep_metrics=False` empties each kernel's
    `raw.metrics` once it is analysed (what `report` does: its outputs never read them).
    `progress(file, launches)` is told how far the analysis is (`analyze_report`; a `.ncu-rep`
    read in a child process reports once, when it is done).
    """
    if settings is None:
        settings = AnalysisSettings.from_options(
            threshold=DEFAULT_THRESHOLD if threshold is None else threshold, peaks=peaks,
            bytes_definition=bytes_definition or AnalysisSettings().bytes_definition)
    elif threshold is not None or peaks is not None or bytes_definition is not None:
        raise TypeError("pass either settings or its fields, not both")
    if isinstance(paths, (str, Path)):
        paths = [paths]
    paths = list(paths)
    formats: list[str | InputError] = []
    for path in paths:
        try:
            formats.append(detect_format(path) if isolate and ISOLATION_AVAILABLE else "here")
        except InputError as exc:
            formats.append(exc)
    native = [Call(analyse_detached, (str(p), settings, keep_metrics), str(p))
              for p, f in zip(paths, formats, strict=True) if f == "ncu-rep"]
    # The reports are read in the reader pool in parallel, handed back in order; CSV exports here.
    isolated = shared_pool(ISOLATED_PRELOAD).map(native) if native else iter(())
    reports: list[ReportResult] = []
    errors: list[InputError] = []
    try:
        for path, fmt in zip(paths, formats, strict=True):
            try:
                if isinstance(fmt, InputError):
                    raise fmt
                if fmt == "ncu-rep":
                    outcome = next(isolated)
                    if progress is not None and not isinstance(outcome, InputError):
                        progress(str(path), len(outcome.kernels))
                else:
                    outcome = analyze_report(path, settings, compact=isolate, keep_metrics=keep_metrics,
                                             progress=progress)
                if isinstance(outcome, InputError):
                    raise outcome
                reports.append(outcome)
            except InputError as exc:
                if strict:
                    raise
                errors.append(_without_frames(exc))
    finally:
        close = getattr(isolated, "close", None)
        if close is not None:
            close()  # stops the reads still in flight when this stopped early
    return Analysis(reports, errors, settings)
