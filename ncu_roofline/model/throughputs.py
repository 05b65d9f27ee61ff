"""Read Nsight Compute's own unit measurements off one kernel: unit throughputs and the launch.

A unit throughput is a share (0-1, elapsed basis) with the metric it came from. The two headline
figures (SM and memory throughput) are the maximum of their sub-units; the report names the
sub-units in its `breakdown:` entries, and every one it holds is read, including sub-units this
tool has no label for (they keep their metric name). Nothing is derived from roofs here.
"""

from __future__ import annotations

import math
from collections.abc import Container
from typing import Any, NamedTuple

from ..knowledge import throughputs as T
from ..readers.record import UNREAD, RawKernel, hot_values, read_so_far
from ..readers.values import added, is_float, smallest
from .resolver import Missing, Resolver

_NON_NEGATIVE_TOLERANCE = -1e-9


class UnitShare(NamedTuple):
    """One unit's busy share of its sustained peak over the kernel's elapsed time (a named tuple: about
    50 are built a launch, by `tuple.__new__`, a third of a dataclass's cost)."""

    id: str
    share: float
    label: str
    group: str  # "compute" or "memory"
    parent: str | None
    recipe: str

    def describe(self) -> dict[str, object]:
        """The unit as a report's `units` catalogue lists it (what does not change between launches,
        and the recipe of the first launch that has it)."""
        return {"label": self.label, "group": self.group, "parent": self.parent, "recipe": self.recipe}


_RECIPES: dict[str, str] = {}  # metric -> "metric ÷ 100", one string shared by every launch


def _recipe(name: str) -> str:
    found = _RECIPES.get(name)
    if found is None:
        found = _RECIPES.setdefault(name, f"{name} ÷ 100") if len(_RECIPES) < 4096 else f"{name} ÷ 100"
    return found


def _share(value: float) -> float | None:
    """A unit's percentage of its peak as a share; None for NaN, infinity and a negative value past the noise
    around zero (damage, not a measurement); the noise itself reads as 0."""
    if value != value or value < _NON_NEGATIVE_TOLERANCE or value == math.inf:
        return None
    return value / 100.0 if value > 0.0 else 0.0


def _percent(raw: RawKernel, name: str) -> float | None:
    value = raw.number(name)  # None for an absent, non-numeric, NaN or infinite value
    return None if value is None else _share(value)


_KNOWN = frozenset(name for unit in T.UNITS for name in unit.metrics)
# A breakdown's text -> the sub-unit metrics in it this module has no entry for: every launch of
# a kernel carries the same few texts, so each is split and filtered once.
_BREAKDOWNS: dict[str, tuple[str, ...]] = {}


def _breakdown_names(raw: RawKernel, headline: str) -> tuple[str, ...]:
    """The sub-unit metrics the report names under `headline`, less the known units and non-units."""
    metric = raw.metrics.get(T.BREAKDOWNS[headline])
    if metric is None or not isinstance(metric.value, str):  # a number, or a text the reader could not give
        return ()
    text = metric.value
    found = _BREAKDOWNS.get(text)
    if found is None:
        names = (n.strip() for n in text.split(","))
        found = tuple(n for n in names if n and n not in _KNOWN and not any(part in n for part in T.NOT_UNITS))
        if len(_BREAKDOWNS) < 1024:
            _BREAKDOWNS[text] = found
    return found


# Per unit, in the knowledge's order: what every launch's UnitShare of it repeats, and its metrics with
# their recipe texts (made once here, not once per launch).
_UNIT_FORMS = tuple((unit.id, unit.label, unit.group, unit.parent,
                     tuple((name, _recipe(name)) for name in unit.metrics)) for unit in T.UNITS)


_new_share = tuple.__new__  # UnitShare(...) without the named tuple's Python-level __new__
_UnitForm = tuple[str, str, str, str | None, tuple[tuple[str, str], ...]]


def _unit_share(raw: RawKernel, form: _UnitForm, possible: Container[str], hot: Any, read: Any, get: Any
                ) -> UnitShare | None:
    """A unit's share from the first of its metrics that the kernel holds as a share (`_percent`)."""
    uid, label, group, parent, forms = form
    for name, recipe in forms:
        if name not in possible:
            continue
        value = hot(name)
        if value is None:
            m = read(name, UNREAD)
            if m is UNREAD:
                m = get(name)
            if m is None:
                continue
            value = m.value
        share = _share(value) if type(value) is float or is_float(value) else _percent(raw, name)
        if share is not None:
            return _new_share(UnitShare, (uid, share, label, group, parent, recipe))
    return None


def unit_throughputs(raw: RawKernel) -> dict[str, UnitShare]:
    """Every unit throughput the report holds for this kernel, by unit id."""
    out: dict[str, UnitShare] = {}
    get = raw.metrics.get
    # The metrics read so far (a CSV row's parsed cells): a C-level look-up before the mapping's `get`.
    read = read_so_far(raw.metrics)
    hot, _ = hot_values(raw.metrics)  # a CSV row's plain values, parsed at once
    # The names the metrics may hold at all (an export's header, a report's list for the kernel): a
    # name not there is passed over by a C-level `in`, without a call of the mapping's `get`.
    possible: Container[str] = getattr(raw.metrics, "possible_names", raw.metrics)
    for form in _UNIT_FORMS:  # about 50 units a launch, most read from one parsed value each
        if (unit := _unit_share(raw, form, possible, hot, read, get)) is not None:
            out[unit.id] = unit
    for headline in T.BREAKDOWNS:
        group = T.BY_ID[headline].group
        for name in _breakdown_names(raw, headline):
            share = _percent(raw, name)
            if share is not None:
                uid = name.split(".", 1)[0]
                out.setdefault(uid, UnitShare(uid, share, uid, group, headline, _recipe(name)))
    return out


