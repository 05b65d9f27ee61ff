"""Names the model looks up for every launch, made once: a count's per-cycle and per-second forms, a unit's
elapsed cycles and clock."""

from __future__ import annotations

from typing import TypeVar

_T = TypeVar("_T")
_K = TypeVar("_K")
# Names built once, not on every look-up: a count's per-cycle and per-second forms and the unit whose
# cycles pace it; a unit's elapsed-cycle metric and its rate.
_RATE_FORMS: dict[str, tuple[str, str, str]] = {}
_CYCLE_NAMES: dict[str, tuple[str, str]] = {}
_KEPT = 4096  # names come from the recipe tables and a report's tensor paths: a hand-edited file cannot grow these


def _remember(cache: dict[_K, _T], key: _K, value: _T) -> _T:
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
        forms = _remember(_RATE_FORMS, metric, (f"{metric}.per_cycle_elapsed", f"{metric}.per_second",
                                               unit_of(metric)))
    return forms


def cycle_names(unit: str) -> tuple[str, str]:
    """A unit's elapsed-cycle metric and its rate (its clock)."""
    names = _CYCLE_NAMES.get(unit)
    if names is None:
        names = _remember(_CYCLE_NAMES, unit, (f"{unit}__cycles_elapsed.avg", f"{unit}__cycles_elapsed.avg.per_second"))
    return names


def weighted(weight: float, text: str) -> str:
    if weight == 1.0:
        return text
    w = int(weight) if float(weight).is_integer() else weight
    return f"{w} × {text}"
