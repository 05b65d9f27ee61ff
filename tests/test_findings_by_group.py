"""A report of many launches: findings per kernel group (from each group's longest launch), numbers and verdicts
per launch, and each distinct provenance and missing list once in the JSON document (`ncu-roofline/5`)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from conftest import CORPUS
from ncu_csv_writer import write_ncu_csv

import ncu_roofline
from ncu_roofline.api import analysis as A
from ncu_roofline.api.groups import FINDINGS_BY_GROUP, FINDINGS_BY_LAUNCH
from ncu_roofline.api.kernel import analyse_kernel
from ncu_roofline.knowledge.schemas import validate_document
from ncu_roofline.readers import read_report_isolated
from ncu_roofline.readers.record import Metric, RawReport
from ncu_roofline.settings import AnalysisSettings

# 154 launches of a few kernels with several launches each, at different durations
MANY = CORPUS / "self-join-mistic__profile.ncu-rep"
FULL_SET = CORPUS / "gpu-workshop__MW_Baseline.ncu-rep"


def _need(path: Path) -> Path:
    if not path.is_file():
        pytest.skip(f"{path.name} not in the shared corpus")
    return path


def _numbers(d: dict) -> tuple:
    """What a launch record holds in either mode: its numbers and its verdict."""
    return (d["index"], d["duration_s"], d["work_flop"], d["traffic_bytes"], d["utilization"], d["bound_by"],
            d["regime"], d["flags"], d["recipe_set"] is not None)


def test_above_the_limit_findings_come_per_group_from_the_longest_launch(monkeypatch: pytest.MonkeyPatch) -> None:
    path = _need(MANY)
    by_launch = ncu_roofline.analyze(path)
    monkeypatch.setattr(A, "LAUNCH_FINDINGS_UP_TO", 10)
    by_group = ncu_roofline.analyze(path)
    report, before = by_group.reports[0], by_launch.reports[0]
    assert (before.findings, report.findings) == (FINDINGS_BY_LAUNCH, FINDINGS_BY_GROUP)
    groups = by_group.groups_of(report)
    assert any(len(g.launches) > 1 for g in groups)
    assert {id(k) for k in report.kernels} == {id(g.longest) for g in groups}  # only they are kept
    doc = by_group.to_dict()
    old = by_launch.to_dict()
    validate_document(doc, "doc.json")
    new_r, old_r = doc["reports"][0], old["reports"][0]
    assert new_r["findings"] == "group" and old_r["findings"] == "launch"
    # every launch keeps its numbers and its verdict; its findings are its group's
    assert [_numbers(k) for k in new_r["kernels"]] == [_numbers(k) for k in old_r["kernels"]]
    assert all("diagnosis" not in k and "ceilings" not in k for k in new_r["kernels"])
    assert all("diagnosis" in k and "ceilings" in k for k in old_r["kernels"])
    for g, old_g in zip(new_r["groups"], old_r["groups"], strict=True):
        assert (g["group_key"], g["bound_by"], g["regime"], g["utilization"]) == (
            old_g["group_key"], old_g["bound_by"], old_g["regime"], old_g["utilization"])
        assert g["findings_from_launch"] == old_g["findings_from_launch"]
        if g["launches"] == 1:  # one launch is its own group: the same findings either way
            assert g["diagnosis"] == old_g["diagnosis"]
    # the group's ceilings are its longest launch's own, as that launch analysed alone has them
    for g in groups:
        alone = analyse_kernel(dataclasses.replace(read_report_isolated(path).kernels[g.longest.raw.index]))
        assert [c.to_dict() for c in g.summary.ceilings] == [c.to_dict() for c in alone.ceilings]


def test_launch_findings_on_request_keep_every_launch_s_own(monkeypatch: pytest.MonkeyPatch) -> None:
    path = _need(MANY)
    monkeypatch.setattr(A, "LAUNCH_FINDINGS_UP_TO", 10)
    report = ncu_roofline.analyze(path, AnalysisSettings(launch_findings=True)).reports[0]
    assert report.findings == FINDINGS_BY_LAUNCH
    assert sum(1 for k in report.kernels if k.diagnosis) > 10


def test_at_the_limit_a_report_keeps_launch_findings(monkeypatch: pytest.MonkeyPatch) -> None:
    path = _need(MANY)
    count = len(read_report_isolated(path).kernels)
    monkeypatch.setattr(A, "LAUNCH_FINDINGS_UP_TO", count)
    assert ncu_roofline.analyze(path).reports[0].findings == FINDINGS_BY_LAUNCH
    monkeypatch.setattr(A, "LAUNCH_FINDINGS_UP_TO", count - 1)
    assert ncu_roofline.analyze(path).reports[0].findings == FINDINGS_BY_GROUP


def test_a_csv_of_more_than_a_thousand_launches_is_analysed_by_group(tmp_path: Path) -> None:
    """The real limit, on an export of 1,005 launches of a full-set capture's kernels under 3 names: the longest
    launch of each group (the one `findings_from_launch` names) holds the group's findings."""
    raws = read_report_isolated(_need(FULL_SET)).kernels
    plain = [dataclasses.replace(k, metrics={n: m for n, m in k.metrics.items() if isinstance(m, Metric)},
                                 rules=()) for k in raws]
    launches = []
    for i in range(A.LAUNCH_FINDINGS_UP_TO + 5):
        raw = plain[i % len(plain)]
        launches.append(dataclasses.replace(raw, index=i, name=f"k{i % 3}_{raw.name}",
                                            demangled_name=f"k{i % 3}_{raw.name}"))
    export = write_ncu_csv(RawReport("many.csv", "csv", launches), tmp_path / "many.csv", prof_lines=False)
    analysis = ncu_roofline.analyze(export)
    report = analysis.reports[0]
    assert report.findings == FINDINGS_BY_GROUP and report.launch_count == 1005
    groups = analysis.groups_of(report)
    # only each group's longest launch is kept (the others were written out as they were analysed)
    assert {k.raw.index for k in report.kernels} == {g.longest.raw.index for g in groups}
    doc = json.loads(analysis.to_json())
    r = doc["reports"][0]
    assert r["findings"] == "group"
    assert all(g["diagnosis"] for g in r["groups"] if g["usable_launches"])
    # 1,005 launches of 5 kernels: each distinct provenance and missing list once, named by its launches; the
    # launches of one kernel share theirs (a group's longest launch names what its ceilings lack too)
    assert len(r["kernels"]) == 1005 and sorted({k["recipe_set"] for k in r["kernels"]}) == list(
        range(len(r["recipe_sets"])))  # each listed set is some launch's, numbered by its first launch
    assert len({json.dumps(s, sort_keys=True) for s in r["recipe_sets"]}) == len(r["recipe_sets"])
    longest = {g.longest.raw.index for g in groups}
    for g in groups:
        others = {k["recipe_set"] for k in r["kernels"] if k["group_key"] == g.key and k["index"] not in longest}
        assert len(others) <= 1
    by_index = {k["index"]: k for k in r["kernels"]}
    for launch in report.kernels:
        kept = r["recipe_sets"][by_index[launch.raw.index]["recipe_set"]]
        assert kept["provenance"] == launch.provenance
        assert [m["quantity"] for m in kept["missing"]] == [m.quantity for m in launch.missing]


