"""ncu-roofline: hierarchical roofline analysis of NVIDIA Nsight Compute captures.

    >>> import ncu_roofline
    >>> result = ncu_roofline.analyze(["capture.ncu-rep"])
    >>> result.kernels[["name", "bound_by", "bound_by_label", "regime"]]
    >>> result.groups                 # one row per kernel group, the most GPU time first
    >>> result                        # in Jupyter: the top groups and a roofline (`Analysis._repr_html_`)
    >>> fig = result.plot(level="dram", kernels=5)  # a matplotlib Figure (`Analysis.plot`)
    >>> result.to_json()

The frames hold the keys the JSON document uses (`bound_by`, `regime`, both Categoricals), the labels the
report page shows beside them (`bound_by_label`: "DRAM", "FP64 pipe"), and lists as lists (`flags`,
`nvtx_ranges`; a group's `limiters` and `regimes` as dicts of launches).

`Analysis` lives in the `api` layer, which draws nothing; its notebook display and its plot are drawn by
`render.notebook` and attached here, at the top of the package, so that every `Analysis`, however it was
imported, has them: importing any part of the package runs this module first.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING


def _runs_as_command(argv: list[str], orig_argv: list[str]) -> bool:
    """Whether this process is the command: `ncu-roofline ...`, or `python -m ncu_roofline ...` (while `python -m`
    imports the packages of the module it runs, which may import this one, `argv[0]` is "-m": the interpreter's
    own command line says which module that is)."""
    if not argv:
        return False
    if os.path.basename(argv[0]) == "ncu-roofline":
        return True
    run = [*orig_argv, ""]
    return argv[0] == "-m" and "-m" in run and run[run.index("-m") + 1].split(".")[0] == "ncu_roofline"


# The command multiplies no matrices, and OpenBLAS's worker threads spin for about 0.1 s of CPU once numpy loads: in
# this process and in every reader process it starts. Set before numpy's import, and only where the user set nothing;
# a library import leaves the environment alone.
if _runs_as_command(getattr(sys, "argv", []), getattr(sys, "orig_argv", [])):
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from .errors import InputError, RooflineError  # noqa: E402 (after the thread setting)
from .readers import start_for_command  # noqa: E402 (after the thread setting)
from .settings import AnalysisSettings  # noqa: E402 (after the thread setting)
from .version import __version__  # noqa: E402 (after the thread setting)

# `ncu-roofline report x.ncu-rep`: the reader processes start here, before the analysis and the command line load.
start_for_command(sys.argv)

from .api.analysis import Analysis, ReportResult, analyze  # noqa: E402 (after the readers' start)

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def _repr_html_(self: Analysis) -> str:
    """The analysis in a notebook: the kernel groups with the most GPU time (limit, its utilisation, regime,
    the top finding's next step) and a small roofline per GPU, as self-contained HTML (inline SVG, no script)."""
    from .render.notebook import notebook_html

    return notebook_html(self)


def plot(self: Analysis, level: str | Sequence[str] | None = None, kernels: int | str | Sequence[str] | None = None,
         gpu: str | int | None = None) -> Figure:
    """The hierarchical roofline of one GPU as a matplotlib `Figure` (Agg canvas, never shown by itself).

    `level`: "dram", "l2", "l1" or a list of them (all by default); `kernels`: the number of groups to draw,
    the most GPU time first, or a text (or texts) their names contain; `gpu`: a device name, a text it
    contains, or its number. Raises ValueError for what the analysis does not hold.
    """
    from .render.notebook import roofline_figure

    return roofline_figure(self, level=level, kernels=kernels, gpu=gpu)


Analysis._repr_html_ = _repr_html_  # type: ignore[attr-defined]
Analysis.plot = plot  # type: ignore[attr-defined]

__all__ = ["Analysis", "AnalysisSettings", "InputError", "ReportResult", "RooflineError", "__version__", "analyze"]
