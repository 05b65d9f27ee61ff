"""Find a count in whatever form a report stores it, and say which form it used.

`Resolver` reads one kernel's metrics: a value in SI units, a count from its raw, per-cycle or
per-second form, a peak from its per-cycle value and the measured clock, each with the formula
(metric names) that produced it (`Value`). A quantity no recipe produces becomes a `Missing`
entry (`model/quantities.py` words it).
"""

from __future__ import annotations

import math
from collections.abc import Container
from dataclasses import dataclass
from sys import intern  # a recipe's text is the same for every launch of a kernel: one copy
from typing import Any

from ..knowledge import recipes as R
from ..knowledge.units import SI_FACTORS, to_si
from ..readers.record import UNREAD, RawKernel, hot_values, read_so_far
from ..readers.values import is_float
from .metric_names import cycle_names, rate_forms, unit_of, weighted

__all__ = ["Missing", "Resolver", "Value", "unit_of"]


@dataclass(slots=True)  # not frozen: built a few hundred times a launch, and frozen costs 4x to build
class Value:
    """A quantity in SI units and the formula (metric names) that produced it."""

    value: float
    recipe: str
    estimate: bool = False
    definition: str = ""
    note: str = ""


@dataclass(frozen=True, slots=True)
class Missing:
    """A quantity the report does not hold: why, and how to collect it next time."""

    quantity: str
    reason: str
    collect_with: str


Options = tuple[R.Recipe, ...] | tuple[R.PeakRecipe, ...]
# id(options) -> (options, each term's metric once, with its raw, per-cycle and per-second names). The
# options are the recipe tables' own tuples (kept alive here, so that an id names one tuple only).
_TERMS: dict[int, tuple[Options, tuple[tuple[str, tuple[str, str, str]], ...]]] = {}


def _terms_of(options: Options) -> tuple[tuple[str, tuple[str, str, str]], ...]:
    entry = _TERMS.get(id(options))
    if entry is None or entry[0] is not options:
        names = dict.fromkeys(t.metric for o in options for t in o.terms)
        entry = (options, tuple((n, (n, *rate_forms(n)[:2])) for n in names))
        if len(_TERMS) < 1024:
            _TERMS[id(options)] = entry
    return entry[1]


