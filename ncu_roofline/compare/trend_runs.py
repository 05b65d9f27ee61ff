"""The runs of a trend: found, dated and loaded, oldest first; an unusable run is kept as a gap.

`load_runs` expands the arguments (`compare.dating.discover_runs`), dates each run
(`compare.dating.run_date`) and loads it (`compare.runs.load_run`). A run that cannot be
loaded (an unreadable file, no usable kernel) becomes a `TrendRun` with no kernels and its
reason in `error`: a gap, stated in every output. Fewer than `MIN_RUNS` usable runs is an error.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..settings import AnalysisSettings
from .dating import TrendUsageError, discover_runs, run_date, unique_labels
from .runs import Run, load_run

MIN_RUNS = 2


@dataclass
class TrendRun:
    """One run of the trend: what was loaded and when it ran."""

    label: str
    input: str
    date: _dt.datetime          # naive, UTC where the source says so
    date_text: str
    date_source: str            # "name" | "manifest" | "mtime"
    run: Run
    error: str | None = None    # why the run could not be used: a gap in the trend
    followed_share: float | None = None  # its GPU time in kernels seen in an earlier run

    @property
    def usable(self) -> bool:
        return self.error is None

    @property
    def total_gpu_time_s(self) -> float | None:
        return self.run.total_duration_s

    def summary(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "usable": self.usable,
            "error": self.error,
            "followed_share": self.followed_share,
            "date": self.date_text,
            "date_source": self.date_source,
            "input": self.input,
            "kind": self.run.kind,
            "reports": list(self.run.reports),
            "kernel_count": len(self.run.kernels),
            "usable_kernel_count": self.run.usable_count,
            "total_gpu_time_s": self.total_gpu_time_s,
            "skipped": [dict(s) for s in self.run.skipped],
        }


def load_runs(specs: Iterable[str | Path], settings: AnalysisSettings | None = None) -> list[TrendRun]:
    """Find, load and date every run, oldest first; raises `InputError` for unusable input."""
    given = [str(s) for s in specs]
    paths = discover_runs(given)
    if len(paths) < MIN_RUNS:
        where = ", ".join(given) or "(no argument)"
        count = "no run" if not paths else "only 1 run" + (f" ({paths[0]})" if given != [str(paths[0])] else "")
        raise TrendUsageError(where, f"{count}: a trend needs at least {MIN_RUNS}",
                              "give two or more batch output folders, their parent folder, or report/JSON files")
    labels = unique_labels(paths)
    runs = []
    for path, label in zip(paths, labels, strict=False):
        when, text, source = run_date(path)
        try:
            runs.append(TrendRun(label, str(path), when, text, source, load_run(path, settings)))
        except TrendUsageError:
            raise
        except InputError as exc:  # a gap, with its reason; the trend goes on over the others
            runs.append(TrendRun(label, str(path), when, text, source, Run(str(path), "unusable", [], []),
                                 error=exc.reason if exc.path == str(path) else str(exc)))
    usable = [r for r in runs if r.usable]
    if len(usable) < MIN_RUNS:
        reasons = "; ".join(f"{r.input}: {r.error}" for r in runs if not r.usable)
        raise TrendUsageError(", ".join(given), f"only {len(usable)} usable run{'s' if len(usable) != 1 else ''} "
                              f"of {len(runs)}: a trend needs at least {MIN_RUNS} ({reasons})")
    runs.sort(key=lambda r: (r.date, r.label, r.input))
    return runs
