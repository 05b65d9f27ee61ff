"""`ncu-roofline report`: analyse captures and write HTML (default), Markdown, JSON or CSV."""

from __future__ import annotations

import dataclasses
import gc
import os
import sys
import time
from pathlib import Path

import click

from ..api.analysis import Analysis, ReportResult, analyze
from ..api.focus import Focus
from ..readers import start_readers
from ..readers.isolation import AVAILABLE as ISOLATION_AVAILABLE
from ..render import REPORT, Renderer, RenderOptions, renderer_for
from ..settings import GROUP_BY, GROUP_BY_LAUNCH, AnalysisSettings
from ..views.wording import count
from .common import (
    EXIT_BAD_INPUT,
    QUIET,
    StatusLine,
    analysis_options,
    check_output,
    emit,
    fail,
    fail_and_exit,
    format_option,
    info,
    settings_from,
    verbosity,
    verbosity_options,
    warn,
)


class Progress(StatusLine):
    """One updating line on standard error while launches are analysed, on a terminal only (pipes and
    CI logs stay quiet): shown once the analysis has run for a second, redrawn at most 4 times a second.
    `done_at`: each file's seconds from the start to its last call (for --verbose)."""

    DELAY_S = 1.0
    EVERY_S = 0.25

    def __init__(self, tty: bool, redact: bool = False) -> None:
        super().__init__(color=True)  # drawn on a terminal only
        self.tty, self.redact = tty, redact
        self.started = time.monotonic()
        self.last = 0.0
        self.done_at: dict[str, float] = {}

    def __call__(self, path: str, launches: int) -> None:
        now = time.monotonic()
        self.done_at[path] = now - self.started
        if not self.tty or now - self.started < self.DELAY_S or now - self.last < self.EVERY_S:
            return
        self.last = now
        name = os.path.basename(path) if self.redact else path
        self.draw(f"analysing {name}: {launches:,} launch{'es' if launches != 1 else ''}")


def default_output(first_input: str, extension: str) -> str:
    """`runs/capture.ncu-rep` -> `capture.roofline.html` in the current folder."""
    name = Path(first_input).name
    for suffix in (".ncu-rep", ".nsight-cuprof-report", ".csv"):
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
            break
    return f"{name or 'report'}.roofline{extension}"


@click.command()
@click.argument("inputs", nargs=-1, required=True, metavar="INPUT...")
@verbosity_options()
@format_option(REPORT, "html")
@click.option("-o", "--output", default=None, metavar="FILE",
              help="Output file ('-' for standard output). Default: <first input>.roofline.html for "
                   "HTML, standard output for the other formats.")
@click.option("--force", is_flag=True, help="Overwrite FILE if it exists.")
@analysis_options()
@click.option("--group-by", type=click.Choice(GROUP_BY), default=GROUP_BY_LAUNCH, show_default=True,
              help="What makes launches one kernel: the same name, grid and block (launch), or the same name.")
@click.option("--groups", "group_rows", is_flag=True,
              help="CSV: one row per kernel group instead of one per launch (implies --format csv).")
@click.option("--launch-findings", is_flag=True,
              help="Findings for every launch of a report over 1,000 launches too (by default such a report "
                   "has them per kernel, from its longest launch; --nvtx implies this).")
@click.option("--kernel", "kernel_regex", default=None, metavar="REGEX",
              help="Only launches whose name matches REGEX (searched, case-insensitive).")
@click.option("--nvtx", "nvtx_range", default=None, metavar="RANGE",
              help="Only launches inside the NVTX range RANGE (a path such as train/layer1, or one range name; "
                   "* and ? match any text).")
@click.option("--top", type=click.IntRange(min=1), default=None, metavar="N",
              help="Only the N kernels (groups) with the most GPU time.")
@click.option("--min-share", type=click.FloatRange(0, 100), default=None, metavar="PCT",
              help="Only kernels (groups) with at least PCT % of the report's GPU time.")
