"""Nsight Compute's own rule results beside the diagnosis: does its largest estimated speed-up speak of
one of this tool's findings, and where its Bottleneck rule reads a latency issue while this verdict
is at a limit, what the verdict rests on (`compare_with_rules`, the `rules_comparison` sentence)."""

from __future__ import annotations

import re
from typing import Any

from ..knowledge import recipes as R
from ..knowledge import throughputs as T
from .diagnosis import HIGH_THROUGHPUT
from .finding import Finding, ratio_text
from .latency import IDLE_CAUSE

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


# How a limit at its limit short of what Nsight Compute calls high use reads (`diagnosis`): the rest of its own peak
# is for more work in flight (`_SHORT`), with this diagnosis' bound on it (the group).
_SHORT_OF_PEAK = re.compile(r"^at its limit: less work .*?at most ([\d.,]+)× away")


def _tokens(f: Finding) -> set[str]:
    """A finding as `RULE_KINDS` names it: its kind, the kind with its unit, the kind with its group; a latency
    finding that names idle SMs first, `_IDLE` too; a limit short of high use, `_SHORT` too (`_SHORT_OF_PEAK`)."""
    found = {f.kind}
    if f.kind in ("at_limit", "unit_throughput") and _SHORT_OF_PEAK.match(f.speedup_note):
        found.add(_SHORT)
    if f.kind == "latency" and IDLE_CAUSE in f.text:
        found.add(_IDLE)  # and its active cycles' occupancy: the latency's own rules agree too
    if f.roof:
        found.add(f"{f.kind}:{f.roof}")
        if f.roof in R.LEVELS:
            found.add(f"{f.kind}@memory")
        elif f.roof in R.ROOFS:
            found.add(f"{f.kind}@compute")
        elif f.roof in T.BY_ID:
            found.add(f"{f.kind}@{T.BY_ID[f.roof].group}")
    return found


_LOW_UTILIZATION = ("HighPipeUtilization", "Low Utilization")
_AT_LIMIT_HEADS = ("at_limit", "unit_throughput")
# The rules whose estimate is for more warps or instructions in flight (not the stall rules: a stall may be a
# throttled pipe, Math Pipe Throttle, MIO Throttle).
_HIDING_LATENCY = frozenset({"AchievedOccupancy", "TheoreticalOccupancy", "Occupancy", "IssueSlotUtilization"})
# The too-little-work findings of a grid under one wave (`model.throughputs.too_little_work_reason`): more blocks first.
_UNDER_ONE_WAVE = re.compile(r"^the grid (has \S+ blocks? for|is smaller than one wave)")


def _at_memory_limit(f: Finding) -> bool:
    """A finding that the kernel presses against a memory roof or a memory unit."""
    tokens = _tokens(f)
    return f.kind in ("at_limit", "unit_throughput") and bool(tokens & {"at_limit@memory", "unit_throughput@memory"})


def _elsewhere(top: dict[str, Any], kinds: frozenset[str], findings: list[Finding],
               set_aside: list[Any], share: float | None = None) -> str:
    """The sentence for an estimate that speaks of none of the findings: what this diagnosis did with its cause
    where it set a ceiling of that kind aside (with its reason), why idle compute pipes are expected at a
    memory limit, why hiding latency gains little at a limit past high use (`share`, the limiter's) or before the
    launch fills the GPU, else that this diagnosis does not rank it."""
    what = top.get("title") or top.get("name") or top.get("rule")
    head = f"Nsight Compute's largest estimated speed-up ({what}, {top['speedup_pct']:.0f} %)"
    leads = findings[0].kind.replace("_", " ")
    title = str(what).upper()
    # the one of the level the rule's title names first (L1TEX Global Load Access Pattern: coalescing, at L1)
    aside = min((n for n in set_aside if n.kind in kinds),
                key=lambda n: not any(level.upper() in title for level in n.roof.split("/")), default=None)
    if aside is not None:
        return (f"{head} speaks of {aside.kind.replace('_', ' ')}, which this diagnosis set aside: {aside.reason}; it "
                f"leads with {leads}.")
    key = _rule_key(str(top.get("rule")), top.get("title"), top.get("message"))
    if key == _rule_key(*_LOW_UTILIZATION) and _at_memory_limit(findings[0]):
        return (f"{head} is for compute pipes left idle, as they are in a kernel at its memory limit: more warps or "
                f"instructions would not make it faster; this diagnosis leads with {leads}.")
    hiding = key[0] in _HIDING_LATENCY
    if hiding and findings[0].kind == "too_little_work" and _UNDER_ONE_WAVE.search(findings[0].text):
        return (f"{head} is for more warps in flight per SM, while this launch gives the GPU too little work to fill "
                "it: more blocks come first (the too-little-work finding); this diagnosis leads with too little work.")
    if hiding and share is not None and share >= HIGH_THROUGHPUT and findings[0].kind in _AT_LIMIT_HEADS:
        return (f"{head} is for hiding latency (more warps or work in flight), but the limit this diagnosis leads "
                f"with is at {share:.0%} of its peak: at most {ratio_text(1.0 / share)}× is left to it, so only less "
                f"work there makes the kernel much faster; this diagnosis leads with {leads}.")
    return f"{head} points at something this diagnosis does not rank; this diagnosis leads with {leads}."


