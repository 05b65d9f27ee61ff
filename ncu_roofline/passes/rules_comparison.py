"""Nsight Compute's own rule results beside the findings, as data: does its largest estimated speed-up speak of the
cause one of the findings is about (`rule_causes` and `finding_causes`, from the tables of `knowledge.rules`), and
where its Bottleneck rule reads a latency issue while the verdict is at a limit, what the verdict rests on
(`compare_with_rules`: a `RulesComparison` of `RuleNote`s, each a `Relation` and its figures; their words are
`knowledge.rules_words`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..knowledge import recipes as R
from ..knowledge import throughputs as T
from ..knowledge.rules import (
    FIGURE_CAUSES,
    ISSUE_UNITS,
    KIND_CAUSES,
    LATENCY_CAUSES,
    LEVER_CAUSES,
    LIMIT_CAUSES,
    NO_CONFLICT_LEVERS,
    OCCUPANCY_CASES,
    RULE_CAUSES,
    SHORT_CAUSES,
    UNDER_ONE_WAVE,
    UNIT_CAUSES,
    UNMAPPED,
    VARIANT_CAUSES,
    VARIANT_ONLY,
    Cause,
)
from ..knowledge.rules_words import Relation, sentence
from ..knowledge.wording import Figure, Kind
from .ceilings import SIGNIFICANT
from .diagnosis import HIGH_THROUGHPUT
from .finding import Finding, top_index
from .latency import latency_case

__all__ = ["Cause", "Relation", "RuleNote", "RulesComparison", "compare_with_rules", "finding_causes",
           "rule_causes", "rules_fields"]


_AT_LIMIT_HEADS = ("at_limit", "unit_throughput")
_WAITS = frozenset({Cause.STALLS, Cause.MEMORY_WAIT})  # a rule's causes that a local-memory finding's waits explain


def _title_key(title: str | None) -> str:
    """A rule title as releases write it, compared alike: "Long Scoreboard Stalls" and (older releases)
    "long_scoreboard" are one title."""
    words = (title or "").lower().replace("_", " ").split()
    return " ".join(w for w in words if w != "stalls")


_RULE_TITLES = {(rule, _title_key(title)): causes for (rule, title), causes in RULE_CAUSES.items()
                if title is not None}
_UNMAPPED = {(rule, _title_key(title) if title is not None else None) for rule, title in UNMAPPED}


def _rule_key(rule: str, title: str | None, message: str | None = None) -> tuple[str, str]:
    """(rule, title) as compared: titles alike across releases (`_title_key`); releases before titles (2020.3) wrote
    HighPipeUtilization's "All pipelines are under-utilized" untitled, and its message tells it from a busy pipe."""
    if rule == _LOW_UTILIZATION[0] and not title and "under-utilized" in (message or ""):
        title = _LOW_UTILIZATION[1]
    return rule, _title_key(title)


def rule_causes(rule: str, title: str | None, message: str | None = None) -> frozenset[Cause] | None:
    """The causes an Nsight Compute rule result speaks of (`knowledge.rules`): by its title, else by its id; empty
    for one about a cause no finding names; None for a rule this tool does not compare (`UNMAPPED`)."""
    key = _rule_key(rule, title, message)
    if key in _UNMAPPED or (rule, None) in _UNMAPPED:
        return None
    if key in _RULE_TITLES:
        return _RULE_TITLES[key]
    return RULE_CAUSES.get((rule, None))


def _family(roof: str | None) -> str | None:
    """What a roof or unit is, as `knowledge.rules` keys it: the issue slots, memory, or compute."""
    if roof in ISSUE_UNITS:
        return "issue"
    if roof in R.LEVELS:
        return "memory"
    if roof in R.ROOFS:
        return "compute"
    return T.BY_ID[roof].group if roof in T.BY_ID else None


