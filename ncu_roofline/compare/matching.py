"""Kernel matching between two runs: the same launch in BASE and in HEAD.

The key of a kernel is (demangled name or name, grid size, block size, NVTX ranges); the n-th
launch of a key in BASE pairs with the n-th launch of that key in HEAD. What is left is paired by
name alone, again in order of occurrence, and marked `launch_config_changed` (grid or block
differ) and/or `nvtx_changed`. The rest is listed as unmatched on its side.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any


def display_name(k: dict[str, Any]) -> str:
    """The name used for matching: demangled where the report has it."""
    return str(k.get("demangled_name") or k.get("name") or "")


def _dims(value: Any) -> tuple[int, ...] | None:
    return tuple(int(v) for v in value) if isinstance(value, (list, tuple)) else None


def match_key(k: dict[str, Any]) -> tuple[Any, ...]:
    """(name, grid size, block size, NVTX ranges): what makes two launches the same launch."""
    return (display_name(k), _dims(k.get("grid_size")), _dims(k.get("block_size")),
            tuple(str(r) for r in k.get("nvtx_ranges") or ()))


@dataclass(frozen=True)
class Pair:
    """A BASE kernel (position in its run) matched with a HEAD kernel."""

    base: int
    head: int
    launch_config_changed: bool = False
    nvtx_changed: bool = False


@dataclass
class Matching:
    """The pairs (in BASE order) and the positions left without a partner on each side."""

    pairs: list[Pair]
    unmatched_base: list[int]
    unmatched_head: list[int]


def _pair_in_order(base_ids: Iterable[int], head_ids: Iterable[int], key_of_base: Callable[[int], Hashable],
                   key_of_head: Callable[[int], Hashable]) -> list[tuple[int, int]]:
    """Pair the n-th BASE item of each key with the n-th HEAD item of the same key."""
    queues: dict[Hashable, list[int]] = defaultdict(list)
    for h in head_ids:
        queues[key_of_head(h)].append(h)
    taken: dict[Hashable, int] = defaultdict(int)
    pairs: list[tuple[int, int]] = []
    for b in base_ids:
        key = key_of_base(b)
        queue = queues.get(key)
        if queue is not None and taken[key] < len(queue):
            pairs.append((b, queue[taken[key]]))
            taken[key] += 1
    return pairs


def match_kernels(base: Sequence[dict[str, Any]], head: Sequence[dict[str, Any]]) -> Matching:
    """Pair kernels by launch key and order of occurrence, then by name alone (see the module)."""
    exact = _pair_in_order(range(len(base)), range(len(head)),
                           lambda i: match_key(base[i]), lambda j: match_key(head[j]))
    used_b = {b for b, _ in exact}
    used_h = {h for _, h in exact}
    rest_b = [i for i in range(len(base)) if i not in used_b]
    rest_h = [j for j in range(len(head)) if j not in used_h]
    by_name = _pair_in_order(rest_b, rest_h, lambda i: display_name(base[i]), lambda j: display_name(head[j]))
    pairs = [Pair(b, h) for b, h in exact]
    for b, h in by_name:
        kb, kh = match_key(base[b]), match_key(head[h])
        pairs.append(Pair(b, h, launch_config_changed=kb[1:3] != kh[1:3], nvtx_changed=kb[3] != kh[3]))
    used_b |= {b for b, _ in by_name}
    used_h |= {h for _, h in by_name}
    pairs.sort(key=lambda p: (p.base, p.head))
    return Matching(pairs, [i for i in range(len(base)) if i not in used_b],
                    [j for j in range(len(head)) if j not in used_h])
