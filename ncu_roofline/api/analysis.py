"""The public entry point: `analyze(paths)` -> `Analysis` (pandas frame + JSON contract)."""

from __future__ import annotations

import dataclasses
import itertools
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..knowledge.peaks_file import UserPeaks
from ..passes.libraries import random_fill
from ..readers import ANALYSIS_PRELOAD, detect_format, open_report
from ..readers.csv_rows import RowMetrics
from ..readers.isolation import AVAILABLE as ISOLATION_AVAILABLE
from ..readers.isolation import Call, shared_pool
from ..readers.ncu_rep import detach
from ..readers.record import RawKernel
from ..settings import DEFAULT_THRESHOLD, AnalysisSettings
from ..version import __version__
from .blocks import add_block
from .bulk import BULK_BYTES, BULK_ROWS, UNSIZED_ROW_BYTES, ModelledBlock, model_block
from .focus import Focus, focus_groups, focus_kernels
from .groups import FINDINGS_BY_GROUP, GroupMaker, KernelGroup, group_kernels
from .jsondoc import dumps, iter_dump_bytes, iter_dumps
from .kernel import AnalysedKernel, model_launch, run_passes
from .records import Streamed
from .report import ReportResult, with_recipe_set
from .rows import group_row, kernel_row

__all__ = ["SCHEMA", "Analysis", "ReportResult", "analyze", "analyze_report", "with_recipe_set"]

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
class Analysis:
    """The result of `analyze`: every report, every kernel, and the files that failed."""

    reports: list[ReportResult]
    errors: list[InputError]
    settings: AnalysisSettings = field(default_factory=AnalysisSettings)
    _groups: dict[tuple[int, str, float], list[KernelGroup]] = field(default_factory=dict, init=False, repr=False,
                                                                      compare=False)

    def groups_of(self, report: ReportResult) -> list[KernelGroup]:
        """The kernel groups of one of this analysis's reports (by `settings.group_by`), the most time first."""
        key = (id(report), self.settings.group_by, self.settings.threshold)
        found = self._groups.get(key)
        there = report.grouped  # made in the reader process, where they are the ones asked for
        if found is None and there is not None and there[0] == key[1] and there[1] == key[2] \
                and there[2] is report.kernels and report.focus is None:
            found = self._groups[key] = there[3]
        if found is None and report.made is not None:  # made as its launches streamed by
            if (report.group_by, report.threshold) != (self.settings.group_by, self.settings.threshold):
                raise ValueError(f"{report.path}: analysed by group with group_by={report.group_by!r} and "
                                 f"threshold={report.threshold:g}, and its launches were not kept: analyse it "
                                 "again with these settings to group it otherwise")
            found = self._groups[key] = report.made
        if found is None:
            found = self._groups[key] = group_kernels(report.kernels, self.settings.group_by,
                                                      self.settings.threshold, report.share_total_s, report.findings)
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
            if report.records is not None:  # its launches' records, as written
                kept = {e.index for g in self.groups_of(report) for e in g.launches} if report.focus else None
                sets = report.records.sets.listed
                rows.extend(kernel_row(path, {**d, **sets[d["recipe_set"]]})
                            for d in report.records.written(redact, kept, lazy=False))
                continue
            key_of = {e.index: g.key for g in self.groups_of(report) for e in g.launches}
            rows.extend(kernel_row(path, dict(k.to_dict(redact), group_key=key_of.get(k.raw.index)))
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
            if r.made is not None:  # analysed by group: whole groups kept or left out
                groups, summary = focus_groups(r.made, focus, r.path)
                held = {g.longest.raw.index for g in groups}
                reports.append(dataclasses.replace(r, kernels=[k for k in r.kernels if k.raw.index in held],
                                                   made=groups, focus=summary, grouped=None))
                continue
            kept, summary = focus_kernels(r.kernels, focus, self.settings.group_by, self.settings.threshold,
                                          r.findings)
            reports.append(dataclasses.replace(r, kernels=kept, focus=summary, grouped=None))
        return Analysis(reports, list(self.errors), self.settings)

    def to_json(self, redact: bool = False, indent: int | None = None) -> str:
        """The `ncu-roofline/5` JSON document (deterministic: sorted keys, no NaN).

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
                   progress: Progress | None = None, shared: bool = False, by_row: bool = False,
                   launch_records: bool = True) -> ReportResult:
    """Read one file and model every kernel in it (raises InputError for unusable files).

    `compact`: once a CSV kernel is analysed, keep only the metrics the analysis read (its row
    of a few hundred cells is freed), as the isolated `.ncu-rep` path does. `keep_metrics=False`:
    keep none (`raw.metrics` becomes empty once the kernel is analysed; nothing after the analysis
    reads them, and 50,000 launches hold half a gigabyte of them). `progress` is called every
    `PROGRESS_EVERY` launches and once at the end. `shared`: the launch records stay reachable by their file's
    name, for the process the result is handed to (which removes the name). `by_row`: a CSV export's launches
    numbered by row from the start (`readers.open_report`). `launch_records=False`: a report analysed by group
    keeps no launch records (an output of its groups alone, the page, needs none; its JSON document cannot be
    made then).

    Past `LAUNCH_FINDINGS_UP_TO` launches (unless `settings.launch_findings`) the report is analysed by group: each
    launch is summed into its group (`GroupMaker`) and written out as its JSON record (`LaunchRecords`) as soon as it
    is modelled; only each group's longest launch is kept, with its passes' results.
    """
    settings = settings or AnalysisSettings()
    opened = open_report(path, by_row)  # a CSV export is parsed row by row as this loop reaches it
    maker = GroupMaker(settings.group_by)
    kernels: list[AnalysedKernel] = []  # every launch, where the report is analysed by launch
    stream = Streamed(maker, launch_records, shared)
    stream.let_go = lambda raw: _let_go(raw, keep_metrics, compact)
    raws: list[RawKernel] = []
    try:
        for item in _modelled(opened.kernels, settings, stream):
            if isinstance(item, ModelledBlock):  # a block of launches, added at once (`api.blocks`)
                before = stream.count
                add_block(stream, item)
                stream.numbered.add_many(item.rows)
                kept = stream.held_rows()  # their metrics are kept until their groups are made
                for k in item.rows:
                    if id(k) not in kept:
                        _let_go(k, keep_metrics, compact)
                if progress is not None:  # every `PROGRESS_EVERY` launches the block holds: all analysed now
                    for count in range((before // PROGRESS_EVERY + 1) * PROGRESS_EVERY, stream.count + 1,
                                       PROGRESS_EVERY):
                        progress(str(path), count)
                continue
            k, launch = item  # by launch: groups are made from the launches kept (`Analysis.groups_of`)
            kernels.append(launch)
            stream.count_launch(launch)
            raws.append(k)
            _let_go(k, keep_metrics, compact)  # its own findings are made: no group's read its metrics
            if progress is not None and stream.count % PROGRESS_EVERY == 0:
                progress(str(path), stream.count)
        stream.run_pending()  # what the passes read may add to the reader's warnings
        raw = opened.finish(raws if stream.records is None else stream.numbered.kernels())
    except BaseException:
        if stream.records is not None:
            stream.records.close()
        raise
    finally:
        opened.close()
    if stream.records is not None and opened.renumbered() and not by_row:
        # Its launches were written out under the numbers their IDs gave, which the export turned out not to
        # give (missing, not numeric, or repeated): read again, numbered by row from the start.
        stream.records.close()
        return analyze_report(path, settings, compact, keep_metrics, progress, shared, True, launch_records)
    if progress is not None:
        progress(str(path), stream.count)
    warnings = list(raw.warnings)
    stopped = stream.stopped()
    if stopped:
        warnings.append(stopped)
    setup = setup_only_warning(kernels if stream.records is None else maker.longest.values())
    if setup:
        warnings.append(setup)
    if stream.records is None:
        return ReportResult(raw.path, raw.source_format, raw.ncu_version, kernels, warnings,
                            completeness=raw.completeness, group_by=settings.group_by, threshold=settings.threshold)
    try:
        held = stream.finish()
        made = maker.groups(settings.threshold, stream.total, FINDINGS_BY_GROUP)
        stream.let_go_held()
    except BaseException:
        stream.records.close()
        raise
    return ReportResult(raw.path, raw.source_format, raw.ncu_version, held, warnings,
                        completeness=raw.completeness, findings=FINDINGS_BY_GROUP, group_by=settings.group_by,
                        threshold=settings.threshold, records=stream.records,
                        made=made, tally=stream.tally())


def _let_go(k: RawKernel, keep_metrics: bool, compact: bool) -> None:
    """A launch's metrics once it is analysed: none (`keep_metrics=False`), or only those read (`compact`)."""
    if not keep_metrics:
        k.metrics = {}
    elif compact and isinstance(k.metrics, RowMetrics):
        k.metrics = k.metrics.fetched()


def _modelled(kernels: Iterable[RawKernel], settings: AnalysisSettings, stream: Streamed
              ) -> Iterator[tuple[RawKernel, AnalysedKernel] | ModelledBlock]:
    """Each launch with its model and its passes' results, in order, where the report's launches get findings of
    their own (it holds at most `LAUNCH_FINDINGS_UP_TO`, or `settings.launch_findings`); else the report is analysed
    by group from its first launch on (`Streamed.by_group`), in blocks (`BULK_ROWS` rows, or `BULK_BYTES` of their
    text) modelled by runs of the model over columns (`api.bulk`), which give each launch what modelling it on its
    own gives.

    The first launch is modelled, and its passes run, as soon as it is read: a CSV export's reader learns from what
    they read which columns to read at once in every later row, and checks them there (`Columns.learn_hot`)."""
    rows = iter(kernels)
    first = next(rows, None)
    if first is None:
        return
    model = model_launch(first, settings)
    run_passes(model)
    ahead = [first]
    if not settings.launch_findings:
        ahead += itertools.islice(rows, LAUNCH_FINDINGS_UP_TO)
    if len(ahead) <= LAUNCH_FINDINGS_UP_TO:
        yield first, model
        for k in itertools.chain(ahead[1:], rows):
            launch = model_launch(k, settings)
            run_passes(launch)
            yield k, launch
        return
    stream.by_group()
    pending, ahead = ahead, []
    del first, model  # (its row is the block's first: modelled again there, its passes run if it is held)
    held = sum(map(_text_bytes, pending))
    for k in rows:
        if len(pending) >= BULK_ROWS or held >= BULK_BYTES:
            yield model_block(pending, settings)
            pending, held = [], 0
        pending.append(k)
        held += _text_bytes(k)
    yield model_block(pending, settings)


def _text_bytes(k: RawKernel) -> int:
    """What a row held until its block is modelled counts towards `BULK_BYTES`: its text's length."""
    size = getattr(k.metrics, "text_bytes", None)
    return UNSIZED_ROW_BYTES if size is None else int(size())


def setup_only_warning(launches: Iterable[AnalysedKernel]) -> str | None:
    """The warning for a capture whose every usable launch (of a report analysed by group: each group's longest) is
    one of PyTorch's random-number fills: the input a script makes first, which `--launch-count 1` catches, not the
    kernel under study."""
    names = [k.raw.demangled_name or k.raw.name for k in launches if k.usable]
    if not names or not all(random_fill(name) for name in names):
        return None
    return ("every launch in it is PyTorch's random-number fill (what torch.rand and torch.randn launch): it likely "
            "holds input setup, not the kernel under study; select that kernel with ncu -k regex:NAME, or skip the "
            "fills with --launch-skip N")


# Imported by the reader's child process before it forks, so each call starts warm.
ISOLATED_PRELOAD = ANALYSIS_PRELOAD


def analyse_detached(path: str, settings: AnalysisSettings, keep_metrics: bool = True,
                     launch_records: bool = True) -> ReportResult:
    """`analyze_report`, made to cross a process boundary (what the reader's child process runs).

    The analysis runs where the report is open; each kernel then keeps, as a plain dict, only the
    metrics the analysis read, and its rule results as a tuple (`readers.ncu_rep.detach`), which is
    what makes it pickle. What every output of the report reads is made here too, while the other reader
    processes work, not after the last of them: its groups (`ReportResult.grouped`) and its findings' words.
    """
    report = analyze_report(path, settings, keep_metrics=keep_metrics, shared=True, launch_records=launch_records)
    for kernel in report.kernels:
        detach(kernel.raw)
    try:
        groups = report.made
        if groups is None:
            groups = group_kernels(report.kernels, settings.group_by, settings.threshold, report.share_total_s,
                                   report.findings)
            report.grouped = (settings.group_by, settings.threshold, report.kernels, groups)
        for finding in itertools.chain.from_iterable(
                [*(k.diagnosis for k in report.kernels), *(g.summary.diagnosis for g in groups)]):
            finding.words()
    except Exception:  # what fails here fails again where an output asks for it, as for a report read there
        report.grouped = None
    return report


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


def analyze(paths: str | Path | Iterable[str | Path], settings: AnalysisSettings | None = None, *,
            threshold: float | None = None, peaks: str | Path | UserPeaks | None = None,
            bytes_definition: str | None = None, strict: bool = True, isolate: bool = False,
            keep_metrics: bool = True, progress: Progress | None = None, launch_records: bool = True) -> Analysis:
    """Analyse one or more reports (`.ncu-rep`, `.nsight-cuprof-report`, or ncu `--page raw` CSV).

    Pass an `AnalysisSettings`, or its fields as keywords for convenience (`peaks` may be a
    peaks-file path; see `ncu_roofline.knowledge.peaks_file`). With `strict=True` (the default)
    the first unusable file raises `InputError`; with `strict=False` bad files are collected in
    `Analysis.errors` and the others are analysed.

    With `isolate=True` (what every command uses) NVIDIA's reader runs in child processes
    (`analyse_detached`, several files in parallel): a report that crashes it is an InputError like
    any other, and each kernel's `raw.metrics` then holds only the metrics the analysis read. The
    default reads in this process, with every metric of each report at hand (so does `isolate=True`
    for a `.ncu-rep` where the platform is not POSIX; a CSV export read with `isolate=True` keeps the
    metrics the analysis read). `keep_metrics=False` empties each kernel's
    `raw.metrics` once it is analysed (what `report` does: its outputs never read them).
    `launch_records=False`: a report of more than 1,000 launches keeps no launch records (`analyze_report`).
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
    native = [Call(analyse_detached, (str(p), settings, keep_metrics, launch_records), str(p))
              for p, f in zip(paths, formats, strict=True) if f == "ncu-rep"]

    def finished(index: int, outcome: Any) -> None:  # told as each report is done, the largest started first
        if progress is not None and not isinstance(outcome, InputError):
            progress(native[index].path, outcome.launch_count)

    # The reports are read in the reader pool in parallel, handed back in order; CSV exports here.
    isolated = shared_pool(ISOLATED_PRELOAD).map(native, finished=finished) if native else iter(())
    reports: list[ReportResult] = []
    errors: list[InputError] = []
    try:
        for path, fmt in zip(paths, formats, strict=True):
            try:
                if isinstance(fmt, InputError):
                    raise fmt
                if fmt == "ncu-rep":
                    outcome = next(isolated)
                else:
                    outcome = analyze_report(path, settings, compact=isolate, keep_metrics=keep_metrics,
                                             launch_records=launch_records,
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
