"""How findings are worded: the kinds, the templates, and how a finding's figures fill them.

A finding is data (`passes.finding.Finding`): a kind, a variant, and named figures. Its words come from the one
catalog (`knowledge.catalog`), filled here. A template is a tuple of segments; a segment is kept only where every
figure it names is present (not None), so one entry covers a finding with and without an optional figure.

Format specs beyond Python's own, for the figures:
- `pct`: a share as "80 %"; `pct1`: one decimal, "80.4 %";
- `x`: a ratio as "1.25×", "18×", "146×" (never an exponent);
- `n`: a count with thousands separators, "1,536";
- `up`: a label with its first letter capitalised ("DRAM", "Issue slots").
"""

from __future__ import annotations

import functools
import math
import string
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum

Figure = float | int | str | None
Template = tuple[str | tuple[str, ...], ...]  # a tuple within: alternatives, the first that fills


class Kind(str, Enum):
    """What a finding is about. The JSON schema lists these values."""

    TOO_LITTLE_WORK = "too_little_work"
    AT_LIMIT = "at_limit"
    UNIT_THROUGHPUT = "unit_throughput"
    INTENSITY_GAP = "intensity_gap"
    LATENCY = "latency"
    REUSE = "reuse"
    LOCAL_MEMORY = "local_memory"
    TAIL_EFFECT = "tail_effect"
    FMA_BALANCE = "fma_balance"
    ISSUE_SHARE = "issue_share"
    LANE_EFFICIENCY = "lane_efficiency"
    TENSOR_SHARE = "tensor_share"
    SECTOR_USE = "sector_use"
    COALESCING = "coalescing"
    BANK_CONFLICTS = "bank_conflicts"
    FP64_DIVISION = "fp64_division"

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


CEILING_KINDS = frozenset({Kind.FMA_BALANCE, Kind.ISSUE_SHARE, Kind.LANE_EFFICIENCY, Kind.TENSOR_SHARE,
                           Kind.SECTOR_USE, Kind.COALESCING, Kind.BANK_CONFLICTS})


@dataclass(frozen=True)
class Entry:
    """The words of one kind and variant (its next step is its lever's: `catalog.NEXT_STEPS`)."""

    headline: Template
    detail: Template
    section: str  # the Nsight Compute section or rule it relates to


@dataclass(frozen=True)
class Words:
    headline: str
    next_step: str | None
    detail: str
    bound: str  # how the bound is computed, or why there is none
    section: str
    why_none: str = ""  # why there is no bound, without the "none" that starts `bound`


def ratio(x: float) -> str:
    """1.25×, 18×, 146× (never 1.5e+02×)."""
    return (f"{x:.3g}" if x < 10 else f"{x:,.0f}") + "×"


class _Formatter(string.Formatter):
    def format_field(self, value: object, format_spec: str) -> str:
        if isinstance(value, float) and not math.isfinite(value):
            return "n/a"
        if format_spec == "pct" and isinstance(value, int | float):
            return f"{value * 100:.0f} %"
        if format_spec == "pct1" and isinstance(value, int | float):
            return f"{value * 100:.1f} %"
        if format_spec == "x" and isinstance(value, int | float):
            return ratio(float(value))
        if format_spec == "n" and isinstance(value, int | float):
            return f"{value:,.0f}"
        if format_spec == "up":
            text = str(value)
            return text[:1].upper() + text[1:]
        return str(super().format_field(value, format_spec))


_FORMAT = _Formatter()
Parsed = tuple[tuple[str, str | None, str], ...]  # (literal text, figure name or None, format spec) per piece


@functools.lru_cache(maxsize=4096)
def _parsed(segment: str) -> tuple[Parsed, tuple[str, ...]]:
    """A segment's pieces and the figure names it uses, parsed once (the catalog's segments are a few hundred
    constants, filled for every finding of every kernel). A positional field, a conversion (`!r`) or a nested
    spec, which `fill` does not expand, raises ValueError."""
    pieces = []
    for literal, name, spec, conversion in _FORMAT.parse(segment):
        if name is not None and (not name or name.isdigit() or conversion or "{" in (spec or "")):
            raise ValueError(f"a catalog segment may only name figures with plain formats: {segment!r}")
        pieces.append((literal, name, spec or ""))
    return tuple(pieces), tuple(name for _, name, _ in pieces if name)


def fields(segment: str) -> list[str]:
    """The figure names a segment uses."""
    return list(_parsed(segment)[1])


def _fills(segment: str, figures: Mapping[str, Figure]) -> bool:
    return all(figures.get(n) is not None for n in _parsed(segment)[1])


def fill(template: Template, figures: Mapping[str, Figure]) -> str:
    """The template's segments whose figures are all present (of alternatives, the first), filled and joined (as
    `str.format` would, with `_Formatter`'s figure formats)."""
    out = []
    for segment in template:
        chosen = next((s for s in ((segment,) if isinstance(segment, str) else segment) if _fills(s, figures)), None)
        if chosen is not None:
            for literal, name, spec in _parsed(chosen)[0]:
                out.append(literal)
                if name:
                    out.append(_FORMAT.format_field(figures[name], spec))
    return "".join(out)


def first_upper(text: str) -> str:
    return text[:1].upper() + text[1:]
