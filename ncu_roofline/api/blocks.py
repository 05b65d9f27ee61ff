"""A block of launches (`api.bulk.ModelledBlock`) added at once to a report analysed by group: what adding each
launch on its own does (the report's totals, its group's sums and longest launch, its record), from each run's
columns, without making an `AnalysedKernel` for every launch.

- The report's totals (`_tally`): the durations summed in launch order, as one launch after the other.
- The groups (`GroupMaker.add`): each group's launches of the block, in launch order, in stretches of one run
  (`run_sums.add_rows`) or a launch modelled alone (`run_sums.add_launch`). A group's longest launch is the one the
  launches one by one would leave: the longest timed one (the lowest index among equals), else the first.
  Only that launch is made; its passes run once no later launch replaces it.
- The records: a run's launches share every part of their record but their numbers and their own fields
  (`launch_fields`, the group key). A run's record is encoded once with a mark in each such place, but for a number
  every launch writes alike, which the template holds (`RecordTemplate`); each launch's record is the pieces between
  the marks joined with its values, each encoded as orjson encodes it in a record. The template is used only where
  the first launch's record comes out as the record that launch writes on its own, byte for byte; else each launch
  of the run writes its own.
"""

from __future__ import annotations

import copy
import itertools
import operator
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import orjson

from ..model.roofline import launch_fields
from ..readers.record import RawKernel
from ..readers.values import PerLaunch, Split, Values
from .bulk import ModelledBlock, Run
from .groups import carried_flags, group_duration, launch_group_key, longest_key
from .jsondoc import ORJSON_OPTIONS
from .kernel import AnalysedKernel
from .records import Streamed
from .run_sums import RunTable, add_launch, add_rows
from .sums import GroupSums

__all__ = ["RecordTemplate", "add_block"]

_MARK = "\x01%d\x01"
_MARK_RE = re.compile(rb'"\\u0001(\d+)\\u0001"')
_OWN = (*launch_fields(RawKernel(0, "", "", {})), "group_key")  # a launch's own fields in its record
_INDEX = _OWN.index("index")
# What tells a launch's own fields from another's but its index and NVTX ranges (each field a `RawKernel` attribute)
_IDENTITY = operator.attrgetter(*(name for name in _OWN if name not in ("index", "nvtx_ranges", "group_key")))


