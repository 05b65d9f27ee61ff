"""Batch analysis: many reports in, one folder out (index page, per-report pages, tidy kernel table).

One module per step, each importing only those below it:

- `layout.py`: the output folder's file names and the manifest schema.
- `inputs.py`: files, folders and glob patterns expanded into report paths, less what `--exclude`
  matches, and every path found and not analysed (`Skipped`, with its reason); `safe_name`,
  `file_sha256`.
- `job.py`: the unit of work, `analyse_one(path, settings)`: one report in; a small picklable
  dict out (its JSON and HTML texts, kernel rows and a summary). It never raises, so it maps
  directly onto any distributed engine (`map` over paths, then concatenate the rows).
- `workers.py`: `run_isolated`, each report in a worker of the reader pool (`readers.isolation`),
  so a crash of the native reader or a hang (timeout) costs only that report.
- `dask_task.py`, `dask_run.py`: `DaskRunner`, which runs the reports on a Dask cluster instead
  (`run_batch(..., runner=DaskRunner(address))`), each task still reading its report in a child
  process on the worker (optional: needs the `dask` extra).
- `manifest.py`: `manifest.json`, and which reports a re-run may reuse (same file content,
  same settings, outputs still there).
- `parquet.py`: `kernels.parquet` with one fixed schema, so that many runs read as one table.
- `outputs.py`: `kernels.csv`, `kernels.parquet`, `index.html` (reports, skipped paths, why a
  Parquet file is missing) and the manifest, written atomically.
- `run.py`: `run_batch`, which does all of the above.

The index page itself is `views/batch_index.py` (its data) and `render/batch_index.py` (its HTML).
"""

from __future__ import annotations

from .dask_run import DaskRunner, DaskUnavailable
from .job import analyse_one
from .run import DEFAULT_TIMEOUT_S, BatchEvent, BatchResult, BatchUsageError, run_batch

__all__ = ["DEFAULT_TIMEOUT_S", "BatchEvent", "BatchResult", "BatchUsageError", "DaskRunner", "DaskUnavailable",
           "analyse_one", "run_batch"]
