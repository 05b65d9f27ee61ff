"""A run's launches summed from its columns (`api.run_sums.RunTable`, `add_rows`) sum as the same launches added one
by one (`add_launch`): every figure a group reports of them, to the last bit, with shares among them that are not
finite (the group's mean then weighs the finite shares alone), both infinities among them too."""

from __future__ import annotations

import copy
import dataclasses
import math

import numpy as np
from conftest import make_kernel
from test_model import base_metrics

from ncu_roofline.api.kernel import AnalysedKernel, model_launch
from ncu_roofline.api.run_sums import RunTable, add_launch, add_rows
from ncu_roofline.api.sums import GroupSums
from ncu_roofline.readers.values import Values
from ncu_roofline.settings import AnalysisSettings


def _with(k: AnalysedKernel, duration: object, shares: dict[str, object]) -> AnalysedKernel:
    """`k` with this duration and these roof shares (plain numbers, or columns for a run)."""
    out = copy.copy(k)
    assert k.q.duration_s is not None
    out.q = dataclasses.replace(k.q, duration_s=dataclasses.replace(k.q.duration_s, value=duration))
    out.utilization = shares  # type: ignore[assignment]
    return out


def test_a_run_sums_as_its_launches_added_one_by_one() -> None:
    k = model_launch(make_kernel(base_metrics(), index=0, name="k"), AnalysisSettings())
    assert k.usable and len(k.utilization) >= 2
    rng = np.random.default_rng(5)
    n = 70  # past the rows a group holds before it sums (`sums.HELD_ROWS`)
    durations = rng.uniform(1e-6, 1e-3, n)
    shares = {name: rng.uniform(0, 1, n) for name in k.utilization}
    first, second = list(shares)[:2]
    shares[first][[2, 40]] = math.inf
    shares[second][5], shares[second][66] = math.inf, -math.inf  # both infinities: no sum, the finite mean
    one_by_one, together = GroupSums(False), GroupSums(False)
    for j in range(n):
        add_launch(one_by_one, _with(k, float(durations[j]), {r: float(a[j]) for r, a in shares.items()}), ())
    run = _with(k, Values(durations), {r: Values(a) for r, a in shares.items()})
    add_rows(together, RunTable(run, n), list(range(n)), [k.raw] * n, (), lambda: k)
    expected = one_by_one.weighted_shares()
    assert math.isfinite(expected[first]) and math.isfinite(expected[second])  # the finite shares' means
    assert together.weighted_shares() == expected
    assert together.total_time() == one_by_one.total_time() == math.fsum(durations)
    assert together.weighted_units() == one_by_one.weighted_units()
    assert together.summed_work(("fp32", "dram")) == one_by_one.summed_work(("fp32", "dram"))
    assert list(together.durations) == list(one_by_one.durations) == durations.tolist()
    assert together.timed_count == one_by_one.timed_count == n


def test_launches_by_kind_are_every_launch_once_in_launch_order() -> None:
    """`LaunchColumns.by_kind`: kinds in the order they first ran, each with its launches' positions (ascending)
    and their numbers."""
    from array import array

    from ncu_roofline.api.sums import ROOF_KEYS, LaunchColumns

    columns = LaunchColumns()
    rng = np.random.default_rng(9)
    codes = [0, 1, 0, 2, 1, 1, 0, *rng.integers(0, 3, 50).tolist()]
    columns.kinds = ["a", "b", "c"]  # type: ignore[list-item]
    columns.codes = array("I", codes)
    columns.index = array("q", range(100, 100 + len(codes)))
    numbers = rng.uniform(0, 1, (len(codes), 2 + len(ROOF_KEYS)))  # duration, limiter share, roofs
    columns.numbers = array("d", numbers.ravel().tolist())
    seen = []
    for kind, at, held in columns.by_kind():
        assert at.tolist() == [n for n, c in enumerate(codes) if columns.kinds[c] == kind]
        assert held.tolist() == numbers[at].tolist()
        seen.append(kind)
    assert seen == ["a", "b", "c"]