def finding_causes(f: Finding) -> frozenset[Cause]:
    """The causes a finding is about (`knowledge.rules`): its kind's (unless its variant alone says) and its
    variant's; a latency finding's, the occupancy case of the SMs' active cycles (from its figures: a library
    kernel's lever is the library's), what its limit waits on and the stall its lever names; too little work under
    one wave, a small grid; a limit at its peak, its unit's or family's; short of high use, what more work in flight
    waits on, and the occupancy where its figures name what caps it."""
    kind, family = f.kind.value, _family(f.roof)
    kind_causes = () if (kind, f.variant) in VARIANT_ONLY else KIND_CAUSES.get(kind, ())
    causes = set(kind_causes) | VARIANT_CAUSES.get((kind, f.variant), frozenset())
    for (of_kind, figure), more in FIGURE_CAUSES.items():
        if of_kind == kind and f.figures.get(figure) is not None:
            causes |= more
    if f.kind == Kind.LATENCY:
        case = latency_case({"achieved_occupancy": _number(f.figures.get("achieved")),
                             "theoretical_occupancy": _number(f.figures.get("theoretical"))})[0]
        causes |= {OCCUPANCY_CASES[case]} if case in OCCUPANCY_CASES else set()
        causes |= LATENCY_CAUSES.get(family or "", frozenset()) | LEVER_CAUSES.get(f.lever or "", frozenset())
    elif f.kind == Kind.TOO_LITTLE_WORK:
        waves = _number(f.figures.get("waves"))
        causes |= UNDER_ONE_WAVE if waves is not None and waves < T.MIN_WAVES else set()
    elif f.kind in _AT_LIMIT_HEADS and f.variant in ("high", "short"):
        causes |= UNIT_CAUSES.get(f.roof or "", LIMIT_CAUSES.get(family or "", frozenset()))
        if f.lever in NO_CONFLICT_LEVERS:
            causes.discard(Cause.BANK_CONFLICTS)
        if f.variant == "short":
            causes |= SHORT_CAUSES.get(family or "", frozenset())
            causes |= {Cause.OCCUPANCY} if f.figures.get("occ_by") else set()
    return frozenset(causes)


def _number(value: Figure) -> float | None:
    return float(value) if isinstance(value, (int, float)) else None


def _short_of_peak(f: Finding) -> float | None:
    """How far a limit at its limit but short of what Nsight Compute calls high use is from its own peak (the
    rest of it is for more work in flight), else None."""
    left = f.figures.get("left")
    short = f.kind in _AT_LIMIT_HEADS and f.variant == "short" and isinstance(left, float)
    return left if short else None  # type: ignore[return-value]


_LOW_UTILIZATION = ("HighPipeUtilization", "Low Utilization")
# The rules whose estimate is for more warps or instructions in flight (not the stall rules: a stall may be a
# throttled pipe, Math Pipe Throttle, MIO Throttle).
_HIDING_LATENCY = frozenset({"AchievedOccupancy", "TheoreticalOccupancy", "Occupancy", "IssueSlotUtilization"})
# The stall rules of warps waiting on memory data: at a limit past high use, that wait is the limit itself.
_WAITING_ON_MEMORY = frozenset({_rule_key("CPIStall", "Long Scoreboard Stalls"),
                                _rule_key("CPIStallLongScoreboard", "")})


def _at_memory_limit(f: Finding) -> bool:
    """A finding that the kernel presses against a memory roof or a memory unit."""
    return f.kind in _AT_LIMIT_HEADS and _family(f.roof) == "memory"


def _limit_label(f: Finding) -> Figure:
    """The limit a finding at a roof or a busy unit names ("DRAM", "issue slots"), else None."""
    return f.figures.get("limit") if f.kind == "at_limit" else f.figures.get("unit") if f.kind == "unit_throughput" \
        else None


def _lead(f: Finding) -> dict[str, Figure]:
    """What the verdict leads with: the first finding's kind and variant, and the limit it names where it names one."""
    return {"lead_kind": f.kind.value, "lead_variant": f.variant, "lead_limit": _limit_label(f)}


def _top(findings: list[Finding]) -> dict[str, Figure]:
    """The top finding, whose next step the verdict gives (`finding.top_index`): its kind and variant, the limit it
    names where it names one, and its bound where it has one."""
    f = findings[top_index([g.speedup for g in findings], [g.kind.value for g in findings],
                           [g.variant for g in findings]) or 0]
    return {"top_kind": f.kind.value, "top_variant": f.variant, "top_limit": _limit_label(f), "top_bound": f.speedup}