# The unit whose elapsed cycles a unit metric's share is of, by the metric's prefix where it is not its own.
_CYCLES_UNIT = {"gpu": "gpc", "fbpa": "dram", "ltc": "lts", "tex": "l1tex"}
_RECOLLECT = "re-profile the kernel: the capture holds NaN where the profiler could not measure"


def _metric_of(unit: UnitShare) -> str:
    return unit.recipe.removesuffix(" ÷ 100")


def _nan_cycles(raw: RawKernel, metric: str) -> str | None:
    """The elapsed-cycles metric of `metric`'s unit where the capture holds it as NaN, else None."""
    prefix = metric.split("__", 1)[0]
    unit = _CYCLES_UNIT.get(prefix, prefix)
    for suffix in (".avg", ".max", ".avg.per_second"):
        name = f"{unit}__cycles_elapsed{suffix}"
        m = raw.metrics.get(name)
        if m is not None and m.is_nan:
            return name
    return None


def broken_units(raw: RawKernel, units: dict[str, UnitShare]) -> tuple[dict[str, UnitShare], list[Missing]]:
    """`units` less those the capture cannot have measured, and why each is not available: a share of 0 where the
    unit's elapsed cycles are NaN (a percentage of no cycles is no 0 %), and a unit whose every metric the capture
    holds is NaN. Nothing is set to 0: a broken unit is absent, with its reason in the kernel's `missing`."""
    missing: list[Missing] = []
    kept = units
    for uid, unit in units.items():
        if unit.share == 0.0 and (cycles := _nan_cycles(raw, metric := _metric_of(unit))) is not None:
            if kept is units:
                kept = dict(units)
            del kept[uid]
            missing.append(Missing(f"units.{uid}", f"{unit.label}: the capture's {cycles} is NaN, so its {metric} "
                                   "of 0 measures nothing", _RECOLLECT))
    possible: Container[str] = getattr(raw.metrics, "possible_names", raw.metrics)
    for form in _UNIT_FORMS:
        uid, label = form[0], form[1]
        if uid in units:
            continue
        nan = [name for name, _ in form[4]
               if name in possible and (m := raw.metrics.get(name)) is not None and m.is_nan]
        if nan:
            missing.append(Missing(f"units.{uid}", f"{label}: the capture's {nan[0]} is NaN", _RECOLLECT))
    return kept, missing


def _count(value: int) -> float | None:
    """A product of launch dimensions as a float; None past the float range (an edited size)."""
    try:
        return float(value)
    except OverflowError:
        return None


def launch_facts(raw: RawKernel, res: Resolver) -> dict[str, float | None]:
    """Grid, block, waves per SM and occupancy, where the report holds them (None where not); the share of the
    run the SMs were active (their elapsed cycles stored, or their clock × `res.duration`). `res` reads `raw`."""
    hot, _ = hot_values(raw.metrics)  # a CSV row's plain values: what `raw.number` gives for a finite one

    def number(name: str) -> float | None:
        value = hot(name)
        if value is None:
            return raw.number(name)
        return value if value - value == 0.0 else None

    facts: dict[str, float | None] = {}
    for key, names in T.LAUNCH.items():
        value = None
        for name in names:
            value = number(name)
            if value is not None:
                break
        if value is not None and key in T.PERCENT_FACTS:
            value /= 100.0
        facts[key] = value
    own = [number(name) for name in T.SHARED_MEMORY_OWN]
    driver = facts.get("shared_memory_driver_per_block")
    if all(v is not None for v in own):  # the kernel's own shared memory: static + dynamic
        # a plain sum: past the float range (an edited file) it gives infinity, which the model sets aside,
        # where math.fsum would raise
        facts["shared_memory_per_block"] = added(v for v in own if v is not None)
    elif facts.get("shared_memory_per_block") is not None and driver is not None:
        facts["shared_memory_per_block"] = max(0.0, (facts["shared_memory_per_block"] or 0.0) - driver)
    active = res.number(T.SM_ACTIVE_CYCLES)
    if active is not None:
        cycles = res.cycles("sm")
        elapsed = cycles[0] if cycles is not None else res.number(T.GPC_ELAPSED_CYCLES)
        if elapsed is not None and elapsed > 0:
            facts["sm_active_share"] = smallest(1.0, active / elapsed)
    if facts.get("grid_blocks") is None and raw.grid_size:
        facts["grid_blocks"] = _count(math.prod(raw.grid_size))
    if facts.get("block_threads") is None and raw.block_size:
        facts["block_threads"] = _count(math.prod(raw.block_size))
    if facts.get("sm_count") is None and raw.sm_count:
        facts["sm_count"] = float(raw.sm_count)
    return facts

