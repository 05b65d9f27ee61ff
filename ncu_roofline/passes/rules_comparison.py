"""Nsight Compute's own rule results beside the findings, as data: does its largest estimated speed-up speak of one
of the findings, and where its Bottleneck rule reads a latency issue while the verdict is at a limit, what the
verdict rests on (`compare_with_rules`: a `RulesComparison` of `RuleNote`s, each a `Relation` and its figures; their
words are `knowledge.rules_words`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..knowledge import recipes as R
from ..knowledge import throughputs as T
from ..knowledge.rules_words import Relation, sentence
from ..knowledge.wording import Figure
from .diagnosis import HIGH_THROUGHPUT
from .finding import Finding

__all__ = ["RULE_KINDS", "Relation", "RuleNote", "RulesComparison", "compare_with_rules", "rule_kinds", "rules_fields"]

# Nsight Compute rule (and title, where one rule id carries several findings) -> the findings of
# this tool that speak of the same thing: a kind ("latency"), a kind about one unit
# ("unit_throughput:sm__issue_active"), or about any unit or roof of a group
# ("unit_throughput@memory", "at_limit@memory"). A busy unit agrees only with the rules about it.
_ISSUE_UNITS = ("unit_throughput:sm__issue_active", "unit_throughput:sm__inst_executed")
_MEMORY = ("unit_throughput@memory", "at_limit@memory")
_LSU = ("unit_throughput:sm__inst_executed_pipe_lsu", "unit_throughput:l1tex__lsuin_requests")
# A latency finding that names idle SMs first (no warp for much of the run) agrees with the rules about the
# launch and its balance too, beside those about its active cycles (occupancy, stalls).
_IDLE = "latency:idle_sms"
# A limit at the threshold short of high use: the rest of its peak is for more warps or instructions in flight, what
# the occupancy and issue-slot rules speak of (not Low Utilization, nor a stall that may be a throttled pipe).
_SHORT = "latency:short_of_peak"
RULE_KINDS: dict[tuple[str, str | None], frozenset[str]] = {
    # An access pattern's cause is the sectors its requests touch: a finding about them, not any memory limit.
    ("UncoalescedGlobalAccess", None): frozenset({"sector_use", "coalescing"}),
    ("MemoryCacheAccessPattern", None): frozenset({"sector_use", "coalescing"}),
    ("UncoalescedSharedAccess", None): frozenset({"bank_conflicts", "unit_throughput:l1tex__data_pipe_lsu_wavefronts",
                                                 "unit_throughput:l1tex__data_bank_reads",
                                                 "unit_throughput:l1tex__data_bank_writes"}),
    ("IssueSlotUtilization", None): frozenset({"latency", _SHORT, "issue_share", *_ISSUE_UNITS}),
    ("CPIStall", "Lg Throttle Stalls"): frozenset({"latency", "coalescing", "sector_use", *_LSU}),
    ("CPIStall", "Long Scoreboard Stalls"): frozenset({"latency", "reuse", "coalescing", "sector_use", *_MEMORY}),
    ("CPIStall", None): frozenset({"latency"}),
    ("CPIStallLongScoreboard", None): frozenset({"latency", "reuse", "coalescing", "sector_use", *_MEMORY}),
    ("AchievedOccupancy", None): frozenset({"latency", _SHORT, "too_little_work"}),
    ("TheoreticalOccupancy", None): frozenset({"latency", _SHORT}),
    ("Occupancy", None): frozenset({"latency", _SHORT}),
    ("LaunchConfiguration", "Tail Effect"): frozenset({"tail_effect"}),
    ("LaunchConfiguration", "Small Grid"): frozenset({"too_little_work", _IDLE}),
    ("LaunchConfiguration", None): frozenset({"too_little_work", "tail_effect", _IDLE}),
    ("WorkloadImbalance", None): frozenset({"too_little_work", "latency", "tail_effect", _IDLE}),
    ("FPInstructions", None): frozenset({"fma_balance"}),
    ("ThreadDivergence", None): frozenset({"lane_efficiency"}),
    # "Low Utilization": every pipe under-used, too few warps issue: the opposite of a busy pipe.
    ("HighPipeUtilization", "Low Utilization"): frozenset({"latency", "too_little_work", _IDLE}),
    ("HighPipeUtilization", None): frozenset({"unit_throughput@compute", "at_limit@compute"}),
}


# Rule results that speak of none of this tool's findings ("Balanced": no pipe stands out).
_UNMAPPED = frozenset({("HighPipeUtilization", "balanced")})


def _title_key(title: str | None) -> str:
    """A rule title as releases write it, compared alike: "Long Scoreboard Stalls" and (older releases)
    "long_scoreboard" are one title."""
    words = (title or "").lower().replace("_", " ").split()
    return " ".join(w for w in words if w != "stalls")


_RULE_TITLES = {(rule, _title_key(title)): kinds for (rule, title), kinds in RULE_KINDS.items() if title}


def _rule_key(rule: str, title: str | None, message: str | None = None) -> tuple[str, str]:
    """(rule, title) as compared: titles alike across releases (`_title_key`); releases before titles (2020.3) wrote
    HighPipeUtilization's "All pipelines are under-utilized" untitled, and its message tells it from a busy pipe."""
    if rule == _LOW_UTILIZATION[0] and not title and "under-utilized" in (message or ""):
        title = _LOW_UTILIZATION[1]
    return rule, _title_key(title)


