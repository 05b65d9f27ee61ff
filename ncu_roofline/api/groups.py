"""Kernel groups: the launches of one kernel with one launch configuration, judged as one.

A group is every launch with the same (demangled) name, grid and block (`group_by="launch"`, the
default), or with the same name alone (`group_by="name"`). Per group: launch count and duration
statistics (total, mean, median, min, max, coefficient of variation = population standard deviation
÷ mean), its share of GPU time, and its limits: for every roof and unit throughput the
duration-weighted mean of its launches' shares (for a roof, the summed work ÷ peak ÷ summed time),
so its intensity is total FLOP ÷ total bytes. Its limiter and regime follow the rules of every
kernel (`model.roofline.limiter_and_regime`). Its findings are the diagnosis of those limits, with
the ceilings (and Nsight Compute rule results) and the instructions (`where`) of its longest launch
(`findings_from_launch`: a finding's `where` entries are of that launch alone), and
every cap worth a finding that any launch has (the figures of the longest launch with it); each cap
counts the timed launches that share it (`launches_with_cap` of `launches_compared`), and where not
all do its text names the count and their share of the group's time, and its bound holds for that
share only (Amdahl's law). What the ceilings allow the group weighs each launch's own caps by its
share of the roof's work. Launches whose limiter differs from the group's are listed
(`disagreeing_launches`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..knowledge import recipes as R
from ..knowledge.wording import CEILING_KINDS, Figure
from ..model.roofline import limiter_and_regime
from ..passes.ceilings import SIGNIFICANT, Ceiling, ceiling_key
from ..passes.diagnosis import diagnose
from ..passes.finding import Finding
from ..passes.reuse import summed_reuse
from ..passes.rules_comparison import rules_fields
from ..passes.where import attach_where
from ..readers.record import RawKernel
from ..settings import DEFAULT_THRESHOLD, GROUP_BY_LAUNCH, GROUP_BY_NAME
from .kernel import AnalysedKernel
from .names import NameEntry, display_names
from .run_sums import add_launch
from .sums import WORK_KEYS, ExactSum, GroupSums, LaunchColumns, exact_sum, fsum

# Flags the group's own verdict sets; every other launch flag is carried over from its launches.
VERDICT_FLAGS = ("above_roof", "partial_roofs", "no_roofs", "unit_throughputs", "grid_under_one_wave",
                 "dram_one_direction")
NO_LIMITER = "none"


@dataclass(frozen=True)
class DurationStats:
    """Durations of a group's launches that have one (seconds; None when no launch has one)."""

    count: int
    total: float | None
    mean: float | None
    median: float | None
    min: float | None
    max: float | None
    cv: float | None  # population standard deviation ÷ mean; None for fewer than 2 launches

    @classmethod
    def of(cls, values: Sequence[float]) -> DurationStats:
        if not values:
            return cls(0, None, None, None, None, None, None)
        total = exact_sum(values)  # None past the float range (hand-edited durations): no total, mean or CV
        if total is None:
            return cls(len(values), None, None, statistics.median(values), min(values), max(values), None)
        mean = total / len(values)
        try:
            cv = statistics.pstdev(values, mean) / mean if len(values) > 1 and mean > 0 else None
        except (OverflowError, AttributeError, ValueError):  # squares past the float range: statistics fails
            cv = None
        return cls(len(values), total, mean, statistics.median(values), min(values), max(values), cv)

    def to_dict(self) -> dict[str, float | None]:
        return {"total": self.total, "mean": self.mean, "median": self.median, "min": self.min,
                "max": self.max, "cv": self.cv}


