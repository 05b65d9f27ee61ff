"""The CI gate of `diff`: regressions of compared groups, total GPU time, counters, and coverage.

- **Coverage**: the share of BASE GPU time in groups that were compared (paired without
  ambiguity and timed on both sides). A gate with coverage under `min_coverage_pct` (50 %)
  cannot pass: its status is `insufficient_coverage`, unless `allow_unmatched`.
- **Groups** (`fail_on_regression` PCT): a compared group regresses when `compare.noise` calls
  it `regressed` (a stated test, or floors for single launches) and its median is more than
  PCT % slower. Where its problem size changed (`compare.work`: FLOP, or bytes at the busiest level
  without FLOP, moved by more than 5 %, not by the code alone), its median must be slower and its
  time per unit of work more than PCT % up: a larger problem that takes longer in proportion passes,
  a smaller one that takes longer fails, and one that finishes sooner never fails. The summed GPU time
  of the compared groups is gated against PCT as well, each group whose repeats show no significant
  change counted at BASE's time per launch (so measured noise does not add up to a regression, while
  small single launches under the floors still do), and each group whose problem size changed at
  BASE's work per launch, at HEAD's time per unit.
- **Total** (`fail_on_total` PCT): the GPU time of every kernel of each run, BASE vs HEAD, as
  measured (a larger problem counts): both sums must also have grown by at least the `min_delta_s`
  floor (2 µs).
- **Counters** (`fail_on_metric`, `dram_bytes:+10%`): the median count of a compared group
  grew (`+`) or fell (`-`) by more than the percentage; for captures of the same inputs, where
  counters do not jitter.

Status: `off` (no gate asked for), `passed`, `failed` (a regression, whatever the coverage), or
`insufficient_coverage` (no regression, but too little was compared for a pass to mean anything).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import RooflineError
from .groups import COUNTERS
from .noise import DEFAULT_ALPHA, DEFAULT_MIN_DELTA_S, DEFAULT_MIN_DURATION_S, DEFAULT_MIN_EFFECT_PCT, TEST_NAME

DEFAULT_MIN_COVERAGE_PCT = 50.0
# A change within this relative tolerance of the threshold is not over it (float rounding).
_TOLERANCE = 1e-9
_METRIC_GATE = re.compile(r"^\s*([a-z0-9_]+)\s*:\s*([+-])?\s*(\d+(?:\.\d*)?|\.\d+)\s*%?\s*$")


class GateUsageError(RooflineError):
    """A gate option that cannot be used (an unknown counter, a malformed `--fail-on-metric`)."""


@dataclass(frozen=True)
class MetricGate:
    """`dram_bytes:+10%`: fail when a compared group's median count grew by more than 10 %."""

    metric: str
    direction: str     # "+" (grew) or "-" (fell)
    pct: float

    @property
    def text(self) -> str:
        return f"{self.metric}:{self.direction}{self.pct:g}%"


def parse_metric_gate(text: str) -> MetricGate:
    """`NAME:+PCT%` or `NAME:-PCT%` (`+` when no sign is given); raises `GateUsageError`."""
    m = _METRIC_GATE.match(text)
    if m is None:
        raise GateUsageError(f"--fail-on-metric {text!r}: expected NAME:+PCT% (e.g. dram_bytes:+10%)")
    name, sign, pct = m.group(1), m.group(2) or "+", float(m.group(3))
    if name not in COUNTERS:
        raise GateUsageError(f"--fail-on-metric {text!r}: unknown counter {name!r} "
                             f"(one of {', '.join(COUNTERS)})")
    return MetricGate(name, sign, pct)


@dataclass(frozen=True)
class GateOptions:
    """Every setting of the gate and of the noise rule (see the module and `compare.noise`)."""

    fail_on_regression: float | None = None
    fail_on_total: float | None = None
    fail_on_metric: tuple[MetricGate, ...] = field(default_factory=tuple)
    min_coverage_pct: float = DEFAULT_MIN_COVERAGE_PCT
    allow_unmatched: bool = False
    min_duration_s: float = DEFAULT_MIN_DURATION_S
    min_delta_s: float = DEFAULT_MIN_DELTA_S
    alpha: float = DEFAULT_ALPHA
    min_effect_pct: float = DEFAULT_MIN_EFFECT_PCT

    @property
    def enabled(self) -> bool:
        return self.fail_on_regression is not None or self.fail_on_total is not None or bool(self.fail_on_metric)


def _limit(pct: float) -> float:
    """The threshold with the float-rounding tolerance: a change must be above this to count."""
    return pct * (1 + _TOLERANCE) + _TOLERANCE


