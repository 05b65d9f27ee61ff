"""Model many launches at once: the one model (`model_launch`), run over columns of their values.

`model_launches(rows, settings)` gives the same `AnalysedKernel` for each row as `model_launch(row, settings)`,
from far fewer runs of the model: it runs once over a block of rows read as columns (`readers.bulk`), and again
over each part where the rows take different paths (`Split`); rows the model cannot take as columns are modelled
one by one (`PerLaunch`), as are rows whose metrics are not an export's rows. Each run's launches are then made
from its columns (`_launches`).

Every run is checked: its first launch is modelled on its own too, and the run is kept only where the two are
equal, field by field and as written; else each of its launches is modelled on its own. A model change the
columns cannot follow (a type test that a column fails, a decision taken without a comparison) costs speed, never
a number.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..model.quantities import KernelQuantities, Value
from ..model.throughputs import UnitShare
from ..readers.bulk import BlockMetrics, LaunchBlock, hot_matrix
from ..readers.record import RawKernel
from ..readers.values import PerLaunch, Split, Values
from ..settings import AnalysisSettings
from .jsondoc import encode_bytes
from .kernel import AnalysedKernel, model_launch

__all__ = ["BULK_BYTES", "BULK_ROWS", "UNSIZED_ROW_BYTES", "BulkTally", "ModelledBlock", "Run", "model_block",
           "model_launches"]

# Rows modelled together: up to `BULK_ROWS`, and rows whose text comes to `BULK_BYTES` (about 8,000 full-set rows of
# 28 kB; the block holds about twice its rows' text, 0.45 GB then). A row whose text is not at hand (a `.ncu-rep`
# launch) counts as `UNSIZED_ROW_BYTES`: 4,096 of them make a block. Fewer blocks cost less per launch (each block
# adds its launches to a group, and encodes its record template, once): at 50,000 full-set launches 8 % less CPU
# than blocks of 4,096 rows, for 0.2 GB more memory.
BULK_ROWS = 16384
BULK_BYTES = 224 << 20
UNSIZED_ROW_BYTES = BULK_BYTES // 4096
_FEWEST = 8  # a part of fewer rows is modelled row by row: a run over columns costs about 8 plain runs
# Runs of the model over columns a block may take: this many, and one more for each `_ROWS_PER_RUN` launches its
# runs gave so far (the largest parts are run first). Launches whose values part them at every decision (a
# hand-made export of random values) are then modelled one by one, at about the plain cost; launches of many
# kernels that each keep to a path earn the runs their paths need.
_LEAST_RUNS = 16
_ROWS_PER_RUN = 8
_ARRAY = np.ndarray  # a run's column, as its launches' values are read (`_launches`)


class BulkTally:
    """How a report's launches were modelled: over columns, and one by one (with why)."""

    def __init__(self) -> None:
        self.runs = 0  # runs of the model over columns, kept or not
        self.columns = 0  # launches made from a run over columns
        self.single = 0  # launches modelled on their own
        self.unequal = 0  # of those, launches of a run whose check failed


Made = Callable[[int, RawKernel], AnalysedKernel]  # (j, its row) -> a run's j-th launch


class Run:
    """Launches of a block modelled by one run of the model over columns: `model` (its numbers `Values`), the
    launches' positions in the block (ascending), `made` (their `AnalysedKernel`s, made from the columns), and the
    first one modelled on its own (the run's check)."""

    __slots__ = ("first", "made", "model", "positions")

    def __init__(self, model: AnalysedKernel, positions: list[int], made: Made, first: AnalysedKernel) -> None:
        self.model, self.positions, self.made, self.first = model, positions, made, first


