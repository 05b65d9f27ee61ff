"""One analysed kernel: the roofline model plus what the analysis passes found.

This is where the model and the passes meet, above both, so neither imports the other:
`model/` builds the `KernelModel`, `passes/` read it, and `analyse_kernel` joins the results.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..model.ranges import FIGURE_LIMIT, past_range, past_range_reason
from ..model.roofline import DEFAULT_SETTINGS, KernelModel, build_kernel_model, made_unusable
from ..passes.ceilings import Ceiling, NotApplicable, analyse_ceilings
from ..passes.diagnosis import diagnose
from ..passes.facts import FACTS, counter_facts
from ..passes.finding import Finding
from ..passes.instruction_roofline import instruction_roofline
from ..passes.rules_comparison import rules_fields
from ..passes.where import attach_where
from ..readers.record import RawKernel
from ..settings import AnalysisSettings


@dataclass
class AnalysedKernel(KernelModel):
    """Everything reported for one kernel."""

    ceilings: list[Ceiling] = field(default_factory=list)
    diagnosis: list[Finding] = field(default_factory=list)
    reuse: dict[str, float] = field(default_factory=dict)
    instruction_roofline: dict[str, Any] | None = None
    not_applicable: list[NotApplicable] = field(default_factory=list)
    precision_options: list[dict[str, Any]] = field(default_factory=list)
    passes_missing: int = 0  # how many of `missing` the passes added (the last ones)

    def to_dict(self, redact: bool = False, unit_recipes: Mapping[str, str] | None = None,
                findings: bool = True) -> dict[str, Any]:
        """The kernel as the `ncu-roofline/5` JSON contract writes it (`unit_recipes`: see `KernelModel`).

        `findings=False`: the launch's numbers and verdict only (a report analysed by group, `FINDINGS_BY_GROUP`):
        no ceilings, diagnosis, reuse or rules, which its group holds from its longest launch.
        """
        d = super().to_dict(redact, unit_recipes)
        if not findings:
            return d
        d["ceilings"] = [c.to_dict() for c in self.ceilings]
        d["diagnosis"] = [f.to_dict(redact) for f in self.diagnosis]
        d["reuse"] = dict(self.reuse)
        d["instruction_roofline"] = self.instruction_roofline
        d["ceilings_not_applicable"] = [n.to_dict() for n in self.not_applicable]
        d["precision_options"] = [dict(o) for o in self.precision_options]
        rules = self.rules()
        d["nsight_compute_rules"] = rules
        d |= rules_fields(self.diagnosis, rules, self.regime, self.not_applicable, self.limiter_share, self.ceilings)
        return d

    def rules(self) -> list[dict[str, Any]]:
        """Nsight Compute's own rule results, those with the largest estimated speed-up first."""
        found = [r.to_dict() for r in self.raw.rules]
        return sorted(found, key=lambda r: (r["speedup_pct"] is None, -(r["speedup_pct"] or 0.0), r["rule"]))


def model_launch(raw: RawKernel, settings: AnalysisSettings = DEFAULT_SETTINGS) -> AnalysedKernel:
    """One launch's numbers and verdict: the model, without the passes (`run_passes` adds them)."""
    model = build_kernel_model(raw, settings)
    facts = counter_facts(raw)
    past = None if not model.usable or sum(abs(f) for f in facts if f is not None) <= FIGURE_LIMIT else past_range(
        [(f"the counter {n}", v, "") for n, v in zip(FACTS, facts, strict=True) if v is not None])
    if past is not None:
        model = made_unusable(model, past_range_reason(*past))
    model.facts = facts
    return AnalysedKernel(**{f.name: getattr(model, f.name) for f in dataclasses.fields(KernelModel)})


def run_passes(k: AnalysedKernel) -> AnalysedKernel:
    """Every pass over a launch's model, in place: ceilings, diagnosis, where in the code, Instruction Roofline
    (its metrics must still be at hand)."""
    found = analyse_ceilings(k)
    k.diagnosis = attach_where(diagnose(k, found.ceilings, found.reuse), k.raw.instructions)
    k.instruction_roofline = instruction_roofline(k)
    k.missing = [*k.missing, *found.missing]  # after the passes, which read the model's own
    k.passes_missing = len(found.missing)
    k.ceilings, k.reuse = found.ceilings, found.reuse
    k.not_applicable, k.precision_options = found.not_applicable, found.precision_options
    return k


def analyse_kernel(raw: RawKernel, settings: AnalysisSettings = DEFAULT_SETTINGS) -> AnalysedKernel:
    """Model one kernel, then run every pass over the model."""
    return run_passes(model_launch(raw, settings))
