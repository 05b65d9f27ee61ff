"""Where a CSV export's rows hold each count a recipe needs, worked out once per export.

The rows of an export share one header, and the model reads the same names of each. For a row whose
number cells parsed at once (`readers.record.hot_values`), which form of a count it holds (raw, per
cycle × the unit's cycles or clock, per second × the duration) and each cell's SI factor are the same
as for every other such row. A plan says so, once per recipe (or count) and export, with the formula's
text made once; `Resolver` applies it from the row's values and takes its general path for a row where
one of them is absent, NaN or infinite, so that what it notices and words stays the same.
"""

from __future__ import annotations

from collections.abc import Container, Mapping
from sys import intern
from typing import Any, NamedTuple, TypeVar

from ..knowledge import recipes as R
from ..knowledge.units import si_factor

DURATION = "\x00"  # where a plan's formula names the launch's duration recipe, filled in per launch

_T = TypeVar("_T")
_K = TypeVar("_K")
# Names built once, not on every look-up: a count's per-cycle and per-second forms and the unit whose
# cycles pace it; a unit's elapsed-cycle metric and its rate.
_RATE_FORMS: dict[str, tuple[str, str, str]] = {}
_CYCLE_NAMES: dict[str, tuple[str, str]] = {}
_KEPT = 4096  # names come from the recipe tables and a report's tensor paths: a hand-edited file cannot grow these


def remember(cache: dict[_K, _T], key: _K, value: _T) -> _T:
    if len(cache) < _KEPT:
        cache[key] = value
    return value


def unit_of(metric: str) -> str:
    """The hardware unit whose cycles pace a metric: `dram__bytes_read.sum` -> `dram`."""
    name = metric.removeprefix("derived__")
    return name.split("__", 1)[0]


def rate_forms(metric: str) -> tuple[str, str, str]:
    """A count's per-cycle and per-second forms, and the unit whose cycles pace it."""
    forms = _RATE_FORMS.get(metric)
    if forms is None:
        forms = remember(_RATE_FORMS, metric, (f"{metric}.per_cycle_elapsed", f"{metric}.per_second",
                                               unit_of(metric)))
    return forms


def cycle_names(unit: str) -> tuple[str, str]:
    """A unit's elapsed-cycle metric and its rate (its clock)."""
    names = _CYCLE_NAMES.get(unit)
    if names is None:
        names = remember(_CYCLE_NAMES, unit, (f"{unit}__cycles_elapsed.avg", f"{unit}__cycles_elapsed.avg.per_second"))
    return names


def weighted(weight: float, text: str) -> str:
    if weight == 1.0:
        return text
    w = int(weight) if float(weight).is_integer() else weight
    return f"{w} × {text}"


class TermPlan(NamedTuple):
    """One count's place in a row: `name`'s value × `factor`, times `cycles`' value × `cycles_factor` where
    `cycles` is set (the unit's elapsed cycles or its clock), times the duration where `by_duration`."""

    name: str
    factor: float
    cycles: str
    cycles_factor: float
    by_duration: bool
    text: str  # the count's formula, `DURATION` where the duration's recipe goes


def _factor(unit: str) -> float:
    """`Resolver.number`'s conversion of a value in `unit`: none for a count, else `to_si`'s factor."""
    return si_factor(unit)[0] if unit else 1.0


def term_plan(metric: str, raw_only: bool, default_unit: str, units: Mapping[str, str],
              possible: Container[str]) -> TermPlan | None:
    """Where `Resolver.count` finds `metric` in a row whose hot columns (`units`: name -> unit) all parsed:
    None where it would read a cell not parsed at once (the general path reads it)."""
    unit = units.get(metric)
    if unit is not None:
        return TermPlan(metric, _factor(unit or default_unit), "", 1.0, False, metric)
    if raw_only or metric in possible:
        return None
    per_cycle, per_second, paced_by = rate_forms(metric)
    if per_cycle in possible:
        unit = units.get(per_cycle)
        if unit is None:
            return None
        cycles, clock = cycle_names(paced_by)
        cycles_unit = units.get(cycles)
        if cycles_unit is not None:
            return TermPlan(per_cycle, _factor(unit), cycles, _factor(cycles_unit), False, f"{per_cycle} × {cycles}")
        clock_unit = units.get(clock)
        if cycles in possible or clock_unit is None:
            return None
        return TermPlan(per_cycle, _factor(unit), clock, _factor(clock_unit), True,
                        f"{per_cycle} × {clock} × {DURATION}")
    unit = units.get(per_second)
    if unit is None:
        return None
    return TermPlan(per_second, _factor(unit), "", 1.0, True, f"{per_second} × {DURATION}")


class RecipePlan(NamedTuple):
    """A recipe's terms as (weight, where the count is) and its formula (`DURATION` where the duration's
    recipe goes, if `by_duration`)."""

    terms: tuple[tuple[float, TermPlan], ...]
    formula: str
    by_duration: bool


def recipe_plan(recipe: R.Recipe | R.PeakRecipe, units: Mapping[str, str],
                possible: Container[str]) -> RecipePlan | None:
    """A recipe's plan where every term has one (a peak's terms are per-cycle values read as they are)."""
    if isinstance(recipe, R.PeakRecipe):
        raw_only, default_unit = True, ""
    else:
        raw_only, default_unit = recipe.raw_only, recipe.default_unit
    terms = []
    for term in recipe.terms:
        plan = term_plan(term.metric, raw_only, default_unit, units, possible)
        if plan is None:
            return None
        terms.append((term.weight, plan))
    return RecipePlan(tuple(terms), intern(" + ".join(weighted(w, p.text) for w, p in terms)),
                      any(p.by_duration for _, p in terms))


_FILLED: dict[tuple[str, str], str] = {}


def filled(formula: str, duration: str) -> str:
    """A plan's formula with the launch's duration recipe in place (made once per pair)."""
    key = (formula, duration)
    found = _FILLED.get(key)
    if found is None:
        found = remember(_FILLED, key, intern(formula.replace(DURATION, duration)))
    return found


def export_plans(plans: dict[int, Any]) -> dict[Any, Any]:
    """The plans of one export, kept with its header's other plans (`Columns.plans`)."""
    found = plans.get(-1)  # -1 is no object's id
    if found is None:
        found = plans[-1] = {}
    return found
