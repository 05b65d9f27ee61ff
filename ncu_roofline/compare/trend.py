"""Trends over many runs: per-kernel duration and roof utilisation across dated runs, and drift.

A run is anything `ncu_roofline.compare.runs.load_run` reads: a `batch` output folder (`manifest.json` and
one ncu-roofline JSON document per report), an ncu-roofline JSON document written by
`report --format json`, or a report file. A folder without `manifest.json` is taken as a parent
of runs: each of its sub-folders that holds a `manifest.json` is one run (`nightly/2026-11-01/`).

Order. Runs are found, dated and loaded by `compare.trend_runs`, and ordered by a date
(`compare.dating`: the ISO date leading the name, else the time recorded in the manifest, else
the modification time); each run says which (`date_source`).

Gaps. A run that cannot be used (an unreadable file, no usable kernel) is kept as a gap: it
has no kernels, its reason is stated (`error`), and the trend goes on over the others. At least
two usable runs are needed.

Groups. A run's repeated launches of one kernel (the same name, grid, block and NVTX ranges, within
one report: `compare.groups.group_launches`, what `diff` compares) are one group, and a series
follows a group: its duration in a run is the median of the group's launches there (what `diff`
compares; a capture that holds more or fewer launches of a kernel does not move it), and it keeps
the launch count and the total (the GPU time, what coverage counts) beside it. The bounding roof,
utilisation and regime are the median launch's.

Matching. Groups are followed across runs as `diff` matches them (`compare.matching.match_kernels`:
exact launch key, then same function, generated name and the user's `--match` rules), within
reports of the same file base name. When every run holds exactly one report, the reports are
taken as the same program whatever their names. Each run is matched against the groups seen so
far (the latest of each), so a kernel missing from one run is picked up again in the next.

Per kernel (group): the median launch duration, launches, GPU time, bounding roof, utilisation of
that roof and regime in every run; the change of the median from its first to its last timed run
in %; the slope of a least-squares fit of that duration against run index, in % of the first
duration per run; and `drift` when the duration rose by
more than the drift threshold (5 %) from first to last AND the slope is positive. So that launch
jitter is not called drift, a kernel must also have run at least `min_duration_s` (5 µs) in its
first run and have lost at least `min_delta_s` (2 µs), as for the `diff` gate; set both to 0 to
drop that guard. Total GPU time per run.

Coverage, as for the `diff` gate (`compare.trend_coverage`): the share of the first usable run's
GPU time (the groups' totals) in kernels that are timed again in the last usable run, which is what "first to last"
compares. Under `min_coverage_pct` (50 %) and with no kernel drifting, the verdict is
`insufficient_coverage` rather than "no drift" (unless `allow_unmatched`). Each run also states
the share of its GPU time in kernels seen in an earlier run (`followed_share`).

The document: `Trend.to_json`, the deterministic `ncu-roofline-trend/3` JSON. What pages show
is built in `views.trend` and written by `render.trend` (CSV rows, a Markdown summary, an HTML
page with charts). No file is written and nothing is printed here; the CLI does that.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..api.jsondoc import dumps
from ..settings import AnalysisSettings
from ..version import __version__
from .changes import kernel_side, relative_pct
from .dating import TrendUsageError
from .gate import DEFAULT_MIN_COVERAGE_PCT
from .groups import Group, group_launches, reports_by_name
from .matching import display_name, match_kernels, match_key
from .names import MatchRule
from .noise import DEFAULT_MIN_DELTA_S, DEFAULT_MIN_DURATION_S
from .runs import Run
from .trend_coverage import followed_shares, verdict_coverage
from .trend_runs import MIN_RUNS, TrendRun, load_runs

SCHEMA = "ncu-roofline-trend/3"
DEFAULT_DRIFT_PCT = 5.0
TOP_CHARTS = 12
# A change within this relative tolerance of the threshold is not over it (float rounding).
_TOLERANCE = 1e-9


# --------------------------------------------------------------------------------------------
# Following kernels across runs


@dataclass
class Series:
    """One kernel (a group of launches) followed across runs: a point per run (None where the run does
    not have it), whose `duration_s` is the median of its launches there and `total_s` their sum."""

    key: str
    name: str
    report: str
    points: list[dict[str, Any] | None]
    launch: str = ""             # grid, block and NVTX ranges, as in the key
    change_pct: float | None = None
    slope_pct_per_run: float | None = None
    drift: bool = False

    def values(self, field_name: str) -> list[Any]:
        return [p.get(field_name) if p else None for p in self.points]

    @property
    def durations(self) -> list[float | None]:
        return self.values("duration_s")

    @property
    def timed(self) -> list[tuple[int, float]]:
        return [(i, d) for i, d in enumerate(self.durations) if d is not None]

    @property
    def runs_present(self) -> int:
        return sum(1 for p in self.points if p is not None)

    @property
    def totals(self) -> list[float | None]:
        """The group's GPU time in each run (None where it did not run or was not timed)."""
        return self.values("total_s")

    @property
    def total_duration_s(self) -> float:
        """The group's GPU time over every run."""
        return sum(t for t in self.totals if t is not None)

    @property
    def first_s(self) -> float | None:
        timed = self.timed
        return timed[0][1] if timed else None

    @property
    def last_s(self) -> float | None:
        timed = self.timed
        return timed[-1][1] if timed else None

    def bound_first_last(self) -> tuple[str | None, str | None]:
        present = [p for p in self.points if p is not None]
        if not present:
            return None, None
        return present[0]["bound_by"], present[-1]["bound_by"]

    def to_dict(self) -> dict[str, Any]:
        first_bound, last_bound = self.bound_first_last()
        return {
            "key": self.key,
            "name": self.name,
            "report": self.report,
            "runs_present": self.runs_present,
            "durations_s": self.durations,
            "launches": self.values("launches"),
            "total_s": self.totals,
            "utilization": self.values("utilization"),
            "bound_by": self.values("bound_by"),
            "regime": self.values("regime"),
            "first_s": self.first_s,
            "last_s": self.last_s,
            "bound_by_first": first_bound,
            "bound_by_last": last_bound,
            "total_duration_s": self.total_duration_s if self.timed else None,
            "change_pct": self.change_pct,
            "slope_pct_per_run": self.slope_pct_per_run,
            "drift": self.drift,
        }


