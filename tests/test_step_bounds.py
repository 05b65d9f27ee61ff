"""What a latency step gives at most, where that is less than the finding's whole headroom: more warps per SM at
most in proportion to the warps that run now (Nsight Compute's achieved occupancy), SMs kept busy at most 1 / the
share of the run they were active."""

from __future__ import annotations

import pytest
from conftest import CORPUS, corpus_files

import ncu_roofline

needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"shared report corpus not found at {CORPUS}")
REPORTS = [p.name for p in corpus_files()]


def _expected(k: ncu_roofline.AnalysedKernel, lever: str, figures: dict[str, object]) -> float | None:
    """The step's bound from the launch's own counters (achieved over theoretical warps as Nsight Compute reads
    them), or None where the step has none."""
    achieved = k.raw.number("sm__warps_active.avg.pct_of_peak_sustained_active")
    theoretical = k.raw.number("sm__maximum_warps_per_active_cycle_pct")
    more = figures.get("fit_warps") if lever == "registers" else figures.get("next_warps")
    if lever in ("registers", "block_limit") and more and achieved and theoretical:
        return float(more) / (float(figures["warps"]) * achieved / theoretical)  # type: ignore[arg-type]
    if lever == "idle" and k.launch.get("sm_active_share"):
        return 1.0 / k.launch["sm_active_share"]
    return None


@needs_corpus
@pytest.mark.parametrize("name", REPORTS)
def test_a_latency_step_states_what_it_gives_at_most(name: str) -> None:
    wrong = []
    for k in (k for r in ncu_roofline.analyze(CORPUS / name, isolate=True).reports for k in r.kernels):
        for f in (f for f in k.diagnosis if f.kind == "latency" and f.speedup is not None):
            step_x = f.figures.get("step_x")
            expected = _expected(k, f.lever or "", dict(f.figures))
            if expected is None or expected >= 0.95 * f.speedup:
                if step_x is not None:
                    wrong.append(f"#{k.raw.index} {f.lever}: ≤{step_x} stated, none expected ({expected})")
                continue
            if step_x != pytest.approx(max(1.0, expected)) or not step_x < f.speedup:
                wrong.append(f"#{k.raw.index} {f.lever}: ≤{step_x}, expected {expected} under {f.speedup}")
            elif f"≤{step_x:.3g}×" not in (f.words().next_step or ""):
                wrong.append(f"#{k.raw.index} {f.lever}: {f.words().next_step}")
    assert not wrong, "\n".join(wrong)


@needs_corpus
def test_fewer_registers_double_the_warps_and_state_it() -> None:
    """self-join searchKernelCOSStree: 145 registers a thread fit one 256-thread block (8 warps) per SM, a
    theoretical 12.5 %; 128 fit two, 16 warps. Nsight Compute measured 10.64 % achieved, 6.8 warps: 16 of them
    speed the kernel up at most 16 / (8 × 10.64 / 12.5) = 2.35×, under the FP64 pipe's whole 5.06×."""
    (k,) = [k for r in ncu_roofline.analyze(CORPUS / "self-join-mistic__profileBIGCROSS3.out.ncu-rep").reports
            for k in r.kernels if k.raw.name == "searchKernelCOSStree"]
    (f,) = [f for f in k.diagnosis if f.kind == "latency"]
    assert (f.lever, f.figures["fit_regs"], f.figures["fit_warps"], f.figures["warps"]) == ("registers", 128, 16, 8)
    assert f.figures["step_x"] == pytest.approx(16 / (8 * 10.639920546622903 / 12.5))
    assert f.speedup == pytest.approx(5.06, abs=0.005)
    assert f.words().next_step == ("Cut registers per thread to 128 or fewer with __launch_bounds__: 16 warps per SM, "
                                   "not 8, ≤2.35×.")
