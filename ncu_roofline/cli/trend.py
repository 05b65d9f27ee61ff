"""`ncu-roofline trend RUN...`: per-kernel duration and roof utilisation over dated runs, and drift.

Exit status: 0 done (and, with --fail-on-drift, nothing drifted); 1 --fail-on-drift and a kernel
drifted (the output is still written); 2 unusable input or output (one line on standard error,
no traceback).
"""

from __future__ import annotations

import sys

import click

from ..compare.diff import DEFAULT_MIN_DELTA_S, DEFAULT_MIN_DURATION_S
from ..compare.trend import DEFAULT_DRIFT_PCT, TOP_CHARTS
from ..compare.trend import trend as build
from ..render import TREND, RenderOptions
from ..views.trend import drift_message
from .common import analysis_options, format_option, settings_from, write_document

EXIT_DRIFT = 1


@click.command()
@click.argument("runs", nargs=-1, required=True, metavar="RUN...")
@format_option(TREND, "json")
@click.option("-o", "--output", default=None, metavar="FILE", help="Output file ('-' or none: standard output).")
@click.option("--force", is_flag=True, help="Overwrite FILE if it exists.")
@click.option("--drift", "drift_pct", type=click.FloatRange(min=0), default=DEFAULT_DRIFT_PCT, show_default=True,
              metavar="PCT",
              help="A kernel drifts when its duration rose by more than PCT % from its first to its last "
                   "run and the least-squares fit over the runs rises.")
@click.option("--min-duration", "min_duration", type=click.FloatRange(min=0), default=DEFAULT_MIN_DURATION_S,
              show_default=True, metavar="SECONDS",
              help="Kernels shorter than this in their first run are not called drifting (launch jitter).")
@click.option("--min-delta", "min_delta", type=click.FloatRange(min=0), default=DEFAULT_MIN_DELTA_S,
              show_default=True, metavar="SECONDS",
              help="Nor are kernels that lost less than this from first to last run.")
@click.option("--fail-on-drift", is_flag=True, help="Exit 1 when a kernel drifts (named on standard error).")
@click.option("--top", type=click.IntRange(min=0), default=TOP_CHARTS, show_default=True,
              help="HTML: chart this many kernels, those with the most GPU time over all runs.")
@analysis_options(for_report_files_only=True)
def trend(runs: tuple[str, ...], fmt: str | None, output: str | None, force: bool, drift_pct: float,
          min_duration: float, min_delta: float, fail_on_drift: bool, top: int, threshold: float | None,
          peaks_file: str | None, bytes_definition: str) -> None:
    """Follow every kernel over two or more runs: duration, bounding roof and its utilisation.

    A RUN is a batch output folder (with manifest.json), a parent folder whose sub-folders are
    batch outputs (nightly/2026-11-01/, ...), an ncu-roofline JSON document (report --format json)
    or a report file. Runs are ordered by the ISO date leading their name, else the time recorded
    in the manifest, else the modification time. Per kernel: change from first to last run, slope
    of a least-squares fit in % of the first run per run, and a drift flag.

    JSON goes to standard output unless -o or --format say otherwise. Exit status: 0 done,
    1 --fail-on-drift and a kernel drifted, 2 unusable input (fewer than 2 runs, ...).
    """
    result = build(runs, drift_pct=drift_pct, min_duration_s=min_duration, min_delta_s=min_delta,
                   settings=settings_from(threshold, peaks_file, bytes_definition))
    write_document(TREND, result, fmt, output, force, RenderOptions(top=top))
    if fail_on_drift and result.drifting:
        click.echo(f"ncu-roofline: {drift_message(result)}", err=True)
        sys.exit(EXIT_DRIFT)