class RecordTemplate:
    """A run's launch records: its encoded record cut where its launches' values go (`pieces`, one more than the
    values), where each value comes from (`places`: below `len(_OWN)` a launch's own field, in `_OWN` order, else
    one of the run's columns), the values of each column whose launches write them differently, encoded (`columns`),
    the length of each launch's record but for its own fields (`lengths`), and the recipe set they share
    (`found`)."""

    def __init__(self, run: Run, recipes: dict[str, str], raw: RawKernel, found: int) -> None:
        m = copy.copy(run.model)
        m.raw = raw  # its fields are replaced by marks below: the one launch's values are read only to be let go
        with np.errstate(all="ignore"):
            d = m.to_dict(False, recipes, findings=False)
        slots: list[int | list[str]] = []
        for n, name in enumerate(_OWN):
            d[name] = _MARK % len(slots)
            slots.append(n)
        del d["provenance"], d["missing"]
        d["recipe_set"] = found
        lengths = np.zeros(len(run.positions), dtype=np.int64)
        d = _marked(d, slots, lengths)
        parts = _MARK_RE.split(orjson.dumps(d, option=ORJSON_OPTIONS))
        self.pieces: list[str] = [part.decode() for part in parts[0::2]]
        columns = [slot for slot in slots if type(slot) is list]
        at = {id(slot): len(_OWN) + k for k, slot in enumerate(columns)}
        self.places = [slot if type(slot) is int else at[id(slot)] for slot in (slots[int(s)] for s in parts[1::2])]
        self.columns: list[list[str]] = columns
        self.lengths = lengths + sum(map(len, parts[0::2]))
        self.found = found

    def render(self, j: int, own: tuple[str, ...]) -> bytes:
        """The record of the run's j-th launch (`own`: its own fields, encoded, in `_OWN` order)."""
        width, columns = len(_OWN), self.columns
        values = [own[p] if p < width else columns[p - width][j] for p in self.places]
        return ("".join(itertools.chain.from_iterable(zip(self.pieces[:-1], values, strict=True)))
                + self.pieces[-1]).encode()

    def records(self, owns: list[tuple[str, ...] | None]) -> tuple[bytes, list[int]]:
        """The records of the run's launches whose own fields are given (`owns`, one per launch of the run, None for
        a launch written otherwise), one after the other, and the length of each: `render` of each, at once (the
        pieces laid out in one list, joined as text: `str.join` copies pieces faster than `bytes.join`)."""
        width, kept = len(_OWN), [own is not None for own in owns]
        every = all(kept)
        filled = [own for own in owns if own is not None]
        n, own_columns = len(filled), list(zip(*filled, strict=True))
        pieces = self.pieces
        stride = 2 * len(self.places) + 1
        laid: list[str] = [pieces[0]] * (n * stride)
        for k, (piece, p) in enumerate(zip(pieces[1:], self.places, strict=True)):
            column = own_columns[p] if p < width else self.columns[p - width]
            laid[2 * k + 1::stride] = column if every or p < width else list(itertools.compress(column, kept))
            laid[2 * k + 2::stride] = [piece] * n
        text = "".join(laid)
        if text.isascii():
            own_lengths = [sum(map(len, own)) for own in filled]
        else:  # a name in another script: lengths in bytes
            own_lengths = [sum(len(field.encode()) for field in own) for own in filled]
        return text.encode(), (self.lengths[kept] + own_lengths).tolist()


def _marked(obj: Any, slots: list[int | list[str]], lengths: Any) -> Any:
    """`obj` with a mark in place of each column (`Values`) whose launches' values differ in their text, those
    values encoded in `slots`, their lengths added to `lengths` (launch by launch); a column of one text is its
    value."""
    kind = type(obj)
    if kind is Values:
        a = obj.a
        if a.dtype == np.float64 and len(a) and (a.view(np.int64) == a.view(np.int64)[0]).all():
            return a[0].item()  # the same bits for every launch: one text, found without encoding each
        values = a.tolist()
        encoded = orjson.dumps(values, option=ORJSON_OPTIONS)[1:-1].decode()
        cells = encoded.split(",")  # no number holds a comma
        if cells.count(cells[0]) == len(cells):  # one text for every launch (-0.0 is not 0.0): part of the template
            return values[0]
        lengths += np.fromiter(map(len, cells), dtype=np.int64, count=len(cells))
        slots.append(cells)
        return _MARK % (len(slots) - 1)
    if kind is dict:
        return {k: _marked(v, slots, lengths) for k, v in obj.items()}
    if kind is list or kind is tuple:
        return [_marked(v, slots, lengths) for v in obj]
    return obj


def _own(raw: RawKernel, key: str, known: dict[tuple[Any, ...], list[str]]) -> tuple[str, ...] | None:
    """A launch's own fields, encoded in `_OWN` order (None where orjson cannot encode one: the launch writes its
    own record). The fields but its index are encoded once per launch identity (`known`)."""
    ident = (*_IDENTITY(raw), tuple(raw.nvtx_ranges), key)
    try:
        found = known.get(ident)
    except TypeError:  # a list where a tuple was meant
        ident = tuple(map(_hashable, ident))
        found = known.get(ident)
    try:
        if found is None:
            fields = launch_fields(raw)
            fields["group_key"] = key
            fields["index"] = 0
            found = [orjson.dumps(fields[name], option=ORJSON_OPTIONS).decode() for name in _OWN]
            if len(known) < 4096:
                known[ident] = found
        encoded = orjson.dumps(raw.index, option=ORJSON_OPTIONS).decode()
    except (orjson.JSONEncodeError, TypeError):
        return None
    return (*found[:_INDEX], encoded, *found[_INDEX + 1:])


