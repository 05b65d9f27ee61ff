"""The report document (an `Analysis`) in every format: HTML page, Markdown summary, CSV, JSON."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ..api.rows import columns, group_columns
from ..knowledge.catalog import page_words
from ..views.groups import share_text
from ..views.report import build_report_view
from ..views.verdict import worth_most
from ..views.where import alike
from ..views.wording import count
from .csv import rows_to_csv
from .html import page
from .markdown import md_code, md_escape

if TYPE_CHECKING:
    from ..api.analysis import Analysis
    from . import RenderOptions

TOP_KERNELS = 10
TOP_FINDINGS = 5
NVTX_MD_ROWS = 15


def _chart_svg(chart: dict[str, Any], id_prefix: str, small: bool = False) -> str:
    from .charts.roofline import render_roofline_svg
    from .charts.spec import spec_from_view

    layout: dict[str, Any] = {"width_in": 6.0, "height_in": 3.9} if small else {}
    if "walls" in chart:
        layout |= INSTRUCTION_AXES
    return render_roofline_svg(spec_from_view(chart, id_prefix, **layout))


INSTRUCTION_AXES = {
    "x_label": "Instruction intensity (warp instructions per 32-byte transaction)",
    "y_label": "Load/store warp instructions per second", "x_unit": "inst/transaction", "y_unit": "inst/s",
}


def _sol_svg(chart: dict[str, Any], salt: str, threshold: float) -> str:
    from .charts.sol import SolPoint, render_sol_svg

    points = [SolPoint(p["kernel_id"], p["sm"], p["memory"], p["family"], p["hollow"], p["label"], p.get("size"),
                       p.get("note", ""), p.get("bound_label", "")) for p in chart["points"]]
    return render_sol_svg(chart["title"], points, threshold, f"ncu-roofline-{salt}")


def _page_data(view: dict[str, Any]) -> dict[str, Any]:
    """A compact machine-readable copy of the group table and every launch, embedded as JSON in the page."""
    return {
        "header": {k: view["header"][k] for k in ("kernel_count", "group_count", "total_gpu_time", "tool_version")},
        "groups": [{"id": g["id"], "name": g["display_name"], "demangled_name": g["demangled_name"],
                    "bound_by": g["bound_by"], "utilization": g["bound_utilization"], "regime": g["regime"],
                    "duration_s": g["duration_s"], "launches": g["launches"]} for g in view["groups"]],
        "launches": view["launch_data"],
    }


def render_report_html(analysis: Analysis, options: RenderOptions) -> str:
    """The whole report page."""
    view = build_report_view(analysis, options.redact)
    charts = [dict(c, svg=_chart_svg(c, f"c{n}-")) for n, c in enumerate(view["charts"])]
    instruction = [dict(c, svg=_chart_svg(c, f"i{n}-")) for n, c in enumerate(view["instruction_charts"])]
    sections = [dict(k, svg=_chart_svg(k["chart"], f"{k['id']}-", small=True) if k["has_chart"] else "")
                for k in view["sections"]]
    roof_names = sorted({r["name"] for c in view["charts"] for r in c["roofs"]},
                        key=lambda n: (["dram", "l2", "l1", "fp64", "fp32", "fp16", n]).index(n))
    sol = [dict(c, svg=_sol_svg(c, f"s{n}-", view["header"]["threshold"])) for n, c in enumerate(view["sol_charts"])]
    return page("report.html.j2", title=view["header"]["title"], css="",
                **{**view, "charts": charts, "sections": sections, "instruction_charts": instruction,
                   "sol_charts": sol},
                chart_roof_names=roof_names, data=_page_data(view))



def _finding_cell(top: dict[str, Any] | None) -> str:
    """The top finding as the table shows it: its headline, with its bound where it projects one."""
    if not top:
        return "–"
    bound = f" ({top['speedup_text']} faster)" if top.get("speedup_text") else ""
    return f"{top['headline']}{bound}"


def step_text(top: dict[str, Any] | None) -> str:
    """The top finding's next step, or "–" where it has none (a limit at its peak, nothing measured to act on)."""
    return str(top["next_step"]) if top and top.get("next_step") else "–"


