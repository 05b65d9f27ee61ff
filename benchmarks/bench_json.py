"""Benchmark: the JSON path over the whole shared corpus against the floor.

The floor is a bare `ncu_report` loop that reads, for each kernel, only what the analysis reads
of it (what any tool reading those same values must pay). Which metrics that is, per kernel, is
found once before the timing, untimed: each report is analysed in this process
(`api.analysis.analyze_report`) and each kernel detached (`readers.ncu_rep.detach`), as the
isolated reader's child process does; the metrics a kernel then keeps are those the analysis read
(the launch and device metrics of its identity among them), keyed by (range index, action index
within the range), the order `readers.ncu_rep.read_ncu_rep` walks a report in. The timed floor
then does, per report, `ncu_report.load_report`, walks every range and action, and per action
reads: its name (plain, demangled and mangled), its NVTX ranges (every domain's name, push/pop
and start/end ranges), its rule results (`rule_results_as_dicts()`, which the JSON writes), and
each of its metric names with `metric_by_name` (a missing one skipped) and the value
(`as_string()` for a string metric, kind 2, else `as_double()`). It does not read units, nor
`metric_names()` (the reader lists every name of each action for its lazy mapping; a tool that
knows which metrics it wants needs no list).

The JSON path is `ncu_roofline.analyze(all reports, keep_metrics=False).to_json()`, in this process,
and the same with `isolate=True`, the reader in child processes (`readers.isolation`), as `report`
reads (it keeps no raw metrics once a kernel is analysed: none cross the process boundary). The
steps take turns, five rounds (each step's best time counts; the first `ncu_report` access in a
process pays a one-off start-up that both share, and the machine's speed swings between runs).
Prints the ratio (target: within 1.3x of the floor), how many metrics per kernel the floor reads
against how many the reports hold, and the peak memory of each step, and the cost of the isolation:
the same analysis in this process (`isolate=False`), and the isolated one with a cold start (a fresh
reader process, as each command pays once; target: the isolated path within 10 % of the in-process
one).

    python benchmarks/bench_json.py [REPORT_DIR]
"""

from __future__ import annotations

import gc
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
TARGET_RATIO = 1.3
REPEATS = 5


# Per report: (range index, action index in the range) -> the metric names the analysis read.
Plan = list[tuple[Path, dict[tuple[int, int], tuple[str, ...]]]]


def metrics_read(paths: list[Path]) -> tuple[Plan, int, int]:
    """What the analysis reads of each kernel (untimed): the plan, its metric count, the reports' count."""
    from ncu_roofline.api.analysis import analyze_report
    from ncu_roofline.readers.ncu_rep import detach

    plan: Plan = []
    read = held = 0
    for path in paths:
        report = analyze_report(path)
        names: dict[tuple[int, int], tuple[str, ...]] = {}
        in_range: dict[int, int] = {}  # actions seen so far in each range: the reader's order
        for kernel in report.kernels:
            raw = kernel.raw
            held += len(raw.metrics)  # the lazy mapping's length: every metric the action holds
            detach(raw)  # keeps only the metrics read so far: those the analysis read
            j = in_range.get(raw.range_index, 0)
            in_range[raw.range_index] = j + 1
            names[(raw.range_index, j)] = tuple(raw.metrics)
            read += len(raw.metrics)
        plan.append((path, names))
    return plan, read, held


def _nvtx(action: Any) -> None:
    state = action.nvtx_state()
    if state is None:
        return
    for dom_id in state.domains():
        dom = state.domain_by_id(dom_id)
        dom.name()
        for r in dom.push_pop_ranges():
            str(r)
        for r in dom.start_end_ranges():
            str(r)


