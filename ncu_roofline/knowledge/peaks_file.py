"""User-supplied roofs: a JSON file of measured (empirical) ceilings that override or add roofs.

Format (schema `ncu-roofline-peaks/1`), every key optional, SI units (bytes/s, FLOP/s):

    {
      "schema": "ncu-roofline-peaks/1",
      "note": "measured with nvbandwidth and a CUTLASS sweep, 2026-11-01",
      "peaks": {"dram_bytes_per_s": 3.0e12, "fp32_flop_per_s": 5.0e13},
      "devices": {
        "NVIDIA H100 PCIe": {
          "dram_bytes_per_s": 1.9e12,
          "tensor_flop_per_s": {"src_bf16_dst_fp32": 7.5e14}
        }
      }
    }

`peaks` applies to every kernel; `devices` (matched on the device name in the report) wins
over it. A roof given here replaces the report's own for that roof.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import PeaksFileError
from .jsonio import PEAKS_MAX_BYTES, read_json, validate
from .schemas import PEAKS, PEAKS_SCHEMA

SCHEMA = PEAKS_SCHEMA
KEYS = {
    "dram_bytes_per_s": "dram", "l2_bytes_per_s": "l2", "l1_bytes_per_s": "l1",
    "fp64_flop_per_s": "fp64", "fp32_flop_per_s": "fp32", "fp16_flop_per_s": "fp16",
}
TENSOR_KEY = "tensor_flop_per_s"


@dataclass
class PeakSet:
    """Roofs from the file for one device: roof -> value, datapath -> tensor roof."""

    roofs: dict[str, float] = field(default_factory=dict)
    tensor: dict[str, float] = field(default_factory=dict)


@dataclass
class UserPeaks:
    """A parsed peaks file."""

    path: str
    default: PeakSet
    devices: dict[str, PeakSet]
    note: str = ""

    def for_device(self, device: str | None) -> PeakSet:
        """The default roofs with the device's own on top."""
        merged = PeakSet(dict(self.default.roofs), dict(self.default.tensor))
        specific = self.devices.get(device or "")
        if specific is not None:
            merged.roofs.update(specific.roofs)
            merged.tensor.update(specific.tensor)
        return merged


def _peak_set(obj: dict[str, Any]) -> PeakSet:
    """A validated `peaks` or `devices[...]` object as a PeakSet."""
    out = PeakSet()
    for key, value in obj.items():
        if key in KEYS:
            out.roofs[KEYS[key]] = float(value)
        elif isinstance(value, dict):  # TENSOR_KEY, by datapath
            out.tensor.update({str(dp): float(v) for dp, v in value.items()})
        else:
            out.tensor["user"] = float(value)
    return out


def load_peaks(path: str | Path) -> UserPeaks:
    """Read and validate a peaks file (a regular file of at most 1 MiB; schema `schemas.PEAKS`)."""
    p = str(path)
    data = read_json(path, max_bytes=PEAKS_MAX_BYTES, what="peaks file", error=PeaksFileError)
    if not isinstance(data, dict):
        raise PeaksFileError(p, "the peaks file must hold a JSON object")
    schema = data.get("schema", SCHEMA)
    if schema != SCHEMA:
        raise PeaksFileError(p, f"unsupported schema {schema!r}", f"expected {SCHEMA!r}")
    validate(data, PEAKS, p, "peaks file", PeaksFileError,
             unknown_key_hint=f"known keys: schema, note, peaks, devices; in peaks and devices: "
                              f"{', '.join([*KEYS, TENSOR_KEY])}")
    devices = {str(k): _peak_set(v) for k, v in data.get("devices", {}).items()}
    return UserPeaks(p, _peak_set(data.get("peaks", {})), devices, str(data.get("note", "")))