@dataclass
class KernelGroup:
    """The launches of one group and what is reported for them together."""

    key: str  # group_key: a stable digest of what the launches share (see `group_key`)
    name: str  # the full (demangled) name
    display_name: str  # short, unique within the report (`api.names`)
    grid: tuple[int, int, int] | None  # None under group_by="name"
    block: tuple[int, int, int] | None
    launches: LaunchColumns  # every launch, as the group keeps it (read back as `api.sums.LaunchEntry`)
    summary: AnalysedKernel  # the group's limits, verdict, flags and findings; ceilings and numbers of `longest`
    longest: AnalysedKernel
    stats: DurationStats
    share: float | None  # of the report's GPU time
    limiters: dict[str, int] = field(default_factory=dict)  # limiter -> launches
    disagreeing: list[int] = field(default_factory=list)  # indices of launches with another limiter
    regimes: dict[str, int] = field(default_factory=dict)  # regime -> usable launches
    regime_disagreeing: list[int] = field(default_factory=list)  # indices of launches in another regime
    usable_launches: int = 0
    work_flop: dict[str, float | None] = field(default_factory=dict)  # summed over the usable launches
    traffic_bytes: dict[str, float | None] = field(default_factory=dict)
    nvtx_ranges: list[str] = field(default_factory=list)  # every range any launch ran in, sorted

    @property
    def function(self) -> str:
        return self.longest.raw.name

    @property
    def first_index(self) -> int:
        """The index of its first launch."""
        index: int = self.launches[0].index
        return index

    def to_dict(self, redact: bool = False) -> dict[str, Any]:
        """The group as the `groups` list of the `ncu-roofline/5` document writes it."""
        s = self.summary
        bound = s.bound_by
        return {
            "group_key": self.key,
            "display_name": self.display_name,
            "name": self.function,
            "demangled_name": self.name,
            "device": self.longest.raw.device,
            "grid_size": list(self.grid) if self.grid else None,
            "block_size": list(self.block) if self.block else None,
            "launches": len(self.launches),
            "usable_launches": self.usable_launches,
            "launch_indices": self.launches.indices(),
            "duration_s": self.stats.to_dict(),
            "share_of_gpu_time": self.share,
            "work_flop": dict(self.work_flop),
            "traffic_bytes": dict(self.traffic_bytes),
            "intensity_flop_per_byte": dict(s.intensity),
            "achieved_flop_per_s": s.achieved_flop_per_s,
            "dominant_precision": s.dominant_precision,
            "utilization": s.limits,
            "bound_by": bound,
            "bound_kind": None if bound is None else ("roof" if s.limiter_is_roof else "unit"),
            "regime": s.regime,
            "limiters": dict(self.limiters),
            "disagreeing_launches": list(self.disagreeing),
            "regimes": dict(self.regimes),
            "regime_disagreeing_launches": list(self.regime_disagreeing),
            "findings_from_launch": self.longest.raw.index,
            "diagnosis": [f.to_dict(redact) for f in s.diagnosis],
            # what Nsight Compute's largest estimate (of the longest launch's rules) says beside the group's findings
            **rules_fields(s.diagnosis, self.longest.rules(), s.regime, s.not_applicable, s.limiter_share,
                           s.ceilings),
            "ceilings": [c.to_dict() for c in s.ceilings],
            "nvtx_ranges": [] if redact else list(self.nvtx_ranges),
            "flags": list(s.flags),
        }


def group_key(kernel: AnalysedKernel, group_by: str = GROUP_BY_LAUNCH) -> str:
    """A stable digest of what a group's launches share: the same kernel in two reports has the same key."""
    return launch_group_key(kernel.raw, group_by)


def launch_group_key(raw: RawKernel, group_by: str = GROUP_BY_LAUNCH) -> str:
    """`group_key` of a launch as read (its names and sizes are all the key holds)."""
    name = raw.demangled_name or raw.name or ""  # a name a damaged report could not give is absent
    parts = [group_by, name] if group_by == GROUP_BY_NAME else [group_by, name, str(raw.grid_size),
                                                                 str(raw.block_size)]
    return hashlib.blake2b("\x00".join(parts).encode("utf-8", "surrogatepass"), digest_size=6).hexdigest()


def group_duration(k: AnalysedKernel) -> float | None:
    return k.q.duration_s.value if k.usable and k.q.duration_s is not None else None


def longest_key(k: AnalysedKernel) -> tuple[float, int]:
    """How a group's longest launch is picked among its timed launches: the longest, then the lowest index (the
    launch whose findings a group reports, `findings_from_launch`)."""
    return (group_duration(k) or 0.0, -k.raw.index)


