"""The diagnosis: what explains the gap under the kernel's limiter, ranked by what fixing it is worth.

Only findings about the limit the kernel actually hits are ranked, the first one always names it:

- too little work: the launch, with its grid and waves;
- at a limit: that limit, and the next step about it (for a memory roof, the intensity gap to the
  ridge point: how many times more FLOP per byte would reach the compute roof); a unit throughput
  with the roof its work shows under;
- below every limit (latency): the ceilings under the limiter, then the latency that remains;
- at a limit or below every limit: a partial last wave (tail effect), where the launch has one.

Each finding carries a projected speed-up, as Intel Advisor states it: fixing a ceiling lets the
kernel run up to roof ÷ ceiling (1 / factor) faster, never past the busiest limit its fix leaves
unchanged; the intensity gap up to compute roof × the kernel's FP-mix ceilings ÷ achieved FLOP/s;
the latency gap up to (what the ceilings allow) ÷ (what the kernel reaches); a partial last wave
up to ceil(waves) ÷ waves for equal block times, less where the measured achieved occupancy shows
the last wave took less of the run, never past the busiest limit's headroom.
Where no bound can be stated, `speedup` is None and its `basis` says why. The program-level
gain (time share × (1 − 1/speed-up)) needs the whole report and is added in `api.analysis`.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..knowledge import recipes as R
from ..knowledge import throughputs as T
from .causes import one_per_cause
from .ceiling_figures import ceiling_figures, ceiling_lever
from .ceilings import SIGNIFICANT, Ceiling, used_share
from .co_limits import co_limits, listed
from .divisions import FP64_PIPE, fp64_divisions
from .facts import BANK_CONFLICTS, GLOBAL_SECTORS, ISSUE_ACTIVE, ISSUE_ELAPSED, REGISTERS_PER_SM, fact
from .finding import Finding, Kind
from .fusion import fusion_bound
from .latency import block_fit, idle_figures, latency_case, register_fit, step_bound
from .levers import LSU_WAVEFRONTS, fp64_figures, limits_measured, sets_against, unit_lever
from .libraries import library_of
from .reuse import issue_left, reads_once, reuse_note
from .spills import MOSTLY, LocalTraffic, left_after, local_memory, local_traffic, spill_limit
from .stalls import stall_figures
from .tail import apart_from_tail, tail_effect
from .too_little_work import too_little_work, under_one_wave

if TYPE_CHECKING:
    from ..model.roofline import KernelModel
    from ..model.throughputs import UnitShare

# Names of kernels that multiply by a weight matrix shared by every row of the other operand.
_GEMM_LIKE = re.compile(r"gemm|gemv|matmul|linear|mma|dense|fc_|sgemm|hgemm|cutlass", re.IGNORECASE)
_LATENCY_SHARE = 0.6  # below this share of what the ceilings allow, the rest is called latency


# A ceiling's fix changes the work of its own side only: fewer sectors per request (sector use,
# coalescing) or fewer conflicting wavefronts leave the instructions and FLOP as they are; fusing
# into FMA or removing divergence leaves the bytes as they are. The other side's busiest limit
# then bounds what the fix can give.
_MEMORY_CEILINGS = frozenset({"sector_use", "coalescing", "bank_conflicts"})
_COMPUTE_CEILINGS = frozenset({"fma_balance", "issue_share", "lane_efficiency", "tensor_share"})
_LSU_REQUESTS = "l1tex__lsuin_requests"
_MIO = "sm__mio"  # shared-memory instruction queues: their work is what a bank-conflict fix removes


def _other_side(m: KernelModel, kind: str) -> tuple[float, str] | None:
    """The busiest limit whose work a ceiling of `kind` does not change: (share, label), or None. A memory fix
    (fewer sectors or wavefronts per request) leaves the compute side and L1's LSU requests as they are."""
    side = "compute" if kind in _MEMORY_CEILINGS else "memory" if kind in _COMPUTE_CEILINGS else None
    found = None if side is None else _busiest_on(m, side, kind)
    requests = m.units.get(_LSU_REQUESTS) if kind in _MEMORY_CEILINGS else None
    if requests is not None and requests.share > 0 and (found is None or requests.share > found[0]):
        return requests.share, requests.label
    return found


