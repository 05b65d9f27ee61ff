"""Launches modelled in bulk (`api.bulk.model_launches`: the model run over columns of a block of CSV rows) are
the launches `model_launch` makes of each row, field by field, on every kernel of the corpus.

Each corpus report is written as a CSV export whose rows repeat its kernels with counter noise (a seeded draw of
up to 2 % per launch and counter, as launches of one kernel differ), with a few rows the columns cannot take
whole: a cell left empty, a NaN, an infinity, a text, a negative count. Every row's launch must equal the one
modelled on its own, and most rows must come from runs over columns: a model change the columns cannot follow
shows up here as a slower path, before it shows up in a benchmark.
"""

from __future__ import annotations

import dataclasses
import math
import random
from pathlib import Path

import numpy as np
import pytest
from conftest import corpus_files
from ncu_csv_writer import write_ncu_csv

from ncu_roofline.api.bulk import BulkTally, model_launches
from ncu_roofline.api.kernel import model_launch, run_passes
from ncu_roofline.readers import read_report_isolated
from ncu_roofline.readers.csv_export import CsvExport, analysis_columns
from ncu_roofline.readers.record import Metric, RawKernel, RawReport
from ncu_roofline.readers.values import Decision, PerLaunch, Split, Values
from ncu_roofline.settings import AnalysisSettings

NOISE = 2e-2
LAUNCHES = 96  # at least, and 48 of each kernel


def _counter(name: str, m: Metric) -> bool:
    return "__" in name and not name.startswith(("device__", "launch__")) and type(m.value) is float


# Cells the columns cannot take whole, each put in a later launch: absent, NaN, infinite, a text, a negative count
ODD: tuple[float | str | None, ...] = (None, math.nan, math.inf, "n/a-ish text", -5.0)


def _launches(kernels: list[RawKernel]) -> list[RawKernel]:
    draw = random.Random(7)
    out = []
    for i in range(max(LAUNCHES, 48 * len(kernels))):
        k = kernels[i % len(kernels)]
        metrics = {n: Metric(m.value * (1 + draw.uniform(-NOISE, NOISE)), m.unit) if _counter(n, m) and i >= len(
            kernels) else m for n, m in k.metrics.items()}
        out.append(dataclasses.replace(k, index=i, metrics=metrics, rules=()))
    # in columns the analysis reads (its recipes' and unit throughputs' metrics), so that the model meets them
    read = analysis_columns()
    for j, odd in enumerate(ODD):
        at = 2 * len(kernels) + 3 * j
        k = out[at]
        counters = sorted(n for n, m in k.metrics.items() if _counter(n, m) and n in read)
        if at >= len(out) - 1 or not counters:
            continue
        name = counters[(j * 7919) % len(counters)]
        metrics = dict(k.metrics)
        if odd is None:
            del metrics[name]
        else:
            metrics[name] = Metric(odd, metrics[name].unit)
        out[at] = dataclasses.replace(k, metrics=metrics)
    return out


def _modelled(export: Path, bulk: bool, tally: BulkTally) -> tuple[list[dict[str, object]], list[str], list[object]]:
    """Every launch of an export as its record, the export's warnings, and what each row read (`fetched`): each
    launch modelled alone, or (`bulk`) all but the first together."""
    settings = AnalysisSettings()
    reader = CsvExport(export)
    rows = reader.kernels()
    first = next(rows)
    run_passes(model_launch(first, settings))  # as `report` reads: its analysis teaches the reader which columns
    launches = [model_launch(first, settings)]  # to parse at once
    rest = list(rows)
    launches += model_launches(rest, settings, tally) if bulk else [model_launch(k, settings) for k in rest]
    raws = [first, *rest]
    return ([k.to_dict(findings=False) for k in launches], reader.report(raws).warnings,
            [sorted(k.metrics.fetched().items()) for k in raws])  # type: ignore[attr-defined]


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name)
def test_bulk_launches_equal_launches_modelled_one_by_one(path: Path, tmp_path: Path) -> None:
    kernels = read_report_isolated(path).kernels  # NVIDIA's reader in a child: its memory stays there
    export = write_ncu_csv(RawReport("export", "csv", _launches(kernels)), tmp_path / "export.csv")
    tally = BulkTally()
    alone = _modelled(export, False, BulkTally())
    bulk = _modelled(export, True, tally)
    for got, expected in zip(bulk[0], alone[0], strict=True):
        assert got == expected, f"launch {expected['index']} ({expected['name']})"
    assert bulk[1] == alone[1]  # the same warnings: the rows read what they read alone, no more
    assert bulk[2] == alone[2]
    assert tally.unequal == 0  # no run over columns failed its check
    rest = len(bulk[0]) - 1
    assert tally.columns + tally.single == rest
    # Most launches come from runs over columns (over the corpus, 60-100 %: 8-120 launches a run), though the noise
    # parts the launches of one kernel where two of its limits are within it of each other.
    assert tally.columns >= 0.6 * rest, vars(tally)


