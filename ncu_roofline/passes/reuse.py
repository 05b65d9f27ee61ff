"""What fewer bytes can give a kernel at a memory roof: whether it reads its data once, and what stays.

A kernel at the DRAM roof moves fewer bytes by fusion with its neighbours, a narrower data type, or
reuse within itself (tiles in shared memory or registers). The last needs data that the kernel reads
more than once. Where DRAM read about as many bytes as the kernel's loads asked for (`ceilings.
dram_reads_per_load_byte`) and its loads seldom hit L1, no cache served a second read: tiling has
nothing to keep, and a low L2 hit rate is no missed reuse; its intensity gap then has no speed-up of its
own. Fewer bytes leave the arithmetic, and the issue slots its instructions other than
global loads and stores take (`issue_without_memory`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from ..knowledge import recipes as R
from ..model.roofline import DRAM_LIMITS
from .facts import ISSUED, MEMORY_INSTRUCTIONS, fact, held_sum
from .finding import Finding, Kind

if TYPE_CHECKING:
    from ..model.quantities import Resolver
    from ..model.roofline import KernelModel

# DRAM read bytes ÷ the bytes of the sectors the loads asked for, of a kernel that reads each byte about
# once: about 1 (every sector from DRAM), a little more where L2 fetches a neighbouring sector from DRAM too
# (1.21 for a matrix addition). Below, caches served re-reads (a stencil's neighbours, a GEMM's tiles:
# 0.0007-0.5 in the corpus), or a warm L2 served loads. Above, no claim: more over-fetch could hide
# re-reads, and DRAM may have been read by copies the L1/TEX sector counts do not see (TMA).
READS_ONCE = (0.9, 1.35)
# Nsight Compute's L1 hit rate of global loads, where the report holds it: above this, loads re-read data.
LOAD_HITS_AT_MOST = 0.1


def reads_once(reuse: Mapping[str, float]) -> dict[str, float] | None:
    """The figures that say the kernel reads each byte from DRAM about once, else None: DRAM reads per byte its
    loads asked for (`once`), where that and the L1 hit rate of its loads (where known) say so; else, where L1
    served re-reads itself, DRAM reads per byte L1 asked L2 to read (`once_l2`) with L2's hit rate of those
    lookups (`l2_read_hit`): L2 then served no re-read either, and DRAM sent each byte L1 missed about once."""
    ratio = reuse.get("dram_reads_per_load_byte")
    hits = reuse.get("l1_load_hit_rate")
    if ratio is not None and READS_ONCE[0] <= ratio <= READS_ONCE[1] and (hits is None or hits <= LOAD_HITS_AT_MOST):
        return {"once": ratio}
    ratio, hits = reuse.get("dram_reads_per_l2_read_byte"), reuse.get("l2_read_hit_rate")
    if ratio is not None and hits is not None and READS_ONCE[0] <= ratio <= READS_ONCE[1] and hits <= LOAD_HITS_AT_MOST:
        return {"once_l2": ratio, "l2_read_hit": hits}
    return None


ISSUE_LESS_MEMORY = "issue slots (less its global loads and stores)"


def issue_without_memory(m: KernelModel) -> tuple[float, str] | None:
    """The issue slots' busy share that moving fewer bytes leaves: Nsight Compute's issue share less that
    of the global load, store and cp.async instructions (of all warp instructions issued), with its label;
    None where the report lacks those counts."""
    issue = m.units.get("sm__issue_active")
    issued = fact(m, ISSUED)
    if issue is None or not issued:
        return None
    counted = [n for names in MEMORY_INSTRUCTIONS if (n := held_sum(m, names)) is not None]
    if not counted:
        return None
    copies = next((n for name in R.ASYNC_COPY_COUNTS if (n := fact(m, name)) is not None and n > 0), 0.0)
    return issue.share * max(0.0, 1.0 - (max(counted) + copies) / issued), ISSUE_LESS_MEMORY


def issue_left(m: KernelModel, parts: Sequence[tuple[float, KernelModel, object]]) -> tuple[float, str] | None:
    """`issue_without_memory` of a kernel, or of a group (`parts`: its timed launches, (duration, model,
    ...)): the duration-weighted mean of its launches' own figures, each from its own instruction counts
    (where a launch lacks them, the group's shares with its longest launch's counts, as one kernel)."""
    if len(parts) < 2:
        return issue_without_memory(m)
    each = [(d, issue_without_memory(k)) for d, k, _ in parts]
    total = math.fsum(d for d, _ in each)
    if not total > 0 or any(v is None for _, v in each):
        return issue_without_memory(m)
    return math.fsum(d * v[0] for d, v in each if v is not None) / total, ISSUE_LESS_MEMORY


def reuse_note(m: KernelModel, reuse: Mapping[str, float]) -> list[Finding]:
    """A DRAM-bound kernel whose L2 lookups mostly miss: tile or fuse, unless it reads its data once. Then
    its low hit rate is no missed reuse: at the DRAM roof its verdict and intensity gap say so; bound by
    another DRAM limit (reads or writes alone), this note does."""
    hit = reuse.get("l2_hit_rate")
    if m.bound_by not in DRAM_LIMITS or hit is None or hit >= 0.5:
        return []
    once = reads_once(reuse)
    evidence = ("lts__t_sector_hit_rate.pct",)
    if once is None:
        return [Finding(Kind.REUSE, "misses", "dram", None, m.bound_by, None, "tile", ("hit_rate_unknown",),
                        {"hit": hit}, evidence)]
    if m.bound_by == "dram":
        return []
    return [Finding(Kind.REUSE, "reads_once", "dram", None, m.bound_by, None, "fuse", ("fusion_unknown",),
                    {"hit": hit, **once}, (*evidence, "dram__bytes_read.sum"))]


def summed_reuse(launches: list[Mapping[str, float]], reuse: Mapping[str, float]) -> dict[str, float]:
    """A group's reuse: `reuse` (its longest launch's), with DRAM reads per load byte from the launches'
    (`launches`: their reuse) summed bytes and the highest L1 hit rate of their loads, and per byte L1 asked L2
    for with the highest L2 hit rate of those lookups. Each is left out where a launch lacks its bytes, and both
    where the sums would read once while a launch does not (0.8 and 1.6 sum to 1.2, which reads once while
    neither launch does)."""
    out = {k: v for k, v in reuse.items() if k not in (*_LOAD_SIDE, *_L2_SIDE)}
    summed = dict(out)
    for ratio_key, bytes_key, hit_key in (_LOAD_SIDE, _L2_SIDE):
        per = [(r.get(ratio_key), r.get(bytes_key)) for r in launches]
        if not per or not all(ratio is not None and asked for ratio, asked in per):
            continue
        asked = math.fsum(b for _, b in per if b)
        summed[bytes_key] = asked
        summed[ratio_key] = math.fsum(r * b for r, b in per if r is not None and b) / asked
        hits = [h for r in launches if (h := r.get(hit_key)) is not None]
        if hits:
            summed[hit_key] = max(hits)
    if reads_once(summed) is not None and not all(reads_once(r) is not None for r in launches):
        return out
    return summed


# A reuse's figures for DRAM's reads against what the loads asked L1 for, and against what L1 asked L2 for: the
# ratio, the bytes asked, the hit rate (`summed_reuse`).
_LOAD_SIDE = ("dram_reads_per_load_byte", "load_sector_bytes", "l1_load_hit_rate")
_L2_SIDE = ("dram_reads_per_l2_read_byte", "l2_read_bytes", "l2_read_hit_rate")


def l2_reads(res: Resolver) -> dict[str, float]:
    """DRAM read bytes ÷ the bytes L1/TEX asked L2 to read (its misses, `R.L2_READS`), those bytes, and the share
    of those lookups that hit in L2; empty where a count is missing or NaN, or L1 asked for nothing."""
    dram = res.count("dram__bytes_read.sum")
    asked, hits = (res.count(name) for name in R.L2_READS)
    if dram is None or asked is None or hits is None or any(n.startswith(R.L2_READS) for n in res.nan_seen) or \
            not asked[0] > 0:
        return {}
    return {"dram_reads_per_l2_read_byte": dram[0] / (32.0 * asked[0]), "l2_read_bytes": 32.0 * asked[0],
            "l2_read_hit_rate": hits[0] / asked[0]}
