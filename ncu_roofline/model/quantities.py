"""Turn one RawKernel into SI quantities (seconds, FLOP, bytes, per-second peaks).

Each value records the recipe that produced it; each quantity no recipe could produce becomes a
`Missing` entry with the reason and the `ncu` options that would collect it. Nothing here
guesses: a quantity the report does not hold is absent, never 0.
"""

from __future__ import annotations

import math
import re
from collections.abc import Container
from dataclasses import dataclass, field
from sys import intern  # a recipe's text is the same for every launch of a kernel: one copy
from typing import Any, TypeVar

from ..knowledge import recipes as R
from ..knowledge import throughputs as T
from ..knowledge.units import SI_FACTORS, to_si
from ..readers.record import RawKernel, metric_names_starting


@dataclass(slots=True)  # not frozen: built a few hundred times a launch, and frozen costs 4x to build
class Value:
    """A quantity in SI units and the formula (metric names) that produced it."""

    value: float
    recipe: str
    estimate: bool = False
    definition: str = ""
    note: str = ""


@dataclass(frozen=True, slots=True)
class Missing:
    """A quantity the report does not hold: why, and how to collect it next time."""

    quantity: str
    reason: str
    collect_with: str


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


def unit_of(metric: str) -> str:
    """The hardware unit whose cycles pace a metric: `dram__bytes_read.sum` -> `dram`."""
    name = metric.removeprefix("derived__")
    return name.split("__", 1)[0]


Options = tuple[R.Recipe, ...] | tuple[R.PeakRecipe, ...]
# id(options) -> (options, each term's metric once, with its raw, per-cycle and per-second names). The
# options are the recipe tables' own tuples (kept alive here, so that an id names one tuple only).
_TERMS: dict[int, tuple[Options, tuple[tuple[str, tuple[str, str, str]], ...]]] = {}


def _terms_of(options: Options) -> tuple[tuple[str, tuple[str, str, str]], ...]:
    entry = _TERMS.get(id(options))
    if entry is None or entry[0] is not options:
        names = dict.fromkeys(t.metric for o in options for t in o.terms)
        entry = (options, tuple((n, (n, f"{n}.per_cycle_elapsed", f"{n}.per_second")) for n in names))
        if len(_TERMS) < 1024:
            _TERMS[id(options)] = entry
    return entry[1]


_T = TypeVar("_T")
_UNREAD = object()
_NOTHING_READ: dict[str, object] = {}
# Names built once, not on every look-up: a count's per-cycle and per-second forms and the unit whose
# cycles pace it; a unit's elapsed-cycle metric and its rate.
_RATE_FORMS: dict[str, tuple[str, str, str]] = {}
_CYCLE_NAMES: dict[str, tuple[str, str]] = {}
_KEPT = 4096  # names come from the recipe tables and a report's tensor paths: a hand-edited file cannot grow these


def _remember(cache: dict[str, _T], key: str, value: _T) -> _T:
    if len(cache) < _KEPT:
        cache[key] = value
    return value


