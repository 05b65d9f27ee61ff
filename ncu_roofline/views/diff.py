"""The diff view: what the diff page and the diff summary show, as plain data.

`build_diff_view` turns a `compare.diff.Diff` into strings, numbers, lists and dicts (JSON-able,
no markup) that `render.diff` only lays out: the header, counts and totals, the gate's verdict
(`views.diff_gate`), one row per matched group (largest time change first, with the pass that
paired it and the evidence for its verdict), the ambiguous candidates, the findings that
appeared or disappeared, the unmatched groups and, per device, the chart data (roofs, BASE and
HEAD points, and an arrow from every matched group's BASE point to its HEAD point).
"""

from __future__ import annotations

from typing import Any

from ..compare.diff import Diff, kernel_side
from ..compare.runs import short_path
from ..knowledge import diff_words as W
from ..knowledge import recipes as R
from ..knowledge.wording import fill
from ..version import __version__
from . import format as F
from . import wording as words
from .diff_gate import (
    COUNTER_LABELS,
    coverage_text,
    environment_warnings,
    evidence,
    gate_view,
    measured,
    noise_rule,
    per_unit_text,
)
from .labels import family, long_label, roof_css, short_label
from .launches import device_roofs
from .texts import CEILING_LABELS, created_at

# Changes within this many percent are drawn neutral (run-to-run noise of a profiled kernel).
NOISE_PCT = 1.0
MAX_ARROWS = 60  # per chart: the largest time changes
_DIFF_OFF_CHART_WORDS = {kind: text.format(arrows=MAX_ARROWS) for kind, text in words.DIFF_OFF_CHART_TEXT.items()}
UNKNOWN_DEVICE = "unknown device"


# --------------------------------------------------------------------------------------------
# Labels


VERDICT_TRENDS = {"regressed": "slower", "improved": "faster", "unchanged": "same", "unknown": "unknown"}


def trend(delta_pct: float | None) -> str:
    """`slower`, `faster`, `same` (within ±NOISE_PCT) or `unknown`: the colour of a total's change."""
    if delta_pct is None:
        return "unknown"
    if delta_pct > NOISE_PCT:
        return "slower"
    if delta_pct < -NOISE_PCT:
        return "faster"
    return "same"


def dims(value: Any) -> str:
    """A grid or block size: `[128, 1, 1]` -> `128×1×1`; `n/a` when there is none."""
    return "×".join(str(v) for v in value) if isinstance(value, (list, tuple)) and value else F.NA


def launch_text(side: dict[str, Any]) -> str:
    """`grid 4×1×1, block 256×1×1` of a kernel dict."""
    return f"grid {dims(side.get('grid_size'))}, block {dims(side.get('block_size'))}"


def finding_label(f: dict[str, Any]) -> str:
    """A finding's name, with the roof it sits under: `FMA balance (FP32)`."""
    label = CEILING_LABELS.get(f["kind"], f["kind"])
    return f"{label} ({short_label(f['roof'])})" if f.get("roof") else label


# --------------------------------------------------------------------------------------------
# Chart points from kernel dicts


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


def off_chart_reason(change: dict[str, Any]) -> str:
    """Why a matched kernel has no arrow on the chart (a kind of `words.DIFF_OFF_CHART_TEXT`)."""
    b, h = change["base"], change["head"]
    if not b["usable"] or not h["usable"]:
        return words.SIDE_UNUSABLE
    if b["achieved_flop_per_s"] is None or h["achieved_flop_per_s"] is None:
        return words.SIDE_NO_FLOP_COUNT
    if not b["achieved_flop_per_s"] > 0 or not h["achieved_flop_per_s"] > 0:
        return words.SIDE_NO_FP_WORK
    return words.SIDE_NO_SHARED_LEVEL


# --------------------------------------------------------------------------------------------
# Rows


