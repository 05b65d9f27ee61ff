"""Throughput, parallel speed-up and memory of `ncu-roofline batch` over the shared corpus.

    python benchmarks/bench_batch.py [--repeat N] [--jobs 1,2] [PATH...]

Runs the batch (the library's `run_batch` with the default `AnalysisSettings`, as the command
does, always with `--force`, into a fresh temporary folder) over every top-level report of
`../shared/reports` (or over PATH...) with 1 and with 2 worker processes. Each run happens in
its own Python process, so that its numbers are its own: wall time (best of `--repeat`),
reports/s and kernels/s, the peak resident set size of the batch's parent process
(`RUSAGE_SELF`) and of the largest worker (`RUSAGE_CHILDREN`, collected after the forkserver
and its workers have exited).

Verdict: the speed-up of 2 workers over 1 must be at least 1.7x (PASS/FAIL). The exit status is
0 whatever the verdict, and 2 when there is no corpus.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if (ROOT / "ncu_roofline").is_dir():
    sys.path.insert(0, str(ROOT))  # benchmark this checkout, not whatever is installed

CORPUS = ROOT.parent / "shared" / "reports"
SPEEDUP_TARGET = 1.7


def _kib_to_bytes(rss: int) -> int:
    return rss if sys.platform == "darwin" else rss * 1024  # ru_maxrss is KiB on Linux


def mib(n: float) -> str:
    return f"{n / 2**20:.0f} MiB"


def one_run(jobs: int, specs: list[str]) -> dict[str, Any]:
    """One batch in this process (called in a fresh interpreter by `measure`)."""
    from multiprocessing import forkserver

    from ncu_roofline.batch import run_batch
    from ncu_roofline.settings import AnalysisSettings

    with tempfile.TemporaryDirectory(prefix="bench-batch-") as out:
        started = time.perf_counter()
        result = run_batch(specs, out, AnalysisSettings(), jobs=jobs, force=True)
        wall = time.perf_counter() - started
    stop = getattr(getattr(forkserver, "_forkserver", None), "_stop", None)
    if stop is not None:  # reap the forkserver, so its workers' usage reaches RUSAGE_CHILDREN
        stop()
    return {
        "jobs": jobs,
        "wall_s": wall,
        "reports": len(result.entries),
        "failed": result.failed,
        "kernels": result.kernel_count,
        "parent_maxrss": _kib_to_bytes(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss),
        "children_maxrss": _kib_to_bytes(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss),
        "cpu_children_s": resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
        + resource.getrusage(resource.RUSAGE_CHILDREN).ru_stime,
    }


def measure(jobs: int, specs: list[str]) -> dict[str, Any]:
    """`one_run` in a fresh Python process; its result as a dict."""
    proc = subprocess.run([sys.executable, __file__, "--one", str(jobs), *specs],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"benchmark run failed (jobs={jobs}):\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", help="inputs (default: the corpus's top-level reports)")
    parser.add_argument("--repeat", type=int, default=2, help="runs per setting; the fastest counts")
    parser.add_argument("--jobs", default="1,2", help="worker counts to compare (first = baseline)")
    parser.add_argument("--one", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    specs = args.paths or [str(CORPUS / "*.ncu-rep"), str(CORPUS / "*.nsight-cuprof-report")]
    if args.one is not None:
        print(json.dumps(one_run(args.one, specs)))
        return 0
    if not args.paths and not CORPUS.is_dir():
        print(f"no corpus at {CORPUS}", file=sys.stderr)
        return 2
    print(f"CPUs: {os.cpu_count()}; inputs: {' '.join(specs)}; best of {args.repeat}")
    best: dict[int, dict[str, Any]] = {}
    for jobs in (int(j) for j in args.jobs.split(",")):
        runs = [measure(jobs, specs) for _ in range(max(1, args.repeat))]
        fastest = min(runs, key=lambda r: r["wall_s"])
        fastest["parent_maxrss"] = max(r["parent_maxrss"] for r in runs)
        fastest["children_maxrss"] = max(r["children_maxrss"] for r in runs)
        best[jobs] = fastest
        r = fastest
        walls = ", ".join(f"{x['wall_s']:.2f}" for x in runs)
        print(f"jobs={jobs}: {r['reports']} reports ({r['failed']} failed), {r['kernels']} kernels in "
              f"{r['wall_s']:.2f} s (runs: {walls}) -> "
              f"{r['reports'] / r['wall_s']:.2f} reports/s, {r['kernels'] / r['wall_s']:.1f} kernels/s; "
              f"peak RSS parent {mib(r['parent_maxrss'])}, largest worker {mib(r['children_maxrss'])}")
    counts = sorted(best)
    if len(counts) >= 2:
        base, top = best[counts[0]], best[counts[-1]]
        speedup = base["wall_s"] / top["wall_s"]
        ok = speedup >= SPEEDUP_TARGET
        print(f"speed-up jobs={counts[-1]} vs jobs={counts[0]}: {speedup:.2f}x "
              f"(target >= {SPEEDUP_TARGET}x) {'PASS' if ok else 'FAIL'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
