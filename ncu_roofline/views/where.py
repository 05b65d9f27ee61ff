"""Where in the code, as the page and the Markdown summary show it: a finding's top instructions, formatted.

Built from the finding's `where` entries of the JSON document (already without source files where the output is
redacted) and the counter's words (`knowledge.instruction_counters`). A group's instructions are those of its
longest launch alone: its view says which (`from_launch`).
"""

from __future__ import annotations

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
    return WhereView(counter=described.noun if described else counter,
                     meaning=described.meaning if described else "", rows=rows, from_launch=None)


def alike(view: Mapping[str, Any]) -> dict[str, int | None]:
    """How many instructions after the top one hold the same share as shown (the four scalar loads of one unvectorised
    float4): `alike`, or `alike_more` where every listed one does (more may, past the list); neither where none."""
    rows = view["rows"]
    same = next((n for n, row in enumerate(rows[1:]) if row["share"] != rows[0]["share"]), len(rows) - 1)
    if not same:
        return {"alike": None, "alike_more": None}
    every = same == len(rows) - 1 and len(rows) == TOP_COUNT
    return {"alike": None if every else same, "alike_more": same if every else None}
