"""Strings read from a report, made safe to join and write: absent where the reader could not give one."""

from __future__ import annotations

import re

# A byte that is not UTF-8, as NVIDIA's reader hands it back (a lone surrogate, as `surrogateescape` keeps it).
_SURROGATE = re.compile("[\ud800-\udfff]")


def text(value: object) -> str:
    """A string read from a report, as the outputs can write it: "" for one the reader could not give (None, or
    not a string: a damaged string table), and U+FFFD for each byte in it that is not UTF-8 (as the CSV reader
    replaces them; a lone surrogate cannot be encoded)."""
    if not isinstance(value, str):
        return ""
    return value if value.isascii() or not _SURROGATE.search(value) else _SURROGATE.sub("\ufffd", value)
