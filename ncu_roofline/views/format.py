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


def time_unit(value: float) -> tuple[float, str]:
    """The scale and unit a profiler user expects for a duration of `value` seconds (ns, µs, ms, s)."""
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if value >= scale:
            return scale, unit
    return 1e-9, "ns"


def seconds(value: float | None) -> str:
    """A duration with the unit a profiler user expects (ns, µs, ms, s)."""
    if value is None or not math.isfinite(value):
        return NA
    scale, unit = time_unit(value)
    return f"{value / scale:.3g} {unit}"


def pct(value: float | None, digits: int = 0) -> str:
    """0.834 -> `83 %`."""
    if value is None or not math.isfinite(value):
        return NA
    return f"{value * 100:.{digits}f} %"


def coverage_pct(share: float | None) -> str:
    """A share of GPU time compared or followed: 0.87 -> `87 %`, with a decimal under 1 % (`0.4 %`)."""
    return pct(share, 0 if not share or share >= 0.01 else 1)


def ratio(value: float | None) -> str:
    """An intensity in FLOP/byte."""
    if value is None or not math.isfinite(value):
        return NA
    return f"{value:.3g}"


def short_name(name: str | None, limit: int = 60) -> str:
    """A kernel name short enough for a table cell (template arguments elided; "" for no name)."""
    text = name if isinstance(name, str) else ""
    if "<" in text and len(text) > limit:
        head = text.split("<", 1)[0]
        text = head + "<…>" + (text[text.rfind(">") + 1:] if ">" in text else "")
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text


def signed_seconds(value: float | None) -> str:
    """-0.00271 -> `−2.71 ms`; 0 -> `0 s`."""
    if value is None:
        return NA
    if value == 0:
        return "0 s"
    return ("+" if value > 0 else "−") + seconds(abs(value))


def signed_pct(value: float | None, digits: int = 1) -> str:
    """A relative change already in percent: 5.04 -> `+5.0 %`."""
    if value is None:
        return NA
    text = f"{abs(value):.{digits}f}"
    if float(text) == 0:
        return f"{0:.{digits}f} %"
    return ("+" if value > 0 else "−") + text + " %"


def signed_points(value: float | None) -> str:
    """A change of utilisation (a fraction) in percentage points: 0.361 -> `+36 pp`."""
    if value is None:
        return NA
    text = f"{abs(value) * 100:.0f}"
    if text == "0":
        return "0 pp"
    return ("+" if value > 0 else "−") + text + " pp"


def times(value: float | None) -> str:
    """A ratio: 1.778 -> `1.78×`; 123.4 -> `123×` (never an exponent)."""
    if value is None or not math.isfinite(value):
        return NA
    return f"{value:.0f}×" if abs(value) >= 100 else f"{value:.3g}×"
