"""Nsight Compute's own rule results for one kernel: its findings and estimated speed-ups, read lazily.

`ncu_report`'s `IAction.rule_results_as_dicts()` gives, per rule, its identifier, name, section,
a message (title, text, type) and, for some, the focus metrics and a speed-up estimate (a
percentage of the kernel's time, global or local). They are the user's own report's content and
are kept as written.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

from .strings import text

# Nsight Compute's link markup in rule messages, as its GUI shows it: a section link reads as the
# section's name, a web link as "label (address)".
_SECTION_LINK = re.compile(r"@section:[^:@]*:([^@]*)@")
_URL_LINK = re.compile(r"@url:([^:@]*):([^@\s]+)@")
# ncu_report.MsgType: NONE 0, OK 1, OPTIMIZATION 2, WARNING 3, ERROR 4 (a rule that could not run,
# e.g. "Metric launch__block_size not found", is an ERROR).
MESSAGE_TYPES = {0: "info", 1: "info", 2: "optimization", 3: "warning", 4: "error"}
SPEEDUP_TYPES = {1: "global", 2: "local"}


@dataclass(frozen=True)
class RuleResult:
    """One rule result of Nsight Compute, as the report holds it."""

    rule: str
    name: str
    section: str
    title: str
    message: str
    severity: str
    speedup_pct: float | None = None  # Nsight Compute's estimate, in % of the kernel's time
    speedup_kind: str | None = None   # "global" or "local", as Nsight Compute labels it
    focus_metrics: tuple[tuple[str, float | None, str], ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        return {"rule": self.rule, "name": self.name, "section": self.section, "title": self.title,
                "message": self.message, "severity": self.severity, "speedup_pct": self.speedup_pct,
                "speedup_kind": self.speedup_kind,
                "focus_metrics": [{"name": n, "value": v, "info": i} for n, v, i in self.focus_metrics]}


def _number(value: Any) -> float | None:
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def rule_from_dict(d: dict[str, Any]) -> RuleResult:
    """One entry of `rule_results_as_dicts()`; unknown or missing fields become empty, never an error."""
    raw_msg, raw_estimate = d.get("rule_message"), d.get("speedup_estimation")
    msg: dict[str, Any] = raw_msg if isinstance(raw_msg, dict) else {}
    estimate: dict[str, Any] = raw_estimate if isinstance(raw_estimate, dict) else {}
    focus = []
    for f in d.get("focus_metrics") or []:
        if isinstance(f, dict):
            focus.append((text(f.get("name")), _number(f.get("value")), text(f.get("info"))))
    message = _URL_LINK.sub(r"\1 (\2)", _SECTION_LINK.sub(r"\1", text(msg.get("message"))))
    kind, speedup_kind = msg.get("type", 0), estimate.get("type", 0)
    return RuleResult(text(d.get("rule_identifier")), text(d.get("name")), text(d.get("section_identifier")),
                      text(msg.get("title")), message,
                      MESSAGE_TYPES.get(kind, "info") if isinstance(kind, int) else "info",
                      _number(estimate.get("speedup")),
                      SPEEDUP_TYPES.get(speedup_kind) if isinstance(speedup_kind, int) else None, tuple(focus))


class ActionRules(Sequence[RuleResult]):
    """The rule results of one profiled kernel, read from the report when first asked for."""

    def __init__(self, action: Any) -> None:
        self._action = action
        self._rules: list[RuleResult] | None = None

    def _load(self) -> list[RuleResult]:
        if self._rules is None:
            try:
                found = self._action.rule_results_as_dicts() or []
            except Exception:
                found = []
            self._rules = [rule_from_dict(d) for d in found if isinstance(d, dict)]
        return self._rules

    @overload
    def __getitem__(self, index: int) -> RuleResult: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[RuleResult]: ...

    def __getitem__(self, index: int | slice) -> RuleResult | Sequence[RuleResult]:
        return self._load()[index]

    def __len__(self) -> int:
        return len(self._load())

    def __iter__(self) -> Iterator[RuleResult]:
        return iter(self._load())
