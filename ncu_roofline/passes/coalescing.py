"""Coalescing of global loads and stores: sectors per request against the sectors the bytes used need.

Two measures, checked against each other:
- per direction (loads, stores): L1's sectors and requests, and the bytes used per sector
  (`smsp__sass_average_data_bytes_per_sector_mem_global_op_{ld,st}.ratio`); the ideal request holds
  its used bytes in as few sectors as they fill. The ratio is an average over every load (or store)
  instruction: a broadcast load that takes a whole sector for its 4 bytes lowers it as much as a
  strided one does, so the average alone can claim waste where there is none.
- Nsight Compute's own: its source counters attribute to every global instruction the sectors its
  addresses touch and the sectors they would need (`memory_l2_theoretical_sectors_global` and
  `..._ideal`; their difference `derived__memory_l2_theoretical_sectors_global_excessive`, which
  the reports label `byte` though it counts sectors: 16,777,216 − 2,097,152 = 14,680,064 for a
  transpose whose stores stride 8 sectors per request; 2021-era reports name them without
  `theoretical_`). Its "Uncoalesced Global Accesses" rule quotes these figures.

The per-direction measure is used where it agrees with Nsight Compute's (it says loads or stores);
where it claims more excessive sectors than Nsight Compute counts, or where the report holds only
Nsight Compute's count, the ceiling is Nsight Compute's, for loads and stores together.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..model.quantities import Resolver

EXCESS_SECTORS = "derived__memory_l2_theoretical_sectors_global_excessive"
EXCESS_SECTORS_OLD = "derived__memory_l2_sectors_global_excessive"  # Nsight Compute 2021-era name
# (sectors touched, sectors needed), Nsight Compute's source counters, under its current and 2021-era names
TOTALS = (("memory_l2_theoretical_sectors_global", "memory_l2_theoretical_sectors_global_ideal"),
          ("memory_l2_sectors_global", "memory_l2_sectors_global_ideal"))
SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_{}.sum"
REQUESTS = "l1tex__t_requests_pipe_lsu_mem_global_op_{}.sum"
# The per-direction estimate may count this much more, or less, excess than Nsight Compute before it is set
# aside (the corpus: 0 to 0.05 % apart where both are held).
AGREEMENT = 1.05
COALESCE = ("coalesce: let consecutive threads access consecutive, aligned addresses; use 8- or 16-byte "
            "vector accesses where each thread needs several elements")


@dataclass(frozen=True, slots=True)
class Excess:
    """Nsight Compute's count of global sectors beyond what the accesses need, and of all global sectors."""

    excessive: float
    total: float
    recipe: str  # the metrics the figures came from


@dataclass(frozen=True, slots=True)
class Cap:
    """One coalescing ceiling on the L1 roof, before it is placed under the roof."""

    factor: float
    evidence: dict[str, float]
    detail: str


def nsight_excess(res: Resolver) -> Excess | None:
    """Nsight Compute's excessive global sectors and the total they are part of; None where it counts neither.
    The total is its theoretical sectors where held, else L1's global load and store sectors."""
    for total_name, ideal_name in TOTALS:
        total, ideal = res.number(total_name), res.number(ideal_name)
        if total is not None and ideal is not None and total > 0 and 0 <= ideal <= total:
            return Excess(total - ideal, total, f"{total_name} − {ideal_name}")
    for name in (EXCESS_SECTORS, EXCESS_SECTORS_OLD):
        excessive = res.number(name)
        if excessive is None or excessive < 0:
            continue
        counts = [res.count(SECTORS.format(op)) for op in ("ld", "st")]
        sectors = sum(c[0] for c in counts if c is not None)
        if excessive == 0:
            return Excess(0.0, sectors, name)
        if sectors >= excessive:
            return Excess(excessive, sectors, f"{name} of {SECTORS.format('ld')} + {SECTORS.format('st')}")
    return None


def per_direction(res: Resolver, used: dict[str, float]) -> list[Cap]:
    """A cap per direction with a bytes-per-sector ratio and L1 sector and request counts."""
    caps = []
    for op in used:
        sectors = res.count(SECTORS.format(op))
        requests = res.count(REQUESTS.format(op))
        r = used[op]
        if sectors is None or requests is None or requests[0] <= 0 or sectors[0] <= 0 or r <= 0:
            continue
        per_request = sectors[0] / requests[0]
        ideal = max(1.0, per_request * r / 32.0)  # sectors the useful bytes of a request need
        caps.append(Cap(ideal / per_request,
                        {f"{op}_sectors": sectors[0], f"{op}_requests": requests[0],
                         f"{op}_sectors_per_request": per_request, f"{op}_ideal_sectors_per_request": ideal},
                        f"global {'loads' if op == 'ld' else 'stores'} touch {per_request:.1f} sectors per request "
                        f"where {ideal:.1f} would hold the bytes used"))
    return caps


def excess_of(caps: list[Cap]) -> float:
    """The excessive sectors the per-direction caps claim: each direction's sectors × (1 − factor)."""
    return sum(v * (1.0 - c.factor) for c in caps for k, v in c.evidence.items()
               if k.endswith("_sectors") and not k.endswith("ideal_sectors"))


def agrees(claimed: float, counted: float) -> bool:
    """The per-direction caps' excessive sectors are Nsight Compute's count within `AGREEMENT` (a sector either way
    for rounding)."""
    return counted / AGREEMENT - 1.0 <= claimed <= counted * AGREEMENT + 1.0


def from_nsight(excess: Excess) -> Cap:
    """The cap Nsight Compute's count gives loads and stores together: needed sectors ÷ sectors touched."""
    needed = excess.total - excess.excessive
    share = excess.excessive / excess.total
    return Cap(needed / excess.total,
               {"global_sectors": excess.total, "global_excessive_sectors": excess.excessive,
                "global_needed_sectors": needed},
               f"global loads and stores touch {excess.total:,.0f} sectors where {needed:,.0f} would hold the bytes "
               f"used: Nsight Compute counts {excess.excessive:,.0f} excessive sectors ({share:.0%} of them; "
               f"{excess.recipe})")
