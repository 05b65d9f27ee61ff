"""What the commands share: the analysis options (declared once), messages at the level -q/-v set,
defaults from the environment, and output writing."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable, Iterable
from typing import Any, NoReturn, TypeVar

import click
from click.core import ParameterSource

from ..compare.runs import Run
from ..knowledge import recipes as R
from ..render import RenderOptions, formats, renderer_for
from ..render.output import check_target, write_atomic
from ..settings import DEFAULT_THRESHOLD, AnalysisSettings
from ..views.wording import count

EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT
EXIT_TERMINATED = 143  # 128 + SIGTERM
F = TypeVar("F", bound=Callable[..., Any])


ENV_PREFIX = "NCU_ROOFLINE"
QUIET, NORMAL, VERBOSE = -1, 0, 1
# In click's context meta, shared by a command and its group: (level, rank of the option that set it).
_VERBOSITY = "ncu_roofline.verbosity"


class StatusLine:
    """One line of standard error redrawn in place (carriage return, erase to the end of the line), cut to
    the terminal's width. `color`: click's (True: the erase code even where click would strip it); `erase`:
    whether `close` erases the line or ends it, so that it stays."""

    def __init__(self, color: bool | None = None, erase: bool = True) -> None:
        self.color, self.erase = color, erase
        self.drawn = False

    def draw(self, line: str, keep: bool = False) -> None:
        """Redraw the line; `keep`: whole and ended, so that it stays (the next line starts below it)."""
        if keep:
            click.echo(f"\r\x1b[K{line}", err=True, color=self.color)
        else:
            width = max(20, shutil.get_terminal_size().columns - 1)
            click.echo(f"\r\x1b[K{line[:width]}", err=True, nl=False, color=self.color)
        self.drawn = not keep

    def close(self) -> None:
        if self.drawn:
            click.echo("\r\x1b[K" if self.erase else "", err=True, nl=not self.erase, color=self.color)
            self.drawn = False


def verbosity() -> int:
    """QUIET, NORMAL or VERBOSE: what -q/-v set for the running command (NORMAL outside a command)."""
    ctx = click.get_current_context(silent=True)
    held = ctx.meta.get(_VERBOSITY) if ctx is not None else None
    return int(held[0]) if held is not None else NORMAL


def fail(message: str) -> None:
    """One error line on standard error, in the form every command uses; printed even with --quiet."""
    click.echo(f"ncu-roofline: error: {message}", err=True)


def warn(message: str) -> None:
    """One warning line on standard error, unless --quiet."""
    if verbosity() > QUIET:
        click.echo(f"ncu-roofline: warning: {message}", err=True)


def note(message: str) -> None:
    """One line on standard error that is neither a warning nor an error (a skipped path), unless --quiet."""
    if verbosity() > QUIET:
        click.echo(f"ncu-roofline: {message}", err=True)


def info(message: str) -> None:
    """One line on standard error with --verbose only: what was read, how, and in how long."""
    if verbosity() >= VERBOSE:
        click.echo(f"ncu-roofline: {message}", err=True)


def explain_status(message: str) -> None:
    """The line that explains a non-zero exit status other than an error (a gate that failed): always printed."""
    click.echo(f"ncu-roofline: {message}", err=True)


def _set_verbosity(level: int) -> Callable[[click.Context, click.Parameter, bool], None]:
    """The callback of -q or -v. A command's own option wins over its group's, the command line over the
    environment; -q and -v at the same place are a usage error."""

    def callback(ctx: click.Context, param: click.Parameter, value: bool) -> None:
        if not value or ctx.resilient_parsing:
            return
        depth, parent = 0, ctx.parent
        while parent is not None:
            depth, parent = depth + 1, parent.parent
        rank = (depth, ctx.get_parameter_source(param.name or "") is ParameterSource.COMMANDLINE)
        held = ctx.meta.get(_VERBOSITY)
        if held is not None and held[1] == rank and held[0] != level:
            raise click.UsageError("-q/--quiet and -v/--verbose contradict each other: give one", ctx)
        if held is None or rank >= held[1]:
            ctx.meta[_VERBOSITY] = (level, rank)

    return callback


def verbosity_options(*, group: bool = False) -> Callable[[F], F]:
    """-q/--quiet and -v/--verbose, on the group and again on each command (`ncu-roofline report -q ...`).

    Only the group's read the environment (NCU_ROOFLINE_QUIET, NCU_ROOFLINE_VERBOSE).
    """
    envvar: tuple[str, ...] | None = None if group else ()

    def decorate(f: F) -> F:
        f = click.option("-v", "--verbose", is_flag=True, expose_value=False, envvar=envvar,
                         callback=_set_verbosity(VERBOSE),
                         help="Also say on standard error what was read, how, and how long it took.")(f)
        return click.option("-q", "--quiet", is_flag=True, expose_value=False, envvar=envvar,
                            callback=_set_verbosity(QUIET),
                            help="No warnings or progress on standard error; errors still print and exit "
                                 "statuses are unchanged.")(f)

    return decorate


def environment_defaults(command: click.Command, prefix: str = ENV_PREFIX) -> None:
    """Let every option of `command` and its sub-commands take its default from the environment, shown in --help.

    An option --some-flag of `ncu-roofline report` reads NCU_ROOFLINE_REPORT_SOME_FLAG, then the name its
    declaration gives (the analysis options' NCU_ROOFLINE_THRESHOLD, ..., the same in every command). The
    names follow the flags, not the Python parameters. --help and --version read none.
    """
    for param in command.params:
        if not isinstance(param, click.Option) or param.is_eager or param.envvar == ():
            continue
        flag = max(param.opts, key=len).lstrip("-")
        own = f"{prefix}_{flag.replace('-', '_').upper()}"
        shared = [param.envvar] if isinstance(param.envvar, str) else list(param.envvar or [])
        param.envvar = [own, *(name for name in shared if name != own)]
        param.show_envvar = True
        param.callback = _noting_environment(param.callback)
    if isinstance(command, click.Group):
        for name, sub in command.commands.items():
            environment_defaults(sub, f"{prefix}_{name.replace('-', '_').upper()}")


def _noting_environment(callback: Callable[..., Any] | None) -> Callable[[click.Context, click.Parameter, Any], Any]:
    """An option's callback that, with --verbose, also says which environment variable gave its value."""

    def noted(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        value = value if callback is None else callback(ctx, param, value)
        if not ctx.resilient_parsing and ctx.get_parameter_source(param.name or "") is ParameterSource.ENVIRONMENT:
            names = [param.envvar] if isinstance(param.envvar, str) else list(param.envvar or [])
            name = next((n for n in names if os.environ.get(n)), "the environment")
            info(f"{param.opts[-1]} {os.environ.get(name, '')} from {name}")
        return value

    return noted


def fail_and_exit(message: str, status: int = EXIT_BAD_INPUT) -> NoReturn:
    """`fail`, then exit with `status`."""
    fail(message)
    sys.exit(status)


def analysis_options(*, for_report_files_only: bool = False) -> Callable[[F], F]:
    """--threshold, --peaks and --bytes-definition (and --redact), with the same meaning in every command, and
    one environment variable each for every command: NCU_ROOFLINE_THRESHOLD, _PEAKS, _BYTES_DEFINITION, _REDACT.

    `for_report_files_only`: the command also reads analysed JSON, which keeps its settings
    (the threshold then defaults to None, meaning "the model's default").
    """
    scope = " (report files only; JSON and batch inputs keep theirs)" if for_report_files_only else ""

    def decorate(f: F) -> F:
        f = click.option("--redact", is_flag=True, envvar=f"{ENV_PREFIX}_REDACT",
                         help="Leave out paths (base names only) and NVTX range names.")(f) \
            if not for_report_files_only else f
        f = click.option("--bytes-definition", type=click.Choice([R.CHART, R.TAGS]), default=R.CHART,
                         envvar=f"{ENV_PREFIX}_BYTES_DEFINITION",
                         show_default=True,
                         help="L1/L2 bytes: Nsight Compute's roofline-chart metrics, or all tag traffic "
                              f"(lts__t_bytes / l1tex__t_bytes){scope}.")(f)
        f = click.option("--peaks", "peaks_file", default=None, metavar="PEAKS.json", envvar=f"{ENV_PREFIX}_PEAKS",
                         type=click.Path(dir_okay=False),
                         help=f"Measured roofs that override or add to the report's own (see README){scope}.")(f)
        f = click.option("--threshold", type=click.FloatRange(0, 1, min_open=True), envvar=f"{ENV_PREFIX}_THRESHOLD",
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


def describe_run(run: Run) -> str:
    """One side of a comparison, or one run of a trend, as --verbose tells it: what it was read as, and from what."""
    kind = {"report": "a report file", "json": "an ncu-roofline JSON document", "batch": "a batch output folder"}
    skipped = f", {len(run.skipped)} skipped" if run.skipped else ""
    return (f"{kind.get(run.kind, run.kind)}; {count(len(run.reports), 'report')}{skipped}, "
            f"{count(len(run.kernels), 'launch')}")


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


def check_output(output: str | None, force: bool) -> None:
    """Refuse at once an output file `emit` would refuse after the analysis (an OutputError)."""
    if output is not None and output != "-":
        check_target(output, force)


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
