"""Shared fixtures: the real-report corpus (skipped cleanly when absent) and kernel builders."""

from __future__ import annotations

import csv
from functools import cache
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


@cache
def occupancy_curves(name: str, metric: str) -> dict[tuple[str, float], dict[int, float]]:
    """Per kernel of a corpus report (name, gpu__time_duration.sum): one of Nsight Compute's occupancy curves
    (`launch__occupancy_per_register_count`, `..._per_block_size`), warps per SM by the instance's key, as NVIDIA's
    reader gives it."""
    import ncu_report

    ctx = ncu_report.load_report(str(CORPUS / name))
    out: dict[tuple[str, float], dict[int, float]] = {}
    for r in range(ctx.num_ranges()):
        rng = ctx.range_by_idx(r)
        for j in range(rng.num_actions()):
            action = rng.action_by_idx(j)
            m, duration = (action.metric_by_name(n) for n in (metric, "gpu__time_duration.sum"))
            if m is not None and m.num_instances() and duration is not None:
                ids = m.correlation_ids()
                out[(action.name(), duration.as_double())] = {
                    int(ids.as_uint64(i)): m.as_double(i) for i in range(m.num_instances())}
    return out


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