def rule_kinds(rule: str, title: str | None, message: str | None = None) -> frozenset[str] | None:
    """The findings an Nsight Compute rule result speaks of (None for a rule this tool does not map)."""
    key = _rule_key(rule, title, message)
    if key in _UNMAPPED:
        return None
    return _RULE_TITLES.get(key) or RULE_KINDS.get((rule, None))



def _short_of_peak(f: Finding) -> float | None:
    """How far a limit at its limit but short of what Nsight Compute calls high use is from its own peak (the
    rest of it is for more work in flight: `_SHORT`), else None."""
    left = f.figures.get("left")
    short = f.kind in ("at_limit", "unit_throughput") and f.variant == "short" and isinstance(left, float)
    return left if short else None  # type: ignore[return-value]


def _tokens(f: Finding) -> set[str]:
    """A finding as `RULE_KINDS` names it: its kind, the kind with its unit, the kind with its group; a latency
    finding that names idle SMs first, `_IDLE` too; a limit short of high use, `_SHORT` too (`_SHORT_OF_PEAK`)."""
    found: set[str] = {f.kind.value}
    if _short_of_peak(f) is not None:
        found.add(_SHORT)
    if f.kind == "latency" and f.variant == "idle":
        found.add(_IDLE)  # and its active cycles' occupancy: the latency's own rules agree too
    if f.roof:
        kind = f.kind.value
        found.add(f"{kind}:{f.roof}")
        if f.roof in R.LEVELS:
            found.add(f"{kind}@memory")
        elif f.roof in R.ROOFS:
            found.add(f"{kind}@compute")
        elif f.roof in T.BY_ID:
            found.add(f"{kind}@{T.BY_ID[f.roof].group}")
    return found


_LOW_UTILIZATION = ("HighPipeUtilization", "Low Utilization")
_AT_LIMIT_HEADS = ("at_limit", "unit_throughput")
# The rules whose estimate is for more warps or instructions in flight (not the stall rules: a stall may be a
# throttled pipe, Math Pipe Throttle, MIO Throttle).
_HIDING_LATENCY = frozenset({"AchievedOccupancy", "TheoreticalOccupancy", "Occupancy", "IssueSlotUtilization"})
# The too-little-work findings of a grid under one wave (`passes.too_little_work`): more blocks first.
_UNDER_ONE_WAVE = frozenset({"few_blocks", "under_wave"})


