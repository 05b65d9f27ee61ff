"""How much of a trend is followed from run to run: the coverage rule of the `diff` gate, for drift.

Inputs are plain: the duration of every followed kernel (a series) in every run (None where it did
not run), and which runs are usable (an unusable run is a gap).

- `followed_shares`: per run, the share of its GPU time in series that were timed in an earlier
  usable run (None for the first usable run and for gaps).
- `verdict_coverage`: the share of the first usable run's GPU time in series that are timed
  again in the last usable run. Drift is judged from first to last, so this is the share of GPU
  time the drift verdict actually compares.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

Durations = Sequence[Sequence[float | None]]


def _run_total(durations: Durations, run: int) -> float:
    return sum(d[run] or 0.0 for d in durations)


def followed_shares(durations: Durations, usable: Sequence[bool]) -> list[float | None]:
    """Per run: its GPU time in series already timed in an earlier usable run, as a share."""
    out: list[float | None] = []
    seen: set[int] = set()
    first = True
    for run, ok in enumerate(usable):
        if not ok:
            out.append(None)
            continue
        total = _run_total(durations, run)
        followed = sum(d[run] or 0.0 for n, d in enumerate(durations) if n in seen)
        out.append(None if first or not total else followed / total)
        seen |= {n for n, d in enumerate(durations) if d[run] is not None}
        first = False
    return out


def verdict_coverage(durations: Durations, usable: Sequence[bool], labels: Sequence[str],
                     min_pct: float) -> dict[str, Any]:
    """The share of the first usable run's GPU time in series timed again in the last usable run."""
    runs = [n for n, ok in enumerate(usable) if ok]
    out: dict[str, Any] = {"first_run": None, "last_run": None, "first_s": None, "followed_s": None,
                           "share": None, "followed_kernels": 0, "min_pct": min_pct}
    if len(runs) < 2:
        return out
    first, last = runs[0], runs[-1]
    total = _run_total(durations, first)
    both = [d for d in durations if d[first] is not None and d[last] is not None]
    followed = sum(d[first] or 0.0 for d in both)
    out.update(first_run=labels[first], last_run=labels[last], first_s=total, followed_s=followed,
               share=followed / total if total else None, followed_kernels=len(both))
    return out
