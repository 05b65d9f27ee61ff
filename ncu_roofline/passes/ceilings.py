"""Ceilings under the roofs: what keeps a kernel from reaching a roof, each only where it applies.

Computation ceilings (per precision the kernel uses): FMA balance, issue share, lane efficiency,
and the tensor share. Bandwidth ceilings: sector use (L2, DRAM) and coalescing (L1) of ordinary
global loads and stores, and shared-memory bank conflicts (L1) from Nsight Compute's own conflict
counters. Each ceiling is `factor x roof` with 0 < factor <= 1 and keeps the metric values it came
from. Each checks its precondition first: a ceiling describes instructions that were executed
(no LDG, no sector-use ceiling for loads), or it is listed as not applicable with the reason.
A ceiling below the point the kernel reaches on that roof contradicts the measurement: it is
dropped and the contradiction named. A faster precision or datapath is an option, reported as
headroom (`precision_options`), never as a ceiling. Reuse figures are reported alongside.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..knowledge import recipes as R
from ..model.quantities import Missing, Resolver
from . import coalescing as C
from .facts import global_loads
from .fusion import MIX, fma_action
from .reuse import l2_reads
from .shared_memory import bank_conflicts, conflict_action
from .side_work import CUDA_CORE_CEILINGS, tensor_side_part

if TYPE_CHECKING:
    from ..model.roofline import KernelModel

OP = "smsp__sass_thread_inst_executed_op_{}_pred_on.sum"
FMA_PEAK = "sm__sass_thread_inst_executed_op_{}_pred_on.sum.peak_sustained"
ISSUE_PEAKS = ("sm__inst_executed.sum.peak_sustained", "smsp__inst_executed.sum.peak_sustained")
# Volta to Blackwell: each SM sub-partition issues one warp instruction per cycle, 4 per SM.
ASSUMED_ISSUE_PER_SM = 4.0
SIGNIFICANT = 0.9  # a ceiling that takes less than 10 % off its roof is not worth a finding


@dataclass(slots=True)
class Ceiling:
    """`factor` x the `roof`: the best the kernel can reach with what the counters show."""

    kind: str
    roof: str
    factor: float
    value: float | None  # in the roof's units (FLOP/s or bytes/s); None when the roof is unknown
    evidence: dict[str, float]
    detail: str
    action: str
    # A group's ceiling (the cap of the longest launch that has it): (timed launches with this cap,
    # timed launches); None for a launch.
    launches: tuple[int, int] | None = None

    def to_dict(self) -> dict[str, Any]:
        d = {"kind": self.kind, "roof": self.roof, "factor": self.factor, "value": self.value,
             "evidence": dict(self.evidence), "detail": self.detail, "action": self.action}
        if self.launches is not None:
            d["launches_with_cap"], d["launches_compared"] = self.launches
        return d

    @property
    def key(self) -> tuple[str, str, str]:
        """What makes two launches' ceilings the same one: kind, roof, and for coalescing whether it is
        of loads or stores (the one kind a launch has twice under one roof). Not the evidence's names:
        which of them a launch records varies (an `ldmatrix` count only where there are some)."""
        return ceiling_key(self.kind, self.roof, self.evidence)


def ceiling_key(kind: str, roof: str, evidence: Iterable[str]) -> tuple[str, str, str]:
    """`Ceiling.key` from a ceiling's kind, roof and evidence names (a finding keeps the same three)."""
    subject = ""
    if kind == "coalescing":
        names = list(evidence)
        subject = next((op for op in ("st", "global") if any(name.startswith(f"{op}_") for name in names)), "ld")
    return kind, roof, subject


@dataclass(slots=True)
class NotApplicable:
    """A ceiling that was not computed, or was dropped, and why."""

    kind: str
    roof: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "roof": self.roof, "reason": self.reason}


@dataclass
class CeilingAnalysis:
    ceilings: list[Ceiling] = field(default_factory=list)
    reuse: dict[str, float] = field(default_factory=dict)
    missing: list[Missing] = field(default_factory=list)
    not_applicable: list[NotApplicable] = field(default_factory=list)
    precision_options: list[dict[str, Any]] = field(default_factory=list)


@functools.cache
def _forms(name: str) -> tuple[str, ...]:
    """The forms a report may hold a metric in: raw, per cycle, per second, or as a % of 32 B."""
    return (name, f"{name}.per_cycle_elapsed", f"{name}.per_second",
            name.replace(".ratio", ".pct") if name.endswith(".ratio") else name)


