"""The first screen's data: each finding as the page and the Markdown show it, each kernel's verdict, the kernels
that hold most GPU time, and what the capture lacks. Typed (`TypedDict`), so that a new field is a change the type
checker walks through."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypedDict

from ..knowledge.catalog import NO_LIMIT, page_words
from ..passes.finding import top_index
from . import format as F
from . import wording as W
from .groups import share_text
from .texts import CEILING_LABELS, missing_summary
from .where import WhereView, alike, where_view

if TYPE_CHECKING:
    from ..api.kernel import AnalysedKernel

TOP_N = 5  # kernels in the verdict at the top of the page: those with the most GPU time

class FindingView(TypedDict):
    """One finding of a kernel, as the page and the Markdown summary show it (words from `Finding.words()`)."""

    kind: str
    variant: str  # what was observed (the catalog's entry)
    label: str  # the kind in a few words ("intensity gap")
    roof: str | None
    factor: float | None  # a ceiling's cap
    factor_text: str
    headline: str  # at most 12 words, with a figure
    next_step: str | None  # one imperative sentence, or None: nothing to do here
    detail: str
    bound_note: str  # how the bound is found, or why there is none
    why_none: str  # why there is no bound ("" where there is one)
    section: str  # the Nsight Compute section or rule it relates to
    speedup: float | None
    speedup_text: str  # "≤2.3×", "" without a bound
    worth: str  # the bound in a sentence, with its share of the GPU time
    where: WhereView | None  # the instructions behind it, where the report holds per-instruction counters


class VerdictRow(TypedDict):
    """One kernel of the verdict at the top of the page: what bounds it, how far from its peak, its top finding
    with its bound, and the next step."""

    id: str  # its row and section
    name: str
    report: str  # the input it comes from, on a page of several ("" on a page of one)
    demangled_name: str
    has_section: bool
    share_text: str  # of the GPU time
    duration: str
    analysed: bool  # False: not analysable, or no limit could be computed (`headline` says why)
    bound_short: str
    bound_label: str
    bound_css: str
    bound_utilization_text: str  # the share of its peak
    regime_text: str
    headline: str  # the top finding's (else the kernel's verdict)
    speedup_text: str  # the top finding's bound
    worth: str
    where: str  # the top finding's top instruction, in one line ("" where the capture holds none)
    next_step: str | None


class MissingItem(TypedDict):
    """One quantity the capture lacks for some kernels of the page."""

    quantity: str  # "work_flop.fp32"
    label: str
    kernels: int  # how many kernels lack it
    reason: str  # the first such kernel's
    collect_with: str  # its `ncu` options


class NotCollected(TypedDict):
    """What the capture lacks, in one line (`summary`, with `command`), and each quantity on demand (`quantities`)."""

    summary: str  # "FLOP counts (FP64, FP32), byte counts (DRAM, L2, L1), 5 roofs"
    command: str  # the `ncu` options for a complete capture
    roofline: bool  # a kernel of the verdict lacks counts the roofline needs: no marker for it
    quantities: list[MissingItem]


class Verdict(TypedDict):
    """The first screen: the kernels that hold most GPU time, each with its verdict, and what was not collected."""

    rows: list[VerdictRow]
    kernels: int  # all kernels of the page
    shown_share_text: str  # the rows' share of the GPU time
    not_collected: NotCollected | None


class Header(TypedDict):
    """The facts of the capture and the conventions of the numbers ("About these numbers")."""

    title: str
    devices: list[dict[str, Any]]
    ncu_versions: list[str]
    kernel_count: int
    group_count: int
    grouping: str
    unusable_count: int
    total_gpu_time: str
    shown_gpu_time: str
    focus: list[str]
    inputs: list[str]
    flop_convention: dict[str, str]
    byte_definitions: list[str]
    threshold: float
    threshold_text: str
    regime_rules: dict[str, str]
    peaks_file: str | None
    tool_version: str
    created: str
    redacted: bool
    findings_note: str  # where a report of many launches has its findings from ("" where each launch has its own)


def _worth(speedup: float | None, note: str, why_none: str, share: float | None) -> str:
    """"Up to 2.3× faster (roof ÷ ceiling = 1 / 0.43), at most 14 % of the GPU time."; without a speed-up, the
    bound note as it is (why there is none), "" without one."""
    if speedup is None or not speedup > 1:
        return page_words("no_bound", {"bound": why_none or None})
    return page_words("worth", {"speedup": F.times(speedup), "bound": note or None,
                                "gain": None if share is None else F.pct(share * (1 - 1 / speedup), 1)})


def finding_views(k: AnalysedKernel, share: float | None, diagnosis: Sequence[dict[str, Any]]) -> list[FindingView]:
    """The kernel's findings as the page shows them (`diagnosis`: their JSON dicts, as redacted, for `where`)."""
    out = []
    for f, d in zip(k.diagnosis, diagnosis, strict=True):
        w = f.words()
        out.append(FindingView(
            kind=f.kind.value, variant=f.variant, label=CEILING_LABELS.get(f.kind.value, f.kind.value), roof=f.roof,
            factor=f.factor,
            factor_text=F.pct(f.factor) if f.factor is not None else "", headline=w.headline,
            next_step=w.next_step, detail=w.detail, bound_note=w.bound, section=w.section, speedup=f.speedup,
            speedup_text=f"≤{F.times(f.speedup)}" if f.speedup and f.speedup > 1 else "",
            why_none=w.why_none, worth=_worth(f.speedup, w.bound, w.why_none, share),
            where=where_view(f.where.counter, d["where"]) if f.where is not None else None))
    return out


