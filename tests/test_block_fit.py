"""The warps larger blocks reach, where the blocks-per-SM limit alone binds: at most what the register and warp-slot
limits allow at today's warps per block, the most Nsight Compute's occupancy calculator gives any larger block
(`launch__occupancy_per_block_size`)."""

from __future__ import annotations

import pytest
from conftest import CORPUS, corpus_files, occupancy_curves

import ncu_roofline
from ncu_roofline.passes.latency import block_fit

needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"shared report corpus not found at {CORPUS}")
REPORTS = [p.name for p in corpus_files()]


@needs_corpus
@pytest.mark.parametrize("name", REPORTS)
def test_larger_blocks_reach_the_warps_nsight_compute_counts(name: str) -> None:
    checked, wrong = 0, []
    for k in (k for r in ncu_roofline.analyze(CORPUS / name, isolate=True).reports for k in r.kernels):
        for f in (f for f in k.diagnosis if f.lever == "block_limit" and f.figures.get("next_warps") is not None):
            key = (k.raw.name, k.raw.number("gpu__time_duration.sum") or -1.0)
            curve = occupancy_curves(name, "launch__occupancy_per_block_size").get(key)
            if curve is None:
                continue
            threads = int(k.launch["block_threads"])
            larger = max(w for size, w in curve.items() if size > threads)
            checked += 1
            if curve[threads] != f.figures["warps"] or larger != f.figures["next_warps"]:
                wrong.append(f"{k.raw.name}: {curve[threads]} warps now, up to {larger} larger: {f.figures}")
    assert not wrong, "\n".join(wrong)
    if name == "self-join-mistic__ilpProf.ncu-rep":
        assert checked == 1  # 32-thread blocks, 32 blocks per SM: 32 warps; 48 registers allow 40


def test_only_where_the_block_limit_alone_binds() -> None:
    launch = {"block_threads": 32.0, "occupancy_limit_blocks": 32.0, "occupancy_limit_registers": 40.0,
              "occupancy_limit_warps": 64.0, "occupancy_limit_shared_mem": 164.0, "shared_memory_per_block": 0.0}
    assert block_fit(launch) == {"next_warps": 40.0, "next_by": "registers", "warps": 32.0}
    assert block_fit(launch | {"occupancy_limit_registers": 80.0}) == {
        "next_warps": 64.0, "next_by": "its warp slots", "warps": 32.0}
    assert block_fit(launch | {"occupancy_limit_registers": 32.0}) == {}  # registers tie: not the limit alone
    assert block_fit(launch | {"shared_memory_per_block": 4096.0}) == {}  # larger blocks may need more of it
    assert block_fit({k: v for k, v in launch.items() if k not in ("occupancy_limit_registers",
                                                                  "occupancy_limit_warps")}) == {}
