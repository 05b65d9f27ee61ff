"""Shared fixtures: the real-report corpus (skipped cleanly when absent) and kernel builders."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from ncu_roofline.readers.record import Metric, RawKernel

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "reports"
BAD = CORPUS / "bad"


def corpus_files() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    return sorted(p for p in CORPUS.iterdir() if p.suffix in (".ncu-rep", ".nsight-cuprof-report"))


def manifest() -> dict[str, dict[str, str]]:
    path = CORPUS / "MANIFEST.tsv"
    if not path.is_file():
        return {}
    with path.open(encoding="utf-8") as fh:
        return {row["file"]: row for row in csv.DictReader(fh, delimiter="\t")}


@pytest.fixture
def corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.skip(f"shared report corpus not found at {CORPUS}")
    return CORPUS


def make_kernel(metrics: dict[str, float | tuple[float, str] | str], **identity) -> RawKernel:
    """A RawKernel from {name: value | (value, unit) | string}."""
    built: dict[str, Metric] = {}
    for name, v in metrics.items():
        if isinstance(v, tuple):
            built[name] = Metric(float(v[0]), v[1])
        elif isinstance(v, str):
            built[name] = Metric(v, "")
        else:
            built[name] = Metric(float(v), "")
    identity.setdefault("index", 0)
    identity.setdefault("name", "k")
    identity.setdefault("demangled_name", identity["name"])
    identity.setdefault("device", "Test GPU")
    identity.setdefault("compute_capability", "9.0")
    return RawKernel(metrics=built, **identity)
