"""The roofline model of one kernel: intensities, roofs, utilisation, bound_by and regime.

Time lower bound per roof r: t_r = work_r / peak_r (bytes_r / bandwidth_r at a memory level).
Utilisation of r = t_r / measured duration. The roof with the highest utilisation bounds the
kernel; below `threshold` the kernel is latency-limited rather than roof-limited.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ..knowledge import recipes as R
from ..passes.ceilings import analyse_ceilings
from ..passes.instruction_roofline import instruction_roofline
from ..knowledge.peaks_file import UserPeaks
from .quantities import KernelQuantities, Missing, Value, compute_quantities
from ..readers.record import RawKernel

DEFAULT_THRESHOLD = 0.6
# A point above its roof means a wrong unit, precision, FLOP convention or sparsity assumption;
# it is flagged, never hidden. The tolerance absorbs rounding in the stored rates.
ABOVE_ROOF_TOLERANCE = 1.005


@dataclass
class KernelModel:
    """Everything reported for one kernel."""

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
    regime: str | None
    flags: list[str] = field(default_factory=list)
    provenance: dict[str, str] = field(default_factory=dict)
    missing: list[Missing] = field(default_factory=list)
    ceilings: list[Any] = field(default_factory=list)  # ceilings.Ceiling
    diagnosis: list[Any] = field(default_factory=list)  # ceilings.Finding
    reuse: dict[str, float] = field(default_factory=dict)
    instruction_roofline: dict[str, Any] | None = None
    total_flop: float | None = None  # all FLOP, when known (see build_kernel_model)

    @property
    def usable(self) -> bool:
        return self.q.unusable_reason is None

    def to_dict(self, redact: bool = False) -> dict[str, Any]:
        """The kernel as the `ncu-roofline/1` JSON contract writes it."""
        k = self.raw
        d: dict[str, Any] = {
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
            "usable": self.usable,
            "unusable_reason": self.q.unusable_reason,
            "duration_s": _v(self.q.duration_s),
            "work_flop": {p: _v(self.q.flop.get(p)) for p in (*R.PRECISIONS, "tensor")},
            "tensor_ops_by_datapath": {dp: v.value for dp, v in self.q.tensor_paths.items()},
            "tensor_pipe_utilization": _v(self.q.tensor_pipe_utilization),
            "traffic_bytes": {lv: _v(self.q.bytes.get(lv)) for lv in R.LEVELS},
            "byte_definitions": {lv: _definition(self.q.bytes.get(lv)) for lv in R.LEVELS},
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
            "utilization": dict(self.utilization),
            "bound_by": self.bound_by,
            "regime": self.regime,
            "provenance": dict(self.provenance),
            "missing": [{"quantity": m.quantity, "reason": m.reason, "collect_with": m.collect_with}
                        for m in self.missing],
            "flags": list(self.flags),
            "ceilings": [c.to_dict() for c in self.ceilings],
            "diagnosis": [f.to_dict() for f in self.diagnosis],
            "reuse": dict(self.reuse),
            "instruction_roofline": self.instruction_roofline,
        }
        if redact:
            d["nvtx_ranges"] = []
        return d

    def compute_roof(self) -> float | None:
        """The compute roof of the kernel's dominant precision (FLOP/s)."""
        p = self.dominant_precision
        if p is None:
            return None
        if p == "tensor":
            return _tensor_roof(self)
        peak = self.peaks.get(p)
        return peak.value if peak else None

    def ridge_points(self) -> dict[str, float | None]:
        roof = self.compute_roof()
        out: dict[str, float | None] = {}
        for lv in R.LEVELS:
            bw = self.peaks.get(lv)
            out[lv] = roof / bw.value if roof is not None and bw is not None and bw.value > 0 else None
        return out


def _v(value: Value | None) -> float | None:
    return None if value is None else value.value


def _definition(value: Value | None) -> str | None:
    if value is None:
        return None
    return value.definition or "counts"


def _tensor_roof(m: KernelModel) -> float | None:
    """One tensor roof: the fastest of the datapaths the kernel used (of all, when none is known)."""
    if not m.tensor_peaks:
        return None
    if m.q.tensor_paths:
        used = [dp for dp, v in m.q.tensor_paths.items() if v.value > 0 and dp in m.tensor_peaks]
        if used:
            return max(m.tensor_peaks[dp].value for dp in used)
    return max(v.value for v in m.tensor_peaks.values())


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


