"""Turn one RawKernel into SI quantities (seconds, FLOP, bytes, per-second peaks).

Each value records the recipe that produced it; each quantity no recipe could produce becomes a
`Missing` entry with the reason and the `ncu` options that would collect it. Nothing here
guesses: a quantity the report does not hold is absent, never 0.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from sys import intern  # a recipe's text is the same for every launch of a kernel: one copy

from ..knowledge import recipes as R
from ..knowledge import throughputs as T
from ..knowledge.targets import parse_compute_capability
from ..readers.record import RawKernel, metric_names_starting
from ..readers.values import added
from .hierarchy import within_hierarchy
from .resolver import Missing, Options, Resolver, Value, unit_of

__all__ = ["KernelQuantities", "Missing", "Resolver", "Value", "compute_quantities", "unit_of"]


@dataclass
class KernelQuantities:
    """Everything the roofline model needs from one kernel."""

    duration_s: Value | None
    flop: dict[str, Value | None]  # fp64, fp32, fp16, tensor
    tensor_paths: dict[str, Value]  # datapath -> operations
    bytes: dict[str, Value | None]  # dram, l2, l1
    peaks: dict[str, Value | None]  # dram, l2, l1 (byte/s); fp64, fp32, fp16 (FLOP/s)
    tensor_peaks: dict[str, Value]  # datapath -> FLOP/s
    tensor_pipe_utilization: Value | None
    missing: list[Missing] = field(default_factory=list)
    unusable_reason: str | None = None
    no_duration: bool = False  # unusable for want of a duration: NaN everywhere or absent (not 0, not infinite)
    # A level's byte counts set aside for being fewer than the level below (`hierarchy`), by level.
    set_aside: dict[str, tuple[Value, ...]] = field(default_factory=dict)


_TENSOR_PATH_RE = re.compile(r"^sm__ops_path_tensor_(.+?)\.sum(?:\.per_cycle_elapsed|\.per_second|\.peak_sustained)?$")
_SPARSITY_RE = re.compile(r"_sparsity_(on|off)$")


def _sm_peak(metric: str) -> R.PeakRecipe:
    """A tensor datapath's peak recipe: that metric per SM cycle, times the SM clock."""
    return R.PeakRecipe((R.Term(metric),), "sm")


def _tensor_paths(kernel: RawKernel, res: Resolver) -> tuple[dict[str, Value], dict[str, Value]]:
    """Tensor operations and dense peaks per datapath, without double counting.

    Nsight Compute records `sm__ops_path_tensor_src_<type>[_sparsity_on|off]` (a partition of the
    work by input type and sparsity) and, on Hopper and later, `..._op_<mma>_src_<type>...`
    breakdowns of the same work by instruction family. Only the `src_` partition is summed. An
    aggregate path without a sparsity suffix carries the sparse (2x) peak, so its roof is the
    fastest *dense* instruction family for that type (`op_*_src_<type>_sparsity_off`).
    """
    names = {m.group(1) for name in metric_names_starting(kernel.metrics, "sm__ops_path_tensor_")
             if (m := _TENSOR_PATH_RE.match(name))}
    work: dict[str, Value] = {}
    peaks: dict[str, Value] = {}
    for path in sorted(n for n in names if n.startswith("src_")):
        metric = f"{R.TENSOR_PATH_PREFIX}{path}.sum"
        got = res.count(metric)
        if got is None:
            continue
        work[path] = Value(got[0], got[1])
        peak = None
        if not _SPARSITY_RE.search(path):
            dense = [res.peak(_sm_peak(f"{R.TENSOR_PATH_PREFIX}{n}.sum.peak_sustained"))
                     for n in names if n.startswith("op_") and n.endswith(f"_{path}_sparsity_off")]
            dense_values = [d for d in dense if d is not None]
            if dense_values:
                peak = max(dense_values, key=lambda v: v.value)
                peak = Value(peak.value, peak.recipe, note="dense peak of the fastest instruction family")
        if peak is None:
            peak = res.peak(_sm_peak(f"{metric}.peak_sustained"))
        if peak is not None:
            peaks[path] = peak
    return work, peaks


def _looked_for(options: tuple[R.Recipe, ...] | tuple[R.PeakRecipe, ...]) -> str:
    names = []
    for option in options:
        names.append(" + ".join(t.metric for t in option.terms))
    return "; ".join(dict.fromkeys(names))


