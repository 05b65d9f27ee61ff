"""`ncu-roofline batch`: analyse many reports in parallel into one folder (index, pages, tidy table)."""

from __future__ import annotations

import dataclasses
import glob
import os
import sys

import click

from ..batch import DEFAULT_TIMEOUT_S, BatchEvent, BatchResult, run_batch
from ..batch.dask_run import INPUT_MODES, MAX_SEND_BYTES, DaskRunner, looks_like_address
from ..errors import RooflineError
from ..views.batch_index import skipped_summary
from ..views.wording import count
from .common import (
    QUIET,
    VERBOSE,
    StatusLine,
    analysis_options,
    fail_and_exit,
    note,
    settings_from,
    verbosity,
    verbosity_options,
    warn,
)

EXIT_SOME_FAILED = 1
EXIT_USAGE = 2
SKIPPED_LINES = 20  # skipped paths named one per line on stderr; the rest in a count (the index lists all)


def _event_line(event: BatchEvent, timed: bool = False) -> str:
    name = os.path.basename(event.path)
    head = f"[{event.done}/{event.total}] {name}"
    took = f" in {event.seconds:.2f} s" if timed else ""
    if event.status == "error":
        return f"{head} failed{took}: {event.error}"
    kernels = event.kernel_count or 0
    detail = f"({kernels} kernel{'s' if kernels != 1 else ''})"
    return f"{head} {'unchanged' if event.status == 'unchanged' else 'ok'} {detail}{took}"


class _Progress(StatusLine):
    """One updating line on a terminal; one plain line per finished report otherwise (CI logs).

    `level`: with --quiet only failures are printed; with --verbose every line stays, with its seconds.
    """

    def __init__(self, tty: bool, level: int) -> None:
        super().__init__(erase=False)  # the last line stays
        self.tty = tty
        self.level = level

    def __call__(self, event: BatchEvent) -> None:
        if self.level <= QUIET and event.status != "error":
            return
        line = _event_line(event, timed=self.level >= VERBOSE)
        if not self.tty or self.level >= VERBOSE:
            self.close()
            click.echo(line, err=True)
            return
        self.draw(line, keep=event.status == "error")  # failures stay on screen


def _report_skipped(result: BatchResult, redact: bool) -> None:
    """Name each skipped path on stderr with its reason (the first SKIPPED_LINES of them), then the
    count by reason and where the full list is, so that nothing the inputs held goes unmentioned."""
    if not result.skipped:
        return
    for s in result.skipped[:SKIPPED_LINES]:
        note(f"skipped {s.line(redact)}")  # paths as the index shows them
    entries = [dict(s.as_dict(redact), label=s.label) for s in result.skipped]
    more = len(entries) - SKIPPED_LINES
    unnamed = f"; {more} more not named here" if more > 0 else ""
    index = os.path.join(str(result.outdir), "index.html")
    note(f"{skipped_summary(entries)}{unnamed}; all listed in {index} and manifest.json")


LOCAL_CLUSTER = "\0local"  # what a bare --dask gives: no path or address can hold a NUL


def _dask_choice(value: str | None, inputs: tuple[str, ...]) -> tuple[str | None, tuple[str, ...]]:
    """(address or LOCAL_CLUSTER or None, inputs) from --dask's optional value.

    `--dask` takes the next word as its value when it does not start with "-", so in
    `batch --dask runs/ -o out` the first input lands there: a value that names an existing path
    or a glob pattern, or does not look like a scheduler address, is put back as an input.
    """
    if value is None or value in ("", LOCAL_CLUSTER):
        return (None if value is None else LOCAL_CLUSTER), inputs
    if os.path.exists(value) or glob.has_magic(value) or not looks_like_address(value):
        return LOCAL_CLUSTER, (value, *inputs)
    return value, inputs


@click.command()
@click.argument("inputs", nargs=-1, required=False, metavar="PATH...")
@verbosity_options()
@click.option("-o", "--output", "outdir", required=True, metavar="OUTDIR",
              help="Folder to write into (created if missing).")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None,
              help="Worker processes (default: the number of CPUs).")
@click.option("--timeout", type=click.FloatRange(0, min_open=True), default=DEFAULT_TIMEOUT_S,
              show_default=True, metavar="SECONDS",
              help="Give up on a report (and kill its worker) after this many seconds (a fresh worker's "
                   "start-up is not counted).")
@click.option("--force", is_flag=True, help="Re-analyse every report, even unchanged ones.")
@click.option("--exclude", "exclude", multiple=True, metavar="GLOB",
              help="Skip a file or folder whose path relative to the input folder, or any folder or name in it, "
                   "matches GLOB (fnmatch, case-sensitive; repeatable): 'old' any file or folder named old, "
                   "'*/old/*' what lies in an old folder below the top, '*.csv' every CSV file. Skipped paths "
                   "are listed in index.html, manifest.json and on stderr.")
