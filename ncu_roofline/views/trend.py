"""The trend page and summary as plain data: strings and numbers shaped for one page.

`build_trend_view` turns a `compare.trend.Trend` into what the HTML page and the Markdown summary
show: a header (title, totals, the drift rule, how runs were dated and kernels matched), one
entry per run, one row per kernel (largest growth first), the drifting rows, and the data of the
charts of the kernels with the most GPU time. `drift_message` is the standard-error text of
`trend --fail-on-drift`.
"""

from __future__ import annotations

import os
from typing import Any

from ..compare.trend import TOP_CHARTS, Series, Trend
from ..version import __version__
from . import format as F
from .labels import roof_css, short_label
from .texts import created_at

DATE_SOURCES = {"name": "folder or file name", "manifest": "recorded generation time", "mtime": "modification time"}


def kernel_row(s: Series, n_runs: int, charted: dict[str, str]) -> dict[str, Any]:
    """One kernel of the table: names, durations, change and slope as text, bounding roofs, drift.

    `charted` maps series keys to the ids of their charts; `sort` holds the raw values the page
    sorts the table by.
    """
    first_bound, last_bound = s.bound_first_last()
    change = s.change_pct
    state = "unknown" if change is None else ("slower" if change > 1.0 else "faster" if change < -1.0 else "same")
    return {
        "key": s.key,
        "launch": s.launch,
        "full_name": s.name,
        "short_name": F.short_name(s.name, 70),
        "report": os.path.basename(s.report),
        "present": f"{s.runs_present}/{n_runs}",
        "first": F.seconds(s.first_s),
        "last": F.seconds(s.last_s),
        "change": F.signed_pct(change),
        "slope": F.signed_pct(s.slope_pct_per_run, 2) + "/run" if s.slope_pct_per_run is not None else F.NA,
        "state": state,
        "bound_first": short_label(first_bound), "bound_last": short_label(last_bound),
        "bound_first_css": roof_css(first_bound), "bound_last_css": roof_css(last_bound),
        "bound_changed": first_bound != last_bound,
        "drift": s.drift,
        "chart_id": charted.get(s.key),
        # raw values for sorting the table in the browser
        "sort": {"present": s.runs_present, "first": s.first_s, "last": s.last_s, "change": change,
                 "slope": s.slope_pct_per_run},
    }


def kernel_chart(s: Series) -> dict[str, Any]:
    """What the chart of one kernel draws: its values per run (None where it did not run)."""
    return {
        "name": s.name,
        "durations_s": s.durations,
        "utilization": s.values("utilization"),
        "bound_by": s.values("bound_by"),
        "first_s": s.first_s,
        "last_s": s.last_s,
        "change_pct": s.change_pct,
        "slope_pct_per_run": s.slope_pct_per_run,
        "drift": s.drift,
    }


def date_sources_text(t: Trend) -> str:
    """Where the run dates came from, with counts: `folder or file name (3)`."""
    parts = [f"{DATE_SOURCES.get(src, src)} ({n})" for src, n in t.date_sources().items()]
    return ", ".join(parts)


def drift_rule(t: Trend) -> str:
    """The drift rule as the end of a sentence starting "A kernel drifts when its duration"."""
    return f"rose by more than {t.drift_pct:g} % from its first to its last run, with a rising least-squares fit"


def jitter_rule(t: Trend) -> str:
    """The guard against launch jitter as a sentence; empty when it is off."""
    if t.min_duration_s <= 0 and t.min_delta_s <= 0:
        return ""
    return (f"Kernels shorter than {F.seconds(t.min_duration_s)} in their first run, or slower by less than "
            f"{F.seconds(t.min_delta_s)}, are not called drifting: launch jitter is about a microsecond.")


def _header(t: Trend) -> dict[str, Any]:
    n = len(t.runs)
    total = t.total_change()
    return {
        "title": f"Roofline trend: {n} runs, {t.runs[0].label} → {t.runs[-1].label}",
        "run_count": n,
        "first_label": t.runs[0].label, "last_label": t.runs[-1].label,
        "first_date": t.runs[0].date_text, "last_date": t.runs[-1].date_text,
        "date_sources": date_sources_text(t),
        "kernel_count": len(t.kernels),
        "drift_count": len(t.drifting),
        "drift_rule": drift_rule(t),
        "jitter_rule": jitter_rule(t),
        "matching": ("reports matched by file base name" if t.reports_by_name
                     else "one report per run: the reports are taken as the same program"),
        "total_first": F.seconds(total["first_s"]), "total_last": F.seconds(total["last_s"]),
        "total_change": F.signed_pct(total["change_pct"]),
        "total_slope": (F.signed_pct(total["slope_pct_per_run"], 2) + "/run"
                        if total["slope_pct_per_run"] is not None else F.NA),
        "tool_version": __version__,
        "created": created_at(),
    }


def build_trend_view(t: Trend, top: int = TOP_CHARTS) -> dict[str, Any]:
    """Everything the trend page and summary show, as plain strings and numbers.

    Keys: `header`, `runs`, `rows` (every kernel), `drifting` (their rows), `top` (the `top`
    kernels with the most GPU time: chart id, row and chart data), `top_count`, `odd_runs` (the
    indices of runs with an unusual number of kernels), `run_labels` and `totals` (total GPU time
    per run, for the total chart).
    """
    top_series = t.top(top)
    charted = {s.key: f"k{n}" for n, s in enumerate(top_series)}
    n = len(t.runs)
    counts = [len(r.run.kernels) for r in t.runs]
    usual = max(sorted(set(counts)), key=counts.count)
    odd = [i for i, c in enumerate(counts) if c != usual]
    runs = [{"label": r.label, "date": r.date_text, "odd": i in odd,
             "date_source": DATE_SOURCES.get(r.date_source, r.date_source),
             "input": r.input, "kind": r.run.kind, "reports": len(r.run.reports), "kernels": len(r.run.kernels),
             "gpu_time": F.seconds(r.total_gpu_time_s), "skipped": list(r.run.skipped)}
            for i, r in enumerate(t.runs)]
    return {
        "header": _header(t),
        "runs": runs,
        "rows": [kernel_row(s, n, charted) for s in t.kernels],
        "drifting": [kernel_row(s, n, charted) for s in t.drifting],
        "top": [{"id": charted[s.key], "row": kernel_row(s, n, charted), "chart": kernel_chart(s)}
                for s in top_series],
        "top_count": len(top_series),
        "odd_runs": odd,
        "run_labels": [r.label for r in t.runs],
        "totals": t.totals,
    }


def drift_message(t: Trend) -> str:
    """Lines for standard error naming the drifting kernels."""
    lines = [f"drift over {t.drift_pct:g} % in {len(t.drifting)} kernel{'s' if len(t.drifting) != 1 else ''}:"]
    for s in t.drifting:
        lines.append(f"  {s.name}: {F.seconds(s.first_s)} -> {F.seconds(s.last_s)} "
                     f"({F.signed_pct(s.change_pct)}, {F.signed_pct(s.slope_pct_per_run)}/run)")
    return "\n".join(lines)


__all__ = ["DATE_SOURCES", "build_trend_view", "date_sources_text", "drift_message", "drift_rule",
           "jitter_rule", "kernel_chart", "kernel_row"]
