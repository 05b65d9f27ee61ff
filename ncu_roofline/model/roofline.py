"""The roofline model of one kernel: intensities, roofs, utilisation, bound_by and regime.

Time lower bound per roof r: t_r = work_r / peak_r (bytes_r / bandwidth_r at a memory level).
Utilisation of r = t_r / measured duration. The roof with the highest utilisation bounds the
kernel; below `threshold` the kernel is latency-limited rather than roof-limited.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from sys import intern
from typing import Any

from ..knowledge import recipes as R
from ..knowledge import throughputs as T
from ..knowledge.peaks_file import UserPeaks
from ..readers.record import RawKernel
from ..readers.values import added, largest, smallest
from ..settings import AnalysisSettings
from .quantities import DURATION_FROM_CYCLES_NOTES, KernelQuantities, Missing, Value, compute_quantities
from .ranges import FIGURE_LIMIT, magnitude, named_figures, past_range, past_range_reason, too_short
from .resolver import Resolver
from .throughputs import UnitShare, broken_units, launch_facts, unit_throughputs

DEFAULT_SETTINGS = AnalysisSettings()
# A point above its roof means a wrong unit, precision, FLOP convention or sparsity assumption;
# it is flagged, never hidden. The tolerance absorbs rounding in the stored rates.
ABOVE_ROOF_TOLERANCE = 1.005
ROOF_PREFERENCE = 0.95
NEGLIGIBLE_TENSOR_PIPE = 0.05


@dataclass
class KernelModel:
    """The roofline of one kernel: roofs, intensities, utilisation, bound_by and regime.

    The analysis passes (ceilings, diagnosis, Instruction Roofline) read this and add their
    results in `api.kernel.AnalysedKernel`; the model knows nothing of them.
    """

    raw: RawKernel
    q: KernelQuantities
    peaks: dict[str, Value | None]
    tensor_peaks: dict[str, Value]
    utilization: dict[str, float]
    intensity: dict[str, float | None]
    achieved_flop_per_s: float | None
    attainable_flop_per_s: dict[str, float | None]
    dominant_precision: str | None
    bound_by: str | None
    regime: T.Regime | None
    flags: list[str] = field(default_factory=list)
    provenance: dict[str, str] = field(default_factory=dict)
    missing: list[Missing] = field(default_factory=list)
    total_flop: float | None = None  # all FLOP, when known (see build_kernel_model)
    units: dict[str, UnitShare] = field(default_factory=dict)  # Nsight Compute's unit throughputs
    launch: dict[str, float | None] = field(default_factory=dict)
    # The raw counters later passes read (`passes.facts.FACTS`), kept once the metrics are let go; None: read
    # them from the metrics.
    facts: tuple[float | None, ...] | None = None

    @property
    def usable(self) -> bool:
        return self.q.unusable_reason is None

    @property
    def limits(self) -> dict[str, float]:
        """Every measured limit's share of its peak: the roofs, then the unit throughputs."""
        return {**self.utilization, **{uid: u.share for uid, u in self.units.items()}}

    @property
    def limiter_share(self) -> float | None:
        """The share of the limit that bounds the kernel (`limits[bound_by]`, without building `limits`)."""
        if not self.bound_by:
            return None
        unit = self.units.get(self.bound_by)
        return unit.share if unit is not None else self.utilization.get(self.bound_by)

    @property
    def limiter_is_roof(self) -> bool:
        return self.bound_by in self.utilization

    def to_dict(self, redact: bool = False, unit_recipes: Mapping[str, str] | None = None) -> dict[str, Any]:
        """The kernel as the `ncu-roofline/5` JSON contract writes it.

        `unit_recipes`: the report's catalogue (unit id -> recipe, `ReportResult.units`); the
        kernel's `unit_recipes` then holds only the units whose recipe differs from it (usually
        none). Without a catalogue it holds every unit's recipe.
        """
        d: dict[str, Any] = {
            **launch_fields(self.raw),
            "usable": self.usable,
            "unusable_reason": self.q.unusable_reason,
            "duration_s": _v(self.q.duration_s),
            "work_flop": {p: _v(self.q.flop.get(p)) for p in (*R.PRECISIONS, "tensor")},
            "tensor_ops_by_datapath": {dp: v.value for dp, v in self.q.tensor_paths.items()},
            "tensor_pipe_utilization": _v(self.q.tensor_pipe_utilization),
            "traffic_bytes": {lv: _v(self.q.bytes.get(lv)) for lv in R.LEVELS},
            "byte_definitions": {lv: _definition(self.q.bytes.get(lv)) for lv in R.LEVELS},
            "set_aside_traffic_bytes": {lv: [{"definition": _definition(v), "recipe": v.recipe, "bytes": v.value}
                                             for v in values] for lv, values in self.q.set_aside.items()},
            "intensity_flop_per_byte": dict(self.intensity),
            "achieved_flop_per_s": self.achieved_flop_per_s,
            "attainable_flop_per_s": dict(self.attainable_flop_per_s),
            "dominant_precision": self.dominant_precision,
            "peaks": {
                **{f"{lv}_bytes_per_s": _v(self.peaks.get(lv)) for lv in R.LEVELS},
                **{f"{p}_flop_per_s": _v(self.peaks.get(p)) for p in R.PRECISIONS},
                "tensor_flop_per_s": {dp: v.value for dp, v in self.tensor_peaks.items()},
            },
            "ridge_point_flop_per_byte": self.ridge_points(),
            "utilization": self.limits,
            "unit_recipes": {uid: u.recipe for uid, u in self.units.items()} if unit_recipes is None else
                            {uid: u.recipe for uid, u in self.units.items() if unit_recipes.get(uid) != u.recipe},
            "bound_by": self.bound_by,
            "bound_kind": None if self.bound_by is None else ("roof" if self.limiter_is_roof else "unit"),
            "regime": self.regime,
            "launch": dict(self.launch),
            "provenance": dict(self.provenance),
            "missing": [{"quantity": m.quantity, "reason": m.reason, "collect_with": m.collect_with}
                        for m in self.missing],
            "flags": list(self.flags),
        }
        if redact:
            d["nvtx_ranges"] = []
        return d

    def compute_roof(self) -> float | None:
        """The compute roof of the kernel's dominant precision (FLOP/s)."""
        return _compute_roof_of(self.dominant_precision, self.peaks, self.tensor_peaks, self.q)

    def ridge_points(self) -> dict[str, float | None]:
        roof = self.compute_roof()
        out: dict[str, float | None] = {}
        for lv in R.LEVELS:
            bw = self.peaks.get(lv)
            out[lv] = roof / bw.value if roof is not None and bw is not None and bw.value > 0 else None
        return out


