"""Is a change of duration real? A stated test where launches repeat, stated floors where they do not.

Rule, per compared group (BASE launches x, HEAD launches y):

- **Test** (`mann-whitney`), when both sides have at least 2 timed launches and the test can
  reach the significance level at all (its smallest two-sided p-value, 2 / C(n + m, n), is at
  most alpha: 4 and 4 launches, 3 and 5, 2 and 8, …): the two-sided Mann–Whitney U test
  (Wilcoxon rank-sum) on the launch durations, exact without ties for n + m ≤ 60, else the
  normal approximation with tie and continuity corrections. The change is real when p < alpha
  (default 0.05). No distribution is assumed: profiled durations are skewed and have outliers.
- **Floors** (`floor`), otherwise (single launches, or too few for the test): the change is
  real when the BASE median ran at least `min_duration_s` (5 µs) and moved by at least
  `min_delta_s` (2 µs): floors from the run-to-run spread of a profiled duration, not a
  measurement of this kernel's noise.

Either way a change is called only when the medians differ by more than `min_effect_pct`
(1 %): `improved` (faster) or `regressed` (slower); else `unchanged`; `unknown` without a
duration on one side.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from .groups import mad, median

DEFAULT_ALPHA = 0.05
DEFAULT_MIN_EFFECT_PCT = 1.0
# Kernels shorter than this in BASE are not called changed on single launches: a few hundred
# nanoseconds of launch jitter is tens of percent of a 2 µs kernel.
DEFAULT_MIN_DURATION_S = 5e-6
# Nor is a change of less than this, whatever the percentage: the run-to-run spread of a profiled
# duration is about a microsecond (the V100 halo kernels of the test corpus move by 1.4 µs, +12 %,
# between two captures of unchanged code).
DEFAULT_MIN_DELTA_S = 2e-6
EXACT_LIMIT = 60   # n + m up to which the exact distribution is used (without ties)
TEST = "mann-whitney"
FLOOR = "floor"
TEST_NAME = "Mann–Whitney U (two-sided)"
_TOLERANCE = 1e-9


def ranks(values: Sequence[float]) -> tuple[list[float], list[int]]:
    """Mid-ranks (1-based, ties averaged) and the sizes of the tie groups."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    ties: list[int] = []
    n = 0
    while n < len(order):
        end = n
        while end + 1 < len(order) and values[order[end + 1]] == values[order[n]]:
            end += 1
        for i in order[n:end + 1]:
            out[i] = (n + end) / 2 + 1
        ties.append(end - n + 1)
        n = end + 1
    return out, ties


@lru_cache(maxsize=256)
def _u_counts(n: int, m: int) -> tuple[int, ...]:
    """How many of the C(n + m, n) arrangements give each U from 0 to n·m (no ties).

    The counts are the coefficients of the Gaussian binomial [n + m choose n] in q, built as
    the product over i = 1..n of (1 - q^(m+i)) / (1 - q^i), in exact integers.
    """
    n, m = min(n, m), max(n, m)  # the distribution is the same either way round
    coeffs = [1] + [0] * (n * m + n)
    for i in range(1, n + 1):
        step = m + i
        for u in range(len(coeffs) - 1, step - 1, -1):  # times (1 - q^(m+i))
            coeffs[u] -= coeffs[u - step]
        for u in range(i, len(coeffs)):  # divided by (1 - q^i)
            coeffs[u] += coeffs[u - i]
    return tuple(coeffs[: n * m + 1])


def mann_whitney(x: Sequence[float], y: Sequence[float]) -> tuple[float, float]:
    """(U of x, two-sided p-value) of the Mann–Whitney U test of x against y."""
    n, m = len(x), len(y)
    r, ties = ranks([*x, *y])
    u = sum(r[:n]) - n * (n + 1) / 2
    if n == 0 or m == 0:
        return u, 1.0
    if all(t == 1 for t in ties) and n + m <= EXACT_LIMIT:
        counts = _u_counts(n, m)
        whole = math.comb(n + m, n)
        k = round(u)
        low, high = sum(counts[:k + 1]), sum(counts[k:])
        return u, min(1.0, 2 * min(low, high) / whole)
    big_n = n + m
    variance = n * m / 12 * ((big_n + 1) - sum(t ** 3 - t for t in ties) / (big_n * (big_n - 1)))
    if variance <= 0:
        return u, 1.0
    z = (abs(u - n * m / 2) - 0.5) / math.sqrt(variance)
    return u, min(1.0, math.erfc(max(z, 0.0) / math.sqrt(2)))


def reaches_alpha(n: int, m: int, alpha: float) -> bool:
    """Whether the test can reach `alpha` with n and m launches (both at least 2)."""
    return n >= 2 and m >= 2 and 2 / math.comb(n + m, n) <= alpha * (1 + _TOLERANCE)


def classify(base: Sequence[float], head: Sequence[float], *, alpha: float = DEFAULT_ALPHA,
             min_effect_pct: float = DEFAULT_MIN_EFFECT_PCT, min_duration_s: float = DEFAULT_MIN_DURATION_S,
             min_delta_s: float = DEFAULT_MIN_DELTA_S) -> dict[str, Any]:
    """The noise verdict of one group: method, p-value (test only), spreads and the verdict."""
    mb, mh = median(base), median(head)
    out: dict[str, Any] = {"method": None, "alpha": None, "p_value": None, "base_n": len(base), "head_n": len(head),
                           "base_mad_s": mad(base), "head_mad_s": mad(head), "real": False, "verdict": "unknown"}
    if mb is None or mh is None:
        return out
    delta = mh - mb
    effect = abs(delta) / mb * 100.0 > min_effect_pct * (1 + _TOLERANCE) + _TOLERANCE if mb > 0 else delta != 0
    if reaches_alpha(len(base), len(head), alpha):
        _, p = mann_whitney(base, head)
        out.update(method=TEST, alpha=alpha, p_value=p)
        real = p < alpha
    else:
        out["method"] = FLOOR
        real = mb >= min_duration_s * (1 - _TOLERANCE) and abs(delta) >= min_delta_s * (1 - _TOLERANCE)
    out["real"] = real
    out["verdict"] = ("regressed" if delta > 0 else "improved") if real and effect else "unchanged"
    return out
