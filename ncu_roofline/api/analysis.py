"""The public entry point: `analyze(paths)` -> `Analysis` (pandas frame + JSON contract)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import __version__
from ..knowledge import recipes as R
from ..errors import InputError
from .jsondoc import dumps
from ..model.roofline import DEFAULT_THRESHOLD, KernelModel, build_kernel_model
from ..knowledge.peaks_file import UserPeaks, load_peaks
from ..readers import read_report

if TYPE_CHECKING:  # pandas is imported lazily: the CLI's JSON path does not need it
    import pandas as pd

SCHEMA = "ncu-roofline/1"


@dataclass
class ReportResult:
    """One analysed input file."""

    path: str
    source_format: str
    ncu_version: str | None
    kernels: list[KernelModel]
    warnings: list[str] = field(default_factory=list)

    @property
    def devices(self) -> list[str]:
        return sorted({k.raw.device for k in self.kernels if k.raw.device})

    @property
    def total_duration_s(self) -> float | None:
        values = [k.q.duration_s.value for k in self.kernels if k.q.duration_s is not None]
        return sum(values) if values else None

    def to_dict(self, redact: bool = False) -> dict[str, Any]:
        return {
            "path": os.path.basename(self.path) if redact else self.path,
            "source_format": self.source_format,
            "ncu_version": self.ncu_version,
            "devices": self.devices,
            "kernel_count": len(self.kernels),
            "unusable_kernel_count": sum(1 for k in self.kernels if not k.usable),
            "total_duration_s": self.total_duration_s,
            "warnings": list(self.warnings),
            "kernels": [k.to_dict(redact) for k in self.kernels],
        }


@dataclass
class Analysis:
    """The result of `analyze`: every report, every kernel, and the files that failed."""

    reports: list[ReportResult]
    errors: list[InputError]
    threshold: float
    peaks_file: str | None = None
    byte_definition_preference: str = R.CHART

    @property
    def models(self) -> list[tuple[ReportResult, KernelModel]]:
        return [(r, k) for r in self.reports for k in r.kernels]

    @property
    def kernels(self) -> pd.DataFrame:
        """One row per kernel, typed columns with units in their names (nullable: NA = absent)."""
        from .frame import kernels_frame

        return kernels_frame(self)

    def to_dict(self, redact: bool = False) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "generator": {"name": "ncu-roofline", "version": __version__},
            "settings": {
                "regime_threshold": self.threshold,
                "byte_definition_preference": self.byte_definition_preference,
                "peaks_file": (os.path.basename(self.peaks_file) if redact and self.peaks_file
                               else self.peaks_file),
                "flop_convention": dict(R.FLOP_CONVENTION),
            },
            "reports": [r.to_dict(redact) for r in self.reports],
            "errors": [{"path": os.path.basename(e.path) if redact else e.path, "message": e.message}
                       for e in self.errors],
        }

    def to_json(self, redact: bool = False, indent: int | None = None) -> str:
        """The `ncu-roofline/1` JSON document (deterministic: sorted keys, no NaN).

        Compact by default (json's C encoder only serves `indent=None`); pass `indent=2` to read it.
        """
        return dumps(self.to_dict(redact), indent)


def analyze_report(path: str | Path, *, threshold: float = DEFAULT_THRESHOLD,
                   peaks: UserPeaks | None = None, prefer_definition: str = R.CHART) -> ReportResult:
    """Read one file and model every kernel in it (raises InputError for unusable files)."""
    raw = read_report(path)
    models = [build_kernel_model(k, threshold=threshold, user_peaks=peaks,
                                 prefer_definition=prefer_definition) for k in raw.kernels]
    return ReportResult(raw.path, raw.source_format, raw.ncu_version, models, list(raw.warnings))


def analyze(paths: str | Path | Iterable[str | Path], *, threshold: float = DEFAULT_THRESHOLD,
            peaks: str | Path | UserPeaks | None = None, prefer_definition: str = R.CHART,
            strict: bool = True) -> Analysis:
    """Analyse one or more reports (`.ncu-rep`, `.nsight-cuprof-report`, or ncu `--page raw` CSV).

    With `strict=True` (the default) the first unusable file raises `InputError`; with
    `strict=False` bad files are collected in `Analysis.errors` and the others are analysed.
    `peaks` is a peaks file (see `ncu_roofline.peaks_file`) whose roofs override the report's.
    """
    if isinstance(paths, (str, Path)):
        paths = [paths]
    if not 0 < threshold <= 1:
        raise ValueError("threshold must be in (0, 1]")
    if prefer_definition not in (R.CHART, R.TAGS):
        raise ValueError(f"prefer_definition must be {R.CHART!r} or {R.TAGS!r}")
    user = load_peaks(peaks) if isinstance(peaks, (str, Path)) else peaks
    reports: list[ReportResult] = []
    errors: list[InputError] = []
    for path in paths:
        try:
            reports.append(analyze_report(path, threshold=threshold, peaks=user,
                                          prefer_definition=prefer_definition))
        except InputError as exc:
            if strict:
                raise
            errors.append(exc)
    return Analysis(reports, errors, threshold, user.path if user else None, prefer_definition)
