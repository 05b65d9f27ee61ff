"""Comparing two runs: kernel matching, per-kernel changes, totals and a regression gate.

A run is a set of kernels in the `ncu-roofline/1` JSON form (`KernelModel.to_dict`): a report
file analysed here, an `ncu-roofline/1` JSON document written earlier (`report --format json`),
or a batch output folder (`manifest.json` + one JSON document per report). Everything below
works on those dicts, so a run analysed today compares with one analysed in CI last week.

Matching. The key of a kernel is (demangled name or name, grid size, block size, NVTX ranges);
the n-th launch of a key in BASE pairs with the n-th launch of that key in HEAD. What is left
is paired by name alone, again in order of occurrence, and marked `launch_config_changed`
(grid or block differ) and/or `nvtx_changed`. The rest is listed as unmatched on its side.

Gate. With a threshold of P %, the run fails when the summed duration of the matched kernels
grew by more than P %, or when a matched kernel whose BASE duration is at least `min_duration_s`
(5 µs) grew by more than P % and by at least `min_delta_s` (2 µs: below that it is profiling
jitter). Kernels that exist only in one run are reported, not gated.

No file is written and nothing is printed here; the CLI does that.
"""

from __future__ import annotations

import json
import math
import os
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import __version__
from ..api.jsondoc import dumps
from ..errors import InputError
from ..knowledge import recipes as R
from ..settings import AnalysisSettings

SCHEMA = "ncu-roofline-diff/1"
REPORT_SCHEMA = "ncu-roofline/1"
BATCH_SCHEMA_PREFIX = "ncu-roofline-batch/"
MANIFEST = "manifest.json"
# Kernels shorter than this in BASE are not gated one by one: a few hundred nanoseconds of
# launch jitter is tens of percent of a 2 µs kernel. They still count in the matched total.
DEFAULT_MIN_DURATION_S = 5e-6
# Nor is a kernel that got slower by less than this, whatever the percentage: the run-to-run
# spread of a profiled duration is about a microsecond (the V100 halo kernels of the test corpus
# move by 1.4 µs, +12 %, between two captures of unchanged code).
DEFAULT_MIN_DELTA_S = 2e-6
# A change within this relative tolerance of the threshold is not over it (float rounding).
_GATE_TOLERANCE = 1e-9


@dataclass(frozen=True)
class RunKernel:
    """One kernel of a run: the report it comes from and its `ncu-roofline/1` dict."""

    report: str
    data: dict[str, Any]


@dataclass
class Run:
    """One side of a comparison."""

    input: str                       # the path as given
    kind: str                        # "report" | "json" | "batch"
    reports: list[str]               # the report files the kernels come from
    kernels: list[RunKernel]
    skipped: list[dict[str, str]] = field(default_factory=list)  # batch entries not analysed

    @property
    def devices(self) -> list[str]:
        return sorted({k.data["device"] for k in self.kernels if k.data.get("device")})

    @property
    def total_duration_s(self) -> float | None:
        values = [d for d in (_duration(k.data) for k in self.kernels) if d is not None]
        return sum(values) if values else None

    @property
    def usable_count(self) -> int:
        return sum(1 for k in self.kernels if k.data.get("usable", True) and _duration(k.data) is not None)

    def summary(self) -> dict[str, Any]:
        return {
            "input": self.input,
            "kind": self.kind,
            "reports": list(self.reports),
            "devices": self.devices,
            "kernel_count": len(self.kernels),
            "usable_kernel_count": self.usable_count,
            "total_duration_s": self.total_duration_s,
            "skipped": [dict(s) for s in self.skipped],
        }


# --------------------------------------------------------------------------------------------
# Loading


