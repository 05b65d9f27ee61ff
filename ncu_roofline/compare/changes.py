"""What changed between a BASE kernel and its HEAD partner: limiter, utilisation, intensity, findings.

`kernel_side` keeps what the comparison needs of one kernel dict; `kernel_change` compares two
sides (the representative launches of two matched groups in `diff`, two launches in `trend`).
Durations are compared by the caller (a group's median, or a launch's own duration).
"""

from __future__ import annotations

from typing import Any

from ..knowledge import recipes as R
from .runs import RunKernel, duration_of, number


def relative_pct(base: float | None, head: float | None) -> float | None:
    """(head - base) / base in percent; None when either is unknown or base is 0."""
    if base is None or head is None or base == 0:
        return None
    return (head - base) / base * 100.0


def delta(base: float | None, head: float | None) -> float | None:
    """head - base; None when either is unknown."""
    return None if base is None or head is None else head - base


def ratio(base: float | None, head: float | None) -> float | None:
    """head / base; None when either is unknown or base is 0."""
    return None if base is None or head is None or base == 0 else head / base


def _finding_key(f: dict[str, Any]) -> tuple[str, str | None]:
    return str(f.get("kind")), (None if f.get("roof") is None else str(f.get("roof")))


def _findings_comparable(b: dict[str, Any], h: dict[str, Any]) -> bool:
    """Findings compare only when both sides were diagnosed (ceilings computed, a bounding roof)."""
    return all("diagnosis" in k and "ceilings" in k and k.get("usable", True) and k.get("bound_by")
               for k in (b, h))


def findings_change(b: dict[str, Any], h: dict[str, Any]) -> dict[str, Any]:
    """The findings (diagnosis kind and roof) that appeared, disappeared or stayed."""
    if not _findings_comparable(b, h):
        return {"compared": False, "appeared": [], "disappeared": [], "kept": []}
    before = {_finding_key(f): f for f in b.get("diagnosis") or [] if isinstance(f, dict)}
    after = {_finding_key(f): f for f in h.get("diagnosis") or [] if isinstance(f, dict)}

    def item(f: dict[str, Any]) -> dict[str, Any]:
        # the headline (`ncu-roofline/4`), or the sentence of a document written before it
        return {"kind": str(f.get("kind")), "variant": f.get("variant"), "roof": f.get("roof"),
                "speedup": number(f.get("speedup")),
                "text": str(f.get("headline") or f.get("text") or ""), "next_step": f.get("next_step")}

    return {
        "compared": True,
        "appeared": [item(f) for key, f in after.items() if key not in before],
        "disappeared": [item(f) for key, f in before.items() if key not in after],
        "kept": [{"kind": key[0], "roof": key[1]} for key in before if key in after],
    }


def kernel_side(run_kernel: RunKernel) -> dict[str, Any]:
    """What a comparison keeps of one kernel."""
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
        "waves_per_sm": number((k.get("launch") or {}).get("waves_per_sm")),
    }


def delta_change(base: float | None, head: float | None) -> dict[str, float | None]:
    """Both values and head - base."""
    return {"base": base, "head": head, "delta": delta(base, head)}


def ratio_change(base: float | None, head: float | None) -> dict[str, float | None]:
    """Both values and head / base."""
    return {"base": base, "head": head, "ratio": ratio(base, head)}


def _roofs_of(base: dict[str, Any], head: dict[str, Any]) -> list[str]:
    """The roofs either side has a utilisation for: the known ones in order, then the rest sorted."""
    roofs = [r for r in R.ROOFS if r in base["utilization"] or r in head["utilization"]]
    return roofs + sorted((set(base["utilization"]) | set(head["utilization"])) - set(roofs))


def kernel_change(base: dict[str, Any], head: dict[str, Any], b: dict[str, Any], h: dict[str, Any]) -> dict[str, Any]:
    """Limiter, regime, utilisation, intensity, FLOP/s and findings of two sides (`kernel_side`s of b, h)."""
    bi, hi = base["intensity_flop_per_byte"], head["intensity_flop_per_byte"]
    levels = [lv for lv in R.LEVELS if lv in bi or lv in hi]
    return {
        "bound_by": {"base": base["bound_by"], "head": head["bound_by"],
                     "changed": base["bound_by"] != head["bound_by"]},
        "regime": {"base": base["regime"], "head": head["regime"]},
        "bound_utilization": delta_change(base["bound_utilization"], head["bound_utilization"]),
        "utilization": {r: delta_change(base["utilization"].get(r), head["utilization"].get(r))
                        for r in _roofs_of(base, head)},
        "intensity_flop_per_byte": {lv: ratio_change(bi.get(lv), hi.get(lv)) for lv in levels},
        "achieved_flop_per_s": ratio_change(base["achieved_flop_per_s"], head["achieved_flop_per_s"]),
        "findings": findings_change(b, h),
    }
