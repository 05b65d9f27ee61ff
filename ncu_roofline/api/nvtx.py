"""NVTX roll-up: GPU time, limiter mix and top kernel groups per NVTX range, nested ranges summed up.

Each launch carries its NVTX state as range paths (`RawKernel.nvtx_ranges`: a push/pop stack
joined by `/`, a domain other than the default written `domain:` in front, start/end ranges as
paths of their own). Every prefix of a path is a node of the tree (`train`, `train/layer1`,
`train/layer1/attention`); a launch counts once in every node on its paths, so a node's time is
the time of everything launched inside it, its children included (`self_duration_s`: launched
directly in it). PyTorch's per-call annotations (`, seq = 12`, `, op_id = 3`) are dropped from
range names so that repeated calls of one op add up in one row.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .groups import NO_LIMITER, KernelGroup

TOP_GROUPS = 3
_PER_CALL = re.compile(r",\s*(?:seq|op_id)\s*=\s*\d+")


@dataclass
class RangeNode:
    """One NVTX range (a path prefix) and what ran inside it."""

    path: str
    name: str  # the last component
    depth: int
    parent: str | None
    launches: int = 0
    duration_s: float = 0.0
    self_duration_s: float = 0.0
    limiters: dict[str, float] = field(default_factory=dict)  # limiter -> seconds
    groups: dict[str, float] = field(default_factory=dict)  # group_key -> seconds

    def to_dict(self, total_s: float | None, names: dict[str, str]) -> dict[str, Any]:
        return {
            "path": self.path, "name": self.name, "depth": self.depth, "parent": self.parent,
            "launches": self.launches, "duration_s": self.duration_s, "self_duration_s": self.self_duration_s,
            "share_of_gpu_time": self.duration_s / total_s if total_s else None,
            "limiters": dict(sorted(self.limiters.items(), key=lambda kv: (-kv[1], kv[0]))),
            "top_groups": [{"group_key": key, "display_name": names.get(key, key), "duration_s": seconds}
                           for key, seconds in top_groups(self)],
        }


def top_groups(node: RangeNode, n: int = TOP_GROUPS) -> list[tuple[str, float]]:
    """The `n` groups with the most time in the range (ties: by key)."""
    return sorted(node.groups.items(), key=lambda kv: (-kv[1], kv[0]))[:n]


def components(path: str) -> list[str]:
    """`train/layer1/aten::mm, seq = 3` -> ['train', 'layer1', 'aten::mm']."""
    return [_PER_CALL.sub("", part).strip() or part for part in path.split("/")]


def launch_paths(nvtx_ranges: Iterable[str]) -> tuple[set[str], set[str]]:
    """(every node path a launch counts in, the paths it was launched directly in)."""
    nodes: set[str] = set()
    leaves: set[str] = set()
    for entry in nvtx_ranges:
        parts = components(entry)
        for depth in range(1, len(parts) + 1):
            nodes.add("/".join(parts[:depth]))
        leaves.add("/".join(parts))
    return nodes, leaves


def nvtx_rollup(groups: Sequence[KernelGroup]) -> list[RangeNode]:
    """The range tree of one report's launches, depth first, the most time first among siblings.

    Empty when no launch carries an NVTX range.
    """
    nodes: dict[str, RangeNode] = {}
    for g in groups:
        if not g.nvtx_ranges:  # (every range any of its launches ran in)
            continue
        for k in g.launches:
            if not k.nvtx_ranges:
                continue
            duration = k.duration_s if k.usable and k.duration_s is not None else 0.0
            if not math.isfinite(duration):
                duration = 0.0
            paths, leaves = launch_paths(k.nvtx_ranges)
            for path in paths:
                node = nodes.get(path)
                if node is None:
                    parts = path.split("/")
                    node = nodes[path] = RangeNode(path, parts[-1], len(parts) - 1,
                                                   "/".join(parts[:-1]) or None)
                node.launches += 1
                node.duration_s += duration
                if path in leaves:
                    node.self_duration_s += duration
                if k.usable:
                    limiter = k.bound_by or NO_LIMITER
                    node.limiters[limiter] = node.limiters.get(limiter, 0.0) + duration
                node.groups[g.key] = node.groups.get(g.key, 0.0) + duration
    children: dict[str | None, list[RangeNode]] = {}
    for node in nodes.values():
        children.setdefault(node.parent, []).append(node)
    ordered: list[RangeNode] = []

    def visit(parent: str | None) -> None:
        for node in sorted(children.get(parent, []), key=lambda n: (-n.duration_s, n.path)):
            ordered.append(node)
            visit(node.path)

    visit(None)
    return ordered
