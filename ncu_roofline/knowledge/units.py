"""Units as Nsight Compute writes them, turned into SI base values.

`.ncu-rep` files store base units (`ns`, `byte`, `byte/s`, `hz`, `cycle`, ...); CSV exports
auto-scale them (`usecond`, `Kbyte`, `Tbyte/second`, `Ghz`, `cycle/nsecond`, ...) unless
`--print-units base` was given. Every value the analysis uses goes through `to_si`, so both
sources give the same numbers.
"""

from __future__ import annotations

import re

# Time words, in seconds.
_TIME = {
    "s": 1.0, "sec": 1.0, "second": 1.0, "seconds": 1.0,
    "ms": 1e-3, "msec": 1e-3, "msecond": 1e-3,
    "us": 1e-6, "usec": 1e-6, "usecond": 1e-6,
    "ns": 1e-9, "nsec": 1e-9, "nsecond": 1e-9,
    "ps": 1e-12, "psecond": 1e-12,
}
# Nsight Compute uses decimal prefixes (Kbyte = 1,000 bytes).
_PREFIX = {"": 1.0, "K": 1e3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
_WORD_RE = re.compile(r"^([KkMGTP]?)(.+)$")
# Words that take a decimal prefix; a bare unknown word (e.g. "inst", "%") scales by 1.
_PREFIXABLE = {
    "byte", "bytes", "hz", "Hz", "cycle", "cycles", "inst", "warp", "thread", "sector",
    "request", "wavefront", "transaction", "op", "flop", "block", "register", "ops",
}


def _word_factor(word: str) -> tuple[float, str]:
    """(factor to SI, SI word) for one word of a unit such as `Kbyte` or `usecond`."""
    word = word.strip()
    if word in _TIME:
        return _TIME[word], "s"
    low = word.lower()
    if low.endswith("hz"):
        prefix = word[: -2]
        if prefix.upper() in ("", "K", "M", "G", "T"):
            return _PREFIX[prefix.upper()], "hz"
    match = _WORD_RE.match(word)
    if match and match.group(1) and match.group(2) in _PREFIXABLE:
        return _PREFIX[match.group(1)], match.group(2)
    return 1.0, word


_FACTORS: dict[str, tuple[float, str]] = {}  # unit as written -> si_factor(unit); a report has a few dozen
_FACTORS_KEPT = 4096
SI_FACTORS = _FACTORS  # unit -> (factor, SI unit) of the units met so far, for hot paths to read (never write)


def si_factor(unit: str) -> tuple[float, str]:
    """Multiplier that turns a value in `unit` into SI, and the SI unit (e.g. `byte/s`)."""
    found = _FACTORS.get(unit)
    if found is None:
        found = _si_factor(unit)
        if len(_FACTORS) < _FACTORS_KEPT:  # a hand-edited file cannot grow it without bound
            _FACTORS[unit] = found
    return found


def _si_factor(unit: str) -> tuple[float, str]:
    unit = (unit or "").strip()
    if not unit:
        return 1.0, ""
    if unit == "%":
        return 1.0, "%"
    num, _, den = unit.partition("/")
    f_num, w_num = _word_factor(num)
    if not den:
        return f_num, w_num
    f_den, w_den = _word_factor(den)
    # Round away binary noise so 1 / 1e-9 is exactly 1e9 (CSV and report must agree).
    return float(f"{f_num / f_den:.15g}"), f"{w_num}/{w_den}"


def to_si(value: float, unit: str) -> float:
    """`value` expressed in `unit`, converted to SI (seconds, bytes, hz, per second)."""
    found = _FACTORS.get(unit)
    return value * (found if found is not None else si_factor(unit))[0]