class Resolver:
    """Finds a count in whatever form a report stores it, and says which form it used."""

    def __init__(self, kernel: RawKernel) -> None:
        self.kernel = kernel
        self._get = kernel.metrics.get  # a few hundred look-ups per kernel: bound once
        # The metrics read so far (a CSV row's parsed cells, a report's fetched metrics; None for one
        # known absent): a C-level look-up answers most calls before the mapping's own `get`.
        self._read = read_so_far(kernel.metrics)
        # The plain values a CSV row parsed at once, and their units: most look-ups end here.
        self._hot, self._hot_units = hot_values(kernel.metrics)
        # Names the metrics may hold at all (a CSV export's header, a report action's name list):
        # over half the look-ups of a fallback chain are of names absent there, answered by this
        # container's `in` (in C) without calling the mapping's `get`.
        self._possible: Container[str] = getattr(kernel.metrics, "possible_names", kernel.metrics)
        self.duration: Value | None = None
        self.nan_seen: set[str] = set()  # metrics whose value is NaN or infinite: not measurements
        self.infinite: set[str] = set()  # those of them that are infinite (a hand-edited or damaged value)
        self.unusable_peaks: list[str] = []  # peak formulas whose value came out zero or past the float range

    def number(self, name: str, default_unit: str = "") -> float | None:
        """A metric's value in SI units; None when absent, NaN or infinite (those are remembered)."""
        if name not in self._possible:
            return None
        hot = self._hot(name)
        if hot is not None and hot - hot == 0.0:  # a finite value; NaN and ±inf take the metric's path below
            unit = self._hot_units[name] or default_unit
            if not unit:
                return hot
            factor = SI_FACTORS.get(unit)
            return hot * factor[0] if factor is not None else to_si(hot, unit)
        m: Any = self._read(name, UNREAD)
        if m is UNREAD:
            m = self._get(name)
        if m is None:
            return None
        value = m.value
        if type(value) is not float and not is_float(value):  # the common case is a float: no call for it
            if not m.is_number:
                return None
            value = float(value)
        if value - value != 0.0:  # NaN, or ±inf (inf - inf is NaN)
            self.nan_seen.add(name)
            if value == value:
                self.infinite.add(name)
            return None
        unit = m.unit or default_unit
        if not unit:
            return value  # a count: no conversion
        factor = SI_FACTORS.get(unit)
        return value * factor[0] if factor is not None else to_si(value, unit)

    def cycles(self, unit: str) -> tuple[float, str] | None:
        """Elapsed cycles of a unit: stored, or clock x duration."""
        name, per_second = cycle_names(unit)
        v = self.number(name)
        if v is not None:
            return v, name
        rate = self.number(per_second) if per_second in self._possible else None
        if rate is not None and self.duration is not None:
            return rate * self.duration.value, f"{per_second} × {self.duration.recipe}"
        return None

    def clock(self, unit: str) -> tuple[float, str] | None:
        """Measured clock of a unit in hz: stored rate, or cycles / duration."""
        cycles, name = cycle_names(unit)
        v = self.number(name)
        if v is not None:
            return v, name
        cyc = self.number(cycles)
        if cyc is not None and self.duration is not None and self.duration.value > 0:
            return cyc / self.duration.value, f"{cycles} ÷ {self.duration.recipe}"
        return None

    def count(self, metric: str, raw_only: bool = False, default_unit: str = "") -> tuple[float, str] | None:
        """A total count: raw, per-cycle rate x cycles, per-second rate x duration."""
        v = self.number(metric, default_unit)
        if v is not None:
            return v, metric
        if raw_only:
            return None
        per_cycle, per_second, unit = rate_forms(metric)
        possible = self._possible  # most counts have no rate form in a report: no call for those
        if per_cycle in possible:
            rate = self.number(per_cycle)
            if rate is not None:
                cyc = self.cycles(unit)
                if cyc is not None:
                    return rate * cyc[0], f"{per_cycle} × {cyc[1]}"
        if per_second in possible:
            rate = self.number(per_second)
            if rate is not None and self.duration is not None:
                return rate * self.duration.value, f"{per_second} × {self.duration.recipe}"
        return None

    def total(self, metric: str) -> float | None:
        """A total count's value (`count` without its formula)."""
        got = self.count(metric)
        return None if got is None else got[0]

    def held(self, options: tuple[R.Recipe, ...] | tuple[R.PeakRecipe, ...]) -> tuple[str, ...]:
        """The recipes' terms the kernel holds in some form (raw, per cycle, per second), in order."""
        possible, get = self._possible, self._get
        found = []
        for name, forms in _terms_of(options):  # plain loops: a generator per term costs twice as much
            for form in forms:
                if form in possible and get(form) is not None:
                    found.append(name)
                    break
        return tuple(found)

    def recipe(self, recipe: R.Recipe) -> Value | None:
        """Apply a recipe: every term must resolve."""
        total = 0.0
        parts = []
        complete = True
        for term in recipe.terms:  # every term is looked at, so NaNs are noticed and reported
            got = self.count(term.metric, recipe.raw_only, recipe.default_unit)
            if got is None:
                complete = False
                continue
            total += term.weight * got[0]
            parts.append(weighted(term.weight, got[1]))
        if not complete or total - total != 0.0:  # a sum past the float range (edited values) is no count
            return None
        return Value(total, intern(" + ".join(parts)), recipe.estimate, recipe.definition, recipe.note)

    def first(self, options: tuple[R.Recipe, ...]) -> Value | None:
        for option in options:
            got = self.recipe(option)
            if got is not None:
                return got
        return None

    def peak(self, recipe: R.PeakRecipe) -> Value | None:
        """Per-cycle peak x measured clock, in units per second."""
        if recipe.ratio_pct:
            return self._ratio_peak(recipe)
        per_cycle = 0.0
        parts = []
        for term in recipe.terms:
            v = self.number(term.metric)
            if v is None:
                return None
            per_cycle += term.weight * v
            parts.append(weighted(term.weight, term.metric))
        clk = self.clock(recipe.clock_unit)
        if clk is None:
            return None
        formula = f"({' + '.join(parts)}) × {clk[1]}" if len(parts) > 1 else f"{parts[0]} × {clk[1]}"
        return self._peak_value(recipe, per_cycle * clk[0], intern(formula))

    def _peak_value(self, recipe: R.PeakRecipe, peak: float, formula: str) -> Value | None:
        if not 0.0 < peak < math.inf:  # a zero or overflowing peak (edited values) is no roof
            self.unusable_peaks.append(formula)
            return None
        return Value(peak, formula, definition=recipe.definition, note=recipe.note)

    def _ratio_peak(self, recipe: R.PeakRecipe) -> Value | None:
        """Peak = achieved rate ÷ (the report's % of peak / 100); needs a non-zero share."""
        term = recipe.terms[0]
        got = self.count(term.metric)
        pct = self.number(recipe.ratio_pct)
        if got is None or pct is None or pct <= 0 or self.duration is None:
            return None
        rate = term.weight * got[0] / self.duration.value
        formula = f"{weighted(term.weight, got[1])} ÷ {self.duration.recipe} ÷ ({recipe.ratio_pct} ÷ 100)"
        return self._peak_value(recipe, rate / (pct / 100.0), intern(formula))