def build_kernel_model(raw: RawKernel, *, threshold: float = DEFAULT_THRESHOLD,
                       user_peaks: UserPeaks | None = None,
                       prefer_definition: str = R.CHART) -> KernelModel:
    """Quantities -> roofline model for one kernel."""
    q = compute_quantities(raw, prefer_definition)
    peaks, tensor_peaks, flags = _apply_user_peaks(q, raw, user_peaks)
    missing = [m for m in q.missing if not _covered_by_user(m, peaks, tensor_peaks)]
    model = KernelModel(raw, q, peaks, tensor_peaks, {}, {lv: None for lv in R.LEVELS}, None,
                        {lv: None for lv in R.LEVELS}, None, None, None, flags, {}, missing)
    if not model.usable:
        model.flags.append("unusable")
        return model

    duration = q.duration_s.value  # type: ignore[union-attr]
    prov = model.provenance
    prov["duration_s"] = q.duration_s.recipe  # type: ignore[union-attr]
    for p, v in q.flop.items():
        if v is not None:
            prov[f"work_flop.{p}"] = v.recipe
    for lv, v in q.bytes.items():
        if v is not None:
            prov[f"traffic_bytes.{lv}"] = v.recipe + (f"  [{v.note}]" if v.note else "")
    for roof, v in peaks.items():
        if v is not None:
            prov[f"peaks.{roof}"] = v.recipe
    for dp, v in tensor_peaks.items():
        prov[f"peaks.tensor.{dp}"] = v.recipe
    if q.tensor_pipe_utilization is not None:
        prov["tensor_pipe_utilization"] = q.tensor_pipe_utilization.recipe

    # Utilisation of every roof for which both the work and the roof are known.
    util = model.utilization
    for lv in R.LEVELS:
        b, bw = q.bytes.get(lv), peaks.get(lv)
        if b is not None and bw is not None and bw.value > 0:
            util[lv] = b.value / bw.value / duration
    for lv, share in q.level_throughput_share.items():
        if lv not in util:
            util[lv] = share.value
            prov[f"utilization.{lv}"] = share.recipe
            flags.append(f"utilization_from_throughput:{lv}")
    for p in R.PRECISIONS:
        w, pk = q.flop.get(p), peaks.get(p)
        if w is not None and pk is not None and pk.value > 0:
            util[p] = w.value / pk.value / duration
    tensor_flop = q.flop.get("tensor")
    if q.tensor_paths and tensor_peaks:
        t = sum(v.value / tensor_peaks[dp].value for dp, v in q.tensor_paths.items()
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

    # Dominant precision: the one with the most FLOP; intensity uses all FLOP together.
    known = {p: v.value for p, v in q.flop.items() if v is not None}
    # Without any CUDA-core count the total is unknown, even when the tensor pipe was idle:
    # a memory-only kernel and a report that lacks the counts must not look the same.
    total = sum(known.values()) if any(p in known for p in R.PRECISIONS) else None
    if "tensor_pipe_utilization_only" in flags:
        # The tensor pipe did work that no counter turns into FLOP: a total would undercount.
        total = None
        flags.append("flop_incomplete")
    model.total_flop = total
    if total:
        model.dominant_precision = max(known, key=lambda p: known[p])
    if total is not None:
        model.achieved_flop_per_s = total / duration
        for lv in R.LEVELS:
            b = q.bytes.get(lv)
            if b is not None and b.value > 0:
                model.intensity[lv] = total / b.value
    elif "flop_incomplete" not in flags:
        flags.append("no_flop_counts")
    compute_roof = model.compute_roof()
    for lv in R.LEVELS:
        i, bw = model.intensity[lv], peaks.get(lv)
        if i is not None and bw is not None and compute_roof is not None:
            model.attainable_flop_per_s[lv] = min(compute_roof, i * bw.value)

    for r, u in util.items():
        if u > ABOVE_ROOF_TOLERANCE:
            flags.append(f"above_roof:{r}")
    finite = {r: u for r, u in util.items() if math.isfinite(u)}
    lacking = [r for r in R.ROOFS if r not in finite and r != "tensor"
               and not (r == "dram" and raw.compute_capability in R.NO_DRAM_CC)]
    if finite and lacking:
        flags.append("partial_roofs:" + ",".join(lacking))
    if not finite:
        flags.append("no_roofs")
    elif max(finite.values()) > 0:  # every roof at 0 bounds nothing
        model.bound_by = max(finite, key=lambda r: (finite[r], -R.ROOFS.index(r)))
        # A hair of tolerance: 0.6 computed as 0.59999999 is still "at least" 0.6.
        model.regime = "roof" if finite[model.bound_by] >= threshold * (1 - 1e-9) else "latency"
    found = analyse_ceilings(model)
    model.ceilings, model.diagnosis, model.reuse = found.ceilings, found.diagnosis, found.reuse
    model.missing.extend(found.missing)
    model.instruction_roofline = instruction_roofline(model)
    return model


def _covered_by_user(m: Missing, peaks: dict[str, Value | None], tensor: dict[str, Value]) -> bool:
    if not m.quantity.startswith("peaks."):
        return False
    roof = m.quantity.split(".", 1)[1]
    if roof == "tensor":
        return bool(tensor)
    return peaks.get(roof) is not None
