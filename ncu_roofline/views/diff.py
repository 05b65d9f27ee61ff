"""The diff page and the diff summary: a view model built from a `Diff`, and its two renderers.

`build_diff_view` turns a `ncu_roofline.diff.Diff` into plain data (strings, numbers, lists) that
the HTML template and the Markdown renderer only lay out. `render_diff_html` gives one
self-contained page (inline CSS, inline SVG charts with an arrow from every matched kernel's BASE
point to its HEAD point); `render_diff_markdown` gives a summary that fits a pull-request comment
or `$GITHUB_STEP_SUMMARY`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import __version__
from ..knowledge import recipes as R
from . import format as F
from .report import ROOF_LABELS, created_at, device_roofs

if TYPE_CHECKING:
    from ..compare.diff import Diff

# Changes within this many percent are drawn neutral (run-to-run noise of a profiled kernel).
NOISE_PCT = 1.0
MAX_ARROWS = 60          # per chart: the largest time changes
MAX_MD_CHANGES = 15      # rows of the Markdown table
MAX_MD_LIST = 20         # entries of each Markdown list
LEVEL_LABELS = {"dram": "DRAM", "l2": "L2", "l1": "L1"}


# --------------------------------------------------------------------------------------------
# Formatting


def times(value: float | None) -> str:
    """A ratio: 1.778 -> `1.78×`."""
    if value is None:
        return F.NA
    return f"{value:.3g}×"


def trend(delta_pct: float | None) -> str:
    """`slower`, `faster`, `same` (within the noise band) or `unknown`."""
    if delta_pct is None:
        return "unknown"
    if delta_pct > NOISE_PCT:
        return "slower"
    if delta_pct < -NOISE_PCT:
        return "faster"
    return "same"


def roof_name(roof: str | None) -> str:
    return roof.upper() if roof else "none"


def dims(value: Any) -> str:
    return "×".join(str(v) for v in value) if isinstance(value, (list, tuple)) and value else F.NA


def launch_text(side: dict[str, Any]) -> str:
    return f"grid {dims(side.get('grid_size'))}, block {dims(side.get('block_size'))}"


def finding_label(f: dict[str, Any]) -> str:
    from .report import CEILING_LABELS

    label = CEILING_LABELS.get(f["kind"], f["kind"])
    return f"{label} ({f['roof'].upper()})" if f.get("roof") else label


# --------------------------------------------------------------------------------------------
# Roofs and chart points from kernel dicts


def arrow_level(change: dict[str, Any]) -> str | None:
    """DRAM when both sides have a DRAM point, else the first level both have; None: no point."""
    b, h = change["base"], change["head"]
    if not (b["achieved_flop_per_s"] or 0) > 0 or not (h["achieved_flop_per_s"] or 0) > 0:
        return None
    for lv in R.LEVELS:
        ib, ih = b["intensity_flop_per_byte"].get(lv), h["intensity_flop_per_byte"].get(lv)
        if ib is not None and ih is not None and ib > 0 and ih > 0:
            return lv
    return None


def _off_chart_reason(change: dict[str, Any]) -> str:
    b, h = change["base"], change["head"]
    if not b["usable"] or not h["usable"]:
        return "not analysable on one side"
    if b["achieved_flop_per_s"] is None or h["achieved_flop_per_s"] is None:
        return "no FLOP count on one side"
    if not b["achieved_flop_per_s"] > 0 or not h["achieved_flop_per_s"] > 0:
        return "no floating-point work"
    return "no memory level with bytes on both sides"


# --------------------------------------------------------------------------------------------
# The view


def _change_row(n: int, c: dict[str, Any], regressed: set[int]) -> dict[str, Any]:
    b, h, d = c["base"], c["head"], c["duration"]
    name = str(b.get("name") or c["name"])
    util_rows = [{"roof": r, "label": ROOF_LABELS.get(r, r), "base": F.pct(u["base"]), "head": F.pct(u["head"]),
                  "delta": F.signed_points(u["delta"]), "bound_base": b["bound_by"] == r,
                  "bound_head": h["bound_by"] == r} for r, u in c["utilization"].items()]
    intensity_rows = [{"level": lv, "label": LEVEL_LABELS.get(lv, lv), "base": F.ratio(i["base"]),
                       "head": F.ratio(i["head"]), "ratio": times(i["ratio"])}
                      for lv, i in c["intensity_flop_per_byte"].items()]
    findings = c["findings"]
    return {
        "id": f"m{n}",
        "name": name,
        "short_name": F.short_name(name),
        "full_name": c["name"],
        "base_where": f"{b['report']} #{b['index']}",
        "head_where": f"{h['report']} #{h['index']}",
        "device_base": b["device"] or F.NA,
        "device_head": h["device"] or F.NA,
        "launch_base": launch_text(b),
        "launch_head": launch_text(h),
        "launch_changed": c["launch_config_changed"],
        "nvtx_changed": c["nvtx_changed"],
        "nvtx_base": list(b["nvtx_ranges"]),
        "nvtx_head": list(h["nvtx_ranges"]),
        "base_time": F.seconds(d["base_s"]),
        "head_time": F.seconds(d["head_s"]),
        "delta_s": d["delta_s"],
        "delta_time": F.signed_seconds(d["delta_s"]),
        "delta_pct": d["delta_pct"],
        "delta_pct_text": F.signed_pct(d["delta_pct"]),
        "speedup_text": times(d["speedup"]),
        "trend": trend(d["delta_pct"]),
        "regressed": n in regressed,
        "sort": {"base": d["base_s"], "head": d["head_s"], "delta": d["delta_pct"], "speedup": d["speedup"]},
        "bound_base": b["bound_by"],
        "bound_head": h["bound_by"],
        "bound_base_text": roof_name(b["bound_by"]),
        "bound_head_text": roof_name(h["bound_by"]),
        "bound_changed": c["bound_by"]["changed"],
        "regime_base": b["regime"] or F.NA,
        "regime_head": h["regime"] or F.NA,
        "util_base": F.pct(b["bound_utilization"]),
        "util_head": F.pct(h["bound_utilization"]),
        "achieved_base": F.si(b["achieved_flop_per_s"], "FLOP/s"),
        "achieved_head": F.si(h["achieved_flop_per_s"], "FLOP/s"),
        "achieved_ratio": times(c["achieved_flop_per_s"]["ratio"]),
        "intensity_dram_base": F.ratio(b["intensity_flop_per_byte"].get("dram")),
        "intensity_dram_head": F.ratio(h["intensity_flop_per_byte"].get("dram")),
        "utilization": util_rows,
        "intensity": intensity_rows,
        "findings_compared": findings["compared"],
        "appeared": [dict(f, label=finding_label(f)) for f in findings["appeared"]],
        "disappeared": [dict(f, label=finding_label(f)) for f in findings["disappeared"]],
    }


def _unmatched_row(u: dict[str, Any]) -> dict[str, Any]:
    name = str(u.get("name") or "")
    return {"name": name, "short_name": F.short_name(name), "full_name": u.get("demangled_name") or name,
            "where": f"{u['report']} #{u['index']}", "device": u.get("device") or F.NA,
            "launch": launch_text(u), "nvtx": list(u.get("nvtx_ranges") or []),
            "duration": F.seconds(u.get("duration_s")), "duration_s": u.get("duration_s"),
            "bound_by": roof_name(u.get("bound_by"))}


def _charts(diff: Diff, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One chart per device (or per BASE device → HEAD device when a kernel moved GPUs)."""
    from ..compare.diff import kernel_side

    groups: dict[tuple[str, str], list[tuple[dict[str, Any], dict[str, Any]]]] = {}
    for row, c in zip(rows, diff.matched):
        key = (c["base"]["device"] or "unknown device", c["head"]["device"] or "unknown device")
        groups.setdefault(key, []).append((row, c))
    base_sides = [kernel_side(k) for k in diff.base.kernels]
    head_sides = [kernel_side(k) for k in diff.head.kernels]
    charts = []
    for (dev_b, dev_h), members in groups.items():
        same = dev_b == dev_h
        on_head = [s for s in head_sides if (s["device"] or "unknown device") == dev_h]
        on_base = [s for s in base_sides if (s["device"] or "unknown device") == dev_b]
        roofs = device_roofs(on_head + on_base if same else on_head)
        ceilings = [] if same else device_roofs(on_base, prefix="BASE ")
        points: list[dict[str, Any]] = []
        arrows: list[tuple[dict[str, Any], dict[str, Any]]] = []
        off: list[str] = []
        drawn = 0
        for row, c in members:  # largest time change first
            level = arrow_level(c)
            if level is None:
                off.append(f"{row['short_name']}: {_off_chart_reason(c)}")
                continue
            if drawn == MAX_ARROWS:
                off.append(f"{row['short_name']}: beyond the {MAX_ARROWS} largest changes")
                continue
            drawn += 1
            pair = []
            for side, tag in ((c["base"], "base"), (c["head"], "head")):
                point = {"kernel_id": f"{row['id']}-{tag}", "level": level,
                         "intensity": side["intensity_flop_per_byte"][level],
                         "flop_per_s": side["achieved_flop_per_s"], "bound_by": side["bound_by"],
                         "label": f"{tag.upper()} {F.short_name(row['name'], 80)} ({row['delta_pct_text']})"}
                points.append(point)
                pair.append(point)
            arrows.append((pair[0], pair[1]))
        title = f"{dev_h}: BASE → HEAD" if same else f"{dev_b} (BASE, dashed roofs) → {dev_h} (HEAD)"
        charts.append({"device": dev_h if same else f"{dev_b} → {dev_h}", "title": title, "roofs": roofs,
                       "ceilings": ceilings, "points": points, "arrows": arrows, "off_chart": off,
                       "levels": sorted({p["level"] for p in points}, key=R.LEVELS.index)})
    return charts


