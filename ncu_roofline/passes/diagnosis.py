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
Where no bound can be stated, `speedup` is None and `speedup_note` says why. The program-level
gain (time share × (1 − 1/speed-up)) needs the whole report and is added in `api.analysis`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..knowledge import recipes as R
from ..knowledge import throughputs as T
from .ceilings import SIGNIFICANT, Ceiling, used_share
from .co_limits import co_limits, listed
from .finding import USEFUL, Finding, ratio_text
from .fusion import fusion_bound
from .latency import latency_words
from .levers import limits_measured, sets_against, unit_lever
from .libraries import library_of
from .reuse import fewer_bytes_action, issue_left, read_once_bound, reads_once, reuse_note
from .spills import local_memory
from .tail import apart_from_tail, tail_effect
from .too_little_work import too_little_work

if TYPE_CHECKING:
    from ..model.roofline import KernelModel

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


def _ceiling_finding(m: KernelModel, c: Ceiling, where: str, unit: str | None = None) -> Finding:
    detail = c.detail
    if c.kind == "fma_balance":  # fusion gives at most one FMA per (add, multiply) pair
        speedup, note = fusion_bound(c.roof, c.factor, c.evidence)
    elif c.kind == "sector_use" and c.evidence.get(f"{c.roof}_moved_bytes"):
        # The level's own count of what it moved: with every byte of their sectors used, the same accesses move
        # 1 / factor times fewer bytes through it and through the units that carry them.
        level = c.roof.upper()
        speedup, note = (1.0 / c.factor if c.factor > 0 else None), (
            f"{level}'s bytes for these accesses ÷ the bytes they use = 1 / {c.factor:.2f}: with every byte of "
            f"their sectors used, as many times fewer bytes through {level} and the units that carry them")
        used, point = used_share(m, c), m.utilization.get(c.roof)
        if used is not None and point is not None and used < point:
            detail += (f" (the bytes they use are {used:.1%} of the {level} roof; its point, {point:.0%}, counts "
                       "every byte moved)")
    elif c.kind == "lane_efficiency" and (unit or m.bound_by) in _ISSUE and c.factor > 0:
        apart = "; counted apart from the latency finding" if m.regime == T.LATENCY else ""
        speedup, note = 1.0 / c.factor, (
            f"32 lanes ÷ the lanes that do useful work = 1 / {c.factor:.2f}: warps whose 32 lanes all do useful work "
            f"(no divergence, no predicated-off lanes) issue as many times fewer instructions for the same work{apart}")
    else:
        speedup, note = (1.0 / c.factor if c.factor > 0 else None), f"roof ÷ ceiling = 1 / {c.factor:.2f}"
    other = _other_side(m, c.kind)
    if speedup is not None and other is not None and 1.0 / other[0] < speedup:
        share, label = other
        capped = max(1.0, 1.0 / share)
        if capped < speedup * 0.995:  # a cap that does not change the stated figure is not stated
            note += f"; capped at 1 / {share:.3g} by {label} at {share:.0%}, whose work this fix does not change"
        speedup = capped
        if m.regime == T.AT_LIMIT and share >= (m.limiter_share or 1.0):
            # The limit this fix leaves as it is bounds the kernel already: its headroom is no gain of the fix.
            speedup, note = None, (f"no bound: {label}, at {share:.0%}, bounds the kernel and this fix leaves its "
                                   f"work as it is (its headroom, {ratio_text(capped)}×, is no gain of this fix)")
    return Finding(c.kind, c.roof, c.factor, f"{detail}: caps {where} at {c.factor:.0%}", c.action, m.bound_by,
                   speedup, note)


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
    named = ", ".join(f"{c.kind.replace('_', ' ')} {c.factor:.0%}{_partly(c)}" for c in under)
    if under:
        note = (f"compute roof × its ceilings ({named}) ÷ achieved FLOP/s, the most that more FLOP per byte gives with "
                "this mix of FP instructions")
    else:
        note = "compute roof ÷ achieved FLOP/s, the most any intensity change can give"
    # Fewer bytes (fusion, reuse, lower precision) leave this kernel's arithmetic as it is, and more FLOP
    # on the same bytes (batching) loads the same arithmetic pipes more: the busiest of them bounds both,
    # and so do the issue slots its other instructions take (not the LSU pipe: fusion removes loads).
    busiest = max(filter(None, (_busiest_on(m, "compute", arithmetic=True), issue_left(m, parts))), default=None)
    saturates = ""
    if busiest is not None and allowed / m.achieved_flop_per_s > 1.0 / busiest[0]:
        share, label = busiest
        speedup = max(1.0, 1.0 / share)
        note += (f"; capped at 1 / {share:.3g} by {label} at {share:.0%}, whose work does not shrink when "
                 "fewer bytes move")
        after = _saturates_after(m.utilization.get(level), share, level)
        saturates = f"; {label}, at {share:.0%}, saturates first{after}"
    once = reads_once(reuse) if level == "dram" else None
    if allowed <= m.achieved_flop_per_s:
        speedup, note = None, ("no bound: the compute side leaves no headroom above what the kernel reaches"
                               + (f" ({named})" if named else ""))
    elif once is not None:  # a kernel that reads each byte once gains no reuse: no bound ranks its gap first
        speedup, note = None, read_once_bound(once)
    text = (f"the kernel does {intensity:.3g} FLOP per {level.upper()} byte; the ridge point is {ridge:.3g}: it "
            f"needs {ratio_text(gap)}× more FLOP per byte to reach the compute roof")
    if under and kept * gap > 1.0:
        text += f" ({ratio_text(kept * gap)}× to reach what its ceilings allow: {named})"
    text += saturates
    action = fewer_bytes_action(once)
    if _GEMM_LIKE.search(m.raw.demangled_name or m.raw.name or ""):
        action += (f"; if it multiplies by weights shared across rows (a GEMM or GEMV, as its name suggests), "
                   f"batching about {ratio_text(gap)}× more rows (tokens) that share those weights would get there, "
                   "assuming the weight bytes dominate its traffic")
    return Finding("intensity_gap", level, None, text, action, m.bound_by, speedup, note)