def _at_memory_limit(f: Finding) -> bool:
    """A finding that the kernel presses against a memory roof or a memory unit."""
    tokens = _tokens(f)
    return f.kind in ("at_limit", "unit_throughput") and bool(tokens & {"at_limit@memory", "unit_throughput@memory"})


def _limit_label(f: Finding) -> Figure:
    """The limit a finding at a roof or a busy unit names ("DRAM", "issue slots"), else None."""
    return f.figures.get("limit") if f.kind == "at_limit" else f.figures.get("unit") if f.kind == "unit_throughput" \
        else None


def _lead(f: Finding) -> dict[str, Figure]:
    """What the verdict leads with: the first finding's kind and variant, and the limit it names where it names one."""
    return {"lead_kind": f.kind.value, "lead_variant": f.variant, "lead_limit": _limit_label(f)}


def _elsewhere(top: dict[str, Any], kinds: frozenset[str], findings: list[Finding],
               set_aside: list[Any], share: float | None = None) -> RuleNote:
    """An estimate that speaks of none of the findings: a ceiling of that kind set aside (with its reason), idle
    compute pipes at a memory limit, hiding latency at a limit past high use (`share`, the limiter's) or before the
    launch fills the GPU, else one the findings do not rank."""
    what = top.get("title") or top.get("name") or top.get("rule")
    lead = _lead(findings[0])
    title = str(what).upper()
    # the one of the level the rule's title names first (L1TEX Global Load Access Pattern: coalescing, at L1)
    aside = min((n for n in set_aside if n.kind in kinds),
                key=lambda n: not any(level.upper() in title for level in n.roof.split("/")), default=None)
    if aside is not None:
        return _note(top, Relation.SET_ASIDE, aside_kind=aside.kind, aside_roof=aside.roof, reason=aside.reason,
                     **lead)
    key = _rule_key(str(top.get("rule")), top.get("title"), top.get("message"))
    if key == _rule_key(*_LOW_UTILIZATION) and _at_memory_limit(findings[0]):
        return _note(top, Relation.IDLE_PIPES_EXPECTED, **lead)
    hiding = key[0] in _HIDING_LATENCY
    if hiding and findings[0].kind == "too_little_work" and findings[0].variant in _UNDER_ONE_WAVE:
        return _note(top, Relation.MORE_BLOCKS_FIRST, **lead)
    if hiding and share is not None and share >= HIGH_THROUGHPUT and findings[0].kind in _AT_LIMIT_HEADS:
        return _note(top, Relation.PAST_HIGH_USE, share=share, left=1.0 / share, **lead)
    return _note(top, Relation.NOT_RANKED, **lead)


@dataclass(frozen=True, slots=True)
class RuleNote:
    """One rule result of Nsight Compute beside the findings: the rule, its title as shown, its estimated speed-up
    (% of the run, None for a rule without one), how it stands to the findings, and the figures that say why."""

    relation: Relation
    rule: str
    title: str
    speedup_pct: float | None
    figures: Mapping[str, Figure | bool] = field(default_factory=dict)

    def text(self) -> str:
        return sentence(self.relation, {"what": self.title, "speedup_pct": self.speedup_pct, **self.figures})

    def to_dict(self) -> dict[str, Any]:
        return {"relation": self.relation.value, "rule": self.rule, "title": self.title,
                "speedup_pct": self.speedup_pct, "figures": dict(self.figures)}


@dataclass(frozen=True, slots=True)
class RulesComparison:
    """Nsight Compute's rules beside the findings: its largest estimated speed-up (`estimate`, where that rule maps
    to findings at all) and its Bottleneck rule's latency issue against a verdict at a limit (`bottleneck`)."""

    estimate: RuleNote | None = None
    bottleneck: RuleNote | None = None

    def notes(self) -> list[RuleNote]:
        return [n for n in (self.estimate, self.bottleneck) if n is not None]

    def text(self) -> str:
        """The sentences (the JSON's `rules_comparison`; empty where there is nothing to say)."""
        return " ".join(n.text() for n in self.notes())

    def to_dict(self) -> dict[str, Any]:
        """The JSON's `rules_relation`: both keys always, None where that rule says nothing here."""
        return {"estimate": None if self.estimate is None else self.estimate.to_dict(),
                "bottleneck": None if self.bottleneck is None else self.bottleneck.to_dict()}


