"""Local memory: the loads and stores a kernel makes to its threads' private memory (register spills, or an
array the compiler could not keep in registers). Its traffic travels through L1 and L2 like global memory's,
and a spilling kernel's L2 and DRAM figures are partly its own registers'."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .facts import GLOBAL_MEMORY_INSTRUCTIONS, L2_TRANSACTIONS, LOCAL_INSTRUCTIONS, held_sum
from .finding import Finding, Kind

if TYPE_CHECKING:
    from ..model.roofline import KernelModel

# Local loads and stores from this share of the memory instructions (global and local) are worth a finding.
NOTABLE_SHARE = 0.05


def _first_held(m: KernelModel, pairs: tuple[tuple[str, str], ...]) -> float | None:
    """The sum of the first pair of counts the kernel holds both of."""
    return next((total for pair in pairs if (total := held_sum(m, pair)) is not None), None)


def local_memory(m: KernelModel) -> list[Finding]:
    """A finding where local-memory loads and stores are a notable part of the kernel's memory instructions."""
    local = _first_held(m, LOCAL_INSTRUCTIONS)
    if local is None or local <= 0:
        return []
    other = _first_held(m, GLOBAL_MEMORY_INSTRUCTIONS)
    share = local / (local + other) if other is not None else None
    if share is not None and share < NOTABLE_SHARE:
        return []
    local_l2, all_l2 = held_sum(m, L2_TRANSACTIONS[:1]), held_sum(m, L2_TRANSACTIONS)
    figures = {"local": local, "total": local + other if other is not None else None, "share": share,
               "regs": m.launch.get("registers_per_thread") or None,
               "l2_share": local_l2 / all_l2 if local_l2 is not None and all_l2 else None}
    evidence = tuple(n for pair in (*LOCAL_INSTRUCTIONS, *GLOBAL_MEMORY_INSTRUCTIONS) for n in pair
                     if n in m.raw.metrics)
    return [Finding(Kind.LOCAL_MEMORY, "spills", m.bound_by, None, m.bound_by, None, "registers", ("local_cost",),
                    figures, evidence)]
