"""The diff's verdict as plain data: the gate, the coverage, the noise rule and the environment warnings.

`gate_view` is what the verdict line of the PR comment and the gate box of the page say;
`noise_rule` states how a change is called; `environment_warnings` words each difference of
`compare.environment`; `gate_message` is the standard-error text of a failed or uncovered gate.
"""

from __future__ import annotations

from typing import Any

from ..compare.diff import Diff
from ..compare.noise import FLOOR, TEST, TEST_NAME
from ..knowledge.diff_words import MEASURE_LABELS, MEASURE_UNITS, PER_UNIT, WORK
from ..knowledge.wording import Template, fill
from . import format as F

COUNTER_LABELS = MEASURE_LABELS
PEAK_LABELS = {"fp32_flop_per_s": ("FP32 peak", "FLOP/s", "SM clock"),
               "dram_bytes_per_s": ("DRAM peak", "B/s", "memory clock")}
TITLES = {"off": "No gate", "passed": "Gate passed", "failed": "Gate failed",
          "insufficient_coverage": "Gate not passed: too little compared"}
SHARED_PREFIXES = ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))  # for two figures shown side by side
SCOPE_NAMES = {"compared": "total GPU time of the compared groups", "all": "total GPU time of every kernel"}


def coverage_text(diff: Diff) -> str:
    """`87 % of BASE GPU time compared (12 of 14 groups; minimum 50 %)`."""
    c = diff.coverage
    return (f"{F.coverage_pct(c.get('share'))} of BASE GPU time compared ({c.get('compared_groups', 0)} of "
            f"{c.get('base_groups', 0)} BASE group{'s' if c.get('base_groups') != 1 else ''}; "
            f"minimum {c.get('min_pct', 0):g} %)")


def noise_rule(diff: Diff) -> str:
    """How a change is called, with how many groups each rule decided."""
    n = diff.matching.get("noise", {})
    methods = [c["noise"]["method"] for c in diff.matched]
    tested, floored = methods.count(TEST), methods.count(FLOOR)
    return (f"Groups of launches are compared by their median duration. Where both sides repeat, a change is "
            f"called by the {TEST_NAME} test at α = {n.get('alpha', 0.05):g} ({tested} group"
            f"{'s' if tested != 1 else ''}); with single launches, by floors, not a measured noise: at least "
            f"{F.seconds(n.get('min_duration_s'))} in BASE and a change of at least {F.seconds(n.get('min_delta_s'))} "
            f"({floored} group{'s' if floored != 1 else ''}). Changes within {n.get('min_effect_pct', 1.0):g} % "
            f"are unchanged.")


def evidence(noise: dict[str, Any]) -> str:
    """`p = 0.003` for the test, `floors` for single launches, `n/a` without a duration."""
    if noise["method"] == TEST and noise["p_value"] is not None:
        p = noise["p_value"]
        return f"p = {p:.2g}" if p >= 0.001 else "p < 0.001"
    return "floors" if noise["method"] == FLOOR else F.NA


def figure_pair(base: float | None, head: float | None, measure: str | None) -> tuple[str, str]:
    """Both sides of a measure: one SI prefix where the smaller is at least half of it ("2.15 G → 0.901 G"), else
    each its own ("10 MB → 5.18 GB"); grid blocks as counts, waves per SM to 3 digits."""
    unit = MEASURE_UNITS.get(measure or "", "")
    known = [abs(v) for v in (base, head) if v is not None and v != 0]
    scale, prefix = next(((s, p) for s, p in SHARED_PREFIXES if known and max(known) >= s), (1.0, ""))

    def one(v: float | None) -> str:
        if v is None:
            return F.NA
        if measure == "blocks":
            return f"{v:,.0f}"
        if measure == "waves":
            return f"{v:.3g}"
        if not known or min(known) < scale / 2:
            return F.si(v, unit).strip()
        return f"{v / scale:.3g} {prefix}{unit}"

    return one(base), one(head)


