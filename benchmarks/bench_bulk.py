"""The bulk model (`api.bulk.model_launches`) against modelling each launch alone, on the same export.

    python benchmarks/bench_bulk.py [--launches 10000] [--drift 0.02] [--independent] [--report NAME]
                                    [--csv EXPORT] [--repeat 3]

Builds a raw-page CSV export (tests/ncu_csv_writer.py, as `ncu --csv --page raw` writes) whose launches cycle
through the kernels of one shared capture (`--report`, by default the full-set `gpu-workshop__MW_Baseline`),
each launch drifting by a seeded draw of up to `--drift` as launches of one kernel do (longer, with its cycles;
its rates and shares lower; its DRAM traffic a little different; its work the same), or with every counter
moved on its own (`--independent`, a harsher test); or measures `--csv`. Then, in this process, `--repeat`
times each (the best counts; each pass reads the export afresh, so neither side finds the other's parsed
cells): the rows' model one launch at a time (`model_launch`), and the same rows `BULK_ROWS` at a time
(`model_launches`, as `report` models a report of more than 1,000 launches, in blocks of its rows' text).
The reading is not timed.
Prints µs a launch of each, their ratio, how the bulk runs went (runs over columns, launches made from them,
launches modelled alone), and checks that both give the same launches (exit status 1 where they do not; 2
where the capture is missing).
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "reports"
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(ROOT / "tests"))  # ncu_csv_writer


def _factor(name: str, slower: float, drift: float, draw: random.Random, coherent: bool) -> float:
    """How much a launch's counter moves from its kernel's capture. Coherent (as launches of one kernel differ): the
    launch runs `slower` times as long, its elapsed cycles with it and its rates and shares the other way, its DRAM
    traffic moves by up to a quarter of the drift, and its work counts stay. Else each counter on its own."""
    if not coherent:
        return 1 + draw.uniform(-drift, drift)
    if "per_second" in name or "pct" in name or "per_cycle_elapsed" in name:
        return 1 / slower
    if "time_duration" in name or "cycles_elapsed" in name or "cycles_active" in name:
        return slower
    if name.startswith(("dram__", "fbpa__")):
        return 1 + draw.uniform(-drift / 4, drift / 4)
    return 1.0


def build(source: Path, launches: int, drift: float, coherent: bool, path: Path) -> None:
    from ncu_csv_writer import write_ncu_csv

    from ncu_roofline.readers import read_report_isolated
    from ncu_roofline.readers.record import Metric, RawReport

    kernels = read_report_isolated(source).kernels
    draw = random.Random(11)
    out = []
    for i in range(launches):
        k = kernels[i % len(kernels)]
        slower = 1 + draw.uniform(0, drift)
        metrics = {n: Metric(m.value * _factor(n, slower, drift, draw, coherent), m.unit)
                   if "__" in n and not n.startswith(("device__", "launch__", "breakdown:")) and type(m.value) is float
                   else m for n, m in k.metrics.items()}
        out.append(dataclasses.replace(k, index=i, metrics=metrics, rules=()))
    write_ncu_csv(RawReport("bench", "csv", out), path, prof_lines=False)


def rows(path: Path) -> list[object]:
    """The export's rows, the first one modelled and its passes run (as `report` reads: its analysis teaches the
    reader which columns to parse at once)."""
    from ncu_roofline.api.kernel import model_launch, run_passes
    from ncu_roofline.readers.csv_export import CsvExport

    read = CsvExport(path).kernels()
    first = next(read)
    run_passes(model_launch(first))
    return list(read)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--launches", type=int, default=10_000)
    parser.add_argument("--drift", type=float, default=0.02)
    parser.add_argument("--independent", action="store_true",
                        help="move every counter on its own (a harsher test than launches of one kernel give)")
    parser.add_argument("--report", default="gpu-workshop__MW_Baseline.ncu-rep")
    parser.add_argument("--csv", type=Path, help="measure this export instead of building one")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    from ncu_roofline.api.bulk import BULK_ROWS, BulkTally, model_launches
    from ncu_roofline.api.kernel import model_launch
    from ncu_roofline.settings import AnalysisSettings

    settings = AnalysisSettings()
    gc.disable()  # as `report` runs the analysis
    with tempfile.TemporaryDirectory(prefix="ncu-roofline-bulk-") as tmp:
        path = args.csv or Path(tmp) / "drift.csv"
        if args.csv is None:
            source = CORPUS / args.report
            if not source.is_file():
                print(f"capture not found: {source}", file=sys.stderr)
                return 2
            build(source, args.launches, args.drift, not args.independent, path)
            how = "every counter on its own" if args.independent else "each launch as a whole"
            print(f"{args.launches:,} launches of {args.report}'s kernels, drifting by up to {args.drift:.0%} "
                  f"({how}): {path.stat().st_size / 1e6:,.0f} MB of CSV")
        alone_s, bulk_s = [], []
        tally = BulkTally()
        same = True
        for _ in range(max(1, args.repeat)):
            one = rows(path)
            started = time.process_time()
            alone = [model_launch(k, settings) for k in one]  # type: ignore[arg-type]
            alone_s.append(time.process_time() - started)
            other = rows(path)
            tally = BulkTally()
            started = time.process_time()
            bulk = []
            for s in range(0, len(other), BULK_ROWS):
                bulk += model_launches(other[s:s + BULK_ROWS], settings, tally)  # type: ignore[arg-type]
            bulk_s.append(time.process_time() - started)
            same = same and [k.to_dict(findings=False) for k in alone] == [k.to_dict(findings=False) for k in bulk]
        n = len(alone)
        best_alone, best_bulk = min(alone_s), min(bulk_s)
        print(f"{n:,} launches modelled, CPU s of {len(alone_s)} passes: one at a time "
              f"{', '.join(f'{t:.2f}' for t in alone_s)}; bulk {', '.join(f'{t:.2f}' for t in bulk_s)}")
        print(f"one launch at a time: {best_alone / n * 1e6:7.1f} µs a launch")
        print(f"bulk ({BULK_ROWS:,} at a time): {best_bulk / n * 1e6:7.1f} µs a launch = "
              f"{best_bulk / best_alone:.2f}x of one at a time")
        print(f"bulk runs: {tally.runs} over columns gave {tally.columns:,} launches; {tally.single:,} modelled alone "
              f"({tally.unequal:,} of them for a run whose check failed)")
        print("same launches: " + ("yes" if same else "NO"))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
