"""Launch geometry in numbers: block slots, waves, the last wave's fill, the idle block-slot share, the nearest grids of
whole waves and what binds the blocks per SM, on hand-made launches and on shared captures, each figure computed by
hand from the values NVIDIA's reader gives (launch__grid_size, device__attribute_multiprocessor_count,
launch__occupancy_limit_*, launch__waves_per_multiprocessor)."""

from __future__ import annotations

import math
from functools import cache

import pytest
from conftest import CORPUS, make_kernel

import ncu_roofline
from ncu_roofline.api.kernel import AnalysedKernel, analyse_kernel
from ncu_roofline.model.geometry import geometry_figures, launch_geometry, limiter_figures

needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"shared report corpus not found at {CORPUS}")
SM = "sm__throughput.avg.pct_of_peak_sustained_elapsed"


def _launch(grid: float, sms: float, waves: float | None = None, **limits: float) -> dict[str, float | None]:
    return {"grid_blocks": grid, "sm_count": sms, "waves_per_sm": waves} | {
        f"occupancy_limit_{k}": v for k, v in limits.items()}


def test_512_blocks_on_340_slots_are_1_51_waves() -> None:
    """68 SMs × 5 blocks (registers allow 5, shared memory 8, block limit 16, warps 8) = 340 slots; 512 / 340 =
    1.506 waves: the last holds 172 blocks (51 %), the idle slot-time is (2 × 340 − 512) / (2 × 340) = 24.7 %, and
    340 or 680 blocks fill whole waves."""
    launch = _launch(512, 68, registers=5, shared_mem=8, blocks=16, warps=8) | {"registers_per_thread": 96.0}
    g = launch_geometry(launch)
    assert g is not None and (g.slots, g.per_sm, g.whole) == (340, 5, 2)
    assert g.waves == pytest.approx(512 / 340) and g.last_fill == pytest.approx(172 / 340)
    assert g.idle_share == pytest.approx(168 / 680) and (g.grid_down, g.grid_up) == (340, 680)
    figures = geometry_figures(launch)
    assert figures["occ_by"] == "registers" and figures["occ_blocks"] == 5 and figures["occ_regs"] == 96
    assert figures["full_down"] == 1 and figures["idle_slots"] == pytest.approx(0.247, abs=5e-4)


def test_nvidias_waves_decide_where_the_limits_do_not_give_them() -> None:
    """No occupancy limits: the slots are grid ÷ launch__waves_per_multiprocessor (128 / 2.1333 = 60)."""
    g = launch_geometry(_launch(128, 20, 128 / 60))
    assert g is not None and g.slots == 60 and g.per_sm is None
    assert g.whole == 3 and g.last_fill == pytest.approx(8 / 60) and (g.grid_down, g.grid_up) == (120, 180)
    assert "occ_by" not in geometry_figures(_launch(128, 20, 128 / 60))
    assert launch_geometry(_launch(128, 20)) is None  # neither limits nor waves: no slots to count
    assert launch_geometry({"grid_blocks": None, "sm_count": 20.0}) is None


@pytest.mark.parametrize(("limits", "extra", "by", "figure"), [
    ({"registers": 2, "shared_mem": 3, "blocks": 32, "warps": 8}, {"registers_per_thread": 122.0}, "registers",
     ("occ_regs", 122)),
    ({"registers": 8, "shared_mem": 1, "blocks": 32, "warps": 8}, {"shared_memory_per_block": 148992.0},
     "shared memory", ("occ_smem", 148992)),
    ({"registers": 8, "shared_mem": 4, "blocks": 24, "warps": 3}, {"block_threads": 512.0}, "block size",
     ("occ_threads", 512)),
])
def test_the_limit_that_binds_is_named_with_its_figure(limits: dict, extra: dict, by: str,
                                                       figure: tuple[str, int]) -> None:
    figures = limiter_figures(_launch(100, 10, **limits) | extra)
    assert figures["occ_by"] == by and figures[figure[0]] == figure[1] and figures["occ_end"] == ""
    assert sum(figures[k] is not None for k in ("occ_regs", "occ_smem", "occ_threads")) == 1


def _at_limit(grid: float, sms: float, waves: float, **launch: float) -> AnalysedKernel:
    """A kernel at a limit (SM throughput 70 %) with a launch geometry."""
    metrics = {"gpu__time_duration.sum": (100_000.0, "ns"), SM: (70.0, "%"),
               "launch__grid_size": grid, "device__attribute_multiprocessor_count": sms,
               "launch__waves_per_multiprocessor": waves} | {f"launch__{k}": v for k, v in launch.items()}
    return analyse_kernel(make_kernel(metrics))


def test_a_partial_last_wave_says_its_numbers_and_the_grids_of_whole_waves() -> None:
    k = _at_limit(512, 68, 512 / 340, occupancy_limit_registers=5, occupancy_limit_shared_mem=8,
                  occupancy_limit_blocks=16, occupancy_limit_warps=8, registers_per_thread=96)
    (tail,) = [f for f in k.diagnosis if f.kind == "tail_effect"]
    w = tail.words()
    assert w.headline == "1.51 waves: last 51 % full, 25 % of block-slot time idle"
    assert w.next_step == "Launch 680 blocks, 2 full waves, or 340 with more work each, instead of 512."
    assert "512 blocks on 340 block slots make 1.51 waves; 340 or 680 blocks fill whole waves." in w.detail
    assert "Registers: 5 block(s) per SM at 96 registers a thread." in w.detail
    # equal block times: the last wave is half the run, all the work at the full wave's pace 1.51 / 2 of it
    assert tail.speedup == pytest.approx(min(2 / (512 / 340), 1 / 0.7))


