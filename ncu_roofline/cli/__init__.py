"""Command line: a thin click layer over the library; the only place that prints or exits."""

from __future__ import annotations

import gc
import signal
import sys
from typing import Any

import click

from ..errors import RooflineError
from ..version import __version__
from .batch import batch
from .common import EXIT_BAD_INPUT, EXIT_INTERRUPTED, EXIT_TERMINATED, environment_defaults, fail, verbosity_options
from .diff import diff
from .github import github
from .heap import pad_heap
from .metrics import metrics
from .report import report
from .trend import trend

# A report of 50,000 launches allocates millions of small objects that live to the end; with
# the interpreter's default thresholds (700, 10, 10) its collector walks that heap again and
# again (a quarter of the CPU time of `report` at 5,000 launches). The analysis makes no
# reference cycles of its own, so collections this much rarer cost nothing in memory.
GC_THRESHOLDS = (100_000, 20, 100)


class Terminated(BaseException):
    """SIGTERM, raised in the main thread like Ctrl-C's KeyboardInterrupt, so that clean-up runs."""


def _terminate(_signum: int, _frame: object) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # one is enough: let the clean-up finish
    raise Terminated


class _Commands(click.Group):
    """The command group; a library error becomes one line on standard error and exit status 2.

    This is the one place where errors turn into exit codes: commands let `RooflineError`
    (unreadable input, a bad peaks file, an output that cannot be written) propagate. Ctrl-C
    exits 130 and SIGTERM 143 (128 + the signal), after the exception has unwound every `finally`
    on its way: temporary files are removed, reader processes stopped, and an output is either
    the old file or the whole new one.
    """

    def invoke(self, ctx: click.Context) -> Any:
        thresholds = gc.get_threshold()
        gc.set_threshold(*GC_THRESHOLDS)  # for this command only (an embedding program gets its own back)
        pad_heap()  # freed blocks' pages stay for the next ones (`heap`); glibc has no query to restore it by
        try:
            return self._invoke(ctx)
        finally:
            gc.set_threshold(*thresholds)

    def _invoke(self, ctx: click.Context) -> Any:
        try:
            previous: Any = signal.signal(signal.SIGTERM, _terminate)
        except ValueError:  # not the main thread (an embedding application): leave signals alone
            previous = None
        try:
            return super().invoke(ctx)
        except RooflineError as exc:
            fail(str(exc))
            sys.exit(EXIT_BAD_INPUT)
        except KeyboardInterrupt:
            fail("interrupted")
            sys.exit(EXIT_INTERRUPTED)
        except Terminated:
            fail("terminated")
            sys.exit(EXIT_TERMINATED)
        finally:
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="ncu-roofline")
@verbosity_options(group=True)
def main() -> None:
    """Hierarchical roofline analysis of NVIDIA Nsight Compute captures.

    Reads .ncu-rep files (no GPU or Nsight install needed) and `ncu --csv --page raw` exports,
    and says for every kernel which roof bounds it and how far below that roof it sits.

    Every option takes its default from the environment: --threshold of `report` from
    NCU_ROOFLINE_REPORT_THRESHOLD, else NCU_ROOFLINE_THRESHOLD (each command's --help names
    them); an option on the command line wins. Shell completion:
    eval "$(_NCU_ROOFLINE_COMPLETE=bash_source ncu-roofline)" (zsh_source, fish_source).

    \b
    Examples:
      ncu $(ncu-roofline metrics) -o run ./app
      ncu-roofline report run.ncu-rep
      ncu-roofline report run.ncu-rep -f md -o summary.md
      ncu-roofline diff base.json run.ncu-rep --fail-on-regression 5
      NCU_ROOFLINE_THRESHOLD=0.7 ncu-roofline -q batch captures/ -o out
    """


for command in (report, batch, diff, metrics, trend, github):
    main.add_command(command)
environment_defaults(main)