def launch_fields(k: RawKernel) -> dict[str, Any]:
    """What a launch's record (`KernelModel.to_dict`) says of the launch itself: its number, names, device, sizes,
    stream and NVTX ranges."""
    return {
        "index": k.index,
        "name": k.name,
        "demangled_name": k.demangled_name,
        "device": k.device,
        "compute_capability": k.compute_capability,
        "sm_count": k.sm_count,
        "range_index": k.range_index,
        "grid_size": list(k.grid_size) if k.grid_size else None,
        "block_size": list(k.block_size) if k.block_size else None,
        "stream_id": k.stream_id,
        "nvtx_ranges": list(k.nvtx_ranges),
    }


def _v(value: Value | None) -> float | None:
    return None if value is None else value.value


def _definition(value: Value | None) -> str | None:
    if value is None:
        return None
    return value.definition or "counts"


def _compute_roof_of(precision: str | None, peaks: dict[str, Value | None], tensor_peaks: dict[str, Value],
                     q: KernelQuantities) -> float | None:
    if precision is None:
        return None
    if precision == "tensor":
        return _tensor_roof(tensor_peaks, q)
    peak = peaks.get(precision)
    return peak.value if peak else None


def _tensor_roof(tensor_peaks: dict[str, Value], q: KernelQuantities) -> float | None:
    """One tensor roof: the fastest of the datapaths the kernel used (of all, when none is known)."""
    if not tensor_peaks:
        return None
    if q.tensor_paths:
        used = [dp for dp, v in q.tensor_paths.items() if v.value > 0 and dp in tensor_peaks]
        if used:
            return max(tensor_peaks[dp].value for dp in used)
    return max(v.value for v in tensor_peaks.values())


