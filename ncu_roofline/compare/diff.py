"""Comparing two runs: kernel matching, per-kernel changes, totals and a regression gate.

Runs are loaded by `compare.runs` (report files, JSON documents, batch folders) and paired by
`compare.matching` (name, launch configuration, NVTX ranges, order).

Gate. With a threshold of P %, the run fails when the summed duration of the matched kernels
grew by more than P %, or when a matched kernel whose BASE duration is at least `min_duration_s`
(5 µs) grew by more than P % and by at least `min_delta_s` (2 µs: below that it is profiling
jitter). Kernels that exist only in one run are reported, not gated.

No file is written and nothing is printed here; the CLI does that (and words the gate's message).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..api.jsondoc import dumps
from ..knowledge import recipes as R
from ..settings import AnalysisSettings
from ..version import __version__
from .matching import Pair, display_name, match_kernels
from .runs import Run, RunKernel, duration_of, load_run, number

SCHEMA = "ncu-roofline-diff/1"
# Kernels shorter than this in BASE are not gated one by one: a few hundred nanoseconds of
# launch jitter is tens of percent of a 2 µs kernel. They still count in the matched total.
DEFAULT_MIN_DURATION_S = 5e-6
# Nor is a kernel that got slower by less than this, whatever the percentage: the run-to-run
# spread of a profiled duration is about a microsecond (the V100 halo kernels of the test corpus
# move by 1.4 µs, +12 %, between two captures of unchanged code).
DEFAULT_MIN_DELTA_S = 2e-6
# A change within this relative tolerance of the threshold is not over it (float rounding).
_GATE_TOLERANCE = 1e-9


# --------------------------------------------------------------------------------------------
# Changes


def relative_pct(base: float | None, head: float | None) -> float | None:
    """(head - base) / base in percent; None when either is unknown or base is 0."""
    if base is None or head is None or base == 0:
        return None
    return (head - base) / base * 100.0


def _delta(base: float | None, head: float | None) -> float | None:
    return None if base is None or head is None else head - base


def _ratio(base: float | None, head: float | None) -> float | None:
    return None if base is None or head is None or base == 0 else head / base


def _finding_key(f: dict[str, Any]) -> tuple[str, str | None]:
    return str(f.get("kind")), (None if f.get("roof") is None else str(f.get("roof")))


def _findings_comparable(b: dict[str, Any], h: dict[str, Any]) -> bool:
    """Findings compare only when both sides were diagnosed (ceilings computed, a bounding roof)."""
    return all("diagnosis" in k and "ceilings" in k and k.get("usable", True) and k.get("bound_by")
               for k in (b, h))


def _findings_change(b: dict[str, Any], h: dict[str, Any]) -> dict[str, Any]:
    if not _findings_comparable(b, h):
        return {"compared": False, "appeared": [], "disappeared": [], "kept": []}
    before = {_finding_key(f): f for f in b.get("diagnosis") or [] if isinstance(f, dict)}
    after = {_finding_key(f): f for f in h.get("diagnosis") or [] if isinstance(f, dict)}

    def item(f: dict[str, Any]) -> dict[str, Any]:
        return {"kind": str(f.get("kind")), "roof": f.get("roof"), "text": str(f.get("text") or "")}

    return {
        "compared": True,
        "appeared": [item(f) for key, f in after.items() if key not in before],
        "disappeared": [item(f) for key, f in before.items() if key not in after],
        "kept": [{"kind": key[0], "roof": key[1]} for key in before if key in after],
    }


def kernel_side(run_kernel: RunKernel) -> dict[str, Any]:
    """What the diff keeps of one kernel."""
    k = run_kernel.data
    util = {r: number(u) for r, u in (k.get("utilization") or {}).items()}
    bound = k.get("bound_by")
    return {
        "report": run_kernel.report,
        "index": k.get("index"),
        "name": k.get("name"),
        "demangled_name": k.get("demangled_name"),
        "device": k.get("device"),
        "grid_size": k.get("grid_size"),
        "block_size": k.get("block_size"),
        "nvtx_ranges": list(k.get("nvtx_ranges") or []),
        "usable": bool(k.get("usable", True)),
        "duration_s": duration_of(k),
        "bound_by": bound,
        "bound_utilization": util.get(bound) if bound else None,
        "regime": k.get("regime"),
        "utilization": util,
        "intensity_flop_per_byte": {lv: number(v) for lv, v in (k.get("intensity_flop_per_byte") or {}).items()},
        "achieved_flop_per_s": number(k.get("achieved_flop_per_s")),
        "peaks": k.get("peaks") or {},
        "work_flop": k.get("work_flop") or {},
        "tensor_ops_by_datapath": k.get("tensor_ops_by_datapath") or {},
    }


def _delta_change(base: float | None, head: float | None) -> dict[str, float | None]:
    """Both values and head - base."""
    return {"base": base, "head": head, "delta": _delta(base, head)}


def _ratio_change(base: float | None, head: float | None) -> dict[str, float | None]:
    """Both values and head / base."""
    return {"base": base, "head": head, "ratio": _ratio(base, head)}


def _duration_change(db: float | None, dh: float | None) -> dict[str, float | None]:
    return {"base_s": db, "head_s": dh, "delta_s": _delta(db, dh), "delta_pct": relative_pct(db, dh),
            "speedup": _ratio(dh, db)}


def _roofs_of(base: dict[str, Any], head: dict[str, Any]) -> list[str]:
    """The roofs either side has a utilisation for: the known ones in order, then the rest sorted."""
    roofs = [r for r in R.ROOFS if r in base["utilization"] or r in head["utilization"]]
    return roofs + sorted((set(base["utilization"]) | set(head["utilization"])) - set(roofs))


def kernel_change(b: RunKernel, h: RunKernel, pair: Pair | None = None) -> dict[str, Any]:
    """Everything that changed between a BASE kernel and its HEAD match."""
    base, head = kernel_side(b), kernel_side(h)
    bi, hi = base["intensity_flop_per_byte"], head["intensity_flop_per_byte"]
    levels = [lv for lv in R.LEVELS if lv in bi or lv in hi]
    return {
        "name": display_name(b.data),
        "base": base,
        "head": head,
        "launch_config_changed": bool(pair and pair.launch_config_changed),
        "nvtx_changed": bool(pair and pair.nvtx_changed),
        "duration": _duration_change(base["duration_s"], head["duration_s"]),
        "bound_by": {"base": base["bound_by"], "head": head["bound_by"],
                     "changed": base["bound_by"] != head["bound_by"]},
        "regime": {"base": base["regime"], "head": head["regime"]},
        "bound_utilization": _delta_change(base["bound_utilization"], head["bound_utilization"]),
        "utilization": {r: _delta_change(base["utilization"].get(r), head["utilization"].get(r))
                        for r in _roofs_of(base, head)},
        "intensity_flop_per_byte": {lv: _ratio_change(bi.get(lv), hi.get(lv)) for lv in levels},
        "achieved_flop_per_s": _ratio_change(base["achieved_flop_per_s"], head["achieved_flop_per_s"]),
        "findings": _findings_change(b.data, h.data),
    }


def _sort_key(change: dict[str, Any]) -> tuple[float, int, int]:
    delta = change["duration"]["delta_s"]
    return (-abs(delta) if delta is not None else math.inf, change["base"]["_position"],
            change["head"]["_position"])


def unmatched_entry(run_kernel: RunKernel) -> dict[str, Any]:
    """What the diff keeps of a kernel that has no match in the other run."""
    k = run_kernel.data
    return {"report": run_kernel.report, "index": k.get("index"), "name": k.get("name"),
            "demangled_name": k.get("demangled_name"), "device": k.get("device"),
            "grid_size": k.get("grid_size"), "block_size": k.get("block_size"),
            "nvtx_ranges": list(k.get("nvtx_ranges") or []), "duration_s": duration_of(k),
            "bound_by": k.get("bound_by")}


# --------------------------------------------------------------------------------------------
# Totals and gate


def _sum(values: Iterable[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def totals(matched: Sequence[dict[str, Any]], base: Run, head: Run) -> dict[str, Any]:
    """Total GPU time of the matched kernels (those timed on both sides) and of everything."""
    timed = [c for c in matched if c["duration"]["base_s"] is not None and c["duration"]["head_s"] is not None]
    mb = _sum(c["duration"]["base_s"] for c in timed)
    mh = _sum(c["duration"]["head_s"] for c in timed)
    ab, ah = base.total_duration_s, head.total_duration_s
    return {
        "matched": {"count": len(matched), "timed_count": len(timed), "base_s": mb, "head_s": mh,
                    "delta_s": _delta(mb, mh), "delta_pct": relative_pct(mb, mh)},
        "all": {"base_count": len(base.kernels), "head_count": len(head.kernels), "base_s": ab, "head_s": ah,
                "delta_s": _delta(ab, ah), "delta_pct": relative_pct(ab, ah)},
    }


def _gate_limit(threshold_pct: float) -> float:
    """The threshold with the float-rounding tolerance: a change must be above this to regress."""
    return threshold_pct * (1 + _GATE_TOLERANCE) + _GATE_TOLERANCE


def _total_regression(matched_total: dict[str, Any], limit: float) -> dict[str, Any] | None:
    """The matched total, when it grew by more than `limit` percent."""
    if matched_total["delta_pct"] is None or not matched_total["delta_pct"] > limit:
        return None
    return {"scope": "total", "name": "total GPU time of matched kernels", "base_s": matched_total["base_s"],
            "head_s": matched_total["head_s"], "delta_pct": matched_total["delta_pct"]}


def _kernel_regressions(matched: Sequence[dict[str, Any]], limit: float, min_duration_s: float,
                        min_delta_s: float) -> list[dict[str, Any]]:
    """The matched kernels long enough in BASE that grew by more than `limit` % and `min_delta_s`."""
    regressions = []
    for c in matched:
        d = c["duration"]
        if d["base_s"] is None or d["delta_pct"] is None or d["base_s"] < min_duration_s:
            continue
        if d["delta_pct"] > limit and d["delta_s"] >= min_delta_s * (1 - _GATE_TOLERANCE):
            regressions.append({"scope": "kernel", "name": c["name"], "report": c["head"]["report"],
                                "index": c["head"]["index"], "base_s": d["base_s"], "head_s": d["head_s"],
                                "delta_pct": d["delta_pct"]})
    return regressions


def evaluate_gate(matched: Sequence[dict[str, Any]], total: dict[str, Any], threshold_pct: float | None,
                  min_duration_s: float = DEFAULT_MIN_DURATION_S,
                  min_delta_s: float = DEFAULT_MIN_DELTA_S) -> dict[str, Any]:
    """The CI verdict: which matched kernels, or the matched total, got slower than allowed."""
    gate: dict[str, Any] = {"enabled": threshold_pct is not None, "threshold_pct": threshold_pct,
                            "min_duration_s": min_duration_s, "min_delta_s": min_delta_s,
                            "passed": None, "regressions": []}
    if threshold_pct is None:
        return gate
    limit = _gate_limit(threshold_pct)
    total_hit = _total_regression(total["matched"], limit)
    regressions = ([total_hit] if total_hit else []) + _kernel_regressions(matched, limit, min_duration_s,
                                                                           min_delta_s)
    gate["regressions"] = regressions
    gate["passed"] = not regressions
    return gate


# --------------------------------------------------------------------------------------------
# The whole comparison


@dataclass
class Diff:
    """BASE vs HEAD: matched changes (largest time change first), unmatched kernels, totals, gate."""

    base: Run
    head: Run
    matched: list[dict[str, Any]]
    unmatched_base: list[dict[str, Any]]
    unmatched_head: list[dict[str, Any]]
    totals: dict[str, Any]
    gate: dict[str, Any]

    @property
    def failed(self) -> bool:
        """True when a gate was set and did not pass."""
        return self.gate["passed"] is False

    def to_dict(self) -> dict[str, Any]:
        """The `ncu-roofline-diff/1` document as plain data."""
        return {
            "schema": SCHEMA,
            "generator": {"name": "ncu-roofline", "version": __version__},
            "base": self.base.summary(),
            "head": self.head.summary(),
            "matched": [_public(c) for c in self.matched],
            "unmatched_base": list(self.unmatched_base),
            "unmatched_head": list(self.unmatched_head),
            "totals": self.totals,
            "gate": self.gate,
        }

    def to_json(self, indent: int | None = 1) -> str:
        """The `ncu-roofline-diff/1` document: sorted keys, no NaN, nothing time-dependent."""
        return dumps(self.to_dict(), indent)


def _public(change: dict[str, Any]) -> dict[str, Any]:
    """A change without the fields kept only for drawing (positions, peaks, work)."""
    hidden = {"_position", "peaks", "work_flop", "tensor_ops_by_datapath"}
    return {**change, "base": {k: v for k, v in change["base"].items() if k not in hidden},
            "head": {k: v for k, v in change["head"].items() if k not in hidden}}


def diff_runs(base: Run, head: Run, *, fail_on_regression: float | None = None,
              min_duration_s: float = DEFAULT_MIN_DURATION_S, min_delta_s: float = DEFAULT_MIN_DELTA_S) -> Diff:
    """Match the kernels of two runs and measure what changed."""
    bk = [k.data for k in base.kernels]
    hk = [k.data for k in head.kernels]
    matching = match_kernels(bk, hk)
    matched = []
    for pair in matching.pairs:
        change = kernel_change(base.kernels[pair.base], head.kernels[pair.head], pair)
        change["base"]["_position"] = pair.base
        change["head"]["_position"] = pair.head
        matched.append(change)
    matched.sort(key=_sort_key)
    total = totals(matched, base, head)
    gate = evaluate_gate(matched, total, fail_on_regression, min_duration_s, min_delta_s)
    return Diff(base, head, matched,
                [unmatched_entry(base.kernels[i]) for i in matching.unmatched_base],
                [unmatched_entry(head.kernels[j]) for j in matching.unmatched_head],
                total, gate)


def compare(base: str | Path, head: str | Path, *, fail_on_regression: float | None = None,
            min_duration_s: float = DEFAULT_MIN_DURATION_S, min_delta_s: float = DEFAULT_MIN_DELTA_S,
            settings: AnalysisSettings | None = None) -> Diff:
    """Load both runs (see `load_run`) and diff them; raises `InputError` for unusable input."""
    return diff_runs(load_run(base, settings), load_run(head, settings),
                     fail_on_regression=fail_on_regression, min_duration_s=min_duration_s,
                     min_delta_s=min_delta_s)
