"""An L1 wavefront limit names two causes, uncoalesced global accesses and bank conflicts; where the capture tells
neither apart, its step and detail say which section collects the counters that do."""

from __future__ import annotations

import dataclasses

import pytest
from conftest import CORPUS

from ncu_roofline.api.kernel import analyse_kernel
from ncu_roofline.passes.facts import BANK_CONFLICTS, GLOBAL_SECTORS
from ncu_roofline.passes.levers import LSU_WAVEFRONTS
from ncu_roofline.readers import read_materialized
from ncu_roofline.readers.record import Metric, RawKernel

needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"shared report corpus not found at {CORPUS}")
TILED = "fuzigrad__output.ncu-rep"  # a tiled matmul at 69 % of L1 wavefronts, its capture a basic set
COLLECT = "--section MemoryWorkloadAnalysis_Tables"


def _l1_words(raw: RawKernel) -> tuple[str, str]:
    """The L1 limit's detail and next step."""
    k = analyse_kernel(raw)
    (head,) = [f for f in k.diagnosis if f.kind == "unit_throughput"]
    assert head.lever in (LSU_WAVEFRONTS, "lsu_unsplit")  # the steps naming both causes
    words = head.words()
    return words.detail, words.next_step or ""


@needs_corpus
@pytest.mark.parametrize("held", [(), (BANK_CONFLICTS,), (GLOBAL_SECTORS[0],), (BANK_CONFLICTS, GLOBAL_SECTORS[0])])
def test_the_section_that_tells_them_apart_is_named_only_where_neither_is_held(held: tuple[str, ...]) -> None:
    raw = read_materialized(str(CORPUS / TILED)).kernels[0]
    assert not {BANK_CONFLICTS, GLOBAL_SECTORS[0]} & set(raw.metrics)
    # A conflict count above zero keeps the step naming both (zero rules conflicts out: another step).
    metrics = {**raw.metrics, **{name: Metric(1024.0, "") for name in held}}
    detail, step = _l1_words(dataclasses.replace(raw, metrics=metrics))
    assert (COLLECT in detail) == (not held)
    assert len(detail.split()) <= 60
    # its step names both causes, and, where neither is measured, says to collect what tells them apart
    assert "Coalesce global accesses" in step and "bank conflicts" in step
    assert (step.endswith("--section MemoryWorkloadAnalysis_Tables tells which applies.")) == (not held)