@click.option("--dask", "dask", is_flag=False, flag_value=LOCAL_CLUSTER, default=None, metavar="[ADDRESS]",
              help="Run the reports on a Dask cluster: a local one of --jobs worker processes, or the "
                   "scheduler at ADDRESS (tcp://host:8786). Needs the dask extra: "
                   "pip install 'ncu-roofline[dask]'.")
@click.option("--dask-inputs", type=click.Choice(INPUT_MODES), default="auto", show_default=True,
              help="How reports reach the Dask workers: their paths (the workers share this file system), "
                   f"their bytes (at most {MAX_SEND_BYTES // 2**20} MiB a report), or auto: paths when every "
                   "worker sees the input files.")
@click.option("--launch-findings", is_flag=True,
              help="Findings for every launch of a report over 1,000 launches too (by default per kernel, from "
                   "its longest launch).")
@analysis_options()
def batch(inputs: tuple[str, ...], outdir: str, jobs: int | None, timeout: float, force: bool,
          exclude: tuple[str, ...], dask: str | None, dask_inputs: str, launch_findings: bool, threshold: float,
          peaks_file: str | None, bytes_definition: str, redact: bool) -> None:
    """Analyse every report in PATH... (files, folders searched recursively, glob patterns).

    Writes into OUTDIR: index.html (every report, its device, kernels, GPU time, busiest-limit mix,
    longest kernels, what failed and why, and every path skipped and why), reports/<name>.html
    and .json per report, kernels.csv and kernels.parquet (one row per kernel) and
    manifest.json. Folder walks and glob matches take .ncu-rep, .nsight-cuprof-report and .csv
    files; every other file they find, and everything --exclude matches, is listed as skipped
    (index.html, manifest.json, stderr). Each report is read in its own worker process, so a crash or a hang
    (--timeout) costs only that report. Unchanged reports are reused on a re-run (--force
    re-analyses them). With --dask, the reports run on a Dask cluster, each still in its own
    process on a worker; the outputs are the same.

    Exit status: 0 when every report was analysed, 1 when some failed (the rest is still
    written), 2 for usage errors (no input found, OUTDIR is a file, a bad option).

    \b
    Examples:
      ncu-roofline batch captures/ -o out --jobs 8
      ncu-roofline batch captures/ -o out --exclude old --exclude '*.csv'
      ncu-roofline batch 'captures/**/*.ncu-rep' -o out --exclude '*/scratch/*'
      ncu-roofline batch captures/ -o out --dask tcp://scheduler:8786
      ncu-roofline -q batch captures/ -o out --peaks measured_peaks.json
    """
    address, inputs = _dask_choice(dask, inputs)
    if not inputs:
        raise click.UsageError("Missing argument 'PATH...'.")
    settings = settings_from(threshold, peaks_file, bytes_definition)  # a bad peaks file: exit 2
    settings = dataclasses.replace(settings, launch_findings=launch_findings)
    runner = None
    if address is not None:
        try:
            runner = DaskRunner(None if address == LOCAL_CLUSTER else address, inputs=dask_inputs)
        except RooflineError as exc:  # Dask is not installed
            fail_and_exit(str(exc), EXIT_USAGE)
    progress = _Progress(sys.stderr.isatty(), verbosity())
    try:
        result = run_batch(inputs, outdir, settings, redact=redact, jobs=jobs, timeout=timeout, force=force,
                           progress=progress, runner=runner, exclude=exclude)
    except RooflineError as exc:  # BatchUsageError, or an output that cannot be written
        progress.close()
        fail_and_exit(str(exc), EXIT_USAGE)
    progress.close()
    _report_skipped(result, redact)
    for entry in result.entries:  # what the reader noticed about a file, one line each, as `report` prints it
        for warning in entry.get("warnings") or []:
            warn(f"{entry['path']}: {warning}")
    for text in result.notes + (runner.notes if runner is not None else []):
        warn(text)
    parts = [f"{result.analysed} analysed"]
    if result.unchanged:
        parts.append(f"{result.unchanged} unchanged")
    if result.failed:
        parts.append(f"{result.failed} failed")
    if result.skipped:
        parts.append(f"{len(result.skipped)} skipped")
    total = len(result.entries)
    click.echo(f"Wrote {os.path.join(str(result.outdir), 'index.html')} ({total} report"
               f"{'s' if total != 1 else ''}: {', '.join(parts)}; {count(result.kernel_count, 'kernel')}"
               f"{'; kernels.parquet too' if result.parquet else '; no kernels.parquet'}) in {result.seconds:.1f} s")
    if result.failed:
        sys.exit(EXIT_SOME_FAILED)
