"""FP64 divisions from the per-opcode counts: read as NVIDIA's reader gives them, and bounded from them."""

from __future__ import annotations

import math
from functools import cache
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from conftest import CORPUS, corpus_files

import ncu_roofline
from ncu_roofline.api.kernel import AnalysedKernel
from ncu_roofline.knowledge.opcodes import DIVISION_DFMA, DIVISION_STARTS, FP64_OPCODES, FP64_PIPE_COUNTS
from ncu_roofline.passes.divisions import FP64_PIPE, NOTABLE
from ncu_roofline.readers.ncu_rep import _instance

needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"shared report corpus not found at {CORPUS}")
REPORTS = [p.name for p in corpus_files() if not p.name.endswith(".csv")]
BASELINE, AFTER = "gpu-workshop__MW_Baseline.ncu-rep", "gpu-workshop__MW_DivToMult.ncu-rep"
KERNEL = "compute_tendencies_x_279_gpu"


@cache
def _kernels(name: str) -> list[AnalysedKernel]:
    analysis = ncu_roofline.analyze(CORPUS / name, isolate=True)
    return [k for r in analysis.reports for k in r.kernels if k.usable]


@cache
def _opcodes(name: str) -> dict[tuple[str, float], dict[str, dict[str, float]]]:
    """Per kernel (name, gpu__time_duration.sum): each per-opcode metric's count by opcode, as NVIDIA's reader
    gives them."""
    import ncu_report

    ctx = ncu_report.load_report(str(CORPUS / name))
    out: dict[tuple[str, float], dict[str, dict[str, float]]] = {}
    for r in range(ctx.num_ranges()):
        rng = ctx.range_by_idx(r)
        for j in range(rng.num_actions()):
            action = rng.action_by_idx(j)
            duration = action.metric_by_name("gpu__time_duration.sum")
            counts: dict[str, dict[str, float]] = {}
            for base in ("sass__inst_executed_per_opcode", "sass__inst_executed_per_opcode_with_modifier_all"):
                m = action.metric_by_name(base)
                if m is not None and m.num_instances():
                    ids = m.correlation_ids()
                    counts[base] = {}
                    for i in range(m.num_instances()):
                        key = ids.as_string(i)
                        counts[base][key] = counts[base].get(key, 0.0) + m.as_double(i)
            if duration is not None:
                out[(action.name(), duration.as_double())] = counts
    return out


def _hand(name: str, k: AnalysedKernel) -> tuple[float, float] | None:
    """(MUFU.RCP64H, FP64 pipe instructions) of the kernel by hand from the reader's instances; None without them."""
    duration = k.raw.number("gpu__time_duration.sum")
    counts = _opcodes(name).get((k.raw.name, duration or math.nan))
    if not counts or len(counts) < 2:
        return None
    starts = counts["sass__inst_executed_per_opcode_with_modifier_all"].get("MUFU.RCP64H", 0.0)
    fp64 = sum(counts["sass__inst_executed_per_opcode"].get(op, 0.0) for op in FP64_OPCODES)
    return starts, fp64


@needs_corpus
@pytest.mark.parametrize("name", REPORTS)
def test_division_findings_hold_the_readers_counts_and_appear_wherever_they_are_notable(name: str) -> None:
    wrong = []
    for k in _kernels(name):
        found = [f for f in k.diagnosis if f.kind == "fp64_division"]
        hand = _hand(name, k)
        notable = hand is not None and hand[1] > 0 and DIVISION_DFMA * hand[0] / hand[1] >= NOTABLE
        expected = notable and k.bound_by == FP64_PIPE and k.regime == "at_limit"
        if bool(found) != expected:
            wrong.append(f"#{k.raw.index} {k.raw.name}: finding {bool(found)}, expected {expected}")
            continue
        for f in found:
            assert hand is not None
            starts, fp64 = hand
            if (f.figures["starts"], f.figures["fp64"]) != (starts, fp64):
                wrong.append(f"#{k.raw.index}: {f.figures['starts']}, {f.figures['fp64']} against {starts}, {fp64}")
            if f.figures["share"] != pytest.approx(min(1.0, DIVISION_DFMA * starts / fp64), rel=1e-12):
                wrong.append(f"#{k.raw.index}: share {f.figures['share']}")
            if f.speedup is not None and not f.speedup >= 1.0:
                wrong.append(f"#{k.raw.index}: speed-up {f.speedup}")
    assert not wrong, "\n".join(wrong)


