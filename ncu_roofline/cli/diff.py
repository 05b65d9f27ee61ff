"""`ncu-roofline diff BASE HEAD`: what changed between two runs, with an optional CI gate.

Exit status: 0 compared (and the gate, if set, passed); 1 the gate failed (the output is still
written); 2 unusable input or output (one line on standard error, no traceback).
"""

from __future__ import annotations

import sys
from typing import Any

import click

from ..compare.diff import DEFAULT_MIN_DELTA_S, DEFAULT_MIN_DURATION_S, compare
from ..render import DIFF
from ..views.format import seconds
from .common import analysis_options, format_option, settings_from, write_document

EXIT_REGRESSION = 1


def gate_message(gate: dict[str, Any]) -> str:
    """The failed gate for standard error: a heading, then one line per regression."""
    lines = [f"performance regression over {gate['threshold_pct']:g} %:"]
    for r in gate["regressions"]:
        lines.append(f"  {r['name']}: {seconds(r['base_s'])} -> {seconds(r['head_s'])} "
                     f"(+{r['delta_pct']:.1f} %)")
    return "\n".join(lines)


@click.command()
@click.argument("base", metavar="BASE")
@click.argument("head", metavar="HEAD")
@format_option(DIFF, "json")
@click.option("-o", "--output", default=None, metavar="FILE",
              help="Output file ('-' or none: standard output).")
@click.option("--force", is_flag=True, help="Overwrite FILE if it exists.")
@click.option("--fail-on-regression", "fail_pct", type=click.FloatRange(min=0), default=None, metavar="PCT",
              help="Exit 1 when the total GPU time of the matched kernels, or a matched kernel (at least "
                   "--min-duration long in BASE, and at least --min-delta slower), is more than PCT % "
                   "slower in HEAD.")
@click.option("--min-duration", "min_duration", type=click.FloatRange(min=0), default=DEFAULT_MIN_DURATION_S,
              show_default=True, metavar="SECONDS",
              help="Kernels shorter than this in BASE are not gated one by one (launch jitter); they "
                   "still count in the matched total.")
@click.option("--min-delta", "min_delta", type=click.FloatRange(min=0), default=DEFAULT_MIN_DELTA_S,
              show_default=True, metavar="SECONDS",
              help="A kernel slower by less than this is not a regression, whatever the percentage "
                   "(profiling jitter is about a microsecond).")
@analysis_options(for_report_files_only=True)
def diff(base: str, head: str, fmt: str | None, output: str | None, force: bool, fail_pct: float | None,
         min_duration: float, min_delta: float, threshold: float | None, peaks_file: str | None,
         bytes_definition: str) -> None:
    """Compare two runs: BASE and HEAD are each a report file (.ncu-rep, .nsight-cuprof-report,
    ncu CSV), an ncu-roofline JSON document (report --format json) or a batch output folder.

    Kernels are matched by name, grid, block and NVTX ranges in order of launch (then by name
    alone, marked 'launch config changed'). For each: duration, bounding roof, utilisation,
    intensity, FLOP/s and findings, base vs head; unmatched kernels on both sides; totals.

    JSON goes to standard output unless -o or --format say otherwise. Exit status: 0 compared
    (gate passed or not set), 1 the --fail-on-regression gate failed, 2 unusable input.
    """
    result = compare(base, head, fail_on_regression=fail_pct, min_duration_s=min_duration, min_delta_s=min_delta,
                     settings=settings_from(threshold, peaks_file, bytes_definition))
    write_document(DIFF, result, fmt, output, force)
    if result.failed:
        click.echo(f"ncu-roofline: {gate_message(result.gate)}", err=True)
        sys.exit(EXIT_REGRESSION)
