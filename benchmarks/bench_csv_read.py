"""Reading the columns the analysis uses from a large export: chunked readers against the whole-file read.

    python benchmarks/bench_csv_read.py [--launches 50000] [--names 300] [--csv EXPORT] [--repeat 3]

The export is `bench_scale.py`'s (the 5 kernels of a full-set capture repeated under `--names`
names, every metric it holds, written as `ncu --csv --page raw` writes). Measured in the same run,
each in a fresh process (CPU time = user + system, peak memory = the child's maximum resident set),
the best of `--repeat` runs:

- baseline: `pandas.read_csv` of the whole file (what `bench_scale.py` compares `report` with);
- pandas in chunks of 4,096 rows, only the analysis columns (`readers.csv_export.analysis_columns`)
  and the identity ones, numbers with thousands separators parsed (`thousands=","`);
- pyarrow's streaming reader (`pyarrow.csv.open_csv`, one thread), the same columns as text, then
  each column made numbers (separators removed, cast to float64) where every cell is one;
- the tool's own reader (`readers.open_report`), each row's analysis columns read as numbers:
  what `report` pays to read before it models anything.

These are the candidates for a columnar read; the figures say what a bulk reader costs against
the whole-file baseline. Exit status 0; 2 when the capture is missing.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(ROOT / "benchmarks"))

COLUMNS = r"""
import csv, sys
from ncu_roofline.readers.csv_export import analysis_columns
from ncu_roofline.readers.csv_header import IDENTITY_COLUMNS
with open(sys.argv[1], newline="") as fh:
    header = next(csv.reader(fh))
wanted = analysis_columns()
USED = [c for c in header if c in wanted or c in IDENTITY_COLUMNS]
"""

STEPS = {
    "pandas, whole file": "import sys, pandas; pandas.read_csv(sys.argv[1], low_memory=False)",
    "pandas chunks, analysis columns": COLUMNS + r"""
import pandas
rows = 0
for chunk in pandas.read_csv(sys.argv[1], usecols=USED, skiprows=[1], thousands=",", chunksize=4096,
                             low_memory=False):
    rows += len(chunk)
print(rows)
""",
    "pyarrow stream, analysis columns": COLUMNS + r"""
import pyarrow as pa, pyarrow.compute as pc, pyarrow.csv as pcsv
read = pcsv.ReadOptions(use_threads=False, block_size=1 << 23, skip_rows_after_names=1)
convert = pcsv.ConvertOptions(include_columns=USED, column_types={c: pa.string() for c in USED})
rows = 0
with pcsv.open_csv(sys.argv[1], read_options=read, convert_options=convert) as reader:
    for batch in reader:
        for column in batch.columns:
            try:
                pc.cast(pc.replace_substring(column, ",", ""), pa.float64())
            except pa.ArrowInvalid:  # text: a name, a triple, a label
                pass
        rows += batch.num_rows
print(rows)
""",
    "ncu-roofline reader, analysis columns": COLUMNS + r"""
from ncu_roofline.readers import open_report
opened = open_report(sys.argv[1])
metrics = [c for c in USED if c not in IDENTITY_COLUMNS]
rows = 0
for raw in opened.kernels:
    get = raw.metrics.get
    for name in metrics:
        get(name)
    rows += 1
opened.close()
print(rows)
""",
}


def main(argv: list[str]) -> int:
    from bench_scale import SOURCE, compile_package, export_arguments, export_of, measure

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    export_arguments(parser)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    if args.csv is None and not SOURCE.is_file():
        print(f"capture not found: {SOURCE}", file=sys.stderr)
        return 2
    with export_of(args, "ncu-roofline-read-") as csv_path:
        print(f"{csv_path.name}: {csv_path.stat().st_size / 1e6:,.0f} MB; CPU s, best of {args.repeat}")
        results = {}
        compile_package()  # each step runs from bytecode caches (bench_scale.CHILD_ENV)
        for _ in range(args.repeat):  # the steps take turns: a slow minute of the machine hits them alike
            for label, code in STEPS.items():
                cpu, peak, *_ = measure([sys.executable, "-c", code, str(csv_path)])  # raises if the step fails
                best = results.get(label)
                results[label] = (min(cpu, best[0]) if best else cpu, max(peak, best[1]) if best else peak)
    base = results["pandas, whole file"][0]
    print(f"{'step':<40}{'CPU s':>8}{'x pandas':>10}{'peak MB':>9}")
    for label, (cpu, peak) in results.items():
        print(f"{label:<40}{cpu:>8.2f}{cpu / base:>9.2f}x{peak / 1e6:>9.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