def _utilization_rows(c: dict[str, Any]) -> list[dict[str, Any]]:
    b, h = c["base"], c["head"]
    return [{"roof": r, "label": long_label(r, default=r), "base": F.pct(u["base"]), "head": F.pct(u["head"]),
             "delta": F.signed_points(u["delta"]), "bound_base": b["bound_by"] == r,
             "bound_head": h["bound_by"] == r} for r, u in c["utilization"].items()]


def _intensity_rows(c: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"level": lv, "label": short_label(lv), "base": F.ratio(i["base"]), "head": F.ratio(i["head"]),
             "ratio": F.times(i["ratio"])} for lv, i in c["intensity_flop_per_byte"].items()]


def launches_text(base: int, head: int) -> str:
    """`10`, or `10 → 12` when the launch count changed."""
    return str(base) if base == head else f"{base} → {head}"


def _spread(side: dict[str, Any]) -> str:
    """`±1.2 %` (MAD of the launches, in % of their median) where a side repeats, else empty."""
    if side["timed_launches"] < 2 or side["spread_pct"] is None:
        return ""
    return f"±{side['spread_pct']:.1f} %"


def _counter_rows(c: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"metric": m, "label": COUNTER_LABELS.get(m, m), "base": F.si(v["base"], ""), "head": F.si(v["head"], ""),
             "pct": F.signed_pct(v["delta_pct"])} for m, v in c["counters"].items()]


def work_view(c: dict[str, Any]) -> dict[str, Any]:
    """The work of a pair in words: what changed, the time per unit of work, and what to do about a new size."""
    w = c["work"]
    return {"change": w["change"], "size_changed": w["size_changed"],
            "text": measured(W.WORK[w["change"]], w["measure"], w["base"], w["head"]),
            "per_unit": per_unit_text(w), "next_step": W.WORK_NEXT_STEP.get(w["change"], ""),
            "judged": fill((W.JUDGED_PER_UNIT,), {"unit": w["unit"]}) if w["size_changed"] else ""}


def cause_text(cause: dict[str, Any]) -> str:
    """One cause in words: `new register spills: DRAM bytes 10 MB → 5.18 GB`."""
    key = (cause["kind"], cause["change"])
    template = W.CAUSES.get(key) or (W.APPEARED if cause["change"] == "appeared" else W.GONE)
    return measured(template, cause["measure"], cause["base"], cause["head"], headline=cause["headline"] or None)


def _change_row(n: int, c: dict[str, Any], regressed: set[int]) -> dict[str, Any]:
    b, h, d = c["base"], c["head"], c["duration"]
    name = str(b.get("name") or c["name"])
    head_name = str(h.get("name") or c["head_name"])
    findings = c["findings"]
    return {
        "id": f"m{n}",
        "name": name,
        "short_name": F.short_name(name),
        "full_name": c["name"],
        "head_name": head_name,
        "head_short_name": F.short_name(head_name),
        "head_full_name": c["head_name"],
        "name_changed": c["name_changed"],
        "match": c["match"],
        "rule": c["rule"],
        "launches": launches_text(c["launches"]["base"], c["launches"]["head"]),
        "spread_base": _spread(b),
        "spread_head": _spread(h),
        "verdict": c["verdict"],
        "moved": c["verdict"] in ("improved", "regressed"),
        "evidence": evidence(c["noise"]),
        "counters": _counter_rows(c),
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
        "speedup_text": F.times(d["speedup"]),
        "trend": VERDICT_TRENDS[c["verdict"]],
        "regressed": n in regressed,
        "sort": {"base": d["base_s"], "head": d["head_s"], "delta": d["delta_pct"], "speedup": d["speedup"]},
        "bound_base": b["bound_by"],
        "bound_head": h["bound_by"],
        "bound_base_css": roof_css(b["bound_by"]),
        "bound_head_css": roof_css(h["bound_by"]),
        "bound_base_text": short_label(b["bound_by"]),
        "bound_head_text": short_label(h["bound_by"]),
        "bound_changed": c["bound_by"]["changed"],
        "regime_base": b["regime"] or F.NA,
        "regime_head": h["regime"] or F.NA,
        "util_base": F.pct(b["bound_utilization"]),
        "util_head": F.pct(h["bound_utilization"]),
        "achieved_base": F.si(b["achieved_flop_per_s"], "FLOP/s"),
        "achieved_head": F.si(h["achieved_flop_per_s"], "FLOP/s"),
        "achieved_ratio": F.times(c["achieved_flop_per_s"]["ratio"]),
        "intensity_dram_base": F.ratio(b["intensity_flop_per_byte"].get("dram")),
        "intensity_dram_head": F.ratio(h["intensity_flop_per_byte"].get("dram")),
        "utilization": _utilization_rows(c),
        "intensity": _intensity_rows(c),
        "work": work_view(c),
        "causes": [cause_text(x) for x in c["causes"]],
        "why": cause_text(c["causes"][0]) if c["causes"] else "",
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
            "launches": u.get("launches", 1), "total": F.seconds(u.get("total_s")), "total_s": u.get("total_s"),
            "bound_by": short_label(u.get("bound_by"))}


