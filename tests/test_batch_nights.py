"""Many nights at once: `kernels.parquet` keeps one schema across runs, and DuckDB reads a glob of them.

Both queries are those of docs/guide/batch.md ("Many nights at once", laid out differently there); they run over
`nightly/<night>/kernels.parquet` written by three small batches of synthetic ncu CSV exports
(no corpus needed): GPU time per limiter per night, and the kernels whose GPU time grew most from one night to the next.
"""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from pathlib import Path

import pytest
from conftest import make_kernel
from ncu_csv_writer import write_ncu_csv
from test_model import OP, base_metrics

from ncu_roofline.api.rows import columns
from ncu_roofline.batch import run_batch
from ncu_roofline.batch.parquet import column_type
from ncu_roofline.readers.record import RawReport
from ncu_roofline.settings import AnalysisSettings

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

# Run from the folder that holds nightly/.
NIGHT = r"regexp_extract(filename, '([^/\\]+)[/\\]kernels\.parquet$', 1)"
LIMITER_PER_NIGHT = f"""
SELECT {NIGHT} AS night, coalesce(bound_by, 'none') AS limiter,
       sum(duration_s) AS gpu_time_s, count(*) AS launches
FROM read_parquet('nightly/*/kernels.parquet', filename = true)
GROUP BY ALL
ORDER BY night, gpu_time_s DESC
"""
GREW_MOST = f"""
WITH per_night AS (
  SELECT {NIGHT} AS night, group_key, any_value(name) AS name, sum(duration_s) AS gpu_time_s
  FROM read_parquet('nightly/*/kernels.parquet', filename = true)
  GROUP BY night, group_key
), last_two AS (
  SELECT DISTINCT night FROM per_night ORDER BY night DESC LIMIT 2
)
SELECT now.name, now.group_key, coalesce(before.gpu_time_s, 0) AS before_s, now.gpu_time_s AS after_s,
       now.gpu_time_s - coalesce(before.gpu_time_s, 0) AS growth_s
FROM per_night AS now
LEFT JOIN per_night AS before
  ON before.group_key = now.group_key AND before.night = (SELECT min(night) FROM last_two)
WHERE now.night = (SELECT max(night) FROM last_two)
ORDER BY growth_s DESC
LIMIT 10
"""


def _kernel(index: int, name: str, microseconds: float, fp16: bool = True):
    metrics = base_metrics()
    metrics["gpu__time_duration.sum"] = (microseconds * 1000.0, "ns")
    if name == "layernorm":  # little DRAM traffic: another limiter than the others'
        metrics["dram__bytes_read.sum.per_second"] = (1e9, "byte/s")
    if not fp16:  # no FP16 work at all: the fp16 columns are empty (all null) in such a night
        del metrics[OP.format("hfma") + ".per_cycle_elapsed"]
    return make_kernel(metrics, index=index, name=name, demangled_name=name, grid_size=(64, 1, 1),
                       block_size=(256, 1, 1))


def _night(folder: Path, kernels: dict[str, list[tuple[str, float]]], fp16: bool) -> Path:
    """One night's captures: {file name: [(kernel, microseconds)]} written as ncu CSV exports."""
    folder.mkdir(parents=True)
    for file, launches in kernels.items():
        ks = [_kernel(i, name, us, fp16) for i, (name, us) in enumerate(launches)]
        write_ncu_csv(RawReport(file, "csv", ks), folder / file)
    return folder


@pytest.fixture(scope="module")
def nightly(tmp_path_factory) -> Path:
    """root/ with captures/<night>/ and the batch of each night in nightly/<night>/."""
    root = tmp_path_factory.mktemp("fleet")
    nights = {
        "2024-06-01": ({"model_a.csv": [("gemm", 10.0), ("gemm", 10.0), ("softmax", 2.0)],
                        "model_b.csv": [("layernorm", 4.0)]}, False),
        "2024-06-02": ({"model_a.csv": [("gemm", 15.0), ("gemm", 15.0), ("softmax", 1.0), ("rope", 3.0)],
                        "model_b.csv": [("layernorm", 4.5)]}, True),
    }
    for night, (files, fp16) in nights.items():
        captures = _night(root / "captures" / night, files, fp16)
        result = run_batch([str(captures)], root / "nightly" / night, AnalysisSettings(), jobs=1)
        assert result.failed == 0 and result.parquet
    # a night on which every capture failed: no kernel, and still the same table
    broken = root / "captures" / "2024-05-31"
    broken.mkdir(parents=True)
    (broken / "empty.ncu-rep").write_bytes(b"")
    result = run_batch([str(broken)], root / "nightly" / "2024-05-31", AnalysisSettings(), jobs=1)
    assert result.failed == 1 and result.kernel_count == 0 and result.parquet
    return root


