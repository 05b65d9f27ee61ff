"""`kernels.parquet`: the tidy kernel table with one fixed schema, whatever the data.

Every column of `api.rows.columns()` has a declared Arrow type, so that the files of many runs
(one folder per night, say) read as one table, e.g. with DuckDB's
`read_parquet('nightly/*/kernels.parquet')`: a column that is empty (all null) in one run keeps
its type, the group key column is always there, and a run without any kernel still writes an
empty table with the same columns. A column that `columns()` does not know (added later and
not declared here) falls back to its values' type, text when they are all null.

pyarrow is a dependency of the package; an environment that lacks it anyway (installed with
`--no-deps`, a platform without a pyarrow wheel) still gets the rest of the batch, and
`pyarrow_missing` says why there is no Parquet file, so that the batch can say so on standard
error, in the index page and in the manifest instead of leaving it out without a word.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..api.rows import columns
from ..render.csv import flat_text
from ..render.output import write_atomic

TEXT_COLUMNS = frozenset({
    "report", "name", "demangled_name", "group_key", "device", "compute_capability", "unusable_reason",
    "dominant_precision", "bound_by", "bound_kind", "regime", "byte_definition_l2", "byte_definition_l1",
    "flags", "nvtx_ranges",
})
INTEGER_COLUMNS = frozenset({"index", "range_index", "sm_count", "missing_count"})
BOOLEAN_COLUMNS = frozenset({"usable"})
# Every other column of `columns()` is a number (seconds, FLOP, bytes, rates, shares): float64.


def column_type(name: str) -> str:
    """The declared type of a known column: "string", "int64", "bool" or "float64"."""
    if name in TEXT_COLUMNS:
        return "string"
    if name in INTEGER_COLUMNS:
        return "int64"
    if name in BOOLEAN_COLUMNS:
        return "bool"
    return "float64"


def _inferred_type(values: list[Any]) -> str:
    """The type of a column no declaration covers, from its values (text when all are null)."""
    kinds = {type(v) for v in values if v is not None}
    if kinds and kinds <= {bool}:
        return "bool"
    if kinds and kinds <= {int}:
        return "int64"
    if kinds and kinds <= {int, float}:
        return "float64"
    return "string"


def _converted(values: list[Any], kind: str) -> list[Any]:
    if kind == "string":
        return [v if v is None or isinstance(v, str) else str(flat_text(v)) for v in values]  # lists joined, as in CSV
    if kind == "float64":
        return [None if v is None else float(v) for v in values]
    if kind == "int64":
        return [None if v is None else int(v) for v in values]
    return [None if v is None else bool(v) for v in values]


def kernel_table(rows: list[dict[str, Any]]) -> Any:
    """The kernel rows as a `pyarrow.Table` with the fixed schema (raises ImportError without pyarrow)."""
    import pyarrow as pa

    known = columns()
    names = known + [c for c in (rows[0] if rows else {}) if c not in known]
    declared = set(known)
    fields, arrays = [], []
    for name in names:
        values = [r.get(name) for r in rows]
        kind = column_type(name) if name in declared else _inferred_type(values)
        typ = {"string": pa.string(), "int64": pa.int64(), "bool": pa.bool_(), "float64": pa.float64()}[kind]
        fields.append(pa.field(name, typ))
        arrays.append(pa.array(_converted(values, kind), type=typ))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def pyarrow_missing() -> str | None:
    """Why `kernels.parquet` cannot be written here (pyarrow cannot be imported), or None when it can."""
    try:
        import pyarrow.parquet  # noqa: F401
    except ImportError as exc:
        return f"pyarrow cannot be imported ({exc}); install it: pip install 'pyarrow>=14'"
    return None


def write_parquet(rows: list[dict[str, Any]], target: Path) -> None:
    """Write the kernel table as Parquet (atomically); `pyarrow_missing` says first whether it can be."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    sink = pa.BufferOutputStream()  # the same bytes as written to a file
    pq.write_table(kernel_table(rows), sink)
    write_atomic(target, sink.getvalue().to_pybytes(), force=True)