def _over(delta_pct: float | None, pct: float | None) -> bool:
    return pct is not None and delta_pct is not None and delta_pct > _limit(pct)


def _group_regressions(compared: Sequence[dict[str, Any]], pct: float) -> list[dict[str, Any]]:
    out = []
    for c in compared:
        d, noise, work = c["duration"], c["noise"], c["work"]
        # a problem size that changed: slower per unit of work (and in time: `work.per_unit_verdict`)
        change = work["per_unit"]["delta_pct"] if work["size_changed"] else d["delta_pct"]
        if c["verdict"] == "regressed" and _over(change, pct):
            out.append({"scope": "group", "name": c["name"], "report": c["head"]["report"],
                        "index": c["head"]["index"], "base_s": d["base_s"], "head_s": d["head_s"],
                        "delta_pct": d["delta_pct"], "method": noise["method"], "p_value": noise["p_value"],
                        "size_changed": work["size_changed"],
                        "work": {k: work[k] for k in ("measure", "unit", "base", "head", "delta_pct", "per_unit")}
                        if work["size_changed"] else None})
    return out


def _metric_regressions(compared: Sequence[dict[str, Any]], gates: Sequence[MetricGate]) -> list[dict[str, Any]]:
    out = []
    for gate in gates:
        for c in compared:
            m = c["counters"].get(gate.metric) or {}
            change = m.get("delta_pct")
            if change is None:
                continue
            if _over(change if gate.direction == "+" else -change, gate.pct):
                out.append({"scope": "metric", "name": c["name"], "metric": gate.metric, "rule": gate.text,
                            "report": c["head"]["report"], "index": c["head"]["index"], "base": m.get("base"),
                            "head": m.get("head"), "delta_pct": change})
    return out


def _sum_regression(scope: str, name: str, total: dict[str, Any], pct: float | None,
                    min_delta_s: float) -> list[dict[str, Any]]:
    """A summed GPU time over `pct` and by at least `min_delta_s`; for the compared groups, with
    measured noise taken out."""
    head_s = total.get("gated_head_s", total["head_s"])
    change = total.get("gated_delta_pct", total["delta_pct"])
    if not _over(change, pct) or head_s - total["base_s"] < min_delta_s * (1 - _TOLERANCE):
        return []
    return [{"scope": scope, "name": name, "base_s": total["base_s"], "head_s": head_s, "delta_pct": change}]


def evaluate_gate(compared: Sequence[dict[str, Any]], totals: dict[str, Any], coverage: dict[str, Any],
                  options: GateOptions) -> dict[str, Any]:
    """The CI verdict over the compared groups, the totals and the coverage."""
    o = options
    gate: dict[str, Any] = {
        "enabled": o.enabled, "status": "off", "passed": None,
        "threshold_pct": o.fail_on_regression, "total_threshold_pct": o.fail_on_total,
        "metric_gates": [{"metric": g.metric, "direction": g.direction, "pct": g.pct, "text": g.text}
                         for g in o.fail_on_metric],
        "min_coverage_pct": o.min_coverage_pct, "allow_unmatched": o.allow_unmatched,
        "coverage_ok": None,
        "noise": {"test": TEST_NAME, "alpha": o.alpha, "min_effect_pct": o.min_effect_pct,
                  "floors": {"min_duration_s": o.min_duration_s, "min_delta_s": o.min_delta_s}},
        "min_duration_s": o.min_duration_s, "min_delta_s": o.min_delta_s,
        "regressions": [],
    }
    if not o.enabled:
        return gate
    regressions: list[dict[str, Any]] = []
    if o.fail_on_regression is not None:
        regressions += _group_regressions(compared, o.fail_on_regression)
    regressions += _metric_regressions(compared, o.fail_on_metric)
    if o.fail_on_regression is not None:
        regressions += _sum_regression("compared", "total GPU time of the compared groups", totals["compared"],
                                       o.fail_on_regression, o.min_delta_s)
    regressions += _sum_regression("all", "total GPU time of every kernel", totals["all"], o.fail_on_total,
                                   o.min_delta_s)
    share = coverage["share"]
    coverage_ok = share is not None and share * 100.0 >= o.min_coverage_pct * (1 - _TOLERANCE)
    gate["coverage_ok"] = coverage_ok
    gate["regressions"] = regressions
    if regressions:
        gate["status"], gate["passed"] = "failed", False
    elif not coverage_ok and not o.allow_unmatched:
        gate["status"], gate["passed"] = "insufficient_coverage", False
    else:
        gate["status"], gate["passed"] = "passed", True
    return gate
