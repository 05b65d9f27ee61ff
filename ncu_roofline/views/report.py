"""The data behind the HTML report and the Markdown summary, built from an Analysis.

Everything here is plain data (dicts, lists, strings, numbers) so tests can check it without
parsing HTML; the renderers only lay it out.
"""

from __future__ import annotations

import os
import statistics
from collections import Counter
from typing import TYPE_CHECKING, Any

from ..api.analysis import LAUNCH_FINDINGS_UP_TO
from ..api.groups import FINDINGS_BY_GROUP
from ..knowledge import recipes as R
from ..knowledge import throughputs as T
from ..knowledge.catalog import page_words
from ..version import __version__
from . import format as F
from . import wording as W
from .groups import (
    GROUPING_TEXT,
    MAX_CHART_GROUPS,
    bound_mix,
    page_groups,
    share_text,
    size_points,
)
from .kernel_numbers import quantity_rows, roof_unit_notes
from .labels import (
    family,
    is_unit,
    long_label,
    named_limit,
    regime_label,
    regime_text,
    roof_css,
    short_label,
)
from .launches import PageLaunches, device_roofs
from .texts import CEILING_LABELS, created_at, flag_text, quantity_label, table_flags
from .verdict import TOP_N, Header, finding_views, next_step, top_finding, verdict, verdict_block

if TYPE_CHECKING:
    from ..api.analysis import Analysis
    from ..api.kernel import AnalysedKernel

MAX_DRAWN_CEILINGS = 4
MAX_UNITS_SHOWN = 8  # the busiest unit throughputs listed in a kernel's section
MAX_RULES_SHOWN = 6  # Nsight Compute's rule results with a speed-up estimate or a warning


