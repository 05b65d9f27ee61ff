"""An L1 wavefront limit names two causes, uncoalesced global accesses and bank conflicts; where the capture tells
neither apart, its detail says which section collects the counters that do."""

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


def _l1_detail(raw: RawKernel) -> str:
    k = analyse_kernel(raw)
    (head,) = [f for f in k.diagnosis if f.kind == "unit_throughput"]
    assert head.lever == LSU_WAVEFRONTS  # the step naming both causes
    return head.words().detail


@needs_corpus
@pytest.mark.parametrize("held", [(), (BANK_CONFLICTS,), (GLOBAL_SECTORS[0],), (BANK_CONFLICTS, GLOBAL_SECTORS[0])])
def test_the_section_that_tells_them_apart_is_named_only_where_neither_is_held(held: tuple[str, ...]) -> None:
    raw = read_materialized(str(CORPUS / TILED)).kernels[0]
    assert not {BANK_CONFLICTS, GLOBAL_SECTORS[0]} & set(raw.metrics)
    # A conflict count above zero keeps the step naming both (zero rules conflicts out: another step).
    metrics = {**raw.metrics, **{name: Metric(1024.0, "") for name in held}}
    detail = _l1_detail(dataclasses.replace(raw, metrics=metrics))
    assert (COLLECT in detail) == (not held)
    assert len(detail.split()) <= 60