# (quantity, what, id(options), the terms held) -> (options, the Missing entry) when no NaN is involved:
# the same for every launch that holds the same terms. Keyed by identity: hashing the recipe tables'
# frozen dataclasses costs more than the rest of the look-up; the entry keeps its options alive.
_ABSENT: dict[tuple[str, str, int, tuple[str, ...]], tuple[Options, Missing]] = {}


def _not_finite(names: list[str], infinite: set[str]) -> str:
    """How the report's unusable values are, in words: NaN (what ncu writes for a failed collection),
    infinite (a damaged or hand-edited value), or both."""
    inf = sum(1 for n in names if n in infinite)
    return "NaN" if not inf else "infinite" if inf == len(names) else "NaN or infinite"


def _missing(quantity: str, what: str, options: tuple[R.Recipe, ...] | tuple[R.PeakRecipe, ...],
             res: Resolver) -> Missing:
    """Why `quantity` is not available: a peak that came out zero or out of range, NaN or infinite
    values (both as `res` saw them), or metrics absent from the report."""
    nan_seen = res.nan_seen
    if res.unusable_peaks and quantity.startswith("peaks."):
        unusable = [f for f in res.unusable_peaks if any(t.metric in f for o in options for t in o.terms)]
        if unusable:
            reason = f"{what}: the report's values give a zero peak or one past the float range ({unusable[0]})"
            return Missing(quantity, reason, R.COLLECT_WITH.get(quantity, "--set full"))
    if nan_seen:
        metrics = {t.metric for o in options for t in o.terms}
        nan_hit = sorted(n for n in nan_seen if any(n.startswith(m) for m in metrics))
        if nan_hit:
            reason = (f"{what}: the report's values are {_not_finite(nan_hit, res.infinite)} "
                      f"({', '.join(nan_hit[:3])})")
            return Missing(quantity, reason, R.COLLECT_WITH.get(quantity, "--set full"))
    held = res.held(options)
    key = (quantity, what, id(options), held)
    entry = _ABSENT.get(key)
    if entry is not None and entry[0] is options:
        return entry[1]
    # Recipes that lack a term the report does not hold (one may hold every term and still fail, for
    # want of a clock, cycles or a duration: that one is not named here).
    partial = [(option, absent) for option in options
               if (absent := [t.metric for t in option.terms if t.metric not in held])
               and len(absent) < len(option.terms)]
    if partial:
        lacks = "; ".join(f"{' + '.join(t.metric for t in o.terms)} lacks {', '.join(absent)}"
                          for o, absent in partial)
        reason = f"{what}: the report holds {', '.join(held[:3])}, but no recipe is complete ({lacks})"
    elif held:
        reason = (f"{what}: the report holds {', '.join(held[:3])}, but not the clock, cycle count or duration "
                  f"its recipes need ({_looked_for(options)})")
    else:
        reason = f"{what}: none of these metrics is in the report: {_looked_for(options)}"
    found = Missing(quantity, intern(reason), R.COLLECT_WITH.get(quantity, "--set full"))
    if len(_ABSENT) < 1024:
        _ABSENT[key] = (options, found)
    return found  # frozen: one entry serves every launch that lacks the same metrics


def _peak_base(option: R.PeakRecipe) -> str:
    """The count a peak recipe is the peak of: `lts__t_bytes.sum.peak_sustained` -> `lts__t_bytes.sum`."""
    return option.terms[0].metric.removesuffix(".peak_sustained")


def _peak_for(res: Resolver, options: tuple[R.PeakRecipe, ...], measured: Value | None,
              definition: str) -> Value | None:
    """The roof for the bytes measured: the peak of the same metric first, else one of the same
    definition (chart or tags), so that bytes and bandwidth always describe the same traffic."""
    allowed = [o for o in options if not (definition and o.definition and o.definition != definition)]
    if measured is not None:
        allowed.sort(key=lambda o: _peak_base(o) not in measured.recipe)  # stable: table order otherwise
    for option in allowed:
        got = res.peak(option)
        if got is not None:
            return got
    return None


_ORDERED: dict[tuple[str, str], tuple[R.Recipe, ...]] = {}


def _ordered(level: str, prefer: str) -> tuple[R.Recipe, ...]:
    """A level's byte recipes with the preferred definition first (stable otherwise); one tuple per
    (level, definition), so that the caches keyed by a recipe table's identity find it again."""
    found = _ORDERED.get((level, prefer))
    if found is None:
        options = R.BYTES[level]
        found = tuple(sorted(options, key=lambda o: 0 if not o.definition or o.definition == prefer else 1))
        if len(_ORDERED) < 64:
            _ORDERED[(level, prefer)] = found
    return found


