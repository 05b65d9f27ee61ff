"""The work of a matched pair: FLOP and bytes per level before and after, time per unit of work, and whether the
problem size changed.

The work of a group is the median of its launches' counters (`compare.groups.COUNTERS`). It is measured in FLOP
(every precision, tensor included) where both sides count FLOP above 0, else in bytes at the busiest memory level
(BASE's most utilised of DRAM, L2, L1 with bytes on both sides). Its time per unit is the median duration per
GFLOP, or per MB.

The work changed when the measure moved by more than `WORK_TOLERANCE_PCT` (5 %). Then, in `WorkChange`:

- `size`: the problem size likely changed: FLOP and the bytes at every level both sides count moved the same way,
  each level by a factor within 1.5x of FLOP's (without FLOP: every level the same way, no traffic finding
  changed); the time is judged per unit of work (`per_unit_verdict`);
- `arithmetic`: FLOP moved but the bytes at every level both sides count stayed within the tolerance: the same
  data with other arithmetic (a division turned into a multiplication does fewer FLOP), so the code changed,
  not the problem; the time is judged as it is;
- FLOP moved and the bytes moved otherwise (one level only, or by another factor: a loop run twice): `traffic`;
  FLOP moved with no bytes counted: `unknown`; the time is judged as it is;
- `traffic`: bytes moved (no FLOP to measure by), but not at every level the same way (a problem of another
  size moves its data through every level; DRAM bytes alone also move with what L2 held before the launch), or
  a finding about wasted traffic (spills, uncoalesced or partly used sectors, misses) appeared or went away: the
  bytes are the code's or the caches', not the problem's; the time is judged as it is;
- `same` (within the tolerance) and `unknown` (nothing to measure by): the time is judged as it is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
from typing import Any

from ..knowledge import recipes as R
from ..knowledge.wording import Kind
from .changes import relative_pct

WORK_TOLERANCE_PCT = 5.0
GFLOP, MB = 1e9, 1e6
BYTE_COUNTERS = {"dram": "dram_bytes", "l2": "l2_bytes", "l1": "l1_bytes"}
# Findings whose bytes are the code's waste, not the problem's data: their appearing explains a change of bytes.
TRAFFIC_KINDS = frozenset({Kind.LOCAL_MEMORY.value, Kind.COALESCING.value, Kind.SECTOR_USE.value, Kind.REUSE.value})


class WorkChange(str, Enum):
    """How the work of a pair changed (see the module)."""

    SAME = "same"
    SIZE = "size"
    ARITHMETIC = "arithmetic"
    TRAFFIC = "traffic"
    UNKNOWN = "unknown"

    def __str__(self) -> str:
        return self.value


def _positive(value: float | None) -> bool:
    return value is not None and value > 0


def _within(base: float | None, head: float | None) -> bool:
    change = relative_pct(base, head)
    return change is not None and abs(change) <= WORK_TOLERANCE_PCT * (1 + 1e-9)


def _busiest_level(counters: dict[str, dict[str, float | None]], utilization: dict[str, float | None]) -> str | None:
    """BASE's most utilised memory level with bytes above 0 on both sides (DRAM first among equals)."""
    levels = [lv for lv in R.LEVELS if _positive(counters.get(BYTE_COUNTERS[lv], {}).get("base"))
              and _positive(counters.get(BYTE_COUNTERS[lv], {}).get("head"))]
    if not levels:
        return None
    return max(levels, key=lambda lv: (utilization.get(lv) or 0.0, -R.LEVELS.index(lv)))


@dataclass(frozen=True)
class Work:
    """The work of a pair by its measure, its time per unit, and how it changed."""

    measure: str | None  # a `COUNTERS` name: `flop`, or `dram_bytes` / `l2_bytes` / `l1_bytes`; None: none
    unit: str | None  # GFLOP or MB
    base: float | None
    head: float | None
    change: WorkChange
    base_s_per_unit: float | None
    head_s_per_unit: float | None

    @property
    def delta_pct(self) -> float | None:
        return relative_pct(self.base, self.head)

    @property
    def per_unit_delta_pct(self) -> float | None:
        return relative_pct(self.base_s_per_unit, self.head_s_per_unit)

    @property
    def size_changed(self) -> bool:
        return self.change is WorkChange.SIZE

    def to_dict(self, counters: dict[str, dict[str, float | None]]) -> dict[str, Any]:
        """The JSON form: the measure, both sides, the change, the time per unit, and every work counter."""
        return {
            "measure": self.measure, "unit": self.unit, "base": self.base, "head": self.head,
            "delta_pct": self.delta_pct, "change": self.change.value, "size_changed": self.size_changed,
            "tolerance_pct": WORK_TOLERANCE_PCT,
            "per_unit": {"unit": self.unit, "base_s": self.base_s_per_unit, "head_s": self.head_s_per_unit,
                         "delta_pct": self.per_unit_delta_pct},
            "flop": dict(counters.get("flop") or {"base": None, "head": None, "delta_pct": None}),
            "bytes": {lv: dict(counters[c]) for lv, c in BYTE_COUNTERS.items() if c in counters},
        }


