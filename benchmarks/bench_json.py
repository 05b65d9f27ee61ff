"""Benchmark: the JSON path over the whole shared corpus against the floor.

The floor is a bare `ncu_report` loop that reads every metric of every kernel of every report
(what any tool must at least do); the JSON path is `ncu_roofline.analyze(all reports).to_json()`,
in this process, and the same with `isolate=True`, the reader in child processes
(`readers.isolation`), as every command reads. Each step runs
twice (the better time counts; the first `ncu_report` access in a process pays a one-off start-up
that both share). Prints the ratio (target: within 1.5x of the floor) and the peak memory of each
step, and the cost of the isolation: the same analysis in this process (`isolate=False`), and the
isolated one with a cold start (a fresh reader process, as each command pays once; target: the
isolated path within 10 % of the in-process one).

    python benchmarks/bench_json.py [REPORT_DIR]
"""

from __future__ import annotations

import math
import resource
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DIR = ROOT.parent / "shared" / "reports"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # benchmark this checkout, not whatever is installed
TARGET_RATIO = 1.5


def floor(paths: list[Path]) -> int:
    """Read every metric of every kernel with ncu_report alone; return the kernel count."""
    import ncu_report

    kernels = 0
    for path in paths:
        ctx = ncu_report.load_report(str(path))
        for r in range(ctx.num_ranges()):
            rng = ctx.range_by_idx(r)
            for j in range(rng.num_actions()):
                action = rng.action_by_idx(j)
                action.name()
                for name in action.metric_names():
                    m = action.metric_by_name(name)
                    if m.kind() == 2:
                        m.as_string()
                    else:
                        math.isnan(m.as_double())
                kernels += 1
    return kernels


def json_path(paths: list[Path], isolate: bool = False) -> int:
    import ncu_roofline

    analysis = ncu_roofline.analyze(paths, isolate=isolate)
    return len(analysis.to_json())


def cold_json_path(paths: list[Path]) -> float:
    """The isolated JSON path with a fresh reader process (started inside the timing)."""
    from ncu_roofline.api.analysis import ISOLATED_PRELOAD
    from ncu_roofline.readers.isolation import shared_pool

    shared_pool(ISOLATED_PRELOAD).close()  # the next call starts new reader processes
    start = time.perf_counter()
    json_path(paths, isolate=True)
    return time.perf_counter() - start


def timed(fn: Callable[[], Any]) -> tuple[float, int, Any]:
    """Best of two runs, and the traced peak memory of the second."""
    first = time.perf_counter()
    fn()
    one = time.perf_counter() - first
    tracemalloc.start()
    start = time.perf_counter()
    result = fn()
    two = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return min(one, two), peak, result


def main(argv: list[str]) -> int:
    folder = Path(argv[1]) if len(argv) > 1 else DEFAULT_DIR
    paths = sorted(p for p in folder.glob("*") if p.suffix in (".ncu-rep", ".nsight-cuprof-report"))
    if not paths:
        print(f"bench_json: no reports in {folder} (the shared corpus is expected there)", file=sys.stderr)
        return 2
    floor_s, floor_peak, kernels = timed(lambda: floor(paths))
    local_s, local_peak, size = timed(lambda: json_path(paths))
    cold_s = cold_json_path(paths)  # starts the reader processes that the next step reuses
    ours_s, ours_peak, _ = timed(lambda: json_path(paths, isolate=True))
    ratio = ours_s / floor_s
    print(f"{len(paths)} reports, {kernels} kernels, JSON {size:,} bytes")
    print(f"{'step':<34} {'seconds':>8} {'x floor':>8} {'peak traced MiB':>16}")
    print(f"{'floor: bare ncu_report metric loop':<34} {floor_s:>8.3f} {1:>8.2f} {floor_peak / 2**20:>16.1f}")
    print(f"{'ncu-roofline analyze + to_json':<34} {local_s:>8.3f} {local_s / floor_s:>8.2f} "
          f"{local_peak / 2**20:>16.1f}")
    print(f"{'  isolated (as the commands read)':<34} {ours_s:>8.3f} {ratio:>8.2f} {ours_peak / 2**20:>16.1f}")
    print(f"{'  isolated, fresh reader process':<34} {cold_s:>8.3f} {cold_s / floor_s:>8.2f} {'':>16}")
    warm, cold = ours_s / local_s - 1, cold_s / local_s - 1
    print(f"isolation cost: {warm:+.1%} warm, {cold:+.1%} with the reader's start "
          f"(target: within 10 %: {'PASS' if cold <= 0.10 else 'FAIL'})")
    print(f"process peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    print(f"target: within {TARGET_RATIO}x of the floor: {'PASS' if ratio <= TARGET_RATIO else 'FAIL'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
