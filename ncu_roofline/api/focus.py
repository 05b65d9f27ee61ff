"""Focus: keep the launches and groups worth reading, and say how much GPU time was left out.

`Focus(kernel=REGEX, nvtx=RANGE, top=N, min_share=FRACTION)` is applied to each report in this
order: launches whose name (full or short) does not match `kernel` (a case-insensitive regular
expression, searched) go; then launches that ran in no NVTX range matching `nvtx` (a range path
or one of its prefixes, or a single range name; shell wildcards `*`, `?` allowed); the rest is
grouped; groups under `min_share` of the report's whole GPU time go; then all but the `top`
groups with the most time. Every step records what it dropped (`FocusSummary.steps`), so the
outputs state the filtered-out time; nothing is dropped silently.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import InputError, RooflineError
from .groups import FINDINGS_BY_LAUNCH, KernelGroup, group_kernels, named
from .kernel import AnalysedKernel
from .names import short_name
from .nvtx import launch_paths
from .sums import LaunchEntry


class FocusError(RooflineError):
    """A focus option that cannot be used (a regular expression that does not compile)."""


@dataclass(frozen=True)
class Focus:
    """Which launches and groups a report shows (None: no filter of that kind)."""

    kernel: str | None = None
    nvtx: str | None = None
    top: int | None = None
    min_share: float | None = None  # a fraction of the report's GPU time (0.01 = 1 %)

    def __post_init__(self) -> None:
        if self.top is not None and self.top < 1:
            raise FocusError("--top must be at least 1")
        if self.min_share is not None and not 0 <= self.min_share <= 1:
            raise FocusError("--min-share must be between 0 and 100 (per cent)")
        if self.kernel is not None:
            try:
                re.compile(self.kernel)
            except re.error as exc:
                raise FocusError(f"--kernel {self.kernel!r}: not a regular expression ({exc})") from exc

    @property
    def active(self) -> bool:
        return any(v is not None for v in (self.kernel, self.nvtx, self.top, self.min_share))

    def options(self) -> list[str]:
        """The filters as command-line options, for the sentence that states them."""
        out = []
        if self.kernel is not None:
            out.append(f"--kernel {self.kernel}")
        if self.nvtx is not None:
            out.append(f"--nvtx {self.nvtx}")
        if self.min_share is not None:
            out.append(f"--min-share {self.min_share * 100:g}")
        if self.top is not None:
            out.append(f"--top {self.top}")
        return out


@dataclass(frozen=True)
class FocusStep:
    """What one filter left out."""

    option: str
    launches: int
    groups: int | None  # for the group filters
    duration_s: float


@dataclass(frozen=True)
class FocusSummary:
    """A report's launches and GPU time before and after the focus, step by step."""

    focus: Focus
    total_launches: int
    total_duration_s: float | None
    kept_launches: int
    kept_duration_s: float | None
    steps: tuple[FocusStep, ...]

    @property
    def dropped_launches(self) -> int:
        return self.total_launches - self.kept_launches

    @property
    def dropped_duration_s(self) -> float:
        return math.fsum(s.duration_s for s in self.steps)

    def to_dict(self) -> dict[str, Any]:
        f = self.focus
        return {
            "kernel": f.kernel, "nvtx": f.nvtx, "top": f.top, "min_share": f.min_share,
            "total_launches": self.total_launches, "total_duration_s": self.total_duration_s,
            "kept_launches": self.kept_launches, "kept_duration_s": self.kept_duration_s,
            "dropped_launches": self.dropped_launches, "dropped_duration_s": self.dropped_duration_s,
            "steps": [dataclasses.asdict(s) for s in self.steps],
        }


def _seconds(kernels: Sequence[AnalysedKernel]) -> float:
    return math.fsum(k.q.duration_s.value for k in kernels if k.usable and k.q.duration_s is not None)


def _total(kernels: Sequence[AnalysedKernel]) -> float | None:
    known = [k.q.duration_s.value for k in kernels if k.q.duration_s is not None]
    return math.fsum(known) if known else None


def matches_nvtx(pattern: str, nvtx_ranges: Sequence[str]) -> bool:
    """Whether a launch ran in a range matching `pattern`: a path prefix or one range name."""
    nodes, _ = launch_paths(nvtx_ranges)
    names = {part for node in nodes for part in node.split("/")}
    return any(fnmatch.fnmatchcase(candidate, pattern) for candidate in (*nodes, *names))