def _note(top: dict[str, Any], relation: Relation, **figures: Figure | bool) -> RuleNote:
    what = top.get("title") or top.get("name") or top.get("rule")
    return RuleNote(relation, str(top.get("rule")), str(what), top["speedup_pct"], figures)


def compare_with_rules(findings: list[Finding], rules: list[dict[str, Any]], regime: str | None = None,
                       set_aside: list[Any] | None = None, share: float | None = None) -> RulesComparison:
    """Where Nsight Compute's largest estimated speed-up stands to the findings (agrees with one, or points
    elsewhere: and what became of its cause where that ceiling was set aside: `set_aside`, the kernel's
    not-applicable ceilings); and where its Bottleneck rule reads a latency issue off its two headline figures
    while the verdict is at a limit (a unit of the same Speed Of Light section above the threshold), what the
    verdict rests on."""
    estimate = None
    estimated = [r for r in rules if r.get("speedup_pct") is not None and r["speedup_pct"] > 0]
    kinds = None
    if estimated and findings:
        top = max(estimated, key=lambda r: r["speedup_pct"])
        kinds = rule_kinds(str(top.get("rule")), top.get("title"), top.get("message"))
    if kinds is not None:
        ours = set().union(*(_tokens(f) for f in findings))
        if ours & kinds:
            # Its estimate and this bound measure different things (Tail Effect: the partial wave's share
            # of the run; this: the most the kernel can gain): both are stated.
            matching = [f for f in findings if _tokens(f) & kinds]
            match = next((f for f in matching if f.speedup), None)
            figures: dict[str, Figure | bool] = {"match_kind": (match or matching[0]).kind.value}
            if match is not None and match.speedup:
                saved = 1.0 - 1.0 / match.speedup
                figures |= {"bound": match.speedup, "saved": saved,
                            "below_estimate": saved < 0.5 * top["speedup_pct"] / 100.0}
            elif (short := next((f for f in matching if _short_of_peak(f) is not None), None)) is not None:
                figures |= {"left": _short_of_peak(short), "match_limit": _limit_label(short)}
            estimate = _note(top, Relation.AGREES, **figures)
        else:
            estimate = _elsewhere(top, kinds, findings, set_aside or [], share if regime == T.AT_LIMIT else None)
    bottleneck = None
    solb = next((r for r in rules if r.get("rule") == "SOLBottleneck" and r.get("title") == "Latency Issue"), None)
    if solb is not None and regime == T.AT_LIMIT and findings:
        head = findings[0]
        basis: dict[str, Figure | bool] = (
            {"unit": head.figures.get("unit"), "share": head.figures.get("share", 0.0)}
            if head.kind == "unit_throughput" else {"roof": head.roof or ""})
        bottleneck = RuleNote(Relation.BOTTLENECK_LATENCY_VS_LIMIT, "SOLBottleneck", "Latency Issue",
                              solb.get("speedup_pct"), {"lead_kind": head.kind.value, **basis})
    return RulesComparison(estimate, bottleneck)


def rules_fields(findings: list[Finding], rules: list[dict[str, Any]], regime: str | None = None,
                 set_aside: list[Any] | None = None, share: float | None = None) -> dict[str, Any]:
    """The JSON's two keys of the comparison: `rules_comparison`, its sentences, and `rules_relation`, the record."""
    comparison = compare_with_rules(findings, rules, regime, set_aside, share)
    return {"rules_comparison": comparison.text(), "rules_relation": comparison.to_dict()}
