"""HTML: one self-contained page (inline CSS, JS and SVG charts; nothing fetched when opened)."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..views.report import build_report_view
from . import RenderOptions

if TYPE_CHECKING:
    import jinja2

    from ..api.analysis import Analysis
    from ..compare.diff import Diff
    from ..compare.trend import Trend

_PACKAGE_TEMPLATES = Path(__file__).resolve().parents[1] / "templates"  # inside an installed wheel
_SOURCE_TEMPLATES = Path(__file__).resolve().parents[2] / "templates"  # in a source checkout


def templates_dir() -> Path:
    """Where the templates are: inside the installed package, else the source tree's `templates/`."""
    for candidate in (_PACKAGE_TEMPLATES, _SOURCE_TEMPLATES):
        if (candidate / "report.html.j2").is_file():
            return candidate
    raise FileNotFoundError("ncu-roofline's templates are missing from this installation")


@functools.lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """One cached, strict, autoescaping jinja2 environment."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.policies["json.dumps_kwargs"] = {"sort_keys": True, "ensure_ascii": False}
    return env


@functools.lru_cache(maxsize=4)
def asset(name: str) -> str:
    """CSS and JS are inlined raw, never parsed as templates."""
    return (templates_dir() / name).read_text(encoding="utf-8")


def _chart_svg(chart: dict[str, Any], id_prefix: str, small: bool = False) -> str:
    from .charts.roofline import ChartSpec, Point, Roof, render_roofline_svg

    extra: dict[str, Any] = {"width_in": 6.0, "height_in": 3.9} if small else {}
    if "walls" in chart:
        extra |= INSTRUCTION_AXES | {"walls": [tuple(w) for w in chart["walls"]]}
    spec = ChartSpec(
        title=chart["title"],
        roofs=[Roof(r["name"], r["kind"], r["value"], r["label"]) for r in chart["roofs"]],
        points=[Point(p["kernel_id"], p["level"], p["intensity"], p["flop_per_s"], p["bound_by"], p["label"])
                for p in chart["points"]],
        ceilings=[Roof(c["name"], c["kind"], c["value"], c["label"]) for c in chart.get("ceilings", [])],
        id_prefix=id_prefix,
        **extra,
    )
    return render_roofline_svg(spec)


INSTRUCTION_AXES = {
    "x_label": "Instruction intensity (warp instructions per 32-byte transaction)",
    "y_label": "Warp instructions per second", "x_unit": "inst/transaction", "y_unit": "inst/s",
}


def _page_data(view: dict[str, Any]) -> dict[str, Any]:
    """A compact machine-readable copy of the table, embedded as JSON in the page."""
    return {
        "header": {k: view["header"][k] for k in ("kernel_count", "total_gpu_time", "tool_version")},
        "kernels": [{"id": k["id"], "name": k["name"], "bound_by": k["bound_by"],
                     "utilization": k["bound_utilization"], "regime": k["regime"],
                     "duration_s": k["duration_s"]} for k in view["kernels"]],
    }


def render_report_html(analysis: Analysis, options: RenderOptions) -> str:
    """The whole report page."""
    view = build_report_view(analysis, options.redact)
    charts = [dict(c, svg=_chart_svg(c, f"c{n}-")) for n, c in enumerate(view["charts"])]
    instruction = [dict(c, svg=_chart_svg(c, f"i{n}-")) for n, c in enumerate(view["instruction_charts"])]
    kernels = [dict(k, svg=_chart_svg(k["chart"], f"{k['id']}-", small=True) if k["has_chart"] else "")
               for k in view["kernels"]]
    roof_names = sorted({r["name"] for c in view["charts"] for r in c["roofs"]},
                        key=lambda n: (["dram", "l2", "l1", "fp64", "fp32", "fp16"] + [n]).index(n))
    return environment().get_template("report.html.j2").render(
        **{**view, "charts": charts, "kernels": kernels, "instruction_charts": instruction},
        chart_roof_names=roof_names,
        data=_page_data(view),
        css=markup(palette_css() + asset("report.css")),
        js=markup(asset("report.js")),
    )


def palette_css() -> str:
    """The chart palette as CSS variables, so badges and bars use the chart's colours."""
    from .charts.roofline import PALETTE

    pairs = [f"--{name}:{colour};" for name, colour in PALETTE.items() if name is not None]
    return ":root{" + "".join(pairs) + f"--none:{PALETTE[None]};" + "}\n"


def markup(text: str) -> Any:
    """Text jinja2 must insert as is (already escaped, or CSS/JS of our own)."""
    from markupsafe import Markup

    return Markup(text)


def render_diff_html(diff: Diff, options: RenderOptions) -> str:
    """The diff page."""
    from ..views.diff import render_diff_html as page

    return page(diff)


def render_trend_html(trend: Trend, options: RenderOptions) -> str:
    """The trend page."""
    from ..compare.trend import render_html as page

    return page(trend, options.top)