def work_of(counters: dict[str, dict[str, float | None]], utilization: dict[str, float | None],
            durations: tuple[float | None, float | None], findings: dict[str, Any]) -> Work:
    """The work of a pair from its counter changes, BASE's utilisation, both median durations and the findings
    that appeared or went away (`changes.findings_change`)."""
    flop = counters.get("flop") or {}
    if _positive(flop.get("base")) and _positive(flop.get("head")):
        measure, unit = "flop", "GFLOP"
    else:
        level = _busiest_level(counters, utilization)
        if level is None:
            return Work(None, None, None, None, WorkChange.UNKNOWN, None, None)
        measure, unit = BYTE_COUNTERS[level], "MB"
    base, head = counters[measure]["base"], counters[measure]["head"]
    scale = GFLOP if unit == "GFLOP" else MB
    per_unit = [None if d is None or w is None else d / (w / scale) for d, w in zip(durations, (base, head),
                                                                                     strict=True)]
    return Work(measure, unit, base, head, _change(measure, base, head, counters, findings), *per_unit)


def _change(measure: str, base: float | None, head: float | None, counters: dict[str, dict[str, float | None]],
            findings: dict[str, Any]) -> WorkChange:
    if _within(base, head):
        return WorkChange.SAME
    moved = {f["kind"] for f in [*findings.get("appeared", []), *findings.get("disappeared", [])]}
    levels = [counters[c] for c in BYTE_COUNTERS.values() if _positive((counters.get(c) or {}).get("base"))
              and _positive((counters.get(c) or {}).get("head"))]
    if measure == "flop":
        if not levels:
            return WorkChange.UNKNOWN  # FLOP alone cannot tell another problem from other code
        if all(_within(v["base"], v["head"]) for v in levels):
            return WorkChange.ARITHMETIC
        # another problem moves its data through every level with its FLOP, by a like factor
        ratio = (head or 0.0) / (base or 1.0)
        scaled = all(_like(v["head"] / v["base"], ratio) for v in levels if v["base"] and v["head"])
        return WorkChange.SIZE if scaled and not moved & TRAFFIC_KINDS else WorkChange.TRAFFIC
    grew = (head or 0.0) > (base or 0.0)
    every_level = all(not _within(v["base"], v["head"]) and ((v["head"] or 0.0) > (v["base"] or 0.0)) == grew
                      for v in levels)
    return WorkChange.SIZE if every_level and not moved & TRAFFIC_KINDS else WorkChange.TRAFFIC


SIZE_FACTOR_TOLERANCE = 1.5  # a level's bytes moved by within this factor of FLOP's move: the same scaling


def _like(level_ratio: float, flop_ratio: float) -> bool:
    """Whether a level's bytes moved the way FLOP did: the same direction, beyond the tolerance, by a factor within
    `SIZE_FACTOR_TOLERANCE` of FLOP's (a GEMM's FLOP grow faster than its bytes; a loop run twice reads the same
    data once more, not twice the data through every level)."""
    if abs(level_ratio - 1.0) * 100 <= WORK_TOLERANCE_PCT or (level_ratio > 1) != (flop_ratio > 1):
        return False
    quotient = level_ratio / flop_ratio
    return 1 / SIZE_FACTOR_TOLERANCE <= quotient <= SIZE_FACTOR_TOLERANCE


def head_s_at_base_work(work: dict[str, Any], head_s: float | None) -> float | None:
    """A HEAD time scaled to BASE's work at HEAD's time per unit, for a pair whose problem size changed
    (`Work.to_dict`), or `head_s` itself where that is less (a group that finishes sooner adds no regression to a
    sum); `head_s` itself for any other pair."""
    base, head = work["base"], work["head"]
    if not work["size_changed"] or head_s is None or not base or not head:
        return head_s
    return float(min(head_s, head_s * base / head))


def per_unit_verdict(time_verdict: str, work: Work, min_effect_pct: float) -> str:
    """A size-changed pair's verdict: `regressed` (or `improved`) only where its median time and its time per
    unit of work both rose (or fell), the latter by more than `min_effect_pct`; else `unchanged`. Other pairs keep
    their time verdict."""
    if not work.size_changed or time_verdict == "unknown":
        return time_verdict
    per_unit = work.per_unit_delta_pct
    if per_unit is None or not math.isfinite(per_unit):
        return time_verdict
    if time_verdict == "regressed" and per_unit > min_effect_pct:
        return "regressed"
    if time_verdict == "improved" and per_unit < -min_effect_pct:
        return "improved"
    return "unchanged"