def _saturates_after(at: float | None, share: float, level: str) -> str:
    """How many times fewer bytes fill a share `share` of a unit that fewer bytes leave as it is: 1 / share
    if the roof stays as busy as now (`at`), at / share if it then runs at its peak (the kernel takes less
    time per byte)."""
    most = ratio_text(1.0 / share)
    least = ratio_text(max(1.0, at / share)) if at else most
    if least == most:
        return f", once the bytes fall about {most}×"
    return (f", once the bytes fall about {least}× (with {level.upper()} then at its peak) to {most}× (with "
            f"{level.upper()} as busy as now, {at:.0%})")


# Nsight Compute's Speed-Of-Light rule calls a kernel's use of a unit high from 80 % of its peak ("greater than
# 80.0% of the available compute or memory performance"): below it, an at-limit kernel has the rest of the
# roof left, part of which better latency hiding reaches (a copy kernel on the same GPU reaches 90-95 %).
HIGH_THROUGHPUT = 0.8
_HIGH_USE = f"Nsight Compute reads a unit as highly used from {HIGH_THROUGHPUT:.0%}"


def _at_roof(m: KernelModel, ceilings: list[Ceiling], parts: Parts, reuse: dict[str, float]) -> list[Finding]:
    bound = m.bound_by or ""
    share = m.limiter_share or 0.0
    what = "bytes" if bound in R.LEVELS else "work"
    less = "fewer bytes" if what == "bytes" else "less work"
    if share >= HIGH_THROUGHPUT:
        head = Finding("at_limit", bound, None, f"at {share:.0%} of the {bound.upper()} roof: the kernel presses "
                       "against it", (f"the lever is {less} at this roof, not more parallelism"), bound, None,
                       "at its limit: only less work for this roof makes it faster")
    else:  # at the limit by the threshold, short of what Nsight Compute calls high throughput: say what is left
        left = ratio_text(1.0 / share) if share > 0 else "∞"
        how = ("independent accesses per thread, wider loads" if what == "bytes" else
               "independent instructions per thread: instruction-level parallelism")
        head = Finding("at_limit", bound, None,
                       f"at {share:.0%} of the {bound.upper()} roof, short of pressing against it: up to {left}× is "
                       f"left to the roof itself ({_HIGH_USE})",
                       (f"the lever is {less} at this roof; more {what} in flight per SM ({how}) reaches "
                        f"toward the roof's last {1 - share:.0%}"),
                       bound, None, f"at its limit: less work for this roof makes it faster; the roof itself is at "
                       f"most {left}× away")
    findings = [head]
    if bound in R.LEVELS:
        gap = _intensity_gap(m, bound, ceilings, parts, reuse)
        if gap is not None:
            findings.append(gap)
            if gap.speedup is not None:  # the head then points at the gap's bound, not "no speed-up" against it
                head.speedup_note = ("at its limit at this intensity: only fewer bytes at this roof make it faster, "
                                     "which the intensity-gap finding bounds")
    findings += [_ceiling_finding(m, c, "the bounding roof") for c in _under(ceilings, bound)]
    return findings