def focus_kernels(launches: Sequence[AnalysedKernel], focus: Focus, group_by: str,
                  threshold: float, findings: str = FINDINGS_BY_LAUNCH) -> tuple[list[AnalysedKernel], FocusSummary]:
    """The launches of one report that `focus` keeps (in their order), and what it left out."""
    kernels = list(launches)
    total_s = _total(kernels)
    steps: list[FocusStep] = []

    def keep(option: str, kept: list[AnalysedKernel], groups: int | None = None) -> None:
        nonlocal kernels
        kept_ids = {id(k) for k in kept}
        dropped = [k for k in kernels if id(k) not in kept_ids]
        steps.append(FocusStep(option, len(dropped), groups, _seconds(dropped)))
        kernels = kept

    if focus.kernel is not None:
        rx = re.compile(focus.kernel, re.IGNORECASE)
        keep(f"--kernel {focus.kernel}", [k for k in kernels if rx.search(k.raw.name or "") or rx.search(
            k.raw.demangled_name or "") or rx.search(short_name(k.raw.demangled_name or k.raw.name or ""))])
    if focus.nvtx is not None:
        pattern = focus.nvtx
        keep(f"--nvtx {pattern}", [k for k in kernels if matches_nvtx(pattern, k.raw.nvtx_ranges)])
    def members(groups: Sequence[KernelGroup]) -> list[AnalysedKernel]:  # the launches of these groups
        indices = {e.index for g in groups for e in g.launches}
        return [k for k in kernels if k.raw.index in indices]

    if focus.min_share is not None or focus.top is not None:
        groups = group_kernels(kernels, group_by, threshold, total_s, findings)
        if focus.min_share is not None:
            share = focus.min_share
            kept_groups = [g for g in groups if (g.share or 0.0) >= share * (1 - 1e-9)]
            keep(f"--min-share {share * 100:g}", members(kept_groups), len(groups) - len(kept_groups))
            groups = kept_groups
        if focus.top is not None:
            keep(f"--top {focus.top}", members(groups[:focus.top]), max(0, len(groups) - focus.top))
    order = {id(k): n for n, k in enumerate(launches)}
    kernels.sort(key=lambda k: order[id(k)])
    return kernels, FocusSummary(focus, len(launches), total_s, len(kernels), _total(kernels), tuple(steps))


def focus_groups(groups: Sequence[KernelGroup], focus: Focus, path: str
                 ) -> tuple[list[KernelGroup], FocusSummary]:
    """`focus_kernels` for a report analysed by group, whose launches are not kept: whole groups are kept or left
    out (a kernel name is one group's, or several whole ones). An NVTX range may hold part of a group: such a report
    cannot be narrowed by range (`--nvtx` analyses per launch)."""
    if focus.nvtx is not None:
        raise InputError(path, "a report analysed by group cannot be narrowed by NVTX range",
                         "analyse it with launch findings (`--launch-findings`, or `launch_findings=True`)")
    kept = list(groups)
    steps: list[FocusStep] = []

    def keep(option: str, chosen: list[KernelGroup], counted: bool) -> None:
        nonlocal kept
        dropped = [g for g in kept if g not in chosen]
        launches = [e for g in dropped for e in g.launches]
        steps.append(FocusStep(option, len(launches), len(dropped) if counted else None,
                               math.fsum(e.duration_s for e in launches if e.usable and e.duration_s is not None)))
        kept = chosen

    if focus.kernel is not None:
        rx = re.compile(focus.kernel, re.IGNORECASE)
        keep(f"--kernel {focus.kernel}", [g for g in kept if rx.search(g.function or "") or rx.search(g.name or "")
                                          or rx.search(short_name(g.name or g.function or ""))], False)
    if focus.min_share is not None:
        share = focus.min_share
        keep(f"--min-share {share * 100:g}", [g for g in kept if (g.share or 0.0) >= share * (1 - 1e-9)], True)
    if focus.top is not None:
        keep(f"--top {focus.top}", kept[:focus.top], True)
    every = [e for g in groups for e in g.launches]
    left = [e for g in kept for e in g.launches]

    def total(entries: list[LaunchEntry]) -> float | None:
        known = [e.duration_s for e in entries if e.duration_s is not None]
        return math.fsum(known) if known else None

    every_s = total(every)
    # As the launches kept would be grouped: shares of every launch's time (summed as `focus_kernels` does), and
    # names told apart from the groups kept only.
    kept = [dataclasses.replace(g, share=g.stats.total / every_s if g.stats.total is not None and every_s else None)
            for g in kept]
    if len(kept) < len(groups):
        kept = named(kept)
    return kept, FocusSummary(focus, len(every), every_s, len(left),
                              total(left), tuple(steps))