def _aggregate(sums: GroupSums, longest: AnalysedKernel, threshold: float, by_group: bool = False) -> AnalysedKernel:
    """The group as one kernel: weighted limits, summed-work intensity, the verdict of those limits (`sums`: its
    launches, summed; `by_group`: only `longest` has pass results, and no launch is kept)."""
    if not sums.timed_count or sums.count == 1:
        return longest  # one launch is its own group, to the last bit
    util = sums.weighted_shares()
    shares = sums.weighted_units()
    launch = dict(longest.launch)
    for fact in ("waves_per_sm", "achieved_occupancy", "sm_active_share"):
        if fact in sums.facts:
            launch[fact] = sums.weighted_fact(fact)
    bound_by, regime, verdict_flags = limiter_and_regime(util, shares, launch, threshold,
                                                         longest.raw.compute_capability)
    total_time = sums.total_time()
    total_flop = sums.total_flop()
    intensity: dict[str, float | None] = {lv: None for lv in R.LEVELS}
    for lv in R.LEVELS:
        moved = sums.moved_bytes(lv)
        if total_flop is not None and moved is not None:
            intensity[lv] = total_flop / moved if moved > 0 else None
    per_precision = sums.precision_flop()
    dominant = max(per_precision, key=lambda p: per_precision[p]) if total_flop else None
    compute_roof = dataclasses.replace(longest, dominant_precision=dominant).compute_roof()
    attainable: dict[str, float | None] = {}
    for lv in R.LEVELS:
        i, bw = intensity[lv], longest.peaks.get(lv)
        attainable[lv] = min(compute_roof, i * bw.value) if i is not None and bw and compute_roof else None
    flags = list(dict.fromkeys([*sums.flags, *verdict_flags]))
    timed = [] if by_group or sums.members is None else \
        [(d, k) for k in sums.members if (d := group_duration(k)) is not None and d > 0]
    summary = dataclasses.replace(
        longest, utilization=util, units=shares, launch=launch, bound_by=bound_by, regime=regime,
        flags=flags, intensity=intensity, total_flop=total_flop, dominant_precision=dominant,
        achieved_flop_per_s=total_flop / total_time if total_flop is not None else None,
        attainable_flop_per_s=attainable,
        reuse=summed_reuse([longest.reuse] if not timed else [k.reuse for _, k in timed], longest.reuse))
    # The diagnosis of the group's own limits (the row's limiter and its findings must agree), with
    # the ceilings of its longest launch and the caps any launch has, each saying how many launches
    # share it (and a cap's bound scaled to their time); a tail effect only where every launch has the
    # same waves.
    ceilings, partial = (list(longest.ceilings), {}) if not timed else _shared_ceilings(timed, longest)
    findings = diagnose(summary, ceilings, summary.reuse, waves=len(sums.waves) == 1,
                        parts=None if not timed else [(d, k, k.ceilings) for d, k in timed])
    # where in the code: the longest launch's instructions (`findings_from_launch`), by the counters its own
    # diagnosis read; none for a latency finding of idle SMs, an unmeasured limit or the occupancy cap (`NO_WHERE`)
    findings = attach_where([_in_part(f, partial) for f in findings], longest.raw.instructions, read=False)
    return dataclasses.replace(summary, ceilings=ceilings, diagnosis=findings)


# How a report's findings were made: each launch's own (`FINDINGS_BY_LAUNCH`), or, in a report of many
# launches, each group's from its longest launch (`FINDINGS_BY_GROUP`: the launches hold numbers and verdicts only).
FINDINGS_BY_LAUNCH = "launch"
FINDINGS_BY_GROUP = "group"

# A group's partial caps (`Ceiling.key`) -> its launches' share of the group's time
Partial = dict[tuple[str, str, str], float]


