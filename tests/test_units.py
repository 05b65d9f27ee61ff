"""Every unit spelling Nsight Compute writes, turned into SI."""

from __future__ import annotations

import pytest

from ncu_roofline.knowledge.units import si_factor, to_si


@pytest.mark.parametrize("unit, factor, si_unit", [
    ("", 1.0, ""), ("%", 1.0, "%"),
    ("ns", 1e-9, "s"), ("nsecond", 1e-9, "s"), ("usecond", 1e-6, "s"), ("us", 1e-6, "s"),
    ("msecond", 1e-3, "s"), ("ms", 1e-3, "s"), ("second", 1.0, "s"), ("s", 1.0, "s"),
    ("byte", 1.0, "byte"), ("Kbyte", 1e3, "byte"), ("Mbyte", 1e6, "byte"), ("Gbyte", 1e9, "byte"),
    ("Tbyte", 1e12, "byte"),
    ("byte/s", 1.0, "byte/s"), ("byte/second", 1.0, "byte/s"), ("Kbyte/second", 1e3, "byte/s"),
    ("Mbyte/second", 1e6, "byte/s"), ("Gbyte/second", 1e9, "byte/s"), ("Tbyte/second", 1e12, "byte/s"),
    ("hz", 1.0, "hz"), ("Khz", 1e3, "hz"), ("Mhz", 1e6, "hz"), ("Ghz", 1e9, "hz"), ("GHz", 1e9, "hz"),
    ("cycle", 1.0, "cycle"), ("Kcycle", 1e3, "cycle"), ("cycle/nsecond", 1e9, "cycle/s"),
    ("cycle/usecond", 1e6, "cycle/s"), ("cycle/second", 1.0, "cycle/s"),
    ("inst", 1.0, "inst"), ("Kinst", 1e3, "inst"), ("Minst", 1e6, "inst"), ("inst/cycle", 1.0, "inst/cycle"),
    ("sector", 1.0, "sector"), ("Ksector", 1e3, "sector"), ("byte/cycle", 1.0, "byte/cycle"),
    ("byte/sector", 1.0, "byte/sector"), ("warp", 1.0, "warp"), ("thread", 1.0, "thread"),
])
def test_unit_spellings(unit: str, factor: float, si_unit: str) -> None:
    got_factor, got_unit = si_factor(unit)
    assert got_factor == pytest.approx(factor, rel=1e-15)
    assert got_unit == si_unit


def test_reciprocal_time_is_exact() -> None:
    # 1 / 1e-9 must be exactly 1e9, or a CSV export and its report would differ in the last bit
    assert si_factor("cycle/nsecond")[0] == 1e9
    assert to_si(1.5, "usecond") == pytest.approx(1.5e-6)