# A group's timed launches: (duration, launch, the launch's own ceilings).
Parts = list[tuple[float, "KernelModel", list[Ceiling]]]


def _not_issue(c: Ceiling) -> bool:
    return c.kind != "issue_share"


def _every(_c: Ceiling) -> bool:
    return True


def _partly(c: Ceiling) -> str:
    return " in part" if c.launches is not None and c.launches[0] < c.launches[1] else ""


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
    contrast = ""
    if roof is not None and sets_against(m, roof):
        what = f"{m.bytes_in_words(roof)} reach" if roof in R.LEVELS else "work reaches"
        contrast = f", while {roof.upper()} {what} only {m.utilization[roof]:.0%} of the {roof.upper()} roof"
    at = m.regime == T.AT_LIMIT
    if "dram_one_direction" in m.flags:
        contrast += " (one direction of DRAM traffic: the report lacks the other, so DRAM may be busier)"
    # Below the threshold the unit's own lever ("... is at its peak") is not the next step: what holds
    # the kernel back is in the findings after this one (`diagnose` words the note once they are known).
    action = (unit_lever(m, unit) or f"the busiest unit is {unit.label}") if at else \
        f"{unit.label} is the busiest unit but below the threshold{_SEE_BELOW}"
    note = _BELOW_THRESHOLD
    if at and unit.share >= HIGH_THROUGHPUT:
        note = "at its limit: only less work for this unit makes it faster"
    elif at:  # short of what Nsight Compute calls high use: the rest of the unit's peak is not ruled out
        note = (f"at its limit: less work for this unit makes it faster; its own peak is at most "
                f"{ratio_text(1.0 / unit.share)}× away ({_HIGH_USE})")
        action += f"; toward its own peak (the last {1 - unit.share:.0%}), {latency_words(m.launch)[1]}"
    head = Finding("unit_throughput", bound, None, f"{unit.label} at {unit.share:.0%} of peak{contrast}", action,
                   bound, None, note)
    return [head] + [_ceiling_finding(m, c, _where(m, roof)) for c in _unit_ceilings(m, ceilings, roof)]


def _where(m: KernelModel, roof: str | None, unit: str | None = None) -> str:
    """What a ceiling under a limit (by default the limiter) caps, in words: the roof, or the useful work of an
    issue unit."""
    unit = unit or m.bound_by
    if roof:
        return f"the {roof.upper()} roof"
    return f"{USEFUL}work of the {m.units[unit].label}" if unit in _ISSUE else "its roof"


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
            f = _ceiling_finding(m, c, _where(m, co.roof, unit), unit)
            own = f"the {co.id.upper()} roof" if co.is_roof else m.units[co.id].label
            f.text += f" ({own} at {co.share:.0%} is within a tenth of the busiest limit, {label} at {share:.0%})"
            if f.speedup is not None and share > 0 and f.speedup > 1.0 / share:
                f.speedup = max(1.0, 1.0 / share)
                f.speedup_note += f"; capped at 1 / {share:.3g} by {label}, the busiest limit, at {share:.0%}"
            found.append(f)
    return found


_BELOW_THRESHOLD = "below the threshold: see the latency finding"
_SEE_BELOW = ": the findings below say what holds the kernel back"  # an action that points on, not a fix