def _dims_text(value: Any) -> str:
    return "x".join(str(v) for v in value) if isinstance(value, (list, tuple)) and value else "?"


def _launch_text(k: dict[str, Any]) -> str:
    nvtx = match_key(k)[3]
    text = f"grid={_dims_text(k.get('grid_size'))} block={_dims_text(k.get('block_size'))}"
    return text + " nvtx=" + "/".join(nvtx) if nvtx else text


def _series_key(where: str, k: dict[str, Any]) -> str:
    """`[report: ]name grid=AxBxC block=AxBxC[ nvtx=a/b]`: one group of a run (made unique within the trend)."""
    text = f"{display_name(k)} {_launch_text(k)}"
    return f"{where}: {text}" if where else text


def _point(group: Group) -> dict[str, Any]:
    side, timing = kernel_side(group.representative), group.timing()
    return {"position": group.positions[0], "report": group.representative.report,
            "duration_s": timing["median_s"], "total_s": timing["total_s"], "launches": timing["launches"],
            "bound_by": side["bound_by"], "utilization": side["bound_utilization"], "regime": side["regime"]}


def follow_kernels(runs: Sequence[Run], rules: Sequence[MatchRule] = ()) -> tuple[list[Series], bool]:
    """Series of every kernel group across `runs` (in order); and whether reports matched by base name."""
    by_name = reports_by_name(*runs)
    series: list[Series] = []
    latest: dict[str, list[dict[str, Any]]] = {}   # per report group: the latest group of each series
    owner: dict[str, list[int]] = {}                # per report group: the series of each entry above
    keys: set[str] = set()
    for r, run in enumerate(runs):
        by_where: dict[str, list[Group]] = {}
        for g in group_launches(run, by_name):
            by_where.setdefault(g.report_group, []).append(g)
        for where, here in by_where.items():
            known = latest.setdefault(where, [])
            ids = owner.setdefault(where, [])
            matching = match_kernels(list(known), [g.data for g in here], rules)
            for pair in matching.pairs:
                series[ids[pair.base]].points[r] = _point(here[pair.head])
                known[pair.base] = here[pair.head].data
            for h in matching.unmatched_head:
                g = here[h]
                key = _series_key(where, g.data)
                while key in keys:
                    key += "'"
                keys.add(key)
                points: list[dict[str, Any] | None] = [None] * len(runs)
                points[r] = _point(g)
                series.append(Series(key, display_name(g.data), g.representative.report, points,
                                     _launch_text(g.data)))
                known.append(g.data)
                ids.append(len(series) - 1)
    return series, by_name