class Resolver:
    """Finds a count in whatever form a report stores it, and says which form it used."""

    def __init__(self, kernel: RawKernel) -> None:
        self.kernel = kernel
        self._get = kernel.metrics.get  # a few hundred look-ups per kernel: bound once
        # The metrics read so far (a CSV row's parsed cells, a report's fetched metrics; None for one
        # known absent): a C-level look-up answers most calls before the mapping's own `get`.
        read = getattr(kernel.metrics, "read_so_far", None)
        self._read = read.get if read is not None else _NOTHING_READ.get
        # Names the metrics may hold at all (a CSV export's header, a report action's name list):
        # over half the look-ups of a fallback chain are of names absent there, answered by this
        # container's `in` (in C) without calling the mapping's `get`.
        self._possible: Container[str] = getattr(kernel.metrics, "possible_names", kernel.metrics)
        self.duration: Value | None = None
        self.nan_seen: set[str] = set()  # metrics whose value is NaN or infinite: not measurements
        self.infinite: set[str] = set()  # those of them that are infinite (a hand-edited or damaged value)
        self.unusable_peaks: list[str] = []  # peak formulas whose value came out zero or past the float range

    def number(self, name: str, default_unit: str = "") -> float | None:
        """A metric's value in SI units; None when absent, NaN or infinite (those are remembered)."""
        if name not in self._possible:
            return None
        m: Any = self._read(name, _UNREAD)
        if m is _UNREAD:
            m = self._get(name)
        if m is None:
            return None
        value = m.value
        if type(value) is not float:  # the common case is a float: no property calls for it
            if not m.is_number:
                return None
            value = float(value)
        if value - value != 0.0:  # NaN, or ±inf (inf - inf is NaN)
            self.nan_seen.add(name)
            if value == value:
                self.infinite.add(name)
            return None
        unit = m.unit or default_unit
        if not unit:
            return value  # a count: no conversion
        factor = SI_FACTORS.get(unit)
        return value * factor[0] if factor is not None else to_si(value, unit)

    def cycles(self, unit: str) -> tuple[float, str] | None:
        """Elapsed cycles of a unit: stored, or clock x duration."""
        names = _CYCLE_NAMES.get(unit)
        if names is None:
            names = _remember(_CYCLE_NAMES, unit, (f"{unit}__cycles_elapsed.avg",
                                                   f"{unit}__cycles_elapsed.avg.per_second"))
        name, per_second = names
        v = self.number(name)
        if v is not None:
            return v, name
        rate = self.number(per_second) if per_second in self._possible else None
        if rate is not None and self.duration is not None:
            return rate * self.duration.value, f"{per_second} × {self.duration.recipe}"
        return None

    def clock(self, unit: str) -> tuple[float, str] | None:
        """Measured clock of a unit in hz: stored rate, or cycles / duration."""
        name = f"{unit}__cycles_elapsed.avg.per_second"
        v = self.number(name)
        if v is not None:
            return v, name
        cyc = self.number(f"{unit}__cycles_elapsed.avg")
        if cyc is not None and self.duration is not None and self.duration.value > 0:
            return cyc / self.duration.value, f"{unit}__cycles_elapsed.avg ÷ {self.duration.recipe}"
        return None

    def count(self, metric: str, raw_only: bool = False, default_unit: str = "") -> tuple[float, str] | None:
        """A total count: raw, per-cycle rate x cycles, per-second rate x duration."""
        v = self.number(metric, default_unit)
        if v is not None:
            return v, metric
        if raw_only:
            return None
        forms = _RATE_FORMS.get(metric)
        if forms is None:
            forms = _remember(_RATE_FORMS, metric, (f"{metric}.per_cycle_elapsed", f"{metric}.per_second",
                                                    unit_of(metric)))
        per_cycle, per_second, unit = forms
        possible = self._possible  # most counts have no rate form in a report: no call for those
        if per_cycle in possible:
            rate = self.number(per_cycle)
            if rate is not None:
                cyc = self.cycles(unit)
                if cyc is not None:
                    return rate * cyc[0], f"{per_cycle} × {cyc[1]}"
        if per_second in possible:
            rate = self.number(per_second)
            if rate is not None and self.duration is not None:
                return rate * self.duration.value, f"{per_second} × {self.duration.recipe}"
        return None

    def held(self, options: tuple[R.Recipe, ...] | tuple[R.PeakRecipe, ...]) -> tuple[str, ...]:
        """The recipes' terms the kernel holds in some form (raw, per cycle, per second), in order."""
        possible, get = self._possible, self._get
        found = []
        for name, forms in _terms_of(options):  # plain loops: a generator per term costs twice as much
            for form in forms:
                if form in possible and get(form) is not None:
                    found.append(name)
                    break
        return tuple(found)

    def recipe(self, recipe: R.Recipe) -> Value | None:
        """Apply a recipe: every term must resolve."""
        total = 0.0
        parts = []
        complete = True
        for term in recipe.terms:  # every term is looked at, so NaNs are noticed and reported
            got = self.count(term.metric, recipe.raw_only, recipe.default_unit)
            if got is None:
                complete = False
                continue
            total += term.weight * got[0]
            parts.append(_weighted(term.weight, got[1]))
        if not complete or total - total != 0.0:  # a sum past the float range (edited values) is no count
            return None
        return Value(total, intern(" + ".join(parts)), recipe.estimate, recipe.definition, recipe.note)

    def first(self, options: tuple[R.Recipe, ...]) -> Value | None:
        for option in options:
            got = self.recipe(option)
            if got is not None:
                return got
        return None

    def peak(self, recipe: R.PeakRecipe) -> Value | None:
        """Per-cycle peak x measured clock, in units per second."""
        if recipe.ratio_pct:
            return self._ratio_peak(recipe)
        per_cycle = 0.0
        parts = []
        for term in recipe.terms:
            v = self.number(term.metric)
            if v is None:
                return None
            per_cycle += term.weight * v
            parts.append(_weighted(term.weight, term.metric))
        clk = self.clock(recipe.clock_unit)
        if clk is None:
            return None
        formula = f"({' + '.join(parts)}) × {clk[1]}" if len(parts) > 1 else f"{parts[0]} × {clk[1]}"
        peak = per_cycle * clk[0]
        if not 0.0 < peak < math.inf:  # a zero or overflowing peak (edited values) is no roof
            self.unusable_peaks.append(formula)
            return None
        return Value(peak, intern(formula), definition=recipe.definition, note=recipe.note)


    def _ratio_peak(self, recipe: R.PeakRecipe) -> Value | None:
        """Peak = achieved rate ÷ (the report's % of peak / 100); needs a non-zero share."""
        term = recipe.terms[0]
        got = self.count(term.metric)
        pct = self.number(recipe.ratio_pct)
        if got is None or pct is None or pct <= 0 or self.duration is None:
            return None
        rate = term.weight * got[0] / self.duration.value
        formula = f"{_weighted(term.weight, got[1])} ÷ {self.duration.recipe} ÷ ({recipe.ratio_pct} ÷ 100)"
        peak = rate / (pct / 100.0)
        if not 0.0 < peak < math.inf:
            self.unusable_peaks.append(formula)
            return None
        return Value(peak, intern(formula), definition=recipe.definition, note=recipe.note)