_ORDER = {u.id: n for n, u in enumerate(T.UNITS)}  # among equal shares, the earlier unit is named
# The pipes that do arithmetic (and the FLOP roofs): their work is the kernel's FLOP, whatever its bytes.
_ARITHMETIC = ("sm__pipe_fma", "sm__pipe_alu", "sm__pipe_fp64", "sm__pipe_tensor", "sm__pipe_tc",
               "sm__pipe_shared", "sm__inst_executed_pipe_fp16", "sm__inst_executed_pipe_xu")


def _busiest_on(m: KernelModel, side: str, kind: str = "", arithmetic: bool = False) -> tuple[float, str] | None:
    """The busiest limit of one side ("compute": pipes, issue and FLOP roofs; "memory": memory units and
    byte roofs), sub-units before their headline; for bank conflicts, not the MIO queues; `arithmetic`:
    only the arithmetic pipes and the FLOP roofs."""
    units = [(uid, u) for uid, u in m.units.items()
             if u.group == side and not (kind == "bank_conflicts" and uid.startswith(_MIO))]
    named = [(uid, u) for uid, u in units if u.parent is not None]  # the unit itself, not its side's headline
    if arithmetic:
        named = [(uid, u) for uid, u in named if uid.startswith(_ARITHMETIC)]
    # Among equal shares a roof is named, then the unit that comes first in the knowledge's order
    # (Volta's shared pipe counts its FP64 work too: the FP64 pipe is named).
    roofs = R.LEVELS if side == "memory" else tuple(r for r in R.ROOFS if r not in R.LEVELS)
    found = [(share, 1, f"the {roof.upper()} roof") for roof, share in m.utilization.items() if roof in roofs]
    found += [(u.share, -_ORDER.get(uid, len(_ORDER)), u.label) for uid, u in (named or ([] if arithmetic else units))]
    best = max((f for f in found if math.isfinite(f[0]) and f[0] > 0), key=lambda f: (f[0], f[1]), default=None)
    return None if best is None else (best[0], best[2])


def _ceiling_finding(m: KernelModel, c: Ceiling, caps: str, unit: str | None = None) -> Finding:
    """A ceiling under a limit as a finding, its bound never past the busiest limit its fix leaves as it is;
    `caps`: what it caps, in words ("the DRAM roof", "useful issue slots")."""
    figures = ceiling_figures(c) | {"caps": caps}
    basis: tuple[str, ...]
    if c.kind == "fma_balance":  # fusion gives at most one FMA per (add, multiply) pair
        speedup, basis, more = fusion_bound(c.roof, c.factor, c.evidence)
        figures |= more
    elif c.kind == "sector_use" and c.evidence.get(f"{c.roof}_moved_bytes"):
        # The level's own count of what it moved: with every byte of their sectors used, the same accesses move
        # 1 / factor times fewer bytes through it and through the units that carry them.
        speedup, basis = (1.0 / c.factor if c.factor > 0 else None), ("sector_bytes",)
        used, point = used_share(m, c), m.utilization.get(c.roof)
        if used is not None and point is not None and used < point:
            figures["used"] = used
    elif c.kind == "lane_efficiency" and (unit or m.bound_by) in _ISSUE and c.factor > 0:
        speedup, basis = 1.0 / c.factor, ("lanes", "lanes_apart") if m.regime == T.LATENCY else ("lanes",)
        figures["idle_lanes"] = 1.0 - c.factor  # idle lanes cap no issue slot: they cap the work each one does
    else:
        speedup, basis = (1.0 / c.factor if c.factor > 0 else None), ("roof_over_ceiling",)
    other = _other_side(m, c.kind)
    if speedup is not None and other is not None and 1.0 / other[0] < speedup:
        share, label = other
        capped = max(1.0, 1.0 / share)
        figures |= {"other_label": label, "other_share": share, "other_x": capped}
        if capped < speedup * 0.995:  # a cap that does not change the stated figure is not stated
            basis += ("capped_other",)
        speedup = capped
        if m.regime == T.AT_LIMIT and share >= (m.limiter_share or 1.0):
            # The limit this fix leaves as it is bounds the kernel already: its headroom is no gain of this fix.
            speedup, basis = None, ("other_bounds",)
    lever, extra = ceiling_lever(m, c)
    return Finding(Kind(c.kind), "cap", c.roof, c.factor, m.bound_by, speedup, lever, basis, figures | extra,
                   tuple(c.evidence))