@needs_corpus
def test_baseline_division_bound_is_hand_computed_and_holds_the_after_captures_gain() -> None:
    import ncu_report

    (k,) = [k for k in _kernels(BASELINE) if k.raw.name == KERNEL]
    (f,) = [f for f in k.diagnosis if f.kind == "fp64_division"]
    # The reader's counts of this kernel, summed by hand: MUFU.RCP64H, and DADD + DMUL + DFMA + DSETP.
    starts, fp64 = 38_647_495.0, 60_011_904.0 + 107_521_820.0 + 250_895_971.0 + 32_580_238.0
    assert _hand(BASELINE, k) == (starts, fp64)
    share = 5 * starts / fp64
    assert f.figures["share"] == pytest.approx(share, rel=1e-12)
    # The bound: no instruction of a division uses DRAM, the busiest of the limits they leave (44.57 % of its peak
    # over the elapsed cycles, as NVIDIA's reader gives it).
    ctx = ncu_report.load_report(str(CORPUS / BASELINE))
    rng = ctx.range_by_idx(0)
    (action,) = [a for a in (rng.action_by_idx(j) for j in range(rng.num_actions())) if a.name() == KERNEL]
    dram = action.metric_by_name("gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed").as_double() / 100
    assert f.figures["other_label"] == "DRAM throughput" and f.figures["other_share"] == dram
    assert f.speedup == pytest.approx(1 / dram, rel=1e-12)
    assert f.speedup == pytest.approx(2.2435, abs=1e-3)
    # The after capture replaced most divisions by multiplies: its gain stays within the bound.
    (after,) = [a for a in _kernels(AFTER) if a.raw.name == KERNEL]
    gain = (k.raw.number("gpu__time_duration.sum") or 0.0) / (after.raw.number("gpu__time_duration.sum") or 1.0)
    assert gain == pytest.approx(6_190_944 / 3_482_240, rel=1e-9)
    assert 1.7 < gain <= f.speedup
    # ... and it is bound by DRAM there, which moved the same bytes in less time.
    assert after.bound_by in ("dram_throughput", "dram")
    assert after.utilization["dram"] == pytest.approx(k.utilization["dram"] * gain, rel=0.05)
    # The table's top finding, and its step, are the divisions'.
    assert k.diagnosis[0].lever == "fp64_division"
    assert max(k.diagnosis, key=lambda g: g.speedup or 0.0) is f


@needs_corpus
def test_the_after_capture_keeps_a_smaller_division_share_and_is_no_longer_fp64_bound() -> None:
    (k,) = [k for k in _kernels(AFTER) if k.raw.name == KERNEL]
    starts, fp64 = _hand(AFTER, k) or (0.0, 0.0)
    assert starts == 6_876_943.0
    assert 0.15 < 5 * starts / fp64 < 0.2  # against 43 % before
    assert k.bound_by != FP64_PIPE
    assert not [f for f in k.diagnosis if f.kind == "fp64_division"]


class _Ids:
    def __init__(self, keys: list[Any]) -> None:
        self.keys = keys

    def as_string(self, i: int) -> str:
        key = self.keys[i]
        if not isinstance(key, str):
            raise TypeError("not a string")
        return key


class _Instanced:
    def __init__(self, pairs: list[tuple[Any, float]]) -> None:
        self.pairs = pairs

    def num_instances(self) -> int:
        return len(self.pairs)

    def correlation_ids(self) -> _Ids:
        return _Ids([k for k, _ in self.pairs])

    def as_double(self, i: int) -> float:
        return self.pairs[i][1]


def _action(pairs: list[tuple[Any, float]] | None) -> Any:
    return SimpleNamespace(metric_by_name=lambda name: None if pairs is None else _Instanced(pairs))


def test_an_opcodes_count_is_its_instances_sum_zero_where_unlisted_and_unknown_without_instances() -> None:
    pairs = [("DFMA", 10.0), ("MUFU.RCP64H", 3.0), ("DFMA", 2.0)]
    assert _instance(_action(pairs), FP64_PIPE_COUNTS[2]).value == 12.0  # DFMA
    assert _instance(_action(pairs), DIVISION_STARTS).value == 3.0
    assert _instance(_action(pairs), FP64_PIPE_COUNTS[0]).value == 0.0  # DADD: not executed
    assert _instance(_action([]), DIVISION_STARTS) is None  # no instances: not measured
    assert _instance(_action(None), DIVISION_STARTS) is None  # no such metric
    assert _instance(_action([(7, 1.0)]), DIVISION_STARTS) is None  # keyed by PC, not by opcode
    assert _instance(_action([("MUFU.RCP64H", math.nan)]), DIVISION_STARTS) is None


@needs_corpus
def test_a_csv_export_holds_no_opcode_counts_and_keeps_the_xu_pipes_hint(tmp_path: Path) -> None:
    """The same kernel from a CSV export (no instanced metrics): no division finding, no bound; the busy XU pipe
    beside the FP64 pipe still names the division step."""
    from ncu_csv_writer import write_ncu_csv

    from ncu_roofline.readers import read_report_isolated
    from ncu_roofline.readers.record import RawReport

    raws = read_report_isolated(CORPUS / BASELINE).kernels
    assert not [n for k in raws for n in k.metrics if n.endswith("]")]  # a report read whole lists none
    export = write_ncu_csv(RawReport("mw.csv", "csv", raws), tmp_path / "mw.csv", prof_lines=False)
    (k,) = [k for r in ncu_roofline.analyze(export).reports for k in r.kernels if k.raw.name == KERNEL]
    assert k.bound_by == FP64_PIPE
    assert not [f for f in k.diagnosis if f.kind == "fp64_division"]
    assert k.diagnosis[0].lever == "fp64_division"
