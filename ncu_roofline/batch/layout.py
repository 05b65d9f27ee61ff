"""The batch output folder's layout: its file names and the manifest's schema, named once."""

from __future__ import annotations

SCHEMA = "ncu-roofline-batch/1"
MANIFEST = "manifest.json"
INDEX = "index.html"
KERNELS_CSV = "kernels.csv"
KERNELS_PARQUET = "kernels.parquet"
REPORTS_DIR = "reports"
STAGING_DIR = ".staging"  # where the workers write their documents, moved into REPORTS_DIR as each finishes
