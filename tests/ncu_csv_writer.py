"""Test helper: write a RawReport the way `ncu --csv --page raw` would, for CSV/report parity tests.

Not part of the package. What it imitates:
- `==PROF==` lines first (and the report's warnings as `==WARNING==` lines), then the header
  (`"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size",
  "Grid Size","Device","CC"` and the sorted union of metric names), the units row, one row per
  kernel; every field quoted, `\\n` line ends.
- `Device` holds the CUDA device ordinal (`"0"`), as ncu writes it; the GPU's name travels in the
  `device__attribute_display_name` metric.
- A metric a kernel lacks, or whose value is None or an empty string, is written `n/a`; NaN is
  written `nan` and infinities `inf` / `-inf`.
- With `autoscale`, time, byte, byte-per-second and hertz columns are rescaled like ncu does.
  One units row serves every kernel, so the prefix is chosen per column: the largest one that
  keeps the column's largest magnitude at or above 1 (that value lands in [1, 1000)).
- With `thousands`, numbers of magnitude >= 1000 get `,` separators; whole numbers are written
  without a fraction (`"1,024"`); otherwise `repr(float)` keeps every significant digit.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable
from pathlib import Path

from ncu_roofline.knowledge.units import si_factor
from ncu_roofline.readers.record import Metric, RawKernel, RawReport

IDENTITY_COLUMNS = (
    "ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream",
    "Block Size", "Grid Size", "Device", "CC",
)

# SI word of a unit family -> ncu's auto-scaled units, smallest first, with their SI factor.
SCALES: dict[str, list[tuple[str, float]]] = {
    "s": [("nsecond", 1e-9), ("usecond", 1e-6), ("msecond", 1e-3), ("second", 1.0)],
    "byte": [("byte", 1.0), ("Kbyte", 1e3), ("Mbyte", 1e6), ("Gbyte", 1e9), ("Tbyte", 1e12)],
    "byte/s": [
        ("byte/second", 1.0), ("Kbyte/second", 1e3), ("Mbyte/second", 1e6),
        ("Gbyte/second", 1e9), ("Tbyte/second", 1e12),
    ],
    "hz": [("hz", 1.0), ("Khz", 1e3), ("Mhz", 1e6), ("Ghz", 1e9)],
}


def _column_unit(name: str, kernels: list[RawKernel]) -> str:
    units = {k.metrics[name].unit for k in kernels if name in k.metrics}
    if len(units) > 1:
        raise ValueError(f"metric {name} has different units across kernels: {sorted(units)}")
    return units.pop() if units else ""


def _numbers(name: str, kernels: Iterable[RawKernel]) -> list[float]:
    out: list[float] = []
    for k in kernels:
        m = k.metrics.get(name)
        if m is not None and m.is_number and math.isfinite(float(m.value)):
            out.append(float(m.value))
    return out


def _scale(unit: str, values: list[float]) -> tuple[str, float]:
    """(unit to write, multiplier from the stored value) for one column."""
    factor, si_word = si_factor(unit)
    scales = SCALES.get(si_word)
    if scales is None:
        return unit, 1.0
    largest = max((abs(v) * factor for v in values), default=0.0)
    chosen_unit, chosen_factor = scales[0]
    for scale_unit, scale_factor in scales:
        if largest >= scale_factor:
            chosen_unit, chosen_factor = scale_unit, scale_factor
    if chosen_factor == factor:
        return chosen_unit, 1.0
    return chosen_unit, factor / chosen_factor


def format_number(value: float, *, thousands: bool = True) -> str:
    """A float as ncu writes it (`nan`, `1,024`, `1,234.5678`), exact to repr precision."""
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    text = str(int(value)) if value.is_integer() and abs(value) < 1e+16 else repr(value)
    if not thousands or "e" in text or "E" in text:
        return text
    sign = "-" if text.startswith("-") else ""
    whole, dot, frac = text.lstrip("-").partition(".")
    return f"{sign}{int(whole):,}{dot}{frac}"


def _cell(metric: Metric | None, multiplier: float, thousands: bool) -> str:
    if metric is None:
        return "n/a"
    if metric.is_number:
        return format_number(float(metric.value) * multiplier, thousands=thousands)
    if metric.value is None or metric.value == "":
        return "n/a"
    return str(metric.value)


def _triple(triple: tuple[int, int, int] | None) -> str:
    return "" if triple is None else f"({triple[0]}, {triple[1]}, {triple[2]})"


def write_ncu_csv(
    report: RawReport,
    path: str | Path,
    *,
    autoscale: bool = True,
    thousands: bool = True,
    prof_lines: bool = True,
) -> Path:
    """Write `report` as `ncu --csv --page raw` output at `path`; returns the path."""
    path = Path(path)
    kernels = report.kernels
    names = sorted({name for k in kernels for name in k.metrics})
    units: list[str] = []
    multipliers: list[float] = []
    for name in names:
        unit = _column_unit(name, kernels)
        if autoscale:
            unit, multiplier = _scale(unit, _numbers(name, kernels))
        else:
            multiplier = 1.0
        units.append(unit)
        multipliers.append(multiplier)

    with path.open("w", encoding="utf-8", newline="") as fh:
        if prof_lines:
            fh.write("==PROF== Connected to process 1234 (/usr/bin/app)\n")
            for k in kernels:
                fh.write(f'==PROF== Profiling "{k.name}" - {k.index}: 0%....50%....100% - 9 passes\n')
            fh.write("==PROF== Disconnected from process 1234\n")
        for warning in report.warnings:
            fh.write(f"==WARNING== {warning}\n")
        writer = csv.writer(fh, quoting=csv.QUOTE_ALL, lineterminator="\n")
        writer.writerow([*IDENTITY_COLUMNS, *names])
        writer.writerow([""] * len(IDENTITY_COLUMNS) + units)
        for k in kernels:
            identity = [
                str(k.index), "1234", k.process_name or "", k.host_name or "", k.name, "1",
                "" if k.stream_id is None else str(k.stream_id), _triple(k.block_size),
                _triple(k.grid_size), "0", k.compute_capability or "",
            ]
            values = [
                _cell(k.metrics.get(name), multiplier, thousands)
                for name, multiplier in zip(names, multipliers, strict=False)
            ]
            writer.writerow(identity + values)
    return path