def _intensity_gap(m: KernelModel, level: str, ceilings: list[Ceiling], parts: Parts,
                   reuse: dict[str, float]) -> Finding | None:
    """For a kernel at a memory roof: the FLOP per byte it would need to reach the compute roof.

    The bound is what the compute side allows over what the kernel reaches: the compute roof, times
    the kernel's own ceilings under it that more FLOP per byte leaves as they are (its FMA share, its
    lane use, its tensor share). Not the issue share: more FLOP per byte (fusion, batching) is more FP
    instructions among the same memory instructions, which is what raises it. Never past the busiest
    arithmetic pipe or FLOP roof, whose work fewer bytes leave as it is.
    """
    intensity = m.intensity.get(level)
    ridge = m.ridge_points().get(level)
    roof = m.compute_roof()
    if not intensity or not ridge or not roof or not m.achieved_flop_per_s or ridge <= intensity:
        return None
    gap = ridge / intensity
    under = [c for c in _under(ceilings, m.dominant_precision) if c.kind != "issue_share"]
    kept = _allowed(ceilings, m.dominant_precision, parts, _not_issue)
    allowed = roof * kept
    speedup: float | None = allowed / m.achieved_flop_per_s
    basis: tuple[str, ...] = ("with_ceilings",) if under else ("compute_over_achieved",)
    figures: dict[str, float | str | None] = {
        "intensity": intensity, "level": level.upper(), "ridge": ridge, "gap": gap,
        "kept_gap": kept * gap if under and kept * gap > 1.0 else None}
    # Fewer bytes (fusion, reuse, lower precision) leave this kernel's arithmetic as it is, and more FLOP
    # on the same bytes (batching) loads the same arithmetic pipes more: the busiest of them bounds both,
    # and so do the issue slots its other instructions take (not the LSU pipe: fusion removes loads).
    busiest = max(filter(None, (_busiest_on(m, "compute", arithmetic=True), issue_left(m, parts))), default=None)
    if busiest is not None and allowed / m.achieved_flop_per_s > 1.0 / busiest[0]:
        share, label = busiest
        speedup = max(1.0, 1.0 / share)
        basis += ("capped_arith",)
        at = m.utilization.get(level)
        figures |= {"cap_x": speedup, "cap_label": label, "cap_share": share, "busiest_label": label,
                    "busiest_share": share, "after": max(1.0, at / share) if at else 1.0 / share}
    once = reads_once(reuse) if level == "dram" else None
    lever = "reuse"
    if allowed <= m.achieved_flop_per_s:
        speedup, basis = None, ("no_headroom",)
    elif once is not None:  # a kernel that reads each byte once gains no reuse: no bound ranks its gap first
        speedup, basis = None, ("reads_once",)
    if once is not None:
        lever = "reads_once"
        figures |= once
    elif _GEMM_LIKE.search(m.raw.demangled_name or m.raw.name or ""):
        lever = "batch"  # weights shared across rows (a GEMM or GEMV, as its name suggests): more rows per weight
    return Finding(Kind.INTENSITY_GAP, "gap", level, None, m.bound_by, speedup, lever, basis, figures,
                   ("sm__throughput.avg.pct_of_peak_sustained_elapsed",))


# Nsight Compute's Speed-Of-Light rule calls a kernel's use of a unit high from 80 % of its peak ("greater than
# 80.0% of the available compute or memory performance"): below it, an at-limit kernel has the rest of the
# roof left, part of which better latency hiding reaches (a copy kernel on the same GPU reaches 90-95 %).
HIGH_THROUGHPUT = 0.8
SIGNIFICANT_SHARE = 0.995  # what the ceilings allow, from which it prints as the whole roof