def verdict(k: AnalysedKernel) -> str:
    """The verdict in two short sentences: the first finding's headline (what bounds the kernel, how far from its
    peak), then the next step of the finding worth most (else the first with one)."""
    if not k.usable:
        return f"Not analysed: {k.q.unusable_reason}."
    if k.regime is None or not k.diagnosis:
        return NO_LIMIT
    words = [f.words() for f in k.diagnosis]
    top = top_index([f.speedup for f in k.diagnosis], [f.kind.value for f in k.diagnosis],
                     [f.variant for f in k.diagnosis]) or 0
    step = words[top].next_step or next((w.next_step for w in words if w.next_step), None)
    return f"{words[0].headline}." + (f" {step}" if step else "")


def top_finding(findings: Sequence[FindingView]) -> FindingView | None:
    index = top_index([f["speedup"] for f in findings], [f["kind"] for f in findings],
                      [f["variant"] for f in findings])
    return None if index is None else findings[index]


def next_step(findings: Sequence[FindingView]) -> str | None:
    """The verdict's next step: the top finding's, else the first finding's that has one (as `verdict`)."""
    top = top_finding(findings)
    if top is None:
        return None
    return top["next_step"] or next((f["next_step"] for f in findings if f["next_step"]), None)


def _verdict_row(v: dict[str, Any], multi_report: bool) -> VerdictRow:
    """One kernel (its view) in the verdict at the top of the page."""
    top: FindingView | None = v["top_finding"]
    analysed = bool(v["usable"]) and top is not None
    return VerdictRow(
        id=v["id"], name=v["display_name"], report=v["report_name"] if multi_report else "",
        demangled_name=v["demangled_name"], has_section=v["has_section"],
        share_text=v["share_text"], duration=v["duration"], analysed=analysed,
        bound_short=v["bound_short"] if v["bound_named"] else "", bound_label=v["bound_label"],
        bound_css=v["bound_css"], bound_utilization_text=v["bound_utilization_text"], regime_text=v["regime_text"],
        headline=top["headline"] if analysed and top is not None else v["verdict"],
        speedup_text=top["speedup_text"] if analysed and top is not None else "",
        worth=top["worth"] if analysed and top is not None else "",
        where=_top_instruction(top["where"]) if analysed and top is not None else "",
        next_step=v["next_step"] if analysed else None)


def _top_instruction(where: WhereView | None) -> str:
    """"At LDG.E.64 +0x0590: 99 % of the excessive global sectors (file.cu:12)": the instruction that holds most."""
    if not where or not where["rows"]:
        return ""
    row = where["rows"][0]
    return page_words("top_instruction", {"sass": row["sass"] if row["sass_known"] else None, "place": row["place"],
                                          "share": row["share"], "counter": where["counter"],
                                          "source": row["source"] or None, **alike(where)})