def _hashable(v: Any) -> Any:
    return tuple(v) if type(v) is list else v


def add_block(stream: Streamed, block: ModelledBlock) -> None:
    """Each launch of `block` added to the report, its group and its record, in order (`stream` analysed by group)."""
    rows, records, maker = block.rows, stream.records, stream.maker
    assert records is not None
    base = records.reserve_many([r.index for r in rows])
    tables = [RunTable(run.model, len(run.positions)) for run in block.runs]
    durations = _durations(block, tables)
    _tally(stream, block, tables)
    keys = _keys(rows, maker.group_by)
    members: dict[str, list[int]] = {}
    for k, key in enumerate(keys):
        members.setdefault(key, []).append(k)
    source, local = block.source, block.local
    held: set[int] = set()  # the groups' longest launches: written when let go (`Streamed.hold`)
    for key, group in members.items():
        sums = maker.sums.get(key)
        if sums is None:
            sums = maker.sums[key] = GroupSums(maker.keep)
        for start, end in _stretches(source, group):
            r = int(source[group[start]])
            if r < 0 or sums.members is not None:
                for p in group[start:end]:
                    launch = block.launch(p)
                    add_launch(sums, launch, carried_flags(launch))
                continue
            at = group[start:end]
            add_rows(sums, tables[r], local[at].tolist(), [rows[p] for p in at], carried_flags(block.runs[r].model),
                     lambda p=at[0]: block.launch(p))  # type: ignore[misc]
        timed = [p for p in group if durations[p] is not None]
        maker.time.extend([durations[p] for p in timed])  # type: ignore[misc]
        longest = _longest(stream, block, key, group, timed, durations, base)
        if longest is not None:
            held.add(longest)
    for p, launch in block.single.items():
        if p not in held:
            stream._put(base + p, launch, keys[p])
    if stream.keep_records:
        known: dict[tuple[Any, ...], list[str]] = {}
        for run in block.runs:
            _write_run(stream, block, run, keys, base, held, known)


def _write_run(stream: Streamed, block: ModelledBlock, run: Run, keys: list[str], base: int, held: set[int],
               known: dict[tuple[Any, ...], list[str]]) -> None:
    """The records of a run's launches (but those `held`), from its template where it has one."""
    rows = block.rows
    if all(p in held for p in run.positions):  # written when let go: no template to make
        return
    template = _template(run, stream, keys[run.positions[0]], rows)
    owns: list[tuple[str, ...] | None] = []
    for p in run.positions:
        own = None if template is None or p in held else _own(rows[p], keys[p], known)
        if own is None and p not in held:
            stream._put(base + p, block.launch(p), keys[p])
        owns.append(own)
    if template is not None and any(own is not None for own in owns):
        data, lengths = template.records(owns)
        assert stream.records is not None
        stream.records.put_many([base + p for p, own in zip(run.positions, owns, strict=True) if own is not None],
                                template.found, data, lengths)


def _template(run: Run, stream: Streamed, key: str, rows: Sequence[RawKernel]) -> RecordTemplate | None:
    """The run's record template, where its first launch's record comes out as that launch writes it alone."""
    first = run.positions[0]
    assert stream.records is not None
    d = run.made(0, rows[first]).to_dict(False, stream.recipes, findings=False)  # `run.first` may be held: passes
    d["group_key"] = key
    found, alone = stream.records.encode(d)
    try:
        template = RecordTemplate(run, stream.recipes, rows[first], found)
    except (Split, PerLaunch, Exception):  # a value the template cannot take apart: each launch writes its own
        return None
    own = _own(rows[first], key, {})
    if own is None or template.render(0, own) != alone:
        return None
    return template