def _apply_user_peaks(q: KernelQuantities, raw: RawKernel, user: UserPeaks | None
                      ) -> tuple[dict[str, Value | None], dict[str, Value], list[str]]:
    peaks = dict(q.peaks)
    tensor = dict(q.tensor_peaks)
    flags: list[str] = []
    if user is None:
        return peaks, tensor, flags
    chosen = user.for_device(raw.device)
    for roof, value in chosen.roofs.items():
        peaks[roof] = Value(value, f"peaks file {user.path}")
        flags.append(f"peak_from_file:{roof}")
    for dp, value in chosen.tensor.items():
        tensor[dp] = Value(value, f"peaks file {user.path}")
        flags.append(f"peak_from_file:tensor:{dp}")
    return peaks, tensor, flags


def build_kernel_model(raw: RawKernel, settings: AnalysisSettings = DEFAULT_SETTINGS) -> KernelModel:
    """Quantities -> roofline model for one kernel, built once from named values."""
    res = Resolver(raw)
    q = compute_quantities(raw, settings.bytes_definition, res)
    units = unit_throughputs(raw)
    res.duration = q.duration_s  # none for a kernel without a usable duration
    launch = launch_facts(raw, res)
    peaks, tensor_peaks, flags = _apply_user_peaks(q, raw, settings.peaks)
    missing = [m for m in q.missing if not _covered_by_user(m, peaks, tensor_peaks)]
    empty_levels: dict[str, float | None] = {lv: None for lv in R.LEVELS}
    if q.unusable_reason is not None or q.duration_s is None:
        return _unusable_model(raw, q, peaks, tensor_peaks, flags, missing, units, launch)
    units, broken = broken_units(raw, units)
    missing += broken
    if q.duration_s.note in DURATION_FROM_CYCLES_NOTES:
        flags.append("duration_from_cycles")
    if (short := too_short(q.duration_s)) is not None:
        return made_unusable(_unusable_model(raw, q, peaks, tensor_peaks, flags, missing, units, launch), short)
    duration = q.duration_s.value
    provenance = _provenance(q, peaks, tensor_peaks)
    util = _utilization(q, peaks, tensor_peaks, duration, flags)
    work = _flop_totals(q, duration, flags, "tensor_pipe_utilization_only" in flags and _ran_mma(raw))
    compute_roof = _compute_roof_of(work.dominant_precision, peaks, tensor_peaks, q)
    attainable = dict(empty_levels)
    for lv in R.LEVELS:
        i, bw = work.intensity[lv], peaks.get(lv)
        if i is not None and bw is not None and compute_roof is not None:
            attainable[lv] = smallest(compute_roof, i * bw.value)
    figures = (q, peaks, tensor_peaks, util, units, launch, work.intensity, work.achieved_flop_per_s, attainable)
    past = None if magnitude(*figures) <= FIGURE_LIMIT else past_range(named_figures(*figures))
    if past is not None:
        return made_unusable(_unusable_model(raw, q, peaks, tensor_peaks, flags, missing, units, launch),
                             past_range_reason(*past))
    bound_by, regime = _verdict(raw.compute_capability, util, units, launch, settings.threshold, flags)
    return KernelModel(raw=raw, q=q, peaks=peaks, tensor_peaks=tensor_peaks, utilization=util,
                       intensity=work.intensity, achieved_flop_per_s=work.achieved_flop_per_s,
                       attainable_flop_per_s=attainable, dominant_precision=work.dominant_precision,
                       bound_by=bound_by, regime=regime, flags=flags, provenance=provenance,
                       missing=missing, total_flop=work.total, units=units, launch=launch)