def least_squares_slope(points: Sequence[tuple[float, float]]) -> float | None:
    """The slope of the least-squares line through (x, y) points; None for fewer than 2 x values."""
    if len(points) < 2:
        return None
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    if sxx == 0:
        return None
    return sum((x - mx) * (y - my) for x, y in points) / sxx


def assess(s: Series, drift_pct: float, min_duration_s: float, min_delta_s: float) -> None:
    """Fill in the change, the slope and the drift flag of one series."""
    timed = s.timed
    if len(timed) < 2:
        s.change_pct = s.slope_pct_per_run = None
        s.drift = False
        return
    first, last = timed[0][1], timed[-1][1]
    s.change_pct = relative_pct(first, last)
    slope = least_squares_slope([(float(i), d) for i, d in timed])
    s.slope_pct_per_run = slope / first * 100.0 if slope is not None and first else None
    limit = drift_pct * (1 + _TOLERANCE) + _TOLERANCE
    s.drift = bool(s.change_pct is not None and s.change_pct > limit
                   and s.slope_pct_per_run is not None and s.slope_pct_per_run > 0
                   and first >= min_duration_s * (1 - _TOLERANCE)
                   and last - first >= min_delta_s * (1 - _TOLERANCE))


def _by_change(s: Series) -> tuple[Any, ...]:
    return (s.change_pct is None, -(s.change_pct or 0.0), -s.total_duration_s, s.key)


# --------------------------------------------------------------------------------------------
# The whole trend


@dataclass
class Trend:
    """Runs (oldest first) and every kernel across them (largest first → last growth first)."""

    runs: list[TrendRun]
    kernels: list[Series]
    drift_pct: float = DEFAULT_DRIFT_PCT
    min_duration_s: float = DEFAULT_MIN_DURATION_S
    min_delta_s: float = DEFAULT_MIN_DELTA_S
    reports_by_name: bool = True
    notes: list[str] = field(default_factory=list)
    min_coverage_pct: float = DEFAULT_MIN_COVERAGE_PCT
    allow_unmatched: bool = False
    coverage: dict[str, Any] = field(default_factory=dict)
    rules: list[str] = field(default_factory=list)

    @property
    def drifting(self) -> list[Series]:
        return [s for s in self.kernels if s.drift]

    @property
    def verdict(self) -> str:
        """`drift`, `no_drift`, or `insufficient_coverage` (nothing drifted, but too little was followed)."""
        if self.drifting:
            return "drift"
        share = self.coverage.get("share")
        covered = share is not None and share * 100.0 >= self.min_coverage_pct * (1 - _TOLERANCE)
        return "no_drift" if covered or self.allow_unmatched else "insufficient_coverage"

    @property
    def totals(self) -> list[float | None]:
        return [r.total_gpu_time_s for r in self.runs]

    def top(self, count: int = TOP_CHARTS) -> list[Series]:
        """The `count` kernels (groups) with the most GPU time over all runs."""
        timed = [s for s in self.kernels if s.timed]
        return sorted(timed, key=lambda s: (-s.total_duration_s, s.key))[:count]

    def total_change(self) -> dict[str, Any]:
        known = [(i, t) for i, t in enumerate(self.totals) if t is not None and self.runs[i].usable]
        first = known[0][1] if known else None
        last = known[-1][1] if known else None
        slope = least_squares_slope([(float(i), t) for i, t in known])
        return {"first_s": first, "last_s": last, "change_pct": relative_pct(first, last),
                "slope_pct_per_run": slope / first * 100.0 if slope is not None and first else None}

    def date_sources(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for r in self.runs:
            counts[r.date_source] = counts.get(r.date_source, 0) + 1
        return dict(sorted(counts.items()))

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "generator": {"name": "ncu-roofline", "version": __version__},
            "settings": {"drift_pct": self.drift_pct, "min_duration_s": self.min_duration_s,
                         "min_delta_s": self.min_delta_s, "min_coverage_pct": self.min_coverage_pct,
                         "allow_unmatched": self.allow_unmatched, "match_rules": list(self.rules),
                         "report_matching": "base name" if self.reports_by_name else "one report per run"},
            "runs": [r.summary() for r in self.runs],
            "total": self.total_change(),
            "coverage": self.coverage,
            "verdict": self.verdict,
            "kernels": [s.to_dict() for s in self.kernels],
            "drifting": [s.key for s in self.drifting],
        }

    def to_json(self, indent: int | None = 1) -> str:
        """The `ncu-roofline-trend/3` document: sorted keys, no NaN, nothing time-dependent."""
        return dumps(self.to_dict(), indent)


