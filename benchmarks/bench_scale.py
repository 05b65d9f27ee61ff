"""`report` at 50,000 launches from an `ncu --csv --page raw` export: CPU time and peak memory.

    python benchmarks/bench_scale.py [--launches 50000] [--names 300] [--repeat 3] [--csv EXPORT]
                                     [--memory-launches 200000] [--memory-csv EXPORT]

The CSV repeats the 5 kernels of a real full-set capture (`gpu-workshop__MW_Baseline.ncu-rep`,
every metric it holds) under `--names` distinct kernel names, written the way `ncu --csv --page
raw` writes (tests/ncu_csv_writer.py: quoted cells, auto-scaled units, thousands separators). It
is built in a temporary folder that is removed at the end.

Measured in the same run, each in a fresh process (CPU time = user + system, peak memory = that
child's own maximum resident set, from `os.wait4`), from bytecode caches as an installed package runs
(`CHILD_ENV`, `compile_package`), each step `--repeat` times (3 by default), the
steps taking turns round by round, the best CPU time counting for every step alike: a shared machine's speed
swings by 20-40 % between runs (the read's system time with the page cache too), and taking turns and one
estimator for both sides of a ratio keep it fair. Every run's time is printed; peak memory is the largest of a
step's runs.

- baseline: `pandas.read_csv` of the same file (what reading it at all costs);
- `ncu-roofline report big.csv -f json` and `-f html`.

Ratios against the baseline are printed with the targets (JSON ≤ 1.5×, HTML ≤ 2×, page ≤ 10 MB).
With `--memory-launches N`, an export of N launches is built too and `report -f json` of it run once:
its peak memory against 1 GB and against 1.2× the peak of the first export's JSON step. Exit status 0
whatever the verdicts; 2 when the capture is missing.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT.parent / "shared" / "reports" / "gpu-workshop__MW_Baseline.ncu-rep"
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(ROOT / "tests"))  # ncu_csv_writer
TARGETS = {"json": 1.5, "html": 2.0}
MEMORY_BUDGET = 1e9
MEMORY_GROWTH = 1.2  # the larger export's peak, at most this many times the first one's
PAGE_BUDGET = 10e6
BASELINE_READS = 3  # the default of --repeat (bench_stages.py takes the baseline the same way)


def build_csv(launches: int, names: int, path: Path) -> None:
    from ncu_csv_writer import write_ncu_csv

    from ncu_roofline.readers import read_report
    from ncu_roofline.readers.record import Metric, RawReport

    raws = read_report(SOURCE).kernels
    materialised = [dataclasses.replace(k, metrics={n: m for n, m in k.metrics.items() if isinstance(m, Metric)},
                                        rules=()) for k in raws]
    kernels = []
    for i in range(launches):
        raw, j = materialised[i % len(materialised)], i % names
        name = f"layer{j}_{raw.name}"
        kernels.append(dataclasses.replace(raw, index=i, name=name,
                                           demangled_name=f"void ns::{name}<{j % 7}>(float *, int)"))
    write_ncu_csv(RawReport("big.csv", "csv", kernels), path, prof_lines=False)  # as `ncu --import --csv` writes


def export_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of a benchmark over `build_csv`'s export: its size, or an export built earlier."""
    parser.add_argument("--launches", type=int, default=50_000)
    parser.add_argument("--names", type=int, default=300)
    parser.add_argument("--csv", type=Path, help="measure this export instead of building one")


@contextlib.contextmanager
def export_of(args: argparse.Namespace, prefix: str) -> Iterator[Path]:
    """The export `export_arguments` named (`--csv`), or one built in a temporary folder removed afterwards."""
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        path = args.csv or Path(tmp) / "big.csv"
        if args.csv is None:
            build_csv(args.launches, args.names, path)
        yield path


# Every step runs from bytecode caches, as an installed package runs: where the shell sets PYTHONDONTWRITEBYTECODE
# (some containers do), `report` would compile the package's source in every run (about 0.2 s), which pandas, compiled
# when pip installed it, never pays. The package is compiled once before the timing (`compile_package`).
CHILD_ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


def compile_package() -> None:
    """Write the package's bytecode caches (its `__pycache__` folders, which git ignores), untimed. Where they cannot
    be written (a read-only checkout), says so: each timed run then compiles the package too."""
    done = subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "ncu_roofline")], env=CHILD_ENV,
                          check=False, capture_output=True, text=True)
    if done.returncode != 0:
        why = (done.stdout + done.stderr).strip().splitlines()
        print(f"bytecode caches not written ({why[-1] if why else f'exit status {done.returncode}'}): "
              "each timed run compiles the package too", file=sys.stderr)


