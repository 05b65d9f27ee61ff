"""What the report page says of every launch, from the columns its groups keep of them (`api.sums.LaunchColumns`):
the devices, each with its first launch and the median of each roof its launches measured, the byte definitions,
the counts and the time shown (`PageLaunches`); and the roofs of a device's kernels from their JSON records
(`device_roofs`, for a diff). 200,000 launches make no entry, dict or list each."""

from __future__ import annotations

import statistics
from array import array
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from ..api.sums import WORK_KEYS, LaunchEntry
from ..knowledge import recipes as R
from . import format as F
from .labels import short_label

if TYPE_CHECKING:
    from ..api.analysis import Analysis

__all__ = ["PageLaunches", "RoofValues", "device_roofs"]


def device_roofs(sides: list[dict[str, Any]], prefix: str = "") -> list[dict[str, Any]]:
    """One value per roof for kernels of one device (JSON-contract dicts): the median over them,
    since the measured clocks vary a little from kernel to kernel."""
    found = RoofValues()
    for s in sides:
        found.add(s["peaks"], s["work_flop"], s["tensor_ops_by_datapath"])
    return found.roofs(prefix)


def _positive(v: object) -> bool:
    return isinstance(v, (int, float)) and v > 0


class RoofValues:
    """The roofs the launches of one device measured, gathered launch by launch (`device_roofs`): each roof's
    values as floats in an array (200,000 launches make no dict each), the precisions they did work in."""

    def __init__(self) -> None:
        self.values: dict[str, array[float]] = {}
        self.used: set[str] = set()
        self.paths: dict[str, list[float]] = {}

    def add(self, peaks: dict[str, Any], work: dict[str, Any], ops: dict[str, Any]) -> None:
        """One launch: its `peaks` (name -> per-second value; `tensor_flop_per_s`: per datapath), its work per
        precision and its tensor operations per datapath (JSON-contract names)."""
        for key in _PEAK_KEYS:
            v = peaks.get(key)
            if _positive(v):
                self.values.setdefault(key, array("d")).append(float(v))  # type: ignore[arg-type]
        self.used.update(p for p, w in work.items() if _positive(w))
        estimated = _positive(work.get("tensor"))
        for dp, v in (peaks.get("tensor_flop_per_s") or {}).items():
            if _positive(v) and (_positive(ops.get(dp)) or (not ops and estimated)):
                self.paths.setdefault(dp, []).append(float(v))

    def add_launches(self, roofs: Any, work: tuple[float | None, ...], tensor: Iterable[tuple[Any, Any]]) -> None:
        """Launches of one kind as a group keeps them: their roofs (a (launch, `sums.ROOF_KEYS`) array, NaN for
        none), their work per precision (`sums.WORK_KEYS`), and the tensor roofs and operations of those that
        have them."""
        for key, column in zip(_PEAK_KEYS, roofs.T, strict=True):
            found = column[column > 0]
            if len(found):
                self.values.setdefault(key, array("d")).frombytes(found.tobytes())
        work_of = dict(zip(WORK_KEYS, work, strict=True))
        self.add({}, work_of, {})
        for tensor_roofs, ops in tensor:
            self.add({"tensor_flop_per_s": dict(tensor_roofs)}, work_of, dict(ops))

    def roofs(self, prefix: str = "") -> list[dict[str, Any]]:
        roofs: list[dict[str, Any]] = []
        for lv in R.LEVELS:
            values = self.values.get(f"{lv}_bytes_per_s")
            if values:
                v = statistics.median(values)
                roofs.append({"name": lv, "kind": "bandwidth", "value": v,
                              "label": f"{prefix}{short_label(lv)} {F.si(v, 'B/s')}"})
        for p in R.PRECISIONS:
            values = self.values.get(f"{p}_flop_per_s")
            if values and (p in self.used or p == "fp32" or not self.used):
                v = statistics.median(values)
                roofs.append({"name": p, "kind": "compute", "value": v,
                              "label": f"{prefix}{short_label(p)} {F.si(v, 'FLOP/s')}"})
        for dp, found in sorted(self.paths.items()):
            v = statistics.median(found)
            roofs.append({"name": f"tensor:{dp}", "kind": "compute", "value": v,
                          "label": f"{prefix}Tensor {dp} {F.si(v, 'FLOP/s')}"})
        return roofs


# The peaks of a launch, in `sums.ROOF_KEYS` order: levels in bytes, precisions in FLOP per second.
_PEAK_KEYS = (*(f"{lv}_bytes_per_s" for lv in R.LEVELS), *(f"{p}_flop_per_s" for p in R.PRECISIONS))

class PageLaunches:
    """What the page's header and charts say of every launch, gathered in one pass over the groups' launches
    (200,000 launches are never a list of entries): the devices in the order they first ran a launch, each with
    that launch and its launches' roofs, the byte definitions per level, counts, and the time of the launches
    shown, summed in launch order."""

    def __init__(self, analysis: Analysis) -> None:
        self.devices: dict[str, tuple[tuple[int, int], LaunchEntry]] = {}
        self.roofs: dict[str, RoofValues] = {}
        self.definitions: list[set[str]] = [set() for _ in R.LEVELS]
        self.count = self.unusable = 0
        first: dict[str, tuple[tuple[int, int], LaunchEntry]] = {}
        times: list[float] = []
        for report_no, r in enumerate(analysis.reports):
            index: list[int] = []
            durations: list[float] = []
            for g in analysis.groups_of(r):
                launches = g.launches
                for kind, at, numbers in launches.by_kind():
                    device = kind[5] or "unknown device"
                    held = at.tolist()
                    numbered = [launches.index[n] for n in held]  # exact past 64 bits
                    low = min(range(len(held)), key=numbered.__getitem__)
                    if device not in first or (report_no, numbered[low]) < first[device][0]:
                        first[device] = ((report_no, numbered[low]), launches[held[low]])
                    tensor = [launches.tensor[n] for n in held if n in launches.tensor]
                    self.roofs.setdefault(device, RoofValues()).add_launches(numbers[:, 2:], kind[9], tensor)
                    for found, definition in zip(self.definitions, kind[8], strict=True):
                        if definition is not None:
                            found.add(definition)
                    self.count += len(held)
                    self.unusable += 0 if kind[0] else len(held)
                    timed = ~np.isnan(numbers[:, 0])
                    index += [n for n, t in zip(numbered, timed.tolist(), strict=True) if t]
                    durations += numbers[timed, 0].tolist()
            times.extend(durations[n] for n in sorted(range(len(index)), key=index.__getitem__))
        self.devices = dict(sorted(first.items(), key=lambda item: item[1][0]))
        self.time = sum(times) if times else None
