"""`ncu-roofline report`: analyse captures and write HTML (default), Markdown, JSON or CSV."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..api.analysis import analyze
from ..render import REPORT, RenderOptions, renderer_for
from .common import EXIT_BAD_INPUT, analysis_options, emit, fail, format_option, settings_from


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
@format_option(REPORT, "html")
@click.option("-o", "--output", default=None, metavar="FILE",
              help="Output file ('-' for standard output). Default: <first input>.roofline.html for "
                   "HTML, standard output for the other formats.")
@click.option("--force", is_flag=True, help="Overwrite FILE if it exists.")
@analysis_options()
def report(inputs: tuple[str, ...], fmt: str | None, output: str | None, force: bool, threshold: float,
           peaks_file: str | None, bytes_definition: str, redact: bool) -> None:
    """Analyse INPUT files (.ncu-rep, .nsight-cuprof-report, or ncu --csv --page raw exports).

    Writes a self-contained HTML report by default (<first input>.roofline.html); --format md
    gives a summary for a pull-request comment, json and csv are for machines.

    Every file is analysed even when another one fails; each failure is reported on standard
    error and the exit status is then 2. Exit status 0 means every input was analysed.
    """
    renderer = renderer_for(REPORT, fmt, output)
    if output is None and renderer.name == "html":
        output = default_output(inputs[0], renderer.extension)
    analysis = analyze(list(inputs), settings_from(threshold, peaks_file, bytes_definition), strict=False)
    for err in analysis.errors:
        fail(err.message)
    if not analysis.reports:
        fail("no input could be analysed; nothing written")
        sys.exit(EXIT_BAD_INPUT)
    emit(renderer.render(analysis, RenderOptions(redact=redact)), output, force)
    if analysis.errors:
        sys.exit(EXIT_BAD_INPUT)