def _stored(m: KernelModel, name: str) -> bool:
    """The report holds the metric in some form (raw, per cycle, per second, or as a % of 32 B)."""
    metrics = m.raw.metrics
    possible = getattr(metrics, "possible_names", metrics)  # the header's names first: a C-level `in`
    for form in _forms(name):  # noqa: SIM110 - a plain loop: a generator per name costs twice as much
        if form in possible and form in metrics:
            return True
    return False


def _missing_ceilings(m: KernelModel, ceilings: list[Ceiling], skipped: list[NotApplicable]) -> list[Missing]:
    """Ceilings the report cannot give, with the metrics it lacks and the ncu options to collect them."""
    made = {c.kind for c in ceilings} | {s.kind for s in skipped} | {"async_copies", "reads_once"}  # not ceilings
    fp_work = any(m.q.flop.get(p) is not None and m.q.flop[p].value > 0 for p in MIX)  # type: ignore[union-attr]
    out = []
    for kind, names in R.CEILING_METRICS.items():
        if kind in made or kind == "instruction_roofline" or (
                kind in ("issue_share", "lane_efficiency") and not fp_work):
            continue
        lacking = [n for n in names if not _stored(m, n)]
        if kind == "coalescing" and not lacking:  # sectors and requests alone do not say how many sectors would do
            ratios = R.CEILING_METRICS["sector_use"][:2]
            lacking = [n for n in ratios if not _stored(m, n)] if not any(_stored(m, n) for n in ratios) else []
        if kind == "issue_share":
            lacking = [n for n in lacking if n == "smsp__inst_executed.sum"]  # the peak has a stated fallback
        if lacking:
            out.append(Missing(f"ceilings.{kind}", f"no {kind.replace('_', ' ')} ceiling: the report lacks "
                               + ", ".join(lacking), "--metrics " + ",".join(lacking)))  # what it lacks only
    return out


def _roof_value(m: KernelModel, roof: str) -> float | None:
    if roof == "tensor":
        return m.compute_roof() if m.dominant_precision == "tensor" else None
    peak = m.peaks.get(roof)
    return peak.value if peak is not None else None


NO_CAP = "none: this leaves the whole roof"
PRINTS_AS_WHOLE = 0.995  # a factor from which it prints as 100 %


def _add(out: list[Ceiling], m: KernelModel, kind: str, roof: str, factor: float,
         evidence: dict[str, float], detail: str, action: str) -> None:
    if not math.isfinite(factor) or factor <= 0:
        return
    factor = min(factor, 1.0)
    if factor >= PRINTS_AS_WHOLE:
        action = NO_CAP  # what the counters show leaves the whole roof (as printed): nothing to fix here
    value = _roof_value(m, roof)
    out.append(Ceiling(kind, roof, factor, None if value is None else value * factor, evidence, detail, action))


def _counts(res: Resolver, names: tuple[str, ...]) -> dict[str, float] | None:
    got = {}
    for n in names:
        c = res.count(OP.format(n))
        if c is None:
            return None
        got[n] = c[0]
    return got


