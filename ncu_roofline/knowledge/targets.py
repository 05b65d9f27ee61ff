"""What `ncu` accepts on a given target: the options `ncu-roofline metrics` prints, per GPU and release.

`ncu` rejects a whole command when one metric or section name is unknown on the target, so the
printed command must name only what that GPU and Nsight Compute release have:

- compute capability 12.0 names DRAM read/write bytes `dram__bytes_op_read` / `dram__bytes_op_write`;
- integrated parts (8.7, 11.0, 12.1) have no DRAM counters at all;
- Pascal (6.x) is profiled by Nsight Compute 2019.x only, with other metric names: sections only;
- the roofline chart sections arrived in 2020.1; the hierarchical ones are asked for from 2023.1
  on, the earliest release seen writing them (a conservative choice: earlier ones may have them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from . import recipes as R

ROOFLINE_SECTIONS_SINCE = (2020, 1)
HIERARCHICAL_SECTIONS_SINCE = (2023, 1)
_CC_RE = re.compile(r"^(?:sm_?|cc)?(\d{1,2})\.?(\d)$", re.IGNORECASE)
_VERSION_RE = re.compile(r"^(\d{4})\.(\d+)")
_CC12_RENAMES = {"dram__bytes_read.sum": "dram__bytes_op_read.sum", "dram__bytes_write.sum": "dram__bytes_op_write.sum"}


@dataclass(frozen=True)
class Target:
    """A GPU (compute capability, e.g. "8.0") and an Nsight Compute release (e.g. "2024.1"); None = newest."""

    compute_capability: str | None = None
    ncu_version: str | None = None


@dataclass
class NcuOptions:
    sections: list[str]
    metrics: list[str]
    notes: list[str] = field(default_factory=list)

    def command_line(self) -> str:
        parts = [f"--section {s}" for s in self.sections]
        if self.metrics:
            parts.append("--metrics " + ",".join(self.metrics))
        return " ".join(parts)


def parse_compute_capability(text: str) -> str:
    """"8.0", "80", "sm_80", "sm80" -> "8.0"; ValueError for anything else."""
    match = _CC_RE.match(text.strip())
    if not match:
        raise ValueError(f"not a compute capability: {text!r} (give e.g. 8.0, 9.0, 12.0 or sm_90)")
    return f"{int(match.group(1))}.{match.group(2)}"


def parse_ncu_version(text: str) -> tuple[int, int]:
    """"2024.1.1.0 (build 1)" -> (2024, 1); ValueError for anything else."""
    match = _VERSION_RE.match(text.strip())
    if not match:
        raise ValueError(f"not an Nsight Compute version: {text!r} (give e.g. 2024.1)")
    return int(match.group(1)), int(match.group(2))


def ncu_options(target: Target) -> NcuOptions:
    """The sections and metrics to collect on `target`, and what was left out and why."""
    version = parse_ncu_version(target.ncu_version) if target.ncu_version else None
    cc = target.compute_capability
    major = int(cc.split(".")[0]) if cc else None
    notes: list[str] = []
    sections = list(R.NCU_SECTIONS)
    if version is not None and version < HIERARCHICAL_SECTIONS_SINCE:
        sections = [s for s in sections if "Hierarchical" not in s]
        notes.append(f"Nsight Compute {version[0]}.{version[1]}: the hierarchical roofline sections are left out "
                     f"(asked for from {HIERARCHICAL_SECTIONS_SINCE[0]}.{HIERARCHICAL_SECTIONS_SINCE[1]} on)")
    if version is not None and version < ROOFLINE_SECTIONS_SINCE:
        sections = [s for s in sections if "Roofline" not in s]
        notes.append("releases before 2020.1 have no roofline chart sections")
    if major is not None and major < 7:
        notes.append(f"compute capability {cc} (Pascal or older) uses other metric names, only known to "
                     "Nsight Compute 2019.x: sections only; ncu-roofline reads that era's SOL figures and bytes")
        return NcuOptions([s for s in sections if "Roofline" not in s], [], notes)
    metrics = list(R.NCU_METRICS)
    if cc == "12.0":
        metrics = [_CC12_RENAMES.get(m, m) for m in metrics]
        notes.append("compute capability 12.0: DRAM bytes are dram__bytes_op_read / dram__bytes_op_write")
    if cc in R.NO_DRAM_CC:
        metrics = [m for m in metrics if not m.startswith("dram__")]
        notes.append(f"compute capability {cc} is an integrated part with no DRAM counters: none asked for")
    return NcuOptions(sections, list(dict.fromkeys(metrics)), notes)
