"""The issue slots' share per elapsed cycle (Speed Of Light's), and Nsight Compute's Issue Slots Busy per active cycle
beside it where SMs idled."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS

import ncu_roofline
from ncu_roofline.passes.facts import ISSUE_ACTIVE

needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"shared report corpus not found at {CORPUS}")

@needs_corpus
def test_an_issue_slot_limit_states_nsight_computes_share_per_active_cycle_where_sms_idled(tmp_path: Path) -> None:
    """The issue slots' share counts per elapsed cycle, as Speed Of Light does; Nsight Compute's Issue Slots Busy
    counts per active cycle. Where the two differ by a tenth or more (SMs idled), the finding states the second."""
    from ncu_csv_writer import write_ncu_csv

    from ncu_roofline.readers import read_report_isolated
    from ncu_roofline.readers.record import Metric, RawReport

    raws = read_report_isolated(CORPUS / "self-join-mistic__ilpProf.ncu-rep").kernels
    plain = [dataclasses.replace(k, metrics={n: m for n, m in k.metrics.items() if isinstance(m, Metric)},
                                 rules=()) for k in raws]
    first = plain[0]
    elapsed = first.metrics["sm__issue_active.avg.pct_of_peak_sustained_elapsed"].value  # 42.37
    active = first.metrics[ISSUE_ACTIVE].value  # 43.27: under a tenth apart
    assert active < 1.1 * elapsed
    idled = dict(first.metrics) | {ISSUE_ACTIVE: Metric(60.0, "%")}
    edited = [dataclasses.replace(first, metrics=idled), *plain[1:]]

    def details(kernels: list[Any], name: str) -> list[str]:
        path = write_ncu_csv(RawReport(name, "csv", kernels), tmp_path / name, prof_lines=False)
        (k, *_) = [k for r in ncu_roofline.analyze(path).reports for k in r.kernels]
        assert k.bound_by == "sm__issue_active"
        return [f.words().detail for f in k.diagnosis if f.kind == "unit_throughput"]

    (detail,) = details(edited, "idled.csv")
    assert detail.endswith("Per active cycle, as Nsight Compute's Issue Slots Busy counts, it is 60 %.")
    (detail,) = details(plain, "as_read.csv")
    assert "Per active cycle" not in detail