def _compute_ceilings(m: KernelModel, res: Resolver, out: list[Ceiling], skipped: list[NotApplicable]) -> None:
    raw = m.raw
    warp_inst = res.count("smsp__inst_executed.sum")
    issue_peak = next((v for v in (res.number(n) for n in ISSUE_PEAKS) if v is not None), None)
    issue_assumed = issue_peak is None and raw.sm_count is not None
    if issue_assumed:
        issue_peak = ASSUMED_ISSUE_PER_SM * raw.sm_count  # type: ignore[operator]
    lanes_on = res.number("smsp__thread_inst_executed_pred_on_per_inst_executed.ratio")
    lanes_active = res.number("smsp__thread_inst_executed_per_inst_executed.ratio")
    for precision, (add, mul, fma) in MIX.items():
        work = m.q.flop.get(precision)
        if work is None or work.value <= 0:
            continue
        side = tensor_side_part(m, precision)
        if side is not None:
            skipped.extend(NotApplicable(kind, precision, side) for kind in CUDA_CORE_CEILINGS)
            continue
        counts = _counts(res, (add, mul, fma))
        if counts is None:
            continue
        total = sum(counts.values())
        if total <= 0:
            continue
        f = counts[fma] / total
        _add(out, m, "fma_balance", precision, (1 + f) / 2,
             {f"{precision}_{k}_thread_inst": v for k, v in counts.items()} | {"fma_share": f},
             f"{f:.0%} of {precision.upper()} instructions are FMA; a mix with FMA share f reaches at "
             f"most (1 + f) / 2 of the roof", fma_action(precision, counts[add], counts[mul]))
        pipe_peak = res.number(FMA_PEAK.format(fma))
        if warp_inst is not None and warp_inst[0] > 0 and issue_peak and pipe_peak:
            fp_warp_inst = total / 32.0
            share = fp_warp_inst / warp_inst[0]
            factor = share * issue_peak / (pipe_peak / 32.0)
            evidence = {"fp_warp_inst": fp_warp_inst, "warp_inst_executed": warp_inst[0], "fp_share": share,
                        "issue_peak_warp_inst_per_cycle": issue_peak,
                        "pipe_peak_warp_inst_per_cycle": pipe_peak / 32.0}
            note = " (issue rate assumed: 4 warp instructions per SM per cycle)" if issue_assumed else ""
            detail = (f"only {share:.0%} of issued warp instructions are {precision.upper()} arithmetic; integer, "
                      f"address, memory and control instructions take the rest of the issue slots{note}"
                      if factor < PRINTS_AS_WHOLE
                      else f"{share:.0%} of issued warp instructions are {precision.upper()} arithmetic: enough for "
                      f"the issue slots to keep the {precision.upper()} pipe at its peak{note}")
            loads = global_loads(m)
            vector = "use vector loads, " if loads is None or loads > 0 else ""
            _add(out, m, "issue_share", precision, factor, evidence, detail,
                 f"cut non-FP instructions: unroll loops, hoist index arithmetic, {vector}precompute addresses")
        if lanes_on is not None:
            evidence = {"pred_on_threads_per_inst": lanes_on}
            if lanes_active is not None:
                evidence["active_threads_per_inst"] = lanes_active
            _add(out, m, "lane_efficiency", precision, lanes_on / 32.0, evidence,
                 f"on average {lanes_on:.1f} of 32 lanes do useful work per warp instruction "
                 "(divergence and predication)",
                 "reduce branch divergence within warps (sort or bucket work, make branch conditions "
                 "warp-uniform) and avoid predicated-off tails")

    if m.q.tensor_paths and m.tensor_peaks:
        used = {dp: v.value for dp, v in m.q.tensor_paths.items() if v.value > 0 and dp in m.tensor_peaks}
        total_tensor = sum(used.values())
        all_flop = m.total_flop or 0.0
        if used and all_flop > 0:
            share = total_tensor / all_flop
            _add(out, m, "tensor_share", "tensor", share, {"tensor_flop": total_tensor, "all_flop": all_flop},
                 f"{share:.0%} of the FLOP run on tensor cores",
                 "move the remaining arithmetic (epilogues, reductions) onto tensor cores or fuse it")


def precision_options(m: KernelModel) -> list[dict[str, Any]]:
    """Headroom by changing precision: dense datapaths this GPU has, faster than the one in use.

    An option with its own accuracy cost, not a cause: never the datapath in use, never a sparse
    one (a 2:4-sparse roof is not reachable by a dense kernel). Where the report's peaks show that
    FP32 accumulation runs at half the rate of FP16 accumulation for the input type in use (GeForce
    parts), that is said too.
    """
    used = {dp: v.value for dp, v in m.q.tensor_paths.items() if v.value > 0 and dp in m.tensor_peaks}
    if not used:
        return []
    main = max(used, key=lambda dp: used[dp])
    in_use = m.tensor_peaks[main].value
    options = []
    for dp, peak in sorted(m.tensor_peaks.items(), key=lambda kv: -kv[1].value):
        if dp in used or "sparsity_on" in dp or "sparse" in dp or peak.value <= in_use * 1.01:
            continue
        note = ""
        if main.endswith("_dst_fp32") and dp == main.replace("_dst_fp32", "_dst_fp16"):
            note = "the same inputs with FP16 accumulation: this GPU runs FP32 accumulation at half that rate"
        options.append({"datapath": dp, "peak_flop_per_s": peak.value, "in_use": main,
                        "in_use_peak_flop_per_s": in_use, "speedup_bound": peak.value / in_use, "note": note})
    return options


