"""How roofs are named and coloured on every page: written once, used by every view.

`short_label` is the name in tables and legends ("DRAM", "FP32", "Tensor"); `long_label` is the
name in sentences ("DRAM bandwidth", "FP32 compute"); `roof_css` is the badge class whose colour
the palette of `render/charts` defines (`b-dram`, ..., `b-other` for a name this module does not
know, `b-none` for no roof).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..api.sums import LaunchEntry
from ..knowledge import recipes as R
from ..knowledge import throughputs as T
from ..knowledge.catalog import page_words
from ..passes.levers import limits_measured

if TYPE_CHECKING:
    from ..model.roofline import KernelModel

ROOF_ORDER = ("dram", "l2", "l1", "fp64", "fp32", "fp16", "tensor")
SHORT_LABELS = R.ROOF_LABELS
LONG_LABELS = {
    "dram": "DRAM bandwidth", "l2": "L2 bandwidth", "l1": "L1 bandwidth",
    "fp64": "FP64 compute", "fp32": "FP32 compute", "fp16": "FP16 compute", "tensor": "tensor cores",
}
NO_ROOF = "none"
# What the words and labels name where every limit is under `T.TOO_LITTLE_WORK_SHARE`: no limiter (`named_limit`).
NOTHING_BUSY = "nothing_busy"


def _unit_label(name: str) -> str | None:
    unit = T.BY_ID.get(name)
    if unit is not None:
        return unit.label
    return name if "__" in name else None  # a sub-unit the tool has no label for: its metric name


def named_limit(k: KernelModel | LaunchEntry) -> str | None:
    """The limit a kernel's labels name: its `bound_by`, or `NOTHING_BUSY` in the too-little-work regime where
    the busiest limit is under `T.TOO_LITTLE_WORK_SHARE` (or at 0 %, no `bound_by`). The JSON keeps `bound_by`
    (the busiest measured limit, whatever its share: comparisons and groups read it); no label names a limit
    at a share that busy."""
    if k.regime == T.TOO_LITTLE_WORK and (k.limiter_share is None or k.limiter_share < T.TOO_LITTLE_WORK_SHARE):
        return NOTHING_BUSY
    return k.bound_by


def short_label(roof: str | None) -> str:
    """"DRAM", "FP32", "Tensor", a unit's label; "none" for no limit; "nothing busy"; an unknown name upper-cased."""
    if not roof or roof == NO_ROOF:
        return NO_ROOF
    if roof == NOTHING_BUSY:
        return "nothing busy"
    return SHORT_LABELS.get(roof) or _unit_label(roof) or roof.upper()


def long_label(roof: str | None, default: str = "n/a") -> str:
    """"DRAM bandwidth", "FP32 compute", a unit's label; `default` for none; an unknown name as it is."""
    if not roof or roof == NO_ROOF:
        return default
    if roof == NOTHING_BUSY:
        return page_words("nothing_busy", {"threshold": T.TOO_LITTLE_WORK_SHARE})
    return LONG_LABELS.get(roof) or _unit_label(roof) or roof


def family(limit: str | None) -> str | None:
    """The roof whose colour a limit takes: a roof itself, or the roof a unit's work shows under."""
    if not limit or limit in (NO_ROOF, NOTHING_BUSY):
        return None
    if limit in ROOF_ORDER:
        return limit
    return T.related_roof(limit) or "other"


def roof_css(roof: str | None) -> str:
    """The badge class of a limit: `b-<roof>` (a unit takes its roof's), `b-other`, `b-none` for none."""
    fam = family(roof)
    if fam is None:
        return "b-none"
    return f"b-{fam}" if fam in ROOF_ORDER else "b-other"


def is_unit(limit: str | None) -> bool:
    """A unit throughput rather than a roof of the FLOP/byte chart."""
    return bool(limit) and limit not in ROOF_ORDER and limit not in (NO_ROOF, NOTHING_BUSY)


REGIME_LABELS: dict[str, str] = {T.AT_LIMIT: "at limit", T.LATENCY: "latency", T.TOO_LITTLE_WORK: "too little work"}


UNMEASURED_LATENCY = "latency or an unmeasured limit"


def regime_text(k: KernelModel | LaunchEntry) -> str:
    """A kernel's (or launch's) regime in words; latency in a capture that measured few limits is "latency or an
    unmeasured limit" (`passes.levers.limits_measured`: its verdict says why)."""
    measured = k.limits_measured if isinstance(k, LaunchEntry) else limits_measured(k)
    if k.regime == T.LATENCY and not measured:
        return UNMEASURED_LATENCY
    return regime_label(k.regime)


def regime_label(regime: str | None) -> str:
    """"at limit", "latency", "too little work"; "n/a" when there is no verdict."""
    return REGIME_LABELS.get(regime or "", regime or "n/a")
