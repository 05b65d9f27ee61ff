"""Where `report -f json` spends its CPU time at scale: reading, the model, the passes, the output.

    python benchmarks/bench_stages.py [--launches 50000] [--names 300] [--csv EXPORT]

Builds the same raw-page CSV as `bench_scale.py` (the 5 kernels of a full-set capture repeated
under `--names` names), then measures in one fresh process each:

- baseline: `pandas.read_csv` of the file (the best of three reads, as `bench_scale.py` takes it);
- `report` cut into its stages: reading the rows (the CSV reader's iterator), the model
  (`build_kernel_model`: recipes, unit throughputs, launch facts, the verdict, its parts timed
  too), each analysis pass, and grouping plus encoding the JSON document (written to /dev/null, so
  the file system's cost is left out).

Each stage is timed with `time.process_time` around its call (eight timed calls a launch, each
adding a microsecond or two: about 1 % of the total), with Python's cyclic collector paused as
`report` pauses it. The figures
are CPU seconds and ratios against the baseline: what a bulk model or a faster reader would have
to remove for `report -f json` to reach its target (≤ 1.5× the baseline, `bench_scale.py`).
Exit status 0; 2 when the capture is missing.
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
from ncu_roofline.api import kernel as K
from ncu_roofline.api.analysis import Analysis, ReportResult
from ncu_roofline.model import roofline as MR
from ncu_roofline.readers import open_report
from ncu_roofline.settings import AnalysisSettings

spent = collections.Counter()
def timed(module, name, key):
    call = getattr(module, name)
    def wrapper(*args, **kwargs):
        started = time.process_time()
        try:
            return call(*args, **kwargs)
        finally:
            spent[key] += time.process_time() - started
    setattr(module, name, wrapper)
for name in ("compute_quantities", "unit_throughputs", "launch_facts"):
    timed(MR, name, "model: " + name)
timed(K, "build_kernel_model", "model")
for name in ("counter_facts", "analyse_ceilings", "diagnose", "instruction_roofline"):
    timed(K, name, "pass: " + name)

settings = AnalysisSettings()
start = time.process_time()
opened = open_report(sys.argv[1])
rows, kernels, raws = iter(opened.kernels), [], []
while True:
    t = time.process_time()
    raw = next(rows, None)
    spent["read"] += time.process_time() - t
    if raw is None:
        break
    kernels.append(K.analyse_kernel(raw, settings))
    raws.append(raw)
    raw.metrics = {}
done = opened.finish(raws)
opened.close()
analysed = time.process_time() - start
report = ReportResult(done.path, done.source_format, done.ncu_version, kernels, list(done.warnings))
t = time.process_time()
with open(os.devnull, "wb") as sink:
    for piece in Analysis([report], []).json_bytes():
        sink.write(piece)
spent["output: groups and JSON encoding"] = time.process_time() - t
spent["analysis, other"] = analysed - sum(v for k, v in spent.items() if not k.startswith(("model: ", "output")))
json.dump({"launches": len(kernels), "stages": dict(spent)}, sys.stdout)
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
    launches = result["launches"]
    total = sum(v for k, v in stages.items() if not k.startswith("model: "))
    print(f"{launches:,} launches; pandas.read_csv CPU s of {BASELINE_READS} reads: "
          f"{', '.join(f'{r[0]:.2f}' for r in reads)} (baseline {base:.2f} s)\n")
    print(f"{'stage':<44}{'CPU s':>8}{'x pandas':>10}{'µs/launch':>11}{'share':>8}")
    for key, value in sorted(stages.items(), key=lambda kv: (kv[0].startswith("model: "), -kv[1])):
        label = ("  " + key) if key.startswith("model: ") else key
        print(f"{label:<44}{value:>8.2f}{value / base:>9.2f}x{1e6 * value / max(launches, 1):>11.0f}"
              f"{value / total:>8.0%}")
    print(f"{'total (the model parts are within model)':<44}{total:>8.2f}{total / base:>9.2f}x"
          f"{1e6 * total / max(launches, 1):>11.0f}")
    print(f"\n`report -f json` target: ≤ 1.5x the baseline = {1.5 * base:.1f} s of CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