def _weighted(weight: float, text: str) -> str:
    if weight == 1.0:
        return text
    w = int(weight) if float(weight).is_integer() else weight
    return f"{w} × {text}"


_TENSOR_PATH_RE = re.compile(r"^sm__ops_path_tensor_(.+?)\.sum(?:\.per_cycle_elapsed|\.per_second|\.peak_sustained)?$")
_SPARSITY_RE = re.compile(r"_sparsity_(on|off)$")


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
            dense = [res.peak(R.PeakRecipe((R.Term(f"{R.TENSOR_PATH_PREFIX}{n}.sum.peak_sustained"),), "sm"))
                     for n in names if n.startswith("op_") and n.endswith(f"_{path}_sparsity_off")]
            dense_values = [d for d in dense if d is not None]
            if dense_values:
                peak = max(dense_values, key=lambda v: v.value)
                peak = Value(peak.value, peak.recipe, note="dense peak of the fastest instruction family")
        if peak is None:
            peak = res.peak(R.PeakRecipe((R.Term(f"{metric}.peak_sustained"),), "sm"))
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


def compute_quantities(kernel: RawKernel, prefer_definition: str = R.CHART) -> KernelQuantities:
    """Apply every recipe to one kernel."""
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
                unusable = ("every usable metric is NaN, starting with the duration "
                            f"({sorted(res.nan_seen)[0]}); the profiler could not collect this kernel "
                            "(check the report's rule messages, re-profile it)")
        elif res.duration is not None:
            unusable = "the measured duration is 0; nothing can be placed on a roofline"
        else:
            unusable = ("the report holds no kernel duration (gpu__time_duration.sum); "
                        "without it no rate can be computed")
        q = KernelQuantities(None, {p: None for p in (*R.PRECISIONS, "tensor")}, {},
                             {lv: None for lv in R.LEVELS}, {r: None for r in R.ROOFS if r != "tensor"},
                             {}, None, missing, unusable)
        if res.duration is None and not res.nan_seen:
            missing.append(_missing("duration", "no duration", R.DURATION, res))
        return q

    flop: dict[str, Value | None] = {}
    for precision in R.PRECISIONS:
        flop[precision] = res.first(R.FLOP[precision])
        if flop[precision] is None:
            missing.append(_missing(f"work_flop.{precision}", f"no {precision.upper()} instruction counts",
                                    R.FLOP[precision], res))

    # Tensor work: exact per-datapath operation counts where recorded.
    tensor_paths, tensor_peaks = _tensor_paths(kernel, res)
    if tensor_paths:
        used = [v.recipe for v in tensor_paths.values() if v.value > 0]
        recipe = (" + ".join(used) if used else
                  f"sm__ops_path_tensor_src_*.sum = 0 on all {len(tensor_paths)} datapaths")
        flop["tensor"] = Value(sum(v.value for v in tensor_paths.values()), recipe)
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
            reason += f"; only the tensor pipe's busy share is known ({pipe.value:.1%})"
        missing.append(Missing("work_flop.tensor", reason, R.COLLECT_WITH["work_flop.tensor"]))

    traffic: dict[str, Value | None] = {}
    peaks: dict[str, Value | None] = {}
    no_dram = kernel.compute_capability in R.NO_DRAM_CC
    for level in R.LEVELS:
        options = _ordered(level, prefer_definition)
        measured = res.first(options)
        traffic[level] = measured
        definition = measured.definition if measured is not None else prefer_definition
        peaks[level] = _peak_for(res, R.PEAKS[level], measured, definition)
        if level == "dram" and no_dram:
            note = (f"compute capability {kernel.compute_capability} is an integrated part with no "
                    "DRAM counters: there is no DRAM roof")
            if traffic[level] is None:
                missing.append(Missing("traffic_bytes.dram", note, "not collectable on this GPU"))
            continue
        if traffic[level] is None:
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

    return KernelQuantities(res.duration, flop, tensor_paths, traffic, peaks, tensor_peaks, pipe, missing)