def _ratio(res: Resolver, op: str) -> float | None:
    """Bytes used per 32-byte sector by global loads/stores (ratio, or % of 32)."""
    base = f"smsp__sass_average_data_bytes_per_sector_mem_global_op_{op}"
    v = res.number(f"{base}.ratio")
    if v is not None:
        return v
    pct = res.number(f"{base}.pct")
    return None if pct is None else pct / 100.0 * 32.0


def _async_copies(res: Resolver) -> float:
    """LDGSTS (cp.async) instructions: they load global memory without an LDG."""
    for name in R.ASYNC_COPY_COUNTS:
        v = res.total(name)
        if v is not None and v > 0:
            return v
    return 0.0


def _global_ops(res: Resolver, skipped: list[NotApplicable]) -> dict[str, float]:
    """Bytes used per sector of the ordinary global loads/stores that were executed (op -> ratio)."""
    used: dict[str, float] = {}
    for op, what in (("ld", "loads (LDG)"), ("st", "stores (STG)")):
        r = _ratio(res, op)
        executed = res.total(f"smsp__sass_inst_executed_op_global_{op}.sum")
        if r is None:
            continue
        if executed == 0 or (executed is None and r == 0):
            skipped.append(NotApplicable("sector_use", "l2/dram", f"no ordinary global {what} were executed: "
                                         f"the bytes-per-sector metric of global {what} does not describe "
                                         "this kernel"))
            continue
        used[op] = r
    return used


# What each level moved for global loads and stores, as the report counts it (name, bytes per unit).
_LEVEL_TRAFFIC = {
    "dram": {"ld": ("dram__bytes_read.sum", 1.0), "st": ("dram__bytes_write.sum", 1.0)},
    "l2": {"ld": ("lts__t_sectors_srcunit_tex_op_read.sum", 32.0),
           "st": ("lts__t_sectors_srcunit_tex_op_write.sum", 32.0)},
}
_ABSORBED_TOLERANCE = 1.02


def _level_use(res: Resolver, level: str, used: dict[str, float],
               sectors: dict[str, float]) -> tuple[float, float] | None:
    """(bytes `level` moved, bytes used) for the global loads and stores, where the report counts that
    level's traffic in each direction that fetches bytes it does not use (a direction without waste counts
    too where its traffic is known: a store's waste is a share of loads and stores together); None where
    it does not, or where no direction wastes bytes."""
    moved_all, useful_all = 0.0, 0.0
    if all(per_sector >= 32.0 * 0.999 or sectors.get(op, 1.0) <= 1.0 for op, per_sector in used.items()):
        return None
    for op, per_sector in used.items():
        if sectors.get(op, 1.0) <= 1.0:
            continue  # no sector count to weigh it
        name, scale = _LEVEL_TRAFFIC[level][op]
        moved = res.count(name)
        if moved is None:
            if per_sector >= 32.0 * 0.999:
                continue  # no waste in this direction: what it moved is not needed
            return None
        moved_all += moved[0] * scale
        useful_all += sectors[op] * per_sector
    return (moved_all, useful_all) if useful_all > 0 else None


