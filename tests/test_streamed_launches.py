"""A report analysed by group streams its launches: each is summed into its group and written out as its JSON
record as soon as it is modelled, and only each group's longest launch is kept. Nothing is lost on the way: every
launch record and every group's numbers equal those of the same capture analysed launch by launch."""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import os
import pickle
import random
import re
import tempfile
from pathlib import Path

import pytest
from conftest import CORPUS, corpus_files
from ncu_csv_writer import write_ncu_csv

import ncu_roofline
from ncu_roofline.api import analysis as A
from ncu_roofline.api.focus import Focus
from ncu_roofline.api.groups import FINDINGS_BY_GROUP
from ncu_roofline.api.sums import ExactSum
from ncu_roofline.errors import InputError
from ncu_roofline.readers import read_report_isolated
from ncu_roofline.readers.isolation import Call, ReaderPool
from ncu_roofline.readers.record import Metric, RawKernel, RawReport
from ncu_roofline.views.launches import RoofValues, device_roofs
from ncu_roofline.views.report import build_report_view

# What a group holds in either mode (its findings are its longest launch's in one, every launch's in the other).
GROUP_NUMBERS = ("group_key", "display_name", "launches", "usable_launches", "launch_indices", "duration_s",
                 "share_of_gpu_time", "work_flop", "traffic_bytes", "intensity_flop_per_byte", "achieved_flop_per_s",
                 "dominant_precision", "utilization", "bound_by", "regime", "limiters", "disagreeing_launches",
                 "regimes", "regime_disagreeing_launches", "findings_from_launch", "nvtx_ranges", "flags")


def test_an_exact_sum_is_fsum_of_every_value() -> None:
    rng = random.Random(7)
    for _ in range(300):
        values = [rng.uniform(-1, 1) * 10.0 ** rng.randint(-30, 30) for _ in range(rng.randint(0, 700))]
        s = ExactSum()
        for v in values:
            s.add(v)
        assert s.fsum() == math.fsum(values) and s.count == len(values)
        assert len(s.values()) < 200  # its partials, not every value
    for _ in range(50):  # in bulk too (a group's unit shares), NaN and infinities among them
        values = [rng.choice([rng.uniform(0, 1e3), math.inf, math.nan]) if rng.random() < 0.01 else rng.uniform(0, 1e3)
                  for _ in range(rng.randint(0, 300))]
        s = ExactSum()
        s.extend(values[:100])
        s.extend(values[100:])
        expected = math.fsum(values)
        assert s.fsum() == expected or (math.isnan(expected) and math.isnan(s.fsum()))
    special = ExactSum()
    for v in (1.0, math.inf, 2.0):
        special.add(v)
    assert special.fsum() == math.inf and special.exact() is None
    both = ExactSum()
    for v in (math.inf, -math.inf):
        both.add(v)
    assert both.exact() is None  # fsum raises for inf - inf: no total


def test_a_columns_parts_sum_exactly_to_its_values() -> None:
    """`column_parts` gives per column a few floats whose exact sum (as fractions) is that of its values, in any
    order; zeros keep the sign `fsum` gives them, and a column too wide to split, or holding NaN or an infinity,
    is its values."""
    from fractions import Fraction

    import numpy as np

    from ncu_roofline.api.sums import column_parts

    rng = np.random.default_rng(5)
    for trial in range(400):
        n, width = int(rng.integers(1, 130)), int(rng.integers(1, 5))
        matrix = rng.random((n, width)) * 10.0 ** float(rng.integers(-40, 40)) * rng.choice([-1.0, 1.0], (n, width))
        if trial % 3 == 0:
            matrix[:, 0] = 0.0
        parts = column_parts(matrix)
        for j, column in enumerate(matrix.T.tolist()):
            assert sum(map(Fraction, parts[j])) == sum(map(Fraction, column))
            assert len(parts[j]) <= 3  # values within one scale: at most three passes
            assert math.fsum(parts[j]) == math.fsum(column)
    assert column_parts(np.array([[-0.0, 0.0], [-0.0, -0.0]])) == [[-0.0], [0.0]]
    far = column_parts(np.array([[1e250], [1e-250], [3.0]]))[0]  # a pass per scale
    assert len(far) < 8 and sum(map(Fraction, far)) == Fraction(1e250) + Fraction(1e-250) + 3
    wide = [[2.0 ** (60 * k)] for k in range(10)]  # ten scales: past the passes, summed one by one
    assert column_parts(np.array(wide)) == [[row[0] for row in wide]]
    special = np.array([[1.0, 2.0], [math.nan, 3.0], [math.inf, 4.0]])
    assert column_parts(special) == special.T.tolist() or math.isnan(column_parts(special)[0][1])


