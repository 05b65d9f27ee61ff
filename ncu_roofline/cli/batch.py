"""`ncu-roofline batch`: analyse many reports in parallel into one folder (index, pages, tidy table)."""

from __future__ import annotations

import os
import shutil
import sys

import click

from ..batch import DEFAULT_TIMEOUT_S, BatchEvent, run_batch
from ..errors import RooflineError
from .common import analysis_options, fail_and_exit, settings_from

EXIT_SOME_FAILED = 1
EXIT_USAGE = 2


def _event_line(event: BatchEvent) -> str:
    name = os.path.basename(event.path)
    head = f"[{event.done}/{event.total}] {name}"
    if event.status == "error":
        return f"{head} failed: {event.error}"
    kernels = event.kernel_count or 0
    detail = f"({kernels} kernel{'s' if kernels != 1 else ''})"
    return f"{head} {'unchanged' if event.status == 'unchanged' else 'ok'} {detail}"


class _Progress:
    """One updating line on a terminal; one plain line per finished report otherwise (CI logs)."""

    def __init__(self, tty: bool) -> None:
        self.tty = tty
        self.drawn = False

    def __call__(self, event: BatchEvent) -> None:
        line = _event_line(event)
        if not self.tty:
            click.echo(line, err=True)
            return
        width = max(20, shutil.get_terminal_size().columns - 1)
        if event.status == "error":  # failures stay on screen
            click.echo(f"\r\x1b[K{line}", err=True)
            self.drawn = False
        else:
            click.echo(f"\r\x1b[K{line[:width]}", err=True, nl=False)
            self.drawn = True

    def close(self) -> None:
        if self.tty and self.drawn:
            click.echo("", err=True)
            self.drawn = False


@click.command()
@click.argument("inputs", nargs=-1, required=True, metavar="PATH...")
@click.option("-o", "--output", "outdir", required=True, metavar="OUTDIR",
              help="Folder to write into (created if missing).")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None,
              help="Worker processes (default: the number of CPUs).")
@click.option("--timeout", type=click.FloatRange(0, min_open=True), default=DEFAULT_TIMEOUT_S,
              show_default=True, metavar="SECONDS",
              help="Give up on a report (and kill its worker) after this many seconds.")
@click.option("--force", is_flag=True, help="Re-analyse every report, even unchanged ones.")
@analysis_options()
def batch(inputs: tuple[str, ...], outdir: str, jobs: int | None, timeout: float, force: bool,
          threshold: float, peaks_file: str | None, bytes_definition: str, redact: bool) -> None:
    """Analyse every report in PATH... (files, folders searched recursively, glob patterns).

    Writes into OUTDIR: index.html (every report, its device, kernels, GPU time, bound-by mix,
    longest kernels, and what failed and why), reports/<name>.html and .json per report,
    kernels.csv (one row per kernel; also kernels.parquet when pyarrow is installed) and
    manifest.json. Each report is read in its own worker process, so a crash or a hang
    (--timeout) costs only that report. Unchanged reports are reused on a re-run (--force
    re-analyses them).

    Exit status: 0 when every report was analysed, 1 when some failed (the rest is still
    written), 2 for usage errors (no input found, OUTDIR is a file, a bad option).
    """
    settings = settings_from(threshold, peaks_file, bytes_definition)  # a bad peaks file: exit 2
    progress = _Progress(sys.stderr.isatty())
    try:
        result = run_batch(inputs, outdir, settings, redact=redact, jobs=jobs, timeout=timeout, force=force,
                           progress=progress)
    except RooflineError as exc:  # BatchUsageError, or an output that cannot be written
        progress.close()
        fail_and_exit(str(exc), EXIT_USAGE)
    progress.close()
    for note in result.notes:
        click.echo(f"ncu-roofline: warning: {note}", err=True)
    parts = [f"{result.analysed} analysed"]
    if result.unchanged:
        parts.append(f"{result.unchanged} unchanged")
    if result.failed:
        parts.append(f"{result.failed} failed")
    total = len(result.entries)
    click.echo(f"Wrote {os.path.join(str(result.outdir), 'index.html')} ({total} report"
               f"{'s' if total != 1 else ''}: {', '.join(parts)}; {result.kernel_count} kernels"
               f"{'; kernels.parquet too' if result.parquet else ''}) in {result.seconds:.1f} s")
    if result.failed:
        sys.exit(EXIT_SOME_FAILED)
