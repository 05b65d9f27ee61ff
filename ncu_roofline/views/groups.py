"""Kernel groups on the page: table rows, per-group sections, the launch list, NVTX roll-up, focus.

The page is built for captures of any size within a budget: static table rows for the
`MAX_GROUP_ROWS` groups with the most time, sections and charts for the `MAX_GROUP_SECTIONS`
first of them, markers for the `MAX_CHART_GROUPS` first on the overview charts. Every launch is
in one compact table (`launch_data`) that the page's script pages through; the groups, their
sections and the NVTX roll-up need no script.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from itertools import repeat
from typing import TYPE_CHECKING, Any

import numpy as np

from ..api.groups import NO_LIMITER, KernelGroup
from ..api.nvtx import RangeNode, nvtx_rollup, top_groups
from ..api.sums import LaunchEntry
from ..settings import GROUP_BY_LAUNCH, GROUP_BY_NAME
from . import format as F
from .labels import long_label, named_limit, regime_label, regime_text, roof_css, short_label
from .wording import count

if TYPE_CHECKING:
    from ..api.analysis import Analysis, ReportResult
    from ..api.focus import FocusSummary
    from ..api.kernel import AnalysedKernel

    # views.report.kernel_view, passed in by views.report (which imports this module).
    KernelView = Callable[[int, AnalysedKernel, dict[str, Any], float | None, set[str]], dict[str, Any]]

MAX_GROUP_ROWS = 300  # static rows of the kernel table; every launch is in the launch list
MAX_GROUP_SECTIONS = 24  # per-group sections, each with its chart: the groups with the most time
MAX_CHART_GROUPS = 200  # groups drawn on the overview charts
MAX_NVTX_ROWS = 200  # rows of the NVTX roll-up (depth first, the most time first)
LAUNCH_SAMPLE = 10  # launches listed in a group's section, for readers without JavaScript
MAX_MIX = 4  # limiters named in a mix; the rest is "other"
_NOTE_LIMITERS = 3  # launch limiters a table's note names ("per launch: …")


GROUPING_TEXT = {
    GROUP_BY_LAUNCH: "launches of one kernel with one launch configuration (name, grid, block)",
    GROUP_BY_NAME: "launches of one kernel name, whatever their launch configuration",
}


def share_text(share: float | None) -> str:
    if share is None:
        return F.NA
    return "<0.1 %" if 0 < share < 0.0005 else F.pct(share, 1)


def marker_size(share: float | None) -> float:
    """Marker size (points) for a share of GPU time: area grows with the share."""
    return 4.0 + 14.0 * math.sqrt(min(max(share or 0.0, 0.0), 1.0))


def group_id(report_no: int, g: KernelGroup) -> str:
    """The id of a group's row and section: that of its longest launch (stable, unique per page)."""
    return f"r{report_no}k{g.longest.raw.index}"


def _mix(limiters: dict[str, float], total: float, unit: str) -> list[dict[str, Any]]:
    """A limiter mix (limiter -> launches or seconds) as badges, the largest first."""
    ranked = sorted(limiters.items(), key=lambda kv: (-kv[1], kv[0]))
    out = []
    for name, amount in ranked[:MAX_MIX]:
        limiter = None if name == NO_LIMITER else name
        text = f"{amount:g}" if unit == "launches" else share_text(amount / total if total else None)
        out.append({"label": short_label(limiter) if limiter else "no verdict", "css": roof_css(limiter),
                    "title": long_label(limiter, "no verdict"), "text": text})
    rest = sum(amount for _, amount in ranked[MAX_MIX:])
    if rest:
        text = f"{rest:g}" if unit == "launches" else share_text(rest / total if total else None)
        out.append({"label": "other", "css": "b-other", "title": "the other limiters", "text": text})
    return out


def _launch_line(k: LaunchEntry, differs: bool) -> dict[str, Any]:
    share, named = k.limiter_share, named_limit(k)
    return {"index": k.index, "duration": F.seconds(k.duration_s),
            "bound_short": short_label(named) if named else F.NA, "bound_css": roof_css(named),
            "bound_label": long_label(named, F.NA), "utilization": F.pct(share),
            "regime": regime_text(k), "differs": differs}


def _by_time(k: LaunchEntry) -> float:
    return -(k.duration_s if k.duration_s is not None else -1.0)


