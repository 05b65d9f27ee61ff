"""Deterministic JSON for every document the tool writes: sorted keys, no NaN, null for absent.

Compact documents are encoded with orjson (a launch's dict in about a fifth of the standard
library's time, which matters at 50,000 launches), with `,` and `:` as separators; indented ones
(diff and trend documents, a few kilobytes) with the standard library. Both write a non-finite
float as null and sort keys by code point, so the two read back the same.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import orjson

# Sorted keys; int keys written as strings (as the standard library does); numpy scalars as numbers.
# Dataclasses and datetimes are refused, as the standard library refuses them: a document holds only
# what its `to_dict` made, and a stray object must fail loudly, not be written in some form.
ORJSON_OPTIONS = (orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY
            | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME)
# The fallback, for what orjson refuses (an integer past 64 bits, a float subclass, a key type it
# does not write): check_circular off, since the documents are trees built here.
_ENCODER = json.JSONEncoder(sort_keys=True, allow_nan=False, ensure_ascii=False, check_circular=False,
                            separators=(",", ":"))
_LAZY_DEPTH = 3  # where a LazyList may sit: document -> reports -> report -> its list
_BATCH_BYTES = 1 << 20  # a LazyList's items written together: a piece of about this size


def json_safe(obj: Any) -> Any:
    """Non-finite floats become null (JSON has no NaN, and a missing value is never 0)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    return obj


def dumps(doc: Any, indent: int | None = None) -> str:
    """The document as text with a final newline (compact unless `indent` is given).

    The document is encoded as it is; only when it holds a non-finite float (which JSON cannot
    write) is it copied through `json_safe` first, so the common case costs no copy.
    """
    if indent is None:
        return encode_bytes(doc).decode() + "\n"
    try:
        text = json.dumps(doc, indent=indent, sort_keys=True, allow_nan=False, ensure_ascii=False)
    except (ValueError, TypeError):  # NaN or infinity; keys that are not all strings
        text = json.dumps(json_safe(doc), indent=indent, sort_keys=True, allow_nan=False, ensure_ascii=False)
    return text + "\n"


class Encoded(bytes):
    """An item of a `LazyList` encoded already (`encode_bytes`): written as it is."""


class LazyList:
    """A list of a document made and encoded one item at a time by `iter_dumps` (never held whole).

    `make` is called once per encoding and yields the items (e.g. one dict per kernel launch).
    """

    def __init__(self, make: Callable[[], Iterable[Any]]) -> None:
        self.make = make


def encode_bytes(obj: Any) -> bytes:
    """One item of a compact document, as UTF-8 JSON (what `iter_dump_bytes` writes of it)."""
    try:
        return orjson.dumps(obj, option=ORJSON_OPTIONS)  # NaN and infinity become null
    except (orjson.JSONEncodeError, TypeError):
        pass
    try:
        return _ENCODER.encode(obj).encode()
    except (ValueError, TypeError):  # NaN or infinity; keys that are not all strings
        return _ENCODER.encode(json_safe(obj)).encode()


def _holds_lazy(obj: Any, depth: int = _LAZY_DEPTH) -> bool:
    if isinstance(obj, LazyList):
        return True
    if depth == 0:
        return False
    if isinstance(obj, dict):
        return any(_holds_lazy(v, depth - 1) for v in obj.values())
    if isinstance(obj, list):
        return any(_holds_lazy(v, depth - 1) for v in obj)
    return False


def iter_dumps(doc: Any) -> Iterator[str]:
    """`dumps(doc)` (compact) in pieces, the same text: each `LazyList` item is made, encoded and let go
    in turn, so that a document of 50,000 launches is never one object tree or one string."""
    for piece in iter_dump_bytes(doc):
        yield piece.decode()


def iter_dump_bytes(doc: Any) -> Iterator[bytes]:
    """`iter_dumps`, as UTF-8 bytes: what a file is written from (orjson's own output, not decoded into
    a string to be encoded again: half a gigabyte at 50,000 launches)."""
    yield from _pieces(doc)
    yield b"\n"


def _pieces(obj: Any) -> Iterator[bytes]:
    if isinstance(obj, LazyList):  # its items' text joined a megabyte or so at a time
        yield b"["
        batch: list[bytes] = []
        size, sep = 0, b""
        for item in obj.make():
            piece = item if isinstance(item, Encoded) else encode_bytes(item)
            batch.append(piece)
            size += len(piece)
            if size >= _BATCH_BYTES:
                yield sep + b",".join(batch)
                batch, size, sep = [], 0, b","
        if batch:
            yield sep + b",".join(batch)
        yield b"]"
    elif isinstance(obj, dict) and _holds_lazy(obj):
        yield b"{"
        for i, key in enumerate(sorted(obj)):
            yield ("," if i else "").encode() + _ENCODER.encode(str(key)).encode() + b":"
            yield from _pieces(obj[key])
        yield b"}"
    elif isinstance(obj, list) and _holds_lazy(obj):
        yield b"["
        for i, item in enumerate(obj):
            if i:
                yield b","
            yield from _pieces(item)
        yield b"]"
    else:
        yield encode_bytes(obj)
