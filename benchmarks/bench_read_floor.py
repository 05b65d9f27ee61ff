"""What reading only the columns the analysis uses costs with each tokenizer at hand, against `pandas.read_csv`.

    python benchmarks/bench_read_floor.py [--launches 50000] [--names 300] [--repeat 3] [--csv EXPORT]

The export is `bench_scale.py`'s (or `--csv`). Each step runs in a fresh process, `--repeat` times taking turns, and
its best CPU time (user + system, `os.wait4`) counts, as in `bench_scale.py`:

- baseline: `pandas.read_csv` of the whole file;
- pandas, only the analysis's columns: the identity columns and the metric columns the knowledge tables name
  (`readers.csv_export.analysis_columns`), units row skipped, thousands separators read (`thousands=","`);
- pyarrow's streaming CSV reader, one thread, the same columns as text (`include_columns`: every cell is still
  tokenized, only those are kept);
- polars (where it is installed: not a dependency), one thread, the same columns as text, and those columns with
  their thousands separators dropped and cast to numbers (Rust's tokenizer, the compiled candidate for a reader
  that keeps only the columns it reads);
- this package's row scan (`CsvExport._lines_read`): every line read, the quotes of every run of all-quoted rows
  found at once, no cell parsed.

Each of them still splits every cell of every row, so the smallest is what any reader built on it pays before a
number is parsed or a launch modelled: the ratio the rest of `report -f json` has left under its 1.5× target
(`bench_scale.py`). Exit status 0; 2 when the capture is missing.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(ROOT / "benchmarks"))

_COLUMNS = """
import csv, sys
from ncu_roofline.readers.csv_export import analysis_columns
from ncu_roofline.readers.csv_header import is_metric_column
with open(sys.argv[1], newline="") as fh:
    header = next(csv.reader(fh))
wanted = analysis_columns()
columns = list(dict.fromkeys(n for n in header if not is_metric_column(n) or n in wanted))
"""

STEPS = {
    "baseline: pandas.read_csv, every column": (
        "import sys, pandas; pandas.read_csv(sys.argv[1], low_memory=False)"),
    "pandas, the analysis's columns": _COLUMNS + (
        "import pandas\npandas.read_csv(sys.argv[1], usecols=columns, skiprows=[1], thousands=',', low_memory=False)"),
    "pyarrow stream, those columns as text": _COLUMNS + (
        "import pyarrow as pa, pyarrow.csv as pc\n"
        "reader = pc.open_csv(sys.argv[1], read_options=pc.ReadOptions(use_threads=False, block_size=1 << 24),\n"
        "    convert_options=pc.ConvertOptions(include_columns=columns,\n"
        "                                      column_types={n: pa.string() for n in columns}))\n"
        "for batch in reader:\n    pass"),
    "polars, those columns as text": _COLUMNS + (
        "import os\nos.environ['POLARS_MAX_THREADS'] = '1'\nimport polars as pl\n"
        "pl.read_csv(sys.argv[1], columns=columns, infer_schema=False, skip_rows_after_header=1)"),
    "polars, those columns as numbers": _COLUMNS + (
        "import os\nos.environ['POLARS_MAX_THREADS'] = '1'\nimport polars as pl\n"
        "frame = pl.read_csv(sys.argv[1], columns=columns, infer_schema=False, skip_rows_after_header=1)\n"
        "frame.select(pl.all().str.replace_all(',', '', literal=True).cast(pl.Float64, strict=False))"),
    "this package's row scan (no cell parsed)": (
        "import sys\nfrom ncu_roofline.readers.csv_export import CsvExport\n"
        "for _ in CsvExport(sys.argv[1])._lines_read():\n    pass"),
}


def _has_polars() -> bool:
    import importlib.util

    return importlib.util.find_spec("polars") is not None


def main(argv: list[str]) -> int:
    from bench_scale import SOURCE, compile_package, export_arguments, export_of, measure

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    export_arguments(parser)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each step (the best counts)")
    args = parser.parse_args(argv)
    if args.csv is None and not SOURCE.is_file():
        print(f"capture not found: {SOURCE}", file=sys.stderr)
        return 2
    compile_package()
    with export_of(args, "ncu-roofline-floor-") as csv_path:
        steps = {step: code for step, code in STEPS.items() if "polars" not in step or _has_polars()}
        runs: dict[str, list[float]] = {step: [] for step in steps}
        for _ in range(max(1, args.repeat)):
            for step, code in steps.items():
                runs[step].append(measure([sys.executable, "-c", code, str(csv_path)])[0])
        size = csv_path.stat().st_size
    best = {step: min(times) for step, times in runs.items()}
    base = next(iter(best.values()))
    print(f"{csv_path}: {size / 1e6:,.0f} MB\n")
    print(f"{'step':<46}{'CPU s':>8}{'x pandas':>10}   runs")
    for step, value in best.items():
        print(f"{step:<46}{value:>8.2f}{value / base:>9.2f}x   {', '.join(f'{t:.2f}' for t in runs[step])}")
    floor = min(v for step, v in best.items() if not step.startswith("baseline"))
    print(f"\nthe smallest read of the analysis's columns: {floor / base:.2f}x; what `report -f json` has left for "
          f"parsing, the model, groups and output under its 1.5x target: {1.5 - floor / base:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
