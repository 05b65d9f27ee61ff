"""Human-readable numbers: SI prefixes, times, percentages; 'n/a' for what a report does not hold."""

from __future__ import annotations

import math

NA = "n/a"
_PREFIXES = ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""))


def si(value: float | None, unit: str, digits: int = 3) -> str:
    """`1.23e12, 'FLOP/s'` -> `1.23 TFLOP/s`; None -> `n/a`."""
    if value is None or not math.isfinite(value):
        return NA
    if value == 0:
        return f"0 {unit}"
    mag = abs(value)
    for scale, prefix in _PREFIXES:
        if mag >= scale:
            return f"{value / scale:.{digits}g} {prefix}{unit}"
    return f"{value:.{digits}g} {unit}"


def seconds(value: float | None) -> str:
    """A duration with the unit a profiler user expects (ns, µs, ms, s)."""
    if value is None or not math.isfinite(value):
        return NA
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if value >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value / 1e-9:.3g} ns"


def pct(value: float | None, digits: int = 0) -> str:
    """0.834 -> `83 %`."""
    if value is None or not math.isfinite(value):
        return NA
    return f"{value * 100:.{digits}f} %"


def ratio(value: float | None) -> str:
    """An intensity in FLOP/byte."""
    if value is None or not math.isfinite(value):
        return NA
    return f"{value:.3g}"


def short_name(name: str, limit: int = 60) -> str:
    """A kernel name short enough for a table cell (template arguments elided)."""
    text = name
    if "<" in text and len(text) > limit:
        head = text.split("<", 1)[0]
        text = head + "<…>" + (text[text.rfind(">") + 1:] if ">" in text else "")
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text