def test_rows_held_by_layout_sum_as_every_launch_at_once() -> None:
    """A group holds its launches as rows of their run's columns and sums them a chunk at a time
    (`GroupSums.hold`, `settle`); a sum of time stands for every time a layout names. Runs of two layouts (one
    with a unit the other lacks), in chunks of random sizes, single rows among them: each weighted share and
    time is the `fsum` of the launches that have it."""
    import numpy as np

    from ncu_roofline.api.sums import HELD_ROWS, GroupSums, Layout
    from ncu_roofline.model.throughputs import UnitShare

    both = Layout.of(frozenset({("time",), ("unit_time", "a"), ("unit_time", "b")}),
                     ((("unit_work", "a"),), (("unit_work", "b"),)))
    one = Layout.of(frozenset({("time",), ("unit_time", "a")}), ((("unit_work", "a"),),))
    assert Layout.of(one.time, one.keys) is one
    rng = random.Random(3)
    sums = GroupSums(False)
    for uid in "ab":
        sums.units[uid] = UnitShare(uid, 0.0, uid, "memory", None, f"{uid}__metric")
    launches: list[list[float]] = []  # duration, duration × share of a (and of b)
    while len(launches) < 5 * HELD_ROWS:
        layout = rng.choice([both, one])
        rows = [[d := rng.uniform(1e-6, 1e-3), *(d * rng.random() for _ in layout.keys)]
                for _ in range(rng.randint(1, 20))]
        launches += rows
        sums.hold(layout, np.array(rows))
    time = math.fsum(r[0] for r in launches)
    with_b = [r for r in launches if len(r) == 3]
    assert sums.total_time() == time
    shares = sums.weighted_units()
    assert shares["a"].share == math.fsum(r[1] for r in launches) / time
    assert shares["b"].share == math.fsum(r[2] for r in with_b) / math.fsum(r[0] for r in with_b)


def _plain_launches() -> list[RawKernel]:
    """The launches of a full-set capture with their numeric metrics alone (what a CSV export can hold)."""
    source = CORPUS / "gpu-workshop__MW_Baseline.ncu-rep"
    if not source.is_file():
        pytest.skip("capture not in the shared corpus")
    return [dataclasses.replace(k, metrics={n: m for n, m in k.metrics.items() if isinstance(m, Metric)}, rules=())
            for k in read_report_isolated(source).kernels]