def test_a_grid_under_one_wave_at_a_limit_gets_a_finding_with_its_numbers() -> None:
    """64 blocks on 68 SMs, 1 block per SM (shared memory: 100 KB a block): 0.94 waves, 4 slots empty the whole
    run; the same work over 68 blocks runs up to 68 / 64 = 1.06× faster (SM throughput at 70 % allows 1.43×)."""
    k = _at_limit(64, 68, 64 / 68, occupancy_limit_registers=2, occupancy_limit_shared_mem=1,
                  occupancy_limit_blocks=16, occupancy_limit_warps=4, shared_mem_per_block_static=102400,
                  shared_mem_per_block_dynamic=0)
    assert k.regime == "at_limit"
    (under,) = [f for f in k.diagnosis if f.kind == "too_little_work"]
    w = under.words()
    assert w.headline == "64 blocks for 68 block slots: 0.94 of a wave"
    assert w.next_step == "Launch 68 blocks, one full wave, instead of 64: split the same work finer."
    assert "Shared memory: 1 block(s) per SM at 102,400 bytes a block." in w.detail
    assert "6 % stay empty the whole run" in w.detail
    assert under.speedup == pytest.approx(68 / 64) and under.basis == ("spread",)


@cache
def _kernels(name: str) -> list[AnalysedKernel]:
    return [k for r in ncu_roofline.analyze(CORPUS / name).reports for k in r.kernels if k.usable]


def _hand(k: AnalysedKernel) -> tuple[float, float, float]:
    """(slots, waves, idle share) by hand from the reader's launch values."""
    raw = k.raw.number
    per_sm = min(v for n in ("registers", "shared_mem", "blocks", "warps")
                 if (v := raw(f"launch__occupancy_limit_{n}")) is not None)
    slots = per_sm * raw("device__attribute_multiprocessor_count")
    waves = raw("launch__grid_size") / slots
    assert waves == pytest.approx(raw("launch__waves_per_multiprocessor"))
    return slots, waves, 1 - waves / math.ceil(waves)


@needs_corpus
def test_coalda_128_blocks_on_60_slots() -> None:
    """RTX 3070 laptop-class 20 SMs, 512-thread blocks: the warp limit allows 3 blocks per SM → 60 slots, 128
    blocks = 2.13 waves, the last 8 blocks (13 %); idle slot-time 1 − 2.133 / 3 = 29 %; 120 or 180 blocks."""
    (k,) = _kernels("coalda__origin.ncu-rep")
    slots, waves, idle = _hand(k)
    assert (slots, round(waves, 2), round(idle, 2)) == (60, 2.13, 0.29)
    (tail,) = [f for f in k.diagnosis if f.kind == "tail_effect"]
    w = tail.words()
    assert w.headline == "2.13 waves: last 13 % full, 29 % of block-slot time idle"
    assert w.next_step == "Launch 180 blocks, 3 full waves, or 120 with more work each, instead of 128."
    assert "Block size: 3 block(s) per SM at 512 threads a block." in w.detail


@needs_corpus
@pytest.mark.parametrize(("name", "kernel", "grid", "slots", "by"), [
    # RTX 3080, 68 SMs: 16 KB of shared memory a block allows 5 blocks per SM; DRAM at 80 %
    ("cuda-gemm-practice__gemm_v9.ncu-rep", "gemm", 275, 340,
     "Shared memory: 5 block(s) per SM at 16,384 bytes a block."),
    # A100, 108 SMs: 40 registers a thread allow 6 blocks of 256 threads per SM
    ("cutlass__report-s8.ncu-rep", "ReferenceGemm_kernel", 576, 648,
     "Registers: 6 block(s) per SM at 40 registers a thread."),
])
def test_a_capture_under_one_wave_at_a_limit_says_its_numbers(name: str, kernel: str, grid: int, slots: int,
                                                               by: str) -> None:
    (k,) = [k for k in _kernels(name) if k.raw.name.startswith(kernel)]
    hand_slots, waves, _ = _hand(k)
    assert (k.regime, k.launch["grid_blocks"], hand_slots) == ("at_limit", grid, slots) and waves < 1
    (under,) = [f for f in k.diagnosis if f.kind == "too_little_work"]
    w = under.words()
    assert w.headline == f"{grid} blocks for {slots} block slots: {waves:.2g} of a wave"
    assert w.next_step == f"Launch {slots} blocks, one full wave, instead of {grid}: split the same work finer."
    assert by in w.detail and f"{1 - waves:.0%}".replace("%", " %") in w.detail
    assert under.speedup == pytest.approx(min(1 / waves, 1 / k.limiter_share))


@needs_corpus
def test_idle_sms_name_the_waves_not_a_list_of_causes() -> None:
    """rms_norm_vector_kernel_float4 (H100-class, 114 SMs): 8 blocks per SM (registers and block size tie) → 912
    slots; 1,024 blocks make 1.12 waves, the last 112 blocks 12 % full."""
    ks = [k for k in _kernels("cs599k__2025-04-21-v1.ncu-rep") if k.raw.name.startswith("rms_norm")]
    assert ks
    for k in ks:
        slots, waves, _ = _hand(k)
        assert (slots, round(waves, 2)) == (912, 1.12)
        (latency,) = [f for f in k.diagnosis if f.kind == "latency" and f.variant == "idle"]
        detail = latency.words().detail
        assert "1,024 blocks are 1.12 waves of 912, the last 12 % full." in detail
        assert "ramp-up" not in detail
        assert "Registers and block size: 8 block(s) per SM at 32 registers a thread." in detail
