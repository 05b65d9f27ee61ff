"""An `Analysis` in a notebook: a rich display (`notebook_html`) and a roofline Figure (`roofline_figure`).

Both are built from the report view (`views.report.build_report_view`), so they say what the page says:
the same groups, limits, shares, regimes and next steps, and the same chart (`charts.roofline`).

- `notebook_html` is what Jupyter shows for an analysis (`Analysis._repr_html_`): a line on the GPUs and
  the GPU time, the `NOTEBOOK_GROUPS` groups with the most GPU time (limit, its utilisation, regime, the top
  finding's next step), and a small roofline of those groups per GPU, inline SVG. No script, no external
  file, and bounded whatever the size of the analysis: at most `NOTEBOOK_GROUPS` rows and markers per GPU,
  `NOTEBOOK_CHARTS` charts.
- `roofline_figure` is `Analysis.plot`: a matplotlib `Figure` on an Agg canvas (no pyplot, nothing shown),
  of one GPU, chosen memory levels and chosen kernel groups.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..knowledge import recipes as R
from ..views import format as F
from ..views.groups import MAX_CHART_GROUPS
from ..views.report import build_report_view
from .html import environment, markup
from .report import step_text

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ..api.analysis import Analysis

NOTEBOOK_GROUPS = 10  # rows of the table, markers per chart
NOTEBOOK_CHARTS = 3  # GPUs charted; an analysis of more says how many it left out
UNKNOWN_DEVICE = "unknown device"  # what the page's charts call a launch's missing device name

_TEMPLATE = """\
<div class="ncu-roofline">
<p><b>ncu-roofline</b>: {{ header.group_count|plural("kernel") }} ({{ header.kernel_count|plural("launch") }})
{%- if devices %} on {{ devices|join(", ") }}{% endif %}, GPU time {{ header.total_gpu_time }}
{%- if errors %}; {{ errors|plural("file") }} could not be read{% endif %}.</p>
{% if rows %}
<table>
<thead><tr><th>#</th><th>Kernel</th><th>Launches</th><th>GPU time</th><th>Share</th><th>Limit</th>\
<th>Utilisation</th><th>Regime</th><th>Next step</th></tr></thead>
<tbody>
{% for g in rows %}
<tr><td>{{ g.rank }}</td><td title="{{ g.demangled_name }}">{{ g.short_name }}</td><td>{{ g.launches }}</td>\
<td>{{ g.total }}</td><td>{{ g.share_text }}</td><td title="{{ g.bound_label }}">{{ g.bound_short }}</td>\
<td>{{ g.bound_utilization_text }}</td><td>{{ g.regime_text }}</td><td style="text-align:left">{{ g.step }}</td></tr>
{% endfor %}
</tbody>
</table>
{% endif %}
{% if more %}<p>{{ more|plural("more kernel") }} in <code>.groups</code>; the whole report: \
<code>ncu-roofline report</code>.</p>
{% endif %}
{% for svg in charts %}<div>{{ svg }}</div>
{% endfor %}
{% if more_charts %}<p>{{ more_charts|plural("more GPU") }} not charted: <code>.plot(gpu=...)</code>.</p>
{% endif %}
</div>
"""


def notebook_html(analysis: Analysis) -> str:
    """The analysis as an HTML fragment for a notebook: the top groups by GPU time and a roofline per GPU."""
    from .charts.roofline import render_roofline_svg
    from .charts.spec import spec_from_view

    view = build_report_view(analysis)
    groups = view["groups"]
    rows = [dict(g, step=step_text(g["top_finding"])) for g in groups[:NOTEBOOK_GROUPS]]
    charts = []
    for n, chart in enumerate(view["charts"][:NOTEBOOK_CHARTS]):
        shown = [g for g in rows if _device(g) == chart["device"]]
        if shown:
            data = _chart(chart, shown, R.LEVELS)
            charts.append(markup(render_roofline_svg(spec_from_view(data, f"nb{n}-", width_in=6.0, height_in=3.9))))
    header = view["header"]
    return str(environment().from_string(_TEMPLATE).render(
        header=header, devices=[d["name"] for d in header["devices"]], errors=len(analysis.errors), rows=rows,
        more=max(0, header["group_count"] - len(rows)), charts=charts,
        more_charts=max(0, len(view["charts"]) - NOTEBOOK_CHARTS)))


def roofline_figure(analysis: Analysis, level: str | Sequence[str] | None = None,
                    kernels: int | str | Sequence[str] | None = None, gpu: str | int | None = None) -> Figure:
    """The hierarchical roofline of one GPU as a matplotlib `Figure` (Agg canvas, no pyplot: nothing is shown).

    `level`: a memory level ("dram", "l2", "l1") or several; all by default. `kernels`: how many groups, the
    most GPU time first, or a text or texts that a group's name contains; the groups the report charts by
    default. `gpu`: a device name (or a text it contains) or its number in the analysis; by default the GPU of
    the group with the most GPU time. Raises ValueError for a level, kernel or GPU the analysis does not have.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from .charts.roofline import draw_roofline
    from .charts.spec import spec_from_view
    from .charts.svg import chart_style

    levels = _levels(level)
    view = build_report_view(analysis)
    groups = _selected(view["groups"], kernels)
    chart = _device_chart(view["charts"], gpu, groups)
    shown = [g for g in groups if _device(g) == chart["device"]]
    data = _chart(chart, shown, levels)
    if len(levels) < len(R.LEVELS):
        data["title"] += " (" + ", ".join(R.ROOF_LABELS[lv] for lv in levels) + ")"
    with chart_style():
        fig, _hooks = draw_roofline(spec_from_view(data, "plot-"))
    FigureCanvasAgg(fig)  # the figure draws and saves on Agg, whatever backend pyplot has
    return fig


