"""Local memory: the loads and stores a kernel makes to its threads' private memory (register spills, or an
array the compiler could not keep in registers). Its traffic travels through L1 and L2 like global memory's,
and a spilling kernel's L2 and DRAM figures are partly its own registers'."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .facts import GLOBAL_MEMORY_INSTRUCTIONS, L2_TRANSACTIONS, LOCAL_INSTRUCTIONS, REGISTERS, fact
from .finding import Finding

if TYPE_CHECKING:
    from ..model.roofline import KernelModel

# Local loads and stores from this share of the memory instructions (global and local) are worth a finding.
NOTABLE_SHARE = 0.05


def _pair(m: KernelModel, pairs: tuple[tuple[str, str], ...]) -> float | None:
    """The sum of the first pair of counts the kernel holds both of."""
    for a, b in pairs:
        x, y = fact(m, a), fact(m, b)
        if x is not None and y is not None:
            return x + y
    return None


def local_memory(m: KernelModel) -> list[Finding]:
    """A finding where local-memory loads and stores are a notable part of the kernel's memory instructions."""
    local = _pair(m, LOCAL_INSTRUCTIONS)
    if not local or local <= 0:
        return []
    other = _pair(m, GLOBAL_MEMORY_INSTRUCTIONS)
    share = local / (local + other) if other is not None else None
    if share is not None and share < NOTABLE_SHARE:
        return []
    regs = fact(m, REGISTERS)
    of = f"{local:,.0f} of its {local + other:,.0f}" if other is not None else f"{local:,.0f}"
    text = (f"{of} global and local memory instructions (warp level) are local loads and stores"
            + (f" ({share:.0%})" if share is not None else "")
            + (f", with {regs:,.0f} registers per thread" if regs else "")
            + ": register spills or a local array")
    transactions = [fact(m, name) for name in L2_TRANSACTIONS]
    if all(t is not None for t in transactions) and (total := sum(t for t in transactions if t is not None)) > 0:
        text += f"; they make {transactions[0] / total:.0%} of its global and local L2 transactions"  # type: ignore[operator]
    action = ("keep the values in registers: fewer live values per thread (smaller per-thread tiles, recompute "
              "rather than keep), a register limit only with care (__launch_bounds__ or -maxrregcount: too tight "
              "spills more), local arrays indexed only by compile-time constants; `-Xptxas -v` prints each "
              "kernel's spill stores and loads")
    return [Finding("local_memory", m.bound_by, None, text, action, m.bound_by, None,
                    "no bound: how much of the run the local traffic costs is not in the report")]