def _total_view(t: dict[str, Any]) -> dict[str, Any]:
    return {"base": F.seconds(t["base_s"]), "head": F.seconds(t["head_s"]), "delta": F.signed_seconds(t["delta_s"]),
            "pct": F.signed_pct(t["delta_pct"]), "trend": trend(t["delta_pct"]),
            "speedup": times(t["base_s"] / t["head_s"] if t["base_s"] and t["head_s"] else None)}


def _gate_view(gate: dict[str, Any], matched_count: int) -> dict[str, Any]:
    view: dict[str, Any] = {"status": "off", "threshold": None, "min_duration": F.seconds(gate["min_duration_s"]),
            "regressions": [], "verdict": "", "rule": ""}
    if not gate["enabled"]:
        view["verdict"] = "No gate set (--fail-on-regression PCT)."
        return view
    view["threshold"] = f"{gate['threshold_pct']:g} %"
    view["regressions"] = [{"name": r["name"], "short_name": F.short_name(r["name"]), "scope": r["scope"],
                            "base": F.seconds(r["base_s"]), "head": F.seconds(r["head_s"]),
                            "pct": F.signed_pct(r["delta_pct"])} for r in gate["regressions"]]
    view["rule"] = (f"Gated: the total GPU time of the matched kernels, and each matched kernel that ran at "
                    f"least {view['min_duration']} in BASE and lost at least {F.seconds(gate['min_delta_s'])}.")
    if gate["passed"] and not matched_count:
        view["status"] = "pass"
        view["verdict"] = "PASSED, vacuously: no kernel matched, so nothing was gated."
    elif gate["passed"]:
        view["status"] = "pass"
        view["verdict"] = f"PASSED: nothing gated is more than {view['threshold']} slower."
    else:
        view["status"] = "fail"
        n = len(gate["regressions"])
        view["verdict"] = (f"FAILED: {n} regression{'s' if n != 1 else ''} of more than {view['threshold']}.")
    return view


