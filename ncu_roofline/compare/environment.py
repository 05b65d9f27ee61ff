"""Where BASE and HEAD ran, and what differs: GPUs, clocks, Nsight Compute version, source format.

Durations compare only between captures made alike. Each difference found is one entry
(`what`, `base`, `head`, and for clocks the device, the peak and its change):

- `gpu`: the sets of GPUs differ.
- `clocks`: on a GPU both runs used, the median of a peak that the report derives from the clock
  measured during the capture (`fp32_flop_per_s`: SM clock; `dram_bytes_per_s`: memory clock)
  differs by more than `CLOCK_TOLERANCE_PCT`: the captures ran at different clocks (Nsight
  Compute locks them to base unless `--clock-control none`).
- `ncu_version`: the Nsight Compute releases that wrote the reports differ (build numbers ignored).
- `source_format`: one side is a CSV export (no NVTX ranges, no version), the other a report.

The driver version is not recorded in the documents; `not_recorded` says so.
"""

from __future__ import annotations

from typing import Any

from .groups import median
from .runs import Run, number

CLOCK_TOLERANCE_PCT = 3.0
CLOCK_PEAKS = ("fp32_flop_per_s", "dram_bytes_per_s")
NOT_RECORDED = ("driver",)


def _version(text: Any) -> str | None:
    return str(text).split(" (", 1)[0].strip() or None if text else None


def facts(run: Run) -> dict[str, Any]:
    """What a run says about where it ran: GPUs, Nsight Compute versions, formats, clock-derived peaks."""
    used = {k.report for k in run.kernels}
    info = [v for path, v in sorted(run.report_info.items()) if path in used or not used]
    peaks: dict[str, dict[str, float | None]] = {}
    for device in run.devices:
        on = [k.data for k in run.kernels if k.data.get("device") == device]
        peaks[device] = {p: median([v for v in (number((k.get("peaks") or {}).get(p)) for k in on) if v])
                         for p in CLOCK_PEAKS}
    return {
        "devices": run.devices,
        "ncu_versions": sorted({v for v in (_version(i.get("ncu_version")) for i in info) if v}),
        "source_formats": sorted({str(i["source_format"]) for i in info if i.get("source_format")}),
        "clock_peaks": peaks,
    }


def differences(base: dict[str, Any], head: dict[str, Any]) -> list[dict[str, Any]]:
    """The differences between two `facts`, in the order of the module's list."""
    out: list[dict[str, Any]] = []
    if base["devices"] and head["devices"] and base["devices"] != head["devices"]:
        out.append({"what": "gpu", "base": base["devices"], "head": head["devices"]})
    for device in sorted(set(base["clock_peaks"]) & set(head["clock_peaks"])):
        for peak in CLOCK_PEAKS:
            b, h = base["clock_peaks"][device].get(peak), head["clock_peaks"][device].get(peak)
            if b and h and abs(h - b) / b * 100.0 > CLOCK_TOLERANCE_PCT:
                out.append({"what": "clocks", "device": device, "peak": peak, "base": b, "head": h,
                            "delta_pct": (h - b) / b * 100.0})
    if base["ncu_versions"] and head["ncu_versions"] and base["ncu_versions"] != head["ncu_versions"]:
        out.append({"what": "ncu_version", "base": base["ncu_versions"], "head": head["ncu_versions"]})
    if base["source_formats"] and head["source_formats"] and base["source_formats"] != head["source_formats"]:
        out.append({"what": "source_format", "base": base["source_formats"], "head": head["source_formats"]})
    return out


def environment(base: Run, head: Run) -> dict[str, Any]:
    """Both sides' facts, their differences, and what the documents do not record."""
    fb, fh = facts(base), facts(head)
    return {"base": fb, "head": fh, "differences": differences(fb, fh), "not_recorded": list(NOT_RECORDED)}