def floor(plan: Plan) -> int:
    """Read, with ncu_report alone, what the analysis reads of each kernel; return the kernel count."""
    import ncu_report

    demangled, mangled = ncu_report.IAction.NameBase_DEMANGLED, ncu_report.IAction.NameBase_MANGLED
    kernels = 0
    for path, names in plan:
        ctx = ncu_report.load_report(str(path))
        for r in range(ctx.num_ranges()):
            rng = ctx.range_by_idx(r)
            for j in range(rng.num_actions()):
                action = rng.action_by_idx(j)
                action.name()
                action.name(demangled)
                action.name(mangled)
                _nvtx(action)
                try:  # noqa: SIM105 - no context manager per kernel in the floor
                    action.rule_results_as_dicts()
                except Exception:  # as the reader: a kernel whose rules cannot be read has none
                    pass
                for name in names.get((r, j), ()):
                    m = action.metric_by_name(name)
                    if m is None:
                        continue
                    if m.kind() == 2:
                        m.as_string()
                    else:
                        m.as_double()
                kernels += 1
    return kernels


def json_path(paths: list[Path], isolate: bool = False) -> int:
    import ncu_roofline

    # keep_metrics=False, as `report` analyses: nothing after the analysis reads the raw metrics.
    analysis = ncu_roofline.analyze(paths, isolate=isolate, keep_metrics=False)
    return len(analysis.to_json())


def cold_json_path(paths: list[Path]) -> float:
    """The isolated JSON path with a fresh reader process (started inside the timing)."""
    from ncu_roofline.api.analysis import ISOLATED_PRELOAD
    from ncu_roofline.readers.isolation import shared_pool

    shared_pool(ISOLATED_PRELOAD).close()  # the next call starts new reader processes
    start = time.perf_counter()
    json_path(paths, isolate=True)
    return time.perf_counter() - start


def traced(fn: Callable[[], Any]) -> tuple[int, Any]:
    """One run under tracemalloc (untimed: tracing slows it): its peak traced memory, and its result."""
    tracemalloc.start()
    result = fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak, result


def interleaved(steps: list[Callable[[], Any]]) -> list[float]:
    """Each step's best time of `REPEATS` rounds, the steps taking turns within each round: this
    machine's speed swings over seconds, and taking turns lets every step meet the same swings."""
    best = [float("inf")] * len(steps)
    for _ in range(REPEATS):
        for i, fn in enumerate(steps):
            gc.collect()  # the last step's garbage is not collected in this one's time
            start = time.perf_counter()
            fn()
            best[i] = min(best[i], time.perf_counter() - start)
    return best


def main(argv: list[str]) -> int:
    folder = Path(argv[1]) if len(argv) > 1 else DEFAULT_DIR
    paths = sorted(p for p in folder.glob("*") if p.suffix in (".ncu-rep", ".nsight-cuprof-report"))
    if not paths:
        print(f"bench_json: no reports in {folder} (the shared corpus is expected there)", file=sys.stderr)
        return 2
    plan, read, held = metrics_read(paths)  # untimed: what the analysis reads of each kernel
    floor_peak, kernels = traced(lambda: floor(plan))
    local_peak, size = traced(lambda: json_path(paths))
    cold_s = cold_json_path(paths)  # starts the reader processes that the steps below reuse
    ours_peak, _ = traced(lambda: json_path(paths, isolate=True))
    floor_s, local_s, ours_s = interleaved([lambda: floor(plan), lambda: json_path(paths),
                                            lambda: json_path(paths, isolate=True)])
    ratio = ours_s / floor_s
    print(f"{len(paths)} reports, {kernels} kernels, JSON {size:,} bytes")
    per_read, per_held = read / max(kernels, 1), held / max(kernels, 1)
    print(f"floor reads {per_read:.0f} metrics per kernel on average, of {per_held:.0f} the reports hold "
          f"({read / max(held, 1):.1%}), plus names, NVTX ranges and rule results")
    print(f"{'step':<34} {'seconds':>8} {'x floor':>8} {'peak traced MiB':>16}")
    print(f"{'floor: ncu_report, metrics read':<34} {floor_s:>8.3f} {1:>8.2f} {floor_peak / 2**20:>16.1f}")
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