def _device(g: dict[str, Any]) -> str:
    """A group's GPU as the charts name it."""
    return UNKNOWN_DEVICE if g["device"] == F.NA else str(g["device"])


def _chart(chart: dict[str, Any], groups: list[dict[str, Any]], levels: Sequence[str]) -> dict[str, Any]:
    """The chart data of one GPU (its roofs) with the markers of `groups` at `levels`."""
    points = [p for g in groups for p in g["chart"]["points"] if p["level"] in levels]
    return {"title": chart["title"], "roofs": chart["roofs"], "points": points}


def _levels(level: str | Sequence[str] | None) -> list[str]:
    asked = list(R.LEVELS) if level is None else [level] if isinstance(level, str) else list(level)
    wrong = [lv for lv in asked if lv not in R.LEVELS]
    if wrong or not asked:
        raise ValueError(f"level must be one or more of {', '.join(R.LEVELS)}; got {wrong or asked!r}")
    return [lv for lv in R.LEVELS if lv in asked]


def _selected(groups: list[dict[str, Any]], kernels: int | str | Sequence[str] | None) -> list[dict[str, Any]]:
    """The groups `kernels` names (see `roofline_figure`), the most GPU time first."""
    if kernels is None:
        return groups[:MAX_CHART_GROUPS]
    if isinstance(kernels, int):
        if kernels < 1:
            raise ValueError(f"kernels: a count must be at least 1; got {kernels}")
        return groups[:kernels]
    texts = [kernels] if isinstance(kernels, str) else list(kernels)
    found = [g for g in groups if any(t in g["name"] or t in (g["demangled_name"] or "") for t in texts)]
    if not found:
        raise ValueError(f"kernels: no kernel's name contains {', '.join(map(repr, texts))}")
    return found


def _device_chart(charts: list[dict[str, Any]], gpu: str | int | None,
                  groups: list[dict[str, Any]]) -> dict[str, Any]:
    """The chart of the GPU `gpu` names; by default that of the first group's GPU."""
    if not charts:
        raise ValueError("the analysis has no kernel to chart")
    names = [c["device"] for c in charts]
    if gpu is None:
        first = _device(groups[0]) if groups else names[0]
        return charts[names.index(first)] if first in names else charts[0]
    if isinstance(gpu, int):
        if not 0 <= gpu < len(charts):
            raise ValueError(f"gpu: the analysis has {len(charts)} GPU(s), numbered from 0; got {gpu}")
        return charts[gpu]
    matching = [c for c in charts if c["device"] == gpu] or [c for c in charts if gpu in c["device"]]
    if len(matching) != 1:
        said = "no GPU" if not matching else "several GPUs"
        raise ValueError(f"gpu: {said} of this analysis match {gpu!r}; it has {', '.join(map(repr, names))}")
    return matching[0]