def _row(k: dict[str, Any]) -> str:
    bound = k["bound_short"]
    if k.get("bound_note"):
        bound += f": {k['bound_note']}"
    top = k["top_finding"]
    mean = k["mean"] if k["launches"] > 1 else "–"
    return (f"| {md_escape(k['short_name'])} | {k['launches']:,} | {k['total']} | {k['share_text']} | {mean} | "
            f"{bound} | {k['bound_utilization_text']} | {k['regime_text']} | {md_escape(_finding_cell(top))} | "
            f"{md_escape(step_text(top))} |")


def _nvtx_lines(view: dict[str, Any]) -> list[str]:
    rows = [r for r in view["nvtx"] if r["depth"] < 2][:NVTX_MD_ROWS]
    if not rows:
        return []
    lines = ["GPU time per NVTX range (nested ranges summed up):", "",
             "| Range | Launches | Time | Share | Limiters | Top kernels |", "|---|---:|---:|---:|---|---|"]
    for r in rows:
        name = ("↳ " * r["depth"]) + r["name"]
        mix = ", ".join(f"{m['label']} {m['text']}" for m in r["limiters"])
        groups = ", ".join(f"{g['name']} {g['share']}" for g in r["groups"])
        lines.append(f"| {md_escape(name)} | {r['launches']:,} | {r['duration']} | {r['share']} | {md_escape(mix)} | "
                     f"{md_escape(groups)} |")
    return [*lines, ""]


def render_report_markdown(analysis: Analysis, options: RenderOptions) -> str:
    """The summary text: the top kernel groups by time, the limiter mix, NVTX ranges, notable flags."""
    view = build_report_view(analysis, options.redact)
    h = view["header"]
    devices = "; ".join(f"{d['name']} (cc {d['compute_capability'] or 'n/a'})" for d in h["devices"])
    lines = [
        "### Roofline summary",
        "",
        f"**GPU:** {md_escape(devices) or 'n/a'} · **Nsight Compute:** {md_escape(', '.join(h['ncu_versions']))} · "
        f"**kernels:** {h['group_count']} ({count(h['kernel_count'], 'launch')}) · "
        f"**GPU time:** {h['total_gpu_time']}",
        "",
    ]
    lines += [f"_Focus: {md_escape(text)}_" for text in h["focus"]] + ([""] if h["focus"] else [])
    lines += [f"_{md_escape(h['findings_note'])}_", ""] if h["findings_note"] else []
    lines += [f"> ⚠️ {md_code(w['path'])}: {md_escape(w['message'])}" for w in view["warnings"]]
    lines += [""] if view["warnings"] else []
    ranked = view["groups"][:TOP_KERNELS]
    if ranked:
        lines += [_legend(len(ranked), h["threshold_text"]), "",
                  "| Kernel | Launches | Total | Share | Mean | Busiest limit | Utilisation | Regime | Top finding "
                  "| Next step |",
                  "|---|---:|---:|---:|---:|---|---:|---|---|---|"]
        lines += [_row(k) for k in ranked]
        rest = h["group_count"] - len(ranked)
        if rest > 0:
            rest_s = view["budget"]["shown_s"] - sum(k["duration_s"] or 0.0 for k in ranked)
            page_s = view["budget"]["page_s"]
            lines.append(f"| … {rest:,} more ({share_text(rest_s / page_s if page_s else None)} of GPU time) "
                         "| | | | | | | | | |")
        lines.append("")
    mix = ", ".join(f"{m['label']}: {m['count']} ({m['share_text']})" for m in view["bound_mix_view"])
    lines += [f"Busiest limits (kernels, share of GPU time): {mix}.", ""]
    lines += _worth_fixing(view["groups"])
    lines += _beside_nsight_compute(ranked)
    lines += _nvtx_lines(view)
    notable = [(k, f) for k in view["groups"] for f in k["flags"]
               if f.startswith(("above_roof", "unusable", "tensor_work_estimated", "flop_incomplete"))]
    if notable:
        lines.append("Notable flags:")
        lines.append("")
        for k, f in notable[:20]:
            lines.append(f"- {md_escape(k['short_name'])}: `{f}` ({md_escape(_flag(k, f))})")
        if len(notable) > 20:
            lines.append(f"- … and {len(notable) - 20} more")
        lines.append("")
    for e in view["errors"]:
        lines.append(f"- Not analysed: {md_escape(e['message'])}")
    if view["errors"]:
        lines.append("")
    lines.append(f"_ncu-roofline {h['tool_version']}_")
    return "\n".join(lines) + "\n"


