"""Ceilings under the roofs, and a ranked diagnosis of what keeps a kernel below its roof.

Computation ceilings (per precision the kernel uses): FMA balance, issue share, lane efficiency,
and for tensor cores the datapath used. Bandwidth ceilings: sector use (L2, DRAM), coalescing
(L1 sectors per request) and shared-memory bank conflicts (L1). Each ceiling is
`factor x roof` with 0 < factor <= 1 and keeps the metric values it was computed from.
Reuse between levels is reported alongside (byte ratios and hit rates): it is not a ceiling.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from ..knowledge import recipes as R
from ..knowledge import throughputs as T
from ..model.quantities import Missing, Resolver
from ..model.throughputs import too_little_work_reason

if TYPE_CHECKING:
    from ..model.roofline import KernelModel

OP = "smsp__sass_thread_inst_executed_op_{}_pred_on.sum"
MIX = {"fp64": ("dadd", "dmul", "dfma"), "fp32": ("fadd", "fmul", "ffma"), "fp16": ("hadd", "hmul", "hfma")}
FMA_PEAK = "sm__sass_thread_inst_executed_op_{}_pred_on.sum.peak_sustained"
ISSUE_PEAKS = ("sm__inst_executed.sum.peak_sustained", "smsp__inst_executed.sum.peak_sustained")
# Volta to Blackwell: each SM sub-partition issues one warp instruction per cycle, 4 per SM.
ASSUMED_ISSUE_PER_SM = 4.0
SIGNIFICANT = 0.9  # a ceiling that takes less than 10 % off its roof is not worth a finding


@dataclass
class Ceiling:
    """`factor` x the `roof`: the best the kernel can reach with what the counters show."""

    kind: str
    roof: str
    factor: float
    value: float | None  # in the roof's units (FLOP/s or bytes/s); None when the roof is unknown
    evidence: dict[str, float]
    detail: str
    action: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Finding:
    """One line of the diagnosis, most important first."""

    kind: str
    roof: str | None
    factor: float | None
    text: str
    action: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class CeilingAnalysis:
    ceilings: list[Ceiling] = field(default_factory=list)
    diagnosis: list[Finding] = field(default_factory=list)
    reuse: dict[str, float] = field(default_factory=dict)
    missing: list[Missing] = field(default_factory=list)


def _stored(m: KernelModel, name: str) -> bool:
    """The report holds the metric in some form (raw, per cycle, per second, or as a % of 32 B)."""
    forms = (name, f"{name}.per_cycle_elapsed", f"{name}.per_second",
             name.replace(".ratio", ".pct") if name.endswith(".ratio") else name)
    return any(f in m.raw.metrics for f in forms)


def _missing_ceilings(m: KernelModel, ceilings: list[Ceiling]) -> list[Missing]:
    """Ceilings the report cannot give, with the metrics it lacks and the ncu options to collect them."""
    made = {c.kind for c in ceilings}
    fp_work = any(m.q.flop.get(p) is not None and m.q.flop[p].value > 0 for p in MIX)  # type: ignore[union-attr]
    out = []
    for kind, names in R.CEILING_METRICS.items():
        if kind in made or kind == "instruction_roofline" or (
                kind in ("issue_share", "lane_efficiency") and not fp_work):
            continue
        lacking = [n for n in names if not _stored(m, n)]
        if kind == "issue_share":
            lacking = [n for n in lacking if n == "smsp__inst_executed.sum"]  # the peak has a stated fallback
        if lacking:
            out.append(Missing(f"ceilings.{kind}", f"no {kind.replace('_', ' ')} ceiling: the report lacks "
                               + ", ".join(lacking), "--metrics " + ",".join(names)))
    return out


def _roof_value(m: KernelModel, roof: str) -> float | None:
    if roof == "tensor":
        return m.compute_roof() if m.dominant_precision == "tensor" else None
    peak = m.peaks.get(roof)
    return peak.value if peak is not None else None


def _add(out: list[Ceiling], m: KernelModel, kind: str, roof: str, factor: float,
         evidence: dict[str, float], detail: str, action: str) -> None:
    if not math.isfinite(factor) or factor <= 0:
        return
    factor = min(factor, 1.0)
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


def _compute_ceilings(m: KernelModel, res: Resolver, out: list[Ceiling]) -> None:
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
             f"most (1 + f) / 2 of the roof",
             "fuse multiplies and adds into FMA (contract expressions, avoid separate a*b then +c, "
             "check that fast-math contraction is not disabled)")
        pipe_peak = res.number(FMA_PEAK.format(fma))
        if warp_inst is not None and warp_inst[0] > 0 and issue_peak and pipe_peak:
            fp_warp_inst = total / 32.0
            share = fp_warp_inst / warp_inst[0]
            factor = share * issue_peak / (pipe_peak / 32.0)
            evidence = {"fp_warp_inst": fp_warp_inst, "warp_inst_executed": warp_inst[0], "fp_share": share,
                        "issue_peak_warp_inst_per_cycle": issue_peak,
                        "pipe_peak_warp_inst_per_cycle": pipe_peak / 32.0}
            note = " (issue rate assumed: 4 warp instructions per SM per cycle)" if issue_assumed else ""
            _add(out, m, "issue_share", precision, factor, evidence,
                 f"only {share:.0%} of issued warp instructions are {precision.upper()} arithmetic; integer, "
                 f"address, memory and control instructions take the rest of the issue slots{note}",
                 "cut non-FP instructions: unroll loops, hoist index arithmetic, use vector loads, "
                 "precompute addresses")
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
        if used:
            fastest = max(v.value for v in m.tensor_peaks.values())
            weighted = sum(m.tensor_peaks[dp].value * ops for dp, ops in used.items()) / total_tensor
            _add(out, m, "tensor_datapath", "tensor", weighted / fastest,
                 {f"ops_{dp}": ops for dp, ops in used.items()} | {"fastest_peak_flop_per_s": fastest},
                 "the datapaths used (" + ", ".join(sorted(used)) + ") have a lower roof than the fastest "
                 "dense datapath of this GPU",
                 "a lower-precision input or accumulator type (e.g. BF16/FP8 with FP32 accumulate) raises "
                 "the tensor roof where accuracy allows")
            all_flop = m.total_flop or 0.0
            if all_flop > 0:
                share = total_tensor / all_flop
                _add(out, m, "tensor_share", "tensor", share, {"tensor_flop": total_tensor, "all_flop": all_flop},
                     f"{share:.0%} of the FLOP run on tensor cores",
                     "move the remaining arithmetic (epilogues, reductions) onto tensor cores or fuse it")


def _ratio(res: Resolver, op: str) -> float | None:
    """Bytes used per 32-byte sector by global loads/stores (ratio, or % of 32)."""
    base = f"smsp__sass_average_data_bytes_per_sector_mem_global_op_{op}"
    v = res.number(f"{base}.ratio")
    if v is not None:
        return v
    pct = res.number(f"{base}.pct")
    return None if pct is None else pct / 100.0 * 32.0


def _memory_ceilings(m: KernelModel, res: Resolver, out: list[Ceiling]) -> None:
    used: dict[str, float] = {}
    weights: dict[str, float] = {}
    for op in ("ld", "st"):
        r = _ratio(res, op)
        sectors = res.count(f"l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum")
        if r is not None and (sectors is None or sectors[0] > 0):
            used[op] = r
            weights[op] = sectors[0] if sectors is not None else 1.0
    if used:
        total_w = sum(weights.values())
        per_sector = sum(used[op] * weights[op] for op in used) / total_w
        evidence = {f"{op}_bytes_used_per_sector": used[op] for op in used}
        evidence |= {f"{op}_sectors": weights[op] for op in used if weights[op] != 1.0}
        worst = min(used, key=lambda op: used[op])
        name = {"ld": "loads", "st": "stores"}
        for roof in ("l2", "dram"):
            _add(out, m, "sector_use", roof, per_sector / 32.0, evidence,
                 f"global memory accesses use {per_sector:.1f} of every 32 bytes fetched "
                 f"(loads {used.get('ld', float('nan')):.1f}, stores {used.get('st', float('nan')):.1f})",
                 f"global {name[worst]} use {used[worst]:.0f} of every 32 bytes fetched: make adjacent "
                 "threads read adjacent addresses (structure of arrays, transposed indexing, or stage "
                 "through shared memory)")
    for op in ("ld", "st"):
        sectors = res.count(f"l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum")
        requests = res.count(f"l1tex__t_requests_pipe_lsu_mem_global_op_{op}.sum")
        r = used.get(op)
        if sectors is None or requests is None or requests[0] <= 0 or sectors[0] <= 0 or r is None:
            continue
        per_request = sectors[0] / requests[0]
        ideal = max(1.0, per_request * r / 32.0)  # sectors the useful bytes of a request need
        _add(out, m, "coalescing", "l1", ideal / per_request,
             {f"{op}_sectors": sectors[0], f"{op}_requests": requests[0], f"{op}_sectors_per_request": per_request,
              f"{op}_ideal_sectors_per_request": ideal},
             f"global {'loads' if op == 'ld' else 'stores'} touch {per_request:.1f} sectors per request where "
             f"{ideal:.1f} would hold the bytes used",
             "coalesce: let consecutive threads access consecutive, aligned addresses; use 8- or 16-byte "
             "vector accesses where each thread needs several elements")
    wavefronts = inst = 0.0
    shared_evidence: dict[str, float] = {}
    for op in ("ld", "st"):
        w = res.count(f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum")
        i = res.count(f"smsp__sass_inst_executed_op_shared_{op}.sum")
        if w is None or i is None:
            continue
        shared_evidence[f"shared_{op}_wavefronts"] = w[0]
        shared_evidence[f"shared_{op}_inst"] = i[0]
        c = res.count(f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum")
        if c is not None:
            shared_evidence[f"shared_{op}_bank_conflicts"] = c[0]
        if i[0] > 0:
            shared_evidence[f"shared_{op}_ways"] = w[0] / i[0]
        wavefronts += w[0]
        inst += i[0]
    if inst > 0 and wavefronts > 0:
        ways = wavefronts / inst
        shared_evidence["ways"] = ways
        per_op = ", ".join(f"{'loads' if op == 'ld' else 'stores'} {shared_evidence[f'shared_{op}_ways']:.1f}-way"
                           for op in ("ld", "st") if f"shared_{op}_ways" in shared_evidence)
        _add(out, m, "bank_conflicts", "l1", 1.0 / ways, shared_evidence,
             f"shared-memory instructions take {ways:.1f} wavefronts each on average ({per_op}; 1 is "
             "conflict-free for 4-byte accesses)",
             "remove shared-memory bank conflicts: pad the tile by one element per row (e.g. [32][33]) or "
             "swizzle the index so a warp's 32 accesses fall in 32 different banks")


def _reuse(m: KernelModel, res: Resolver) -> dict[str, float]:
    out: dict[str, float] = {}
    b = {lv: v.value for lv, v in m.q.bytes.items() if v is not None}
    if "l1" in b and "l2" in b and b["l2"] > 0:
        out["l1_to_l2_bytes"] = b["l1"] / b["l2"]
    if "l2" in b and "dram" in b and b["dram"] > 0:
        out["l2_to_dram_bytes"] = b["l2"] / b["dram"]
    for name, key in (("l1tex__t_sector_hit_rate.pct", "l1_hit_rate"), ("lts__t_sector_hit_rate.pct", "l2_hit_rate")):
        v = res.number(name)
        if v is not None:
            out[key] = v / 100.0
    return out


def _too_little_work(m: KernelModel) -> Finding:
    return Finding("too_little_work", None, None, too_little_work_reason(m.launch, m.limiter_share),
                   "give the launch more independent work (a larger grid, batching several calls into one "
                   "launch, or fusing it with its neighbours); for a tiny kernel, its launch overhead is the cost")


def _unit_limit(m: KernelModel, ceilings: list[Ceiling]) -> list[Finding]:
    """The kernel's limit is a unit throughput: say which, and how it relates to the chart's roofs."""
    bound = m.bound_by or ""
    unit = m.units[bound]
    roof = T.related_roof(bound)
    contrast = ""
    if roof is not None and roof in m.utilization:
        contrast = (f", while {roof.upper()} {'bytes' if roof in R.LEVELS else 'work'} reach only "
                    f"{m.utilization[roof]:.0%} of the {roof.upper()} roof")
    findings = [Finding("unit_throughput", bound, None, f"{unit.label} at {unit.share:.0%} of its peak{contrast}",
                        unit.explains or f"the busiest unit is {unit.label}")]
    for c in sorted(ceilings, key=lambda c: c.factor):
        if roof is not None and c.roof == roof and c.factor < SIGNIFICANT:
            findings.append(Finding(c.kind, c.roof, c.factor, f"{c.detail}: caps the {roof.upper()} roof at "
                                    f"{c.factor:.0%}", c.action))
    return findings


def _diagnose(m: KernelModel, ceilings: list[Ceiling], reuse: dict[str, float]) -> list[Finding]:
    if not m.usable or m.bound_by is None:
        return [_too_little_work(m)] if m.usable and m.regime == T.TOO_LITTLE_WORK else []
    if m.regime == T.TOO_LITTLE_WORK:
        return [_too_little_work(m)]
    if not m.limiter_is_roof:
        return _unit_limit(m, ceilings)
    findings: list[Finding] = []
    bound, u = m.bound_by, m.utilization[m.bound_by]
    mine = [c for c in ceilings if c.roof == bound]
    limit = 1.0
    for c in mine:
        limit *= c.factor

    def relevant(c: Ceiling) -> bool:
        # the bounding roof, the compute roof of the kernel's main precision, and memory roofs the
        # kernel actually leans on; a ceiling under a roof the kernel barely uses explains nothing
        if c.roof in (bound, m.dominant_precision):
            return True
        if c.roof not in R.LEVELS:
            return False
        level_u = m.utilization.get(c.roof)
        return level_u is None or level_u >= 0.25 * u  # unknown use of a level: cannot rule it out

    for c in sorted(ceilings, key=lambda c: (c.roof != bound, c.factor)):
        if c.factor >= SIGNIFICANT or not relevant(c):
            continue
        where = "the bounding roof" if c.roof == bound else f"the {c.roof.upper()} roof"
        findings.append(Finding(c.kind, c.roof, c.factor,
                                f"{c.detail}: caps {where} at {c.factor:.0%}", c.action))
    if m.regime == T.LATENCY and u < 0.6 * limit:
        findings.append(Finding(
            "latency", bound, None,
            f"after the ceilings ({limit:.0%} of the {bound.upper()} roof reachable) the kernel still reaches only "
            f"{u:.0%}: the rest is latency (occupancy, stalls, dependencies, too little work per launch)",
            "check achieved occupancy and the warp-stall reasons (Nsight Compute's WarpStateStats and Occupancy "
            "sections); give each SM more independent work (more warps, more instructions in flight)"))
    hit = reuse.get("l2_hit_rate")
    if bound == "dram" and hit is not None and hit < 0.5:
        findings.append(Finding(
            "reuse", "dram", None,
            f"only {hit:.0%} of L2 sector lookups hit: most requests go on to DRAM",
            "tile or fuse so that data is reused while it is in L2 or shared memory"))
    return findings


def analyse_ceilings(m: KernelModel) -> CeilingAnalysis:
    """All ceilings of one kernel, the reuse figures, and the ranked diagnosis."""
    if not m.usable:
        return CeilingAnalysis()
    res = Resolver(m.raw)
    res.duration = m.q.duration_s
    ceilings: list[Ceiling] = []
    _compute_ceilings(m, res, ceilings)
    _memory_ceilings(m, res, ceilings)
    reuse = _reuse(m, res)
    return CeilingAnalysis(ceilings, _diagnose(m, ceilings, reuse), reuse, _missing_ceilings(m, ceilings))
