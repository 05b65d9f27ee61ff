"""Groups of launches: what `diff` compares. Repeated launches of one kernel in one run are one group.

A group is every launch of a run with the same match key (`compare.matching.match_key`: name,
grid, block, NVTX ranges), within one report when a run holds reports of several programs. It is
built here from the per-launch `kernels` of the documents, so documents without launch groups of
their own compare too. A group has:

- its launches' durations: the median (what is compared), the total (GPU time), the spread
  (median absolute deviation, MAD) and the count;
- a representative launch, the one whose duration is the median (the lower of the two middle
  ones for an even count): its limiter, utilisation, intensity and findings stand for the group;
- the median of each work counter over its launches (`COUNTERS`): DRAM, L2 and L1 bytes, FLOP
  (all precisions, and each), warp instructions executed. A launch record without FLOP or bytes takes its
  document group's (`groups`: summed over its usable launches) per launch;
- its findings: the representative launch's, or its document group's where the launch has none (a report
  analysed by group).
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .matching import match_key
from .runs import Run, RunKernel, duration_of, number


def median(values: Sequence[float]) -> float | None:
    """The median; None for no value."""
    return statistics.median(values) if values else None


def mad(values: Sequence[float]) -> float | None:
    """The median absolute deviation from the median (unscaled); None for no value."""
    centre = median(values)
    return None if centre is None else median([abs(v - centre) for v in values])


def _traffic(level: str) -> Callable[[dict[str, Any]], float | None]:
    return lambda k: number((k.get("traffic_bytes") or {}).get(level))


def _work(precision: str) -> Callable[[dict[str, Any]], float | None]:
    return lambda k: number((k.get("work_flop") or {}).get(precision))


def _all_flop(k: dict[str, Any]) -> float | None:
    known = [v for v in (number(x) for x in (k.get("work_flop") or {}).values()) if v is not None]
    return sum(known) if known else None


def _inst_executed(k: dict[str, Any]) -> float | None:
    roofline = k.get("instruction_roofline")
    return number(roofline.get("warp_inst")) if isinstance(roofline, dict) else None


WORK_KEYS = ("work_flop", "traffic_bytes")  # what a launch and its document group record both hold

# Counters that do not jitter between captures of the same inputs, by the name `--fail-on-metric` uses.
COUNTERS: dict[str, Callable[[dict[str, Any]], float | None]] = {
    "dram_bytes": _traffic("dram"),
    "l2_bytes": _traffic("l2"),
    "l1_bytes": _traffic("l1"),
    "flop": _all_flop,
    "fp64_flop": _work("fp64"),
    "fp32_flop": _work("fp32"),
    "fp16_flop": _work("fp16"),
    "tensor_flop": _work("tensor"),
    "inst_executed": _inst_executed,
}


@dataclass
class Group:
    """The launches of one kernel with one launch configuration in one run."""

    key: tuple[Any, ...]
    report_group: str
    positions: list[int]           # in the run's kernel list, in launch order
    launches: list[RunKernel]

    @property
    def durations(self) -> list[float]:
        return [d for d in (duration_of(k.data) for k in self.launches) if d is not None]

    @property
    def representative_index(self) -> int:
        """Which launch stands for the group: the one with the median duration (else the first)."""
        timed = sorted((d, n) for n, d in enumerate(duration_of(k.data) for k in self.launches) if d is not None)
        return timed[(len(timed) - 1) // 2][1] if timed else 0

    @property
    def representative(self) -> RunKernel:
        return self.launches[self.representative_index]

    @property
    def data(self) -> dict[str, Any]:
        """The representative launch's dict (what matching and the limiter columns read)."""
        return self.representative.data

    @property
    def findings_data(self) -> dict[str, Any]:
        """Where the group's findings are: the representative launch, else its document group record."""
        data, record = self.data, self.representative.group
        return record if "diagnosis" not in data and record is not None and "diagnosis" in record else data

    def counters(self) -> dict[str, float | None]:
        """The median of each counter over the launches that have it."""
        out: dict[str, float | None] = {}
        launches = [_with_group_work(k) for k in self.launches]
        for name, read in COUNTERS.items():
            values = [v for v in (read(k) for k in launches) if v is not None]
            out[name] = median(values)
        return out

    def timing(self) -> dict[str, Any]:
        """Launch count and duration statistics, in seconds."""
        d = self.durations
        centre, spread = median(d), mad(d)
        return {"launches": len(self.launches), "timed_launches": len(d), "median_s": centre,
                "total_s": sum(d) if d else None, "min_s": min(d) if d else None, "max_s": max(d) if d else None,
                "mad_s": spread,
                "spread_pct": spread / centre * 100.0 if spread is not None and centre else None}


def _with_group_work(rk: RunKernel) -> dict[str, Any]:
    """A launch's dict, with its group record's FLOP and bytes per launch where the launch has none."""
    record, data = rk.group, rk.data
    usable = number(record.get("usable_launches")) if record is not None else None
    if record is None or not usable or all(key in data for key in WORK_KEYS):
        return data
    per_launch = {key: {name: (None if (v := number(x)) is None else v / usable) for name, x in record[key].items()}
                  for key in WORK_KEYS if key not in data and isinstance(record.get(key), dict)}
    return {**data, **per_launch}


def report_group(report: str, by_report: bool) -> str:
    """The report a launch is grouped and matched within: its file base name, or "" for one program."""
    return os.path.basename(report.replace("\\", "/").rstrip("/")) if by_report else ""


def group_launches(run: Run, by_report: bool) -> list[Group]:
    """The groups of a run, in order of their first launch."""
    groups: dict[tuple[str, tuple[Any, ...]], Group] = {}
    for position, rk in enumerate(run.kernels):
        where = report_group(rk.report, by_report)
        key = match_key(rk.data)
        group = groups.get((where, key))
        if group is None:
            group = groups[(where, key)] = Group(key, where, [], [])
        group.positions.append(position)
        group.launches.append(rk)
    return list(groups.values())


def reports_by_name(*runs: Run) -> bool:
    """Whether launches are grouped per report: when a run holds reports of several programs."""
    return any(len(r.reports) > 1 for r in runs)
