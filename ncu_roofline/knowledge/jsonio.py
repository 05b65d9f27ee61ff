"""Reading back JSON the tool (or a user) wrote: bounded, strict, validated, and confined to its folder.

Everything read back (peaks files, `report --format json` documents, batch `manifest.json` and
the per-report documents it lists) goes through here, so that no file can hang, exhaust or
crash a command:

- `read_json(path, max_bytes=...)`: a regular file only (a device or a pipe is refused before it
  is opened), at most `max_bytes` (stated per kind of file below), UTF-8, strict JSON (`NaN`,
  `Infinity` and numbers that overflow a float are refused), nested at most `MAX_DEPTH` deep.
- `validate(doc, schema, path)`: a JSON Schema (`knowledge/schemas.py`) checked with
  `jsonschema`; the first violation becomes one InputError naming the file and the place
  (`reports[0].kernels[3].nvtx_ranges: must be a list, got 5`).
- `inside_folder(folder, rel)`: a path a file records (a manifest's `json`/`html`) is accepted
  only when it is relative, plain (no `..`, no `:` as in `javascript:` or `C:`, no backslash)
  and resolves, links followed, inside `folder`.

Every failure raises `InputError` (or the subclass the caller names), never anything else.
"""

from __future__ import annotations

import json
import math
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import InputError

MAX_DEPTH = 64                      # the documents nest about 8 deep
PEAKS_MAX_BYTES = 1 << 20           # a peaks file: a few hundred bytes in practice
MANIFEST_MAX_BYTES = 64 << 20       # a batch manifest: ~2 KiB per report
DOCUMENT_MAX_BYTES = 1 << 30        # a report JSON document: ~20 KiB per kernel

_TYPE_WORDS = {"number": "a number", "integer": "a whole number", "string": "a string", "array": "a list",
               "object": "an object", "boolean": "true or false", "null": "null"}


def _size_text(n: int) -> str:
    return f"{n / (1 << 20):,.0f} MiB" if n >= 1 << 20 else f"{n:,} bytes"


def read_bounded(path: str | Path, max_bytes: int, what: str, error: type[InputError] = InputError) -> bytes:
    """The bytes of a regular file of at most `max_bytes`; `error` (naming `path`) for anything else."""
    p = Path(path)
    try:
        mode = p.stat()
    except FileNotFoundError:
        raise error(p, f"no such {what}") from None
    except OSError as exc:
        raise error(p, f"cannot read the {what} ({exc.strerror or exc})") from exc
    if not stat.S_ISREG(mode.st_mode):
        raise error(p, f"not a regular file: a {what} must be a file (not a folder, device or pipe)")
    limit = f"more than the {_size_text(max_bytes)} a {what} may hold"
    if mode.st_size > max_bytes:
        raise error(p, f"too large: {_size_text(mode.st_size)}, {limit}")
    try:
        with p.open("rb") as fh:
            data = fh.read(max_bytes + 1)
    except OSError as exc:
        raise error(p, f"cannot read the {what} ({exc.strerror or exc})") from exc
    if len(data) > max_bytes:  # it grew while it was read
        raise error(p, f"too large: {limit}")
    return data


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:40]} does not fit a floating-point number")
    return value


def depth(doc: Any) -> int:
    """How deep lists and objects nest in `doc` (0 for a scalar); iterative, so any depth is fine."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(doc, 0)]
    while stack:
        value, level = stack.pop()
        if isinstance(value, dict):
            children: Any = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        deepest = max(deepest, level + 1)
        stack.extend((child, level + 1) for child in children)
    return deepest


def parse_json(data: bytes, path: str | Path, what: str, error: type[InputError] = InputError) -> Any:
    """Strict JSON from UTF-8 bytes (see the module docstring); `error` naming `path` when it is not."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error(path, f"not a JSON file (not UTF-8 text at byte {exc.start})") from exc
    try:
        doc = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except RecursionError:
        raise error(path, f"not a usable {what}: JSON nested deeper than {MAX_DEPTH} levels") from None
    except json.JSONDecodeError as exc:
        raise error(path, f"not valid JSON (line {exc.lineno}: {exc.msg})") from exc
    except ValueError as exc:  # NaN / Infinity, an overflowing float, an integer too long to convert
        raise error(path, f"not valid JSON ({exc})") from exc
    if depth(doc) > MAX_DEPTH:
        raise error(path, f"not a usable {what}: JSON nested deeper than {MAX_DEPTH} levels")
    return doc


