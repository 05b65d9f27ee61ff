"""One line of a kernel's diagnosis: what it is about, what explains it, what to do, what fixing it is worth."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(slots=True)
class Finding:
    """One line of the diagnosis, most important first."""

    kind: str
    roof: str | None  # the roof (or unit) the finding is about
    factor: float | None
    text: str
    action: str
    limit: str | None = None  # the limiter this finding explains (`bound_by`)
    speedup: float | None = None  # the kernel could run up to this many times faster
    speedup_note: str = ""  # how the bound is computed, or why there is none

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "roof": self.roof, "factor": self.factor, "text": self.text, "action": self.action,
                "limit": self.limit, "speedup": self.speedup, "speedup_note": self.speedup_note}


def top_index(speedups: list[float | None], kinds: list[str] | None = None) -> int | None:
    """Which of a diagnosis's findings (their projected speed-ups and kinds, in order) a one-line summary
    shows: the one worth most, the earlier among equals; where none projects a gain, the latency finding of a
    kernel below every limit, else the first, which names the limiter."""
    if not speedups:
        return None
    best = max(range(len(speedups)), key=lambda i: (speedups[i] or 0.0, -i))
    if (speedups[best] or 0.0) > 1.0:
        return best
    return next((i for i, kind in enumerate(kinds or []) if kind == "latency"), 0)


def ratio_text(x: float) -> str:
    """A ratio for a sentence: 1.21, 18, 146 (never 1.5e+02)."""
    return f"{x:.3g}" if x < 10 else f"{x:,.0f}"


# How a finding's text starts what it caps where that is no roof: the useful work of the issue slots, the useful lanes
# per warp instruction (the page then gives its share without a roof: `views.report`).
USEFUL = "the useful "