def _legend(shown: int, threshold: str) -> str:
    """The one line above the table: which kernels it shows and what its regimes mean."""
    regimes = f"limit*: the busiest limit is at ≥ {threshold} of its peak, *latency*: every limit is below."
    return f"Top {shown} kernels by GPU time; *at {regimes}" if shown > 1 else f"*At {regimes}"


def _worth_fixing(kernels: list[dict[str, Any]]) -> list[str]:
    """The findings worth most to the whole program (time share × (1 − 1/speed-up)): each with its kernel,
    headline, bound, the share of GPU time it is worth, and its next step; the kernel with the most GPU time always
    (`worth_most`), with its share of the GPU time where its top finding has no bound."""
    listed = worth_most(kernels, TOP_FINDINGS)
    ranked = listed["ranked"]
    if not listed["items"]:
        return []
    shown = min(ranked, TOP_FINDINGS)
    which = f"top {shown} of {ranked} findings" if ranked > 1 else "the one finding"
    largest = ", and the kernel with the most GPU time" if listed["largest_added"] else ""
    # each figure is for one fix alone: two fixes of one kernel compound or overlap, so their shares do not add up
    alone = "; each for its fix alone: the shares of one kernel's fixes do not add up" if ranked > 1 else ""
    said = f"{which} with a projected speed-up{largest}{alone}" if ranked else \
        "the kernel with the most GPU time; no finding projects a speed-up"
    lines = [f"Worth most to the program ({said}):", ""]
    for item in listed["items"]:
        k, f, worth = item["group"], item["finding"], item["gain"]
        step = f" {f['next_step']}" if f.get("next_step") else ""
        gain = (page_words("worth_gain", {"speedup": f["speedup_text"], "gain": share_text(worth)})
                if worth is not None else
                page_words("worth_largest", {"share": share_text(item["share"]),
                                             "bound": md_escape(f["why_none"]) if f.get("why_none") else None}))
        lines.append(f"- {md_escape(k['short_name'])}: {md_escape(f['headline'])} ({gain})."
                     f"{md_escape(step)}{_where_md(f.get('where'))}")
    return [*lines, ""]


def _where_md(where: dict[str, Any] | None) -> str:
    """The top instruction of a finding, as one sentence after its list item (nothing where it has none)."""
    if not where:
        return ""
    top = where["rows"][0]
    return page_words("top_instruction_md", {
        "sass": md_code(top["sass"]) if top["sass_known"] else None, "place": top["place"], "share": top["share"],
        "counter": where["counter"], "source": md_escape(top["source"]) if top["source"] else None, **alike(where)})


def _beside_nsight_compute(kernels: list[dict[str, Any]]) -> list[str]:
    """For the kernels in the table, what Nsight Compute's own largest estimate says beside the findings (where the
    report holds its rule results: a `.ncu-rep`; the comparison of a group's longest launch)."""
    said = [(k, k["rules_comparison"]) for k in kernels if k.get("rules_comparison")]
    if not said:
        return []
    lines = ["Beside Nsight Compute's own rules (its largest estimated speed-up per kernel):", ""]
    lines += [f"- {md_escape(k['short_name'])}: {md_escape(text)}" for k, text in said]
    return [*lines, ""]


def _flag(k: dict[str, Any], flag: str) -> str:
    text: str = k["flag_texts"][k["flags"].index(flag)]
    return text


def render_report_csv(analysis: Analysis, options: RenderOptions) -> str:
    """One row per launch as CSV text, or one per kernel group with `options.groups` (no pandas needed)."""
    if options.groups:
        return rows_to_csv(analysis.group_rows(options.redact), group_columns())
    return rows_to_csv(analysis.rows(options.redact), columns())


def render_report_json(analysis: Analysis, options: RenderOptions) -> str:
    """The `ncu-roofline/5` document."""
    return analysis.to_json(redact=options.redact)


def stream_report_json(analysis: Analysis, options: RenderOptions) -> Iterator[bytes]:
    """The `ncu-roofline/5` document in pieces of UTF-8, one launch at a time (the same text)."""
    return analysis.json_bytes(redact=options.redact)