def report(inputs: tuple[str, ...], fmt: str | None, output: str | None, force: bool, threshold: float,
           peaks_file: str | None, bytes_definition: str, redact: bool, group_by: str, group_rows: bool,
           launch_findings: bool, kernel_regex: str | None, nvtx_range: str | None, top: int | None,
           min_share: float | None) -> None:
    """Analyse INPUT files (.ncu-rep, .nsight-cuprof-report, or ncu --csv --page raw exports).

    Writes a self-contained HTML report by default (<first input>.roofline.html); --format md
    gives a summary for a pull-request comment, json and csv are for machines.

    Launches of one kernel with one launch configuration are reported together as one kernel
    (--group-by name: one kernel name). --kernel, --nvtx, --top and --min-share narrow the
    outputs to what matters; the GPU time they leave out is stated in every output.

    Every file is analysed even when another one fails (a report that crashes NVIDIA's reader
    included: it is read in a separate process); each failure is reported on standard error and
    the exit status is then 2. Exit status 0 means every input was analysed; 130 interrupted
    (Ctrl-C), 143 terminated (SIGTERM), with no temporary file left behind.

    \b
    Examples:
      ncu-roofline report run.ncu-rep
      ncu-roofline report run.ncu-rep -f html -o run.html
      ncu-roofline report run.ncu-rep -f md --top 10 -o summary.md
      ncu-roofline report run.ncu-rep -f csv --groups -o kernels.csv
      ncu-roofline report run.ncu-rep --kernel gemm --nvtx train/step -f json -o -
      ncu-roofline report run.ncu-rep --peaks measured_peaks.json --threshold 0.7
    """
    if group_rows and fmt is None and (output is None or output == "-" or output.lower().endswith(".csv")):
        fmt = "csv"
    renderer = renderer_for(REPORT, fmt, output)
    if group_rows and renderer.name != "csv":
        fail_and_exit(f"--groups is for CSV output (the {renderer.name.upper()} output holds the groups already)")
    focus = Focus(kernel_regex, nvtx_range, top, None if min_share is None else min_share / 100)
    if output is None and renderer.name == "html":
        output = default_output(inputs[0], renderer.extension)
    check_output(output, force)
    settings = settings_from(threshold, peaks_file, bytes_definition)
    # --nvtx keeps part of a kernel's launches: its findings must come from the longest launch it keeps, which only
    # per-launch findings guarantee
    settings = dataclasses.replace(settings, group_by=group_by,
                                   launch_findings=launch_findings or nvtx_range is not None)
    # The analysis makes no reference cycles (a launch's objects are freed by reference counts, or
    # live to the end): the cyclic collector would only walk that growing heap again and again,
    # about a tenth of the CPU time at 50,000 launches. It is paused while the inputs are analysed,
    # and runs again for the rendering (matplotlib's figures do hold cycles) over what is made from
    # then on only: the analysis is frozen out of its walks.
    collecting = gc.isenabled()
    gc.disable()
    try:
        _report(inputs, renderer, output, force, settings, focus, redact, group_rows, collecting)
    finally:
        gc.unfreeze()
        if collecting:
            gc.enable()
        else:
            gc.disable()


PAGES = ("html", "md")  # the outputs that need no launch record


def _report(inputs: tuple[str, ...], renderer: Renderer, output: str | None, force: bool, settings: AnalysisSettings,
            focus: Focus, redact: bool, group_rows: bool, collecting: bool) -> None:
    progress = Progress(sys.stderr.isatty() and verbosity() > QUIET, redact)
    start_readers(inputs)  # they start while this process loads its renderer
    renderer.prepare()
    try:
        read = analyze(list(inputs), settings, strict=False, isolate=True, keep_metrics=False, progress=progress,
                       launch_records=renderer.name not in PAGES)  # a page lists launches from their groups
    finally:
        progress.close()
    _tell_reads(read, progress.done_at, redact)
    analysis = read.focused(focus)
    for result in analysis.reports:
        for warning in result.warnings:
            warn(f"{os.path.basename(result.path) if redact else result.path}: {warning}")
    for err in analysis.errors:
        fail(err.message)
    if not analysis.reports:
        fail("no input could be analysed; nothing written")
        sys.exit(EXIT_BAD_INPUT)
    if collecting:
        gc.freeze()
        gc.enable()
    started = time.monotonic()
    emit(renderer.pieces(analysis, RenderOptions(redact=redact, groups=group_rows)), output, force)
    info(f"{renderer.name.upper()} output made and written in {time.monotonic() - started:.2f} s")
    if analysis.errors:
        sys.exit(EXIT_BAD_INPUT)


def _reader(result: ReportResult) -> str:
    """How a file was read, in words (--verbose)."""
    if result.source_format == "csv":
        return "read as a CSV export in this process"
    where = "a reader process" if ISOLATION_AVAILABLE else "this process"
    return f"read by NVIDIA's ncu_report in {where}; Nsight Compute {result.ncu_version or 'version unknown'}"


def _tell_reads(analysis: Analysis, done_at: dict[str, float], redact: bool) -> None:
    """--verbose: per file, the launches read, how it was read and when it was done (files are read in
    parallel, so these are times from the start, not each file's own)."""
    for result in analysis.reports:
        name = os.path.basename(result.path) if redact else result.path
        when = done_at.get(result.path)
        done = f"; done {when:.2f} s after the start" if when is not None else ""
        info(f"{name}: {count(result.launch_count, 'launch')} {_reader(result)}{done}")