def _unusable_model(raw: RawKernel, q: KernelQuantities, peaks: dict[str, Value | None],
                    tensor_peaks: dict[str, Value], flags: list[str], missing: list[Missing],
                    units: dict[str, UnitShare], launch: dict[str, float | None]) -> KernelModel:
    """The model of a launch that cannot be placed (`q.unusable_reason`, or no duration): no roof, no verdict; a
    launch figure past `FIGURE_LIMIT` is not available."""
    empty_levels: dict[str, float | None] = {lv: None for lv in R.LEVELS}
    launch = {n: (v if v is None or abs(v) <= FIGURE_LIMIT else None) for n, v in launch.items()}
    return KernelModel(raw=raw, q=q, peaks=peaks, tensor_peaks=tensor_peaks, utilization={},
                       intensity=dict(empty_levels), achieved_flop_per_s=None,
                       attainable_flop_per_s=dict(empty_levels), dominant_precision=None,
                       bound_by=None, regime=None, flags=[*flags, "unusable"], provenance={},
                       missing=missing, units=units, launch=launch)


# What a set-aside launch keeps of its flags: where its figures came from, not what a verdict found.
_KEPT_FLAGS = ("peak_from_file:", "duration_from_cycles")


def made_unusable(m: KernelModel, reason: str) -> KernelModel:
    """`m` as a launch that cannot be placed, for `reason` (a counter a later pass reads is past `FIGURE_LIMIT`):
    no roof, no verdict, no unit shares; its launch figures within the limit are kept (`_unusable_model`)."""
    flags = [f for f in m.flags if f.startswith(_KEPT_FLAGS)]  # no verdict: none of its flags
    return _unusable_model(m.raw, dataclasses.replace(m.q, unusable_reason=reason), m.peaks, m.tensor_peaks, flags,
                           m.missing, {}, m.launch)


def _provenance(q: KernelQuantities, peaks: dict[str, Value | None], tensor_peaks: dict[str, Value]
                ) -> dict[str, str]:
    """Quantity -> the recipe that produced it."""
    prov: dict[str, str] = {}
    if q.duration_s is not None:
        prov["duration_s"] = q.duration_s.recipe
    for p, v in q.flop.items():
        if v is not None:
            prov[f"work_flop.{p}"] = v.recipe
    for lv, v in q.bytes.items():
        if v is not None:
            prov[f"traffic_bytes.{lv}"] = intern(v.recipe + f"  [{v.note}]") if v.note else v.recipe
    for roof, v in peaks.items():
        if v is not None:
            prov[f"peaks.{roof}"] = v.recipe
    for dp, v in tensor_peaks.items():
        prov[f"peaks.tensor.{dp}"] = v.recipe
    if q.tensor_pipe_utilization is not None:
        prov["tensor_pipe_utilization"] = q.tensor_pipe_utilization.recipe
    return prov


