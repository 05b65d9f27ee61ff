"""Local memory: the loads and stores a kernel makes to its threads' private memory (register spills, or an
array the compiler could not keep in registers). Its traffic travels through L1 and L2 like global memory's,
and a spilling kernel's L2 and DRAM figures are partly its own registers'.

Per level, the local share of the traffic:

- L1: the local loads' and stores' L1/TEX sectors over those and the global loads' and stores';
- L2: Nsight Compute's L2 sectors (or 2019-era transactions) of L1's local requests over its local and global
  ones, where the report holds them; else at least L2's L1/TEX sectors less every other L1/TEX access's sectors
  (global, atomic, texture, cp.async: each reaches L2 at most once), over L2's L1/TEX sectors;
- DRAM: at least DRAM's bytes less 32 bytes for every L2 sector of other accesses (those L1/TEX sectors, and
  L2's sectors from outside L1/TEX), over DRAM's bytes. A lower bound, assuming each such sector moves at most
  one 32-byte sector of DRAM (an L2 that fetches neighbouring sectors for them would move more).

Where local bytes are most (`MOSTLY`) of a memory limit's bytes, the limiter's or a limit's near it
(`co_limits.CO_LIMIT`), removing the spills is the first thing to do: that limit's time without the local bytes,
the gain is at most 1 / the busiest share the fix leaves (`left_after`, each share known from below; the limit
itself less its local share where that share is counted, not a lower bound). Its
intensity gap and batching lever then describe bytes that are not the kernel's data, so the diagnosis states no
gap for that limit (`passes.diagnosis`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..knowledge import recipes as R
from ..knowledge import throughputs as T
from . import facts as F
from .co_limits import CO_LIMIT
from .facts import fact, held_sum
from .finding import Finding, Kind
from .stalls import leading, stall_reasons

if TYPE_CHECKING:
    from ..model.roofline import KernelModel

# Local loads and stores from this share of the memory instructions (global and local) are worth a finding.
NOTABLE_SHARE = 0.05
MOSTLY = 0.5  # local bytes from this share of a limit's bytes: the spills are the larger part of its work
# The levels whose limits spills can be most of: L1's roof and units count shared-memory and other traffic that the
# local share of its global and local sectors leaves out.
SPILL_LEVELS = ("l2", "dram")
SECTOR_BYTES = 32.0
ISSUE_LESS_LOCAL = "issue slots (less its local loads and stores)"
# Volta to Blackwell: at most 255 registers a thread, allocated 8 at a time; within one unit of it there is none
# to raise the cap to.
MAX_REGISTERS, REGISTER_UNIT = 255, 8


def _first_held(m: KernelModel, pairs: tuple[tuple[str, ...], ...]) -> float | None:
    """The sum of the first pair of counts the kernel holds both of."""
    return next((total for pair in pairs if (total := held_sum(m, pair)) is not None), None)


@dataclass(frozen=True, slots=True)
class LocalTraffic:
    """A kernel's local-memory traffic per level (None: not in the report). `at_least`: the levels whose local
    share is a lower bound (derived, not counted)."""

    instructions: float  # local load and store warp instructions
    memory_instructions: float | None  # global and local ones
    l1_sectors: float | None
    l1_share: float | None
    l2_sectors: float | None  # Nsight Compute's count (sectors or transactions), or the derived lower bound
    l2_share: float | None
    dram_bytes: float | None  # lower bound
    dram_share: float | None
    at_least: frozenset[str]

    def share(self, level: str) -> float | None:
        return {"l1": self.l1_share, "l2": self.l2_share, "dram": self.dram_share}.get(level)


def _other_l2_sectors(m: KernelModel) -> float | None:
    """At most the L2 sectors of every access but local ones: the other L1/TEX accesses' sectors, and L2's sectors
    from outside L1/TEX; None where the report lacks the global loads' and stores' sectors."""
    other = held_sum(m, F.GLOBAL_SECTORS)
    if other is None:
        return None
    other += sum(v for name in F.OTHER_L1_SECTORS if (v := fact(m, name)) is not None)
    every, tex = (fact(m, name) for name in F.L2_SECTORS)
    return other + (max(0.0, every - tex) if every is not None and tex is not None else 0.0)


def local_traffic(m: KernelModel) -> LocalTraffic | None:
    """The kernel's local-memory traffic per level; None where it made no local access the report counts."""
    local = _first_held(m, F.LOCAL_INSTRUCTIONS)
    l1_local = held_sum(m, F.LOCAL_SECTORS)
    if not (local or l1_local):
        return None
    other = _first_held(m, F.GLOBAL_MEMORY_INSTRUCTIONS)
    l1_global = held_sum(m, F.GLOBAL_SECTORS)
    l1_share = l1_local / (l1_local + l1_global) if l1_local and l1_global is not None else None
    at_least: set[str] = set()
    counted = next(((v, v / (v + w)) for pair in F.L2_LOCAL_PAIRS
                    if (v := fact(m, pair[0])) is not None and (w := fact(m, pair[1])) is not None and v + w > 0), None)
    others = _other_l2_sectors(m) if l1_local else None
    tex = fact(m, F.L2_SECTORS[1])
    l2_sectors, l2_share = counted if counted is not None else (None, None)
    if counted is None and others is not None and tex and tex > others:  # else no lower bound
        l2_sectors = tex - others
        l2_share = l2_sectors / tex
        at_least.add("l2")
    dram = m.q.bytes.get("dram")
    dram_bytes = dram_share = None
    if others is not None and dram is not None and dram.value > SECTOR_BYTES * others:  # else no lower bound
        dram_bytes = dram.value - SECTOR_BYTES * others
        dram_share = dram_bytes / dram.value
        at_least.add("dram")
    return LocalTraffic(local or 0.0, (local or 0.0) + other if other is not None else None, l1_local, l1_share,
                        l2_sectors, l2_share, dram_bytes, dram_share, frozenset(at_least))