def _at_roof(m: KernelModel, ceilings: list[Ceiling], parts: Parts, reuse: dict[str, float]) -> list[Finding]:
    bound = m.bound_by or ""
    share = m.limiter_share or 0.0
    memory = bound in R.LEVELS
    high = share >= HIGH_THROUGHPUT
    figures: dict[str, float | str | None] = {"limit": bound.upper(), "share": share, "rest": 1 - share,
                                              "left": 1.0 / share if share > 0 else None}
    once = reads_once(reuse) if bound == "dram" else None  # nothing is re-read: no tiling to advise
    lever = ("less_work" if not memory else "fewer_bytes" if once is None else "fewer_bytes_once") + \
        ("" if high else "_short")
    basis = ("at_limit",) if high else ("at_limit_short",)
    spilled = _spilled(bound, local_traffic(m) if memory else None, figures)
    if spilled:  # its bytes are mostly spilled registers: remove them first, they bound what that gives
        lever, basis = "spills", ("spills_bound",)
    head = Finding(Kind.AT_LIMIT, "high" if high else "short", bound, None, bound, None, lever, basis, figures)
    findings = [head]
    if memory and not spilled:  # FLOP per spilled byte is no intensity of the kernel's data: no gap, no batching
        gap = _intensity_gap(m, bound, ceilings, parts, reuse)
        if gap is not None:
            findings.append(gap)
            if gap.speedup is not None:  # the head then points at the gap's bound, not "no speed-up" against it
                findings[0] = dataclasses.replace(head, basis=("gap_bounds",))
    findings += [_ceiling_finding(m, c, f"{bound.upper()} roof") for c in _under(ceilings, bound)]
    return findings


def _spilled(level: str | None, local: LocalTraffic | None, figures: dict[str, float | str | None]) -> bool:
    """Whether local memory is `MOSTLY` the bytes at a memory level (a limiter's roof); if so the figures its
    next step names are added to `figures`."""
    share = local.share(level) if local is not None and level is not None else None
    if share is None or share < MOSTLY or level is None:
        return False
    lower = local is not None and level in local.at_least  # a lower bound, not a count
    figures |= {"spill_share": share, "spill_level": level.upper(), "spill_at_least": "" if lower else None,
                "spill_about": None if lower else ""}
    return True


def _spill_findings(m: KernelModel, local: LocalTraffic | None) -> list[Finding]:
    """The local-memory finding; where local bytes are most of a limit near the busiest, bounded by that limit
    without them, never past the busiest limit the fix leaves: the arithmetic, the issue slots less the local
    instructions, the other memory limits less their local bytes (`spills.left_after`)."""
    spill = spill_limit(m, local) if m.regime != T.TOO_LITTLE_WORK else None
    if local is None or spill is None:
        return local_memory(m, local)
    left = [f for f in (_busiest_on(m, "compute", arithmetic=True), *left_after(m, local, spill))
            if f is not None and f[0] > 0]
    return local_memory(m, local, spill, max(left, default=None))


# A group's timed launches: (duration, launch, the launch's own ceilings).
Parts = list[tuple[float, "KernelModel", list[Ceiling]]]


def _not_issue(c: Ceiling) -> bool:
    return c.kind != "issue_share"


def _every(_c: Ceiling) -> bool:
    return True


def _allowed(ceilings: list[Ceiling], roof: str | None, parts: Parts,
             keep: Callable[[Ceiling], bool] = _every) -> float:
    """The share of `roof` the ceilings under it allow: their product, for a launch. For a group, each
    launch reaches at most the product F of its own: the group's work W over the time Σ Wⱼ / (Fⱼ P)
    then gives 1 / Σ ωⱼ / Fⱼ, with ωⱼ each launch's share of the roof's work (bytes or FLOP; of the time
    where a launch's work is unknown)."""
    if len(parts) < 2:
        return math.prod(c.factor for c in _under(ceilings, roof) if keep(c))
    work = [_work_on(k, roof) for _, k, _ in parts]
    weights = [w for w in work if w is not None]
    if len(weights) < len(parts) or not math.fsum(weights) > 0:  # a launch's work unknown: time shares
        weights = [d for d, _, _ in parts]
    total = math.fsum(weights)
    if not total > 0:
        return math.prod(c.factor for c in _under(ceilings, roof) if keep(c))
    caps = [math.prod(c.factor for c in _under(own, roof) if keep(c)) for _, _, own in parts]
    if any(f <= 0.0 for f, w in zip(caps, weights, strict=True) if w > 0):  # caps that multiply to nothing
        return 0.0
    return 1.0 / math.fsum(w / total / f for f, w in zip(caps, weights, strict=True) if w > 0)


def _work_on(k: KernelModel, roof: str | None) -> float | None:
    """A launch's work at a roof: its bytes at a memory level, its FLOP at a compute roof."""
    got = k.q.bytes.get(roof) if roof in R.LEVELS else k.q.flop.get(roof or "")
    return got.value if got is not None else None


def _under(ceilings: list[Ceiling], roof: str | None) -> list[Ceiling]:
    return sorted((c for c in ceilings if roof is not None and c.roof == roof and c.factor < SIGNIFICANT),
                  key=lambda c: c.factor)