def load_run(path: str | Path, settings: AnalysisSettings | None = None) -> Run:
    """A report file, an `ncu-roofline/1` JSON document, or a batch output folder -> `Run`.

    `settings` apply to report files only (default: `AnalysisSettings()`): JSON documents and
    batch folders keep the settings they were analysed with. Raises `InputError` for anything
    unusable, including a run without a single usable kernel.
    """
    p = Path(path)
    if p.is_dir():
        run = _load_batch(p)
    elif not p.exists():
        raise InputError(p, "no such file or folder")
    elif p.suffix.lower() == ".json":
        run = run_from_document(_read_json(p), str(p), "json")
    else:
        from ..api.analysis import analyze

        analysis = analyze(p, settings or AnalysisSettings())
        run = run_from_document(analysis.to_dict(), str(p), "report")
    if run.usable_count == 0:
        raise InputError(p, f"no usable kernels ({len(run.kernels)} kernels, none with a duration "
                            "and usable metrics)", "nothing to compare")
    return run


def run_from_document(doc: Any, input_path: str, kind: str) -> Run:
    """A `Run` from an `ncu-roofline/1` document (as `Analysis.to_dict()` returns it)."""
    return Run(input_path, kind, *_kernels_of_document(doc, input_path))


def _kernels_of_document(doc: Any, where: str) -> tuple[list[str], list[RunKernel]]:
    if not isinstance(doc, dict) or doc.get("schema") != REPORT_SCHEMA:
        found = doc.get("schema") if isinstance(doc, dict) else type(doc).__name__
        raise InputError(where, f"not an {REPORT_SCHEMA} document (schema: {found!r})",
                         "give a report file, a JSON file written by `ncu-roofline report --format json`, "
                         "or a batch output folder")
    reports: list[str] = []
    kernels: list[RunKernel] = []
    for rep in doc.get("reports") or []:
        if not isinstance(rep, dict) or not isinstance(rep.get("kernels"), list):
            raise InputError(where, "malformed document: a report without a kernel list")
        name = str(rep.get("path") or where)
        reports.append(name)
        for k in rep["kernels"]:
            if not isinstance(k, dict) or not isinstance(k.get("name"), str):
                raise InputError(where, "malformed document: a kernel without a name")
            kernels.append(RunKernel(name, k))
    return reports, kernels


