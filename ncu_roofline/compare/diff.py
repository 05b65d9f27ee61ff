"""Diff of two runs: groups matched in passes, compared by median with a stated noise rule, and a gate.

Runs are loaded by `compare.runs` (report files, JSON documents, batch folders). Repeated
launches become groups (`compare.groups`: same name, grid, block and NVTX ranges), and groups
are paired by `compare.matching` (exact, same function, generated name, user map; each pair
says which). Ambiguous candidates are listed, never paired by guess.

Per pair: the medians and totals of the durations, the launches on each side, the noise verdict
(`compare.noise`: Mann–Whitney U where both sides repeat, floors for single launches), the
median work counters, the work and the time per unit of work (`compare.work`: a problem size that
changed is named, and its time judged per unit of work), the limiter, utilisation, intensity and
findings of the representative launches (`compare.changes`), and the causes: the findings that
appeared or went away, the likely one first (`compare.causes`). Coverage is the share of BASE GPU time in
compared groups. The gate is `compare.gate`; the environment check `compare.environment`.

No file is written and nothing is printed here; the CLI does that (and words the messages).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..api.jsondoc import dumps
from ..settings import AnalysisSettings
from ..version import __version__
from .causes import causes
from .changes import delta, kernel_change, kernel_side, ratio, relative_pct
from .environment import environment
from .gate import GateOptions, evaluate_gate, parse_metric_gate
from .groups import Group, group_launches, reports_by_name
from .matching import Ambiguity, Pair, display_name, match_kernels
from .names import MatchRule
from .noise import DEFAULT_MIN_DELTA_S, DEFAULT_MIN_DURATION_S, FLOOR, TEST, classify
from .runs import Run, load_run
from .work import head_s_at_base_work, per_unit_verdict, work_of

SCHEMA = "ncu-roofline-diff/2"
VERDICTS = ("improved", "regressed", "unchanged", "unknown")
__all__ = ["DEFAULT_MIN_DELTA_S", "DEFAULT_MIN_DURATION_S", "SCHEMA", "Diff", "GateOptions", "compare",
           "diff_runs", "kernel_side", "relative_pct"]


# --------------------------------------------------------------------------------------------
# One group, one pair


def group_side(g: Group) -> dict[str, Any]:
    """What the diff keeps of a group: its representative launch, its timing, its positions."""
    side = kernel_side(g.representative)
    timing = g.timing()
    side.update(timing, duration_s=timing["median_s"], _position=g.positions[0], positions=list(g.positions))
    return side


def _counters_change(b: Group, h: Group) -> dict[str, dict[str, float | None]]:
    cb, ch = b.counters(), h.counters()
    return {name: {"base": cb[name], "head": ch[name], "delta_pct": relative_pct(cb[name], ch[name])}
            for name in cb if cb[name] is not None or ch[name] is not None}


def group_change(b: Group, h: Group, pair: Pair, options: GateOptions) -> dict[str, Any]:
    """Everything that changed between a BASE group and its HEAD partner."""
    base, head = group_side(b), group_side(h)
    db, dh = base["median_s"], head["median_s"]
    impact = delta(db, dh)
    noise = classify(b.durations, h.durations, alpha=options.alpha, min_effect_pct=options.min_effect_pct,
                     min_duration_s=options.min_duration_s, min_delta_s=options.min_delta_s)
    counters = _counters_change(b, h)
    change = kernel_change(base, head, b.findings_data, h.findings_data)
    work = work_of(counters, base["utilization"], (db, dh), change["findings"])
    verdict = per_unit_verdict(noise["verdict"], work, options.min_effect_pct)
    return {
        "name": display_name(b.data),
        "head_name": display_name(h.data),
        "base": base,
        "head": head,
        "match": pair.match,
        "rule": pair.rule,
        "launch_config_changed": pair.launch_config_changed,
        "nvtx_changed": pair.nvtx_changed,
        "name_changed": pair.name_changed,
        "launches": {"base": base["launches"], "head": head["launches"]},
        "duration": {"base_s": db, "head_s": dh, "delta_s": impact, "delta_pct": relative_pct(db, dh),
                     "speedup": ratio(dh, db),
                     "impact_s": impact * head["timed_launches"] if impact is not None else None},
        "total": {"base_s": base["total_s"], "head_s": head["total_s"],
                  "delta_s": delta(base["total_s"], head["total_s"])},
        "noise": noise,
        "verdict": verdict,
        "compared": verdict != "unknown",
        "counters": counters,
        "work": work.to_dict(counters),
        "causes": causes(change["findings"], counters, base, head, impact),
        **change,
    }


_ENTRY_KEYS = ("report", "index", "name", "demangled_name", "device", "grid_size", "block_size", "nvtx_ranges",
               "duration_s", "launches", "total_s", "bound_by")


def group_entry(g: Group) -> dict[str, Any]:
    """What the diff keeps of a group without a partner: these keys of its `group_side`, in this order."""
    side = group_side(g)
    return {key: side[key] for key in _ENTRY_KEYS}


def _sort_key(change: dict[str, Any]) -> tuple[float, int, int]:
    impact = change["duration"]["impact_s"]
    return (-abs(impact) if impact is not None else math.inf, change["base"]["_position"],
            change["head"]["_position"])


# --------------------------------------------------------------------------------------------
# Matching groups, per report where runs hold several programs


@dataclass
class _Matched:
    pairs: list[tuple[Group, Group, Pair]] = field(default_factory=list)
    unmatched_base: list[Group] = field(default_factory=list)
    unmatched_head: list[Group] = field(default_factory=list)
    ambiguous: list[tuple[Ambiguity, list[Group], list[Group]]] = field(default_factory=list)


def _match_groups(base: Run, head: Run, rules: Sequence[MatchRule]) -> tuple[_Matched, bool]:
    by_report = reports_by_name(base, head)
    gb, gh = group_launches(base, by_report), group_launches(head, by_report)
    out = _Matched()
    for where in dict.fromkeys([g.report_group for g in gb] + [g.report_group for g in gh]):
        b = [g for g in gb if g.report_group == where]
        h = [g for g in gh if g.report_group == where]
        m = match_kernels([g.data for g in b], [g.data for g in h], rules)
        out.pairs += [(b[p.base], h[p.head], p) for p in m.pairs]
        in_doubt_b = {i for a in m.ambiguous for i in a.base}
        in_doubt_h = {j for a in m.ambiguous for j in a.head}
        out.unmatched_base += [b[i] for i in m.unmatched_base if i not in in_doubt_b]
        out.unmatched_head += [h[j] for j in m.unmatched_head if j not in in_doubt_h]
        out.ambiguous += [(a, [b[i] for i in a.base], [h[j] for j in a.head]) for a in m.ambiguous]
    return out, by_report


# --------------------------------------------------------------------------------------------
# Totals and coverage


def _sum(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _total(base_s: float | None, head_s: float | None, **extra: Any) -> dict[str, Any]:
    return {**extra, "base_s": base_s, "head_s": head_s, "delta_s": delta(base_s, head_s),
            "delta_pct": relative_pct(base_s, head_s)}


def _noise_free_head_s(c: dict[str, Any]) -> float | None:
    """A group's HEAD GPU time as the gate sums it: at BASE's time per launch when its repeats show no significant
    change; at BASE's work per launch (HEAD's time per unit of work) when its problem size changed, unless it
    finished sooner."""
    if c["noise"]["method"] == TEST and c["noise"]["verdict"] == "unchanged":
        return float(c["total"]["base_s"] / c["base"]["timed_launches"] * c["head"]["timed_launches"])
    return head_s_at_base_work(c["work"], c["total"]["head_s"])


def totals(compared: Sequence[dict[str, Any]], base: Run, head: Run) -> dict[str, Any]:
    """GPU time of the compared groups (all their launches) and of every kernel of each run.

    `compared.gated_*`: the compared total as the gate sees it, each group whose repeats show no
    significant change counted at BASE's GPU time per launch (its HEAD launch count kept):
    measured noise is not a regression of the total; each group whose problem size changed counted at
    BASE's work per launch, at HEAD's time per unit (or at its own time where that is less): another
    problem size is not a regression either.
    """
    base_s = _sum([c["total"]["base_s"] for c in compared])
    gated = _sum([_noise_free_head_s(c) for c in compared])
    return {
        "compared": _total(base_s, _sum([c["total"]["head_s"] for c in compared]), count=len(compared),
                           gated_head_s=gated, gated_delta_pct=relative_pct(base_s, gated)),
        "all": _total(base.total_duration_s, head.total_duration_s, base_count=len(base.kernels),
                      head_count=len(head.kernels)),
    }


def coverage(compared: Sequence[dict[str, Any]], base: Run, base_groups: int, options: GateOptions) -> dict[str, Any]:
    """The share of BASE GPU time in compared groups."""
    covered = _sum([c["total"]["base_s"] for c in compared]) or 0.0
    whole = base.total_duration_s
    share = covered / whole if whole else None
    return {"base_compared_s": covered, "base_total_s": whole, "share": share,
            "compared_groups": len(compared), "base_groups": base_groups,
            "min_pct": options.min_coverage_pct}


def counts(matched: Sequence[dict[str, Any]], m: _Matched) -> dict[str, int]:
    """Groups by verdict, with another problem size, new (only in HEAD), gone (only in BASE) and ambiguous (per
    side)."""
    out = {v: sum(1 for c in matched if c["verdict"] == v) for v in VERDICTS}
    out["size_changed"] = sum(1 for c in matched if c["work"]["size_changed"])
    out |= {"new": len(m.unmatched_head), "gone": len(m.unmatched_base),
            "ambiguous_base": sum(len(b) for _, b, _ in m.ambiguous),
            "ambiguous_head": sum(len(h) for _, _, h in m.ambiguous)}
    return out


# --------------------------------------------------------------------------------------------
# The whole comparison


@dataclass
class Diff:
    """BASE vs HEAD: matched groups (largest time change first), the rest, totals, coverage, gate."""

    base: Run
    head: Run
    matched: list[dict[str, Any]]
    unmatched_base: list[dict[str, Any]]
    unmatched_head: list[dict[str, Any]]
    totals: dict[str, Any]
    gate: dict[str, Any]
    ambiguous: list[dict[str, Any]] = field(default_factory=list)
    coverage: dict[str, Any] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    environment: dict[str, Any] = field(default_factory=dict)
    matching: dict[str, Any] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        """True when a gate was set and found a regression."""
        return bool(self.gate["status"] == "failed")

    @property
    def insufficient_coverage(self) -> bool:
        """True when a gate was set, found no regression, but compared too little to pass."""
        return bool(self.gate["status"] == "insufficient_coverage")

    def to_dict(self) -> dict[str, Any]:
        """The `ncu-roofline-diff/2` document as plain data."""
        return {
            "schema": SCHEMA,
            "generator": {"name": "ncu-roofline", "version": __version__},
            "base": self.base.summary(),
            "head": self.head.summary(),
            "matching": self.matching,
            "matched": [_public(c) for c in self.matched],
            "ambiguous": self.ambiguous,
            "unmatched_base": list(self.unmatched_base),
            "unmatched_head": list(self.unmatched_head),
            "counts": self.counts,
            "totals": self.totals,
            "coverage": self.coverage,
            "environment": self.environment,
            "gate": self.gate,
        }

    def to_json(self, indent: int | None = 1) -> str:
        """The `ncu-roofline-diff/2` document: sorted keys, no NaN, nothing time-dependent."""
        return dumps(self.to_dict(), indent)


def _public(change: dict[str, Any]) -> dict[str, Any]:
    """A change without the fields kept only for drawing (positions, peaks, work)."""
    hidden = {"_position", "positions", "peaks", "work_flop", "tensor_ops_by_datapath"}
    return {**change, "base": {k: v for k, v in change["base"].items() if k not in hidden},
            "head": {k: v for k, v in change["head"].items() if k not in hidden}}


def _matching_summary(by_report: bool, rules: Sequence[MatchRule], options: GateOptions) -> dict[str, Any]:
    return {"unit": "group of launches with the same name, grid, block and NVTX ranges",
            "passes": ["exact", "same function", "generated name", "user map"],
            "rules": [r.text for r in rules],
            "report_matching": "base name" if by_report else "one program",
            "noise": {"test": TEST, "floor": FLOOR, "alpha": options.alpha, "min_effect_pct": options.min_effect_pct,
                      "min_duration_s": options.min_duration_s, "min_delta_s": options.min_delta_s}}


def diff_runs(base: Run, head: Run, *, gate: GateOptions | None = None, rules: Sequence[MatchRule] = (),
              **gate_options: Any) -> Diff:
    """Group, match and compare the kernels of two runs; `gate_options` are `GateOptions` fields."""
    if "fail_on_metric" in gate_options:  # `dram_bytes:+10%` texts are taken too
        gate_options["fail_on_metric"] = tuple(parse_metric_gate(g) if isinstance(g, str) else g
                                               for g in gate_options["fail_on_metric"])
    options = replace(gate or GateOptions(), **gate_options)
    m, by_report = _match_groups(base, head, rules)
    matched = sorted((group_change(b, h, p, options) for b, h, p in m.pairs), key=_sort_key)
    compared = [c for c in matched if c["compared"]]
    total = totals(compared, base, head)
    cover = coverage(compared, base, len(group_launches(base, by_report)), options)
    ambiguous = [{"match": a.match, "name": a.name, "base": [group_entry(g) for g in gb],
                  "head": [group_entry(g) for g in gh]} for a, gb, gh in m.ambiguous]
    return Diff(base, head, matched, [group_entry(g) for g in m.unmatched_base],
                [group_entry(g) for g in m.unmatched_head], total, evaluate_gate(compared, total, cover, options),
                ambiguous, cover, counts(matched, m), environment(base, head),
                _matching_summary(by_report, rules, options))


def compare(base: str | Path, head: str | Path, *, settings: AnalysisSettings | None = None,
            gate: GateOptions | None = None, rules: Sequence[MatchRule] = (), **gate_options: Any) -> Diff:
    """Load both runs (see `load_run`) and diff them; raises `InputError` for unusable input."""
    return diff_runs(load_run(base, settings), load_run(head, settings), gate=gate, rules=rules, **gate_options)