# Compute ceilings describe FLOP; under a pipe limiter they explain it only when the pipe's work is
# mostly that FLOP (an FMA pipe busy with integer multiply-adds is not an FP32 problem). Lane
# efficiency is not among them: its count (threads per warp instruction) is of every instruction.
_COMPUTE_KINDS = ("fma_balance", "issue_share", "tensor_share")
_FLOP_SHARE_OF_PIPE = 0.5


# Units whose work is warp instructions: a warp instruction takes its issue slot whatever its active lanes, so
# warps whose threads take one path do the same work in fewer of them (the lane-efficiency ceiling; every
# precision's holds the same lanes per instruction: one is named).
_ISSUE = frozenset({"sm__issue_active", "sm__inst_executed"})


def _unit_ceilings(m: KernelModel, ceilings: list[Ceiling], roof: str | None, unit: str | None = None,
                   unit_share: float | None = None) -> list[Ceiling]:
    """The ceilings that explain a unit's work (by default the limiter's): those under the roof its work shows
    under (a pipe's compute ceilings only where its work is mostly that FLOP), the lane efficiency under an issue
    unit."""
    if roof is None and (unit or m.bound_by) in _ISSUE:
        return sorted((c for c in ceilings if c.kind == "lane_efficiency" and c.factor < SIGNIFICANT),
                      key=lambda c: (c.roof != m.dominant_precision, c.factor))[:1]  # the dominant precision's
    under = _under(ceilings, roof)
    if roof is None or roof in R.LEVELS:
        return under
    unit_share = (m.limiter_share or 0.0) if unit_share is None else unit_share
    if m.utilization.get(roof, 0.0) >= _FLOP_SHARE_OF_PIPE * unit_share:
        return under
    return [c for c in under if c.kind not in _COMPUTE_KINDS]


def _unit_limit(m: KernelModel, ceilings: list[Ceiling]) -> list[Finding]:
    """The limiter is a unit throughput: name it, compare the roof its work shows under."""
    bound = m.bound_by or ""
    unit = m.units[bound]
    roof = T.related_roof(bound)
    figures: dict[str, float | str | None] = {"unit": unit.label, "share": unit.share, "rest": 1 - unit.share,
                                              "left": 1.0 / unit.share if unit.share > 0 else None}
    if roof is not None and sets_against(m, roof):
        figures |= {"roof_label": roof.upper(), "roof_share": m.utilization[roof]}
    if "dram_one_direction" in m.flags:
        figures["one_direction"] = ""
    at = m.regime == T.AT_LIMIT
    lever: str | None = unit_lever(m, unit) if at else None
    if at and unit.group == "memory" and _spilled(roof, local_traffic(m), figures):
        lever = "spills"  # its work is mostly spilled registers' bytes
    if lever == LSU_WAVEFRONTS and fact(m, BANK_CONFLICTS) is None and fact(m, GLOBAL_SECTORS[0]) is None:
        lever, figures["unsplit"] = "lsu_unsplit", ""  # the capture tells neither cause apart: its step says how to
    if bound == FP64_PIPE:
        figures |= fp64_figures(m)
    if (active := _issue_active(m, unit)) is not None:
        figures["issue_active"] = active
    if not at:
        variant, basis = "below", _BELOW_THRESHOLD
    elif unit.share >= HIGH_THROUGHPUT:
        variant, basis = "high", ("unit_at_limit",)
    else:  # short of what Nsight Compute calls high use: the rest of the unit's peak is not ruled out
        variant, basis = "short", ("unit_short",)
        occupancy = latency_case(m.launch)[2]  # more warps in flight reach toward it: what caps them
        figures |= {key: occupancy.get(key) for key in ("occ_by", "occ_blocks", "theoretical")}
    head = Finding(Kind.UNIT_THROUGHPUT, variant, bound, None, bound, None, lever, basis, figures, (bound,))
    divisions = fp64_divisions(m) if at else []
    return [head, *divisions] + [_ceiling_finding(m, c, _caps(m, roof)) for c in _unit_ceilings(m, ceilings, roof)]


# An issue-slot share per active cycle this much above the elapsed one is stated beside it.
_IDLE_APART = 1.1


