"""A number over many launches at once (`Values`), and the signals of where the launches part (`Split`) or
must be taken one at a time (`PerLaunch`): what lets the model, written for one launch, run over a block of
them (`readers.bulk`). Both signals derive from `BaseException`, so that no `except Exception` in the code they
run through can swallow one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeGuard

import numpy as np

__all__ = ["Decision", "PerLaunch", "Split", "Values", "added", "is_float", "largest", "smallest"]


class Split(BaseException):
    """The launches of a block do not take one path here: `groups` are boolean masks over the block, one per path."""

    def __init__(self, groups: list[np.ndarray]) -> None:
        super().__init__()
        self.groups = groups


class PerLaunch(BaseException):
    """The model needs a plain value here (a text, an integer, a look-up the launches do not share): the launches
    of the block are modelled one at a time."""


def _operand(x: object) -> Any:
    kind = type(x)
    if kind is Values:
        return x.a  # type: ignore[attr-defined]
    if kind is float or kind is int:
        return x
    return None


class Decision:
    """A comparison over a block: one answer where every launch gives it, else `Split` by the answer."""

    __slots__ = ("mask",)

    def __init__(self, mask: np.ndarray) -> None:
        self.mask = mask

    def __bool__(self) -> bool:
        mask = self.mask
        if mask.all():
            return True
        if not mask.any():
            return False
        raise Split([mask, ~mask])

    __hash__ = None  # type: ignore[assignment]


def _same(a: np.ndarray) -> float:
    """The one value of a column whose launches all hold it, else `PerLaunch`."""
    first = a[0]
    if (a == first).all():
        return float(first)
    raise PerLaunch


class Values:
    """One number over a block's launches (float64, one per launch): the arithmetic of a Python float, element by
    element; a comparison gives a `Decision`; a conversion to a plain number, or a format, needs one value for all."""

    __slots__ = ("a",)

    def __init__(self, a: np.ndarray) -> None:
        self.a = a

    def _apply(self, other: object, op: Callable[[Any, Any], np.ndarray], reverse: bool = False) -> Any:
        b = _operand(other)
        if b is None:
            return NotImplemented
        return Values(op(b, self.a) if reverse else op(self.a, b))

    def __add__(self, o: object) -> Any: return self._apply(o, np.add)
    def __radd__(self, o: object) -> Any: return self._apply(o, np.add, True)
    def __sub__(self, o: object) -> Any: return self._apply(o, np.subtract)
    def __rsub__(self, o: object) -> Any: return self._apply(o, np.subtract, True)
    def __mul__(self, o: object) -> Any: return self._apply(o, np.multiply)
    def __rmul__(self, o: object) -> Any: return self._apply(o, np.multiply, True)

    def __truediv__(self, o: object) -> Any:
        b = _operand(o)
        if b is None:
            return NotImplemented
        if np.any(b == 0):  # Python raises where numpy gives inf: launch by launch, as Python would
            raise PerLaunch
        return Values(np.divide(self.a, b))

    def __rtruediv__(self, o: object) -> Any:
        b = _operand(o)
        if b is None:
            return NotImplemented
        if np.any(self.a == 0):
            raise PerLaunch
        return Values(np.divide(b, self.a))

    def __neg__(self) -> Values: return Values(-self.a)
    def __pos__(self) -> Values: return self
    def __abs__(self) -> Values: return Values(np.abs(self.a))

    def _test(self, o: object, op: Callable[[Any, Any], np.ndarray]) -> Any:
        b = _operand(o)
        if b is None:
            return NotImplemented
        return Decision(op(self.a, b))

    def __lt__(self, o: object) -> Any: return self._test(o, np.less)
    def __le__(self, o: object) -> Any: return self._test(o, np.less_equal)
    def __gt__(self, o: object) -> Any: return self._test(o, np.greater)
    def __ge__(self, o: object) -> Any: return self._test(o, np.greater_equal)
    def __eq__(self, o: object) -> Any: return self._test(o, np.equal)
    def __ne__(self, o: object) -> Any: return self._test(o, np.not_equal)

    __hash__ = None  # type: ignore[assignment]

    def __bool__(self) -> bool:
        return bool(Decision(self.a != 0))

    def __float__(self) -> float: return _same(self.a)
    def __int__(self) -> int: return int(_same(self.a))
    def __index__(self) -> int: raise PerLaunch
    def __round__(self, digits: int | None = None) -> Any: return round(_same(self.a), digits)
    def __format__(self, spec: str) -> str: return format(_same(self.a), spec)
    def __repr__(self) -> str: return repr(_same(self.a))


def is_float(value: object) -> TypeGuard[float]:
    """Whether a metric's value is a number the model takes as it is: a float, or a block's `Values` (which does
    what the model does with a float, so the type checker is told it is one)."""
    kind = type(value)
    return kind is float or kind is Values


def _picked(pick: Any, values: list[Any]) -> Any:
    """`pick` (numpy's maximum or minimum) of `values` element by element where one is a block's `Values`; None
    where none is. NaN is left to the launches one by one: Python's max and min answer it by the order."""
    if not any(type(v) is Values for v in values):
        return None
    arrays = [v.a if type(v) is Values else v for v in values]
    out = arrays[0]
    for a in arrays[1:]:
        out = pick(out, a)
    if np.isnan(out).any():
        raise PerLaunch
    return Values(out)


def largest(*values: float) -> float:
    """`max(values)`: over a block's launches, each launch's own largest, without a decision for each comparison
    (launches that differ only in which of two small figures is larger share the rest of their path)."""
    picked = _picked(np.maximum, list(values))
    return max(values) if picked is None else picked


def smallest(*values: float) -> float:
    """`min(values)`, as `largest` takes `max`."""
    picked = _picked(np.minimum, list(values))
    return min(values) if picked is None else picked


def added(values: Iterable[Any]) -> Any:
    """The values added left to right, from 0: `sum` as Python 3.11 and earlier add floats. From 3.12 `sum`
    compensates a float sum's rounding, which a block's `Values` cannot do: the model adds with this, so that a
    launch's figures are the same over columns and alone, on every Python."""
    total: Any = 0
    for v in values:
        total = total + v
    return total
