"""A report analysed by group adds its launches a block at a time (`api.blocks.add_block`: sums, longest launches
and records from each run's columns) and must write what the same blocks write with each launch modelled and added
on its own (`run_sums.add_launch`, `Streamed._put`), byte for byte: every launch record, every group's sums, verdict
and findings, the report's totals and warnings.

Each corpus report is written as an export whose launches repeat its kernels in turn, with counter noise and odd
cells (`test_bulk_model._launches`), and analysed by group past its 16th launch, in blocks of 100: several blocks,
groups whose launches come from several runs, held launches replaced by longer ones from later blocks. The blocks
keep no metrics once a launch is analysed (as `report` reads), but for each group's longest launch: its passes and
its group's findings read them after its block, and must find what they find with every metric kept.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from pathlib import Path

import pytest
from conftest import corpus_files
from ncu_csv_writer import write_ncu_csv
from test_bulk_model import _launches

from ncu_roofline.api import analysis
from ncu_roofline.api import blocks as blocks_module
from ncu_roofline.api.analysis import Analysis, analyze_report
from ncu_roofline.api.bulk import ModelledBlock
from ncu_roofline.api.kernel import model_launch
from ncu_roofline.readers import read_report_isolated
from ncu_roofline.readers.record import Metric, RawKernel, RawReport
from ncu_roofline.settings import GROUP_BY_LAUNCH, GROUP_BY_NAME, AnalysisSettings


def _one_by_one(rows: Sequence[RawKernel], settings: AnalysisSettings) -> ModelledBlock:
    """A block whose launches are each modelled on their own: no run over columns."""
    block = ModelledBlock(rows)
    for k, row in enumerate(rows):
        block.single[k] = model_launch(row, settings)
    return block


def _documents(export: Path, settings: AnalysisSettings, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str, int]:
    monkeypatch.setattr(analysis, "LAUNCH_FINDINGS_UP_TO", 16)
    monkeypatch.setattr(analysis, "BULK_ROWS", 100)
    added = []
    add_block = blocks_module.add_block
    monkeypatch.setattr(analysis, "add_block", lambda stream, block: added.append(len(block.runs)) or add_block(
        stream, block))
    by_blocks = Analysis([analyze_report(export, settings, keep_metrics=False)], [], settings).to_json(indent=1)
    monkeypatch.setattr(analysis, "model_block", _one_by_one)
    alone = Analysis([analyze_report(export, settings)], [], settings).to_json(indent=1)
    return by_blocks, alone, sum(added)


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name)
def test_blocks_write_what_launches_added_one_by_one_write(path: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    kernels = read_report_isolated(path).kernels
    export = write_ncu_csv(RawReport("export", "csv", _launches(kernels)), tmp_path / "export.csv")
    settings = AnalysisSettings(group_by=GROUP_BY_NAME if len(kernels) % 2 else GROUP_BY_LAUNCH)
    by_blocks, alone, runs = _documents(export, settings, monkeypatch)
    assert '"findings":"group"' in alone.replace(" ", "").replace("\n", "")
    assert runs > 0  # the blocks held runs over columns, not only launches modelled alone
    assert by_blocks.splitlines() == alone.splitlines()


def test_a_capture_stopped_in_its_last_launch_is_said_alike(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The last launch of a streamed report with no duration (every counter NaN: the capture stopped while it was
    profiled) is said once, with the count of the launches analysed, whichever way its block was added."""
    path = next(p for p in corpus_files() if "MW_Baseline" in p.name)
    launches = _launches(read_report_isolated(path).kernels)
    last = launches[-1]
    launches[-1] = dataclasses.replace(last, metrics={n: Metric(math.nan, m.unit) if type(m.value) is float else m
                                                      for n, m in last.metrics.items()})
    export = write_ncu_csv(RawReport("export", "csv", launches), tmp_path / "export.csv")
    settings = AnalysisSettings()
    by_blocks, alone, _ = _documents(export, settings, monkeypatch)
    assert "the capture was likely stopped" in alone
    assert by_blocks.splitlines() == alone.splitlines()


