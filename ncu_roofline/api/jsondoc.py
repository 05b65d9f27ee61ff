"""Deterministic JSON for every document the tool writes: sorted keys, no NaN, null for absent."""

from __future__ import annotations

import json
import math
from typing import Any


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
    try:
        text = json.dumps(doc, indent=indent, sort_keys=True, allow_nan=False, ensure_ascii=False)
    except (ValueError, TypeError):  # NaN or infinity; keys that are not all strings
        text = json.dumps(json_safe(doc), indent=indent, sort_keys=True, allow_nan=False, ensure_ascii=False)
    return text + "\n"
