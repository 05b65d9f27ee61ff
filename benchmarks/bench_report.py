"""Time the pipeline on a 154-kernel capture, relative to the raw read measured in the same run.

    python benchmarks/bench_report.py [REPORT.ncu-rep]

Steps, each the best of 3 runs (`time.perf_counter`):

- baseline: `ncu_roofline.readers.read_report` (the raw read of the file);
- analyse: `ncu_roofline.analyze` (reads the file again, then models every kernel);
- JSON, CSV and HTML rendering of that analysis;
- end to end: read + analyse + HTML render, as the `report` command does.

Then the HTML size (budget 3 MB), the end-to-end time (budget "a few seconds" = 5 s), the
tracemalloc peak of one HTML render and the process's peak resident set size. Verdicts are
printed as PASS/FAIL; the exit status is 0 whatever they are, and 2 when the report is missing.
"""

from __future__ import annotations

import copy
import dataclasses
import resource
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if (ROOT / "ncu_roofline").is_dir():
    sys.path.insert(0, str(ROOT))  # benchmark this checkout, not whatever is installed

DEFAULT_REPORT = ROOT.parent / "shared" / "reports" / "self-join-mistic__profile.ncu-rep"
REPEATS = 3
HTML_BUDGET_BYTES = 3_000_000
END_TO_END_BUDGET_S = 5.0


def best_of(fn: Callable[[], Any], repeats: int = REPEATS) -> tuple[float, float, Any]:
    """(best seconds, first-run seconds, last result) over `repeats` calls."""
    times: list[float] = []
    result: Any = None
    for _ in range(repeats):
        started = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - started)
    return min(times), times[0], result


def peak_rss_bytes() -> int:
    """The process's peak resident set size (ru_maxrss is KiB on Linux, bytes on macOS)."""
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss if sys.platform == "darwin" else rss * 1024


def mib(n: float) -> str:
    return f"{n / 2**20:.1f} MiB"


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def main(argv: list[str]) -> int:
    report = Path(argv[1]) if len(argv) > 1 else DEFAULT_REPORT
    if not report.is_file():
        print(f"bench_report: report not found: {report}\n"
              f"(the shared corpus is expected at {DEFAULT_REPORT.parent}; or pass a report path)",
              file=sys.stderr)
        return 2

    import ncu_roofline
    from ncu_roofline.readers import read_report
    from ncu_roofline.render import RENDERERS, REPORT, RenderOptions

    html = RENDERERS[REPORT]["html"].render

    raw_best, raw_first, raw = best_of(lambda: read_report(report))
    analyse_best, analyse_first, analysis = best_of(lambda: ncu_roofline.analyze([report]))
    rows: list[tuple[str, float, float]] = [
        ("read_report (baseline)", raw_best, raw_first),
        ("analyze (read + model)", analyse_best, analyse_first),
    ]
    outputs: dict[str, str] = {}
    for name in ("json", "csv", "html"):
        best, first, text = best_of(lambda name=name: RENDERERS[REPORT][name].render(analysis, RenderOptions()))
        outputs[name] = text
        rows.append((f"render {name}", best, first))
    e2e_best, e2e_first, _ = best_of(lambda: html(ncu_roofline.analyze([report]), RenderOptions()))
    rows.append(("end to end (analyze + html)", e2e_best, e2e_first))

    tracemalloc.start()
    html(analysis, RenderOptions())
    _, html_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()

    html_bytes = len(outputs["html"].encode("utf-8"))
    print(f"report: {report.name} ({report.stat().st_size:,} bytes, {len(raw.kernels)} kernels), "
          f"ncu-roofline {ncu_roofline.__version__}, Python {sys.version.split()[0]}, best of {REPEATS}")
    print()
    width = max(len(r[0]) for r in rows)
    print(f"{'step':<{width}}  {'best s':>9}  {'x baseline':>10}  {'first s':>9}")
    print(f"{'-' * width}  {'-' * 9}  {'-' * 10}  {'-' * 9}")
    for name, best, first in rows:
        ratio = best / raw_best if raw_best > 0 else float("inf")
        print(f"{name:<{width}}  {best:>9.4f}  {ratio:>9.2f}x  {first:>9.4f}")
    print()
    checks = [
        ("HTML size", f"{html_bytes:,} bytes ({mib(html_bytes)})", f"< {HTML_BUDGET_BYTES:,} bytes",
         verdict(html_bytes < HTML_BUDGET_BYTES)),
        ("read + analyse + render", f"{e2e_best:.3f} s", f"< {END_TO_END_BUDGET_S:g} s",
         verdict(e2e_best < END_TO_END_BUDGET_S)),
        ("HTML render peak (tracemalloc)", mib(html_peak), "", ""),
        ("process peak RSS (ru_maxrss)", mib(peak_rss_bytes()), "", ""),
        ("JSON / CSV size", f"{len(outputs['json'].encode()):,} / {len(outputs['csv'].encode()):,} bytes", "", ""),
    ]
    # Worst case for the page: as many kernels, every one of them on the charts (FLOP and bytes).
    worst_source = report.parent / "gpu-workshop__MW_Baseline.ncu-rep"
    if worst_source.is_file():
        from ncu_roofline.api.analysis import Analysis, ReportResult

        base = ncu_roofline.analyze(worst_source).reports[0]
        charted = [k for k in base.kernels if (k.achieved_flop_per_s or 0) > 0]
        models = []
        for i in range(len(raw.kernels)):  # distinct kernels (own index and name), cycling through the charted ones
            model = copy.copy(charted[i % len(charted)])
            name = f"{model.raw.name}_{i}"
            model.raw = dataclasses.replace(model.raw, index=i, name=name, demangled_name=name)
            models.append(model)
        worst = Analysis([ReportResult(base.path, base.source_format, base.ncu_version, models)], [])
        worst_best, _, worst_text = best_of(lambda: html(worst, RenderOptions()))
        worst_bytes = len(worst_text.encode("utf-8"))
        checks.append((f"worst case: {len(models)} charted kernels, HTML", f"{worst_bytes:,} bytes, {worst_best:.2f} s",
                       f"< {HTML_BUDGET_BYTES:,} bytes, < {END_TO_END_BUDGET_S:g} s",
                       verdict(worst_bytes < HTML_BUDGET_BYTES and worst_best < END_TO_END_BUDGET_S)))
    cw = [max(len(c[i]) for c in checks) for i in range(3)]
    for name, value, budget, result in checks:
        print(f"{name:<{cw[0]}}  {value:>{cw[1]}}  {budget:<{cw[2]}}  {result}".rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