def measured(template: Template, measure: str | None, base: float | None, head: float | None,
              **more: str | None) -> str:
    """A template filled with a measure's label and both its sides (`figure_pair`), and any `more` figures."""
    b, h = figure_pair(base, head, measure) if measure else (None, None)
    return fill(template, {"measure": MEASURE_LABELS.get(measure or "") if measure else None,
                           "base": b if base is not None else None, "head": h if head is not None else None, **more})


def per_unit_text(work: dict[str, Any]) -> str:
    """`159 µs → 9.82 ms per GFLOP (+6090.4 %)`; empty without a time per unit on both sides."""
    pu = work["per_unit"]
    if not work["unit"] or pu["base_s"] is None or pu["head_s"] is None:
        return ""
    return fill(PER_UNIT, {"base": F.seconds(pu["base_s"]), "head": F.seconds(pu["head_s"]), "unit": work["unit"],
                           "pct": F.signed_pct(pu["delta_pct"])})


def _regression_view(r: dict[str, Any]) -> dict[str, Any]:
    if r["scope"] == "metric":
        label = COUNTER_LABELS.get(r["metric"], r["metric"])
        return {"scope": "metric", "name": r["name"], "short_name": F.short_name(r["name"]),
                "what": f"{label} {F.signed_pct(r['delta_pct'])}", "base": F.si(r["base"], ""),
                "head": F.si(r["head"], ""), "pct": F.signed_pct(r["delta_pct"]), "evidence": r["rule"]}
    view = {"scope": r["scope"], "name": SCOPE_NAMES.get(r["scope"], r["name"]), "base": F.seconds(r["base_s"]),
            "head": F.seconds(r["head_s"]), "pct": F.signed_pct(r["delta_pct"]), "evidence": ""}
    if r["scope"] == "group":
        view |= {"name": r["name"], "evidence": evidence({"method": r["method"], "p_value": r["p_value"]})}
    view["short_name"] = F.short_name(view["name"])
    view["what"] = f"{view['base']} → {view['head']} ({view['pct']})"
    work = r.get("work")
    if work:  # a problem size that changed: judged per unit of work
        view["pct"] = f"{F.signed_pct(work['per_unit']['delta_pct'])} per {work['unit']}"
        view["what"] = per_unit_text(work) + "; " + measured(WORK["size"], work["measure"], work["base"], work["head"])
    return view


def failed_counts(regressions: list[dict[str, Any]]) -> str:
    """"1 kernel regressed, and 2 totals": kernels (a group, a counter of a group) and totals counted apart."""
    kernels = len({r["name"] for r in regressions if r["scope"] in ("group", "metric")})
    totals = sum(1 for r in regressions if r["scope"] not in ("group", "metric"))
    parts = [f"{kernels} kernel{'s' if kernels != 1 else ''} regressed"] if kernels else []
    if totals:
        parts.append(f"{totals} total{'s' if totals != 1 else ''} over {'their' if totals != 1 else 'its'} limit")
    return ", and ".join(parts) or "the gate failed"


def _limits(gate: dict[str, Any], size_changed: bool = False) -> list[str]:
    """What makes the gate fail, as the ends of a sentence ("… where a compared group, or their total, is more
    than 5 % slower"); `size_changed`: some group is judged per unit of work."""
    limits = []
    if gate["threshold_pct"] is not None:
        per_unit = ", per unit of work where the problem size changed" if size_changed else ""
        limits.append(f"a compared group, or their total, is more than {gate['threshold_pct']:g} % slower{per_unit}")
    if gate["total_threshold_pct"] is not None:
        limits.append(f"total GPU time rises more than {gate['total_threshold_pct']:g} %")
    for g in gate["metric_gates"]:
        label = COUNTER_LABELS.get(g["metric"], g["metric"])
        limits.append(f"a group's {label} goes {'up' if g['direction'] == '+' else 'down'} by more than {g['pct']:g} %")
    return limits or ["the coverage is under its minimum"]