@dataclass(frozen=True, slots=True)
class SpillLimit:
    """A memory limit near the busiest whose bytes are mostly local: its id, label, busy share, the level its
    bytes count at, and the local share of them."""

    id: str
    label: str
    share: float
    level: str
    local_share: float


def spill_limit(m: KernelModel, local: LocalTraffic | None) -> SpillLimit | None:
    """The busiest memory limit, the limiter or within `CO_LIMIT` of it, whose bytes are `MOSTLY` local: a memory
    roof, or a unit whose work shows under one; None where there is none."""
    top = m.limiter_share or 0.0
    if local is None or not top > 0:
        return None
    found = [(share, roof, f"the {roof.upper()} roof", roof) for roof, share in m.utilization.items()
             if roof in SPILL_LEVELS]
    found += [(u.share, uid, u.label, level) for uid, u in m.units.items()
              if u.parent is not None and (level := T.related_roof(uid)) in SPILL_LEVELS]
    near = [(share, uid, label, level) for share, uid, label, level in found
            if (uid == m.bound_by or share >= CO_LIMIT * top) and (local.share(level) or 0.0) >= MOSTLY]
    if not near:
        return None
    share, uid, label, level = max(near, key=lambda f: (f[0], f[1] == m.bound_by))
    return SpillLimit(uid, label, share, level, local.share(level) or 0.0)


def left_after(m: KernelModel, local: LocalTraffic, spill: SpillLimit) -> list[tuple[float, str]]:
    """The busy shares removing the spills leaves, each known from below (share, label): the issue slots less the
    local loads and stores; each memory limit at L1 less local memory's share of L1's global and local sectors (at
    most its share of what L1's limits count); the spill limit itself less its local share where that share is
    counted. A level whose local share is a lower bound or an estimate (L2, DRAM: `LocalTraffic.at_least`, or L2's
    count of the sectors L1 requested) could fall further: it bounds nothing."""
    out = []
    issue, issued = m.units.get("sm__issue_active"), fact(m, F.ISSUED)
    if issue is not None and issued:
        out.append((issue.share * max(0.0, 1.0 - local.instructions / issued), ISSUE_LESS_LOCAL))
    levels = [(share, roof, f"the {roof.upper()} roof") for roof, share in m.utilization.items() if roof in R.LEVELS]
    levels += [(u.share, T.related_roof(uid) or "", u.label) for uid, u in m.units.items()
               if u.group == "memory" and u.parent is not None]
    for share, level, label in levels:
        if level == "l1":
            out.append((share * (1.0 - (local.l1_share or 0.0)), label))
        elif level not in SPILL_LEVELS and label != spill.label:
            out.append((share, label))  # a memory limit spills do not reach
    return out


