"""Page wording that follows counts and reasons: plurals, the page title, why a kernel is off the chart and
the banner of a roofline with nothing to place.

A count is always written with its noun (`count(1, "kernel")` is "1 kernel"), so no sentence says "the 1
kernels". Why a kernel has no place on a FLOP/s chart is kept as a kind as well as a sentence, so that the
overview's banner can tell counts a capture lacks (collect them) from counts it holds that are zero (integer
or data-movement work: nothing to collect).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..api.kernel import AnalysedKernel

# Why a kernel is not on the roofline chart.
UNUSABLE = "unusable"
TENSOR_NO_COUNT = "tensor_no_count"
NO_FLOP_COUNTS = "no_flop_counts"
NO_FP_WORK = "no_fp_work"
NO_BYTE_COUNTS = "no_byte_counts"
# The kinds a fuller capture would fix (`ncu $(ncu-roofline metrics)`): counts the capture does not hold.
ABSENT = (TENSOR_NO_COUNT, NO_FLOP_COUNTS, NO_BYTE_COUNTS)

OFF_CHART_TEXT = {
    UNUSABLE: "not analysable (its section says why: NaN, infinite or impossible values, or no usable duration)",
    TENSOR_NO_COUNT: "tensor-core work with no FLOP count and no tensor roof: its tensor-pipe busy share is in its "
                     "section (the TENSOR roof's utilisation)",
    NO_FLOP_COUNTS: "no FLOP counts in the report",
    NO_FP_WORK: ("no floating-point work (FLOP counts of zero: integer or data-movement work; bandwidth "
                 "utilisation in the table)"),
    NO_BYTE_COUNTS: "no byte counts in the report",
}
# Why a matched kernel has no BASE -> HEAD arrow on a diff chart.
SIDE_UNUSABLE = "side_unusable"
SIDE_NO_FLOP_COUNT = "side_no_flop_count"
SIDE_NO_FP_WORK = "side_no_fp_work"
SIDE_NO_SHARED_LEVEL = "side_no_shared_level"
BEYOND_ARROWS = "beyond_arrows"
DIFF_OFF_CHART_TEXT = {
    SIDE_UNUSABLE: "not analysable on one side",
    SIDE_NO_FLOP_COUNT: "no FLOP count on one side",
    SIDE_NO_FP_WORK: "no floating-point work on one side (FLOP counts of zero)",
    SIDE_NO_SHARED_LEVEL: "no memory level with bytes on both sides",
    BEYOND_ARROWS: "beyond the {arrows} largest changes",
}
OFF_CHART_NAMED = 6  # kernels named per reason under a chart; the rest are counted


def off_chart_notes(pairs: Sequence[tuple[str, str]], words: Mapping[str, str]) -> list[dict[str, Any]]:
    """The kernels not on a chart, by reason (`pairs`: kernel name, reason kind; in the chart's order): per reason in
    order of first appearance, its sentence (`words[reason]`), its
    kernels' count and the first `OFF_CHART_NAMED` of them (a name listed n times once, as `name (×n)`), so that
    a reason 200 kernels share is written once."""
    by_reason: dict[str, Counter[str]] = {}
    for name, reason in pairs:
        by_reason.setdefault(reason, Counter())[name] += 1
    return [{"why": words[reason], "count": len(names),
             "kernels": count(len(names), "kernel"),
             "named": [f"{name} (×{n})" if n > 1 else name for name, n in list(names.items())[:OFF_CHART_NAMED]]}
            for reason, names in by_reason.items()]


# The banner's clause per kind, after "N kernel(s)": (for one kernel, for more).
_BANNER_CLAUSE = {
    NO_FP_WORK: ("did no floating-point work (its FLOP counts are in the capture and zero: integer or data-movement "
                 "work)", "did no floating-point work (their FLOP counts are in the capture and zero: integer or "
                 "data-movement work)"),
    NO_FLOP_COUNTS: ("has no FLOP counts in the capture", "have no FLOP counts in the capture"),
    NO_BYTE_COUNTS: ("has FLOP counts but no byte counts in the capture",
                     "have FLOP counts but no byte counts in the capture"),
    TENSOR_NO_COUNT: ("did tensor-core work that the capture holds no FLOP count or tensor roof for",) * 2,
    UNUSABLE: ("could not be analysed (its section says why: NaN, infinite or impossible values, or no usable "
               "duration)", "could not be analysed (each one's section says why: NaN, infinite or impossible values, "
               "or no usable duration)"),
}
_ORDER = (NO_FP_WORK, NO_FLOP_COUNTS, NO_BYTE_COUNTS, TENSOR_NO_COUNT, UNUSABLE)


def count(n: int, one: str, many: str | None = None) -> str:
    """`n` with its noun in the right number: `1 kernel`, `3 kernels`, `1,024 launches`."""
    if many is None:
        many = one + "es" if one.endswith(("s", "x", "ch", "sh")) else one + "s"
    return f"{n:,} {one if n == 1 else many}"


def page_title(paths: Sequence[str]) -> str:
    """The page title: the first input's file name, and how many more there are."""
    if not paths:
        return "Roofline"
    first = os.path.basename(paths[0])
    return f"Roofline: {first}" + (f" and {len(paths) - 1:,} more" if len(paths) > 1 else "")


def off_chart(k: AnalysedKernel, upper_bound_drawn: bool) -> str | None:
    """Why a kernel has no marker on the roofline chart (one of the kinds above), or None where it has one.

    `upper_bound_drawn`: its tensor work, known only as the pipe's busy share, is drawn as an upper bound.
    """
    if not k.usable:
        return UNUSABLE
    if "flop_incomplete" in k.flags:
        return None if upper_bound_drawn else TENSOR_NO_COUNT
    if k.achieved_flop_per_s is None:
        return NO_FLOP_COUNTS
    if k.achieved_flop_per_s == 0:
        return NO_FP_WORK
    if all(v is None for v in k.intensity.values()):
        return NO_BYTE_COUNTS
    return None


def chart_banner(kinds: Counter[str], speed_of_light: bool) -> dict[str, Any]:
    """What stands in place of a roofline chart none of whose kernels can be placed (`kinds`: why -> how many
    kernels): the reasons (`text`), whether a fuller capture would add what is missing (`collect`: some counts
    are absent, not zero), and what the verdicts stand on instead (`instead`)."""
    if set(kinds) == {NO_FP_WORK}:
        text = ("no kernel did floating-point work: the capture holds FLOP counts and they are zero (integer, "
                "integer tensor-core or data-movement work), so there is nothing to place on a FLOP/s axis; the "
                "table keeps each kernel's bandwidth utilisation")
    else:
        text = "no kernel here can be placed on a roofline: " + "; ".join(
            f"{count(kinds[kind], 'kernel')} {_BANNER_CLAUSE[kind][kinds[kind] != 1]}"
            for kind in _ORDER if kinds.get(kind))
    return {
        "text": text,
        "collect": any(kinds.get(kind) for kind in ABSENT),
        "instead": ("The verdicts stand on Nsight Compute's own unit throughputs, charted below." if speed_of_light
                    else "Each kernel's verdict is in the table."),
    }


def report_names(paths: Sequence[str], redact: bool = False) -> list[str]:
    """How a multi-report page names each report in its Report columns: the file name, or, where two inputs
    share one, the path as given (with `redact`, the file name and its place among the inputs)."""
    names = [os.path.basename(p) for p in paths]
    shared = {n for n, c in Counter(names).items() if c > 1}
    return [(f"{n} (input {i + 1})" if redact else p) if n in shared else n
            for i, (n, p) in enumerate(zip(names, paths, strict=True))]
