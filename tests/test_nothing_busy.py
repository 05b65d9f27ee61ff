"""Nothing is busy: a kernel whose every limit is under 5 % of its peak reads "nothing is busy" with the grid that
explains it, and no word or label names a limiter at such a share (the JSON keeps `bound_by`, the busiest measured
limit, for the code that compares and groups launches). Counters the capture holds broken (NaN) are not available,
with their reason in `missing`, never 0 %."""

from __future__ import annotations

import re
from functools import cache

import pytest
from conftest import CORPUS, corpus_files, make_kernel

import ncu_roofline
from ncu_roofline.api.analysis import Analysis, ReportResult
from ncu_roofline.api.kernel import AnalysedKernel, analyse_kernel
from ncu_roofline.knowledge import throughputs as T
from ncu_roofline.render import REPORT, RenderOptions, render
from ncu_roofline.views.labels import long_label, short_label
from ncu_roofline.views.report import build_report_view
from ncu_roofline.views.verdict import verdict

needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"shared report corpus not found at {CORPUS}")
FILES = [p.name for p in corpus_files()]
SM = "sm__throughput.avg.pct_of_peak_sustained_elapsed"
MEM = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"
XBAR = "lts__xbar2lts_cycles_active.avg.pct_of_peak_sustained_elapsed"  # "crossbar-to-L2 requests"


def _one_block(**more: object) -> AnalysedKernel:
    """1 block of 128 threads on 80 SMs for 50 µs, every unit under 1 %: the crossbar-to-L2 requests busiest."""
    metrics = {"gpu__time_duration.sum": (50_000.0, "ns"), SM: (0.3, "%"), MEM: (0.2, "%"), XBAR: (0.4, "%"),
               "launch__grid_size": 1.0, "launch__block_size": 128.0, "device__attribute_multiprocessor_count": 80.0,
               "launch__waves_per_multiprocessor": 1 / 1280, "launch__occupancy_limit_blocks": 16.0,
               "launch__occupancy_limit_registers": 16.0, "launch__occupancy_limit_shared_mem": 32.0,
               "launch__occupancy_limit_warps": 16.0} | more
    return analyse_kernel(make_kernel(metrics))  # type: ignore[arg-type]


def _markdown(*kernels: AnalysedKernel) -> str:
    return render(REPORT, Analysis([ReportResult("/tmp/c.ncu-rep", "ncu-rep", "2025.1.0.0", list(kernels))], []),
                  "md", RenderOptions())


def test_one_block_on_80_sms_reads_nothing_is_busy_with_its_grid() -> None:
    k = _one_block()
    # the JSON keeps the busiest measured limit and its share: other code compares and groups by it
    assert k.regime == "too_little_work" and k.bound_by == "lts__xbar2lts_cycles_active"
    assert k.limiter_share == pytest.approx(0.004) and k.to_dict()["bound_by"] == "lts__xbar2lts_cycles_active"
    head = k.diagnosis[0]
    assert (head.kind, head.variant) == ("too_little_work", "idle_limits")
    w = head.words()
    assert w.headline == "Nothing is busy: a 1-block grid for 80 SMs"
    assert "The grid has 1 block(s) for 80 SMs: 79 have none." in w.detail
    assert "the busiest at 0.4 %" in w.detail
    assert verdict(k).startswith("Nothing is busy: a 1-block grid for 80 SMs.")
    md = _markdown(k)
    assert "crossbar-to-L2" not in md and "| nothing busy |" in md
    assert "Busiest limits (kernels, share of GPU time): nothing busy: 1" in md


def test_a_limiter_at_5_percent_or_more_is_still_named() -> None:
    """Under one wave but a unit at 30 %: too little work, its limiter named as before."""
    k = _one_block(**{XBAR: (30.0, "%")})
    assert k.regime == "too_little_work" and k.diagnosis[0].variant == "few_blocks"
    assert f"| {short_label('lts__xbar2lts_cycles_active')} |" in _markdown(k)


def test_a_share_of_0_over_nan_elapsed_cycles_is_not_available() -> None:
    """SM throughput 0 % where the capture's sm__cycles_elapsed.avg is NaN: a percentage of no cycles measures
    nothing. The unit is absent, with its reason in `missing`; the memory throughput at 40 % still counts."""
    k = analyse_kernel(make_kernel({"gpu__time_duration.sum": (10_000.0, "ns"), SM: (0.0, "%"), MEM: (40.0, "%"),
                                    "sm__cycles_elapsed.avg": float("nan")}))
    assert "sm_throughput" not in k.units and k.bound_by == "memory_throughput"
    (gap,) = [m for m in k.missing if m.quantity == "units.sm_throughput"]
    assert "sm__cycles_elapsed.avg is NaN" in gap.reason and SM in gap.reason
    words = " ".join(f"{w.headline} {w.detail} {w.next_step}" for w in (f.words() for f in k.diagnosis))
    assert "SM (compute) throughput" not in words and "sm_throughput" not in k.to_dict()["utilization"]


def test_a_unit_held_as_nan_is_not_available_with_its_reason() -> None:
    k = analyse_kernel(make_kernel({"gpu__time_duration.sum": (10_000.0, "ns"), SM: float("nan"),
                                    MEM: (40.0, "%")}))
    assert "sm_throughput" not in k.units
    (gap,) = [m for m in k.missing if m.quantity == "units.sm_throughput"]
    assert gap.reason == f"SM (compute) throughput: the capture's {SM} is NaN"
    # a 0 % over cycles the capture holds is a measurement: kept
    k = analyse_kernel(make_kernel({"gpu__time_duration.sum": (10_000.0, "ns"), SM: (0.0, "%"), MEM: (40.0, "%"),
                                    "sm__cycles_elapsed.avg": 15_000.0}))
    assert k.units["sm_throughput"].share == 0.0 and not [m for m in k.missing if m.quantity.startswith("units.")]


@cache
def _analysis(name: str) -> Analysis:
    return ncu_roofline.analyze(CORPUS / name)


def _idle(share: float | None) -> bool:
    return share is None or share < T.TOO_LITTLE_WORK_SHARE


@needs_corpus
@pytest.mark.parametrize("name", FILES)
def test_no_limiter_is_named_under_5_percent(name: str) -> None:
    """Corpus invariant: where every limit is under 5 % (simpleDivergence's one-block launches, CUB's 4-block
    exclusive sums, the Pascal capture's one block), neither a finding's words, the verdict, nor the table's
    "Busiest limit" cell names a limit; they read "nothing busy"."""
    analysis = _analysis(name)
    wrong = []
    for k in (k for r in analysis.reports for k in r.kernels if k.usable and k.regime == "too_little_work"):
        if not _idle(k.limiter_share) or k.bound_by is None:
            continue
        names = {short_label(k.bound_by), long_label(k.bound_by)}
        texts = [verdict(k), *(t for f in k.diagnosis for w in (f.words(),) for t in (w.headline, w.detail,
                                                                                       w.next_step or ""))]
        wrong += [f"{k.raw.name}: {t!r}" for t in texts for n in names if re.search(rf"\b{re.escape(n)}\b", t)]
    view = build_report_view(analysis)
    for v in view["groups"]:
        named = (v["bound_short"], v["bound_label"].split(":")[0])
        if v["regime"] == "too_little_work" and _idle(v["bound_utilization"]) and \
                named != ("nothing busy", "nothing is busy"):
            wrong.append(f"{v['display_name']}: busiest limit {v['bound_short']!r} at {v['bound_utilization']}")
    assert not wrong, "\n".join(wrong)
