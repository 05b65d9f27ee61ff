"""A ceiling's finding as data: the figures its words use, from the ceiling's evidence, and its next step's key."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .ceilings import Ceiling
from .facts import global_loads
from .fusion import MIX
from .shared_memory import FEW_CONFLICTS

if TYPE_CHECKING:
    from ..model.roofline import KernelModel


def ceiling_figures(c: Ceiling) -> dict[str, float | str | None]:
    """The figures a ceiling's finding is worded with, from its evidence."""
    e = c.evidence
    figures: dict[str, float | str | None] = {"factor": c.factor, "precision": c.roof.upper(), "level": c.roof.upper()}
    if c.kind == "fma_balance":
        figures["fma_share"] = e.get("fma_share")
    elif c.kind == "issue_share":
        figures["fp_share"] = e.get("fp_share")
    elif c.kind == "lane_efficiency":
        figures["lanes"] = e.get("pred_on_threads_per_inst")
    elif c.kind == "tensor_share":
        figures["tensor_share"] = c.factor
    elif c.kind == "sector_use":
        used = {op: v for op in ("ld", "st") if (v := e.get(f"{op}_bytes_used_per_sector")) is not None}
        worst = min(used, key=lambda op: used[op], default=None)
        sectors = {op: e.get(f"{op}_sectors") for op in used}  # where counted: the worst direction's share of them
        counted = None not in sectors.values() and sum(s for s in sectors.values() if s) > 0
        figures["worst_share"] = (sectors[worst] or 0.0) / sum(s for s in sectors.values() if s) \
            if counted and worst is not None and len(used) > 1 else None
        figures |= {"worst_op": {"ld": "loads", "st": "stores"}.get(worst or ""), "worst_bytes": used.get(worst or ""),
                    "per_sector": c.factor * 32.0 if not e.get(f"{c.roof}_moved_bytes") else None,
                    "moved": e.get(f"{c.roof}_moved_bytes")}
    elif c.kind == "bank_conflicts":
        conflicts, wavefronts = e.get("bank_conflicts"), e.get("shared_wavefronts")
        figures |= {"conflicts": conflicts, "wavefronts": wavefronts,
                    "conflict_share": conflicts / wavefronts if conflicts is not None and wavefronts else None}
    return figures


def ceiling_lever(m: KernelModel, c: Ceiling) -> tuple[str | None, dict[str, float | str | None]]:
    """A ceiling's next step key, and the figures it needs."""
    if c.kind == "fma_balance":
        opcodes = MIX.get(c.roof, ("", "", ""))
        adds, muls = (c.evidence.get(f"{c.roof}_{op}_thread_inst", 0.0) for op in opcodes[:2])
        if adds > 0 and muls > 0:
            return "fuse", {}
        return "no_pairs", {"alone": "adds" if adds > 0 else "multiplies"}
    if c.kind == "issue_share":
        loads = global_loads(m)
        return ("vector" if loads is None or loads > 0 else "no_loads"), {}
    if c.kind == "bank_conflicts":
        free = c.evidence.get("conflict_free_share", c.factor)
        return ("pad" if 1.0 - free >= FEW_CONFLICTS else None), {}
    return {"lane_efficiency": "uniform", "tensor_share": "move", "sector_use": "adjacent",
            "coalescing": "coalesce"}.get(c.kind), {}
