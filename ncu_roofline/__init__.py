"""ncu-roofline: hierarchical roofline analysis of NVIDIA Nsight Compute captures.

    >>> import ncu_roofline
    >>> result = ncu_roofline.analyze(["capture.ncu-rep"])
    >>> result.kernels[["name", "bound_by", "regime"]]
    >>> result.to_json()
"""

from __future__ import annotations

__version__ = "0.1.0"

from .api.analysis import Analysis, ReportResult, analyze  # noqa: E402
from .errors import InputError, RooflineError  # noqa: E402

__all__ = ["Analysis", "InputError", "ReportResult", "RooflineError", "__version__", "analyze"]
