"""Writing a batch's folder: the kernel tables, the index page and, last, the manifest.

Every file is written atomically (a temporary file renamed into place), so a reader never sees
a partial file, and the manifest is written last, so it only ever lists outputs that exist.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..render import BATCH_INDEX, render
from ..render.csv import rows_to_csv
from ..render.output import write_atomic
from ..views.batch_index import BatchIndex
from .inputs import REASON_LABELS
from .layout import INDEX, KERNELS_CSV, KERNELS_PARQUET, MANIFEST, REPORTS_DIR, SCHEMA
from .manifest import manifest_json
from .parquet import pyarrow_missing, write_parquet


def render_index(entries: list[dict[str, Any]], settings: dict[str, Any], *, parquet: bool = False,
                 skipped: Sequence[Mapping[str, Any]] = (), parquet_missing: str | None = None) -> str:
    """The self-contained `index.html` (inline CSS, autoescaped, no script): the reports, the paths the batch
    skipped and why `kernels.parquet` is missing, so that the page says everything standard error did."""
    shown = tuple(dict(s, label=REASON_LABELS.get(s["reason"], s["reason"])) for s in skipped)
    return render(BATCH_INDEX, BatchIndex(entries, settings, parquet=parquet, schema=SCHEMA, skipped=shown,
                                          parquet_missing=parquet_missing), "html")


def remove_dropped(out: Path, entries: list[dict[str, Any]], old: dict[str, Any]) -> None:
    """Remove the per-report files that the previous manifest listed and `entries` do not."""
    keep = {e[k] for e in entries for k in ("json", "html") if e.get(k)}
    for e in old.get("reports", []):
        for k in ("json", "html"):
            rel = e.get(k) if isinstance(e, dict) else None
            if (isinstance(rel, str) and rel not in keep and rel.startswith(f"{REPORTS_DIR}/")
                    and "/" not in rel[len(REPORTS_DIR) + 1:] and (out / rel).is_file()):
                (out / rel).unlink()


def write_outputs(out: Path, entries: list[dict[str, Any]], rows: list[dict[str, Any]],
                  settings: dict[str, Any], old: dict[str, Any] | None = None, *,
                  skipped: Sequence[Mapping[str, Any]] = ()) -> str | None:
    """Write `kernels.csv`, `kernels.parquet`, `index.html` and, last, `manifest.json`.

    `kernels.parquet` has one fixed schema (`parquet.py`), and is written even without a kernel,
    so that the tables of many runs read as one. Where pyarrow cannot be imported it is not
    written (and a stale one removed); the index page and the manifest say why.

    `settings` is the manifest's settings block (`manifest.settings_for`); `skipped` the paths
    the inputs held and the batch did not analyse (`inputs.Skipped.as_dict()`), listed in the
    index page and the manifest. Per-report files that the previous manifest (`old`) listed and
    this one does not are removed. Returns why `kernels.parquet` was not written, None when it was.
    """
    write_atomic(out / KERNELS_CSV, rows_to_csv(rows), force=True)
    missing = pyarrow_missing()
    if missing is None:
        write_parquet(rows, out / KERNELS_PARQUET)  # also without rows: fixed schema
    elif (out / KERNELS_PARQUET).exists():
        (out / KERNELS_PARQUET).unlink()  # stale: from a run that had pyarrow
    write_atomic(out / INDEX, render_index(entries, settings, parquet=missing is None, skipped=skipped,
                                           parquet_missing=missing), force=True)
    write_atomic(out / MANIFEST, manifest_json(entries, settings, skipped=skipped, parquet_missing=missing),
                 force=True)
    if old is not None:
        remove_dropped(out, entries, old)
    return missing
