"""Tests of the MODELLED sample report (`sample_reports/`): reproducible, readable, and as modelled.

The generator is a stand-alone script, loaded here from its path. Values in the CSV carry 9
significant digits, so a quantity rebuilt from one or two written values (bytes, rate x
duration) is within 1e-8 relative of the model; whole counts are exact.
"""

from __future__ import annotations

import importlib.util
import itertools
import math
import sys
from pathlib import Path
from types import ModuleType

import pandas as pd
import pytest

import ncu_roofline

SAMPLES = Path(__file__).resolve().parents[1] / "sample_reports"
SCRIPT = SAMPLES / "make_modelled_sample.py"
CSV = SAMPLES / "MODELLED_decode-gemm-sweep_H100-SXM.csv"
BATCHES = (1, 4, 16, 64, 256, 1024)
K = 8192
REL = 1e-8  # 9 significant digits written: at most 5e-9 per value


def _load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_modelled_sample", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while building the class
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(spec.name, None)
    return module


@pytest.fixture(scope="module")
def generator() -> ModuleType:
    return _load_generator()


@pytest.fixture(scope="module")
def kernels() -> pd.DataFrame:
    frame = ncu_roofline.analyze(CSV).kernels
    return frame.sort_values("index").reset_index(drop=True)


def _row(kernels: pd.DataFrame, batch: int) -> pd.Series:
    rows = kernels[kernels["name"] == f"gemm_bf16_decode_n{batch}"]
    assert len(rows) == 1
    return rows.iloc[0]


def test_generator_reproduces_the_committed_csv(generator: ModuleType, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    written = generator.main(tmp_path)
    assert written == tmp_path / CSV.name
    assert "MODELLED" in capsys.readouterr().out
    assert written.read_bytes() == CSV.read_bytes(), (
        "the committed sample differs from a fresh run: rerun "
        "`python sample_reports/make_modelled_sample.py` and commit the CSV"
    )
    # A second run writes the same bytes (no clock, no randomness, no dict-order effects).
    again = generator.write_sample(tmp_path / "again.csv")
    assert again.read_bytes() == written.read_bytes()


def test_the_csv_is_labelled_modelled(kernels: pd.DataFrame) -> None:
    assert "MODELLED" in CSV.name
    text = CSV.read_text(encoding="utf-8")
    assert text.startswith("==PROF== Connected to process 4242 (MODELLED-decode-sweep)\n")
    assert "==PROF== Disconnected from process 4242\n" in text
    assert set(kernels["device"]) == {"NVIDIA H100 80GB HBM3 (MODELLED)"}
    assert set(kernels["compute_capability"]) == {"9.0"}
    assert set(kernels["sm_count"]) == {132}


def test_six_kernels_and_dram_intensity_rises_with_batch(kernels: pd.DataFrame) -> None:
    assert list(kernels["name"]) == [f"gemm_bf16_decode_n{n}" for n in BATCHES]
    assert kernels["usable"].all()
    intensity = [float(x) for x in kernels["intensity_dram_flop_per_byte"]]
    assert all(b > a for a, b in itertools.pairwise(intensity)), intensity
    # About 1 FLOP/byte for one token; I(N) = N (2K + 1) / (2K + 4N).
    for n, got in zip(BATCHES, intensity, strict=False):
        assert got == pytest.approx(n * (2 * K + 1) / (2 * K + 4 * n), rel=REL)


def test_batch_1_by_hand(kernels: pd.DataFrame) -> None:
    k = _row(kernels, 1)
    assert k["traffic_dram_bytes"] == pytest.approx(K * K * 2 + K * 2 * 2, rel=REL)
    assert k["work_tensor_flop"] == 2 * K * K
    assert k["work_fp32_flop"] == K
    assert k["work_fp64_flop"] == 0 and k["work_fp16_flop"] == 0
    assert k["dominant_precision"] == "tensor"
    assert k["bound_by"] == "dram"
    # Duration: DRAM bytes at 80 % of 1,280 B/cycle x 2.619 GHz, plus 3 us, in whole ns.
    expected_s = round(((K * K * 2 + K * 4) / (0.8 * 1280 * 2.619e9) + 3e-6) * 1e9) * 1e-9
    assert k["duration_s"] == pytest.approx(expected_s, rel=REL)
    dram_time_at_peak_s = (K * K * 2 + K * 4) / (1280 * 2.619e9)
    assert k["utilization_dram"] == pytest.approx(dram_time_at_peak_s / expected_s, rel=REL)


def test_batch_1024_is_tensor_bound(kernels: pd.DataFrame) -> None:
    k = _row(kernels, 1024)
    assert k["work_tensor_flop"] == 2 * 1024 * K * K
    assert k["bound_by"] == "tensor"
    assert k["regime"] == "at_limit"
    assert k["peak_tensor_flop_per_s"] == pytest.approx(132 * 4096 * 1.755e9, rel=REL)


def test_bound_by_crosses_from_dram_to_tensor_past_the_ridge(kernels: pd.DataFrame) -> None:
    assert list(kernels["bound_by"]) == ["dram"] * 5 + ["tensor"]
    ridge = 132 * 4096 * 1.755e9 / (1280 * 2.619e9)
    intensity = dict(zip(BATCHES, kernels["intensity_dram_flop_per_byte"], strict=False))
    assert intensity[256] < ridge < intensity[1024]


def test_the_analysis_matches_the_model(generator: ModuleType, kernels: pd.DataFrame) -> None:
    for n in BATCHES:
        model = generator.model_kernel(n)
        k = _row(kernels, n)
        assert k["duration_s"] == pytest.approx(model.duration_s, rel=REL)
        assert k["traffic_dram_bytes"] == pytest.approx(
            model.dram_read_bytes + model.dram_write_bytes, rel=REL)
        assert k["traffic_l2_bytes"] == pytest.approx(model.l2_bytes, rel=REL)
        assert k["traffic_l1_bytes"] == pytest.approx(model.l2_bytes, rel=REL)
        assert k["work_tensor_flop"] == model.tensor_ops
        # The model never puts a kernel above one of its own roofs.
        assert "above_roof" not in (k["flags"] or ""), k["flags"]
        for roof in ("dram", "l2", "l1", "fp64", "fp32", "fp16", "tensor"):
            u = float(k[f"utilization_{roof}"])
            assert math.isfinite(u) and 0 <= u <= 1, (n, roof, u)