@pytest.mark.parametrize(("nan_at", "analysed"), [((39,), 39), ((3, 39), 38), (tuple(range(40)), None)])
def test_a_stopped_capture_is_said_alike_by_launch_and_by_group(
        nan_at: tuple[int, ...], analysed: int | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The last of 40 launches with every counter NaN: the same warning, counting the launches analysed (an
    unusable one before it is not), whether the report is analysed by launch or by group; none where no launch
    has a duration (a capture that collected none is not a stopped one)."""
    from conftest import make_kernel
    from test_model import base_metrics

    kernel = make_kernel(base_metrics())
    plain = {n: m for n, m in kernel.metrics.items() if isinstance(m, Metric)}
    unset = {n: Metric(math.nan, m.unit) if type(m.value) is float else m for n, m in plain.items()}
    launches = [dataclasses.replace(kernel, index=i, metrics=unset if i in nan_at else plain) for i in range(40)]
    export = write_ncu_csv(RawReport("export", "csv", launches), tmp_path / "export.csv")
    monkeypatch.setattr(analysis, "LAUNCH_FINDINGS_UP_TO", 16)
    said = [[w for w in analyze_report(export, AnalysisSettings(launch_findings=by_launch)).warnings
             if "likely stopped" in w] for by_launch in (True, False)]
    assert said[0] == said[1]
    if analysed is None:
        assert said[0] == []
    else:
        assert said[0] == [f"the last launch (#39, {kernel.name}) has no duration, unlike the launches before it: the "
                           "capture was likely stopped while profiling it, or the profiler could not collect it; it "
                           f"is set aside, {analysed} other launch(es) are analysed"]


def test_a_column_of_one_text_is_part_of_the_template_and_others_are_marked() -> None:
    """A column whose launches all encode alike becomes the template's own value; one whose texts differ, even only
    as 0.0 and -0.0 do, is a mark with each launch's text and length."""
    import numpy as np
    import orjson

    from ncu_roofline.readers.values import Values

    slots: list[int | list[str]] = []
    lengths = np.zeros(3, dtype=np.int64)
    nan = float("nan")
    columns = {"same": Values(np.array([1.5, 1.5, 1.5])), "nan": Values(np.array([nan, nan, nan])),
               "signs": Values(np.array([0.0, -0.0, 0.0])), "list": [Values(np.array([1.0, 2.0, 30.0]))]}
    d = blocks_module._marked(columns, slots, lengths)
    assert d["same"] == 1.5 and math.isnan(d["nan"])
    assert orjson.dumps(d["nan"]) == b"null"
    assert d["signs"] == blocks_module._MARK % 0 and d["list"] == [blocks_module._MARK % 1]
    assert slots == [["0.0", "-0.0", "0.0"], ["1.0", "2.0", "30.0"]]
    assert lengths.tolist() == [3 + 3, 4 + 3, 3 + 4]


def test_a_runs_records_at_once_are_each_launchs_record_with_its_length_in_bytes() -> None:
    """`RecordTemplate.records` lays every launch's pieces out at once: each record in its data is the one `render`
    makes for that launch, its length counted in bytes (a name in another script takes more than one), and a
    launch without own fields (None) is left out, its column values with it."""
    import numpy as np

    width = len(blocks_module._OWN)
    template = object.__new__(blocks_module.RecordTemplate)
    template.pieces = ['{"a":', ',"name":', ',"b":', "}"]
    template.places = [width, 0, width + 1]
    template.columns = [["1.0", "2.5", "30.0"], ["7", "8", "9"]]
    template.lengths = np.array([len(b'{"a":,"name":,"b":}') + len(a) + len(b) for a, b in
                                 zip(*template.columns, strict=True)], dtype=np.int64)
    rest = ("",) * (width - 1)  # the fields the template does not place
    owns = [('"k\\u00e9"', *rest), None, ('"\u6838"', *rest)]
    data, lengths = template.records(owns)
    expected = [template.render(0, owns[0]), template.render(2, owns[2])]  # type: ignore[arg-type]
    assert data == b"".join(expected) and lengths == [len(e) for e in expected]
    assert expected[1] == '{"a":30.0,"name":"核","b":9}'.encode() and lengths[1] == len(expected[1]) > 27


def test_a_block_ends_where_its_rows_text_reaches_the_byte_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows are modelled in blocks of at most `BULK_ROWS` rows, each block closed once its rows' text reaches
    `BULK_BYTES` (a block's memory follows its rows' width, not their count), and blocks of any size write the same
    document."""
    path = next(p for p in corpus_files() if "MW_Baseline" in p.name)
    export = write_ncu_csv(RawReport("export", "csv", _launches(read_report_isolated(path).kernels)),
                           tmp_path / "export.csv")
    monkeypatch.setattr(analysis, "LAUNCH_FINDINGS_UP_TO", 16)
    settings = AnalysisSettings()
    whole = Analysis([analyze_report(export, settings, keep_metrics=False)], [], settings).to_json(indent=1)
    sizes: list[list[int]] = []
    model_block = analysis.model_block
    monkeypatch.setattr(analysis, "model_block", lambda rows, s: sizes.append([k.metrics.text_bytes() for k in rows])
                        or model_block(rows, s))
    with open(export, "rb") as fh:
        widths = sorted(len(line) for line in fh)
    cap = 3 * widths[-1]  # three rows' text or more
    monkeypatch.setattr(analysis, "BULK_BYTES", cap)
    by_bytes = Analysis([analyze_report(export, settings, keep_metrics=False)], [], settings).to_json(indent=1)
    assert len(sizes) > 3
    first, *rest = sizes
    assert len(first) == 17  # the rows read ahead (`LAUNCH_FINDINGS_UP_TO` + 1), past the cap, make the first block
    for block in rest[:-1]:  # each closes with the row that takes its text to the cap
        assert sum(block[:-1]) < cap <= sum(block)
    assert by_bytes.splitlines() == whole.splitlines()