def _utilization(q: KernelQuantities, peaks: dict[str, Value | None], tensor_peaks: dict[str, Value],
                 duration: float, flags: list[str]) -> dict[str, float]:
    """Utilisation of every roof for which both the work and the roof are known."""
    util: dict[str, float] = {}
    for lv in R.LEVELS:
        b, bw = q.bytes.get(lv), peaks.get(lv)
        if b is not None and bw is not None and bw.value > 0:
            util[lv] = b.value / bw.value / duration
    for p in R.PRECISIONS:
        w, pk = q.flop.get(p), peaks.get(p)
        if w is not None and pk is not None and pk.value > 0:
            util[p] = w.value / pk.value / duration
    tensor_flop = q.flop.get("tensor")
    if q.tensor_paths and tensor_peaks:
        t = added(v.value / tensor_peaks[dp].value for dp, v in q.tensor_paths.items()
                if dp in tensor_peaks and tensor_peaks[dp].value > 0)
        util["tensor"] = t / duration
    elif tensor_flop is not None and tensor_peaks:
        util["tensor"] = tensor_flop.value / max(v.value for v in tensor_peaks.values()) / duration
    elif q.tensor_pipe_utilization is not None and q.tensor_pipe_utilization.value > 0:
        # Only the pipe's busy share is known: it is the tensor roof's utilisation, no FLOP.
        util["tensor"] = q.tensor_pipe_utilization.value
        flags.append("tensor_pipe_utilization_only")
    if tensor_flop is not None and tensor_flop.estimate and tensor_flop.value > 0:
        flags.append("tensor_work_estimated")
    return util


@dataclass(frozen=True)
class _Work:
    total: float | None
    dominant_precision: str | None
    achieved_flop_per_s: float | None
    intensity: dict[str, float | None]


def _ran_mma(raw: RawKernel) -> bool:
    """Whether Nsight Compute counted integer, FP64 or warpgroup MMA instructions (IMMA, DMMA, GMMA) on the
    tensor pipe. Not HMMA's: the compiler loads constants with `HFMA2.MMA Rx, -RZ, RZ, imm`, which that pipe
    executes and counts, in kernels without any MMA."""
    possible = getattr(raw.metrics, "possible_names", raw.metrics)  # a C-level test of the names first
    return any(name in possible and (v := raw.number(name)) is not None and v > 0 for name in R.MMA_INSTRUCTION_SHARES)


def _flop_totals(q: KernelQuantities, duration: float, flags: list[str], mma: bool = False) -> _Work:
    """Dominant precision: the one with the most FLOP; intensity uses all FLOP together."""
    known = {p: v.value for p, v in q.flop.items() if v is not None}
    # Without any CUDA-core count the total is unknown, even when the tensor pipe was idle:
    # a memory-only kernel and a report that lacks the counts must not look the same.
    total = added(known.values()) if any(p in known for p in R.PRECISIONS) else None
    pipe = q.tensor_pipe_utilization
    if "tensor_pipe_utilization_only" in flags and pipe is not None and (pipe.value >= NEGLIGIBLE_TENSOR_PIPE or mma):
        # The tensor pipe did work that no counter turns into FLOP (its busy share, or MMA instructions counted
        # on it, at any share: a grid of a twelfth of a wave keeps the pipe's elapsed share small): a total
        # would undercount. Without any CUDA-core count there is no total to undercount: no FLOP counts at all.
        if total is not None:
            total = None
            flags.append("flop_incomplete")
    elif "tensor_pipe_utilization_only" in flags:
        # Below 5 % the pipe's busy share is no evidence of MMA work: Hopper captures show it at
        # 0.2-4 % on elementwise kernels whose sm__ops_path_tensor counts are all zero.
        flags.append("tensor_pipe_negligible")
    intensity: dict[str, float | None] = {lv: None for lv in R.LEVELS}
    dominant = max(known, key=lambda p: known[p]) if total else None
    achieved = None
    if total is not None:
        achieved = total / duration
        for lv in R.LEVELS:
            b = q.bytes.get(lv)
            if b is not None and b.value > 0:
                intensity[lv] = total / b.value
    elif "flop_incomplete" not in flags:
        flags.append("no_flop_counts")
    return _Work(total, dominant, achieved, intensity)


_PRIORITY: dict[str, tuple[int, int]] = {
    **{name: (2, -n) for n, name in enumerate(R.ROOFS)},
    **{u.id: (0 if n < len(T.HEADLINES) else 1, -n) for n, u in enumerate(T.UNITS)},
}
_UNLABELLED = (1, -len(T.UNITS))


def _priority(name: str) -> tuple[int, int]:
    """Among equal shares: a roof (it has work and a peak), then a sub-unit, then a headline figure."""
    return _PRIORITY.get(name, _UNLABELLED)


