"""The trend document (a `compare.trend.Trend`): HTML page, Markdown summary and tidy CSV.

The page and the summary lay out `views.trend.build_trend_view`; the page's charts are drawn by
`charts.trend` (imported only for HTML, so CSV and Markdown never load matplotlib). The JSON
document is `Trend.to_json`, written by `json.render_document_json`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..views.trend import build_trend_view
from ..views.wording import count
from .csv import rows_to_csv
from .html import asset, markup, page
from .markdown import md_code, md_escape

if TYPE_CHECKING:
    from ..compare.trend import Trend
    from . import RenderOptions

VERDICT_ICONS = {"drift": "⚠️", "no_drift": "✅", "insufficient_coverage": "⚠️"}
CSV_COLUMNS = ("run", "date", "report", "kernel", "launches", "duration_s", "total_s", "bound_by", "utilization",
               "regime", "key")


def render_trend_html(trend: Trend, options: RenderOptions) -> str:
    """The whole trend page: self-contained (inline CSS, SVG and script, nothing fetched)."""
    from .charts.trend import kernel_chart_svg, total_chart_svg

    view = build_trend_view(trend, options.top)
    labels = view["run_labels"]
    charts = [{"id": item["id"], "row": item["row"],
               "svg": markup(kernel_chart_svg(item["chart"], labels, f"ncu-roofline-trend-{n}"))}
              for n, item in enumerate(view["top"])]
    total_svg = markup(total_chart_svg(labels, view["totals"], "ncu-roofline-trend-total", view["odd_runs"]))
    return page("trend.html.j2", title=view["header"]["title"], css=asset("trend.css"),
                header=view["header"], runs=view["runs"], rows=view["rows"], drifting=view["drifting"],
                charts=charts, total_svg=total_svg)


def render_trend_markdown(trend: Trend, options: RenderOptions) -> str:
    """A summary for a CI log or pull-request comment: the total, then the drifting kernels."""
    view = build_trend_view(trend, options.top)
    h = view["header"]
    lines = [
        f"### Roofline trend: {h['run_count']} runs, {md_escape(h['first_label'])} → {md_escape(h['last_label'])}",
        "",
        f"**Total GPU time:** {h['total_first']} → {h['total_last']} ({h['total_change']}, fit {h['total_slope']})",
        "",
        "| Run | Date | Total GPU time | Followed from earlier runs |",
        "|---|---|---:|---:|",
    ]
    for r in view["runs"]:
        if r["usable"]:
            lines.append(f"| {md_escape(r['label'])} | {md_escape(r['date'])} | {r['gpu_time']} | {r['followed']} |")
        else:
            lines.append(f"| {md_escape(r['label'])} | {md_escape(r['date'])} | gap: {md_escape(r['error'])} | — |")
    lines.append("")
    rows = view["drifting"]
    lines.append(f"{VERDICT_ICONS[h['verdict']]} {md_escape(h['verdict_text'])}")  # it names runs: escaped
    if rows:
        lines += ["", "| Kernel | Runs | Launches | First | Last | Change | Slope | Busiest limit |",
                  "|---|---:|---:|---:|---:|---:|---:|---|"]
        lines += [_drifting_row(r) for r in rows]
    lines += ["", f"_ncu-roofline {h['tool_version']} · {count(h['kernel_count'], 'kernel')} followed (a kernel's "
                  "launches with one launch configuration counted together; First and Last are their median launch), "
                  f"{md_escape(h['matching'])} · run dates from the {md_escape(h['date_sources'])}"
                  + (f" · {md_escape(h['jitter_rule'])}" if h["jitter_rule"] else "") + "_"]
    return "\n".join(lines) + "\n"


def _drifting_row(r: dict[str, Any]) -> str:
    bound = r["bound_first"] + (f" → {r['bound_last']}" if r["bound_changed"] else "")
    return (f"| {md_code(r['short_name'], table=True)} | {r['present']} | {r['launches']} | {r['first']} | "
            f"{r['last']} | **{r['change']}** | {r['slope']} | {bound} |")


def render_trend_csv(trend: Trend, options: RenderOptions) -> str:
    """Tidy rows: one per kernel (group) per run it ran in, runs oldest first, kernels in order of first
    launch; `duration_s` is the median launch, `total_s` the group's GPU time in that run."""
    rows: list[dict[str, Any]] = []
    for r, run in enumerate(trend.runs):
        present = [(p, s) for s in trend.kernels if (p := s.points[r]) is not None]
        for p, s in sorted(present, key=lambda ps: ps[0]["position"]):
            values = (run.label, run.date_text, p["report"], s.name, p["launches"], p["duration_s"],
                      p["total_s"], p["bound_by"], p["utilization"], p["regime"], s.key)
            rows.append(dict(zip(CSV_COLUMNS, values, strict=False)))
    return rows_to_csv(rows, list(CSV_COLUMNS))