def _issue_active(m: KernelModel, unit: UnitShare) -> float | None:
    """The issue slots' busy share per active cycle (Nsight Compute's Issue Slots Busy), where the unit is the issue
    slots and SMs idled enough of the run for it to read well above the share per elapsed cycle; else None. Only
    where the unit's share is one launch's (a kernel, or a group of one): a group's sums several, the fact is its
    longest launch's."""
    if unit.id != "sm__issue_active":
        return None
    active, elapsed = fact(m, ISSUE_ACTIVE), fact(m, ISSUE_ELAPSED)
    if active is None or elapsed is None or not math.isclose(elapsed / 100, unit.share, rel_tol=1e-9):
        return None
    return active / 100 if active / 100 >= _IDLE_APART * unit.share else None


def _caps(m: KernelModel, roof: str | None, unit: str | None = None) -> str:
    """What a ceiling under a limit (by default the limiter) caps, in words: the roof, or the useful work of an
    issue unit."""
    unit = unit or m.bound_by
    if roof:
        return f"{roof.upper()} roof"
    return m.units[unit].label if unit in _ISSUE else "its roof"


def _limit_label(m: KernelModel) -> str:
    bound = m.bound_by or ""
    return f"the {bound.upper()} roof" if m.limiter_is_roof or bound not in m.units else m.units[bound].label


def _co_limit_findings(m: KernelModel, ceilings: list[Ceiling], named: list[Ceiling]) -> list[Finding]:
    """The ceilings under the limits within a tenth of the busiest (`co_limits`) not `named` yet, as findings,
    each bound never past the busiest limit's headroom (a fix for another limit may leave its work as it is)."""
    found, share, label = [], m.limiter_share or 0.0, _limit_label(m)
    for co in co_limits(m):
        extra = _under(ceilings, co.roof) if co.is_roof else _unit_ceilings(m, ceilings, co.roof, co.id, co.share)
        for c in (c for c in extra if not any(c is n or (c.kind == n.kind == "lane_efficiency") for n in named)):
            named.append(c)  # one lane efficiency: every precision's counts the same lanes
            unit = None if co.is_roof else co.id
            f = _ceiling_finding(m, c, _caps(m, co.roof, unit), unit)
            own = f"the {co.id.upper()} roof" if co.is_roof else m.units[co.id].label
            f = f.with_figures(co_label=own, co_share=co.share, top_label=label, top_share=share)
            if f.speedup is not None and share > 0 and f.speedup > 1.0 / share:
                f = dataclasses.replace(f.with_basis("capped_busiest", top_x=max(1.0, 1.0 / share)),
                                        speedup=max(1.0, 1.0 / share))
            found.append(f)
    return found


_BELOW_THRESHOLD = ("below_threshold",)


def _latency(m: KernelModel, ceilings: list[Ceiling], parts: Parts, uneven: bool = False) -> list[Finding]:
    """The latency finding below every limit, after the ceilings under the limiter. `uneven`: the blocks end
    unevenly (the tail-effect finding says so), so more blocks add no warps to an SM: more work in flight per warp
    is the step where fewer warps run than the launch allows."""
    bound = m.bound_by or ""
    share = m.limiter_share or 0.0
    roof = bound if m.limiter_is_roof else T.related_roof(bound)
    mine = _under(ceilings, roof) if m.limiter_is_roof else _unit_ceilings(m, ceilings, roof)
    findings = [_ceiling_finding(m, c, _caps(m, roof)) for c in mine]
    # Ceilings cap a roof's useful work (bytes used, FLOP). A unit's busy share counts the wasted work
    # too (a divergent warp instruction holds its pipe whatever its active lanes; a conflicting
    # wavefront keeps L1 busy): they do not cap how busy the unit can be.
    reachable = _allowed(ceilings, roof, parts) if mine and m.limiter_is_roof else 1.0
    label = bound.upper() if m.limiter_is_roof else m.units[bound].label
    if share < _LATENCY_SHARE * reachable:
        variant, lever, figures = latency_case(m.launch)
        lever = "in_flight" if uneven and lever == "more_warps" else lever
        figures |= {"label": label, "share": share,
                    "reachable": reachable if m.limiter_is_roof and reachable < SIGNIFICANT_SHARE else None}
        speedup = reachable / share if share > 0 else None
        basis = ("ceilings_over_reached",) if m.limiter_is_roof else ("peak_over_share",)
        if not limits_measured(m):
            variant, lever, speedup, basis = "unmeasured", "collect", None, ("unmeasured",)
        lever, stalls, stall_metrics = stall_figures(m, variant, lever)  # why warps stall, where measured
        if lever == "registers":
            figures |= register_fit(m.launch, fact(m, REGISTERS_PER_SM))
        elif lever == "block_limit":
            figures |= block_fit(m.launch)
        figures |= idle_figures(m, lever)
        figures |= step_bound(m, lever, figures, speedup)
        findings.append(Finding(Kind.LATENCY, variant, bound, None, bound, speedup, lever, basis, figures | stalls,
                                (bound, *stall_metrics)))
    if not findings:
        variant, lever, figures = latency_case(m.launch)
        figures |= {"label": label, "share": share}
        lever, stalls, stall_metrics = stall_figures(m, "no_ceiling", lever)
        figures |= idle_figures(m, lever)
        findings.append(Finding(Kind.LATENCY, "no_ceiling", bound, None, bound, 1.0 / share if share > 0 else None,
                                lever, ("roof_over_reached",), figures | stalls, (bound, *stall_metrics)))
    named = list(mine)
    findings += _co_limit_findings(m, ceilings, named)
    return findings + listed(m, ceilings, named, _limit_label(m))


