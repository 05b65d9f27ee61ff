"""The register count a latency finding asks for: the most that fit one block more per SM, as Nsight Compute's
occupancy calculator counts it (`launch__occupancy_per_register_count`)."""

from __future__ import annotations

import pytest
from conftest import CORPUS, corpus_files, occupancy_curves

import ncu_roofline
from ncu_roofline.passes.latency import register_fit

needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"shared report corpus not found at {CORPUS}")
REPORTS = [p.name for p in corpus_files()]


@needs_corpus
@pytest.mark.parametrize("name", REPORTS)
def test_the_register_count_asked_for_fits_the_warps_nsight_compute_counts(name: str) -> None:
    checked, wrong = 0, []
    for k in (k for r in ncu_roofline.analyze(CORPUS / name, isolate=True).reports for k in r.kernels):
        for f in (f for f in k.diagnosis if f.lever == "registers" and f.figures.get("fit_regs") is not None):
            key = (k.raw.name, k.raw.number("gpu__time_duration.sum") or -1.0)
            curve = occupancy_curves(name, "launch__occupancy_per_register_count").get(key)
            if curve is None:
                continue
            fit, regs = int(f.figures["fit_regs"]), int(k.launch["registers_per_thread"])
            checked += 1
            if curve[fit] != f.figures["fit_warps"] or curve[regs] != f.figures["warps"]:
                wrong.append(f"{k.raw.name}: at {fit} {curve[fit]} warps, at {regs} {curve[regs]}: {f.figures}")
            if curve.get(fit + 1, 0.0) >= curve[fit]:  # one register more loses the block
                wrong.append(f"{k.raw.name}: {fit + 1} registers still fit {curve[fit + 1]} warps")
    assert not wrong, "\n".join(wrong)
    if name == "self-join-mistic__profileBIGCROSS3.out.ncu-rep":
        assert checked == 1  # 145 registers, 256 threads: 1 block, 8 warps; 128 fit 2 blocks, 16 warps


def test_only_where_registers_alone_bind() -> None:
    launch = {"registers_per_thread": 145.0, "occupancy_limit_registers": 1.0, "block_threads": 256.0,
              "occupancy_limit_shared_mem": 164.0, "occupancy_limit_blocks": 32.0, "occupancy_limit_warps": 8.0}
    assert register_fit(launch, 65536.0) == {"fit_regs": 128, "fit_warps": 16.0, "warps": 8.0}
    assert register_fit(launch | {"occupancy_limit_shared_mem": 1.0}, 65536.0) == {}  # shared memory ties
    assert register_fit(launch | {"occupancy_limit_warps": 1.5}, 65536.0) == {}  # warps allow no second block
    assert register_fit(launch, None) == {}  # the register file's size is not in the report
    assert register_fit(launch | {"registers_per_thread": 40.0, "occupancy_limit_registers": 6.0}, 65536.0) == {
        "fit_regs": 32, "fit_warps": 56.0, "warps": 48.0}