def read_json(path: str | Path, *, max_bytes: int, what: str, error: type[InputError] = InputError) -> Any:
    """`read_bounded` then `parse_json`: the document, or `error` naming the file and the reason."""
    return parse_json(read_bounded(path, max_bytes, what, error), path, what, error)


def location(parts: Any) -> str:
    """`reports[0].kernels[3].name` from a jsonschema path (a deque of keys and indices)."""
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "the document"


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:59] + "…"


def describe(err: Any) -> str:
    """One jsonschema `ValidationError` in words."""
    where, kind, limit, value = location(err.absolute_path), err.validator, err.validator_value, err.instance
    if kind == "type":
        wanted = [limit] if isinstance(limit, str) else list(limit)
        return f"{where}: must be {' or '.join(_TYPE_WORDS.get(t, t) for t in wanted)}, got {_shown(value)}"
    if kind == "exclusiveMinimum":
        bound = "a positive number" if limit == 0 else f"a number above {limit}"
        return f"{where}: must be {bound}, got {_shown(value)}"
    if kind == "minimum":
        return f"{where}: must be at least {limit}, got {_shown(value)}"
    if kind == "additionalProperties" and isinstance(value, Mapping):
        known = set(err.schema.get("properties", {}))
        extra = sorted(str(k) for k in value if k not in known)
        prefix = f"{where}." if err.absolute_path else ""
        return f"unknown key {prefix}{extra[0] if extra else '?'}"
    if kind == "required":
        return f"{where}: {err.message.replace('is a required property', 'is missing')}"
    if kind in ("enum", "const"):
        allowed = limit if kind == "enum" else [limit]
        return f"{where}: must be {' or '.join(_shown(a) for a in allowed)}, got {_shown(value)}"
    if kind in ("minItems", "maxItems"):
        return f"{where}: must hold {limit} items, got {_shown(value)}"
    return f"{where}: {err.message}"


def validate(doc: Any, schema: Mapping[str, Any], path: str | Path, what: str,
             error: type[InputError] = InputError, hint: str = "", unknown_key_hint: str = "") -> None:
    """Check `doc` against a JSON Schema; the most relevant violation raises `error` naming `path`.

    `hint` goes with any violation, `unknown_key_hint` (instead) with an unknown key.
    """
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match

    found = best_match(Draft202012Validator(schema).iter_errors(doc))
    if found is not None:
        unknown = found.validator == "additionalProperties" and unknown_key_hint
        raise error(path, f"not a valid {what}: {describe(found)}", unknown_key_hint if unknown else hint)


def inside_folder(folder: str | Path, rel: Any, what: str, error: type[InputError] = InputError,
                  where: str | Path | None = None) -> Path:
    """`folder / rel` when `rel` is a plain relative path that stays inside `folder`, else `error`.

    `where` names the file that recorded the path (default: the folder).
    """
    shown = where if where is not None else folder
    text = rel if isinstance(rel, str) else None
    parts = text.split("/") if text else []
    if (text is None or not text or text.startswith("/") or "\\" in text or ":" in text
            or any(ord(c) < 0x20 for c in text) or any(p in ("", ".", "..") for p in parts)):
        raise error(shown, f"{what} {_shown(rel)} is refused: only a plain relative path inside "
                           f"{folder} is accepted", "the folder was edited by hand or is not ours; "
                                                    "write it again with `ncu-roofline batch`")
    base = Path(folder).resolve()
    target = (base / text).resolve()
    if os.path.commonpath([base, target]) != str(base):
        raise error(shown, f"{what} {_shown(rel)} resolves outside {folder} (through a link); refused",
                    "write the folder again with `ncu-roofline batch`")
    return Path(folder) / text
