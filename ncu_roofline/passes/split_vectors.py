"""One wide access split into narrow ones: the instructions behind a coalescing or sector-use finding that load (or
store) consecutive words of one address.

A thread that reads a `float4` from a pointer the compiler cannot prove 16-byte aligned gets four 4-byte loads,
`LDG.E R5, [R8.64]`, `LDG.E R6, [R8.64+0x4]`, `+0x8`, `+0xc`. Where threads own consecutive 16-byte elements,
each of those touches four times the sectors its bytes need: Nsight Compute's per-instruction excessive sectors
fall a quarter on each, and the fix is one 16-byte access, not a change of which thread reads what. Read from the
SASS of the finding's top instructions (`passes.where`, the top `TOP_COUNT` of them): the same opcode, predicate,
width and address register, one instruction per word, at offsets one word apart that make exactly one aligned 4-,
8- or 16-byte access (no word of the same register just before or after it: a `float3` is no `float2`), with
about equal shares that together hold nearly all (`MOST`) of the counter.

A split of n words explains an n-fold excess and no more: where the finding's needed share of the sectors is
under 1 / n (`explains`), the accesses waste more than the split does (a thread walking its own row touches a
sector per thread), and the finding keeps its own step.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..readers.instructions import Instruction, TopInstructions

__all__ = ["MOST", "SplitAccess", "explains", "split_access"]

MOST = 0.9  # the share of the finding's counter the split instructions hold together, at least
EVEN = 1.5  # the largest share of one word at most this many times the smallest: one access pattern
NEEDED = 0.9  # a split of n words explains a finding whose needed share of the sectors is at least this / n
_NARROW = {"U8": 1, "S8": 1, "U16": 2, "S16": 2}  # bytes of a narrow access; `.64` and the like say their bits
_WHOLE = (4, 8, 16)  # the vector accesses a split may be merged into
_ACCESS = re.compile(r"^(?P<guard>@!?U?P[T\d]+\s+)?(?P<op>(?:LDG|STG)(?:\.\w+)*)\s+(?P<operands>.*)$")
_OPERAND = re.compile(r"(?:desc\[\w+\])?\[(?P<inner>[^\]]*)\]")
_ADDRESS = re.compile(r"(?P<base>U?R[Z\d]+(?:\.64)?)(?:\s*(?P<sign>[+-])\s*(?P<offset>-?0x[0-9a-fA-F]+|-?\d+))?")


@dataclass(frozen=True, slots=True)
class SplitAccess:
    """`count` accesses of `width` bytes by `op` at `base` + `first` .. `last`: one `whole`-byte access's worth,
    `share` of the counter."""

    op: str
    base: str
    count: int
    width: int
    whole: int
    first: int
    last: int
    share: float

    def figures(self) -> dict[str, float | int | str]:
        return {"split_op": self.op, "split_base": self.base, "split_n": self.count, "split_whole": self.whole,
                "split_first": _hex(self.first), "split_last": _hex(self.last), "split_share": self.share}


def _hex(offset: int) -> str:
    return f"+{offset:#x}" if offset >= 0 else f"-{-offset:#x}"


def _width(op: str) -> int:
    """The bytes one thread's access moves: `.U8` 1, `.64` 8, `.128` 16, `.256` 32, else 4."""
    for part in op.split(".")[1:]:
        if part in _NARROW:
            return _NARROW[part]
        if part.isdigit():
            return int(part) // 8
    return 4


def _parsed(instruction: Instruction) -> tuple[str, str, str, int, int] | None:
    """(predicate, opcode, address register, offset, width) of a global load or store whose address is a register
    plus a constant, None for anything else (an offset in a register, another instruction)."""
    match = _ACCESS.match((instruction.sass or "").strip())
    if match is None:
        return None
    operand = _OPERAND.search(match["operands"])  # the first bracket, with its descriptor: the address
    address = None if operand is None else _ADDRESS.fullmatch(operand["inner"].strip())
    if address is None:
        return None
    offset = int(address["offset"] or "0", 0) * (-1 if address["sign"] == "-" else 1)
    return (match["guard"] or "").strip(), match["op"], address["base"], offset, _width(match["op"])


def split_access(top: TopInstructions | None) -> SplitAccess | None:
    """The aligned vector access that `top`'s instructions are split from, where they hold at least `MOST` of the
    counter; else None."""
    if top is None:
        return None
    by_address: dict[tuple[str, str, str, int], dict[int, list[float]]] = {}
    for instruction in top.instructions:
        parsed = _parsed(instruction)
        if parsed is not None:
            guard, op, base, offset, width = parsed
            by_address.setdefault((guard, op, base, width), {}).setdefault(offset, []).append(instruction.share)
    for (_, op, base, width), offsets in by_address.items():
        start = min(offsets)
        run = 0
        while start + run * width in offsets:
            run += 1
        whole = run * width
        if run < 2 or whole not in _WHOLE or start % whole or len(offsets) != run:
            continue  # not exactly one aligned vector's words
        shares = [offsets[start + k * width] for k in range(run)]
        if any(len(s) != 1 for s in shares):
            continue  # a word loaded twice: one register reused for other accesses
        each = [s[0] for s in shares]
        if max(each) > EVEN * min(each) or sum(each) < MOST:
            continue
        return SplitAccess(op, base, run, width, whole, start, start + (run - 1) * width, sum(each))
    return None


def explains(split: SplitAccess, needed: float | None) -> bool:
    """Whether merging the split can be the finding's fix: its needed share of the sectors (`needed`, the finding's
    factor) is at least `NEEDED` / the words split (an n-fold split wastes n − 1 of every n sectors, no more)."""
    return needed is None or needed >= NEEDED / split.count
