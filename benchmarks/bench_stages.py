"""Where `report -f json` spends its CPU time at scale: reading, the model, grouping, records, the output.

    python benchmarks/bench_stages.py [--launches 50000] [--names 300] [--csv EXPORT]

Builds the same raw-page CSV as `bench_scale.py` (the 5 kernels of a full-set capture repeated
under `--names` names), or measures `--csv`, then in one fresh process each:

- baseline: `pandas.read_csv` of the file (the best of three reads, as `bench_scale.py` takes it);
- `report`'s analysis as `report` runs it (`api.analysis.analyze_report`, by group above 1,000 launches), cut
  into its stages: reading the rows (time spent in the CSV reader's iterator), the launches modelled one at a
  time (the first, from which the reader learns the columns to parse at once; every launch and its passes in a
  report of up to 1,000), the bulk model of the others (`model_block`: its runs over
  columns and their checks), adding each block of launches (`add_block`: its group sums from each run's
  columns, its groups' longest launches and their passes, its records from each run's template), the
  groups' verdicts and findings (`GroupMaker.groups`), and encoding the JSON document (written to
  /dev/null, so the file system's cost is left out).

Each stage is timed with `time.process_time` around its calls (a few a launch, each adding about a
microsecond), with Python's cyclic collector paused as `report` pauses it. The figures are CPU seconds and
ratios against the baseline: what each stage would have to lose for `report -f
json` to reach its target (≤ 1.5× the baseline, `bench_scale.py`). Exit status 0; 2 when the capture is
missing.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(ROOT / "benchmarks"))

STAGES = r"""
import collections, gc, json, os, sys, time
gc.disable()
from ncu_roofline.api import analysis as A
from ncu_roofline.api import blocks as B
from ncu_roofline.api import groups as G
from ncu_roofline.settings import AnalysisSettings

spent = collections.Counter()
def timed(owner, name, key):
    call = getattr(owner, name)
    def wrapper(*args, **kwargs):
        started = time.process_time()
        try:
            return call(*args, **kwargs)
        finally:
            spent[key] += time.process_time() - started
    setattr(owner, name, wrapper)

class Timed:
    # the opened report, its kernels iterator timed
    def __init__(self, opened):
        self._opened = opened
    def __getattr__(self, name):
        return getattr(self._opened, name)
    @property
    def kernels(self):
        rows = iter(self._opened.kernels)
        while True:
            started = time.process_time()
            row = next(rows, None)
            spent["read"] += time.process_time() - started
            if row is None:
                return
            yield row

opened_report = A.open_report
A.open_report = lambda *args: Timed(opened_report(*args))
timed(A, "model_launch", "model, one launch at a time (the first)")
timed(A, "run_passes", "passes, one launch at a time (by group: the first)")
timed(A, "model_block", "model, a block of launches at a time (bulk)")
timed(A, "add_block", "blocks added: sums, longest launches, records")
timed(B, "add_rows", "  of it: group sums from a run's columns")
timed(B, "_longest", "  of it: longest launches and their passes")
timed(B, "_template", "  of it: record templates made and checked")
timed(B.RecordTemplate, "records", "  of it: records joined from templates")
timed(G.GroupMaker, "groups", "groups: verdicts and findings")

settings = AnalysisSettings()
start = time.process_time()
report = A.analyze_report(sys.argv[1], settings, keep_metrics=False)
analysed = time.process_time() - start
t = time.process_time()
with open(os.devnull, "wb") as sink:
    for piece in A.Analysis([report], [], settings).json_bytes():
        sink.write(piece)
spent["output: JSON encoding"] = time.process_time() - t
nested = [k for k in spent if k.startswith("  ")]  # parts of the stage before them
whole = sum(v for k, v in spent.items() if k not in nested and not k.startswith("output"))
spent["analysis, other (the loop, the reader's last word)"] = analysed - whole
json.dump({"launches": report.launch_count, "stages": dict(spent), "nested": nested}, sys.stdout)
"""


def main(argv: list[str]) -> int:
    from bench_scale import BASELINE_READS, SOURCE, export_arguments, export_of, measure

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    export_arguments(parser)
    args = parser.parse_args(argv)
    if args.csv is None and not SOURCE.is_file():
        print(f"capture not found: {SOURCE}", file=sys.stderr)
        return 2
    with export_of(args, "ncu-roofline-stages-") as csv_path:
        py = sys.executable
        reads = [measure([py, "-c", "import sys, pandas; pandas.read_csv(sys.argv[1], low_memory=False)",
                          str(csv_path)]) for _ in range(BASELINE_READS)]
        base = min(reads)[0]
        found = subprocess.run([py, "-c", STAGES, str(csv_path)], capture_output=True, text=True, check=True,
                               cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    import json

    result = json.loads(found.stdout)
    stages: dict[str, float] = result["stages"]
    nested = set(result["nested"])  # parts of the stage listed before them
    launches = result["launches"]
    total = sum(v for k, v in stages.items() if k not in nested)
    print(f"{launches:,} launches; pandas.read_csv CPU s of {BASELINE_READS} reads: "
          f"{', '.join(f'{r[0]:.2f}' for r in reads)} (baseline {base:.2f} s)\n")
    print(f"{'stage':<52}{'CPU s':>8}{'x pandas':>10}{'µs/launch':>11}{'share':>8}")
    order = [k for k in stages if k not in nested]
    order.sort(key=lambda k: -stages[k])
    shown = []
    for key in order:  # each stage, its parts after it
        shown.append(key)
        if key.startswith("blocks"):
            shown += [k for k in stages if k in nested]
    for key in shown:
        value, label = stages[key], key
        print(f"{label:<52}{value:>8.2f}{value / base:>9.2f}x{1e6 * value / max(launches, 1):>11.0f}"
              f"{value / total:>8.0%}")
    print(f"{'total':<52}{total:>8.2f}{total / base:>9.2f}x"
          f"{1e6 * total / max(launches, 1):>11.0f}")
    print(f"\n`report -f json` target: ≤ 1.5x the baseline = {1.5 * base:.1f} s of CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