def _memory_ceilings(m: KernelModel, res: Resolver, out: list[Ceiling], skipped: list[NotApplicable]) -> None:
    used = _global_ops(res, skipped)
    copies = _async_copies(res)
    if copies > 0:
        async_sectors = res.total("sm__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_bypass.sum")
        async_requests = res.total("sm__sass_l1tex_t_requests_pipe_lsu_mem_global_op_ldgsts_cache_bypass.sum")
        measured = (f" ({async_sectors / async_requests:.1f} sectors per request; 16 is ideal for 16-byte copies "
                    "by a full warp)") if async_sectors and async_requests else ""
        skipped.append(NotApplicable("sector_use", "l2/dram", f"{copies:,.0f} asynchronous copies (cp.async / "
                                     f"LDGSTS) load global memory without LDG{measured}: their sector use is not "
                                     "measured by the LDG metrics and is not judged here"))
    weights: dict[str, float] = {}
    for op in used:
        sectors_c = res.count(f"l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum")
        weights[op] = sectors_c[0] if sectors_c is not None and sectors_c[0] > 0 else 1.0
    if used:
        total_w = sum(weights.values())
        per_sector = sum(used[op] * weights[op] for op in used) / total_w
        evidence = {f"{op}_bytes_used_per_sector": used[op] for op in used}
        evidence |= {f"{op}_sectors": weights[op] for op in used if weights[op] != 1.0}
        worst = min(used, key=lambda op: used[op])
        name = {"ld": "loads", "st": "stores"}
        parts = ", ".join(f"{name[op]} {used[op]:.1f}" for op in ("ld", "st") if op in used)
        for roof in ("l2", "dram"):
            # A sector's unused bytes cost a level only if they travel there: where the report counts
            # the level's traffic, its factor is the share of what it moved that the accesses use (never
            # below what L1 fetched shows), and none where it moved no more than they use.
            factor, measured = per_sector / 32.0, ""
            level = _level_use(res, roof, used, weights)
            if level is not None:
                moved, useful = level
                if moved <= useful * _ABSORBED_TOLERANCE:
                    skipped.append(NotApplicable("sector_use", roof, (
                        f"{roof.upper()} moved {moved:,.0f} bytes for these accesses, no more than the {useful:,.0f} "
                        f"they use: caches above {roof.upper()} served the rest (re-reads, or the other parts of "
                        f"sectors they already held), so the unused parts of sectors cap nothing at {roof.upper()}")))
                    continue
                factor = max(factor, useful / moved)
                measured = f"; {roof.upper()} moved {moved:,.0f} bytes for them, {factor:.0%} of it used"
            level_evidence = evidence if level is None else evidence | {f"{roof}_moved_bytes": level[0],
                                                                        f"{roof}_useful_bytes": level[1]}
            _add(out, m, "sector_use", roof, factor, level_evidence,
                 f"global memory accesses use {per_sector:.1f} of every 32 bytes fetched ({parts}){measured}",
                 f"global {name[worst]} use {used[worst]:.0f} of every 32 bytes fetched: make adjacent "
                 "threads read adjacent addresses (structure of arrays, transposed indexing, or stage "
                 "through shared memory)")
    _coalescing(m, res, used, out, skipped)
    _bank_conflicts(res, out, skipped, m)


def _coalescing(m: KernelModel, res: Resolver, used: dict[str, float], out: list[Ceiling],
                skipped: list[NotApplicable]) -> None:
    """Coalescing caps on the L1 roof, per direction where that agrees with Nsight Compute's own count of
    excessive sectors, else from that count (`passes.coalescing`)."""
    excess = C.nsight_excess(res)
    if excess is not None and excess.excessive == 0:
        if used or excess.total > 0:
            # Where it is 0, the sectors per request are what the accesses need (a broadcast load takes a whole
            # sector for its 4 bytes, which an average of bytes per sector over it and coalesced loads reads as a loss).
            skipped.append(NotApplicable("coalescing", "l1", f"Nsight Compute counts no excessive global sectors "
                                         f"({excess.recipe} = 0): every request touches the sectors its accesses "
                                         "need"))
        return
    caps = C.per_direction(res, used)
    claimed = C.excess_of(caps)
    if excess is not None and caps and not C.agrees(claimed, excess.excessive):
        why = (" (an average over all loads or stores, which a broadcast access lowers without wasting a sector)"
               if claimed > excess.excessive else "")
        skipped.append(NotApplicable("coalescing", "l1", (
            f"per direction, the bytes used per sector would claim {claimed:,.0f} excessive sectors where "
            f"Nsight Compute counts {excess.excessive:,.0f}{why}: its count for loads and stores together is used")))
        caps = []
    if not caps and excess is not None:
        caps = [C.from_nsight(excess)]
    for cap in caps:
        _add(out, m, "coalescing", "l1", cap.factor, cap.evidence, cap.detail, C.COALESCE)


def _bank_conflicts(res: Resolver, out: list[Ceiling], skipped: list[NotApplicable], m: KernelModel) -> None:
    found = bank_conflicts(res)
    if isinstance(found, str):
        skipped.append(NotApplicable("bank_conflicts", "l1", found))
    elif found is not None:
        _add(out, m, "bank_conflicts", "l1", found.free, found.evidence, found.detail,
             conflict_action(found.free))