def build_diff_view(diff: Diff) -> dict[str, Any]:
    """Everything the diff page and the diff summary show, as plain data."""
    from ..compare.runs import short_path

    regressed_keys = {(r.get("report"), r.get("index"), r["name"]) for r in diff.gate["regressions"]
                      if r["scope"] == "kernel"}
    regressed = {n for n, c in enumerate(diff.matched)
                 if (c["head"]["report"], c["head"]["index"], c["name"]) in regressed_keys}
    rows = [_change_row(n, c, regressed) for n, c in enumerate(diff.matched)]
    devices = sorted(set(diff.base.devices) | set(diff.head.devices))
    findings = [r for r in rows if r["appeared"] or r["disappeared"]]
    compared = sum(1 for r in rows if r["findings_compared"])
    changed_bound = [r for r in rows if r["bound_changed"]]
    tm, ta = diff.totals["matched"], diff.totals["all"]
    header = {
        "title": f"Roofline diff: {short_path(diff.base.input)} → {short_path(diff.head.input)}",
        "base": diff.base.summary(),
        "head": diff.head.summary(),
        "base_name": short_path(diff.base.input),
        "head_name": short_path(diff.head.input),
        "devices": devices,
        "devices_text": ", ".join(devices) or F.NA,
        "devices_differ": set(diff.base.devices) != set(diff.head.devices),
        "matched_count": len(rows),
        "launch_changed_count": sum(1 for r in rows if r["launch_changed"]),
        "unmatched_base_count": len(diff.unmatched_base),
        "unmatched_head_count": len(diff.unmatched_head),
        "faster_count": sum(1 for r in rows if r["trend"] == "faster"),
        "slower_count": sum(1 for r in rows if r["trend"] == "slower"),
        "same_count": sum(1 for r in rows if r["trend"] == "same"),
        "bound_changed_count": len(changed_bound),
        "findings_compared_count": compared,
        "noise_pct": f"{NOISE_PCT:g} %",
        "tool_version": __version__,
        "created": created_at(),
    }
    return {
        "header": header,
        "total_all": _total_view(ta),
        "total_matched": _total_view(tm),
        "gate": _gate_view(diff.gate, len(rows)),
        "changes": rows,
        "findings": findings,
        "charts": _charts(diff, rows),
        "unmatched_base": [_unmatched_row(u) for u in diff.unmatched_base],
        "unmatched_head": [_unmatched_row(u) for u in diff.unmatched_head],
        "skipped_base": list(diff.base.skipped),
        "skipped_head": list(diff.head.skipped),
        "roof_labels": ROOF_LABELS,
    }