def _shared_ceilings(timed: list[tuple[float, AnalysedKernel]], longest: AnalysedKernel
                     ) -> tuple[list[Ceiling], Partial]:
    """The group's ceilings: its longest launch's, and each cap worth a finding that any timed launch
    has (a launch of the same name and grid may access memory another way: an offset argument that
    misaligns it). A cap is the one of the longest launch that has it, and it counts the timed
    launches that have it; where not all do, its text says so with their share of the group's time.
    Also: those partial caps (`Ceiling.key`) -> that time share: a coalescing cap of loads and one of stores
    may share kind, roof and factor, and only one of them be partial."""
    total = fsum(d for d, _ in timed)
    caps = [(d, {o.key: o for o in k.ceilings if o.factor < SIGNIFICANT})
            for d, k in sorted(timed, key=lambda t: (-t[0], t[1].raw.index))]  # the longest first
    out: list[Ceiling] = []
    partial: Partial = {}

    def counted(c: Ceiling) -> Ceiling:
        key = c.key
        having = [d for d, held in caps if key in held]
        if len(having) == len(timed):
            return dataclasses.replace(c, launches=(len(having), len(timed)))
        share = fsum(having) / total
        detail = (f"{c.detail} (in {len(having)} of {len(timed)} launches, {share:.0%} of the group's time, "
                  "the longest among them)")
        partial[key] = share
        return dataclasses.replace(c, launches=(len(having), len(timed)), detail=detail)

    def first_cap(key: object) -> Ceiling | None:
        return next((held[key] for _, held in caps if key in held), None)

    for c in longest.ceilings:
        cap = c if c.factor < SIGNIFICANT else first_cap(c.key)  # a shorter launch may have the cap
        out.append(c if cap is None else counted(cap))
    seen = {c.key for c in longest.ceilings}
    for _, held in caps:  # caps of kinds the longest launch has no ceiling of at all
        for key, c in held.items():
            if key not in seen:
                seen.add(key)
                out.append(counted(c))
    return out, partial


def _mixed(summary: AnalysedKernel, launches: int, limiters: Counter[str]) -> AnalysedKernel:
    """Where no launch has the group's limiter (a headline such as memory throughput, the busiest of
    different sub-units in different launches), the first finding says why: the launches' summed shares
    crown it, while each launch has another limit at its top (`limiters` counts them)."""
    bound = summary.bound_by
    if bound is None or bound in limiters or not summary.diagnosis or launches < 2:
        return summary
    usable = sum(limiters.values())
    unit = summary.units.get(bound)
    head = summary.diagnosis[0]
    flag = "mixed_headline" if unit is not None and unit.parent is None else "mixed_summed"
    more: dict[str, Figure] = {flag: "", "mixed_launches": usable}
    head = head.with_figures(**more)
    return dataclasses.replace(summary, diagnosis=[head, *summary.diagnosis[1:]])


def _in_part(f: Finding, partial: Partial) -> Finding:
    """A cap's finding whose cap is in only part of the group's time: its bound by Amdahl's law (the
    other launches keep their time), so that the group's ranking by program gain does not count it
    for the launches without it."""
    share = partial.get(ceiling_key(f.kind.value, f.roof or "", f.evidence)) if f.kind in CEILING_KINDS else None
    if share is None:
        return f
    f = f.with_figures(part_share=share)
    if f.speedup is None or f.speedup <= 0:
        return f
    speedup = 1.0 / (1.0 - share + share / f.speedup)
    return dataclasses.replace(f.with_basis("group_part"), speedup=speedup)


def carried_flags(k: AnalysedKernel) -> list[str]:
    """A launch's flags its group carries over (not those of the group's own verdict)."""
    return [f for f in k.flags if f.split(":", 1)[0] not in VERDICT_FLAGS]