def _durations(block: ModelledBlock, tables: list[RunTable]) -> list[float | None]:
    """Each launch's `groups.group_duration`, by position."""
    out: list[float | None] = [None] * len(block.rows)
    for run, t in zip(block.runs, tables, strict=True):
        if t.durations is not None:
            for p, d in zip(run.positions, t.of(run.model.q.duration_s.value), strict=True):  # type: ignore[union-attr]
                out[p] = d
    for p, k in block.single.items():
        out[p] = group_duration(k)
    return out


def _keys(rows: Sequence[RawKernel], group_by: str) -> list[str]:
    """Each launch's group key (`groups.group_key`, worked out once per name and size)."""
    known: dict[tuple[Any, ...], str] = {}
    out = []
    for raw in rows:
        ident = (raw.demangled_name, raw.name, _hashable(raw.grid_size), _hashable(raw.block_size))
        key = known.get(ident)
        if key is None:
            key = known[ident] = launch_group_key(raw, group_by)
        out.append(key)
    return out


def _stretches(source: np.ndarray, group: list[int]) -> list[tuple[int, int]]:
    """(start, end) of each stretch of `group` (positions) whose launches come from one run (or one launch alone)."""
    of = source[group]
    cuts = [0, *(np.flatnonzero((of[1:] != of[:-1]) | (of[1:] < 0)) + 1).tolist(), len(group)]
    return list(itertools.pairwise(cuts))


def _longest(stream: Streamed, block: ModelledBlock, key: str, group: list[int], timed: list[int],
             durations: list[float | None], base: int) -> int | None:
    """Make the group's longest launch after these launches (`GroupMaker.add`, one by one) its longest, held
    (`Streamed.hold`), the one it replaced let go; returns its position in the block (None where it is an earlier
    launch)."""
    maker, rows = stream.maker, block.rows
    before = maker.longest.get(key)
    # The block's longest, then compared with the launch held: as the launches one by one would leave it, for
    # durations that compare (a group's durations are never NaN: a usable launch has one over 0, and a run's
    # launches take that test alike).
    best = max(timed, key=lambda p: (durations[p], -rows[p].index)) if timed else None
    if before is not None and (best is None or (group_duration(before) is not None and longest_key(before)
                                                >= (durations[best], -rows[best].index))):
        return None
    chosen = best if best is not None else group[0]
    k = block.launch(chosen)
    maker.longest[key] = k
    stream.hold(base + chosen, k, key)
    if before is not None:
        stream.release(before, key)
    return chosen


def _tally(stream: Streamed, block: ModelledBlock, tables: list[RunTable]) -> None:
    """The report's totals (`Streamed`: count, time, unusable launches, devices, units, its last launch) with
    each launch of the block, in order: what a run's launches share once per run (units as the first launch with
    each has them), the time summed launch after launch."""
    rows, n = block.rows, len(block.rows)
    durations: list[float | None] = [None] * n
    firsts: list[tuple[int, AnalysedKernel, int]] = []  # (first position, model, launches)
    for run, t in zip(block.runs, tables, strict=True):
        m = run.model
        firsts.append((run.positions[0], m, len(run.positions)))
        if m.q.duration_s is not None:
            for p, v in zip(run.positions, t.of(m.q.duration_s.value), strict=True):
                durations[p] = v
    for p, m in block.single.items():
        firsts.append((p, m, 1))
        if m.q.duration_s is not None:
            durations[p] = m.q.duration_s.value
    for _, m, count in sorted(firsts, key=operator.itemgetter(0)):
        if not m.units.keys() <= stream.units.keys():
            for uid, unit in m.units.items():
                if uid not in stream.units:
                    stream.units[uid] = unit.describe()
                    stream.recipes[uid] = unit.recipe
        if not m.usable:
            stream.unusable += count
    total = stream.total
    for v in durations:
        if v is not None:
            total = v if total is None else total + v
    stream.total = total
    stream.count += n
    had = stream.last is not None and stream.last.q.duration_s is not None
    stream.timed_before = stream.timed_before or had or any(v is not None for v in durations[:-1])
    stream.devices.update(raw.device for raw in rows if raw.device)
    stream.last = block.launch(n - 1)