def test_the_page_says_where_the_findings_come_from(monkeypatch: pytest.MonkeyPatch) -> None:
    from ncu_roofline.render import REPORT, RenderOptions, renderer_for

    path = _need(MANY)
    count = len(read_report_isolated(path).kernels)
    markdown, html = renderer_for(REPORT, "md").render, renderer_for(REPORT, "html").render
    assert "longest launch" not in markdown(ncu_roofline.analyze(path), RenderOptions())
    monkeypatch.setattr(A, "LAUNCH_FINDINGS_UP_TO", 10)
    analysis = ncu_roofline.analyze(path)
    text = markdown(analysis, RenderOptions())
    shown = path.name.replace("_", "\\_")  # as Markdown escapes it
    assert f"from its longest launch: {shown} has {count:,} launches. Add --launch-findings" in text
    assert "<dt>Findings</dt>" in html(analysis, RenderOptions())
    # narrowed to the longest kernels, the note still counts the file's launches (what the rule is about)
    from ncu_roofline.api.focus import Focus

    top = analysis.focused(Focus(None, None, 1, None))
    assert len(top.reports[0].kernels) < count
    assert f"has {count:,} launches" in markdown(top, RenderOptions())


def _export(tmp_path: Path, ids: list[int]) -> Path:
    """An export of one full-set kernel launched len(ids) times with the same counters, rows carrying `ids`."""
    raw = read_report_isolated(_need(FULL_SET)).kernels[0]
    plain = dataclasses.replace(raw, metrics={n: m for n, m in raw.metrics.items() if isinstance(m, Metric)},
                                rules=())
    launches = [dataclasses.replace(plain, index=i) for i in ids]
    return write_ncu_csv(RawReport("ties.csv", "csv", launches), tmp_path / "ties.csv", prof_lines=False)


def test_equal_durations_keep_the_longest_launch_group_kernels_names(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Launches of equal duration, their IDs falling in row order: the group's longest is the lowest ID (as
    `group_kernels` picks it), and that launch holds the passes' results."""
    monkeypatch.setattr(A, "LAUNCH_FINDINGS_UP_TO", 5)
    analysis = ncu_roofline.analyze(_export(tmp_path, list(range(12, 0, -1))))
    report = analysis.reports[0]
    (group,) = analysis.groups_of(report)
    assert report.findings == FINDINGS_BY_GROUP and group.longest.raw.index == 1
    assert group.longest.ceilings and group.summary.diagnosis
    assert [k.raw.index for k in report.kernels if k.ceilings] == [1]


def test_a_document_without_given_groups_groups_as_the_analysis_did(monkeypatch: pytest.MonkeyPatch) -> None:
    path = _need(MANY)
    monkeypatch.setattr(A, "LAUNCH_FINDINGS_UP_TO", 10)
    analysis = ncu_roofline.analyze(path, AnalysisSettings(group_by="name"))
    report = analysis.reports[0]
    alone = report.to_dict()["groups"]
    assert [g["group_key"] for g in alone] == [g.key for g in analysis.groups_of(report)]
    assert all(g["diagnosis"] for g in alone if g["usable_launches"])


def test_the_command_line_asks_for_launch_findings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--launch-findings, and --nvtx (which keeps part of a kernel's launches), give every launch its own."""
    from click.testing import CliRunner

    from ncu_roofline.cli import main

    monkeypatch.setattr(A, "LAUNCH_FINDINGS_UP_TO", 5)
    export = _export(tmp_path, list(range(12)))
    for extra, findings in (((), "group"), (("--launch-findings",), "launch"), (("--nvtx", "*"), "launch")):
        out = tmp_path / f"{len(extra)}{findings}.json"
        result = CliRunner().invoke(main, ["report", str(export), "-f", "json", "-o", str(out), *extra])
        assert result.exit_code == 0, result.output
        doc = json.loads(out.read_text(encoding="utf-8"))
        assert doc["reports"][0]["findings"] == findings
        assert doc["settings"]["launch_findings"] == (findings == "launch")