def _in_a_library(found: list[Finding], name: str) -> list[Finding]:
    """A library kernel's next steps: its code, launch and tuning are the library's, so a caller's levers are
    another algorithm or library call, the problem's shape and precision, or fusing the call (the tail effect
    words its own; a finding with nothing to do keeps none, and a step's own bound goes with its step)."""
    return [f if f.kind == Kind.TAIL_EFFECT or f.lever in (None, "fp64_library") else
            dataclasses.replace(f, lever="library", figures={**{k: v for k, v in f.figures.items() if k != "step_x"},
                                                             "library": name}) for f in found]


def diagnose(m: KernelModel, ceilings: list[Ceiling], reuse: dict[str, float], waves: bool = True,
             parts: Parts | None = None) -> list[Finding]:
    """The ranked findings of one kernel: the limiter first, then what is worth most. `waves=False`:
    no tail-effect finding (launches of several grids together have no one last wave). `parts`: a
    group's timed launches (duration, launch, the launch's own ceilings), which say what the ceilings
    allow the group (`_allowed`). A library's own kernel has its next steps worded as the library's
    (`_in_a_library`)."""
    found = _ranked(m, ceilings, reuse, waves, parts or [])
    library = library_of(m) if found else None
    return found if library is None else _in_a_library(found, library)


def _ranked(m: KernelModel, ceilings: list[Ceiling], reuse: dict[str, float], waves: bool,
            parts: Parts) -> list[Finding]:
    if not m.usable or m.regime is None:
        return []
    if m.regime == T.TOO_LITTLE_WORK:
        return one_per_cause(m, ceilings, [too_little_work(m), *local_memory(m),
                                           *listed(m, ceilings, [], _limit_label(m))])
    tail = tail_effect(m) if waves else []
    uneven = any(f.variant == "uneven" for f in tail)
    if m.regime == T.AT_LIMIT:
        found = _at_roof(m, ceilings, parts, reuse) if m.limiter_is_roof else _unit_limit(m, ceilings)
    elif not m.limiter_is_roof:
        found = _unit_limit(m, ceilings)[:1] + _latency(m, ceilings, parts, uneven)
    else:
        found = _latency(m, ceilings, parts, uneven)
    found = one_per_cause(m, ceilings, found + reuse_note(m, reuse) + _spill_findings(m, local_traffic(m)))
    apart_from_tail(found, tail)
    if tail and found[0].speedup is None and found[0].basis[:1] in (("at_limit",), ("at_limit_short",),
                                                                     ("unit_at_limit",), ("unit_short",),
                                                                     ("gap_bounds",), ("spills_bound",)):
        found[0] = found[0].with_basis("apart_tail")
    found += tail + (under_one_wave(m) if waves else [])  # a grid under one wave at a limit: its waves in numbers
    if found[0].basis == _BELOW_THRESHOLD and not any(f.kind == Kind.LATENCY for f in found):
        found[0] = dataclasses.replace(found[0], basis=("below_ceilings",))
    head, rest = found[:1], found[1:]
    # Spills that make most of a limit's bytes come first: the other findings' figures count those bytes.
    rest.sort(key=lambda f: (f.kind != Kind.LOCAL_MEMORY or "spill_share" not in f.figures, -(f.speedup or 0.0)))
    return head + rest
