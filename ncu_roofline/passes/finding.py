"""One entry of a kernel's diagnosis, as data: what it is about, the figures that explain it, what to do, and what
fixing it is worth. Its words come from the catalog (`knowledge.catalog`); no code reads them back."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..knowledge.catalog import words
from ..knowledge.wording import Figure, Kind, Words
from ..readers.instructions import TopInstructions

__all__ = ["Finding", "Kind", "top_index"]


@dataclass(frozen=True, slots=True)
class Finding:
    """One finding, most important first in a diagnosis.

    `variant` says what was observed (the catalog's entry), `lever` what to do (None: nothing here), `basis` how
    the bound `speedup` was found or why there is none. `figures` fill the words; `evidence` names the metrics.
    """

    kind: Kind
    variant: str
    roof: str | None  # the roof (or unit) the finding is about
    factor: float | None  # a ceiling's cap on `roof`
    limit: str | None  # the limiter this finding explains (`bound_by`)
    speedup: float | None = None  # the kernel could run up to this many times faster
    lever: str | None = None
    basis: tuple[str, ...] = ()
    figures: Mapping[str, Figure] = field(default_factory=dict)
    evidence: tuple[str, ...] = ()
    where: TopInstructions | None = None  # the code behind it, where the report holds per-instruction counters
    _words: Words | None = field(default=None, init=False, compare=False, repr=False)  # `words()`, once made

    def with_figures(self, **more: Figure) -> Finding:
        return dataclasses.replace(self, figures={**self.figures, **more})

    def with_basis(self, *more: str, **figures: Figure) -> Finding:
        return dataclasses.replace(self, basis=(*self.basis, *more), figures={**self.figures, **figures})

    def words(self) -> Words:
        """Its words from the catalog, made on the first call (every output reads them; a finding, its figures
        included, is not changed once made: `with_figures` and `with_basis` make another)."""
        found = self._words
        if found is None:
            found = words(self.kind, self.variant, self.lever, self.figures, self.basis)
            object.__setattr__(self, "_words", found)
        return found

    def to_dict(self, redact: bool = False) -> dict[str, Any]:
        """The finding as the JSON document writes it; `redact` leaves the source files of `where` out."""
        w = self.words()
        return {"kind": self.kind.value, "variant": self.variant, "lever": self.lever, "roof": self.roof,
                "factor": self.factor, "limit": self.limit, "speedup": self.speedup, "basis": list(self.basis),
                "figures": dict(self.figures), "evidence": list(self.evidence),
                "where": None if self.where is None else self.where.to_list(redact),
                "headline": w.headline, "next_step": w.next_step, "detail": w.detail, "bound_note": w.bound,
                "section": w.section}


def top_index(speedups: list[float | None], kinds: list[str] | None = None,
              variants: list[str] | None = None) -> int | None:
    """Which of a diagnosis's findings (their projected speed-ups, kinds and variants, in order) a one-line summary
    shows, and whose next step it gives: a latency the report cannot tell from an unmeasured limit first (its step
    collects what is missing); else the one worth most, the earlier among equals; where none projects a gain, the
    latency finding of a kernel below every limit, else the first, which names the limiter."""
    if not speedups:
        return None
    unmeasured = next((n for n, v in enumerate(variants or []) if v == "unmeasured"), None)
    if unmeasured is not None:
        return unmeasured
    best = max(range(len(speedups)), key=lambda i: (speedups[i] or 0.0, -i))
    if (speedups[best] or 0.0) > 1.0:
        return best
    return next((i for i, kind in enumerate(kinds or []) if kind == "latency"), 0)
