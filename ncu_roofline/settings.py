"""The analysis settings: one typed, frozen object from the command line down to the model.

Every command (`report`, `batch`, `diff`, `trend`) and every library entry point takes one
`AnalysisSettings`; batch workers receive it pickled. What each field means:

- `threshold`: utilisation of the bounding limit at or above which a kernel is at its limit
  (regime `roof`) rather than below every limit (`latency`).
- `peaks`: a parsed peaks file whose measured roofs override or add to the report's own.
- `bytes_definition`: L1/L2 bytes from Nsight Compute's roofline-chart metrics (`chart`) or from
  all tag traffic (`tags`).
- `group_by`: what makes launches one kernel group: the same kernel with the same launch
  configuration (`launch`: name, grid, block) or the same kernel name alone (`name`).
- `launch_findings`: findings for every launch of a report of more than 1,000 launches too (by
  default such a report has them per kernel group, from each group's longest launch).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .knowledge import recipes as R
from .knowledge import throughputs as T
from .knowledge.peaks_file import UserPeaks, load_peaks

DEFAULT_THRESHOLD = 0.6
BYTES_DEFINITIONS = (R.CHART, R.TAGS)
GROUP_BY_LAUNCH = "launch"  # one group per (kernel name, grid, block)
GROUP_BY_NAME = "name"  # one group per kernel name
GROUP_BY = (GROUP_BY_LAUNCH, GROUP_BY_NAME)


@dataclass(frozen=True)
class AnalysisSettings:
    """How every kernel is modelled. Immutable and picklable."""

    threshold: float = DEFAULT_THRESHOLD
    peaks: UserPeaks | None = None
    bytes_definition: str = R.CHART
    group_by: str = GROUP_BY_LAUNCH
    launch_findings: bool = False

    def __post_init__(self) -> None:
        if not 0 < self.threshold <= 1:
            raise ValueError("threshold must be in (0, 1]")
        if self.bytes_definition not in BYTES_DEFINITIONS:
            raise ValueError(f"bytes_definition must be {R.CHART!r} or {R.TAGS!r}")
        if self.group_by not in GROUP_BY:
            raise ValueError(f"group_by must be {GROUP_BY_LAUNCH!r} or {GROUP_BY_NAME!r}")

    @classmethod
    def from_options(cls, *, threshold: float | None = None, peaks: str | Path | UserPeaks | None = None,
                     bytes_definition: str = R.CHART, group_by: str = GROUP_BY_LAUNCH,
                     launch_findings: bool = False) -> AnalysisSettings:
        """Settings from command-line style values: a peaks file path is read (PeaksFileError if bad)."""
        user = load_peaks(peaks) if isinstance(peaks, (str, Path)) else peaks
        return cls(DEFAULT_THRESHOLD if threshold is None else threshold, user, bytes_definition, group_by,
                   launch_findings)

    @property
    def peaks_file(self) -> str | None:
        return self.peaks.path if self.peaks is not None else None

    def to_dict(self, redact: bool = False) -> dict[str, Any]:
        """The `settings` object of the JSON document."""
        path = self.peaks_file
        return {
            "regime_threshold": self.threshold,
            "byte_definition_preference": self.bytes_definition,
            "peaks_file": os.path.basename(path) if redact and path else path,
            "flop_convention": dict(R.FLOP_CONVENTION),
            "regime_rules": dict(T.REGIME_RULES),
            "group_by": self.group_by,
            "launch_findings": self.launch_findings,
        }
