"""`ncu-roofline trend RUN...`: per-kernel duration and roof utilisation over dated runs, and drift.

Exit status: 0 done (and, with --fail-on-drift, nothing drifted over enough coverage); 1
--fail-on-drift and a kernel drifted (the output is still written); 2 unusable input or output:
fewer than two usable runs, a bad option (one line on standard error, no traceback); 3
--fail-on-drift, nothing drifted, but the kernels followed from the first usable run to the last
hold less than --min-coverage of the first run's GPU time (unless --allow-unmatched). An
unusable run among usable ones is a gap, stated in the output, not an error.
"""

from __future__ import annotations

import sys
import time

import click

from ..compare.gate import DEFAULT_MIN_COVERAGE_PCT
from ..compare.names import match_rules
from ..compare.noise import DEFAULT_MIN_DELTA_S, DEFAULT_MIN_DURATION_S
from ..compare.trend import DEFAULT_DRIFT_PCT, TOP_CHARTS
from ..compare.trend import trend as build
from ..render import TREND, RenderOptions
from ..views.trend import coverage_message, drift_message
from .common import (
    analysis_options,
    check_output,
    describe_run,
    explain_status,
    format_option,
    info,
    match_options,
    settings_from,
    verbosity_options,
    write_document,
)

EXIT_DRIFT = 1
EXIT_COVERAGE = 3


@click.command()
@click.argument("runs", nargs=-1, required=True, metavar="RUN...")
@verbosity_options()
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
@click.option("--fail-on-drift", is_flag=True,
              help="Exit 1 when a kernel drifts (named on standard error); exit 3 when nothing drifts but too "
                   "little is followed from the first run to the last (--min-coverage).")
@click.option("--min-coverage", "min_coverage", type=click.FloatRange(0, 100), default=DEFAULT_MIN_COVERAGE_PCT,
              show_default=True, metavar="PCT",
              help="'No drift' is a verdict only when the kernels timed in the first and the last usable run "
                   "hold at least PCT % of the first run's GPU time.")
@click.option("--allow-unmatched", is_flag=True, help="Accept 'no drift' under --min-coverage.")
@click.option("--top", type=click.IntRange(min=0), default=TOP_CHARTS, show_default=True,
              help="HTML: chart this many kernels, those with the most GPU time over all runs.")
@match_options
@analysis_options(for_report_files_only=True)
def trend(runs: tuple[str, ...], fmt: str | None, output: str | None, force: bool, drift_pct: float,
          min_duration: float, min_delta: float, fail_on_drift: bool, min_coverage: float, allow_unmatched: bool,
          top: int, matches: tuple[str, ...], match_files: tuple[str, ...], threshold: float | None,
          peaks_file: str | None, bytes_definition: str) -> None:
    """Follow every kernel over two or more runs: duration, bounding roof and its utilisation.

    A RUN is a batch output folder (with manifest.json), a parent folder whose sub-folders are
    batch outputs (nightly/2026-11-01/, ...), an ncu-roofline JSON document (report --format json)
    or a report file. Runs are ordered by the ISO date leading their name, else the time recorded
    in the manifest, else the modification time. Per kernel: change from first to last run, slope
    of a least-squares fit in % of the first run per run, and a drift flag. An unusable run is a
    gap with its reason.

    JSON goes to standard output unless -o or --format say otherwise. Exit status: 0 done,
    1 --fail-on-drift and a kernel drifted, 2 unusable input (fewer than 2 usable runs, ...),
    3 --fail-on-drift and too little followed from the first run to the last (--min-coverage).

    \b
    Examples:
      ncu-roofline trend nightly/ -f html -o trend.html
      ncu-roofline trend nightly/ --fail-on-drift --drift 5
      ncu-roofline trend 2026-11-01.json 2026-11-02.json 2026-11-03.ncu-rep -f md -o trend.md
    """
    check_output(output, force)
    started = time.monotonic()
    result = build(runs, drift_pct=drift_pct, min_duration_s=min_duration, min_delta_s=min_delta,
                   min_coverage_pct=min_coverage, allow_unmatched=allow_unmatched,
                   rules=match_rules(matches, match_files),
                   settings=settings_from(threshold, peaks_file, bytes_definition))
    for run in result.runs:  # oldest first
        what = f"unusable: {run.error}" if run.error else describe_run(run.run)
        source = {"name": "its name", "manifest": "its manifest", "mtime": "its modification time"}
        info(f"{run.input}: dated {run.date_text} from {source.get(run.date_source, run.date_source)}; {what}")
    info(f"{len(result.runs)} runs read in {time.monotonic() - started:.2f} s")
    write_document(TREND, result, fmt, output, force, RenderOptions(top=top))
    if fail_on_drift and result.verdict == "drift":
        explain_status(drift_message(result))
        sys.exit(EXIT_DRIFT)
    if fail_on_drift and result.verdict == "insufficient_coverage":
        explain_status(coverage_message(result))
        sys.exit(EXIT_COVERAGE)
