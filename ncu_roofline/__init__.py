"""ncu-roofline: hierarchical roofline analysis of NVIDIA Nsight Compute captures.

    >>> import ncu_roofline
    >>> result = ncu_roofline.analyze(["capture.ncu-rep"])
    >>> result.kernels[["name", "bound_by", "regime"]]
    >>> result.to_json()
"""

from __future__ import annotations

from .api.analysis import Analysis, ReportResult, analyze
from .errors import InputError, RooflineError
from .settings import AnalysisSettings
from .version import __version__

__all__ = ["Analysis", "AnalysisSettings", "InputError", "ReportResult", "RooflineError", "__version__", "analyze"]
