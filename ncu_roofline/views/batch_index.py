"""The batch index page's view: every report of a batch folder as plain strings and numbers.

`BatchIndex` is the document (the manifest's entries and settings, and whether a Parquet table
was written); `build_batch_index_view` turns it into what `templates/batch_index.html.j2` shows.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from typing import Any

from ..version import __version__
from . import format as F
from .labels import NO_ROOF, ROOF_ORDER, roof_css, short_label
from .wording import count

# Roofs in the busiest-limit mix: the known roofs in their order, then no roof, then any other name.
_MIX_ORDER = {roof: n for n, roof in enumerate((*ROOF_ORDER, NO_ROOF))}


@dataclass(frozen=True)
class BatchIndex:
    """The index page's document: a batch's manifest entries and settings."""

    entries: list[dict[str, Any]]  # the manifest's `reports`, in order
    settings: dict[str, Any]  # the manifest's `settings`
    parquet: bool = False  # whether kernels.parquet was written next to kernels.csv
    schema: str = ""  # the manifest's schema, named on the page
    # the paths the batch did not analyse: the manifest's `skipped` entries, each with its reason's `label`
    skipped: tuple[dict[str, Any], ...] = ()
    parquet_missing: str | None = None  # why kernels.parquet was not written


def skipped_summary(skipped: tuple[dict[str, Any], ...] | list[dict[str, Any]]) -> str:
    """"3 paths skipped (2 not a report, 1 excluded)": the count by reason, most common first."""
    by_reason = Counter(s["label"] for s in skipped)
    parts = ", ".join(f"{n} {label}" for label, n in by_reason.most_common())
    return f"{count(len(skipped), 'path')} skipped ({parts})"


def mix_view(mix: dict[str, int]) -> list[dict[str, Any]]:
    """A busiest-limit mix (roof -> kernel count) as badges and bar segments, in roof order."""
    total = sum(mix.values())
    ordered = sorted(mix.items(), key=lambda rc: (_MIX_ORDER.get(rc[0], len(_MIX_ORDER)), rc[0]))
    return [{"roof": roof, "label": short_label(roof), "count": count, "css": roof_css(roof),
             "width": round(100.0 * count / total, 2) if total else 0}
            for roof, count in ordered]


def without_path(message: str, path: str) -> str:
    """An error message without its leading `path: ` (the page shows the path next to it)."""
    prefix = f"{path}: "
    return message[len(prefix):] if message.startswith(prefix) and len(message) > len(prefix) else message


def _worst_view(worst: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for w in worst:
        full = w.get("demangled_name") or w["name"]
        launches = w.get("launches")
        rows.append({"name": w.get("display_name") or F.short_name(full, 50), "full": full,
                     "group_key": w.get("group_key") or "", "launches": f"{launches:,}" if launches else "",
                     "duration": F.seconds(w["duration_s"]),
                     "bound_label": short_label(w["bound_by"]), "css": roof_css(w["bound_by"]),
                     "utilization": F.pct(w["bound_utilization"]), "regime": w["regime"] or "n/a"})
    return rows


def build_batch_index_view(index: BatchIndex) -> dict[str, Any]:
    """Everything the index template shows, as plain strings and numbers."""
    entries = index.entries
    reports: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    mix_total: Counter[str] = Counter()
    durations: list[float] = []
    for row, e in enumerate(entries, start=1):
        failed = e["status"] != "ok"
        mix = e.get("bound_mix") or {}
        mix_total.update(mix)
        if e.get("total_duration_s") is not None:
            durations.append(e["total_duration_s"])
        reports.append({
            "name": os.path.basename(e["path"]), "shown_path": e["path"], "failed": failed,
            "error": without_path(e.get("error") or "unknown error", e["path"]) if failed else None,
            "html": e.get("html"), "json": e.get("json"),
            "device": e.get("device") or F.NA,
            "kernels": e["kernel_count"] if e.get("kernel_count") is not None else F.NA,
            "groups": e.get("group_count"),
            "unusable": e.get("unusable_kernel_count") or 0,
            "gpu_time": F.seconds(e.get("total_duration_s")), "mix": mix_view(mix),
            "worst": _worst_view(e.get("worst") or []),
            "warnings": [w for w in e.get("warnings") or [] if isinstance(w, str)],
        })
        if failed:
            errors.append({"row": row, "path": e["path"], "error": reports[-1]["error"]})
    ok = sum(1 for e in entries if e["status"] == "ok")
    totals = {
        "reports": len(entries), "ok": ok, "failed": len(entries) - ok,
        "kernels": sum(e.get("kernel_count") or 0 for e in entries),
        "unusable": sum(e.get("unusable_kernel_count") or 0 for e in entries),
        "gpu_time": F.seconds(sum(durations)) if durations else F.NA,
        "mix": mix_view(dict(mix_total)),
    }
    shown_settings = dict(index.settings, threshold_text=F.pct(index.settings["threshold"]))
    title = f"ncu-roofline batch: {count(len(entries), 'report')}"
    return {"title": title, "reports": reports, "errors": errors, "totals": totals,
            "settings": shown_settings, "version": __version__, "schema": index.schema,
            "parquet": index.parquet, "parquet_missing": index.parquet_missing,
            "skipped": [{"path": k["path"], "folder": k["kind"] == "folder", "reason": k["label"],
                         "detail": k["detail"]} for k in index.skipped],
            "skipped_summary": skipped_summary(index.skipped) if index.skipped else ""}