def compare_with_rules(findings: list[Finding], rules: list[dict[str, Any]], regime: str | None = None,
                       set_aside: list[Any] | None = None, share: float | None = None) -> str:
    """Where Nsight Compute's largest estimated speed-up points elsewhere than this diagnosis, say so (and what
    this diagnosis did with its cause where it set that ceiling aside: `set_aside`, the kernel's not-applicable
    ceilings); and where its Bottleneck rule reads a latency issue off its two headline figures while this
    verdict is at a limit (a unit of the same Speed Of Light section above the threshold), say that too."""
    sentences = []
    estimated = [r for r in rules if r.get("speedup_pct") is not None and r["speedup_pct"] > 0]
    kinds = None
    if estimated and findings:
        top = max(estimated, key=lambda r: r["speedup_pct"])
        kinds = rule_kinds(str(top.get("rule")), top.get("title"), top.get("message"))
    if kinds is not None:
        ours = set().union(*(_tokens(f) for f in findings))
        what = top.get("title") or top.get("name") or top.get("rule")
        if ours & kinds:
            # Its estimate and this bound measure different things (Tail Effect: the partial wave's share
            # of the run; this: the most the kernel can gain): both are stated.
            match = next((f for f in findings if _tokens(f) & kinds and f.speedup), None)
            bound = ""
            if match is not None and match.speedup:
                saved = 1.0 - 1.0 / match.speedup
                bound = (f"; this diagnosis bounds the gain at ≤{ratio_text(match.speedup)}× ({saved:.0%} of the "
                         f"time: {match.kind.replace('_', ' ')})")
                if saved < 0.5 * top["speedup_pct"] / 100.0:
                    bound += ", less than Nsight Compute's estimate: see that finding for why"
            elif (short := next((m for f in findings if _tokens(f) & kinds
                                 and (m := _SHORT_OF_PEAK.match(f.speedup_note))), None)) is not None:
                bound = f"; this diagnosis puts the limit's own peak at most {short.group(1)}× away"
            sentences.append(f"Nsight Compute's largest estimated speed-up ({what}, {top['speedup_pct']:.0f} %) "
                             f"agrees with this diagnosis on the cause{bound}.")
        else:
            sentences.append(_elsewhere(top, kinds, findings, set_aside or [], share if regime == T.AT_LIMIT else None))
    latency = any(r.get("rule") == "SOLBottleneck" and r.get("title") == "Latency Issue" for r in rules)
    if latency and regime == T.AT_LIMIT and findings:
        head = findings[0]
        basis = (f"{head.text.split(', while')[0]}, a figure of the same Speed Of Light section that its "
                 "headlines do not include" if head.kind == "unit_throughput" else
                 f"the {(head.roof or '').upper()} roof, from the report's counts and peaks")
        sentences.append("Nsight Compute's Bottleneck rule reads a latency issue off its SM and memory headline "
                         f"figures, both under 60 %; this verdict rests on {basis}.")
    return " ".join(sentences)
