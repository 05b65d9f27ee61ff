"""Markdown: a GitHub-flavoured summary for a pull-request comment or $GITHUB_STEP_SUMMARY.

Plain Markdown only (no HTML that GitHub would strip); kernel names are escaped so that
template brackets, pipes and backticks cannot break the table.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ..views.report import build_report_view
from . import RenderOptions

if TYPE_CHECKING:
    from ..api.analysis import Analysis
    from ..compare.diff import Diff
    from ..compare.trend import Trend

TOP_KERNELS = 10
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|<>~])")


def md_escape(text: str) -> str:
    """Escape Markdown and table syntax; angle brackets become entities GitHub shows as text."""
    return _MD_SPECIAL.sub(lambda m: {"<": "&lt;", ">": "&gt;", "|": "\\|"}.get(m.group(1), "\\" + m.group(1)),
                           text.replace("\n", " "))


def _row(k: dict[str, Any]) -> str:
    bound = k["bound_by"].upper() if k["bound_by"] else "n/a"
    top = k["top_finding"]
    finding = f"{top['label']} {top['factor_text']}".strip() if top else "–"
    return (f"| {md_escape(k['short_name'])} | {k['duration']} | {k['share_text']} | {bound} | "
            f"{k['bound_utilization_text']} | {k['regime'] or 'n/a'} | {md_escape(finding)} |")


def render_report_markdown(analysis: Analysis, options: RenderOptions) -> str:
    """The summary text."""
    view = build_report_view(analysis, options.redact)
    h = view["header"]
    devices = "; ".join(f"{d['name']} (cc {d['compute_capability'] or 'n/a'})" for d in h["devices"])
    lines = [
        "### Roofline summary",
        "",
        f"**GPU:** {md_escape(devices) or 'n/a'} · **Nsight Compute:** {md_escape(', '.join(h['ncu_versions']))} · "
        f"**kernels:** {h['kernel_count']} · **GPU time:** {h['total_gpu_time']}",
        "",
    ]
    ranked = [k for k in sorted(view["kernels"], key=lambda k: -(k["duration_s"] or -1.0))][:TOP_KERNELS]
    if ranked:
        lines += [f"Top {len(ranked)} kernels by time (regime `roof` = at least {h['threshold_text']} of the "
                  "bounding roof; `latency` = below every roof):", "",
                  "| Kernel | Duration | Share | Bound by | Utilisation | Regime | Top finding |",
                  "|---|---:|---:|---|---:|---|---|"]
        lines += [_row(k) for k in ranked]
        lines.append("")
    mix = ", ".join(f"{(r if r != 'none' else 'no roof')}: {n}" for r, n in view["bound_mix"].items())
    lines += [f"Bound-by mix: {mix}.", ""]
    notable = [(k, f) for k in view["kernels"] for f in k["flags"]
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


def _flag(k: dict[str, Any], flag: str) -> str:
    return k["flag_texts"][k["flags"].index(flag)]


def render_diff_markdown(diff: Diff, options: RenderOptions) -> str:
    """The diff as a PR comment."""
    from ..views.diff import render_diff_markdown as text

    return text(diff)


def render_trend_markdown(trend: Trend, options: RenderOptions) -> str:
    """The trend summary."""
    from ..compare.trend import render_markdown as text

    return text(trend)
