"""`trend` as a gate: an unusable run is a gap, and "no drift" needs the kernels to be followed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from test_diff import kernel, run_cli

from ncu_roofline.compare.trend import trend
from ncu_roofline.compare.trend_coverage import followed_shares, verdict_coverage


def write_day(folder: Path, day: str, kernels: list[dict[str, Any]]) -> Path:
    for n, k in enumerate(kernels):
        k["index"] = n
    doc = {"schema": "ncu-roofline/2", "reports": [{"path": f"/c/{day}/app.ncu-rep", "kernels": kernels}]}
    path = folder / f"{day}.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_unusable_middle_run_is_a_gap(tmp_path: Path) -> None:
    first = write_day(tmp_path, "2026-03-01", [kernel("steady", 1e-3), kernel("climbing", 2e-3)])
    broken = tmp_path / "2026-03-02.json"
    broken.write_text("{not json", encoding="utf-8")
    last = write_day(tmp_path, "2026-03-03", [kernel("steady", 1e-3), kernel("climbing", 2.4e-3)])
    result = run_cli("trend", first, broken, last, "--fail-on-drift")
    assert result.exit_code == 1, result.output  # the gap does not hide the drift
    doc = json.loads(result.stdout)
    assert doc["schema"] == "ncu-roofline-trend/3"
    assert [r["usable"] for r in doc["runs"]] == [True, False, True]
    assert "not valid JSON" in doc["runs"][1]["error"] and doc["runs"][1]["total_gpu_time_s"] is None
    climbing = next(k for k in doc["kernels"] if k["name"] == "climbing")
    assert climbing["durations_s"] == [2e-3, None, 2.4e-3] and climbing["drift"]
    assert doc["coverage"]["share"] == 1.0 and doc["verdict"] == "drift"
    md = run_cli("trend", first, broken, last, "-f", "md").stdout
    assert "| 2026-03-02 | 2026-03-02 | gap: not valid JSON" in md
    html = run_cli("trend", first, broken, last, "-f", "html").stdout
    assert "gap</strong>: not valid JSON" in html
    csv_text = run_cli("trend", first, broken, last, "-f", "csv").stdout
    assert "2026-03-02" not in csv_text  # a gap has no rows
    # one usable run left: no trend, exit 2 with the reasons
    other = tmp_path / "2026-03-04.json"
    other.write_text(json.dumps({"schema": "something/1"}), encoding="utf-8")
    none = run_cli("trend", first, broken, other)
    assert none.exit_code == 2 and "only 1 usable run of 3" in none.stderr and "not valid JSON" in none.stderr
    assert none.stderr.count("\n") == 1


def test_runs_sharing_no_kernel_give_no_verdict(tmp_path: Path) -> None:
    names = ("alpha", "beta", "gamma")  # nothing in common, not even a generated suffix
    days = [write_day(tmp_path, day, [kernel(names[n], 1e-3 * (1 + n))])
            for n, day in enumerate(("2026-04-01", "2026-04-02", "2026-04-03"))]
    t = trend(days)
    assert t.verdict == "insufficient_coverage" and not t.drifting and t.coverage["share"] == 0.0
    md = run_cli("trend", *days, "-f", "md")
    assert md.exit_code == 0 and "⚠️ No verdict: only 0 % of the first usable run's GPU time" in md.stdout
    assert "No kernel drifting" not in md.stdout
    gate = run_cli("trend", *days, "--fail-on-drift")
    assert gate.exit_code == 3 and "drift verdict not reached" in gate.stderr
    assert run_cli("trend", *days, "--fail-on-drift", "--allow-unmatched").exit_code == 0
    assert json.loads(gate.stdout)["verdict"] == "insufficient_coverage"
    # renamed kernels followed with --match: a verdict again
    renamed = run_cli("trend", *days, "--fail-on-drift", "--match", "^(?:alpha|beta)$=^(?:beta|gamma)$", "-f", "json")
    assert renamed.exit_code == 1 and json.loads(renamed.stdout)["verdict"] == "drift"


def test_coverage_rule_is_time_weighted() -> None:
    durations = [[9e-3, 9e-3, 9e-3], [1e-3, None, None], [None, 1e-3, 1e-3]]
    assert followed_shares(durations, [True, True, True]) == [None, 0.9, 1.0]
    c = verdict_coverage(durations, [True, True, True], ["a", "b", "c"], 50.0)
    assert c["share"] == 0.9 and c["followed_kernels"] == 1 and (c["first_run"], c["last_run"]) == ("a", "c")
    gap = verdict_coverage(durations, [True, True, False], ["a", "b", "c"], 50.0)
    assert gap["last_run"] == "b" and gap["share"] == 0.9
    assert followed_shares(durations, [True, False, True]) == [None, None, 0.9]
