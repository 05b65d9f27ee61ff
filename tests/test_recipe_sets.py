"""Launches that differ only by counter noise share one recipe set, over every kernel of the corpus.

A report writes each distinct pair of `provenance` and `missing` lists once (`recipe_sets`), so those texts must
depend on which recipes a launch's counters allow, never on the counters' values. Each kernel is modelled again
with every counter moved by at most 1 % (a seeded draw per metric), as launches of one kernel differ: no corpus
kernel takes another decision then, so its texts must be the same. A text quoting a figure (bytes, a share) fails
here, whatever the kernel (11 of the 33 captures did, before the texts lost their figures).
"""

from __future__ import annotations

import dataclasses
import random
import zlib
from pathlib import Path

import pytest
from conftest import corpus_files

from ncu_roofline.api.kernel import analyse_kernel
from ncu_roofline.readers import read_report_isolated
from ncu_roofline.readers.record import Metric, RawKernel

NOISE = 1e-2


def _noisy(k: RawKernel) -> RawKernel:
    metrics = {}
    for name, m in k.metrics.items():
        value = m.value
        counter = "__" in name and not name.startswith(("device__", "launch__"))
        if counter and m.is_number and not isinstance(value, bool):
            draw = random.Random(zlib.crc32(name.encode())).uniform(-NOISE, NOISE)
            value = float(value) * (1.0 + draw)
        metrics[name] = Metric(value, m.unit)
    return dataclasses.replace(k, metrics=metrics)


def _texts(k: RawKernel) -> tuple[object, ...]:
    model = analyse_kernel(k)  # the passes add missing entries too
    return model.usable, model.provenance, [(m.quantity, m.reason, m.collect_with) for m in model.missing]


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name)
def test_counter_noise_leaves_provenance_and_missing_unchanged(path: Path) -> None:
    # read in the reader's child process: NVIDIA's reader keeps the memory of every report it loads, and this
    # process reads the corpus enough times already
    for k in read_report_isolated(path).kernels:
        assert _texts(_noisy(k)) == _texts(k), f"kernel {k.index} ({k.name})"