class ModelledBlock:
    """A block of launches modelled: runs over columns (`runs`), and the launches modelled on their own (`single`,
    by position). `launch(k)` is the k-th launch's `AnalysedKernel`, as `model_launch` gives it."""

    def __init__(self, rows: Sequence[RawKernel]) -> None:
        self.rows = rows
        self.runs: list[Run] = []
        self.single: dict[int, AnalysedKernel] = {}
        self.source = np.full(len(rows), -1, dtype=np.intp)  # per position: its run, -1 for one modelled alone
        self.local = np.zeros(len(rows), dtype=np.intp)  # per position: its place in its run
        self._made: dict[int, AnalysedKernel] = {}

    def add_run(self, run: Run) -> None:
        at = np.asarray(run.positions, dtype=np.intp)
        self.source[at] = len(self.runs)
        self.local[at] = np.arange(len(at))
        self.runs.append(run)

    def launch(self, k: int) -> AnalysedKernel:
        r = int(self.source[k])
        if r < 0:
            return self.single[k]
        found = self._made.get(k)
        if found is None:
            run = self.runs[r]
            j = int(self.local[k])
            found = self._made[k] = run.first if j == 0 else run.made(j, self.rows[k])
        return found


def model_launches(rows: Sequence[RawKernel], settings: AnalysisSettings,
                   tally: BulkTally | None = None) -> list[AnalysedKernel]:
    """`[model_launch(row, settings) for row in rows]`, from runs of the model over columns where it can."""
    block = model_block(rows, settings, tally)
    return [block.launch(k) for k in range(len(rows))]


def model_block(rows: Sequence[RawKernel], settings: AnalysisSettings,
                tally: BulkTally | None = None) -> ModelledBlock:
    """The launches of `rows` modelled: by runs of the model over columns where it can, else one by one."""
    tally = tally if tally is not None else BulkTally()
    block = ModelledBlock(rows)
    out = block.single
    found = hot_matrix(rows)
    held = found[3] if found is not None else []
    if len(held) < _FEWEST:
        held = []
    for k in sorted(set(range(len(rows))) - set(held)):
        out[k] = model_launch(rows[k], settings)
        tally.single += 1
    runs_before = tally.runs
    if held and found is not None:
        matrix, index, units = found[0], found[1], found[2]
        block_rows = [rows[k] for k in held]
        whole = BlockMetrics(block_rows, matrix, index, units)
        parts: list[tuple[np.ndarray, BlockMetrics]] = [(np.arange(len(held)), whole)]
        columns_before = tally.columns
        while parts:
            at, metrics = parts.pop(max(range(len(parts)), key=lambda i: len(parts[i][0])))
            budget = _LEAST_RUNS + (tally.columns - columns_before) // _ROWS_PER_RUN
            if len(at) < _FEWEST or tally.runs - runs_before >= budget:
                _one_by_one(rows, [held[i] for i in at.tolist()], settings, out, tally)
                continue
            tally.runs += 1
            try:
                with np.errstate(all="ignore"):  # an overflow is infinity, without a word, as with Python's floats
                    model = model_launch(LaunchBlock(block_rows, metrics, at), settings)  # type: ignore[arg-type]
            except Split as split:
                parts.extend((at[g], metrics.part(g)) for g in split.groups if g.any())
                continue
            except (PerLaunch, Exception):  # the model's own errors are raised again by the launch that has them
                _one_by_one(rows, [held[i] for i in at.tolist()], settings, out, tally)
                continue
            positions = [held[i] for i in at.tolist()]
            first = model_launch(rows[positions[0]], settings)
            try:
                made = _launches(model)
                same = _same(made(0, rows[positions[0]]), first)
            except (Split, PerLaunch, Exception):  # a value `_launches` does not take apart: not the same
                same = False
            if not same:
                tally.unequal += len(positions)
                _one_by_one(rows, positions, settings, out, tally)
                continue
            block.add_run(Run(model, positions, made, first))
            tally.columns += len(positions)
    return block


def _one_by_one(rows: Sequence[RawKernel], positions: list[int], settings: AnalysisSettings,
                out: dict[int, AnalysedKernel], tally: BulkTally) -> None:
    for k in positions:
        out[k] = model_launch(rows[k], settings)
    tally.single += len(positions)


def _same(made: AnalysedKernel, alone: AnalysedKernel) -> bool:
    """Whether a launch made from a run's columns is the one modelled alone: equal field by field, and written
    alike (equality does not tell -0.0 from 0.0, nor 1 from 1.0)."""
    return bool(made == alone) and encode_bytes(made.to_dict(findings=False)) == encode_bytes(
        alone.to_dict(findings=False))