def metrics_command(header: Header) -> str:
    """The `ncu` command line for a complete capture on the page's GPU and Nsight Compute release, where the
    page has one of each (`ncu-roofline metrics` prints the options)."""
    options = []
    ccs = {str(d["compute_capability"]) for d in header["devices"] if d["compute_capability"]}
    if len(ccs) == 1:
        options.append(f"--arch {ccs.pop()}")
    releases = {m.group(1) for v in header["ncu_versions"] if (m := re.match(r"(\d{4}\.\d+)", v))}
    if len(releases) == 1:
        options.append(f"--ncu-version {releases.pop()}")
    return f"ncu $(ncu-roofline {' '.join(['metrics', *options])}) …"


def not_collected(groups: Sequence[dict[str, Any]], header: Header,
                  rows: Sequence[VerdictRow] = ()) -> NotCollected | None:
    """What the capture lacks for the page's kernels (their `missing`), each quantity once; None: nothing."""
    items: dict[str, MissingItem] = {}
    for v in groups:
        for m in v["missing"]:
            item = items.get(m["quantity"])
            if item is None:
                items[m["quantity"]] = MissingItem(quantity=m["quantity"], label=m["label"], kernels=1,
                                                   reason=m["reason"], collect_with=m["collect_with"])
            else:
                item["kernels"] += 1
    if not items:
        return None
    shown = {r["id"] for r in rows}
    roofline = any(v["off_chart_kind"] in W.ABSENT for v in groups if v["id"] in shown)
    return NotCollected(summary=missing_summary(list(items)), command=metrics_command(header), roofline=roofline,
                        quantities=list(items.values()))


def verdict_block(groups: Sequence[dict[str, Any]], header: Header, page_total: float | None) -> Verdict:
    """The first screen: the `TOP_N` kernels with the most GPU time, each with its verdict (`groups` come the most
    time first), and what the capture lacks."""
    rows = [_verdict_row(v, len(header["inputs"]) > 1) for v in groups[:TOP_N]]
    seconds = sum(v["duration_s"] or 0.0 for v in groups[:TOP_N])
    return Verdict(rows=rows, kernels=header["group_count"],
                   shown_share_text=share_text(seconds / page_total if page_total else None),
                   not_collected=not_collected(groups, header, rows))


WORTH_TOP = 5  # findings in "Worth most to the program"


class WorthItem(TypedDict):
    """One entry of "Worth most to the program": a kernel (its group view), one of its findings, and what fixing it
    is worth to the whole program (`gain`: its share of the GPU time × (1 − 1 / bound); None: no bound)."""

    group: dict[str, Any]
    finding: dict[str, Any]  # a `FindingView` of the group's
    gain: float | None
    share: float | None  # the kernel's share of the GPU time


class WorthMost(TypedDict):
    """The list, and how many findings project a gain (`ranked`): it shows the `WORTH_TOP` worth most, and the
    kernel with the most GPU time always (`largest_added`: with its top finding, where none of its own ranks)."""

    items: list[WorthItem]
    ranked: int
    largest_added: bool


def worth_most(groups: Sequence[dict[str, Any]], top: int = WORTH_TOP) -> WorthMost:
    """The findings worth most to the program, over every finding of every kernel (group): share of the GPU time ×
    (1 − 1 / bound), the most first. The kernel with the most GPU time always appears: where none of its findings
    ranks among them, its top finding leads the list where it has no bound (the time is there, whatever a fix is
    worth), else follows them."""
    ranked = [WorthItem(group=g, finding=f, gain=g["share"] * (1 - 1 / f["speedup"]), share=g["share"])
              for g in groups for f in g["findings"] if f["speedup"] and f["speedup"] > 1 and g["share"]]
    ranked.sort(key=lambda item: -(item["gain"] or 0.0))
    items = ranked[:top]
    largest = max(groups, key=lambda g: g["duration_s"] or 0.0, default=None)
    lead = largest["top_finding"] if largest is not None and largest["duration_s"] else None
    added = lead is not None and largest is not None and not any(i["group"]["id"] == largest["id"] for i in items)
    if added and lead is not None and largest is not None:
        own = next((i for i in ranked if i["group"]["id"] == largest["id"] and i["finding"] is lead), None)
        item = own or WorthItem(group=largest, finding=lead, gain=None, share=largest["share"])
        items = [*items, item] if item["gain"] is not None else [item, *items]
    return WorthMost(items=items, ranked=len(ranked), largest_added=added)
