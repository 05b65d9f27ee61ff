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

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import PeaksFileError

SCHEMA = "ncu-roofline-peaks/1"
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


def _positive(path: str, where: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise PeaksFileError(path, f"{where} must be a positive number, got {value!r}")
    return float(value)


def _peak_set(path: str, where: str, obj: object) -> PeakSet:
    if not isinstance(obj, dict):
        raise PeaksFileError(path, f"{where} must be an object")
    out = PeakSet()
    for key, value in obj.items():
        if key in KEYS:
            out.roofs[KEYS[key]] = _positive(path, f"{where}.{key}", value)
        elif key == TENSOR_KEY:
            if isinstance(value, dict):
                for dp, v in value.items():
                    out.tensor[str(dp)] = _positive(path, f"{where}.{key}.{dp}", v)
            else:
                out.tensor["user"] = _positive(path, f"{where}.{key}", value)
        else:
            known = ", ".join([*KEYS, TENSOR_KEY])
            raise PeaksFileError(path, f"unknown key {where}.{key}", f"known keys: {known}")
    return out


def load_peaks(path: str | Path) -> UserPeaks:
    """Read and validate a peaks file."""
    p = str(path)
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise PeaksFileError(p, "no such peaks file") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise PeaksFileError(p, f"cannot read the peaks file ({exc})") from exc
    except json.JSONDecodeError as exc:
        raise PeaksFileError(p, f"not valid JSON (line {exc.lineno}: {exc.msg})") from exc
    if not isinstance(data, dict):
        raise PeaksFileError(p, "the peaks file must hold a JSON object")
    schema = data.get("schema", SCHEMA)
    if schema != SCHEMA:
        raise PeaksFileError(p, f"unsupported schema {schema!r}", f"expected {SCHEMA!r}")
    unknown = set(data) - {"schema", "note", "peaks", "devices"}
    if unknown:
        raise PeaksFileError(p, f"unknown top-level key(s): {', '.join(sorted(unknown))}",
                             "use 'peaks' and/or 'devices'")
    default = _peak_set(p, "peaks", data.get("peaks", {}))
    devices_obj = data.get("devices", {})
    if not isinstance(devices_obj, dict):
        raise PeaksFileError(p, "'devices' must be an object keyed by device name")
    devices = {str(k): _peak_set(p, f"devices[{k!r}]", v) for k, v in devices_obj.items()}
    return UserPeaks(p, default, devices, str(data.get("note", "")))