def group_view(kernel_view: KernelView, report_no: int, g: KernelGroup, page_total: float | None,
               top_ids: set[str], redact: bool = False) -> dict[str, Any]:
    """One group's table row and section: the kernel view of its summary, plus what a group adds."""
    d = g.summary.to_dict(redact)
    d["duration_s"] = g.stats.total
    v = kernel_view(report_no, g.summary, d, page_total, top_ids)
    gid = group_id(report_no, g)
    launches = len(g.launches)
    st = g.stats
    differ = set(g.disagreeing)
    entries = g.launches  # read as columns: an entry is built only for a launch listed
    differing = [n for n, index in enumerate(entries.indices()) if index in differ]
    others = [entries[n] for n in differing[:LAUNCH_SAMPLE]]
    durations = entries.durations()  # the longest first, then those with none, each in launch order (`_by_time`)
    longest = np.argsort(np.where(np.isnan(durations), 1.0, -durations), kind="stable")[:LAUNCH_SAMPLE].tolist()
    sample = sorted({k.index: k for k in [*others[:LAUNCH_SAMPLE // 2], *map(entries.__getitem__, longest)]}.values(),
                    key=_by_time)[:LAUNCH_SAMPLE]
    nvtx = list(g.nvtx_ranges) if not redact else []
    v.update({
        "id": gid, "key": g.key, "name": g.display_name, "short_name": g.display_name,
        "display_name": g.display_name, "demangled_name": g.name,
        "launches": launches, "usable_launches": g.usable_launches, "longest_index": g.longest.raw.index,
        "total": F.seconds(st.total), "mean": F.seconds(st.mean), "median": F.seconds(st.median),
        "min": F.seconds(st.min), "max": F.seconds(st.max), "cv": st.cv,
        "cv_text": F.pct(st.cv, 1) if st.cv is not None else F.NA,
        "limiter_mix": _mix({k: float(n) for k, n in g.limiters.items()}, float(launches), "launches"),
        "disagreeing": len(g.disagreeing),
        # who they are; their limiters are in `limiter_mix`, the page's one tally of the launches' limiters
        "disagreeing_text": (f"All {launches:,} launches have" if len(differing) == launches > 1 else
                             f"{count(len(differing), 'launch')} {'has' if len(differing) == 1 else 'have'}"),
        "disagreeing_sample": [k.index for k in others],
        "launch_sample": [_launch_line(k, k.index in differ) for k in sample],
        "nvtx": nvtx[:8], "nvtx_more": max(0, len(nvtx) - 8),
        "has_section": False, "has_chart": False,
    })
    v["bound_note"] = _bound_note(g)
    if launches > 1:  # its findings' instructions are those of its longest launch alone: the page says which
        for f in v["findings"]:
            if f["where"] is not None:
                f["where"]["from_launch"] = g.longest.raw.index
    if g.regime_disagreeing:  # "latency (2 of 4 at limit)": launches in another regime are not hidden
        other = {r: n for r, n in g.regimes.items() if r != (g.summary.regime or NO_LIMITER)}
        usable = g.usable_launches
        v["regime_text"] += " (" + ", ".join(f"{n} of {usable} {regime_label(None if r == NO_LIMITER else r)}"
                                             for r, n in other.items()) + ")"
    v["marker_note"] = (f"{count(launches, 'launch')}, {v['total']} "
                        f"({v['share_text']} of GPU time)")
    size_points(v["chart"], {v["chart"]["points"][0]["kernel_id"]: v} if v["chart"]["points"] else {})
    v["chart"]["title"] = g.display_name
    return v


def _bound_note(g: KernelGroup) -> str:
    """Where launches have another limiter than the group's: that the group's is the busiest of the launches'
    summed shares, and the limiters the launches have one by one (the group's among them or not: a headline
    such as memory throughput can top the sum while each launch is bound by one of its sub-units)."""
    if not g.disagreeing:
        return ""
    ranked = list(g.limiters.items())  # the most launches first
    shown = ", ".join(f"{short_label(None if name == NO_LIMITER else name)} in {n:,}"
                      for name, n in ranked[:_NOTE_LIMITERS])
    return (f"busiest over the {g.usable_launches:,} launches summed; per launch: {shown}"
            + (", …" if len(ranked) > _NOTE_LIMITERS else ""))


def size_points(chart: dict[str, Any], by_id: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Each point of a chart sized by its group's share of GPU time, with the group's figures to hover."""
    for p in chart["points"]:
        v = by_id.get(p["kernel_id"])
        if v is not None:
            p["size"] = marker_size(v["share"])
            p["note"] = v["marker_note"]
            p["label"] = v["display_name"]
    return chart


def bound_mix(groups: Sequence[dict[str, Any]], page_total: float | None) -> list[dict[str, Any]]:
    """Groups per limiter with their share of GPU time, the most time first ("n/a" for groups of which
    no duration is known: a NaN duration is no 0 %)."""
    mix: dict[str, list[float]] = {}
    for v in groups:
        entry = mix.setdefault(v["bound_named"] or NO_LIMITER, [0, 0.0, 0])
        entry[0] += 1
        if v["duration_s"] is not None:
            entry[1] += v["duration_s"]
            entry[2] += 1
    return [{"css": roof_css(None if r == NO_LIMITER else r), "count": int(n),
             "label": short_label(r) if r != NO_LIMITER else "no verdict",
             "share_text": share_text(seconds / page_total if page_total and timed else None)}
            for r, (n, seconds, timed) in sorted(mix.items(), key=lambda item: (-item[1][1], item[0]))]


def launch_data(groups: Sequence[tuple[int, KernelGroup]], views: dict[str, dict[str, Any]],
                redact: bool = False) -> dict[str, Any]:
    """Every launch as one compact table for the page's script: numbers and indices, no markup.

    Columns, not rows (200,000 launches stay a few MB): `index` (each launch's index as the difference from
    the one before, in the order the rows are sorted: report, then index), `group`, `ns` (duration in ns),
    `limit`, `permille` (the limiter's share), `regime`, `nvtx`, each a list with null where absent; the
    numbers index `groups`, `limits`, `regimes` and `nvtx`. A column that is all null is left out.
    """
    limits: dict[str, int] = {}
    regimes: dict[str, int] = {}
    nvtx: dict[str, int] = {}
    rows: list[tuple[Any, ...]] = []
    table: list[dict[str, Any]] = []
    for no, (report_no, g) in enumerate(groups):
        gid = group_id(report_no, g)
        table.append({"id": gid, "name": g.display_name, "section": views.get(gid, {}).get("has_section", False),
                      "row": gid in views, "report": report_no})
        launches = g.launches
        for kind, at, numbers in launches.by_kind():  # (numbers: NaN where a launch has none)
            _, bound_by, regime, _, ranges = kind[:5]
            path = None if redact or not ranges else ";".join(ranges)
            ns = [round(v) if math.isfinite(v := d * 1e9) else None for d in numbers[:, 0].tolist()]
            share = [round(v * 1000) if math.isfinite(v) else None for v in numbers[:, 1].tolist()]
            rows += zip(repeat(report_no), [launches.index[n] for n in at.tolist()], repeat(no), ns,
                        repeat(limits.setdefault(bound_by, len(limits)) if bound_by else None), share,
                        repeat(regimes.setdefault(regime, len(regimes)) if regime else None),
                        repeat(nvtx.setdefault(path, len(nvtx)) if path is not None else None))
    rows.sort(key=lambda r: (r[0], r[1]))
    names = ("index", "group", "ns", "limit", "permille", "regime", "nvtx")
    columns: dict[str, list[Any]] = {name: [r[i + 1] for r in rows] for i, name in enumerate(names)}
    indices = columns["index"]
    columns["index"] = [b - a for a, b in zip([0, *indices], indices, strict=False)]  # each from the one before
    return {
        "count": len(rows),
        "columns": {name: values for name, values in columns.items() if any(v is not None for v in values)},
        "groups": table,
        "limits": [{"label": short_label(n), "title": long_label(n), "css": roof_css(n)} for n in limits],
        "regimes": [regime_label(r) for r in regimes],
        "nvtx": list(nvtx),
    }


def nvtx_rows(report_no: int, nodes: Sequence[RangeNode], names: dict[str, str],
              page_total: float | None) -> list[dict[str, Any]]:
    """The NVTX roll-up of one report as table rows (depth first; at most MAX_NVTX_ROWS)."""
    rows = []
    for node in nodes[:MAX_NVTX_ROWS]:
        total = node.duration_s
        rows.append({
            "report_no": report_no, "path": node.path, "name": node.name, "depth": node.depth,
            "indent": f"{node.depth * 1.2:.1f}em", "launches": node.launches, "duration": F.seconds(total),
            "self": F.seconds(node.self_duration_s) if 0 < node.self_duration_s < total else "",
            "share": share_text(total / page_total if page_total else None),
            "limiters": _mix(node.limiters, total, "time"),
            "groups": [{"name": names.get(key, key), "share": share_text(seconds / total if total else None)}
                       for key, seconds in top_groups(node)],
        })
    return rows


def focus_texts(reports: Sequence[ReportResult]) -> list[str]:
    """One sentence per focused report: what is shown and what the filters left out."""
    texts = []
    for r in reports:
        f: FocusSummary | None = r.focus
        if f is None:
            continue
        parts = [f"{step.option}: {count(step.launches, 'launch')}"
                 + (f" ({count(step.groups, 'group')})" if step.groups else "")
                 + f", {F.seconds(step.duration_s)}" for step in f.steps]
        shown = share_text(f.kept_duration_s / f.total_duration_s
                           if f.kept_duration_s is not None and f.total_duration_s else None)
        texts.append(f"{r.launch_count:,} of {f.total_launches:,} launches shown, {F.seconds(f.kept_duration_s)} of "
                     f"{F.seconds(f.total_duration_s)} GPU time ({shown}). Filtered out: " + "; ".join(parts) + ".")
    return texts


def page_groups(analysis: Analysis, kernel_view: KernelView, redact: bool = False) -> dict[str, Any]:
    """The group parts of the report view: rows, sections, launch list, NVTX roll-up, budgets.

    `kernel_view` is `views.report.kernel_view` (one kernel's row and section).
    """
    reports = analysis.reports
    totals = [t for r in reports if (t := r.share_total_s) is not None]
    page_total = math.fsum(totals) if totals else None
    ranked = sorted(((n, g) for n, r in enumerate(reports) for g in analysis.groups_of(r)),
                    key=lambda t: (-(t[1].stats.total or 0.0), t[0], t[1].launches[0].index))
    top_ids = {group_id(n, g) for n, g in ranked[:5]} if len(ranked) > 10 else set()
    shown = [group_view(kernel_view, n, g, page_total, top_ids, redact) for n, g in ranked[:MAX_GROUP_ROWS]]
    for n, v in enumerate(shown):
        v["rank"] = n + 1
        v["has_section"] = n < MAX_GROUP_SECTIONS
        v["has_chart"] = v["has_section"] and bool(v["chart"]["points"])
    by_id = {v["id"]: v for v in shown}
    nvtx: list[dict[str, Any]] = []
    nvtx_omitted = 0
    for n, r in enumerate(reports if not redact else []):
        groups = analysis.groups_of(r)
        nodes = nvtx_rollup(groups)
        nvtx_omitted += max(0, len(nodes) - MAX_NVTX_ROWS)
        nvtx.extend(nvtx_rows(n, nodes, {g.key: g.display_name for g in groups}, page_total))
    rest = ranked[MAX_GROUP_SECTIONS:]
    rest_s = math.fsum(g.stats.total or 0.0 for _, g in rest)
    hidden = ranked[MAX_GROUP_ROWS:]
    hidden_s = math.fsum(g.stats.total or 0.0 for _, g in hidden)
    return {
        "groups": shown,
        "sections": [v for v in shown if v["has_section"]],
        "group_count": len(ranked),
        "page_total": page_total,
        "budget": {"rows": MAX_GROUP_ROWS, "page_s": page_total or 0.0,
                   "shown_s": math.fsum(g.stats.total or 0.0 for _, g in ranked),
                   "sections": MAX_GROUP_SECTIONS, "chart": MAX_CHART_GROUPS,
                   "without_section": len(rest),
                   "without_section_share": share_text(rest_s / page_total if page_total else None),
                   "without_row": len(hidden),
                   "without_row_share": share_text(hidden_s / page_total if page_total else None)},
        "nvtx": nvtx,
        "nvtx_omitted": nvtx_omitted,
        "launch_data": launch_data(ranked, by_id, redact),
        "pairs": [(v, g) for v, (_, g) in zip(shown, ranked, strict=False)],
        "focus": focus_texts(reports),
    }