DURATION_FROM_CYCLES = "duration from elapsed cycles ÷ clock (the report holds no gpu__time_duration)"
DURATION_FROM_CYCLES_NOT_FINITE = ("duration from elapsed cycles ÷ clock (the report's gpu__time_duration is "
                                   "NaN or infinite)")
DURATION_FROM_CYCLES_NOTES = (DURATION_FROM_CYCLES, DURATION_FROM_CYCLES_NOT_FINITE)


def _duration_from_cycles(res: Resolver) -> Value | None:
    """Elapsed cycles of a clock domain ÷ its measured frequency, where no usable duration is stored."""
    unusable = any(n.startswith("gpu__time_duration") for n in res.nan_seen)
    for cycles_name, clock_name in T.CYCLE_DURATIONS:
        cycles, clock = res.number(cycles_name), res.number(clock_name)
        if cycles is not None and clock is not None and cycles > 0 and clock > 0:
            return Value(cycles / clock, f"{cycles_name} ÷ {clock_name}",
                         note=DURATION_FROM_CYCLES_NOT_FINITE if unusable else DURATION_FROM_CYCLES)
    return None


def _ampere_or_later(compute_capability: str | None) -> bool:
    try:
        return int(parse_compute_capability(compute_capability or "").split(".")[0]) >= 8
    except ValueError:
        return False


def _without_register_moves(kernel: RawKernel, res: Resolver, fp16: Value | None) -> Value | None:
    """No FP16 work where the HFMA2s counted ran on no FP16 datapath (Ampere and later, no HADD2/HMUL2): they are
    the compiler's HFMA2.MMA register moves (`R.FP16_DATAPATH_SHARES`). The silu and rms_norm kernels of FP32
    tensors on A100 and H100 count 4-277 M such "FLOP"."""
    if fp16 is None or not fp16.value > 0 or not _ampere_or_later(kernel.compute_capability):
        return fp16
    if any((v := res.number(name)) is not None and v > 0 for name in R.HALF_OPS):
        return fp16
    for name in R.FP16_DATAPATH_SHARES:
        share = res.number(name)
        if share is not None:
            if share != 0:
                return fp16
            return Value(0.0, intern(f"{fp16.recipe} on no FP16 datapath ({name} = 0): HFMA2.MMA register moves, "
                                     "not FP16 arithmetic"), note=R.FP16_MOVES_NOTE)
    return fp16