class GroupMaker:
    """A report's groups, made as its launches come (`add`, in report order) and finished at the end (`groups`):
    each group's launches summed (`api.sums`), its longest launch kept (`longest_key`). `keep`: every launch is
    kept too (findings per launch: a group weighs its launches' own ceilings)."""

    def __init__(self, group_by: str = GROUP_BY_LAUNCH, keep: bool = True) -> None:
        self.group_by = group_by
        self.keep = keep
        self.sums: dict[str, GroupSums] = {}
        self.longest: dict[str, AnalysedKernel] = {}
        self.time = ExactSum()  # of every timed launch

    def add(self, k: AnalysedKernel, key: str | None = None) -> tuple[str, AnalysedKernel | None]:
        """Add a launch (`key`: its `group_key`, where known); returns its group's key and the launch it replaced
        as that group's longest (None where it did not)."""
        key = group_key(k, self.group_by) if key is None else key
        d = group_duration(k)
        before, replaced = self.longest.get(key), None
        if before is None:
            self.longest[key] = k
        elif d is not None and (group_duration(before) is None or longest_key(k) > longest_key(before)):
            self.longest[key], replaced = k, before
        sums = self.sums.get(key)
        if sums is None:
            sums = self.sums[key] = GroupSums(self.keep)
        add_launch(sums, k, carried_flags(k))
        if d is not None:
            self.time.add(d)
        return key, replaced

    def groups(self, threshold: float = DEFAULT_THRESHOLD, total_s: float | None = None,
               findings: str = FINDINGS_BY_LAUNCH) -> list[KernelGroup]:
        """The groups, the most GPU time first (then by first launch); `total_s`: the GPU time shares are taken of
        (default: the launches' own total)."""
        if total_s is None and self.time.count:
            total_s = self.time.fsum()
        groups: list[KernelGroup] = []
        by_launch = self.group_by == GROUP_BY_LAUNCH
        for key, sums in self.sums.items():
            longest = self.longest[key]
            stats = DurationStats.of(list(sums.durations))
            summary = _aggregate(sums, longest, threshold, findings == FINDINGS_BY_GROUP)
            usable = list(sums.entries.verdicts())  # (index, limiter, regime)
            limiters = Counter(bound or NO_LIMITER for _, bound, _ in usable)
            disagreeing = [index for index, bound, _ in usable if bound != summary.bound_by]
            summary = _mixed(summary, sums.count, limiters)
            regimes = Counter(regime or NO_LIMITER for _, _, regime in usable)
            other_regime = [index for index, _, regime in usable if regime != summary.regime]
            share = stats.total / total_s if stats.total is not None and total_s else None
            first = sums.first.raw if sums.first is not None else longest.raw
            groups.append(KernelGroup(
                key=key, name=first.demangled_name or first.name, display_name="",
                grid=first.grid_size if by_launch else None, block=first.block_size if by_launch else None,
                launches=sums.entries, summary=summary, longest=longest, stats=stats, share=share,
                limiters=dict(sorted(limiters.items(), key=lambda kv: (-kv[1], kv[0]))), disagreeing=disagreeing,
                regimes=dict(sorted(regimes.items(), key=lambda kv: (-kv[1], kv[0]))), regime_disagreeing=other_regime,
                usable_launches=sums.usable, work_flop=sums.summed_work(WORK_KEYS),
                traffic_bytes=sums.summed_work(R.LEVELS), nvtx_ranges=sorted(sums.nvtx)))
        groups.sort(key=lambda g: (-(g.stats.total or 0.0), g.first_index))
        return named(groups)


def named(groups: list[KernelGroup]) -> list[KernelGroup]:
    """The groups of one report, each given its display name: short, and told apart from the others'."""
    names = display_names([NameEntry(g.name, g.grid, g.block) for g in groups])
    for g, name in zip(groups, names, strict=True):
        g.display_name = name
    return groups


def group_kernels(kernels: Sequence[AnalysedKernel], group_by: str = GROUP_BY_LAUNCH,
                  threshold: float = DEFAULT_THRESHOLD, total_s: float | None = None,
                  findings: str = FINDINGS_BY_LAUNCH) -> list[KernelGroup]:
    """The groups of one report's launches, the most GPU time first (then by first launch).

    `total_s` is the GPU time shares are taken of (default: the launches' own total). `findings`: how the
    report was analysed; `FINDINGS_BY_GROUP`: only each group's longest launch has its passes' results, and
    the group's ceilings, reuse and findings are that launch's.
    """
    maker = GroupMaker(group_by, keep=findings != FINDINGS_BY_GROUP)
    for k in kernels:
        maker.add(k)
    return maker.groups(threshold, total_s, findings)