def _read_json(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(path, f"cannot read ({exc.strerror or exc})") from exc
    except UnicodeDecodeError as exc:
        raise InputError(path, "not a JSON file (not UTF-8 text)") from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(path, f"not valid JSON (line {exc.lineno}: {exc.msg})") from exc


def _load_batch(folder: Path) -> Run:
    manifest_path = folder / MANIFEST
    if not manifest_path.is_file():
        raise InputError(folder, f"a folder without {MANIFEST}",
                         "give a report file or an `ncu-roofline batch` output folder")
    manifest = _read_json(manifest_path)
    schema = manifest.get("schema") if isinstance(manifest, dict) else None
    if not isinstance(schema, str) or not schema.startswith(BATCH_SCHEMA_PREFIX):
        raise InputError(manifest_path, f"not an ncu-roofline batch manifest (schema: {schema!r})")
    entries = manifest.get("reports")
    if not isinstance(entries, list):
        raise InputError(manifest_path, "malformed manifest: no list of reports")
    reports: list[str] = []
    kernels: list[RunKernel] = []
    skipped: list[dict[str, str]] = []
    for entry in entries:
        if not isinstance(entry, dict):
            raise InputError(manifest_path, "malformed manifest: a report entry is not an object")
        source = str(entry.get("path") or "?")
        status = entry.get("status")
        rel = entry.get("json")
        if status != "ok" or not isinstance(rel, str) or not rel:
            skipped.append({"path": source, "status": str(status),
                            "reason": str(entry.get("error") or entry.get("message") or "not analysed")})
            continue
        doc_path = folder / rel
        if not doc_path.is_file():
            raise InputError(manifest_path, f"{rel}: listed in the manifest but missing")
        names, found = _kernels_of_document(_read_json(doc_path), str(doc_path))
        reports.extend(names or [source])
        kernels.extend(found)
    return Run(str(folder), "batch", reports, kernels, skipped)


# --------------------------------------------------------------------------------------------
# Matching


def display_name(k: dict[str, Any]) -> str:
    """The name used for matching: demangled where the report has it."""
    return str(k.get("demangled_name") or k.get("name") or "")


def _dims(value: Any) -> tuple[int, ...] | None:
    return tuple(int(v) for v in value) if isinstance(value, (list, tuple)) else None


def match_key(k: dict[str, Any]) -> tuple[Any, ...]:
    """(name, grid size, block size, NVTX ranges): what makes two launches the same launch."""
    return (display_name(k), _dims(k.get("grid_size")), _dims(k.get("block_size")),
            tuple(str(r) for r in k.get("nvtx_ranges") or ()))


@dataclass(frozen=True)
class Pair:
    """A BASE kernel (position in its run) matched with a HEAD kernel."""

    base: int
    head: int
    launch_config_changed: bool = False
    nvtx_changed: bool = False


@dataclass
class Matching:
    pairs: list[Pair]
    unmatched_base: list[int]
    unmatched_head: list[int]


def _pair_in_order(base_ids: Iterable[int], head_ids: Iterable[int], key_of_base: Any,
                   key_of_head: Any) -> list[tuple[int, int]]:
    """Pair the n-th BASE item of each key with the n-th HEAD item of the same key."""
    queues: dict[Any, list[int]] = defaultdict(list)
    for h in head_ids:
        queues[key_of_head(h)].append(h)
    taken: dict[Any, int] = defaultdict(int)
    pairs = []
    for b in base_ids:
        key = key_of_base(b)
        queue = queues.get(key)
        if queue is not None and taken[key] < len(queue):
            pairs.append((b, queue[taken[key]]))
            taken[key] += 1
    return pairs


def match_kernels(base: Sequence[dict[str, Any]], head: Sequence[dict[str, Any]]) -> Matching:
    """Pair kernels by launch key and order of occurrence, then by name alone (see the module)."""
    exact = _pair_in_order(range(len(base)), range(len(head)),
                           lambda i: match_key(base[i]), lambda j: match_key(head[j]))
    used_b = {b for b, _ in exact}
    used_h = {h for _, h in exact}
    rest_b = [i for i in range(len(base)) if i not in used_b]
    rest_h = [j for j in range(len(head)) if j not in used_h]
    by_name = _pair_in_order(rest_b, rest_h, lambda i: display_name(base[i]), lambda j: display_name(head[j]))
    pairs = [Pair(b, h) for b, h in exact]
    for b, h in by_name:
        kb, kh = match_key(base[b]), match_key(head[h])
        pairs.append(Pair(b, h, launch_config_changed=kb[1:3] != kh[1:3], nvtx_changed=kb[3] != kh[3]))
    used_b |= {b for b, _ in by_name}
    used_h |= {h for _, h in by_name}
    pairs.sort(key=lambda p: (p.base, p.head))
    return Matching(pairs, [i for i in range(len(base)) if i not in used_b],
                    [j for j in range(len(head)) if j not in used_h])


# --------------------------------------------------------------------------------------------
# Changes


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _duration(k: dict[str, Any]) -> float | None:
    d = _number(k.get("duration_s"))
    return d if d is not None and d > 0 else None


def relative_pct(base: float | None, head: float | None) -> float | None:
    """(head - base) / base in percent; None when either is unknown or base is 0."""
    if base is None or head is None or base == 0:
        return None
    return (head - base) / base * 100.0


def _delta(base: float | None, head: float | None) -> float | None:
    return None if base is None or head is None else head - base


def _ratio(base: float | None, head: float | None) -> float | None:
    return None if base is None or head is None or base == 0 else head / base


def _finding_key(f: dict[str, Any]) -> tuple[str, str | None]:
    return str(f.get("kind")), (None if f.get("roof") is None else str(f.get("roof")))


def _findings_comparable(b: dict[str, Any], h: dict[str, Any]) -> bool:
    """Findings compare only when both sides were diagnosed (ceilings computed, a bounding roof)."""
    return all("diagnosis" in k and "ceilings" in k and k.get("usable", True) and k.get("bound_by")
               for k in (b, h))


def _findings_change(b: dict[str, Any], h: dict[str, Any]) -> dict[str, Any]:
    if not _findings_comparable(b, h):
        return {"compared": False, "appeared": [], "disappeared": [], "kept": []}
    before = {_finding_key(f): f for f in b.get("diagnosis") or [] if isinstance(f, dict)}
    after = {_finding_key(f): f for f in h.get("diagnosis") or [] if isinstance(f, dict)}

    def item(f: dict[str, Any]) -> dict[str, Any]:
        return {"kind": str(f.get("kind")), "roof": f.get("roof"), "text": str(f.get("text") or "")}

    return {
        "compared": True,
        "appeared": [item(f) for key, f in after.items() if key not in before],
        "disappeared": [item(f) for key, f in before.items() if key not in after],
        "kept": [{"kind": key[0], "roof": key[1]} for key in before if key in after],
    }


def kernel_side(run_kernel: RunKernel) -> dict[str, Any]:
    """What the diff keeps of one kernel."""
    k = run_kernel.data
    util = {r: _number(u) for r, u in (k.get("utilization") or {}).items()}
    bound = k.get("bound_by")
    return {
        "report": run_kernel.report,
        "index": k.get("index"),
        "name": k.get("name"),
        "demangled_name": k.get("demangled_name"),
        "device": k.get("device"),
        "grid_size": k.get("grid_size"),
        "block_size": k.get("block_size"),
        "nvtx_ranges": list(k.get("nvtx_ranges") or []),
        "usable": bool(k.get("usable", True)),
        "duration_s": _duration(k),
        "bound_by": bound,
        "bound_utilization": util.get(bound) if bound else None,
        "regime": k.get("regime"),
        "utilization": util,
        "intensity_flop_per_byte": {lv: _number(v) for lv, v in (k.get("intensity_flop_per_byte") or {}).items()},
        "achieved_flop_per_s": _number(k.get("achieved_flop_per_s")),
        "peaks": k.get("peaks") or {},
        "work_flop": k.get("work_flop") or {},
        "tensor_ops_by_datapath": k.get("tensor_ops_by_datapath") or {},
    }


def kernel_change(b: RunKernel, h: RunKernel, pair: Pair | None = None) -> dict[str, Any]:
    """Everything that changed between a BASE kernel and its HEAD match."""
    base, head = kernel_side(b), kernel_side(h)
    db, dh = base["duration_s"], head["duration_s"]
    roofs = [r for r in R.ROOFS if r in base["utilization"] or r in head["utilization"]]
    roofs += sorted((set(base["utilization"]) | set(head["utilization"])) - set(roofs))
    levels = [lv for lv in R.LEVELS if lv in base["intensity_flop_per_byte"] or lv in head["intensity_flop_per_byte"]]
    return {
        "name": display_name(b.data),
        "base": base,
        "head": head,
        "launch_config_changed": bool(pair and pair.launch_config_changed),
        "nvtx_changed": bool(pair and pair.nvtx_changed),
        "duration": {"base_s": db, "head_s": dh, "delta_s": _delta(db, dh), "delta_pct": relative_pct(db, dh),
                     "speedup": _ratio(dh, db)},
        "bound_by": {"base": base["bound_by"], "head": head["bound_by"],
                     "changed": base["bound_by"] != head["bound_by"]},
        "regime": {"base": base["regime"], "head": head["regime"]},
        "bound_utilization": {"base": base["bound_utilization"], "head": head["bound_utilization"],
                              "delta": _delta(base["bound_utilization"], head["bound_utilization"])},
        "utilization": {r: {"base": base["utilization"].get(r), "head": head["utilization"].get(r),
                            "delta": _delta(base["utilization"].get(r), head["utilization"].get(r))}
                        for r in roofs},
        "intensity_flop_per_byte": {
            lv: {"base": base["intensity_flop_per_byte"].get(lv), "head": head["intensity_flop_per_byte"].get(lv),
                 "ratio": _ratio(base["intensity_flop_per_byte"].get(lv), head["intensity_flop_per_byte"].get(lv))}
            for lv in levels},
        "achieved_flop_per_s": {"base": base["achieved_flop_per_s"], "head": head["achieved_flop_per_s"],
                                "ratio": _ratio(base["achieved_flop_per_s"], head["achieved_flop_per_s"])},
        "findings": _findings_change(b.data, h.data),
    }


def _sort_key(change: dict[str, Any]) -> tuple[float, int, int]:
    delta = change["duration"]["delta_s"]
    return (-abs(delta) if delta is not None else math.inf, change["base"]["_position"],
            change["head"]["_position"])


def unmatched_entry(run_kernel: RunKernel) -> dict[str, Any]:
    k = run_kernel.data
    return {"report": run_kernel.report, "index": k.get("index"), "name": k.get("name"),
            "demangled_name": k.get("demangled_name"), "device": k.get("device"),
            "grid_size": k.get("grid_size"), "block_size": k.get("block_size"),
            "nvtx_ranges": list(k.get("nvtx_ranges") or []), "duration_s": _duration(k),
            "bound_by": k.get("bound_by")}


# --------------------------------------------------------------------------------------------
# Totals and gate


def _sum(values: Iterable[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def totals(matched: Sequence[dict[str, Any]], base: Run, head: Run) -> dict[str, Any]:
    """Total GPU time of the matched kernels (those timed on both sides) and of everything."""
    timed = [c for c in matched if c["duration"]["base_s"] is not None and c["duration"]["head_s"] is not None]
    mb = _sum(c["duration"]["base_s"] for c in timed)
    mh = _sum(c["duration"]["head_s"] for c in timed)
    ab, ah = base.total_duration_s, head.total_duration_s
    return {
        "matched": {"count": len(matched), "timed_count": len(timed), "base_s": mb, "head_s": mh,
                    "delta_s": _delta(mb, mh), "delta_pct": relative_pct(mb, mh)},
        "all": {"base_count": len(base.kernels), "head_count": len(head.kernels), "base_s": ab, "head_s": ah,
                "delta_s": _delta(ab, ah), "delta_pct": relative_pct(ab, ah)},
    }


def evaluate_gate(matched: Sequence[dict[str, Any]], total: dict[str, Any], threshold_pct: float | None,
                  min_duration_s: float = DEFAULT_MIN_DURATION_S,
                  min_delta_s: float = DEFAULT_MIN_DELTA_S) -> dict[str, Any]:
    """The CI verdict: which matched kernels, or the matched total, got slower than allowed."""
    gate: dict[str, Any] = {"enabled": threshold_pct is not None, "threshold_pct": threshold_pct,
                            "min_duration_s": min_duration_s, "min_delta_s": min_delta_s,
                            "passed": None, "regressions": []}
    if threshold_pct is None:
        return gate
    limit = threshold_pct * (1 + _GATE_TOLERANCE) + _GATE_TOLERANCE
    regressions = []
    matched_total = total["matched"]
    if matched_total["delta_pct"] is not None and matched_total["delta_pct"] > limit:
        regressions.append({"scope": "total", "name": "total GPU time of matched kernels",
                            "base_s": matched_total["base_s"], "head_s": matched_total["head_s"],
                            "delta_pct": matched_total["delta_pct"]})
    for c in matched:
        d = c["duration"]
        if d["base_s"] is None or d["delta_pct"] is None or d["base_s"] < min_duration_s:
            continue
        if d["delta_pct"] > limit and d["delta_s"] >= min_delta_s * (1 - _GATE_TOLERANCE):
            regressions.append({"scope": "kernel", "name": c["name"], "report": c["head"]["report"],
                                "index": c["head"]["index"], "base_s": d["base_s"], "head_s": d["head_s"],
                                "delta_pct": d["delta_pct"]})
    gate["regressions"] = regressions
    gate["passed"] = not regressions
    return gate


# --------------------------------------------------------------------------------------------
# The whole comparison


@dataclass
class Diff:
    """BASE vs HEAD: matched changes (largest time change first), unmatched kernels, totals, gate."""

    base: Run
    head: Run
    matched: list[dict[str, Any]]
    unmatched_base: list[dict[str, Any]]
    unmatched_head: list[dict[str, Any]]
    totals: dict[str, Any]
    gate: dict[str, Any]

    @property
    def failed(self) -> bool:
        return self.gate["passed"] is False

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "generator": {"name": "ncu-roofline", "version": __version__},
            "base": self.base.summary(),
            "head": self.head.summary(),
            "matched": [_public(c) for c in self.matched],
            "unmatched_base": list(self.unmatched_base),
            "unmatched_head": list(self.unmatched_head),
            "totals": self.totals,
            "gate": self.gate,
        }

    def to_json(self, indent: int | None = 1) -> str:
        """The `ncu-roofline-diff/1` document: sorted keys, no NaN, nothing time-dependent."""
        return dumps(self.to_dict(), indent)


def _public(change: dict[str, Any]) -> dict[str, Any]:
    """A change without the fields kept only for drawing (positions, peaks, work)."""
    hidden = {"_position", "peaks", "work_flop", "tensor_ops_by_datapath"}
    return {**change, "base": {k: v for k, v in change["base"].items() if k not in hidden},
            "head": {k: v for k, v in change["head"].items() if k not in hidden}}


def diff_runs(base: Run, head: Run, *, fail_on_regression: float | None = None,
              min_duration_s: float = DEFAULT_MIN_DURATION_S, min_delta_s: float = DEFAULT_MIN_DELTA_S) -> Diff:
    """Match the kernels of two runs and measure what changed."""
    bk = [k.data for k in base.kernels]
    hk = [k.data for k in head.kernels]
    matching = match_kernels(bk, hk)
    matched = []
    for pair in matching.pairs:
        change = kernel_change(base.kernels[pair.base], head.kernels[pair.head], pair)
        change["base"]["_position"] = pair.base
        change["head"]["_position"] = pair.head
        matched.append(change)
    matched.sort(key=_sort_key)
    total = totals(matched, base, head)
    gate = evaluate_gate(matched, total, fail_on_regression, min_duration_s, min_delta_s)
    return Diff(base, head, matched,
                [unmatched_entry(base.kernels[i]) for i in matching.unmatched_base],
                [unmatched_entry(head.kernels[j]) for j in matching.unmatched_head],
                total, gate)


def compare(base: str | Path, head: str | Path, *, fail_on_regression: float | None = None,
            min_duration_s: float = DEFAULT_MIN_DURATION_S, min_delta_s: float = DEFAULT_MIN_DELTA_S,
            settings: AnalysisSettings | None = None) -> Diff:
    """Load both runs (see `load_run`) and diff them; raises `InputError` for unusable input."""
    return diff_runs(load_run(base, settings), load_run(head, settings),
                     fail_on_regression=fail_on_regression, min_duration_s=min_duration_s,
                     min_delta_s=min_delta_s)


def gate_message(gate: dict[str, Any]) -> str:
    """One line per regression, for standard error."""
    from ..views.format import seconds

    lines = [f"performance regression over {gate['threshold_pct']:g} %:"]
    for r in gate["regressions"]:
        lines.append(f"  {r['name']}: {seconds(r['base_s'])} -> {seconds(r['head_s'])} "
                     f"(+{r['delta_pct']:.1f} %)")
    return "\n".join(lines)


def short_path(path: str) -> str:
    return os.path.basename(path.rstrip("/")) or path