def _column(x: Any) -> Any:
    """A run's value as each launch's (its column's array, each value read as a Python number, `item`) or the one
    value of all."""
    return x.a if type(x) is Values else x



def _launches(m: AnalysedKernel) -> Made:
    """From a run of the model over columns, the function that makes its j-th launch (with `raw`). Its containers
    are its own; a `Value` or `Missing` that is one for every launch (a peak from a peaks file, a reason) is shared
    by them, as nothing changes either once made."""
    q = m.q

    def values(d: dict[str, Value | None] | dict[str, Value]) -> list[tuple[str, Any, Value | None]]:
        return [(k, None if v is None else _column(v.value), v) for k, v in d.items()]

    def one(v: Value | None) -> tuple[Any, Value | None]:
        return (None, None) if v is None else (_column(v.value), v)

    def plain(d: dict[str, Any]) -> list[tuple[str, Any]]:
        return [(k, _column(v)) for k, v in d.items()]

    def value_at(pair: tuple[Any, Value | None], j: int) -> Value | None:
        column, v = pair
        if v is None or type(column) is not _ARRAY:
            return v
        return Value(column.item(j), v.recipe, v.estimate, v.definition, v.note)

    def values_at(items: list[tuple[str, Any, Value | None]], j: int) -> dict[str, Any]:
        return {k: v if v is None or type(c) is not _ARRAY else Value(c.item(j), v.recipe, v.estimate, v.definition,
                                                                      v.note)
                for k, c, v in items}

    def plain_at(items: list[tuple[str, Any]], j: int) -> dict[str, Any]:
        return {k: c.item(j) if type(c) is _ARRAY else c for k, c in items}

    duration, pipe = one(q.duration_s), one(q.tensor_pipe_utilization)
    flop, paths, traffic = values(q.flop), values(q.tensor_paths), values(q.bytes)
    q_peaks, q_tensor_peaks = values(q.peaks), values(q.tensor_peaks)
    set_aside = {level: [one(v) for v in found] for level, found in q.set_aside.items()}
    peaks, tensor_peaks = values(m.peaks), values(m.tensor_peaks)
    utilization, intensity, attainable = plain(m.utilization), plain(m.intensity), plain(m.attainable_flop_per_s)
    achieved, total = _column(m.achieved_flop_per_s), _column(m.total_flop)
    units = [(uid, _column(u.share), u) for uid, u in m.units.items()]
    launch = plain(m.launch)
    facts = None if m.facts is None else [_column(f) for f in m.facts]
    new_share = tuple.__new__

    def made(j: int, raw: RawKernel) -> AnalysedKernel:
        kq = KernelQuantities(value_at(duration, j), values_at(flop, j), values_at(paths, j), values_at(traffic, j),
                              values_at(q_peaks, j), values_at(q_tensor_peaks, j), value_at(pipe, j),
                              list(q.missing), q.unusable_reason, q.no_duration,
                              {level: tuple(value_at(p, j) for p in found)  # type: ignore[misc]
                               for level, found in set_aside.items()})
        return AnalysedKernel(
            raw=raw, q=kq, peaks=values_at(peaks, j), tensor_peaks=values_at(tensor_peaks, j),
            utilization=plain_at(utilization, j), intensity=plain_at(intensity, j),
            achieved_flop_per_s=achieved.item(j) if type(achieved) is _ARRAY else achieved,
            attainable_flop_per_s=plain_at(attainable, j), dominant_precision=m.dominant_precision,
            bound_by=m.bound_by, regime=m.regime, flags=list(m.flags), provenance=dict(m.provenance),
            missing=list(m.missing), total_flop=total.item(j) if type(total) is _ARRAY else total,
            units={uid: u if type(c) is not _ARRAY else new_share(UnitShare, (u.id, c.item(j), u.label, u.group,
                                                                               u.parent, u.recipe))
                   for uid, c, u in units},
            launch=plain_at(launch, j),
            facts=None if facts is None else tuple(f.item(j) if type(f) is _ARRAY else f for f in facts))

    return made