def _checks(gate: dict[str, Any]) -> list[str]:
    """What the gate checked, as the ends of a sentence."""
    checks = []
    if gate["threshold_pct"] is not None:
        checks.append(f"no compared group, nor their total, more than {gate['threshold_pct']:g} % slower")
    if gate["total_threshold_pct"] is not None:
        checks.append(f"total GPU time within +{gate['total_threshold_pct']:g} %")
    for g in gate["metric_gates"]:
        label = COUNTER_LABELS.get(g["metric"], g["metric"])
        checks.append(f"no group's {label} {'up' if g['direction'] == '+' else 'down'} by more than {g['pct']:g} %")
    return checks


def gate_view(diff: Diff) -> dict[str, Any]:
    """The verdict: status, title, one-sentence summary, the regressions, what to do about coverage."""
    gate, status = diff.gate, diff.gate["status"]
    regressions = [_regression_view(r) for r in gate["regressions"]]
    share = F.coverage_pct(diff.coverage.get("share"))
    minimum = f"{gate['min_coverage_pct']:g} %"
    view: dict[str, Any] = {"status": status, "title": TITLES[status], "coverage": coverage_text(diff),
                            "regressions": regressions, "rule": "", "hint": "", "summary": ""}
    checks = _checks(gate)
    if status == "off":
        view["summary"] = (f"{share} of BASE GPU time compared; set a gate with --fail-on-regression PCT, "
                           "--fail-on-total PCT or --fail-on-metric NAME:+PCT%.")
        return view
    view["rule"] = ("" if status == "passed" else
                    "The gate fails where " + "; or where ".join(_limits(gate, bool(diff.counts.get("size_changed"))))
                    + ".")
    if status == "failed":
        view["summary"] = f"{failed_counts(gate['regressions'])} ({share} of BASE GPU time compared):"
    elif status == "insufficient_coverage":
        view["summary"] = (f"only {share} of BASE GPU time was compared (minimum {minimum}), so a pass would say "
                           "nothing about the rest; nothing that was compared regressed.")
        view["hint"] = ("Pair renamed kernels with --match 'BASE_REGEX=HEAD_REGEX' (or --match-file), lower "
                        "--min-coverage, or accept the gap with --allow-unmatched.")
    elif gate["coverage_ok"] is False:
        view["summary"] = (f"{'; '.join(checks)}; only {share} of BASE GPU time compared, under the minimum "
                           f"{minimum}, accepted by --allow-unmatched.")
    else:
        view["summary"] = f"{'; '.join(checks)}; {share} of BASE GPU time compared."
    return view


def environment_warnings(diff: Diff) -> list[str]:
    """One sentence per environment difference between BASE and HEAD."""
    out = []
    for d in diff.environment.get("differences", []):
        what = d["what"]
        if what == "gpu":
            out.append(f"GPU differs: BASE {', '.join(d['base'])}; HEAD {', '.join(d['head'])}.")
        elif what == "clocks":
            label, unit, clock = PEAK_LABELS.get(d["peak"], (d["peak"], "", "clock"))
            out.append(f"Clocks differ on {d['device']}: the {label}, from the {clock} measured during the capture, "
                       f"is {F.si(d['base'], unit)} in BASE and {F.si(d['head'], unit)} in HEAD "
                       f"({F.signed_pct(d['delta_pct'])}); durations compare only at the same clocks "
                       "(ncu --clock-control base).")
        elif what == "ncu_version":
            out.append(f"Nsight Compute differs: BASE {', '.join(d['base'])}; HEAD {', '.join(d['head'])}.")
        elif what == "source_format":
            out.append(f"Source formats differ: BASE {', '.join(d['base'])}; HEAD {', '.join(d['head'])} "
                       "(a CSV export holds no NVTX ranges and no version).")
    return out


def gate_message(diff: Diff) -> str:
    """A failed or uncovered gate for standard error: a heading, then one line per regression."""
    view = gate_view(diff)
    if diff.gate["status"] == "insufficient_coverage":
        return f"gate not passed: {view['summary']} {view['hint']}"
    lines = [f"gate failed: {view['summary'].rstrip(':')}:"]
    for r in view["regressions"]:
        what = r["what"] if r["scope"] == "metric" else f"{r['base']} -> {r['head']} ({r['pct']})"
        lines.append(f"  {r['name']}: {what}" + (f" [{r['evidence']}]" if r["evidence"] else ""))
    return "\n".join(lines)