def _latency(m: KernelModel, ceilings: list[Ceiling], parts: Parts) -> list[Finding]:
    bound = m.bound_by or ""
    share = m.limiter_share or 0.0
    roof = bound if m.limiter_is_roof else T.related_roof(bound)
    mine = _under(ceilings, roof) if m.limiter_is_roof else _unit_ceilings(m, ceilings, roof)
    findings = [_ceiling_finding(m, c, _where(m, roof)) for c in mine]
    # Ceilings cap a roof's useful work (bytes used, FLOP). A unit's busy share counts the wasted work
    # too (a divergent warp instruction holds its pipe whatever its active lanes; a conflicting
    # wavefront keeps L1 busy): they do not cap how busy the unit can be.
    reachable = _allowed(ceilings, roof, parts) if mine and m.limiter_is_roof else 1.0
    if share < _LATENCY_SHARE * reachable:
        label = bound.upper() if m.limiter_is_roof else m.units[bound].label
        why, action = latency_words(m.launch)
        where = f"where the ceilings allow {reachable:.0%}" if m.limiter_is_roof else "of its peak"
        speedup = reachable / share if share > 0 else None
        note = ("what the ceilings allow ÷ what the kernel reaches" if m.limiter_is_roof else
                "the unit's peak ÷ its busy share: how far hiding latency can take the same instructions before "
                "that unit saturates; a fix that removes work (the ceiling findings) is counted apart and can go "
                "past it")
        busiest, rest = "the busiest limit", "latency"
        if not limits_measured(m):
            busiest, speedup, rest, why = ("the busiest limit the report holds", None,
                                           "latency, or a limit it does not hold", "")
            action = ("collect Nsight Compute's SpeedOfLight section (`--section SpeedOfLight`) first: it tells "
                      "latency from a limit this report did not measure")
            note = ("no bound: the report holds neither Nsight Compute's SM and memory throughputs nor every "
                    "memory roof, so a limit it does not measure (L2, L1, the SM's pipes) may saturate first")
        findings.append(Finding(
            "latency", bound, None,
            f"{busiest}, {label}, is at {share:.0%} {where}: the rest is {rest}{why}", action, bound, speedup, note))
    if not findings:
        findings.append(Finding("latency", bound, None, f"the busiest limit is at {share:.0%}: latency, not a "
                                "resource, holds the kernel back", "check the warp-stall reasons and occupancy",
                                bound, 1.0 / share if share > 0 else None, "roof ÷ what the kernel reaches"))
    named = list(mine)
    findings += _co_limit_findings(m, ceilings, named)
    return findings + listed(m, ceilings, named, f"the busiest limit is {_limit_label(m)}, not this one")


def _in_a_library(found: list[Finding], name: str) -> None:
    """A library kernel's next steps: its code, launch and tuning are the library's, so what a fix would
    take is stated as such, with the levers a caller has (the tail effect words its own)."""
    for f in found:
        if f.kind != "tail_effect" and not f.action.endswith(_SEE_BELOW):
            f.action = (f"this is {name}'s own kernel, not code to edit: what would help it ({f.action}) is "
                        f"{name}'s to do; a caller's levers are another algorithm or library call, the problem's "
                        "shape and precision, or fusing the call with its neighbours")


def diagnose(m: KernelModel, ceilings: list[Ceiling], reuse: dict[str, float], waves: bool = True,
             parts: Parts | None = None) -> list[Finding]:
    """The ranked findings of one kernel: the limiter first, then what is worth most. `waves=False`:
    no tail-effect finding (launches of several grids together have no one last wave). `parts`: a
    group's timed launches (duration, launch, the launch's own ceilings), which say what the ceilings
    allow the group (`_allowed`). A library's own kernel has its next steps worded as the library's
    (`_in_a_library`)."""
    found = _ranked(m, ceilings, reuse, waves, parts or [])
    library = library_of(m) if found else None
    if library is not None:
        _in_a_library(found, library)
    return found


def _ranked(m: KernelModel, ceilings: list[Ceiling], reuse: dict[str, float], waves: bool,
            parts: Parts) -> list[Finding]:
    if not m.usable or m.regime is None:
        return []
    if m.regime == T.TOO_LITTLE_WORK:
        first = "the launch's too little work bounds the kernel first"
        return [too_little_work(m), *local_memory(m), *listed(m, ceilings, [], first)]
    if m.regime == T.AT_LIMIT:
        found = _at_roof(m, ceilings, parts, reuse) if m.limiter_is_roof else _unit_limit(m, ceilings)
    elif not m.limiter_is_roof:
        found = _unit_limit(m, ceilings)[:1] + _latency(m, ceilings, parts)
    else:
        found = _latency(m, ceilings, parts)
    found += reuse_note(m, reuse) + local_memory(m)
    tail = tail_effect(m) if waves else []
    apart_from_tail(found, tail)
    if tail and found[0].speedup is None and found[0].speedup_note.startswith("at its limit"):
        found[0].speedup_note = (f"{found[0].speedup_note}, apart from the partial last wave (the tail-effect "
                                 "finding)")
    found += tail
    if found[0].speedup_note == _BELOW_THRESHOLD and not any(f.kind == "latency" for f in found):
        found[0].speedup_note = "below the threshold: the ceiling findings below explain the gap"
    head, rest = found[:1], found[1:]
    rest.sort(key=lambda f: -(f.speedup or 0.0))
    return head + rest
