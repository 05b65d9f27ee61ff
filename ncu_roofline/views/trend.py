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
from .wording import count

DATE_SOURCES = {"name": "folder or file name", "manifest": "recorded generation time", "mtime": "modification time"}


def kernel_row(s: Series, n_runs: int, charted: dict[str, str]) -> dict[str, Any]:
    """One kernel (a group of launches) of the table: names, launches, GPU time, the first and last median
    launch durations, change and slope as text, bounding roofs, drift.

    `charted` maps series keys to the ids of their charts; `sort` holds the raw values the page
    sorts the table by.
    """
    first_bound, last_bound = s.bound_first_last()
    change = s.change_pct
    counts = sorted({n for n in s.values("launches") if n is not None})
    state = "unknown" if change is None else ("slower" if change > 1.0 else "faster" if change < -1.0 else "same")
    return {
        "key": s.key,
        "launch": s.launch,
        "full_name": s.name,
        "short_name": F.short_name(s.name, 70),
        "report": os.path.basename(s.report),
        "present": f"{s.runs_present}/{n_runs}",
        # launches of the group per run: one figure when every run has as many, else the range
        "launches": (f"{counts[0]:,}" if len(counts) == 1 else f"{counts[0]:,}–{counts[-1]:,}") if counts else F.NA,
        "gpu_time": F.seconds(s.total_duration_s) if s.timed else F.NA,
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
        "sort": {"present": s.runs_present, "launches": counts[-1] if counts else None,
                 "gpu_time": s.total_duration_s if s.timed else None, "first": s.first_s, "last": s.last_s,
                 "change": change, "slope": s.slope_pct_per_run},
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
    """The drift rule as the end of a sentence starting "A kernel drifts when its median launch duration"."""
    return f"rose by more than {t.drift_pct:g} % from its first to its last run, with a rising least-squares fit"


def jitter_rule(t: Trend) -> str:
    """The guard against launch jitter as a sentence; empty when it is off."""
    if t.min_duration_s <= 0 and t.min_delta_s <= 0:
        return ""
    return (f"Kernels shorter than {F.seconds(t.min_duration_s)} in their first run, or slower by less than "
            f"{F.seconds(t.min_delta_s)}, are not called drifting: launch jitter is about a microsecond.")


def coverage_text(t: Trend) -> str:
    """`92 % of the first run's GPU time (2026-11-01) is followed to the last (2026-11-03); minimum 50 %`."""
    c = t.coverage
    if c.get("first_run") is None:
        return "no two usable runs to follow kernels across"
    return (f"{F.coverage_pct(c.get('share'))} of the first usable run's GPU time "
            f"({c['first_run']}) is in kernels timed again in the last ({c['last_run']}); minimum "
            f"{t.min_coverage_pct:g} %")


def verdict_text(t: Trend) -> str:
    """The drift verdict as a sentence (without the kernels' names)."""
    if t.verdict == "drift":
        n = len(t.drifting)
        return f"{count(n, 'kernel')} drifting: median launch duration {drift_rule(t)}."
    if t.verdict == "insufficient_coverage":
        return (f"No verdict: only {coverage_text(t)}. The runs share too few kernels for \"no drift\" to mean "
                "anything; pair renamed kernels with --match, or accept the gap with --allow-unmatched.")
    low = " (under the minimum, accepted by --allow-unmatched)" if t.coverage.get("share") is not None and \
        t.coverage["share"] * 100 < t.min_coverage_pct else ""
    return f"No kernel drifting: none whose median launch duration {drift_rule(t)}; {coverage_text(t)}{low}."


def _header(t: Trend) -> dict[str, Any]:
    n = len(t.runs)
    total = t.total_change()
    gaps = [r for r in t.runs if not r.usable]
    return {
        "verdict": t.verdict,
        "verdict_text": verdict_text(t),
        "coverage": coverage_text(t),
        "gap_count": len(gaps),
        "rules": list(t.rules),
        "title": f"Roofline trend: {n} runs, {t.runs[0].label} → {t.runs[-1].label}",
        "run_count": n,
        "first_label": t.runs[0].label, "last_label": t.runs[-1].label,
        "first_date": t.runs[0].date_text, "last_date": t.runs[-1].date_text,
        "date_sources": date_sources_text(t),
        "kernel_count": len(t.kernels),
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
    kernels with the most GPU time: chart id, row and chart data), `odd_runs` (the
    indices of runs with an unusual number of kernels), `run_labels` and `totals` (total GPU time
    per run, for the total chart).
    """
    top_series = t.top(top)
    charted = {s.key: f"k{n}" for n, s in enumerate(top_series)}
    n = len(t.runs)
    counts = [len(r.run.kernels) for r in t.runs]
    usable_counts = [c for c, r in zip(counts, t.runs, strict=False) if r.usable] or counts
    usual = max(sorted(set(usable_counts)), key=usable_counts.count)
    odd = [i for i, c in enumerate(counts) if c != usual]
    runs = [{"label": r.label, "date": r.date_text, "odd": i in odd and r.usable,
             "date_source": DATE_SOURCES.get(r.date_source, r.date_source),
             "input": r.input, "kind": r.run.kind, "reports": len(r.run.reports), "kernels": len(r.run.kernels),
             "gpu_time": F.seconds(r.total_gpu_time_s), "skipped": list(r.run.skipped),
             "usable": r.usable, "error": r.error or "",
             "followed": F.pct(r.followed_share) if r.followed_share is not None else "—"}
            for i, r in enumerate(t.runs)]
    return {
        "header": _header(t),
        "runs": runs,
        "rows": [kernel_row(s, n, charted) for s in t.kernels],
        "drifting": [kernel_row(s, n, charted) for s in t.drifting],
        "top": [{"id": charted[s.key], "row": kernel_row(s, n, charted), "chart": kernel_chart(s)}
                for s in top_series],
        "odd_runs": odd,
        "run_labels": [r.label for r in t.runs],
        "totals": t.totals,
    }


def drift_message(t: Trend) -> str:
    """Lines for standard error naming the drifting kernels."""
    lines = [f"drift over {t.drift_pct:g} % in {count(len(t.drifting), 'kernel')}:"]
    for s in t.drifting:
        lines.append(f"  {s.name}: {F.seconds(s.first_s)} -> {F.seconds(s.last_s)} "
                     f"({F.signed_pct(s.change_pct)}, {F.signed_pct(s.slope_pct_per_run)}/run)")
    return "\n".join(lines)


def coverage_message(t: Trend) -> str:
    """The standard-error text of `trend --fail-on-drift` when the verdict lacks coverage."""
    return f"drift verdict not reached: {verdict_text(t)}"


__all__ = ["DATE_SOURCES", "build_trend_view", "coverage_message", "coverage_text", "date_sources_text",
           "drift_message", "drift_rule", "jitter_rule", "kernel_chart", "kernel_row", "verdict_text"]
