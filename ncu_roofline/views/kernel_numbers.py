"""A kernel's numbers on the page: its quantities with the recipe of each, and what its memory roofs' points
count beside the units Nsight Compute measured at the same level."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..knowledge import recipes as R
from ..knowledge import throughputs as T
from . import format as F
from .labels import short_label

if TYPE_CHECKING:
    from ..api.kernel import AnalysedKernel


def quantity_rows(k: AnalysedKernel) -> list[dict[str, str]]:
    """The kernel's quantities with the recipe that produced each (or why it is missing)."""
    rows: list[dict[str, str]] = []
    q = k.q

    def add(label: str, value: str, key: str) -> None:
        rows.append({"quantity": label, "value": value, "recipe": k.provenance.get(key, "")})

    add("Duration", F.seconds(q.duration_s.value if q.duration_s else None), "duration_s")
    for p in (*R.PRECISIONS, "tensor"):
        v = q.flop.get(p)
        add(f"{short_label(p)} work", F.si(v.value if v else None, "FLOP"), f"work_flop.{p}")
    for lv in R.LEVELS:
        v = q.bytes.get(lv)
        definition = f" ({v.definition})" if v is not None and v.definition else ""
        add(f"{short_label(lv)} bytes{definition}", F.si(v.value if v else None, "B"), f"traffic_bytes.{lv}")
        for fewer in q.set_aside.get(lv, ()):
            rows.append({"quantity": f"{short_label(lv)} bytes ({fewer.definition or 'counts'}): set aside, fewer than "
                                     "the level below", "value": F.si(fewer.value, "B"), "recipe": fewer.recipe})
    for lv in R.LEVELS:
        v = k.peaks.get(lv)
        add(f"{short_label(lv)} roof", F.si(v.value if v else None, "B/s"), f"peaks.{lv}")
    for p in R.PRECISIONS:
        v = k.peaks.get(p)
        add(f"{short_label(p)} roof", F.si(v.value if v else None, "FLOP/s"), f"peaks.{p}")
    for dp, v in sorted(k.tensor_peaks.items()):
        add(f"Tensor roof {dp}", F.si(v.value, "FLOP/s"), f"peaks.tensor.{dp}")
    return rows


# A memory roof's point this far below a unit of its level that Nsight Compute measured is worth a sentence.
ROOF_BELOW_UNIT = 1.25


def roof_unit_notes(k: AnalysedKernel) -> list[str]:
    """Per memory roof whose point sits well below a unit that counts its level's traffic as Nsight Compute
    measured it (an L2 point of the SMs' sectors at 15 % beside L2's tag sectors at 30 %): what the two count.
    The verdict takes the busier of all limits; the sentence says why the chart's point is the lower one."""
    notes = []
    for lv in R.LEVELS:
        point, measured = k.utilization.get(lv), k.q.bytes.get(lv)
        if point is None or not point > 0 or measured is None:
            continue
        # units that count the level's traffic (sectors, bytes), not a composite such as lts__throughput (the
        # busiest of its sub-units: tag look-ups, banks, atomics)
        # (the L2-to-L1 returns show under L1 on the chart, but count L2's misses to L1, not L1's own traffic)
        related = [u for uid, u in k.units.items()
                   if T.related_roof(uid) == lv and ("sectors" in uid or "bytes" in uid) and "fill" not in uid
                   and "xbar2l1tex" not in uid]
        unit = max(related, key=lambda u: u.share, default=None)
        if unit is None or not unit.share > ROOF_BELOW_UNIT * point:
            continue
        what = f" ({measured.note})" if measured.note else ""
        peak = k.provenance.get(f"peaks.{lv}")
        over = f" over {peak}" if peak else ""
        # the roof's peak read from the unit's own counter (a share stored for lts__t_sectors) is that unit's peak
        against = " against one peak" if peak and f"{unit.id}." in peak else " against different peaks"
        notes.append(f"{short_label(lv)}: the roof's point, {F.pct(point)}, is {measured.recipe}{what}{over}; "
                     f"Nsight Compute's {unit.label} is at {F.pct(unit.share)} of its own peak "
                     f"({unit.share / point:.2g}× the point): the two count different traffic{against}, and the "
                     "verdict weighs both")
    return notes