# --------------------------------------------------------------------------------------------
# HTML


def _chart_svg(chart: dict[str, Any], id_prefix: str) -> str:
    from ..render.charts.roofline import ChartSpec, Point, Roof, render_roofline_svg

    def point(p: dict[str, Any]) -> Point:
        return Point(p["kernel_id"], p["level"], p["intensity"], p["flop_per_s"], p["bound_by"], p["label"])

    spec = ChartSpec(
        title=chart["title"],
        roofs=[Roof(r["name"], r["kind"], r["value"], r["label"]) for r in chart["roofs"]],
        points=[point(p) for p in chart["points"]],
        ceilings=[Roof(r["name"], r["kind"], r["value"], r["label"]) for r in chart["ceilings"]],
        arrows=[(point(a), point(b)) for a, b in chart["arrows"]],
        id_prefix=id_prefix,
        annotations=["Arrows run from each matched kernel's BASE point to its HEAD point (hover for numbers)."],
        width_in=9.0,
        height_in=5.6,
    )
    return render_roofline_svg(spec)


DIFF_CSS = """
.verdict-box { font-weight: 600; padding: 10px 14px; border-radius: 6px; margin: 10px 0; }
.gate-pass { background: #e6f4ea; border: 1px solid #9fd3ae; color: #0b5d1e; }
.gate-fail { background: #fdecea; border: 1px solid #f1a9a0; color: #8a1c12; }
.gate-off { background: var(--panel); border: 1px solid var(--line); color: var(--muted); font-weight: 400; }
.t-faster { color: #0b7a2a; font-weight: 600; } .t-slower { color: #b3261e; font-weight: 600; }
.t-same, .t-unknown { color: var(--muted); }
tr.regressed td:first-child { border-left: 4px solid #b3261e; }
.changed { background: #fff3cd; border-radius: 3px; padding: 0 3px; }
.arrow { color: var(--muted); padding: 0 2px; }
.big { font-size: 20px; font-weight: 600; }
ul.compact { margin: 4px 0; padding-left: 20px; } ul.compact li { margin-bottom: 3px; }
.appeared { color: #8a1c12; } .disappeared { color: #0b5d1e; }
details.change { margin: 2px 0; } details.change > summary { cursor: pointer; color: var(--accent); font-size: 12px; }
table.sub { width: auto; margin: 4px 0 8px; font-size: 12.5px; } table.sub th { position: static; }
td.name { min-width: 15em; max-width: 30em; overflow-wrap: anywhere; }
td.nowrap { white-space: nowrap; }
td.num.wrap { white-space: normal; } .small { font-size: 12px; font-weight: 400; }
.rule { font-weight: 400; font-size: 13px; margin-top: 2px; }
th.num { text-align: right; }
"""


def render_diff_html(diff: Diff) -> str:
    """The whole diff page (self-contained: inline CSS, SVG and the report's sorting script)."""
    from ..render.html import asset, environment, markup, palette_css

    view = build_diff_view(diff)
    charts = [dict(c, svg=_chart_svg(c, f"d{n}-") if c["points"] else "") for n, c in enumerate(view["charts"])]
    return environment().get_template("diff.html.j2").render(
        **{**view, "charts": charts},
        css=markup(palette_css() + asset("report.css") + DIFF_CSS),
        js=markup(asset("report.js")),
    )


