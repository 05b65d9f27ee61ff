"""Local memory: the loads and stores a kernel makes to its threads' private memory (register spills, or an
array the compiler could not keep in registers). Its traffic travels through L1 and L2 like global memory's,
and a spilling kernel's L2 and DRAM figures are partly its own registers'."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .facts import GLOBAL_MEMORY_INSTRUCTIONS, L2_TRANSACTIONS, LOCAL_INSTRUCTIONS, held_sum
from .finding import Finding

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
    regs = m.launch.get("registers_per_thread")
    of = f"{local:,.0f} of its {local + other:,.0f}" if other is not None else f"{local:,.0f}"
    text = (f"{of} global and local memory instructions (warp level) are local loads and stores"
            + (f" ({share:.0%})" if share is not None else "")
            + (f", with {regs:,.0f} registers per thread" if regs else "")
            + ": register spills or a local array")
    local_l2, all_l2 = held_sum(m, L2_TRANSACTIONS[:1]), held_sum(m, L2_TRANSACTIONS)
    if local_l2 is not None and all_l2:
        text += f"; they make {local_l2 / all_l2:.0%} of its global and local L2 transactions"
    action = ("keep the values in registers: fewer live values per thread (smaller per-thread tiles, recompute "
              "rather than keep), a register limit only with care (__launch_bounds__ or -maxrregcount: too tight "
              "spills more), local arrays indexed only by compile-time constants; `-Xptxas -v` prints each "
              "kernel's spill stores and loads")
    return [Finding("local_memory", m.bound_by, None, text, action, m.bound_by, None,
                    "no bound: how much of the run the local traffic costs is not in the report")]