def _ambiguous_row(a: dict[str, Any]) -> dict[str, Any]:
    return {"match": a["match"], "name": a["name"], "short_name": F.short_name(a["name"]),
            "base": [_unmatched_row(u) for u in a["base"]], "head": [_unmatched_row(u) for u in a["head"]]}


# --------------------------------------------------------------------------------------------
# Charts

Member = tuple[dict[str, Any], dict[str, Any]]  # (row of the view, change of the diff)
Arrow = tuple[dict[str, Any], dict[str, Any]]  # (BASE point, HEAD point)


def _device(side: dict[str, Any]) -> str:
    device: str = side["device"] or UNKNOWN_DEVICE
    return device


def _arrows(members: list[Member]) -> tuple[list[dict[str, Any]], list[Arrow], list[tuple[str, str]]]:
    """The points, the BASE → HEAD arrows and the kernels off the chart (name, why) of one chart's kernels."""
    points: list[dict[str, Any]] = []
    arrows: list[Arrow] = []
    off: list[tuple[str, str]] = []
    for row, c in members:  # largest time change first
        level = arrow_level(c)
        if level is None:
            off.append((row["short_name"], off_chart_reason(c)))
            continue
        if len(arrows) == MAX_ARROWS:
            off.append((row["short_name"], words.BEYOND_ARROWS))
            continue
        pair = [{"kernel_id": f"{row['id']}-{tag}", "level": level,
                 "intensity": side["intensity_flop_per_byte"][level],
                 "flop_per_s": side["achieved_flop_per_s"], "bound_by": family(side["bound_by"]),
                 "label": f"{tag.upper()} {F.short_name(row['name'], 80)} ({row['delta_pct_text']})"}
                for side, tag in ((c["base"], "base"), (c["head"], "head"))]
        points += pair
        arrows.append((pair[0], pair[1]))
    return points, arrows, off


