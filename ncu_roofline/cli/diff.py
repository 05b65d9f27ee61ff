"""`ncu-roofline diff BASE HEAD`: what changed between two runs, with an optional CI gate.

Exit status: 0 compared (and the gate, if set, passed); 1 the gate found a regression (the output
is still written); 2 unusable input or output, or a bad option (one line on standard error, no
traceback); 3 the gate found no regression but compared less of BASE's GPU time than
--min-coverage, so it cannot pass (unless --allow-unmatched; the output is still written).
"""

from __future__ import annotations

import sys
import time

import click

from ..compare.diff import compare
from ..compare.gate import DEFAULT_MIN_COVERAGE_PCT, GateOptions, parse_metric_gate
from ..compare.names import match_rules
from ..compare.noise import DEFAULT_ALPHA, DEFAULT_MIN_DELTA_S, DEFAULT_MIN_DURATION_S, DEFAULT_MIN_EFFECT_PCT
from ..render import DIFF
from ..views.diff_gate import gate_message
from ..views.wording import count
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

EXIT_REGRESSION = 1
EXIT_COVERAGE = 3


@click.command()
@click.argument("base", metavar="BASE")
@click.argument("head", metavar="HEAD")
@verbosity_options()
@format_option(DIFF, "json")
@click.option("-o", "--output", default=None, metavar="FILE",
              help="Output file ('-' or none: standard output).")
@click.option("--force", is_flag=True, help="Overwrite FILE if it exists.")
@click.option("--fail-on-regression", "fail_pct", type=click.FloatRange(min=0), default=None, metavar="PCT",
              help="Exit 1 when a compared group is called slower (see --alpha and the floors) with its median "
                   "more than PCT % slower, or the compared groups' total GPU time grew by more than PCT %.")
@click.option("--fail-on-total", "total_pct", type=click.FloatRange(min=0), default=None, metavar="PCT",
              help="Exit 1 when the GPU time of every kernel of HEAD is more than PCT % above BASE's.")
@click.option("--fail-on-metric", "metric_gates", multiple=True, metavar="NAME:+PCT%",
              help="Exit 1 when a compared group's median counter grew (+) or fell (-) by more than PCT %: "
                   "dram_bytes, l2_bytes, l1_bytes, flop, fp64_flop, fp32_flop, fp16_flop, tensor_flop, "
                   "inst_executed. For captures of the same inputs. Repeatable.")
@click.option("--min-coverage", "min_coverage", type=click.FloatRange(0, 100), default=DEFAULT_MIN_COVERAGE_PCT,
              show_default=True, metavar="PCT",
              help="With a gate set: exit 3 when the compared groups hold less than PCT % of BASE's GPU time "
                   "(and nothing regressed): a pass would say nothing about the rest.")
@click.option("--allow-unmatched", is_flag=True, help="Let the gate pass under --min-coverage.")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=DEFAULT_ALPHA,
              show_default=True, help="Significance level of the Mann–Whitney U test, for groups that repeat.")
@click.option("--min-effect", "min_effect", type=click.FloatRange(min=0), default=DEFAULT_MIN_EFFECT_PCT,
              show_default=True, metavar="PCT", help="Median changes within PCT % are 'unchanged'.")
@click.option("--min-duration", "min_duration", type=click.FloatRange(min=0), default=DEFAULT_MIN_DURATION_S,
              show_default=True, metavar="SECONDS",
              help="Floor for single launches: shorter than this in BASE, a change is not called (launch "
                   "jitter). Groups still count in the compared total.")
@click.option("--min-delta", "min_delta", type=click.FloatRange(min=0), default=DEFAULT_MIN_DELTA_S,
              show_default=True, metavar="SECONDS",
              help="Floor for single launches: a change of less than this is not called, whatever the "
                   "percentage (profiling jitter is about a microsecond).")
@match_options
@analysis_options(for_report_files_only=True)
def diff(base: str, head: str, fmt: str | None, output: str | None, force: bool, fail_pct: float | None,
         total_pct: float | None, metric_gates: tuple[str, ...], min_coverage: float, allow_unmatched: bool,
         alpha: float, min_effect: float, min_duration: float, min_delta: float, matches: tuple[str, ...],
         match_files: tuple[str, ...], threshold: float | None, peaks_file: str | None,
         bytes_definition: str) -> None:
    """Compare two runs: BASE and HEAD are each a report file (.ncu-rep, .nsight-cuprof-report,
    ncu CSV), an ncu-roofline JSON document (report --format json) or a batch output folder.

    Repeated launches of a kernel (same name, grid, block, NVTX ranges) are one group, compared by
    median. Groups are paired in passes: exact, same function (template arguments, parameters or
    launch configuration differ), generated name (gensym counters, hashes), then --match rules;
    ambiguous candidates are listed, not guessed. For each pair: duration, launches, the noise
    verdict, limiter, utilisation, intensity, FLOP/s, counters and findings.

    JSON goes to standard output unless -o or --format say otherwise. Exit status: 0 compared
    (gate passed or not set), 1 the gate found a regression, 2 unusable input or option, 3 the gate
    compared less than --min-coverage of BASE's GPU time.

    \b
    Examples:
      ncu-roofline diff base.json new.ncu-rep --fail-on-regression 5
      ncu-roofline diff base.ncu-rep new.ncu-rep -f md -o diff.md
      ncu-roofline diff nightly/2026-11-01 nightly/2026-11-02 -f html -o diff.html
      ncu-roofline diff base.json new.json --fail-on-metric dram_bytes:+10%
      ncu-roofline diff base.json new.json --match 'gemm_v1_(.+)=gemm_v2_(.+)'
    """
    options = GateOptions(fail_on_regression=fail_pct, fail_on_total=total_pct,
                          fail_on_metric=tuple(parse_metric_gate(g) for g in metric_gates),
                          min_coverage_pct=min_coverage, allow_unmatched=allow_unmatched, min_duration_s=min_duration,
                          min_delta_s=min_delta, alpha=alpha, min_effect_pct=min_effect)
    rules = match_rules(matches, match_files)
    check_output(output, force)
    started = time.monotonic()
    result = compare(base, head, settings=settings_from(threshold, peaks_file, bytes_definition), gate=options,
                     rules=rules)
    for side, run in (("BASE", result.base), ("HEAD", result.head)):
        info(f"{side} {run.input}: {describe_run(run)}")
    info(f"compared in {time.monotonic() - started:.2f} s: {count(len(result.matched), 'pair')} of groups, "
         f"{result.counts.get('new', 0)} new, {result.counts.get('gone', 0)} gone")
    write_document(DIFF, result, fmt, output, force)
    if result.failed or result.insufficient_coverage:
        explain_status(gate_message(result))
        sys.exit(EXIT_REGRESSION if result.failed else EXIT_COVERAGE)

