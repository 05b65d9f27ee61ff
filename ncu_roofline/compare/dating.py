"""Finding and dating the runs of a trend: which folders and files are runs, and when each was made.

Runs are ordered by a date: the leading ISO date of the folder or file name (`2026-11-01`,
optionally with a time: `2026-11-01T03:00`, `2026-11-01_0300`), else a generation time recorded in
the manifest or document, else the modification time of the manifest or file. Each run says which
of the three was used (`name`, `manifest`, `mtime`).
"""

from __future__ import annotations

import datetime as _dt
import math
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..knowledge.jsonio import DOCUMENT_MAX_BYTES, read_json
from .runs import MANIFEST


class TrendUsageError(InputError):
    """Not enough to draw a trend: fewer than two runs, or a folder with nothing to read."""

_REPORT_SUFFIXES = (".ncu-rep", ".nsight-cuprof-report", ".csv", ".json")
# A leading ISO date, optionally followed by a time (T, _, space or - as separator).
_NAME_DATE = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})"
    r"(?:[T_ -](\d{2})[:.-]?(\d{2})(?:[:.-]?(\d{2}))?)?"
    r"(?!\d)"
)
# Keys under which a manifest or document might record when it was generated.
_RECORDED_KEYS = ("generated_at", "created_at", "generated", "created", "timestamp", "date")


def run_name(path: str | Path) -> str:
    """A run's label: its folder name, or its file name without the report/JSON suffix."""
    p = Path(path)
    name = p.name or str(p)
    if not p.is_dir():
        for suffix in _REPORT_SUFFIXES:
            if name.lower().endswith(suffix) and len(name) > len(suffix):
                return name[: -len(suffix)]
    return name


def date_from_name(name: str) -> tuple[_dt.datetime, str] | None:
    """The leading ISO date (and time) of a name, with its normalised text; None without one."""
    m = _NAME_DATE.match(name)
    if not m:
        return None
    year, month, day, hour, minute, second = (int(g) if g is not None else None for g in m.groups())
    try:
        when = _dt.datetime(year, month, day, hour or 0, minute or 0, second or 0)  # type: ignore[arg-type]
    except ValueError:
        return None
    if hour is None:
        return when, when.strftime("%Y-%m-%d")
    return when, when.strftime("%Y-%m-%dT%H:%M:%S" if second is not None else "%Y-%m-%dT%H:%M")


def _parse_recorded(value: Any) -> _dt.datetime | None:
    """A recorded time (ISO 8601 text or Unix seconds) as naive UTC; None when it is neither."""
    if isinstance(value, bool):
        return None
    try:
        if isinstance(value, (int, float)) and math.isfinite(value) and value > 0:
            return _dt.datetime.fromtimestamp(float(value), tz=_dt.timezone.utc).replace(tzinfo=None)
        if isinstance(value, str) and value.strip():
            text = value.strip()
            if text.endswith(("Z", "z")):
                text = text[:-1] + "+00:00"
            when = _dt.datetime.fromisoformat(text)
            if when.tzinfo is not None:
                when = when.astimezone(_dt.timezone.utc).replace(tzinfo=None)
            return when
    except (ValueError, OverflowError, OSError):
        return None
    return None


def recorded_time(doc: Any) -> _dt.datetime | None:
    """A generation time recorded in a manifest or document (top level or under `generator`)."""
    if not isinstance(doc, dict):
        return None
    for holder in (doc, doc.get("generator")):
        if isinstance(holder, dict):
            for key in _RECORDED_KEYS:
                when = _parse_recorded(holder.get(key))
                if when is not None:
                    return when
    return None


def _utc_text(when: _dt.datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def run_date(path: str | Path) -> tuple[_dt.datetime, str, str]:
    """(date, text, source) of a run: from its name, else a recorded time, else the mtime."""
    p = Path(path)
    named = date_from_name(p.name)
    if named is not None:
        return named[0], named[1], "name"
    stamp_file = p / MANIFEST if p.is_dir() else p
    if stamp_file.suffix.lower() == ".json" and stamp_file.is_file():
        try:
            when = recorded_time(read_json(stamp_file, max_bytes=DOCUMENT_MAX_BYTES, what="JSON document"))
        except InputError:
            when = None
        if when is not None:
            return when, _utc_text(when), "manifest"
    try:
        mtime = stamp_file.stat().st_mtime
    except OSError as exc:
        raise InputError(p, f"cannot read ({exc.strerror or exc})") from exc
    when = _dt.datetime.fromtimestamp(mtime, tz=_dt.timezone.utc).replace(tzinfo=None)
    return when, _utc_text(when), "mtime"


def discover_runs(specs: Iterable[str | Path]) -> list[Path]:
    """The runs named by the arguments, parent folders expanded, duplicates removed.

    A folder with `manifest.json` is one run; a folder without one is a parent whose direct
    sub-folders with a `manifest.json` are runs (raises `TrendUsageError` when there is none);
    a file is one run (a JSON document or a report file).
    """
    found: list[Path] = []
    for spec in specs:
        p = Path(spec)
        if p.is_dir() and not (p / MANIFEST).is_file():
            try:
                children = sorted(c for c in p.iterdir() if c.is_dir() and (c / MANIFEST).is_file())
            except OSError as exc:
                raise TrendUsageError(p, f"cannot list the folder ({exc.strerror or exc})") from exc
            if not children:
                raise TrendUsageError(p, f"a folder with nothing to read: no {MANIFEST}, and no sub-folder "
                                         f"with one", "give batch output folders, their parent folder, "
                                         "report files or `report --format json` documents")
            found.extend(children)
        elif not p.exists():
            raise InputError(p, "no such file or folder")
        else:
            found.append(p)
    unique: dict[str, Path] = {}
    for p in found:
        unique.setdefault(os.path.realpath(p), p)
    return list(unique.values())


def unique_labels(paths: Sequence[Path]) -> list[str]:
    """Run names; where two runs share one, the parent folder's name is added, then a number."""
    names = [run_name(p) for p in paths]
    labels = list(names)
    for n, path in enumerate(paths):
        if names.count(names[n]) > 1 and path.parent.name:
            labels[n] = f"{path.parent.name}/{names[n]}"
    seen: dict[str, int] = {}
    before = list(labels)
    for n, label in enumerate(before):  # still the same: number them
        if before.count(label) > 1:
            seen[label] = seen.get(label, 0) + 1
            labels[n] = f"{label} ({seen[label]})"
    return labels