def limiter_and_regime(util: dict[str, float], units: dict[str, UnitShare], launch: dict[str, float | None],
                       threshold: float, compute_capability: str | None = None
                       ) -> tuple[str | None, T.Regime | None, list[str]]:
    """The limiter, regime and verdict flags of any set of limits, by the rules every kernel is judged by.

    For limits that are not one launch's (a kernel group's duration-weighted shares): the same
    rules, so a group and a kernel with equal limits get the same verdict.
    """
    flags: list[str] = []
    bound_by, regime = _verdict(compute_capability, util, units, launch, threshold, flags)
    return bound_by, regime, flags


def _verdict(compute_capability: str | None, util: dict[str, float], units: dict[str, UnitShare],
             launch: dict[str, float | None], threshold: float, flags: list[str]) -> tuple[str | None, T.Regime | None]:
    """The busiest of all measured limits (roofs and unit throughputs), and the regime.

    Regimes (`knowledge.throughputs.REGIME_RULES`): at a limit when the busiest share reaches the
    threshold; otherwise too little work when every share is under 5 % or the grid is under one
    wave; otherwise latency.
    """
    for r, u in util.items():
        if u > ABOVE_ROOF_TOLERANCE:
            flags.append(f"above_roof:{r}")
    finite = {r: u for r, u in util.items() if u - u == 0.0}  # not math.isfinite: a block's values have no float
    lacking = [r for r in R.ROOFS if r not in finite and r != "tensor"
               and not (r == "dram" and compute_capability in R.NO_DRAM_CC)]
    if finite and lacking:
        flags.append("partial_roofs:" + ",".join(lacking))
    if not finite:
        flags.append("no_roofs")
    if units:
        flags.append("unit_throughputs")
    limits = {**finite, **{uid: u.share for uid, u in units.items()}}
    if not limits:
        return None, None
    top = largest(*limits.values())  # then, among the limits at that share, the one `_priority` prefers
    tied = [n for n, v in limits.items() if v == top]
    busiest = tied[0] if len(tied) == 1 else max(tied, key=_priority)
    # A roof and the unit its work runs through measure one resource: when the roof is within
    # ROOF_PREFERENCE of the unit, name the roof (it is on the chart, with work and a peak).
    roof = T.related_roof(busiest) if busiest not in finite else None
    if roof is not None and roof in finite and finite[roof] >= ROOF_PREFERENCE * limits[busiest]:
        busiest = roof
    share = limits[busiest]
    if busiest in _ONE_DIRECTION and not any(n in limits for n in _WHOLE_DRAM):
        flags.append("dram_one_direction")  # reads (or writes) alone: DRAM may be busier than this
    waves = launch.get("waves_per_sm")
    # A hair of tolerance: 0.6 computed as 0.59999999 is still "at least" 0.6.
    if share >= threshold * (1 - 1e-9):
        return busiest, T.AT_LIMIT
    small_grid = waves is not None and waves < T.MIN_WAVES
    if small_grid:
        flags.append("grid_under_one_wave")
    if share < T.TOO_LITTLE_WORK_SHARE or small_grid:
        return (busiest if share > 0 else None), T.TOO_LITTLE_WORK
    return busiest, T.LATENCY


_ONE_DIRECTION = ("dram__bytes_read", "dram__bytes_write")
_WHOLE_DRAM = ("dram", "dram_throughput", "dram__cycles_active", "fbpa__dram_sectors")
DRAM_LIMITS = _WHOLE_DRAM + _ONE_DIRECTION  # every limiter that is DRAM


def _covered_by_user(m: Missing, peaks: dict[str, Value | None], tensor: dict[str, Value]) -> bool:
    if not m.quantity.startswith("peaks."):
        return False
    roof = m.quantity.split(".", 1)[1]
    if roof == "tensor":
        return bool(tensor)
    return peaks.get(roof) is not None