def test_values_do_float_arithmetic_element_by_element() -> None:
    a, b = [0.1, 3.0, 1e300, -2.5], [0.2, 7.0, 1e10, 4.0]  # 1e300 * 1e10 overflows
    va, vb = Values(np.array(a)), Values(np.array(b))
    with np.errstate(all="ignore"):  # as `model_launches` runs the model: an overflow is infinity, without a word
        assert (va * vb).a.tolist()[2] == math.inf
        for got, op in (((va + vb), lambda x, y: x + y), ((va - vb), lambda x, y: x - y),
                        ((va * vb), lambda x, y: x * y), ((va / vb), lambda x, y: x / y),
                        ((2.0 * va + 1), lambda x, _: 2.0 * x + 1), ((1 - va), lambda x, _: 1 - x),
                        ((3 / vb), lambda _, y: 3 / y), (abs(-va), lambda x, _: abs(x))):
            assert got.a.tolist() == [op(x, y) for x, y in zip(a, b, strict=True)]
    assert bool(va < 1e301) is True and bool(va > 1e301) is False


def test_a_decision_the_launches_do_not_share_splits_them() -> None:
    v = Values(np.array([1.0, -1.0, 2.0]))
    with pytest.raises(Split) as split:
        bool(v > 0)
    assert [g.tolist() for g in split.value.groups] == [[True, False, True], [False, True, False]]
    assert isinstance(v > 0, Decision) and not isinstance(split.value, Exception)  # no `except Exception` catches it


@pytest.mark.parametrize("use", [float, int, lambda v: f"{v:.3g}", repr, round, lambda v: [0, 1, 2][v]])
def test_a_plain_value_the_launches_do_not_share_is_per_launch(use) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(PerLaunch):
        use(Values(np.array([1.0, 2.0])))


def test_a_value_every_launch_holds_converts() -> None:
    same = Values(np.array([2.5, 2.5]))
    assert float(same) == 2.5 and f"{same:.2f}" == "2.50"


def test_a_division_by_zero_is_per_launch() -> None:
    with pytest.raises(PerLaunch):
        Values(np.array([1.0, 2.0])) / Values(np.array([1.0, 0.0]))  # Python raises for the second launch


def test_largest_and_smallest_are_max_and_min_launch_by_launch() -> None:
    from ncu_roofline.readers.values import largest, smallest

    assert largest(1.0, 3.0, 2.0) == 3.0 and smallest(1.0, 3.0, 2.0) == 1.0  # plain floats: max and min
    a, b = Values(np.array([1.0, 5.0, -2.0])), Values(np.array([4.0, 0.5, -1.0]))
    assert largest(a, b, 0.0).a.tolist() == [max(x, y, 0.0) for x, y in ((1.0, 4.0), (5.0, 0.5), (-2.0, -1.0))]
    assert smallest(1.0, a).a.tolist() == [1.0, 1.0, -2.0]
    with pytest.raises(PerLaunch):  # Python's max answers NaN by the order of its arguments: one by one
        largest(Values(np.array([1.0, math.nan])), 2.0)


def test_added_adds_left_to_right_as_python_3_11_sums_floats() -> None:
    from ncu_roofline.readers.values import added

    values = [1e16, 1.0, -1e16, 3.0]  # a compensated sum (Python 3.12's `sum`) gives 4.0
    plain = 0.0
    for v in values:
        plain += v
    assert added(values) == plain == 3.0
    columns = added(Values(np.array([v, v])) for v in values)
    assert columns.a.tolist() == [plain, plain]


def test_a_blocks_rows_are_stacked_from_their_blocks_matrices(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The rows of a block of CSV rows hold views of the block's matrix of parsed values; `hot_matrix` stacks
    consecutive rows of one block as one slice (not row by row), and a row that took its own values (`own`, a
    group's longest launch) or holds a matrix of one row (a row read alone) on its own: the matrix is every row's
    values, in order."""
    from ncu_roofline.readers import bulk

    files = corpus_files()
    if not files:
        pytest.skip("shared report corpus not found")
    kernels = read_report_isolated(files[0]).kernels
    export = write_ncu_csv(RawReport("export", "csv", _launches(kernels)), tmp_path / "export.csv")
    rows = CsvExport(export).kernels()
    run_passes(model_launch(next(rows), AnalysisSettings()))
    rest = list(rows)
    rest[5].metrics.own()  # type: ignore[attr-defined]
    alone = rest[9].metrics
    alone._values = np.array([alone.hot_row()])[0]  # type: ignore[attr-defined]  # as a row read alone holds it
    assert alone.hot_place()[1] == 0 and rest[6].metrics.hot_place()[1] > 0  # type: ignore[attr-defined]
    kept = [k for k in rest if k.metrics.hot_row() is not None]  # type: ignore[attr-defined]
    assert rest[5].metrics.hot_row().base is None  # type: ignore[attr-defined]
    assert rest[6].metrics.hot_row().base is not None  # type: ignore[attr-defined]
    pieces: list[int] = []
    stack = np.vstack
    monkeypatch.setattr(bulk.np, "vstack", lambda arrays: pieces.append(len(arrays)) or stack(arrays))
    found = bulk.hot_matrix(rest)
    assert found is not None
    matrix, _, _, held = found
    assert held == [k for k, row in enumerate(rest) if row.metrics.hot_row() is not None]  # type: ignore[attr-defined]
    assert np.array_equal(matrix, stack([k.metrics.hot_row() for k in kept]))  # type: ignore[attr-defined]
    assert pieces and pieces[0] < len(kept) // 8