def compute_quantities(kernel: RawKernel, prefer_definition: str = R.CHART,
                       res: Resolver | None = None) -> KernelQuantities:
    """Apply every recipe to one kernel (through `res`, a new resolver of `kernel` unless given)."""
    if res is None:
        res = Resolver(kernel)
    missing: list[Missing] = []

    res.duration = res.first(R.DURATION) or _duration_from_cycles(res)
    unusable = None
    if res.duration is None or not res.duration.value > 0:
        if res.nan_seen:
            if res.infinite:
                named = ", ".join(sorted(res.infinite)[:3])
                unusable = (f"the report's values for this kernel are infinite ({named}): the file is damaged "
                            "or was edited by hand; re-export or re-profile it")
            else:
                # named by the duration's own metric where it is among them (not a clock the fallback read)
                durations = sorted(n for n in res.nan_seen if n.startswith("gpu__time_duration"))
                first = f"the duration ({durations[0]})" if durations else sorted(res.nan_seen)[0]
                unusable = (f"every usable metric is NaN, starting with {first}; the profiler could not collect "
                            "this kernel (check the report's rule messages, re-profile it)")
        elif res.duration is not None:
            unusable = "the measured duration is 0; nothing can be placed on a roofline"
        else:
            unusable = ("the report holds no kernel duration (gpu__time_duration.sum); "
                        "without it no rate can be computed")
        q = KernelQuantities(None, {p: None for p in (*R.PRECISIONS, "tensor")}, {},
                             {lv: None for lv in R.LEVELS}, {r: None for r in R.ROOFS if r != "tensor"},
                             {}, None, missing, unusable,
                             no_duration=res.duration is None and not res.infinite)
        if res.duration is None and not res.nan_seen:
            missing.append(_missing("duration", "no duration", R.DURATION, res))
        return q

    flop: dict[str, Value | None] = {}
    for precision in R.PRECISIONS:
        flop[precision] = res.first(R.FLOP[precision])
        if flop[precision] is None:
            missing.append(_missing(f"work_flop.{precision}", f"no {precision.upper()} instruction counts",
                                    R.FLOP[precision], res))
    flop["fp16"] = _without_register_moves(kernel, res, flop["fp16"])

    # Tensor work: exact per-datapath operation counts where recorded.
    tensor_paths, tensor_peaks = _tensor_paths(kernel, res)
    if tensor_paths:
        used = [v.recipe for v in tensor_paths.values() if v.value > 0]
        recipe = (" + ".join(used) if used else
                  f"sm__ops_path_tensor_src_*.sum = 0 on all {len(tensor_paths)} datapaths")
        flop["tensor"] = Value(added(v.value for v in tensor_paths.values()), recipe)
    else:
        flop["tensor"] = res.first(R.TENSOR_ESTIMATE)
        if flop["tensor"] is not None:
            for option in R.TENSOR_ESTIMATE_PEAK:
                peak = res.peak(option)
                if peak is not None:
                    tensor_peaks["pipe_tensor_estimate"] = Value(peak.value, peak.recipe, estimate=True,
                                                                 note=peak.note)
                    break
    pipe = None
    for name in R.TENSOR_PIPE_UTILISATION:
        v = res.number(name)
        if v is not None:
            pipe = Value(v / 100.0, f"{name} ÷ 100")
            break
    if flop["tensor"] is None and pipe is not None and pipe.value == 0:
        # The report measured an idle tensor pipe: zero tensor work is a fact, not a guess.
        flop["tensor"] = Value(0.0, f"{pipe.recipe.split(' ')[0]} = 0 (tensor pipe idle)")
    if flop["tensor"] is None:
        reason = ("no tensor-core operation counts (sm__ops_path_tensor_*) or tensor-pipe "
                  "instruction counts")
        if pipe is not None:
            reason += f"; only the tensor pipe's busy share is known ({pipe.recipe.split(' ')[0]})"
        missing.append(Missing("work_flop.tensor", reason, R.COLLECT_WITH["work_flop.tensor"]))

    traffic: dict[str, Value | None] = {}
    set_aside: dict[str, tuple[Value, ...]] = {}
    peaks: dict[str, Value | None] = {}
    no_dram = kernel.compute_capability in R.NO_DRAM_CC
    for level in R.LEVELS:
        options = _ordered(level, prefer_definition)
        measured = res.first(options)
        # A cache level moves no fewer bytes than the levels below it (`hierarchy`): L2 against DRAM, L1
        # against the larger of L2 and DRAM.
        under = [(lv, got) for lv in R.LEVELS[:R.LEVELS.index(level)] if (got := traffic[lv]) is not None]
        below_level, below = max(under, key=lambda pair: pair[1].value, default=("dram", None))
        measured, contradicted, fewer = within_hierarchy(level, measured, below, below_level, res, options)
        if fewer:
            set_aside[level] = fewer
        traffic[level] = measured
        definition = measured.definition if measured is not None else prefer_definition
        peaks[level] = _peak_for(res, R.PEAKS[level], measured, definition)
        if level == "dram" and no_dram:
            note = (f"compute capability {kernel.compute_capability} is an integrated part with no "
                    "DRAM counters: there is no DRAM roof")
            if traffic[level] is None:
                missing.append(Missing("traffic_bytes.dram", note, "not collectable on this GPU"))
            continue
        if contradicted is not None:
            missing.append(contradicted)
        elif traffic[level] is None:
            missing.append(_missing(f"traffic_bytes.{level}", f"no {level.upper()} byte counts", options,
                                    res))
        if peaks[level] is None:
            missing.append(_missing(f"peaks.{level}", f"no {level.upper()} bandwidth peak", R.PEAKS[level],
                                    res))
    for precision in R.PRECISIONS:
        peaks[precision] = _peak_for(res, R.PEAKS[precision], None, "")
        if peaks[precision] is None:
            missing.append(_missing(f"peaks.{precision}", f"no {precision.upper()} peak",
                                    R.PEAKS[precision], res))
    if flop["tensor"] is not None and flop["tensor"].value > 0 and not tensor_peaks:
        missing.append(Missing("peaks.tensor", "no tensor-core peak for the datapaths used",
                               R.COLLECT_WITH["peaks.tensor"]))

    return KernelQuantities(res.duration, flop, tensor_paths, traffic, peaks, tensor_peaks, pipe, missing,
                            set_aside=set_aside)

