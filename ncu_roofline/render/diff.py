"""The diff document (a `compare.diff.Diff`): HTML page and Markdown PR comment.

Both lay out `views.diff.build_diff_view`. The HTML page is self-contained (inline CSS, the
report's sorting script, inline SVG charts with an arrow from every matched kernel's BASE point to
its HEAD point); the Markdown summary fits a pull-request comment or `$GITHUB_STEP_SUMMARY`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..views import format as F
from ..views.diff import build_diff_view
from .html import asset, page
from .markdown import md_escape

if TYPE_CHECKING:
    from ..compare.diff import Diff
    from . import RenderOptions

MAX_MD_CHANGES = 15  # rows of the Markdown table
MAX_MD_LIST = 20  # entries of each Markdown list
CHART_LAYOUT: dict[str, Any] = {
    "width_in": 9.0,
    "height_in": 5.6,
    "annotations": ("Arrows run from each matched kernel's BASE point to its HEAD point (hover for numbers).",),
}
GATE_ICONS = {"pass": "✅", "fail": "❌", "off": "ℹ️"}


# --------------------------------------------------------------------------------------------
# HTML


def _chart_svg(chart: dict[str, Any], id_prefix: str) -> str:
    from .charts.roofline import render_roofline_svg
    from .charts.spec import spec_from_view

    return render_roofline_svg(spec_from_view(chart, id_prefix, **CHART_LAYOUT))


def render_diff_html(diff: Diff, options: RenderOptions) -> str:
    """The whole diff page (self-contained: inline CSS, SVG and the report's sorting script)."""
    view = build_diff_view(diff)
    charts = [dict(c, svg=_chart_svg(c, f"d{n}-") if c["points"] else "") for n, c in enumerate(view["charts"])]
    return page("diff.html.j2", title=view["header"]["title"], css=asset("diff.css"), **{**view, "charts": charts})


# --------------------------------------------------------------------------------------------
# Markdown


def _md_header(view: dict[str, Any]) -> list[str]:
    """The title, the totals line and the gate's verdict with the kernels it names."""
    h, ta, tm, gate = view["header"], view["total_all"], view["total_matched"], view["gate"]
    lines = [
        f"### Roofline diff: {md_escape(h['base_name'])} → {md_escape(h['head_name'])}",
        "",
        f"**GPU:** {md_escape(h['devices_text'])} · **total GPU time:** {ta['base']} → {ta['head']} "
        f"({ta['pct']}) · **matched kernels:** "
        + (f"{h['matched_count']}, {tm['base']} → {tm['head']} ({tm['pct']})" if h["matched_count"] else "none")
        + f" · **unmatched:** {h['unmatched_base_count']} only in BASE, {h['unmatched_head_count']} only in HEAD",
        "",
        f"{GATE_ICONS[gate['status']]} **Gate:** {md_escape(gate['verdict'])} {md_escape(gate['rule'])}".rstrip(),
        "",
    ]
    lines += [f"- {md_escape(r['short_name'])}: {r['base']} → {r['head']} ({r['pct']})" for r in gate["regressions"]]
    if gate["regressions"]:
        lines.append("")
    return lines


def _md_change(r: dict[str, Any]) -> str:
    """One row of the table of changes."""
    name = md_escape(r["short_name"]) + (" (launch config changed)" if r["launch_changed"] else "")
    bound = f"{r['bound_base_text']} → **{r['bound_head_text']}**" if r["bound_changed"] else r["bound_base_text"]
    delta = f"**{r['delta_pct_text']}**" if r["regressed"] else r["delta_pct_text"]
    return (f"| {name} | {r['base_time']} | {r['head_time']} | {delta} | {bound} | "
            f"{r['util_base']} → {r['util_head']} |")


def _md_changes(rows: list[dict[str, Any]]) -> list[str]:
    """The largest changes as a table (at most MAX_MD_CHANGES rows)."""
    if not rows:
        return []
    shown = rows[:MAX_MD_CHANGES]
    plural = "s" if len(rows) != 1 else ""
    lines = [f"Largest changes ({len(shown)} of {len(rows)} matched kernel{plural}, by time gained or lost):",
             "",
             "| Kernel | Base | Head | Δ | Bound by | Utilisation |",
             "|---|---:|---:|---:|---|---:|"]
    lines += [_md_change(r) for r in shown]
    if len(rows) > len(shown):
        lines.append(f"| … {len(rows) - len(shown)} more | | | | | |")
    return [*lines, ""]


def _md_findings(findings: list[dict[str, Any]]) -> list[str]:
    """The findings that appeared (+) or disappeared (−), one line per kernel."""
    if not findings:
        return []
    lines = ["Findings that appeared or disappeared:", ""]
    for r in findings[:MAX_MD_LIST]:
        parts = [f"+{md_escape(f['label'])}" for f in r["appeared"]]
        parts += [f"−{md_escape(f['label'])}" for f in r["disappeared"]]
        lines.append(f"- {md_escape(r['short_name'])}: {', '.join(parts)}")
    if len(findings) > MAX_MD_LIST:
        lines.append(f"- … and {len(findings) - MAX_MD_LIST} more")
    return [*lines, ""]


def _md_unmatched(label: str, items: list[dict[str, Any]]) -> list[str]:
    """The kernels of one side only, launches of the same kernel and configuration counted once."""
    if not items:
        return []
    lines = [f"{label} ({len(items)}):", ""]
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for u in items:
        groups.setdefault((u["short_name"], u["launch"]), []).append(u)
    for (name, launch), members in list(groups.items())[:MAX_MD_LIST]:
        total = sum(u["duration_s"] or 0.0 for u in members)
        count = f" ×{len(members)}" if len(members) > 1 else ""
        lines.append(f"- {md_escape(name)} ({md_escape(launch)}){count}: {F.seconds(total or None)}")
    if len(groups) > MAX_MD_LIST:
        lines.append(f"- … and {len(groups) - MAX_MD_LIST} more")
    return [*lines, ""]


def _md_skipped(view: dict[str, Any]) -> list[str]:
    """The reports of a batch that were not analysed, so not compared."""
    skipped = [(side, s) for side in ("base", "head") for s in view[f"skipped_{side}"]]
    lines = [f"- Not compared ({side.upper()}): {md_escape(s['path'])}: {md_escape(s['reason'])}"
             for side, s in skipped]
    return [*lines, ""] if skipped else []


def render_diff_markdown(diff: Diff, options: RenderOptions) -> str:
    """A summary for a pull-request comment: totals, gate, top changes, findings, unmatched."""
    view = build_diff_view(diff)
    lines = _md_header(view) + _md_changes(view["changes"]) + _md_findings(view["findings"])
    lines += _md_unmatched("Only in BASE", view["unmatched_base"])
    lines += _md_unmatched("Only in HEAD", view["unmatched_head"])
    lines += _md_skipped(view)
    lines.append(f"_ncu-roofline {view['header']['tool_version']} · Δ = (HEAD − BASE) / BASE; "
                 f"utilisation of the bounding roof_")
    return "\n".join(lines) + "\n"
