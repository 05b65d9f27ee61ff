"""Throughput, parallel speed-up and memory of `ncu-roofline batch` over the shared corpus.

    python benchmarks/bench_batch.py [--repeat N] [--jobs 1,2] [PATH...]
    python benchmarks/bench_batch.py --dask [--links 300] [--repeat N] [PATH...]

Runs the batch (the library's `run_batch` with the default `AnalysisSettings`, as the command
does, always with `--force`, into a fresh temporary folder) over every top-level report of
`../shared/reports` (or over PATH...) with 1 and with 2 worker processes. Each run happens in
its own Python process, so that its numbers are its own: wall time (best of `--repeat`),
reports/s and kernels/s, the peak resident set size of the batch's parent process
(`RUSAGE_SELF`) and of the largest worker (`RUSAGE_CHILDREN`, collected after the forkserver
and its workers have exited).

Verdict: the speed-up of 2 workers over 1 must be at least 1.7x (PASS/FAIL). The exit status is
0 whatever the verdict, and 2 when there is no corpus.

`--dask` compares, in the same run, the local batch with `--jobs 2` (`--dask-jobs`) against the
same batch on a 2-worker Dask `LocalCluster` (`DaskRunner()`, cluster start-up included),
alternating the two, and prints the overhead ratio (Dask wall time / local wall time; target
<= 1.15x). `--links N` runs over N hard links to the inputs (cycling over them; made in a
temporary folder on the same file system, removed at the end), e.g. `--dask --links 300` for
the fleet-sized run; without it the inputs are used as they are (a short run).
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
DASK_OVERHEAD_TARGET = 1.15


def _kib_to_bytes(rss: int) -> int:
    return rss if sys.platform == "darwin" else rss * 1024  # ru_maxrss is KiB on Linux


def mib(n: float) -> str:
    return f"{n / 2**20:.0f} MiB"


def one_run(jobs: int, specs: list[str], dask: bool = False) -> dict[str, Any]:
    """One batch in this process (called in a fresh interpreter by `measure`); `dask`: on a LocalCluster."""
    from multiprocessing import forkserver

    from ncu_roofline.batch import DaskRunner, run_batch
    from ncu_roofline.settings import AnalysisSettings

    with tempfile.TemporaryDirectory(prefix="bench-batch-") as out:
        started = time.perf_counter()
        runner = DaskRunner() if dask else None
        result = run_batch(specs, out, AnalysisSettings(), jobs=jobs, force=True, runner=runner)
        wall = time.perf_counter() - started
    stop = getattr(getattr(forkserver, "_forkserver", None), "_stop", None)
    if stop is not None:  # reap the forkserver, so its workers' usage reaches RUSAGE_CHILDREN
        stop()
    return {
        "jobs": jobs,
        "dask": dask,
        "wall_s": wall,
        "reports": len(result.entries),
        "failed": result.failed,
        "kernels": result.kernel_count,
        "parent_maxrss": _kib_to_bytes(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss),
        "children_maxrss": _kib_to_bytes(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss),
        "cpu_children_s": resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
        + resource.getrusage(resource.RUSAGE_CHILDREN).ru_stime,
    }


def measure(jobs: int, specs: list[str], dask: bool = False) -> dict[str, Any]:
    """`one_run` in a fresh Python process; its result as a dict."""
    proc = subprocess.run([sys.executable, __file__, "--one", str(jobs), *(["--one-dask"] if dask else []),
                           "--", *specs], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"benchmark run failed (jobs={jobs}, dask={dask}):\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def make_links(specs: list[str], count: int, folder: Path) -> list[str]:
    """`count` hard links in `folder` to the reports of `specs`, cycling over them (no copies).

    Hard links, not symbolic ones: a batch takes each real file once, and symbolic links to one
    file all resolve to it.
    """
    from ncu_roofline.batch.inputs import find_inputs

    sources = [p for p in find_inputs(specs).paths if os.path.isfile(p)]
    if not sources:
        raise SystemExit(f"no report to link to in {' '.join(specs)}")
    for i in range(count):
        src = sources[i % len(sources)]
        try:
            os.link(src, folder / f"{i:04d}-{os.path.basename(src)}")
        except OSError as exc:
            raise SystemExit(f"cannot hard-link {src} into {folder} ({exc.strerror or exc}); set TMPDIR to a "
                             "folder on the reports' file system") from exc
    return [str(folder)]


def line(label: str, r: dict[str, Any], runs: list[dict[str, Any]]) -> str:
    walls = ", ".join(f"{x['wall_s']:.2f}" for x in runs)
    return (f"{label}: {r['reports']} reports ({r['failed']} failed), {r['kernels']} kernels in "
            f"{r['wall_s']:.2f} s (runs: {walls}) -> "
            f"{r['reports'] / r['wall_s']:.2f} reports/s, {r['kernels'] / r['wall_s']:.1f} kernels/s; "
            f"peak RSS parent {mib(r['parent_maxrss'])}, largest "
            f"{'Dask worker process (its report children not counted)' if r['dask'] else 'worker'} "
            f"{mib(r['children_maxrss'])}")


def fastest(runs: list[dict[str, Any]]) -> dict[str, Any]:
    best = dict(min(runs, key=lambda r: r["wall_s"]))
    best["parent_maxrss"] = max(r["parent_maxrss"] for r in runs)
    best["children_maxrss"] = max(r["children_maxrss"] for r in runs)
    return best


def dask_overhead(jobs: int, specs: list[str], repeat: int) -> None:
    """Local `--jobs N` against an N-worker LocalCluster, alternating; prints the overhead ratio."""
    local: list[dict[str, Any]] = []
    dask: list[dict[str, Any]] = []
    for _ in range(max(1, repeat)):
        local.append(measure(jobs, specs))
        dask.append(measure(jobs, specs, dask=True))
    best_local, best_dask = fastest(local), fastest(dask)
    print(line(f"local jobs={jobs}", best_local, local))
    print(line(f"dask LocalCluster workers={jobs}", best_dask, dask))
    ratio = best_dask["wall_s"] / best_local["wall_s"]
    ok = ratio <= DASK_OVERHEAD_TARGET
    print(f"Dask overhead: {ratio:.3f}x the local batch ({best_dask['wall_s'] - best_local['wall_s']:+.2f} s; "
          f"target <= {DASK_OVERHEAD_TARGET}x) {'PASS' if ok else 'FAIL'}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", help="inputs (default: the corpus's top-level reports)")
    parser.add_argument("--repeat", type=int, default=2, help="runs per setting; the fastest counts")
    parser.add_argument("--jobs", default="1,2", help="worker counts to compare (first = baseline)")
    parser.add_argument("--dask", action="store_true", help="local batch vs a Dask LocalCluster instead")
    parser.add_argument("--dask-jobs", type=int, default=2, help="workers on both sides of --dask")
    parser.add_argument("--links", type=int, default=0, metavar="N", help="run over N hard links to the inputs")
    parser.add_argument("--one", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--one-dask", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    specs = args.paths or [str(CORPUS / "*.ncu-rep"), str(CORPUS / "*.nsight-cuprof-report")]
    if args.one is not None:
        print(json.dumps(one_run(args.one, specs, dask=args.one_dask)))
        return 0
    if not args.paths and not CORPUS.is_dir():
        print(f"no corpus at {CORPUS}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="bench-batch-links-") as links:
        if args.links > 0:
            specs = make_links(specs, args.links, Path(links))
            shown = f"{args.links} hard links in {links}"
        else:
            shown = " ".join(specs)
        print(f"CPUs: {os.cpu_count()}; inputs: {shown}; best of {args.repeat}")
        if args.dask:
            dask_overhead(args.dask_jobs, specs, args.repeat)
            return 0
        best: dict[int, dict[str, Any]] = {}
        for jobs in (int(j) for j in args.jobs.split(",")):
            runs = [measure(jobs, specs) for _ in range(max(1, args.repeat))]
            best[jobs] = fastest(runs)
            print(line(f"jobs={jobs}", best[jobs], runs))
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