# Local loads hold at least this share of L1's global and local load sectors: the long-scoreboard waits on L1TEX
# data are then mostly on them.
LOCAL_WAITS = 0.5
LOAD_SECTORS = (F.LOCAL_SECTORS[0], F.GLOBAL_SECTORS[0])  # L1's local and global load sectors


def local_waits(m: KernelModel) -> float | None:
    """The long-scoreboard stalls' share of the stall cycles, where they lead them (`passes.stalls.leading`) and local
    loads hold most of L1's global and local load sectors (the loads those stalls wait on); else None."""
    local, global_ = (fact(m, name) for name in LOAD_SECTORS)
    if local is None or global_ is None or local + global_ <= 0 or local < LOCAL_WAITS * (local + global_):
        return None
    found = stall_reasons(m)
    lead = leading(found) if found else None
    return found[0][1] if found and lead is not None and lead.id == "long_scoreboard" else None


def local_memory(m: KernelModel, local: LocalTraffic | None = None, spill: SpillLimit | None = None,
                 cap: tuple[float, str] | None = None) -> list[Finding]:
    """A finding where local-memory loads and stores are a notable part of the kernel's memory instructions, or
    most of a memory limit's bytes (`spill`): then bounded by 1 / (1 − local share), never past `cap`, the busiest
    limit the fix leaves (share, label)."""
    local = local_traffic(m) if local is None else local
    if local is None or (spill is None and not local.instructions):
        return []
    total = local.memory_instructions
    share = local.instructions / total if total else None
    if spill is None and share is not None and share < NOTABLE_SHARE:
        return []
    regs = m.launch.get("registers_per_thread") or None
    figures = {"local": local.instructions or None, "total": total, "share": share,
               "regs": regs, "raise_regs": regs if regs is not None and regs <= MAX_REGISTERS - REGISTER_UNIT else None,
               "l1_local": local.l1_sectors,
               "l1_share": local.l1_share, "l2_share": local.l2_share, "dram_share": local.dram_share,
               "l2_at_least": "" if "l2" in local.at_least else None,
               "dram_local": local.dram_bytes, "local_waits": local_waits(m)}
    # (from the kept facts: a group's diagnosis runs once its launches' metrics are let go)
    evidence = tuple(n for pairs in (F.LOCAL_INSTRUCTIONS, F.GLOBAL_MEMORY_INSTRUCTIONS, F.L2_LOCAL_PAIRS)
                     for pair in pairs for n in pair if fact(m, n) is not None)
    evidence += tuple(n for n in (*F.LOCAL_SECTORS, *F.GLOBAL_SECTORS) if fact(m, n) is not None)
    if spill is None or m.regime == T.TOO_LITTLE_WORK:
        return [Finding(Kind.LOCAL_MEMORY, "spills", m.bound_by, None, m.bound_by, None, "registers", ("local_cost",),
                        figures, evidence)]
    lower = spill.level in local.at_least  # the local share is a lower bound: the limit may fall further
    figures |= {"spill_label": spill.label, "spill_level": spill.level.upper(), "spill_share": spill.local_share,
                "spill_at_least": "" if lower else None, "spill_about": None if lower else ""}
    # The gain is at most 1 / the busiest share the fix leaves: `cap` (each known from below), and the spill limit
    # less its local share where that share is not a lower bound.
    leaves = [c for c in (cap,) if c is not None and c[0] > 0]
    if not lower:
        leaves.append((spill.share * max(0.0, 1.0 - spill.local_share), spill.label))
    busiest = max(leaves, default=None)
    if busiest is None:
        return [Finding(Kind.LOCAL_MEMORY, "spills", spill.level, None, m.bound_by, None, "registers",
                        ("spill_unbounded",), figures, evidence)]
    other_share, label = busiest
    speedup: float | None = max(1.0, 1.0 / other_share)
    figures |= {"other_label": label, "other_share": other_share, "other_x": speedup}
    basis: tuple[str, ...] = ("spill_leaves",)
    if label != spill.label and m.regime == T.AT_LIMIT and other_share >= (m.limiter_share or 1.0):
        speedup, basis = None, ("other_bounds",)  # the limit the fix leaves bounds the kernel already
    return [Finding(Kind.LOCAL_MEMORY, "spills", spill.level, None, m.bound_by, speedup, "registers", basis,
                    figures, evidence)]