def _charts(diff: Diff, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One chart per device (or per BASE device → HEAD device when a kernel moved GPUs)."""
    groups: dict[tuple[str, str], list[Member]] = {}
    for row, c in zip(rows, diff.matched, strict=False):
        groups.setdefault((_device(c["base"]), _device(c["head"])), []).append((row, c))
    base_sides = [kernel_side(k) for k in diff.base.kernels]
    head_sides = [kernel_side(k) for k in diff.head.kernels]
    charts = []
    for (dev_b, dev_h), members in groups.items():
        same = dev_b == dev_h
        on_head = [s for s in head_sides if _device(s) == dev_h]
        on_base = [s for s in base_sides if _device(s) == dev_b]
        points, arrows, off = _arrows(members)
        title = f"{dev_h}: BASE → HEAD" if same else f"{dev_b} (BASE, dashed roofs) → {dev_h} (HEAD)"
        charts.append({"device": dev_h if same else f"{dev_b} → {dev_h}", "title": title,
                       "roofs": device_roofs(on_head + on_base if same else on_head),
                       "ceilings": [] if same else device_roofs(on_base, prefix="BASE "),
                       "points": points, "arrows": arrows,
                       "off_chart": words.off_chart_notes(off, _DIFF_OFF_CHART_WORDS),
                       "levels": sorted({p["level"] for p in points}, key=R.LEVELS.index)})
    return charts


# --------------------------------------------------------------------------------------------
# Totals, gate and the whole view


def _total_view(t: dict[str, Any]) -> dict[str, Any]:
    return {"base": F.seconds(t["base_s"]), "head": F.seconds(t["head_s"]), "delta": F.signed_seconds(t["delta_s"]),
            "pct": F.signed_pct(t["delta_pct"]), "trend": trend(t["delta_pct"]),
            "speedup": F.times(t["base_s"] / t["head_s"] if t["base_s"] and t["head_s"] else None)}


def _regressed(diff: Diff) -> set[int]:
    """Positions in `diff.matched` of the groups the gate names."""
    keys = {(r.get("report"), r.get("index"), r["name"]) for r in diff.gate["regressions"]
            if r["scope"] in ("group", "metric")}
    return {n for n, c in enumerate(diff.matched) if (c["head"]["report"], c["head"]["index"], c["name"]) in keys}


def _header(diff: Diff, rows: list[dict[str, Any]]) -> dict[str, Any]:
    devices = sorted(set(diff.base.devices) | set(diff.head.devices))
    base_name, head_name = short_path(diff.base.input), short_path(diff.head.input)
    return {
        "title": f"Roofline diff: {base_name} → {head_name}",
        "base": diff.base.summary(),
        "head": diff.head.summary(),
        "base_name": base_name,
        "head_name": head_name,
        "devices": devices,
        "devices_text": ", ".join(devices) or F.NA,
        "devices_differ": set(diff.base.devices) != set(diff.head.devices),
        "matched_count": len(rows),
        "launch_changed_count": sum(1 for r in rows if r["launch_changed"]),
        "unmatched_base_count": len(diff.unmatched_base),
        "unmatched_head_count": len(diff.unmatched_head),
        "ambiguous_count": len(diff.ambiguous),
        "counts": dict(diff.counts),
        "coverage": coverage_text(diff),
        "noise_rule": noise_rule(diff),
        "rules": list(diff.matching.get("rules", [])),
        "warnings": environment_warnings(diff),
        "not_recorded": list(diff.environment.get("not_recorded", [])),
        "bound_changed_count": sum(1 for r in rows if r["bound_changed"]),
        "tool_version": __version__,
        "created": created_at(),
    }


def build_diff_view(diff: Diff) -> dict[str, Any]:
    """Everything the diff page and the diff summary show, as plain data."""
    regressed = _regressed(diff)
    rows = [_change_row(n, c, regressed) for n, c in enumerate(diff.matched)]
    return {
        "header": _header(diff, rows),
        "total_all": _total_view(diff.totals["all"]),
        "total_matched": _total_view(diff.totals["compared"]),
        "gate": gate_view(diff),
        "changes": rows,
        "moved": [r for r in rows if r["moved"] or r["work"]["size_changed"]],
        "ambiguous": [_ambiguous_row(a) for a in diff.ambiguous],
        "findings": [r for r in rows if r["causes"]],
        "charts": _charts(diff, rows),
        "unmatched_base": [_unmatched_row(u) for u in diff.unmatched_base],
        "unmatched_head": [_unmatched_row(u) for u in diff.unmatched_head],
        "skipped_base": list(diff.base.skipped),
        "skipped_head": list(diff.head.skipped),
    }