def build_trend(runs: Sequence[TrendRun], *, drift_pct: float = DEFAULT_DRIFT_PCT,
                min_duration_s: float = DEFAULT_MIN_DURATION_S, min_delta_s: float = DEFAULT_MIN_DELTA_S,
                min_coverage_pct: float = DEFAULT_MIN_COVERAGE_PCT, allow_unmatched: bool = False,
                rules: Sequence[MatchRule] = ()) -> Trend:
    """Follow the kernels of dated runs (already in order), assess each for drift, and measure coverage."""
    series, by_name = follow_kernels([r.run for r in runs], rules)
    for s in series:
        assess(s, drift_pct, min_duration_s, min_delta_s)
    series.sort(key=_by_change)
    gpu_time = [s.totals for s in series]  # coverage counts GPU time: each group's total in each run
    usable = [r.usable for r in runs]
    for r, share in zip(runs, followed_shares(gpu_time, usable), strict=False):
        r.followed_share = share
    return Trend(list(runs), series, drift_pct, min_duration_s, min_delta_s, by_name,
                 min_coverage_pct=min_coverage_pct, allow_unmatched=allow_unmatched,
                 coverage=verdict_coverage(gpu_time, usable, [r.label for r in runs], min_coverage_pct),
                 rules=[r.text for r in rules])


def trend(specs: Iterable[str | Path], *, drift_pct: float = DEFAULT_DRIFT_PCT,
          min_duration_s: float = DEFAULT_MIN_DURATION_S, min_delta_s: float = DEFAULT_MIN_DELTA_S,
          min_coverage_pct: float = DEFAULT_MIN_COVERAGE_PCT, allow_unmatched: bool = False,
          rules: Sequence[MatchRule] = (), settings: AnalysisSettings | None = None) -> Trend:
    """Load, date and order the runs (see `load_runs`), then build the trend."""
    runs = load_runs(specs, settings)
    return build_trend(runs, drift_pct=drift_pct, min_duration_s=min_duration_s, min_delta_s=min_delta_s,
                       min_coverage_pct=min_coverage_pct, allow_unmatched=allow_unmatched, rules=rules)


__all__ = ["DEFAULT_DRIFT_PCT", "MIN_RUNS", "SCHEMA", "TOP_CHARTS", "Series", "Trend", "TrendRun",
           "TrendUsageError", "assess", "build_trend", "follow_kernels", "least_squares_slope", "load_runs",
           "trend"]
