"""One analysed report: its launches, their groups, and the `ncu-roofline/5` document of it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..settings import DEFAULT_THRESHOLD, GROUP_BY_LAUNCH
from .focus import FocusSummary
from .groups import FINDINGS_BY_LAUNCH, KernelGroup, group_kernels
from .jsondoc import LazyList
from .kernel import AnalysedKernel
from .nvtx import nvtx_rollup
from .records import LaunchRecords, RecipeSets, ReportTally


@dataclass
class ReportResult:
    """One analysed input file."""

    path: str
    source_format: str
    ncu_version: str | None
    kernels: list[AnalysedKernel]
    warnings: list[str] = field(default_factory=list)
    focus: FocusSummary | None = None  # set when `api.focus` left launches out
    completeness: str = ""  # what the reader could not check about the file being whole
    findings: str = FINDINGS_BY_LAUNCH  # each launch's own, or per group from its longest launch (`analyze_report`)
    group_by: str = GROUP_BY_LAUNCH  # how `analyze_report` grouped the launches to find each group's longest
    threshold: float = DEFAULT_THRESHOLD
    # A report analysed by group keeps no launch but each group's longest (`kernels`): its launches' records, its
    # groups made as they streamed by, and what it says of all of them (`api.records`).
    records: LaunchRecords | None = None
    made: list[KernelGroup] | None = None
    tally: ReportTally | None = None
    # A report analysed by launch in a reader process: its groups as `Analysis.groups_of` makes them, made there
    # (`analyse_detached`): the `group_by` and `threshold` they were made by, the `kernels` list they were made of,
    # and the groups; used only for that very list, unfocused, under those settings.
    grouped: tuple[str, float, list[AnalysedKernel], list[KernelGroup]] | None = field(default=None, compare=False,
                                                                                       repr=False)

    @property
    def launch_count(self) -> int:
        """Its launches (`kernels` holds them all, but in a report analysed by group)."""
        if self.made is not None:
            return sum(len(g.launches) for g in self.made)
        return len(self.kernels)

    @property
    def devices(self) -> list[str]:
        if self.tally is not None and self.focus is None:
            return list(self.tally.devices)
        if self.made is not None:
            return sorted({e.device for g in self.made for e in g.launches if e.device})
        return sorted({k.raw.device for k in self.kernels if k.raw.device})

    @property
    def total_duration_s(self) -> float | None:
        if self.tally is not None and self.focus is None:
            return self.tally.total
        if self.made is not None:
            timed = sorted((e.index, e.duration_s) for g in self.made for e in g.launches if e.duration_s is not None)
            return sum(d for _, d in timed) if timed else None
        values = [k.q.duration_s.value for k in self.kernels if k.q.duration_s is not None]
        return sum(values) if values else None

    def units(self) -> dict[str, dict[str, Any]]:
        """Every unit throughput any launch holds: id -> label, group, parent and the recipe of the
        first launch that has it (the `units` catalogue of the JSON document)."""
        if self.tally is not None:
            return dict(self.tally.units)
        found: dict[str, dict[str, Any]] = {}
        for k in self.kernels:
            for uid, unit in k.units.items():
                if uid not in found:
                    found[uid] = unit.describe()
        return found

    @property
    def share_total_s(self) -> float | None:
        """The GPU time shares are taken of: every launch of the file, also those a focus left out."""
        return self.focus.total_duration_s if self.focus is not None else self.total_duration_s

    def _unusable(self, groups: list[KernelGroup]) -> int:
        if self.tally is not None and self.focus is None:
            return self.tally.unusable
        if self.made is not None:
            return sum(1 for g in groups for e in g.launches if not e.usable)
        return sum(1 for k in self.kernels if not k.usable)

    def to_dict(self, redact: bool = False, groups: list[KernelGroup] | None = None,
                lazy: bool = False) -> dict[str, Any]:
        """The report as the `ncu-roofline/5` document writes it (`groups`: as `Analysis.groups_of`).

        `lazy`: `kernels` is a `jsondoc.LazyList` that makes each launch's dict as it is encoded.
        """
        if groups is None:
            groups = self.made if self.made is not None else group_kernels(
                self.kernels, self.group_by, self.threshold, self.share_total_s, self.findings)
        names = {g.key: g.display_name for g in groups}
        total = self.share_total_s
        total_s = self.total_duration_s  # once: it sums every launch
        units = self.units()
        recipes = {uid: u["recipe"] for uid, u in units.items()}

        by_launch = self.findings == FINDINGS_BY_LAUNCH
        records = self.records
        sets = RecipeSets() if records is None else records.sets
        kept = {e.index for g in groups for e in g.launches} if records is not None and self.focus else None

        def launches() -> Iterator[Any]:
            if records is not None:
                yield from records.written(redact, kept, lazy)
                return
            key_of = {e.index: g.key for g in groups for e in g.launches}
            for k in self.kernels:
                d = k.to_dict(redact, recipes, findings=by_launch)
                d["group_key"] = key_of.get(k.raw.index)
                d["recipe_set"] = sets.index(d.pop("provenance"), d.pop("missing"))
                yield _with_program_gain(d, total_s) if by_launch else d

        return {
            "path": os.path.basename(self.path) if redact else self.path,
            "source_format": self.source_format,
            "ncu_version": self.ncu_version,
            "devices": self.devices,
            "kernel_count": self.launch_count,
            "unusable_kernel_count": self._unusable(groups),
            "total_duration_s": total_s,
            "warnings": list(self.warnings),
            "completeness": self.completeness or None,
            "kernels": LazyList(launches) if lazy else list(launches()),
            "group_count": len(groups),
            "groups": [g.to_dict(redact) for g in groups],
            "nvtx_rollup": [] if redact else [n.to_dict(total, names) for n in nvtx_rollup(groups)],
            "focus": self.focus.to_dict() if self.focus is not None else None,
            "units": units,
            "findings": self.findings,
            "recipe_sets": sets.listed,  # after `kernels` in the document: a lazy `kernels` fills it as encoded
        }


def with_recipe_set(report: dict[str, Any], launch: dict[str, Any]) -> dict[str, Any]:
    """A launch record of a report document with its `provenance` and `missing` in place (`ncu-roofline/5` lists
    them once per report, in `recipe_sets`; earlier documents hold them in each launch)."""
    if "missing" in launch:
        return launch
    held = report["recipe_sets"][launch["recipe_set"]]
    return {**launch, "provenance": held["provenance"], "missing": held["missing"]}


def _with_program_gain(d: dict[str, Any], total_s: float | None) -> dict[str, Any]:
    """Each finding's worth to the whole program: time share × (1 − 1 / speed-up)."""
    share = d["duration_s"] / total_s if d["duration_s"] and total_s else None
    for f in d.get("diagnosis", []):
        speedup = f.get("speedup")
        f["program_gain"] = (share * (1 - 1 / speedup) if share is not None and speedup and speedup > 1
                             else None)
    return d