def _elsewhere(top: dict[str, Any], causes: frozenset[Cause], findings: list[Finding],
               set_aside: list[Any], share: float | None = None, ceilings: list[Any] | None = None) -> RuleNote:
    """An estimate that speaks of none of the findings: a ceiling of that kind set aside (with its reason), one
    that takes less than a tenth off its roof (`ceilings`, the kernel's: the smallest factor of that kind), a
    partial last wave where the measured occupancy rules out the equal block times it assumes, idle
    compute pipes at a memory limit, hiding latency (or waiting on memory) at a limit past high use (`share`, the
    limiter's), more warps before the launch fills the GPU, else one the findings do not rank."""
    what = top.get("title") or top.get("name") or top.get("rule")
    lead = _lead(findings[0])
    title = str(what).upper()
    # the one of the level the rule's title names first (L1TEX Global Load Access Pattern: coalescing, at L1)
    aside = min((n for n in set_aside if KIND_CAUSES.get(n.kind, frozenset()) & causes),
                key=lambda n: not any(level.upper() in title for level in n.roof.split("/")), default=None)
    if aside is not None:
        return _note(top, Relation.SET_ASIDE, aside_kind=aside.kind, aside_roof=aside.roof, reason=aside.reason,
                     **_top(findings))
    small = min((c for c in ceilings or [] if KIND_CAUSES.get(c.kind, frozenset()) & causes
                 and c.factor >= SIGNIFICANT), key=lambda c: c.factor, default=None)
    if small is not None:
        return _note(top, Relation.UNDER_A_TENTH, small_kind=small.kind, small_roof=small.roof, cost=1.0 - small.factor,
                     **_top(findings))
    uneven = next((f for f in findings if (f.kind.value, f.variant) in VARIANT_ONLY), None)
    if uneven is not None and Cause.TAIL in causes:
        return _note(top, Relation.UNEQUAL_BLOCKS, achieved=uneven.figures["achieved"])
    key = _rule_key(str(top.get("rule")), top.get("title"), top.get("message"))
    if key == _rule_key(*_LOW_UTILIZATION) and _at_memory_limit(findings[0]):
        return _note(top, Relation.IDLE_PIPES_EXPECTED, **lead)
    hiding = key[0] in _HIDING_LATENCY
    if hiding and findings[0].kind == "too_little_work" and Cause.SMALL_GRID in finding_causes(findings[0]):
        return _note(top, Relation.MORE_BLOCKS_FIRST, **lead)
    waiting = hiding or key in _WAITING_ON_MEMORY
    if waiting and share is not None and share >= HIGH_THROUGHPUT and findings[0].kind in _AT_LIMIT_HEADS:
        return _note(top, Relation.PAST_HIGH_USE, share=share, left=1.0 / share, **lead)
    return _note(top, Relation.NOT_RANKED, **_top(findings))


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
                       set_aside: list[Any] | None = None, share: float | None = None,
                       ceilings: list[Any] | None = None) -> RulesComparison:
    """Where Nsight Compute's largest estimated speed-up stands to the findings (agrees with one, or points
    elsewhere: and what became of its cause where that ceiling was set aside, `set_aside`, the kernel's
    not-applicable ceilings, or takes under a tenth off its roof, `ceilings`, the kernel's); and where its
    Bottleneck rule reads a latency issue off its two headline figures while the verdict is at a limit (a unit of
    the same Speed Of Light section above the threshold), what the verdict rests on."""
    estimate = None
    estimated = [r for r in rules if r.get("speedup_pct") is not None and r["speedup_pct"] > 0]
    causes = None
    if estimated and findings:
        top = max(estimated, key=lambda r: r["speedup_pct"])
        causes = rule_causes(str(top.get("rule")), top.get("title"), top.get("message"))
    if causes is not None:
        matching = [f for f in findings if finding_causes(f) & causes]
        if matching:
            # Its estimate and this bound measure different things (Tail Effect: the partial wave's share
            # of the run; this: the most the kernel can gain): both are stated.
            match = next((f for f in matching if f.speedup), None)
            figures: dict[str, Figure | bool] = {"match_kind": (match or matching[0]).kind.value}
            waits = next((f.figures.get("local_waits") for f in matching if f.figures.get("local_waits") is not None
                          and causes & _WAITS), None)
            if waits is not None:  # the stalls or waits the rule speaks of are the local-memory finding's
                figures["local_waits"] = waits
            if match is not None and match.speedup:
                saved = 1.0 - 1.0 / match.speedup
                figures |= {"bound": match.speedup, "saved": saved,
                            "below_estimate": saved < 0.5 * top["speedup_pct"] / 100.0}
            elif (short := next((f for f in matching if _short_of_peak(f) is not None), None)) is not None:
                figures |= {"left": _short_of_peak(short), "match_limit": _limit_label(short)}
            estimate = _note(top, Relation.AGREES, **figures)
        else:
            estimate = _elsewhere(top, causes, findings, set_aside or [], share if regime == T.AT_LIMIT else None,
                                  ceilings)
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
                 set_aside: list[Any] | None = None, share: float | None = None,
                 ceilings: list[Any] | None = None) -> dict[str, Any]:
    """The JSON's two keys of the comparison: `rules_comparison`, its sentences, and `rules_relation`, the record."""
    comparison = compare_with_rules(findings, rules, regime, set_aside, share, ceilings)
    return {"rules_comparison": comparison.text(), "rules_relation": comparison.to_dict()}
