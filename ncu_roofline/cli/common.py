"""What the commands share: the analysis options (declared once), messages and output writing."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from typing import Any, NoReturn, TypeVar

import click

from ..knowledge import recipes as R
from ..render import RenderOptions, formats, renderer_for
from ..render.output import write_atomic
from ..settings import DEFAULT_THRESHOLD, AnalysisSettings

EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT
EXIT_TERMINATED = 143  # 128 + SIGTERM
F = TypeVar("F", bound=Callable[..., Any])


def fail(message: str) -> None:
    """One line on standard error, in the form every command uses."""
    click.echo(f"ncu-roofline: error: {message}", err=True)


def warn(message: str) -> None:
    """One warning line on standard error."""
    click.echo(f"ncu-roofline: warning: {message}", err=True)


def fail_and_exit(message: str, status: int = EXIT_BAD_INPUT) -> NoReturn:
    fail(message)
    sys.exit(status)


def analysis_options(*, for_report_files_only: bool = False) -> Callable[[F], F]:
    """--threshold, --peaks and --bytes-definition, with the same meaning in every command.

    `for_report_files_only`: the command also reads analysed JSON, which keeps its settings
    (the threshold then defaults to None, meaning "the model's default").
    """
    scope = " (report files only; JSON and batch inputs keep theirs)" if for_report_files_only else ""

    def decorate(f: F) -> F:
        f = click.option("--redact", is_flag=True,
                         help="Leave out paths (base names only) and NVTX range names.")(f) \
            if not for_report_files_only else f
        f = click.option("--bytes-definition", type=click.Choice([R.CHART, R.TAGS]), default=R.CHART,
                         show_default=True,
                         help="L1/L2 bytes: Nsight Compute's roofline-chart metrics, or all tag traffic "
                              f"(lts__t_bytes / l1tex__t_bytes){scope}.")(f)
        f = click.option("--peaks", "peaks_file", default=None, metavar="PEAKS.json",
                         type=click.Path(dir_okay=False),
                         help=f"Measured roofs that override or add to the report's own (see README){scope}.")(f)
        f = click.option("--threshold", type=click.FloatRange(0, 1, min_open=True),
                         default=None if for_report_files_only else DEFAULT_THRESHOLD,
                         show_default=not for_report_files_only,
                         help="Share of the busiest limit (roof or unit throughput) at or above which a kernel "
                              f"is 'at limit' rather than latency-limited{scope or ''}"
                              f"{' (default 0.6)' if for_report_files_only else ''}.")(f)
        return f

    return decorate


def match_options(f: F) -> F:
    """--match and --match-file, shared by `diff` and `trend`."""
    f = click.option("--match-file", "match_files", multiple=True, metavar="FILE", type=click.Path(dir_okay=False),
                     help="Rules as --match, one per line ('#' comments and blank lines skipped).")(f)
    return click.option("--match", "matches", multiple=True, metavar="BASE_REGEX=HEAD_REGEX",
                        help="Pair a BASE kernel whose name BASE_REGEX finds with a HEAD kernel whose name "
                             "HEAD_REGEX finds (and whose captured groups are equal), for what the automatic "
                             "passes left. Repeatable.")(f)


def format_option(document: str, default_text: str) -> Callable[[F], F]:
    """-f/--format with the formats the renderer registry has for `document`."""
    return click.option("-f", "--format", "fmt", type=click.Choice(formats(document)), default=None,
                        help=f"Output format (default: from the -o extension, else {default_text}).")


def settings_from(threshold: float | None, peaks_file: str | None, bytes_definition: str) -> AnalysisSettings:
    """The analysis options as one AnalysisSettings (a bad peaks file raises PeaksFileError)."""
    return AnalysisSettings.from_options(threshold=threshold, peaks=peaks_file, bytes_definition=bytes_definition)


def write_document(document: str, value: Any, fmt: str | None, output: str | None, force: bool,
                   options: RenderOptions | None = None) -> None:
    """Render `value` in the chosen format and write it: standard output, or an atomic file."""
    renderer = renderer_for(document, fmt, output)
    emit(renderer.render(value, options or RenderOptions()), output, force)


def emit(text: str | Iterable[str | bytes], output: str | None, force: bool) -> None:
    """Standard output when `output` is None or '-', else an atomic write and `Wrote <path>`.

    An OutputError propagates to the command group, which reports it once for every command.
    """
    if output is None or output == "-":
        # Streamed as made (a large document is never held whole): an interrupted or failed run
        # leaves a partial document on standard output, with a non-zero exit status.
        if isinstance(text, str):
            click.echo(text, nl=False)
            return
        out = sys.stdout
        raw = getattr(out, "buffer", None)  # bytes go to the stream's own buffer (a test runner's may have none)
        out.flush()
        written_text = False  # since the last flush of the text layer
        for piece in text:
            if isinstance(piece, bytes) and raw is not None:
                if written_text:
                    out.flush()
                    written_text = False
                raw.write(piece)
            else:
                out.write(piece.decode() if isinstance(piece, bytes) else piece)
                written_text = True
        out.flush()
        if raw is not None:
            raw.flush()
        return
    path = write_atomic(output, text, force=force)
    click.echo(f"Wrote {path}")
