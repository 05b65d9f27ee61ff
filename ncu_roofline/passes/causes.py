"""One finding per cause: the access-pattern ceilings of one set of accesses, said once, and only where they cost.

The sector-use ceilings of L2 and DRAM describe the same global loads and stores: one finding says it, the one
with the larger bound (else the first), and names the other level it caps too (`also_level`, `also_factor`).
Its figures say whether the waste is in loads or stores and their share of the global sectors
(`ceiling_figures`).

A cap on a memory roof the report does not give (no bytes or no peak at that level: the page shows it as n/a)
caps nothing the reader can see: the finding keeps what was observed (its words without `caps`), no cap, no bound.

A bound only where the accesses are material: where what they move is under `MATERIAL` (a tenth) of the bytes
of every limit near the busiest that they cap (the limiter, or a limit within `co_limits.CO_LIMIT` of it: a
roof, or a unit whose work shows under that roof), fixing them takes less than that share off the limit's time,
whatever their own sectors waste (a store-only waste in 8 % of the sectors does not make a DRAM-bound kernel 4×
faster): the finding then states none (`not_material`). What they move at a level is the level's own count for
them where the report holds it (`{level}_moved_bytes`), else 32 bytes for each L1 sector of the directions that
waste bytes; where neither is known, the bound stands.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ..knowledge import recipes as R
from ..knowledge import throughputs as T
from .ceilings import SIGNIFICANT, Ceiling
from .co_limits import co_limits
from .finding import Finding, Kind

if TYPE_CHECKING:
    from ..model.roofline import KernelModel

MATERIAL = 0.10  # accesses moving under a tenth of a limit's bytes: their fix is no bound on its time
_ACCESS = frozenset({Kind.SECTOR_USE, Kind.COALESCING, Kind.BANK_CONFLICTS})
_FULL_SECTOR = 32.0 * 0.999


def _near_levels(m: KernelModel) -> set[str]:
    """The memory levels of the limiter and of the limits near it (a unit's: the roof its work shows under)."""
    ids = [m.bound_by or ""] + [c.id if c.is_roof else (c.roof or "") for c in co_limits(m)]
    levels = {T.related_roof(i) if i not in R.LEVELS else i for i in ids}
    return {lv for lv in levels if lv in R.LEVELS}


def moved_share(m: KernelModel, e: Mapping[str, float], level: str) -> float | None:
    """The share of `level`'s bytes the accesses a sector-use ceiling judges move there (`e`: its evidence); None
    where that is not known."""
    total = m.q.bytes.get(level)
    if total is None or not total.value > 0:
        return None
    moved = e.get(f"{level}_moved_bytes")
    if moved is None:
        wasting = [op for op in ("ld", "st") if (used := e.get(f"{op}_bytes_used_per_sector")) is not None
                   and used < _FULL_SECTOR]
        sectors = [e.get(f"{op}_sectors") for op in wasting]
        if not wasting or None in sectors:
            return None
        moved = 32.0 * sum(s for s in sectors if s is not None)
    return min(1.0, moved / total.value)


def _no_roof(f: Finding) -> Finding:
    """An access-pattern finding on a memory roof the report does not give: what was observed, no cap, no bound."""
    return dataclasses.replace(f.with_figures(caps=None, no_roof=""), factor=None, speedup=None, basis=("no_roof",))


def _merged(m: KernelModel, ceilings: list[Ceiling], f: Finding) -> Finding:
    """The sector-use finding, naming the other level its accesses cap (an available roof, a cap worth a finding),
    without a bound where they move too little of every limit near the busiest they cap."""
    also = next((c for c in ceilings if c.kind == "sector_use" and c.roof != f.roof and c.roof in m.utilization
                 and c.factor < SIGNIFICANT), None)
    if also is not None:
        f = dataclasses.replace(f.with_figures(also_level=also.roof.upper(), also_factor=also.factor),
                                evidence=tuple(dict.fromkeys((*f.evidence, *also.evidence))))
    if f.speedup is None:
        return f
    evidence = {c.roof: c.evidence for c in ceilings if c.kind == "sector_use"}
    capped = {lv for lv in (f.roof, also.roof if also is not None else None) if lv is not None}
    shares = {lv: moved_share(m, evidence.get(lv, {}), lv) for lv in capped & _near_levels(m)}
    if not shares or any(s is None or s >= MATERIAL for s in shares.values()):
        return f
    level, share = max(shares.items(), key=lambda kv: kv[1] or 0.0)
    return dataclasses.replace(f.with_figures(material_level=level.upper(), material_share=share),
                               speedup=None, basis=("not_material",))


def one_per_cause(m: KernelModel, ceilings: list[Ceiling], found: list[Finding]) -> list[Finding]:
    """The findings with one sector-use finding for the L2 and DRAM caps of the same accesses (at the first one's
    place), no cap on a roof the report does not give, and no bound for accesses that move little."""
    out: list[Finding] = []
    sector: int | None = None
    for f in found:
        if f.kind in _ACCESS and f.roof in R.LEVELS and f.roof not in m.utilization:
            f = _no_roof(f)
        if f.kind == Kind.SECTOR_USE:
            if sector is None:
                sector = len(out)
            else:  # the same accesses: keep the finding that caps an available roof, with the larger bound
                kept = out[sector]
                if (f.factor is not None, f.speedup or 0.0) > (kept.factor is not None, kept.speedup or 0.0):
                    out[sector] = f
                continue
        out.append(f)
    if sector is not None and out[sector].factor is not None:
        out[sector] = _merged(m, ceilings, out[sector])
    return out