def measure(argv: list[str]) -> tuple[float, float, float, float, int]:
    """(CPU seconds, peak resident bytes, wall seconds, system CPU seconds, minor page faults) of one child
    process (its own figures)."""
    started = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, cwd=ROOT, env=CHILD_ENV)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise subprocess.CalledProcessError(child.returncode, argv)
    return (usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024.0, wall,  # ru_maxrss in KiB
            usage.ru_stime, usage.ru_minflt)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    export_arguments(parser)
    parser.add_argument("--repeat", type=int, default=BASELINE_READS, help="runs of each step (the best counts)")
    parser.add_argument("--memory-launches", type=int, default=0,
                        help="also measure the peak memory of `report -f json` at this many launches")
    parser.add_argument("--memory-csv", type=Path, help="that larger export (one an earlier run built) instead")
    args = parser.parse_args(argv)
    repeat = max(1, args.repeat)
    if args.csv is None and not SOURCE.is_file():
        print(f"capture not found: {SOURCE}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="ncu-roofline-scale-") as tmp:
        csv_path = args.csv or Path(tmp) / "big.csv"
        started = time.perf_counter()
        if args.csv is None:
            build_csv(args.launches, args.names, csv_path)
            print(f"{args.launches:,} launches of {args.names} kernels: {csv_path.stat().st_size / 1e6:,.0f} MB of "
                  f"CSV (built in {time.perf_counter() - started:.1f} s)")
        else:
            print(f"{csv_path}: {csv_path.stat().st_size / 1e6:,.0f} MB of CSV")
        py = sys.executable
        compile_package()
        # The steps take turns, round by round, so that a slower phase of the machine falls on each alike (the
        # read's system time swings with the page cache: 2.8 to 7.5 s of it seen on one file).
        steps = {"read": [py, "-c", "import sys, pandas; pandas.read_csv(sys.argv[1], low_memory=False)",
                          str(csv_path)]}
        for fmt in ("json", "html"):
            steps[fmt] = [py, "-m", "ncu_roofline", "report", str(csv_path), "-f", fmt, "-o",
                          str(Path(tmp) / f"out.{fmt}"), "--force"]
        taken: dict[str, list[tuple[float, float, float, float, int]]] = {step: [] for step in steps}
        for _ in range(repeat):
            for step, command in steps.items():
                taken[step].append(measure(command))
        reads = taken["read"]
        base_cpu, base_mem = min(reads)[0], max(r[1] for r in reads)
        print(f"pandas.read_csv CPU s of {repeat} reads: {', '.join(f'{r[0]:.2f}' for r in reads)}")
        print(f"\n{'step':<38}{'CPU s':>9}{'x pandas':>10}{'peak MB':>10}{'target':>10}")
        print(f"{'baseline: pandas.read_csv':<38}{base_cpu:>9.2f}{1.0:>9.2f}x{base_mem / 1e6:>10.0f}{'':>10}")
        peak = 0.0  # of the report steps (the baseline's own peak is printed above)
        json_peak = 0.0
        for fmt in ("json", "html"):
            out = Path(tmp) / f"out.{fmt}"
            runs = taken[fmt]
            cpu, _, _, system, faults = min(runs)
            mem = max(r[1] for r in runs)
            peak = max(peak, mem)
            if fmt == "json":
                json_peak = mem
            print(f"report -f {fmt} CPU s of {repeat} runs: {', '.join(f'{r[0]:.2f}' for r in runs)}")
            ratio = cpu / base_cpu if base_cpu else float("inf")
            verdict = "PASS" if ratio <= TARGETS[fmt] else "FAIL"
            print(f"{'report -f ' + fmt:<38}{cpu:>9.2f}{ratio:>9.2f}x{mem / 1e6:>10.0f}"
                  f"{f'≤ {TARGETS[fmt]:g}x':>8} {verdict}   ({out.stat().st_size / 1e6:.1f} MB written; "
                  f"{system:.2f} s of it in the kernel, {faults:,} page faults)")
            if fmt == "html":
                size = out.stat().st_size
                print(f"page size {size / 1e6:.1f} MB, budget {PAGE_BUDGET / 1e6:g} MB: "
                      f"{'PASS' if size <= PAGE_BUDGET else 'FAIL'}")
        print(f"peak memory of a report step {peak / 1e9:.2f} GB, budget {MEMORY_BUDGET / 1e9:g} GB: "
              f"{'PASS' if peak <= MEMORY_BUDGET else 'FAIL'}")
        if args.memory_launches or args.memory_csv:
            big = args.memory_csv or Path(tmp) / "bigger.csv"
            if args.memory_csv is None:
                build_csv(args.memory_launches, args.names, big)
            out = Path(tmp) / "bigger.json"
            _, mem, *_ = measure([py, "-m", "ncu_roofline", "report", str(big), "-f", "json", "-o", str(out),
                                  "--force"])
            growth = mem / json_peak if json_peak else float("inf")
            ok = mem <= MEMORY_BUDGET and growth <= MEMORY_GROWTH
            size = big.stat().st_size / 1e6
            named = f"{args.memory_launches:,} launches" if args.memory_launches else "the larger export"
            print(f"{named} ({size:,.0f} MB of CSV): report -f json "
                  f"peak {mem / 1e9:.2f} GB, {growth:.2f}x the first export's (budget {MEMORY_BUDGET / 1e9:g} GB "
                  f"and {MEMORY_GROWTH:g}x): {'PASS' if ok else 'FAIL'}")
    os.sync()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
