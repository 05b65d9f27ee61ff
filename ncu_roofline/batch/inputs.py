"""What a batch reads: files, folders and glob patterns expanded into report paths.

Also the two names a report's outputs are filed under: `safe_name` (a file-system-safe stem)
and `file_sha256` (the content hash that decides whether a re-run may reuse them).
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import re
from collections.abc import Iterable
from pathlib import Path

from .layout import MANIFEST, SCHEMA

SUFFIXES = (".ncu-rep", ".nsight-cuprof-report", ".csv")


def has_report_suffix(name: str) -> bool:
    """Whether a file name ends in one of `SUFFIXES` (any case)."""
    return name.lower().endswith(SUFFIXES)


def is_batch_output(folder: str, files: list[str]) -> bool:
    """A folder this command wrote (its kernels.csv is not a report: never read it back)."""
    if MANIFEST not in files:
        return False
    try:
        with open(os.path.join(folder, MANIFEST), encoding="utf-8") as fh:
            return bool(json.load(fh).get("schema") == SCHEMA)
    except (OSError, ValueError, AttributeError):
        return False


def walk(folder: str) -> list[str]:
    """Every report file under `folder`, recursively, in sorted order; batch outputs are skipped."""
    found: list[str] = []
    for root, dirs, files in os.walk(folder):
        if is_batch_output(root, files):
            dirs.clear()
            continue
        dirs.sort()
        found.extend(os.path.join(root, f) for f in sorted(files) if has_report_suffix(f))
    return found


def collect_inputs(specs: Iterable[str]) -> tuple[list[str], list[str]]:
    """Expand files, folders (recursively) and glob patterns into a sorted list without duplicates.

    Folder walks and glob matches keep only `.ncu-rep`, `.nsight-cuprof-report` and `.csv` files;
    a file named explicitly is kept whatever its suffix, and so is a named path that does not
    exist (it then fails as "no such file"). Returns (paths, notes), where the notes say which
    patterns or folders matched nothing.
    """
    found: list[str] = []
    notes: list[str] = []
    for spec in specs:
        if os.path.isdir(spec):
            matches = walk(spec)
            if not matches:
                notes.append(f"{spec}: the folder holds no {', '.join(SUFFIXES)} file")
        elif os.path.exists(spec) or not glob.has_magic(spec):
            matches = [spec]
        else:
            matches = []
            for m in sorted(glob.glob(spec, recursive=True)):
                if os.path.isdir(m):
                    matches.extend(walk(m))
                elif has_report_suffix(m):
                    matches.append(m)
            if not matches:
                notes.append(f"{spec}: the pattern matches no {', '.join(SUFFIXES)} file")
        found.extend(os.path.normpath(m) for m in matches)
    unique: dict[str, str] = {}
    for path in sorted(found):
        unique.setdefault(os.path.realpath(path), path)
    return sorted(unique.values()), notes


def safe_name(path: str) -> str:
    """A file-system-safe stem for a report's outputs: its name plus a hash of its full path."""
    base = os.path.basename(path)
    for suffix in SUFFIXES:
        if base.lower().endswith(suffix):
            base = base[: -len(suffix)]
            break
    base = re.sub(r"[^A-Za-z0-9._-]+", "_", base).lstrip(".")[:80] or "report"
    digest = hashlib.sha256(os.path.abspath(path).encode("utf-8", "surrogateescape")).hexdigest()
    return f"{base}-{digest[:10]}"


def file_sha256(path: str | Path) -> str:
    """The SHA-256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def shown_path(path: str, redact: bool) -> str:
    """A path as the outputs show it: its base name only when redacting."""
    return os.path.basename(path) if redact else path
