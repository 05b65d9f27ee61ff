"""Kernel matching between two runs, in passes; each pair says which pass made it.

Items are kernel dicts (one launch each, or one group of launches; see `compare.groups`). The
key of an item is (demangled name or name, grid size, block size, NVTX ranges). Passes, each over
what the earlier ones left:

1. `exact`: the same key; the n-th BASE item of a key pairs with the n-th HEAD item of it.
2. `same function`: the same name with another launch configuration or NVTX ranges, then the
   same base function name (`compare.names.base_function_name`: template arguments,
   parameters and return type removed).
3. `generated name`: the same base name once generated suffixes are removed (gensym counters,
   Triton specialisations, hashes: `compare.names.generated_name_key`).
4. `user map`: the user's `BASE_REGEX=HEAD_REGEX` rules, in order. Where they paired something,
   passes 2 and 3 run once more over the rest (a candidate left alone then pairs by elimination).

Within a pass, the items that share a name form a bucket. Where the bucket holds one key on each
side (repeated launches of one kernel), they pair in order. Otherwise candidates are told apart
by launch configuration and NVTX ranges (grid, block and NVTX; then grid and block; then NVTX),
and a last BASE key and HEAD key left alone pair by elimination. What still has several
candidates is ambiguous: it is not paired, but listed (`Matching.ambiguous`) with its candidates,
so that a user rule can pair it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .names import MatchRule, base_function_name, generated_name_key

EXACT = "exact"
SAME_FUNCTION = "same function"
GENERATED = "generated name"
USER_MAP = "user map"


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
    """A BASE item (position in its list) matched with a HEAD item, and how."""

    base: int
    head: int
    launch_config_changed: bool = False
    nvtx_changed: bool = False
    match: str = EXACT
    name_changed: bool = False
    rule: str | None = None  # the user rule that made a `user map` pair


@dataclass(frozen=True)
class Ambiguity:
    """Items of one bucket that could not be told apart: several candidates on one side at least."""

    match: str                 # the pass
    name: str                  # what they share: a name, base name, normalised name or rule
    base: tuple[int, ...]
    head: tuple[int, ...]


@dataclass
class Matching:
    """The pairs (in BASE order), the positions left without a partner, and the ambiguous buckets."""

    pairs: list[Pair]
    unmatched_base: list[int]
    unmatched_head: list[int]
    ambiguous: list[Ambiguity] = field(default_factory=list)


# Tie-breakers inside a bucket, strictest first: (grid, block, NVTX), (grid, block), NVTX.
_TIEBREAKS: tuple[Callable[[tuple[Any, ...]], Hashable], ...] = (
    lambda key: key[1:], lambda key: key[1:3], lambda key: key[3])


def _kinds(ids: Sequence[int], items: Sequence[dict[str, Any]]) -> dict[tuple[Any, ...], list[int]]:
    """The positions of a bucket by key, keys in order of first occurrence."""
    kinds: dict[tuple[Any, ...], list[int]] = {}
    for i in ids:
        kinds.setdefault(match_key(items[i]), []).append(i)
    return kinds


def _resolve(base_ids: Sequence[int], head_ids: Sequence[int], base: Sequence[dict[str, Any]],
             head: Sequence[dict[str, Any]]) -> tuple[list[tuple[int, int]], bool]:
    """The pairs of one bucket, and whether candidates were left that could not be told apart."""
    kb, kh = _kinds(base_ids, base), _kinds(head_ids, head)
    pairs: list[tuple[int, int]] = []
    if len(kb) == 1 and len(kh) == 1:
        return list(zip(next(iter(kb.values())), next(iter(kh.values())), strict=False)), False
    for tiebreak in _TIEBREAKS:
        by_b: dict[Hashable, list[tuple[Any, ...]]] = {}
        by_h: dict[Hashable, list[tuple[Any, ...]]] = {}
        for key in kb:
            by_b.setdefault(tiebreak(key), []).append(key)
        for key in kh:
            by_h.setdefault(tiebreak(key), []).append(key)
        for value, keys in by_b.items():
            if len(keys) == 1 and len(by_h.get(value, ())) == 1:
                pairs += zip(kb.pop(keys[0]), kh.pop(by_h[value][0]), strict=False)
    if len(kb) == 1 and len(kh) == 1:  # the last two left: by elimination
        pairs += zip(next(iter(kb.values())), next(iter(kh.values())), strict=False)
        return pairs, False
    return pairs, bool(kb) and bool(kh)


def _buckets(ids: Sequence[int], items: Sequence[dict[str, Any]],
             key_of: Callable[[dict[str, Any]], Hashable | None]) -> dict[Hashable, list[int]]:
    buckets: dict[Hashable, list[int]] = {}
    for i in ids:
        key = key_of(items[i])
        if key is not None:
            buckets.setdefault(key, []).append(i)
    return buckets


class _State:
    """What a matching has found so far."""

    def __init__(self, base: Sequence[dict[str, Any]], head: Sequence[dict[str, Any]]) -> None:
        self.base, self.head = base, head
        self.pairs: list[Pair] = []
        self.used_b: set[int] = set()
        self.used_h: set[int] = set()
        self.ambiguous: list[Ambiguity] = []

    def run(self, match: str, key_of_base: Callable[[dict[str, Any]], Hashable | None],
            key_of_head: Callable[[dict[str, Any]], Hashable | None],
            label: Callable[[Hashable], str] = str, rule: str | None = None) -> None:
        """One pass: bucket what is left by the two key functions and resolve every bucket."""
        rest_b = [i for i in range(len(self.base)) if i not in self.used_b]
        rest_h = [j for j in range(len(self.head)) if j not in self.used_h]
        heads = _buckets(rest_h, self.head, key_of_head)
        for key, base_ids in _buckets(rest_b, self.base, key_of_base).items():
            head_ids = heads.get(key)
            if not head_ids:
                continue
            pairs, ambiguous = _resolve(base_ids, head_ids, self.base, self.head)
            for b, h in pairs:
                kb, kh = match_key(self.base[b]), match_key(self.head[h])
                self.pairs.append(Pair(b, h, launch_config_changed=kb[1:3] != kh[1:3], nvtx_changed=kb[3] != kh[3],
                                       match=match, name_changed=kb[0] != kh[0], rule=rule))
                self.used_b.add(b)
                self.used_h.add(h)
            if ambiguous:
                self.ambiguous.append(Ambiguity(match, label(key), tuple(base_ids), tuple(head_ids)))

    def result(self) -> Matching:
        """The pairs in BASE order; the ambiguous buckets whose candidates are still unpaired."""
        self.pairs.sort(key=lambda p: (p.base, p.head))
        seen: set[tuple[tuple[int, ...], tuple[int, ...]]] = set()
        ambiguous = []
        for a in self.ambiguous:
            b = tuple(i for i in a.base if i not in self.used_b)
            h = tuple(j for j in a.head if j not in self.used_h)
            if b and h and (b, h) not in seen:
                seen.add((b, h))
                ambiguous.append(Ambiguity(a.match, a.name, b, h))
        return Matching(self.pairs, [i for i in range(len(self.base)) if i not in self.used_b],
                        [j for j in range(len(self.head)) if j not in self.used_h], ambiguous)


def _rule_key(rule: MatchRule, side: str, n: int) -> Callable[[dict[str, Any]], Hashable | None]:
    pattern = rule.base if side == "base" else rule.head

    def key(k: dict[str, Any]) -> Hashable | None:
        groups = rule.key(pattern, display_name(k))
        return None if groups is None else (n, groups)

    return key


def _constant(text: str) -> Callable[[Hashable], str]:
    return lambda _key: text


def match_kernels(base: Sequence[dict[str, Any]], head: Sequence[dict[str, Any]],
                  rules: Sequence[MatchRule] = ()) -> Matching:
    """Pair items by the passes of the module, each pass over what the earlier ones left."""
    state = _State(base, head)
    state.run(EXACT, match_key, match_key)
    _by_name(state)
    made = len(state.pairs)
    for n, rule in enumerate(rules):
        state.run(USER_MAP, _rule_key(rule, "base", n), _rule_key(rule, "head", n), label=_constant(rule.text),
                  rule=rule.text)
    if len(state.pairs) > made:  # the rules settled some candidates: those they left may now stand alone
        _by_name(state)
    return state.result()


def _by_name(state: _State) -> None:
    """The passes by name: same name, same base function name, same generated name."""
    state.run(SAME_FUNCTION, display_name, display_name)
    state.run(SAME_FUNCTION, _base_name, _base_name)
    state.run(GENERATED, _generated_name, _generated_name)


def _base_name(k: dict[str, Any]) -> str:
    return base_function_name(display_name(k))


def _generated_name(k: dict[str, Any]) -> str:
    return generated_name_key(display_name(k))