def _by_group(path: Path, monkeypatch: pytest.MonkeyPatch) -> ncu_roofline.Analysis:
    monkeypatch.setattr(A, "LAUNCH_FINDINGS_UP_TO", 0)  # streamed from the first launch
    found = ncu_roofline.analyze(path)
    monkeypatch.undo()
    return found


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name)
def test_streamed_launches_keep_every_number_of_the_capture(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every corpus capture, streamed by group: each launch record is the one the capture analysed launch by launch
    writes (less its findings), each group has the same numbers and verdict, and only groups' longest launches stay."""
    streamed = _by_group(path, monkeypatch)
    whole = ncu_roofline.analyze(path)
    for new, old in zip(streamed.to_dict()["reports"], whole.to_dict()["reports"], strict=True):
        assert new["findings"] == FINDINGS_BY_GROUP
        assert (new["kernel_count"], new["unusable_kernel_count"], new["devices"], new["units"]) == (
            old["kernel_count"], old["unusable_kernel_count"], old["devices"], old["units"])
        assert new["total_duration_s"] == old["total_duration_s"]
        assert len(new["kernels"]) == len(old["kernels"])
        for launch, before in zip(new["kernels"], old["kernels"], strict=True):
            kept = {key: value for key, value in launch.items() if key != "recipe_set"}
            assert kept == {key: before[key] for key in kept}, launch["index"]
            ours, theirs = new["recipe_sets"][launch["recipe_set"]], old["recipe_sets"][before["recipe_set"]]
            assert ours["provenance"] == theirs["provenance"]
            assert ours["missing"] == theirs["missing"][:len(ours["missing"])]  # less what only passes add
        for group, before in zip(new["groups"], old["groups"], strict=True):
            assert {key: group[key] for key in GROUP_NUMBERS} == {key: before[key] for key in GROUP_NUMBERS}
    for report in streamed.reports:
        held = {id(g.longest) for g in streamed.groups_of(report)}
        assert {id(k) for k in report.kernels} == held  # no other launch is kept
    # The page says the same of every launch: devices, roofs (medians over every launch), counts, time.
    ours, theirs = build_report_view(streamed), build_report_view(whole)
    for field in ("devices", "kernel_count", "unusable_count", "shown_gpu_time", "byte_definitions"):
        assert ours["header"][field] == theirs["header"][field]
    assert [c["roofs"] for c in ours["charts"]] == [c["roofs"] for c in theirs["charts"]]
    for report in whole.reports:  # what a launch's entry gives the roofs is what its JSON record gives them
        for device in {k.raw.device for k in report.kernels}:
            gathered = RoofValues()
            for g in whole.groups_of(report):
                launches = g.launches
                for kind, at, numbers in launches.by_kind():
                    if kind[5] == device:
                        gathered.add_launches(numbers[:, 2:], kind[9],
                                              [launches.tensor[n] for n in at.tolist() if n in launches.tensor])
            assert gathered.roofs() == device_roofs([k.to_dict() for k in report.kernels if k.raw.device == device])
    # Narrowed to whole groups, as a capture analysed launch by launch is: the same groups, names and totals.
    last = streamed.groups_of(streamed.reports[0])[-1]
    for focus in (Focus(top=1), Focus(kernel=re.escape(last.function or last.name or ""))):
        for new, old in zip(streamed.focused(focus).to_dict()["reports"], whole.focused(focus).to_dict()["reports"],
                            strict=True):
            assert (new["kernel_count"], new["total_duration_s"], new["focus"]) == (
                old["kernel_count"], old["total_duration_s"], old["focus"])
            assert [{key: g[key] for key in GROUP_NUMBERS} for g in new["groups"]] == [
                {key: g[key] for key in GROUP_NUMBERS} for g in old["groups"]]


def test_a_streamed_report_crosses_a_process_boundary(monkeypatch: pytest.MonkeyPatch) -> None:
    path = CORPUS / "self-join-mistic__profile.ncu-rep"
    if not path.is_file():
        pytest.skip("capture not in the shared corpus")
    a = _by_group(path, monkeypatch)
    monkeypatch.setattr(A, "LAUNCH_FINDINGS_UP_TO", 0)
    detached = A.analyse_detached(str(path), a.settings)  # what the reader's child process hands back
    assert detached.records is not None and Path(detached.records._name or "").is_file()  # named, to be taken over
    copied = pickle.loads(pickle.dumps(detached))
    assert copied.records is not None and copied.records._name is None  # taken over: its name removed
    assert not Path(detached.records._name or "").exists()
    again = ncu_roofline.Analysis([copied], [], a.settings)
    assert again.to_json() == a.to_json()
    assert again.rows() == a.rows()
    # Taken over, and a report analysed here: no other process can open its file, so its bytes travel.
    twice = pickle.loads(pickle.dumps(copied))
    assert ncu_roofline.Analysis([copy.deepcopy(twice)], [], a.settings).to_json() == a.to_json()
    here = a.reports[0].records
    assert here is not None and list(copy.deepcopy(here).encoded()) == list(here.encoded())


def test_launch_records_leave_no_file_behind(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    path = CORPUS / "self-join-mistic__profile.ncu-rep"
    if not path.is_file():
        pytest.skip("capture not in the shared corpus")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(A, "LAUNCH_FINDINGS_UP_TO", 0)  # streamed from the first launch
    seen: list[list[Path]] = []
    a = ncu_roofline.analyze(path, progress=lambda _file, _count: seen.append(list(tmp_path.iterdir())))
    assert a.reports[0].records is not None and a.to_json()
    assert seen and seen == [[]] * len(seen)  # analysed here: a file without a name from the start
    assert list(tmp_path.iterdir()) == []
    with ReaderPool(preload=()) as pool:
        (folder,) = pool.map([Call(tempfile.gettempdir, (), "x")])
        assert folder == os.path.dirname(pool._children[0].log_path)  # a child's temporary files are the pool's
    assert not Path(folder).exists()


def test_a_streamed_report_is_narrowed_by_whole_groups(monkeypatch: pytest.MonkeyPatch) -> None:
    path = CORPUS / "self-join-mistic__profile.ncu-rep"
    if not path.is_file():
        pytest.skip("capture not in the shared corpus")
    a = _by_group(path, monkeypatch)
    report = a.reports[0]
    groups = a.groups_of(report)
    top = a.focused(Focus(top=1))
    (kept,) = top.groups_of(top.reports[0])
    assert kept.key == groups[0].key
    doc = top.to_dict()["reports"][0]
    assert [k["index"] for k in doc["kernels"]] == sorted(e.index for e in kept.launches)
    assert doc["focus"]["kept_launches"] == len(kept.launches) == doc["kernel_count"]
    assert doc["focus"]["total_launches"] == report.launch_count
    with pytest.raises(InputError, match="NVTX"):
        a.focused(Focus(nvtx="*"))


def test_a_streamed_export_whose_ids_repeat_is_numbered_by_row(tmp_path: Path) -> None:
    """An export of more than 1,000 launches whose ID column repeats far down (edited, or joined): its launches were
    streamed out under their IDs' numbers before the repeat was read; they are numbered by row, as a small export's
    are, in every launch record, group and row."""
    plain = _plain_launches()
    count = A.LAUNCH_FINDINGS_UP_TO + 5
    launches = [dataclasses.replace(plain[i % len(plain)], index=100 + (0 if i == count - 2 else i))
                for i in range(count)]  # IDs 100, 101, ...; the last but one repeats 100
    export = write_ncu_csv(RawReport("ids.csv", "csv", launches), tmp_path / "ids.csv", prof_lines=False)
    a = ncu_roofline.analyze(export)
    report = a.reports[0]
    assert report.findings == FINDINGS_BY_GROUP
    doc = a.to_dict()["reports"][0]
    assert [k["index"] for k in doc["kernels"]] == list(range(count))
    assert sorted(i for g in doc["groups"] for i in g["launch_indices"]) == list(range(count))
    assert all(g["findings_from_launch"] in g["launch_indices"] for g in doc["groups"])
    assert [row["index"] for row in a.rows()] == list(range(count))
    assert any("numbered by row" in w for w in report.warnings)


def test_a_page_needs_no_launch_records(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """`report -f html` keeps no launch record (the page lists launches from their groups); the page is the one
    made with them, and asking such an analysis for its JSON says what to do instead of writing a part of it."""
    from ncu_roofline.render import REPORT, RenderOptions, render

    path = CORPUS / "self-join-mistic__profile.ncu-rep"
    if not path.is_file():
        pytest.skip("capture not in the shared corpus")
    monkeypatch.setattr(A, "LAUNCH_FINDINGS_UP_TO", 0)
    lean = ncu_roofline.analyze(path, launch_records=False)
    full = ncu_roofline.analyze(path)
    assert render(REPORT, lean, "md", RenderOptions()) == render(REPORT, full, "md", RenderOptions())
    with pytest.raises(ValueError, match="kept no launch records"):
        lean.to_json()


def test_a_streamed_export_names_the_row_of_an_impossible_value(tmp_path: Path) -> None:
    """A value a column cannot hold, far down a streamed export: the file's warning names that launch by its number
    and name, as for a small export, though the launch itself was let go long before the end."""
    plain = _plain_launches()
    count = A.LAUNCH_FINDINGS_UP_TO + 5
    launches = []
    for i in range(count):
        k = dataclasses.replace(plain[i % len(plain)], index=i, name=f"k{i % 3}")
        if i == count - 2:
            k = dataclasses.replace(k, metrics={**k.metrics, "dram__bytes_read.sum": Metric(-5.0, "byte")})
        launches.append(k)
    export = write_ncu_csv(RawReport("neg.csv", "csv", launches), tmp_path / "neg.csv", prof_lines=False)
    report = ncu_roofline.analyze(export).reports[0]
    assert report.findings == FINDINGS_BY_GROUP
    (warning,) = [w for w in report.warnings if "impossible" in w]
    assert f"kernel {count - 2} (k{(count - 2) % 3}): dram__bytes_read.sum = -5" in warning


def test_a_streamed_export_keeps_launch_numbers_past_64_bits(tmp_path: Path) -> None:
    """IDs past 64 bits (a hand-edited export): every launch record, row and group holds each exact number."""
    plain = _plain_launches()
    count = A.LAUNCH_FINDINGS_UP_TO + 5
    base = 2 ** 70
    launches = [dataclasses.replace(plain[i % len(plain)], index=base + i) for i in range(count)]
    export = write_ncu_csv(RawReport("big.csv", "csv", launches), tmp_path / "big.csv", prof_lines=False)
    a = ncu_roofline.analyze(export)
    assert a.reports[0].findings == FINDINGS_BY_GROUP
    expected = [base + i for i in range(count)]
    assert [row["index"] for row in a.rows()] == expected
    assert [k["index"] for k in a.to_dict()["reports"][0]["kernels"]] == expected
    assert [k["index"] for k in json.loads(a.to_json())["reports"][0]["kernels"]] == expected
    assert [k["index"] for k in a.to_dict(redact=True)["reports"][0]["kernels"]] == expected


@pytest.mark.parametrize("pread", [True, False], ids=["pread", "seek-and-read"])
def test_launch_records_are_read_whole_when_a_read_stops_short(monkeypatch: pytest.MonkeyPatch, pread: bool) -> None:
    """The OS may read less than asked (Linux stops one read at 2 GiB): records read back and pickled are whole, and
    a file shorter than what was written is an error, not a record cut short; also where there is no pread."""
    from ncu_roofline.api import records as R

    if R._PREAD is None and pread:
        pytest.skip("no pread on this platform")
    real = R._PREAD
    monkeypatch.setattr(R, "_PREAD", (lambda fd, length, offset: real(fd, min(length, 7), offset)) if pread else None)
    monkeypatch.setattr(R, "HELD_BYTES", 0)  # in the file from the first byte on
    made = R.LaunchRecords()
    for i in range(3):
        made.put(made.reserve_many([i]), {"index": i, "name": f"kernel_{i}" * 5, "provenance": {}, "missing": []})
    expected = [{"index": i, "name": f"kernel_{i}" * 5, "recipe_set": 0} for i in range(3)]
    assert list(map(R.decode_record, made.encoded())) == expected
    copied = pickle.loads(pickle.dumps(made))
    assert list(map(R.decode_record, copied.encoded())) == expected
    copied.close()
    made._file.file.truncate(made._end - 3)
    with pytest.raises(OSError, match="3 bytes short"):
        list(map(R.decode_record, made.encoded()))
    made.close()


@pytest.mark.parametrize("held", [0, 1, 150, 10**9], ids=["file", "one-byte", "some", "memory"])
def test_launch_records_held_in_memory_then_in_a_file_read_back_whole(monkeypatch: pytest.MonkeyPatch,
                                                                      held: int) -> None:
    """Records held in memory up to `HELD_BYTES`, then all in a temporary file: each is read back whole and in
    launch order, read together across the chunks they were written in, pickled too."""
    from ncu_roofline.api import records as R

    monkeypatch.setattr(R, "HELD_BYTES", held)
    monkeypatch.setattr(R, "_READ_TOGETHER", 100)
    made = R.LaunchRecords()
    first = made.reserve_many(list(range(6)))
    for i in (0, 1, 3, 4, 5, 2):  # the third written last, as a group's longest let go
        made.put(first + i, {"index": i, "name": f"k{i}" * (i + 1), "provenance": {}, "missing": []})
    expected = [{"index": i, "name": f"k{i}" * (i + 1), "recipe_set": 0} for i in range(6)]
    assert list(map(R.decode_record, made.encoded())) == expected
    assert (made._file.file is None) == (held == 10**9)
    copied = pickle.loads(pickle.dumps(made))
    assert list(map(R.decode_record, copied.encoded())) == expected
    copied.close()
    made.close()


def test_launch_records_of_every_report_share_one_memory_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """`HELD_BYTES` bounds the records every report of the process holds in memory together: a second report's go to
    its file once the first's fill the budget, and a report closed (or let go) gives its share back."""
    from ncu_roofline.api import records as R

    record = {"index": 0, "name": "k" * 80, "provenance": {}, "missing": []}
    size = len(R.encode_bytes({k: v for k, v in record.items() if k not in ("provenance", "missing")}
                              | {"recipe_set": 0}))
    monkeypatch.setattr(R, "HELD_BYTES", 3 * size)
    monkeypatch.setattr(R, "_held", 0)
    first, second = R.LaunchRecords(), R.LaunchRecords()
    for made in (first, first, second, second):
        made.put(made.reserve_many([0]), dict(record))
    assert first._file.file is None and second._file.file is not None and R._held == 2 * size
    assert len(list(first.encoded())) == 2 and len(list(second.encoded())) == 2
    first.close()
    assert R._held == 0
    third = R.LaunchRecords()
    third.put(third.reserve_many([0]), dict(record))
    assert third._file.file is None and R._held == size
    del third
    assert R._held == 0
    second.close()


def test_launch_records_read_together_are_each_launchs_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """Records that follow one another in the file are read in one call, up to a size: each comes out whole, in
    launch order, where some were written late (a group's longest, let go after later launches) and at every read
    size."""
    from ncu_roofline.api import records as R

    made = R.LaunchRecords()
    positions = [made.reserve_many([i]) for i in range(12)]
    late = {3, 4, 9}
    for p in [p for p in positions if p not in late] + sorted(late, reverse=True):
        made.put(p, {"index": p, "name": "k" * p, "provenance": {}, "missing": []})
    expected = [{"index": i, "name": "k" * i, "recipe_set": 0} for i in range(12)]
    calls = []
    real = R._Spool.read_at
    monkeypatch.setattr(R._Spool, "read_at", lambda spool, length, offset: calls.append(length) or real(spool, length,
                                                                                                        offset))
    for size in (1, 60, 200, 1 << 20):
        monkeypatch.setattr(R, "_READ_TOGETHER", size)
        calls.clear()
        assert list(map(R.decode_record, made.encoded())) == expected
        assert len(calls) == 12 if size == 1 else len(calls) < 12
    made.close()


@pytest.mark.parametrize("big", [False, True], ids=["plain", "past-64-bits"])
def test_a_batch_job_writes_a_streamed_export(tmp_path: Path, big: bool) -> None:
    """`batch` on an export past the launch-by-launch limit: the job's document is the one `report -f json` writes
    and the API's `to_json`, and its kernel rows hold every launch, with its exact launch number and stream (past 64
    bits in a hand-edited export: read back from the records without becoming floats)."""
    from ncu_roofline.batch import analyse_one
    from ncu_roofline.settings import AnalysisSettings

    plain = _plain_launches()
    count = A.LAUNCH_FINDINGS_UP_TO + 5
    base = 2 ** 70 if big else 0
    launches = [dataclasses.replace(plain[i % len(plain)], index=base + i, stream_id=base + 7)
                for i in range(count)]
    export = write_ncu_csv(RawReport("big.csv", "csv", launches), tmp_path / "big.csv", prof_lines=False)
    res = analyse_one(str(export), AnalysisSettings(), html=False)
    assert res["status"] == "ok", res["error"]
    assert [row["index"] for row in res["rows"]] == [base + i for i in range(count)]
    assert res["summary"]["kernel_count"] == count
    expected = [(base + i, base + 7) for i in range(count)]
    doc = json.loads(res["json"])
    assert [(k["index"], k["stream_id"]) for k in doc["reports"][0]["kernels"]] == expected
    a = ncu_roofline.analyze(export)
    assert doc == json.loads(a.to_json())
    assert [(k["index"], k["stream_id"]) for k in a.to_dict()["reports"][0]["kernels"]] == expected


def test_a_streamed_report_is_not_grouped_otherwise_than_made(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its launches let go, a report analysed by group cannot be regrouped: other settings are refused, not
    answered with the groups made under the first ones."""
    path = CORPUS / "self-join-mistic__profile.ncu-rep"
    if not path.is_file():
        pytest.skip("capture not in the shared corpus")
    a = _by_group(path, monkeypatch)
    other = dataclasses.replace(a.settings, group_by="name")
    with pytest.raises(ValueError, match="group_by='launch'"):
        ncu_roofline.Analysis(a.reports, [], other).groups_of(a.reports[0])
    assert ncu_roofline.Analysis(a.reports, [], a.settings).groups_of(a.reports[0]) == a.groups_of(a.reports[0])


def _passes_only_count(k: RawKernel) -> str | None:
    """A count column of `k` that its passes read and its model does not (None where there is none)."""
    from ncu_roofline.api.kernel import model_launch, run_passes
    from ncu_roofline.readers.csv_export import analysis_columns
    from ncu_roofline.readers.csv_impossible import cannot_be_negative
    from ncu_roofline.settings import AnalysisSettings

    read: list[str] = []

    class Spied(dict):  # type: ignore[type-arg]
        def get(self, name: str, default: object = None) -> object:
            read.append(name)
            return super().get(name, default)

    launch = model_launch(dataclasses.replace(k, metrics=Spied(k.metrics)), AnalysisSettings())
    modelled = set(read)
    run_passes(launch)
    checked = analysis_columns()  # checked in every row whatever reads them
    return next((n for n in read if n not in modelled and n not in checked and n.endswith(".sum")
                 and cannot_be_negative(n) and type(getattr(k.metrics.get(n), "value", None)) is float), None)


def _grouped_export(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, names: int = 1, negative_at: tuple[int, ...] = ()
                    ) -> tuple[Path, str]:
    """An export of 40 launches of a corpus kernel whose passes read a count its model does not (that column),
    analysed by group past its 16th launch in blocks of 10, the launches named in turn by `names` names, the count
    -5 in the launches `negative_at`; launch 5 is the longest."""
    monkeypatch.setattr(A, "LAUNCH_FINDINGS_UP_TO", 16)
    monkeypatch.setattr(A, "BULK_ROWS", 10)
    for path in corpus_files():
        k = next((k for k in read_report_isolated(path).kernels if k.metrics.get("gpu__time_duration.sum")), None)
        column = _passes_only_count(k) if k is not None else None
        if k is not None and column is not None:
            break
    else:
        pytest.skip("no corpus kernel whose passes read a count its model does not")
    launches = []
    for i in range(40):
        m = dict(k.metrics)
        d = m["gpu__time_duration.sum"]
        m["gpu__time_duration.sum"] = Metric(d.value * (2 if i == 5 else 1), d.unit)
        if i in negative_at:
            m[column] = Metric(-5.0, m[column].unit)
        name = f"{k.name}_{i % names}"
        launches.append(dataclasses.replace(k, index=i, metrics=m, name=name, demangled_name=name))
    return write_ncu_csv(RawReport("export", "csv", launches), tmp_path / "export.csv"), column


def test_a_report_by_group_checks_what_its_first_launchs_passes_read(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The columns a CSV export parses at once in every row, and checks there, are learnt from its first launch's
    analysis, its passes included: a value a count cannot hold, in a launch whose passes never run (not its group's
    longest, in a report analysed by group), is said as when every launch runs its passes."""
    from ncu_roofline.settings import AnalysisSettings

    export, column = _grouped_export(tmp_path, monkeypatch, negative_at=(7, 30))
    by_group = A.analyze_report(export, AnalysisSettings(), keep_metrics=False)
    by_launch = A.analyze_report(export, AnalysisSettings(launch_findings=True))
    assert by_group.findings == FINDINGS_BY_GROUP
    assert any(column in w and "-5" in w for w in by_launch.warnings), by_launch.warnings
    assert by_group.warnings == by_launch.warnings


def test_a_report_by_group_keeps_only_its_groups_longest_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without `keep_metrics`, a report analysed by group keeps, until its groups are made, the rows of its groups'
    longest launches alone (their findings read them): not a group's first launch, nor any other."""
    import gc

    from ncu_roofline.api.groups import GroupMaker
    from ncu_roofline.readers.csv_rows import RowMetrics
    from ncu_roofline.settings import AnalysisSettings

    export, _ = _grouped_export(tmp_path, monkeypatch, names=4)  # launch 5, the longest, is not its group's first

    def rows_alive() -> int:
        gc.collect()
        return sum(isinstance(o, RowMetrics) for o in gc.get_objects())

    made = GroupMaker.groups
    alive: list[int] = []
    monkeypatch.setattr(GroupMaker, "groups", lambda self, *args: alive.append(rows_alive()) or made(self, *args))
    before = rows_alive()
    report = A.analyze_report(export, AnalysisSettings(), keep_metrics=False)
    assert report.findings == FINDINGS_BY_GROUP and len(report.kernels) == 4
    assert alive == [before + 4]
    assert rows_alive() == before
