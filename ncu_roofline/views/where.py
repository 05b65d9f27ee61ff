"""Where in the code, as the page and the Markdown summary show it: a finding's top instructions, formatted.

Built from the finding's `where` entries of the JSON document (already without source files where the output is
redacted) and the counter's words (`knowledge.instruction_counters`). A group's instructions are those of its
longest launch alone: its view says which (`from_launch`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

from ..knowledge.instruction_counters import PC_COUNTERS, TOP_COUNT
from . import format as F

__all__ = ["NO_SASS", "WhereRow", "WhereView", "alike", "where_view"]

NO_SASS = "–"  # shown for an instruction the report has no SASS text for


class WhereRow(TypedDict):
    """One instruction: its place, SASS, share of the counter and value, and its source line where known."""

    place: str  # "+0x590": the offset in its function (the PC where the function start is unknown)
    sass: str  # `NO_SASS` where the report has no SASS text for it
    sass_known: bool
    share: str  # "99 %"
    value: str
    source: str  # "gemm.h:341", "" without line information (or redacted)


class WhereView(TypedDict):
    """The instructions behind one finding, the most of its counter first."""

    counter: str  # what the shares are of, in a few words
    meaning: str
    rows: list[WhereRow]
    alike: int  # the rows after the first that hold as much of the counter (within a thousandth of its share)
    from_launch: int | None  # a group's: the launch (its index) the instructions are of; None: the kernel's own


def _place(entry: dict[str, Any]) -> str:
    offset = entry.get("offset")
    return f"+{offset:#06x}" if isinstance(offset, int) else f"{entry['pc']:#x}"


def _share(share: float) -> str:
    return F.pct(share, 1 if share < 0.1 else 0)


def where_view(counter: str, entries: Sequence[dict[str, Any]] | None) -> WhereView | None:
    """The view of a finding's `where` (`counter`: the key of its counter), None where it has none (`from_launch`:
    None, a group's view sets it)."""
    if not entries:
        return None
    described = PC_COUNTERS.get(counter)
    rows = [WhereRow(place=_place(e), sass=e["sass"] or NO_SASS, sass_known=bool(e["sass"]), share=_share(e["share"]),
                     value=F.si(e["value"], "").strip(),
                     source=f"{e['file']}:{e['line']}" if e.get("file") and e.get("line") else e.get("file") or "")
            for e in entries]
    first = entries[0]["share"]
    same = next((n for n, e in enumerate(entries[1:]) if not math.isclose(e["share"], first, rel_tol=1e-3)),
                len(entries) - 1)
    return WhereView(counter=described.noun if described else counter,
                     meaning=described.meaning if described else "", rows=rows, alike=same, from_launch=None)


def alike(view: Mapping[str, Any]) -> dict[str, int | str | None]:
    """How many instructions after the top one hold as much of the counter (the four scalar loads of an unvectorised
    float4): `alike` (two or more), `alike_one` ("" for one), or `alike_more` where every listed one does (more may,
    past the list); none of them where none does."""
    same, listed = view["alike"], len(view["rows"])
    every = same == listed - 1 and listed == TOP_COUNT
    return {"alike": same if same > 1 and not every else None, "alike_one": "" if same == 1 and not every else None,
            "alike_more": same if same and every else None}
