"""The words of the comparison with Nsight Compute's own rules (`passes.rules_comparison`).

The comparison is data: a relation and named figures. Its words are one template per relation, filled here with
`wording.fill` (a segment is kept only where every figure it names is present; a tuple within holds alternatives,
the first that fills). Limits, checked by the tests: plain sentences of at most 25 words, each about the kernel and
Nsight Compute's rule, never about the tool that writes them.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum

from .catalog import kind_label
from .wording import Figure, Template, fill

LATENCY_ISSUE_BELOW = 0.6  # Nsight Compute's Bottleneck rule reads a latency issue where both headlines are under this


class Relation(str, Enum):
    """How a rule result of Nsight Compute stands to the kernel's findings. The JSON's `rules_relation` holds these."""

    AGREES = "agrees"  # its largest estimate speaks of one of the findings
    SET_ASIDE = "set_aside"  # of a ceiling that was set aside, for a stated reason
    IDLE_PIPES_EXPECTED = "idle_pipes_expected"  # of idle compute pipes ("Low Utilization") at a memory limit
    MORE_BLOCKS_FIRST = "more_blocks_first"  # of more warps per SM, while the grid does not fill the GPU
    PAST_HIGH_USE = "past_high_use"  # of hiding latency, while the leading limit is past high use
    UNDER_A_TENTH = "under_a_tenth"  # of a ceiling that takes less than a tenth off its roof: no finding
    UNEQUAL_BLOCKS = "unequal_blocks"  # of a partial last wave, while the measured occupancy rules out equal blocks
    NOT_RANKED = "not_ranked"  # of none of the findings
    BOTTLENECK_LATENCY_VS_LIMIT = "bottleneck_latency_vs_limit"  # its Bottleneck rule: latency; the verdict: a limit


_HEAD = "Nsight Compute's top estimate ({what}, {speedup_pct:.0f} %)"
_LEADS = ((" The verdict leads with the {lead_limit} limit.", " The verdict leads with {lead_label}."),)
# The top finding, whose next step the verdict gives: what the page asks to fix first instead.
_TOP = ((" The top finding is the {top_limit} limit.", " The top finding is {top_label}, ≤{top_bound:x}.",
         " The top finding is {top_label}."),)

TEMPLATES: dict[Relation, Template] = {
    Relation.AGREES: (
        _HEAD + " agrees on the cause.",
        " Long-scoreboard waits, mostly on local memory, are {local_waits:pct} of the kernel's stall cycles.",
        (" The {match_label} finding bounds the gain at ≤{bound:x}, {saved:pct} of the time: under half that "
         "estimate.{below_estimate}",
         " The {match_label} finding bounds the gain at ≤{bound:x}, {saved:pct} of the time.",
         " The {match_limit} limit is short of high use: more work in flight reaches its peak, ≤{left:x} away.",
         " The limit is short of high use: more work in flight reaches its peak, ≤{left:x} away."),
    ),
    Relation.SET_ASIDE: (
        _HEAD + " is about {aside_label}.",
        " That ceiling was set aside: {reason}.",
        *_TOP,
    ),
    Relation.IDLE_PIPES_EXPECTED: (
        _HEAD + " is for idle compute pipes, expected at a memory limit; more warps would not help.",
        *_LEADS,
    ),
    Relation.MORE_BLOCKS_FIRST: (
        _HEAD + " is for more warps per SM.",
        " The grid cannot fill the GPU, so more blocks come first.",
    ),
    Relation.PAST_HIGH_USE: (
        _HEAD + " is for hiding latency.",
        (" The {lead_limit} limit is at {share:pct} of its peak: with ≤{left:x} left, only less work helps much.",
         " The leading limit is at {share:pct} of its peak: with ≤{left:x} left, only less work helps much."),
    ),
    Relation.UNDER_A_TENTH: (
        _HEAD + " is about {small_label}.",
        " Here that ceiling takes {cost:pct} off the {small_roof} roof, under the tenth a finding needs.",
        *_TOP,
    ),
    Relation.UNEQUAL_BLOCKS: (
        _HEAD + " assumes equal block times; the occupancy it measured, {achieved:pct}, rules them out.",
    ),
    Relation.NOT_RANKED: (
        _HEAD + " matches none of the findings.",
        *_TOP,
    ),
    Relation.BOTTLENECK_LATENCY_VS_LIMIT: (
        "Nsight Compute's Bottleneck rule reads a latency issue: its SM and memory headlines are both under "
        "{latency_below:pct}.",
        (" The verdict rests on {unit} at {share:pct}, a figure those headlines leave out.",
         " The verdict rests on the {roof_label} roof, from the report's counts and peaks."),
    ),
}


def _shown(figures: Mapping[str, Figure | bool]) -> dict[str, Figure]:
    """The figures as the templates read them: kinds as labels, roofs upper-case, a true flag as the empty text
    that keeps its segment (a false one drops it)."""
    shown: dict[str, Figure] = {}
    for name, value in figures.items():
        shown[name] = ("" if value else None) if isinstance(value, bool) else value
    for role in ("match", "aside", "lead", "top", "small"):
        kind = figures.get(f"{role}_kind")
        if isinstance(kind, str):  # "The tail-effect finding", "is about sector use"
            shown[f"{role}_label"] = kind.replace("_", "-") if role == "match" else kind_label(kind)
    reason = figures.get("reason")
    if isinstance(reason, str):
        shown["reason"] = reason.rstrip(". ")
    roof = figures.get("roof")
    if isinstance(roof, str):
        shown["roof_label"] = roof.upper()
    small_roof = figures.get("small_roof")
    if isinstance(small_roof, str):
        shown["small_roof"] = small_roof.upper()
    shown.setdefault("latency_below", LATENCY_ISSUE_BELOW)
    return shown


def sentence(relation: Relation | str, figures: Mapping[str, Figure | bool]) -> str:
    """The words of one relation, filled with its figures (the rule's `what` and `speedup_pct` among them)."""
    return fill(TEMPLATES[Relation(relation)], _shown(figures)).strip()
