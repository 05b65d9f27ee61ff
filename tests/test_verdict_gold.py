"""What each corpus capture is found to be, without a word of wording: one golden file per capture.

Per kernel group: the limit that bounds it, its kind and share, the regime, the flags and, per finding,
its kind, the limit and roof it concerns and its bound (×). The wording golden files
(`tests/gold/report/`) change with any sentence; these change only with behaviour, so that a wording
change and a behaviour change fail in different files. Numbers are kept to 3 significant figures.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import corpus_files
from goldtest import compare

import ncu_roofline

FILES = corpus_files()


def _sig(value: float | None) -> float | None:
    return None if value is None else float(f"{value:.3g}")


def verdicts(path: Path) -> dict[str, Any]:
    """The behaviour of the analysis of one capture, as plain data."""
    doc = json.loads(ncu_roofline.analyze(path).to_json(redact=True))
    report = doc["reports"][0]
    groups = []
    for g in report["groups"]:
        bound = g["bound_by"]
        groups.append({
            "name": g["display_name"], "launches": g["launches"], "bound_by": bound, "bound_kind": g["bound_kind"],
            "bound_share": _sig(g["utilization"].get(bound)) if bound else None, "regime": g["regime"],
            "flags": sorted(g["flags"]),
            "findings": [{"kind": f["kind"], "limit": f.get("limit"), "roof": f.get("roof"),
                          "bound": _sig(f.get("speedup"))} for f in g["diagnosis"]],
        })
    return {"kernel_count": report["kernel_count"], "unusable_kernel_count": report["unusable_kernel_count"],
            "warning_count": len(report["warnings"]), "groups": groups}


@pytest.mark.skipif(not FILES, reason="shared report corpus not found at ../shared/reports")
@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_verdict_gold(path: Path) -> None:
    compare(f"verdicts/{path.name}.json", json.dumps(verdicts(path)), {})


def test_a_golden_mismatch_shows_a_unified_diff_and_saves_the_actual(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import goldtest

    monkeypatch.setattr(goldtest, "GOLD", tmp_path)
    monkeypatch.setattr(goldtest, "REGOLD", False)
    (tmp_path / "v.json").write_text(goldtest.readable("v.json", '{"b": 1, "a": [1, 2]}'), encoding="utf-8")
    compare("v.json", '{"a": [1, 2], "b": 1}', {})  # key order is not a difference
    assert not (tmp_path / "v.json.actual").exists()
    with pytest.raises(AssertionError) as info:
        compare("v.json", '{"a": [1, 3], "b": 1}', {})
    message = str(info.value)
    assert "--- gold/v.json" in message and "+++ actual" in message
    assert "-  2" in message and "+  3" in message
    assert json.loads((tmp_path / "v.json.actual").read_text(encoding="utf-8")) == {"a": [1, 3], "b": 1}