# --------------------------------------------------------------------------------------------
# Markdown


def render_diff_markdown(diff: Diff) -> str:
    """A summary for a pull-request comment: totals, top changes, findings, unmatched, gate."""
    from ..render.markdown import md_escape

    view = build_diff_view(diff)
    h, ta, tm, gate = view["header"], view["total_all"], view["total_matched"], view["gate"]
    icon = {"pass": "✅", "fail": "❌", "off": "ℹ️"}[gate["status"]]
    lines = [
        f"### Roofline diff: {md_escape(h['base_name'])} → {md_escape(h['head_name'])}",
        "",
        f"**GPU:** {md_escape(h['devices_text'])} · **total GPU time:** {ta['base']} → {ta['head']} "
        f"({ta['pct']}) · **matched kernels:** "
        + (f"{h['matched_count']}, {tm['base']} → {tm['head']} ({tm['pct']})" if h["matched_count"] else "none")
        + f" · **unmatched:** {h['unmatched_base_count']} only in BASE, {h['unmatched_head_count']} only in HEAD",
        "",
        f"{icon} **Gate:** {md_escape(gate['verdict'])} {md_escape(gate['rule'])}".rstrip(),
        "",
    ]
    for r in gate["regressions"]:
        lines.append(f"- {md_escape(r['short_name'])}: {r['base']} → {r['head']} ({r['pct']})")
    if gate["regressions"]:
        lines.append("")
    rows = view["changes"]
    if rows:
        shown = rows[:MAX_MD_CHANGES]
        plural = "s" if len(rows) != 1 else ""
        lines += [f"Largest changes ({len(shown)} of {len(rows)} matched kernel{plural}, by time gained or lost):",
                  "",
                  "| Kernel | Base | Head | Δ | Bound by | Utilisation |",
                  "|---|---:|---:|---:|---|---:|"]
        for r in shown:
            name = md_escape(r["short_name"]) + (" (launch config changed)" if r["launch_changed"] else "")
            bound = (f"{r['bound_base_text']} → **{r['bound_head_text']}**" if r["bound_changed"]
                     else r["bound_base_text"])
            delta = f"**{r['delta_pct_text']}**" if r["regressed"] else r["delta_pct_text"]
            lines.append(f"| {name} | {r['base_time']} | {r['head_time']} | {delta} | {bound} | "
                         f"{r['util_base']} → {r['util_head']} |")
        if len(rows) > len(shown):
            lines.append(f"| … {len(rows) - len(shown)} more | | | | | |")
        lines.append("")
    if view["findings"]:
        lines += ["Findings that appeared or disappeared:", ""]
        for r in view["findings"][:MAX_MD_LIST]:
            parts = [f"+{md_escape(f['label'])}" for f in r["appeared"]]
            parts += [f"−{md_escape(f['label'])}" for f in r["disappeared"]]
            lines.append(f"- {md_escape(r['short_name'])}: {', '.join(parts)}")
        if len(view["findings"]) > MAX_MD_LIST:
            lines.append(f"- … and {len(view['findings']) - MAX_MD_LIST} more")
        lines.append("")
    for side, label in (("unmatched_base", "Only in BASE"), ("unmatched_head", "Only in HEAD")):
        items = view[side]
        if not items:
            continue
        lines += [f"{label} ({len(items)}):", ""]
        groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for u in items:
            groups.setdefault((u["short_name"], u["launch"]), []).append(u)
        for (name, launch), members in list(groups.items())[:MAX_MD_LIST]:
            total = sum(u["duration_s"] or 0.0 for u in members)
            count = f" ×{len(members)}" if len(members) > 1 else ""
            lines.append(f"- {md_escape(name)} ({md_escape(launch)}){count}: {F.seconds(total or None)}")
        if len(groups) > MAX_MD_LIST:
            lines.append(f"- … and {len(groups) - MAX_MD_LIST} more")
        lines.append("")
    skipped = [(side, s) for side in ("base", "head") for s in view[f"skipped_{side}"]]
    for side, s in skipped:
        lines.append(f"- Not compared ({side.upper()}): {md_escape(s['path'])}: {md_escape(s['reason'])}")
    if skipped:
        lines.append("")
    lines.append(f"_ncu-roofline {h['tool_version']} · Δ = (HEAD − BASE) / BASE; "
                 f"utilisation of the bounding roof_")
    return "\n".join(lines) + "\n"