def _chart_ceilings(k: AnalysedKernel, roofs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Ceilings worth drawing under the roofs of one kernel's chart (the lowest first)."""
    names = {r["name"] for r in roofs}
    drawn = []
    for c in sorted(k.ceilings, key=lambda c: c.factor):
        roof = c.roof if c.roof != "tensor" else next((n for n in names if n.startswith("tensor")), "")
        if c.value is None or c.factor >= 0.98 or roof not in names:
            continue
        if c.factor < k.utilization.get(c.roof, 0.0):
            continue  # a cap on the bytes used, under a point that counts every byte moved: the finding says it
        if c.roof not in R.LEVELS and c.roof not in (k.bound_by, k.dominant_precision):
            continue  # a compute ceiling under a precision the kernel hardly uses
        kind = "bandwidth" if c.roof in R.LEVELS else "compute"
        unit = "B/s" if kind == "bandwidth" else "FLOP/s"
        part = (f"in {c.launches[0]} of {c.launches[1]} launches" if c.launches is not None
                and c.launches[0] < c.launches[1] else "")
        label = f"{short_label(c.roof)} {CEILING_LABELS.get(c.kind, c.kind)} {F.pct(c.factor)}"
        drawn.append({"name": roof, "kind": kind, "value": c.value,  # the value in the tooltip: room on the chart
                      "label": f"{label} ({part})" if part else label,
                      "title": f"{label} ({F.si(c.value, unit)}{', ' + part if part else ''})"})
        if len(drawn) == MAX_DRAWN_CEILINGS:
            break
    return drawn


def _dims(dims: tuple[int, int, int] | None, total: float | None, what: str) -> str:
    """A launch dimension as x×y×z, or its total where the report holds only that (`launch__grid_size`)."""
    if dims:
        return "×".join(map(str, dims))
    return F.NA if total is None else f"{total:,.0f} {what}{'' if total == 1 else 's'}"


def launch_text(k: AnalysedKernel) -> str:
    """Grid, block, waves and achieved occupancy, as far as the report holds them."""
    facts = k.launch
    parts = []
    if facts.get("grid_blocks") is not None:
        blocks = facts["grid_blocks"]
        parts.append(f"{blocks:,.0f} block{'' if blocks == 1 else 's'}")
    if facts.get("block_threads") is not None:
        parts.append(f"{facts['block_threads']:,.0f} threads each")
    if facts.get("waves_per_sm") is not None:
        parts.append(f"{facts['waves_per_sm']:.3g} waves (a wave: the blocks all SMs hold at once)")
    if facts.get("achieved_occupancy") is not None:
        parts.append(f"achieved occupancy {F.pct(facts['achieved_occupancy'])}")
    return ", ".join(parts)


def _kernel_id(report_no: int, k: AnalysedKernel) -> str:
    return f"r{report_no}k{k.raw.index}"



def _points(kid: str, k: AnalysedKernel, label: str) -> list[dict[str, Any]]:
    flops = k.achieved_flop_per_s
    if flops is None or flops <= 0:
        return _bounded_points(kid, k, label)
    return [{"kernel_id": kid, "level": lv, "intensity": k.intensity[lv], "flop_per_s": flops,
             "bound_by": family(k.bound_by), "label": label}
            for lv in R.LEVELS if (k.intensity.get(lv) or 0.0) > 0]


def tensor_upper_bound(k: AnalysedKernel) -> float | None:
    """All FLOP, with tensor work only known as the pipe's busy share: share × the fastest dense
    tensor roof × duration, plus the CUDA-core FLOP. It can only be too high (the pipe's datapath
    may be slower than the fastest one), so it is an upper bound, drawn and said as such."""
    pipe, duration = k.q.tensor_pipe_utilization, k.q.duration_s
    dense = [v.value for dp, v in k.tensor_peaks.items() if "sparsity_on" not in dp]
    if "flop_incomplete" not in k.flags or pipe is None or duration is None or not dense:
        return None
    cuda_cores = sum(v.value for p, v in k.q.flop.items() if p != "tensor" and v is not None)
    return cuda_cores + pipe.value * max(dense) * duration.value


def _bounded_points(kid: str, k: AnalysedKernel, label: str) -> list[dict[str, Any]]:
    total = tensor_upper_bound(k)
    if total is None or k.q.duration_s is None:
        return []
    note = "upper bound: tensor FLOP = the tensor pipe's busy share × the fastest dense tensor roof"
    return [{"kernel_id": kid, "level": lv, "intensity": total / b.value, "flop_per_s": total / k.q.duration_s.value,
             "bound_by": family(k.bound_by), "label": label, "note": note, "upper_bound": True}
            for lv in R.LEVELS if (b := k.q.bytes.get(lv)) is not None and b.value > 0]


def _off_chart(k: AnalysedKernel) -> str | None:
    """Why the kernel has no marker on the chart (`wording.off_chart`), or None."""
    drawn = tensor_upper_bound(k) is not None and any(b is not None and b.value > 0 for b in k.q.bytes.values())
    return W.off_chart(k, drawn)


def _unit_share(k: AnalysedKernel, uid: str) -> float | None:
    unit = k.units.get(uid)
    return unit.share if unit is not None else None


def kernel_view(report_no: int, k: AnalysedKernel, d: dict[str, Any], total_s: float | None,
                 top_ids: set[str]) -> dict[str, Any]:
    """One kernel's row and section; `d` is its JSON-contract dict."""
    kid = _kernel_id(report_no, k)
    dur = d["duration_s"]
    share = (dur / total_s) if dur is not None and total_s else None
    findings = finding_views(k, share, d["diagnosis"])
    bound_u = k.limiter_share
    named = named_limit(k)
    own_roofs = device_roofs([d])
    levels = [lv for lv in R.LEVELS if k.intensity.get(lv) is not None]
    off = _off_chart(k)
    # `id`, the names and the chart's title are the group's (`groups.group_view`, the one caller, sets them)
    return {
        "report_no": report_no,
        "index": k.raw.index,
        "grid": _dims(k.raw.grid_size, k.launch.get("grid_blocks"), "block"),
        "block": _dims(k.raw.block_size, k.launch.get("block_threads"), "thread"),
        "nvtx": list(k.raw.nvtx_ranges),
        "device": k.raw.device or F.NA,
        "usable": k.usable,
        "duration_s": dur,
        "duration": F.seconds(dur),
        "share": share,
        "share_text": share_text(share),
        "achieved_flop_per_s": k.achieved_flop_per_s,
        "achieved": F.si(k.achieved_flop_per_s, "FLOP/s"),
        "intensity": {lv: k.intensity.get(lv) for lv in R.LEVELS},
        "intensity_text": {lv: F.ratio(k.intensity.get(lv)) for lv in R.LEVELS},
        "bound_by": k.bound_by,
        "bound_named": named,
        "bound_label": long_label(named, F.NA),
        "bound_short": short_label(named) if named else F.NA,
        "bound_css": roof_css(named),
        "bound_is_unit": is_unit(named),
        "bound_utilization": bound_u,
        "bound_utilization_text": F.pct(bound_u),
        "utilization": {r: k.utilization.get(r) for r in R.ROOFS},
        "utilization_text": {r: F.pct(k.utilization.get(r)) for r in R.ROOFS},
        "roof_unit_notes": roof_unit_notes(k),
        "regime": k.regime,
        "regime_text": regime_text(k),
        "launch_text": launch_text(k),
        "units": [{"id": uid, "label": u.label, "share": F.pct(u.share), "recipe": u.recipe,
                   "headline": u.parent is None, "busiest": uid == k.bound_by}
                  for uid, u in sorted(k.units.items(), key=lambda item: -item[1].share)[:MAX_UNITS_SHOWN]],
        "sol": {"sm": _unit_share(k, "sm_throughput"), "memory": _unit_share(k, "memory_throughput")},
        "flags": list(k.flags),
        "flag_texts": [flag_text(f, k.q.unusable_reason) for f in k.flags],
        "table_flags": table_flags(k.flags, k.q.unusable_reason),
        "top": kid in top_ids,
        "verdict": verdict(k),
        "next_step": next_step(findings),
        "numbers": quantity_rows(k),
        "missing": [dict(m, label=quantity_label(m["quantity"])) for m in d["missing"]],
        "off_chart_kind": off,
        "off_chart": W.OFF_CHART_TEXT[off] if off else None,
        "findings": findings,
        # The one worth most (the first, which names the limiter, where none projects a gain), as the CSV's.
        "top_finding": top_finding(findings),
        "ceilings": [dict(c.to_dict(), label=CEILING_LABELS.get(c.kind, c.kind)) for c in k.ceilings],
        "rules": [dict(r, speedup_text=f"est. {r['speedup_pct']:.0f} % ({r['speedup_kind'] or 'speed-up'})"
                       if r["speedup_pct"] is not None else "") for r in d["nsight_compute_rules"]
                  if (r["message"] and r["severity"] != "info") or r["speedup_pct"] is not None][:MAX_RULES_SHOWN],
        "rules_comparison": d["rules_comparison"],
        "not_applicable": [dict(n.to_dict(), label=CEILING_LABELS.get(n.kind, n.kind)) for n in k.not_applicable],
        "precision_options": [dict(o, peak_text=F.si(o["peak_flop_per_s"], "FLOP/s"),
                                   in_use_peak_text=F.si(o["in_use_peak_flop_per_s"], "FLOP/s"))
                              for o in k.precision_options],
        "reuse": dict(k.reuse),
        "chart": {
            "roofs": own_roofs,
            "ceilings": _chart_ceilings(k, own_roofs),
            "points": _points(kid, k, F.short_name(k.raw.name, 80)),
            "levels": levels,
        },
    }


def _sol_chart(device: str, items: list[tuple[dict[str, Any], AnalysedKernel]]) -> dict[str, Any] | None:
    """Every kernel of one device at its SM and memory throughput (Nsight Compute's own figures)."""
    points = []
    missing = 0
    for v, k in items:
        sm, memory = v["sol"]["sm"], v["sol"]["memory"]
        if sm is None or memory is None:
            missing += 1 if k.usable else 0
            continue
        fam = family(named_limit(k))
        points.append({"kernel_id": v["id"], "sm": sm, "memory": memory, "family": fam,
                       "hollow": k.regime == T.TOO_LITTLE_WORK, "label": v["short_name"],
                       # the legend names the limits beside their colour, as the table's badge does
                       "bound_label": v["bound_short"]})
    if not points:
        return None
    return {"device": device, "title": f"{device}: Speed Of Light", "points": points,
            "missing": W.count(missing, "kernel") if missing else ""}


def _instruction_chart(device: str, items: list[tuple[dict[str, Any], AnalysedKernel]]) -> dict[str, Any] | None:
    """The Instruction Roofline of one device's kernels, where the report has the metrics."""
    from ..passes.instruction_roofline import WALLS

    points: list[dict[str, Any]] = []
    issue, l1 = [], []
    for v, k in items:
        ir = k.instruction_roofline
        if not ir:
            continue
        if "issue_peak_warp_inst_per_s" in ir:
            issue.append(ir["issue_peak_warp_inst_per_s"])
        if "l1_transactions_per_s_peak" in ir:
            l1.append(ir["l1_transactions_per_s_peak"])
        for space in ("global", "shared"):
            if space in ir:
                # height: that space's load/store instructions per second (what its x counts), so that the
                # point sits under intensity × the transaction peak
                points.append({"kernel_id": v["id"], "level": space, "intensity": ir[space]["inst_per_transaction"],
                               "flop_per_s": ir[space]["inst_per_s"], "bound_by": v["bound_by"],
                               "label": v["short_name"]})
    if not points:
        return None
    roofs = []
    if issue:
        value = statistics.median(issue)
        roofs.append({"name": "issue", "kind": "compute", "value": value,
                      "label": f"issue {F.si(value, 'warp inst/s')}"})
    if l1:
        value = statistics.median(l1)
        roofs.append({"name": "l1", "kind": "bandwidth", "value": value,
                      "label": f"L1 {F.si(value, 'sectors/s')}"})
    return {"device": device, "title": f"{device}: Instruction Roofline", "roofs": roofs, "points": points,
            "walls": [list(w) for w in WALLS]}


def findings_note(analysis: Analysis, names: list[str]) -> str:
    """Where the reports of many launches have their findings from (`FINDINGS_BY_GROUP`); "" where every launch
    has its own."""
    by_group = [(names[i], r.focus.total_launches if r.focus is not None else r.launch_count)  # the file's, all
                for i, r in enumerate(analysis.reports) if r.findings == FINDINGS_BY_GROUP]
    if not by_group:
        return ""
    one = len(by_group) == 1
    return page_words("findings_by_group", {"reports": by_group[0][0] if one else None,
                                            "launches": by_group[0][1] if one else None,
                                            "count": None if one else len(by_group), "limit": LAUNCH_FINDINGS_UP_TO})


def build_report_view(analysis: Analysis, redact: bool = False) -> dict[str, Any]:
    """Everything the HTML page and the Markdown summary show: one row and section per kernel group."""
    part = page_groups(analysis, kernel_view, redact)
    seen = PageLaunches(analysis)
    groups = part["groups"]
    by_id = {v["id"]: v for v in groups}
    by_device: dict[str, list[tuple[dict[str, Any], AnalysedKernel]]] = {d: [] for d in seen.devices}
    for v, g in part["pairs"][:MAX_CHART_GROUPS]:
        by_device.setdefault(g.longest.raw.device or "unknown device", []).append((v, g.summary))
    devices = [{"name": device, "compute_capability": first.compute_capability, "sm_count": first.sm_count}
               for device, (_, first) in seen.devices.items()]
    charts = []
    sol_charts: list[dict[str, Any]] = []
    instruction_charts: list[dict[str, Any]] = []
    for device, items in by_device.items():
        sol = _sol_chart(device, items)
        charts.append({
            "device": device, "title": f"{device}: hierarchical roofline",
            "roofs": seen.roofs[device].roofs() if device in seen.roofs else [],
            "points": [p for v, _ in items for p in v["chart"]["points"]],
            "off_chart": W.off_chart_notes([(v["short_name"], v["off_chart_kind"]) for v, _ in items
                                            if v["off_chart_kind"]], W.OFF_CHART_TEXT),
            "banner": W.chart_banner(Counter(v["off_chart_kind"] for v, _ in items if v["off_chart_kind"]),
                                     sol is not None),
        })
        if sol:
            sol_charts.append(size_points(sol, by_id))
        instruction = _instruction_chart(device, items)
        if instruction:
            instruction_charts.append(size_points(instruction, by_id))

    inputs = [os.path.basename(r.path) if redact else r.path for r in analysis.reports]
    names = W.report_names([r.path for r in analysis.reports], redact)
    for v in groups:
        v["report_name"], v["report_path"] = names[v["report_no"]], inputs[v["report_no"]]
    part["launch_data"]["reports"] = names
    definitions = []
    for lv, found in zip(R.LEVELS, seen.definitions, strict=True):
        used = sorted(found)
        definitions.append(f"{short_label(lv)}: " + (", ".join(used) if used else "no byte counts in the report"))
    header = Header(
        title=W.page_title([r.path for r in analysis.reports]),
        devices=devices,
        ncu_versions=sorted({r.ncu_version or "not recorded in the file" for r in analysis.reports}),
        kernel_count=seen.count,
        group_count=part["group_count"],
        grouping=GROUPING_TEXT[analysis.settings.group_by],
        unusable_count=seen.unusable,
        total_gpu_time=F.seconds(part["page_total"]),
        shown_gpu_time=F.seconds(seen.time),
        focus=part["focus"],
        inputs=inputs,
        flop_convention=dict(R.FLOP_CONVENTION),
        byte_definitions=definitions,
        threshold=analysis.settings.threshold,
        threshold_text=F.pct(analysis.settings.threshold),
        regime_rules={regime_label(r): rule for r, rule in T.REGIME_RULES.items()},
        peaks_file=analysis.settings.to_dict(redact)["peaks_file"],
        tool_version=__version__,
        created=created_at(),
        redacted=redact,
        findings_note=findings_note(analysis, names),
    )
    levels_present = [lv for lv in R.LEVELS if any(v["intensity"][lv] is not None for v in groups)]
    return {
        "header": header,
        "verdict": verdict_block(groups, header, part["page_total"]),
        "levels_present": levels_present,
        "multi_report": len(analysis.reports) > 1,
        "charts": charts,
        "instruction_charts": instruction_charts,
        "sol_charts": sol_charts,
        "bound_mix_view": bound_mix(groups, part["page_total"]),
        "groups": groups,
        "sections": part["sections"],
        "budget": part["budget"],
        "nvtx": part["nvtx"],
        "nvtx_omitted": part["nvtx_omitted"],
        "launch_data": part["launch_data"],
        "top": groups[:TOP_N],
        "collapse_sections": len(part["sections"]) > 8,
        "errors": [{"path": os.path.basename(e.path) if redact else e.path, "message": e.message}
                   for e in analysis.errors],
        "warnings": [{"path": inputs[i], "message": w} for i, r in enumerate(analysis.reports) for w in r.warnings],
        "levels": list(R.LEVELS),
        "roofs": list(R.ROOFS),
    }
