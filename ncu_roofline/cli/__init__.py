"""Command line: a thin click layer over the library; the only place that prints or exits."""

from __future__ import annotations

import click

from .. import __version__
from .batch import batch
from .diff import diff
from .metrics import metrics
from .report import report
from .trend import trend


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="ncu-roofline")
def main() -> None:
    """Hierarchical roofline analysis of NVIDIA Nsight Compute captures.

    Reads .ncu-rep files (no GPU or Nsight install needed) and `ncu --csv --page raw` exports,
    and says for every kernel which roof bounds it and how far below that roof it sits.
    """


for command in (report, batch, diff, metrics, trend):
    main.add_command(command)