def dram_reads_per_load_byte(res: Resolver) -> tuple[float, float] | None:
    """(DRAM read bytes ÷ the bytes of the sectors the kernel's loads asked for, those bytes), from
    `R.LOAD_SECTORS`; None where a count is missing or NaN, the loads asked for nothing, or cp.async copies
    ran without both of their sector counts."""
    dram = res.count("dram__bytes_read.sum")
    sectors = [res.count(name) for name in R.LOAD_SECTORS]
    if dram is None or sectors[0] is None or any(n.startswith(R.LOAD_SECTORS) for n in res.nan_seen):
        return None
    if (sectors[4] is None or sectors[5] is None) and _async_copies(res) > 0:  # full sets hold both: no look-up
        return None
    asked = 32.0 * math.fsum(c[0] for c in sectors if c is not None)  # 32-byte sectors
    return (dram[0] / asked, asked) if asked > 0 else None


def _reuse(m: KernelModel, res: Resolver) -> dict[str, float]:
    out: dict[str, float] = {}
    reads = dram_reads_per_load_byte(res)
    if reads is not None:
        out["dram_reads_per_load_byte"], out["load_sector_bytes"] = reads
    out |= l2_reads(res)
    b = {lv: v.value for lv, v in m.q.bytes.items() if v is not None}
    if "l1" in b and "l2" in b and b["l2"] > 0:
        out["l1_to_l2_bytes"] = b["l1"] / b["l2"]
    if "l2" in b and "dram" in b and b["dram"] > 0:
        out["l2_to_dram_bytes"] = b["l2"] / b["dram"]
    for name, key in (("l1tex__t_sector_hit_rate.pct", "l1_hit_rate"), ("lts__t_sector_hit_rate.pct", "l2_hit_rate"),
                      ("l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct", "l1_load_hit_rate")):
        v = res.number(name)
        if v is not None:
            out[key] = v / 100.0
    return out


COVERS_LEVEL = 0.9  # the accesses a sector-use cap judges moved at least this share of the level's bytes


def used_share(m: KernelModel, c: Ceiling) -> float | None:
    """The share of the ceiling's roof the kernel reaches in the terms of the ceiling: a sector-use cap bounds the
    bytes the accesses use, so where the level's point counts the bytes it moved for them and little else (its
    tags, or its own counts), the point's share is scaled to the bytes used (naiveGmem: 25 % of L2 moved, 5.6 %
    used, under a 22 % cap); otherwise the point's share."""
    achieved = m.utilization.get(c.roof)
    moved, useful = c.evidence.get(f"{c.roof}_moved_bytes"), c.evidence.get(f"{c.roof}_useful_bytes")
    level = m.q.bytes.get(c.roof)
    if achieved is None or c.kind != "sector_use" or not moved or useful is None or level is None:
        return achieved
    if not moved * (1 - 1e-6) <= level.value <= moved / COVERS_LEVEL:
        return achieved  # the point counts other traffic too (cp.async copies, say), or not all the bytes moved
    return achieved * min(1.0, useful / level.value)


def _drop_contradictions(m: KernelModel, ceilings: list[Ceiling], skipped: list[NotApplicable]) -> list[Ceiling]:
    """A ceiling the kernel already exceeds on its own roof is inconsistent with the measurement."""
    kept = []
    for c in ceilings:
        achieved = used_share(m, c)
        if achieved is not None and c.factor < achieved * (1 - 1e-6):
            skipped.append(NotApplicable(c.kind, c.roof, f"dropped: it would cap the {c.roof.upper()} roof at "
                                         f"{c.factor:.0%}, but the kernel reaches {achieved:.0%} of it; the metric "
                                         "does not describe this kernel's traffic"))
            continue
        kept.append(c)
    return kept


def analyse_ceilings(m: KernelModel) -> CeilingAnalysis:
    """All ceilings of one kernel that apply, what does not apply and why, reuse and precision options."""
    if not m.usable:
        return CeilingAnalysis()
    res = Resolver(m.raw)
    res.duration = m.q.duration_s
    ceilings: list[Ceiling] = []
    skipped: list[NotApplicable] = []
    _compute_ceilings(m, res, ceilings, skipped)
    _memory_ceilings(m, res, ceilings, skipped)
    ceilings = _drop_contradictions(m, ceilings, skipped)
    return CeilingAnalysis(ceilings, _reuse(m, res), _missing_ceilings(m, ceilings, skipped), skipped,
                           precision_options(m))