def _csv_rows(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))


def test_every_column_has_a_declared_type() -> None:
    """A column added to the rows must get a type here, not one that depends on a night's data."""
    from ncu_roofline.batch import parquet

    declared = parquet.TEXT_COLUMNS | parquet.INTEGER_COLUMNS | parquet.BOOLEAN_COLUMNS
    assert declared <= set(columns())
    assert {column_type(c) for c in columns()} == {"string", "int64", "bool", "float64"}
    assert column_type("group_key") == "string" and column_type("duration_s") == "float64"


def test_parquet_schema_is_the_same_every_night(nightly) -> None:
    schemas = {p.parent.name: pq.read_schema(p) for p in sorted((nightly / "nightly").glob("*/kernels.parquet"))}
    assert sorted(schemas) == ["2024-05-31", "2024-06-01", "2024-06-02"]
    first = schemas["2024-06-01"]
    assert all(s.equals(first) for s in schemas.values()), {n: str(s) for n, s in schemas.items()}
    assert first.names == columns()  # the CSV's columns, in its order, the group key among them
    assert first.field("group_key").type == pa.string()
    assert first.field("work_fp16_flop").type == pa.float64()  # all null on 2024-06-01, numbers on 06-02
    assert pq.read_table(nightly / "nightly" / "2024-05-31" / "kernels.parquet").num_rows == 0
    table = pq.read_table(nightly / "nightly" / "2024-06-01" / "kernels.parquet")
    assert table.column("work_fp16_flop").null_count == table.num_rows == 4
    # the Parquet rows are the CSV rows
    rows = _csv_rows(nightly / "nightly" / "2024-06-02" / "kernels.csv")
    table = pq.read_table(nightly / "nightly" / "2024-06-02" / "kernels.parquet").to_pylist()
    assert [r["name"] for r in table] == [r["name"] for r in rows]
    assert [r["duration_s"] for r in table] == [float(r["duration_s"]) for r in rows]


def test_duckdb_queries_over_many_nights(nightly, monkeypatch) -> None:
    duckdb = pytest.importorskip("duckdb")
    monkeypatch.chdir(nightly)
    con = duckdb.connect()
    got = con.execute(LIMITER_PER_NIGHT).fetchall()
    expected: dict[tuple[str, str], list[float]] = defaultdict(list)
    for night in ("2024-06-01", "2024-06-02"):
        for r in _csv_rows(nightly / "nightly" / night / "kernels.csv"):
            expected[(night, r["bound_by"] or "none")].append(float(r["duration_s"]))
    assert {(n, lim): (pytest.approx(sum(d)), len(d)) for (n, lim), d in expected.items()} == \
        {(n, lim): (t, c) for n, lim, t, c in got}
    assert [n for n, *_ in got] == sorted(n for n, *_ in got)  # nights in order; the empty one has no row
    assert len({lim for _, lim, *_ in got}) == 2

    grew = con.execute(GREW_MOST).fetchall()
    names = [name for name, *_ in grew]
    assert names == ["gemm", "rope", "layernorm", "softmax"]
    by_name = {name: (before, after, growth) for name, _key, before, after, growth in grew}
    assert by_name["gemm"] == (pytest.approx(20e-6), pytest.approx(30e-6), pytest.approx(10e-6))
    assert by_name["rope"] == (0, pytest.approx(3e-6), pytest.approx(3e-6))  # new tonight
    assert by_name["softmax"][2] == pytest.approx(-1e-6)
