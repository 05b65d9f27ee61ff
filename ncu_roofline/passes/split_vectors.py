"""One wide access split into narrow ones: the instructions behind a coalescing or sector-use finding that load (or
store) consecutive words of one address.

A thread that reads a `float4` from a pointer the compiler cannot prove 16-byte aligned gets four 4-byte loads,
`LDG.E R5, [R8.64]`, `LDG.E R6, [R8.64+0x4]`, `+0x8`, `+0xc`. Where threads own consecutive 16-byte elements,
each of those touches four times the sectors its bytes need: Nsight Compute's per-instruction excessive sectors
fall a quarter on each, and the fix is one 16-byte access, not a change of which thread reads what. Read from the
SASS of the finding's top instructions (`passes.where`): the same opcode, width and address register, at offsets
one word apart that fill an aligned 4-, 8- or 16-byte access, together holding at least half of the counter.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..readers.instructions import Instruction, TopInstructions

__all__ = ["MAJORITY", "SplitAccess", "split_access"]

MAJORITY = 0.5  # the share of the finding's counter the split instructions hold together, at least
_WIDTHS = {"U8": 1, "S8": 1, "U16": 2, "S16": 2, "64": 8, "128": 16}  # bytes; any other access is 4
_WHOLE = (16, 8, 4)  # the vector accesses a split may be merged into
_ACCESS = re.compile(r"^(?:@!?U?P[T\d]+\s+)?(?P<op>(?:LDG|STG)(?:\.\w+)*)\s+(?P<operands>.*)$")
_ADDRESS = re.compile(r"(?:desc\[\w+\])?\[(?P<base>U?R[Z\d]+(?:\.64)?)"
                      r"(?:\s*\+\s*(?P<offset>-?0x[0-9a-fA-F]+|-?\d+))?\]")


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


def _parsed(instruction: Instruction) -> tuple[str, str, int, int] | None:
    """(opcode, address register, offset, width) of a global load or store, None for anything else."""
    match = _ACCESS.match((instruction.sass or "").strip())
    if match is None:
        return None
    address = _ADDRESS.search(match["operands"])
    if address is None:
        return None
    op = match["op"]
    width = next((w for part in op.split(".")[1:] if (w := _WIDTHS.get(part)) is not None), 4)
    offset = int(address["offset"] or "0", 0)
    return op, address["base"], offset, width


def split_access(top: TopInstructions | None) -> SplitAccess | None:
    """The largest share of `top`'s instructions that one aligned vector access would replace, where it holds at
    least `MAJORITY` of the counter; else None."""
    if top is None:
        return None
    by_address: dict[tuple[str, str, int], dict[int, float]] = {}
    for instruction in top.instructions:
        parsed = _parsed(instruction)
        if parsed is not None:
            op, base, offset, width = parsed
            at = by_address.setdefault((op, base, width), {})
            at[offset] = at.get(offset, 0.0) + instruction.share
    best: SplitAccess | None = None
    for (op, base, width), offsets in by_address.items():
        for start in sorted(offsets):
            for whole in _WHOLE:
                count = whole // width
                if count < 2 or start % whole:
                    continue
                words = [start + k * width for k in range(count)]
                if all(w in offsets for w in words):
                    share = sum(offsets[w] for w in words)
                    if best is None or share > best.share:
                        best = SplitAccess(op, base, count, width, whole, words[0], words[-1], share)
                    break  # the widest access from this offset
    return best if best is not None and best.share >= MAJORITY else None
