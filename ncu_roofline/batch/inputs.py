"""What a batch reads: files, folders and glob patterns expanded into report paths.

Nothing is passed over silently: every file or folder that a folder walk or glob match finds
and does not analyse is returned as a `Skipped` (excluded by `--exclude`, not a report by its
suffix, an earlier batch's output folder, a link to a folder, a folder that cannot be listed),
so that the index page, the manifest and standard error can list it with its reason.

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
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path

from .layout import MANIFEST, SCHEMA

SUFFIXES = (".ncu-rep", ".nsight-cuprof-report", ".csv")

# Why a path found in the inputs is not analysed (`Skipped.reason`, the manifest's `skipped[].reason`).
EXCLUDED = "excluded"  # matches an --exclude pattern
NOT_A_REPORT = "not-a-report"  # its name has none of SUFFIXES
BATCH_OUTPUT = "batch-output"  # a folder an earlier batch wrote (its kernels.csv is not a report)
LINKED_FOLDER = "linked-folder"  # a symbolic link to a folder: walks do not follow links (no loops)
UNREADABLE = "unreadable"  # a folder that cannot be listed

FILE = "file"
FOLDER = "folder"
# How the index page, the error message and standard error name each reason.
REASON_LABELS = {EXCLUDED: "excluded", NOT_A_REPORT: "not a report", BATCH_OUTPUT: "batch output",
                 LINKED_FOLDER: "link to a folder", UNREADABLE: "unreadable"}
NOT_A_REPORT_TEXT = f"the name does not end in {', '.join(SUFFIXES[:-1])} or {SUFFIXES[-1]}"
BATCH_OUTPUT_TEXT = f"written by ncu-roofline batch, as its {MANIFEST} says: its files are not reports"


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


@dataclass(frozen=True)
class Skipped:
    """A file or folder found in the inputs and not analysed, and why (`reason` is one of the reasons above)."""

    path: str  # as found: the input joined with the path below it
    kind: str  # FILE or FOLDER (a folder's content was not searched)
    reason: str
    detail: str  # the reason in words, e.g. "matches --exclude 'old'"

    @property
    def label(self) -> str:
        """The reason in a word or two ("excluded", "not a report")."""
        return REASON_LABELS.get(self.reason, self.reason)

    def line(self, redact: bool = False) -> str:
        """"runs/old/: excluded (matches --exclude 'old')": how stderr and errors name it."""
        folder = "/" if self.kind == FOLDER else ""
        return f"{shown_path(self.path, redact)}{folder}: {self.label} ({self.detail})"

    def as_dict(self, redact: bool = False) -> dict[str, str]:
        """The manifest's `skipped[]` entry (the base name only when redacting, as for reports)."""
        return {"path": shown_path(self.path, redact), "kind": self.kind, "reason": self.reason,
                "detail": self.detail}


class Exclude:
    """`--exclude` patterns, matched against paths relative to the input they were found under.

    A path is excluded when any pattern matches (`fnmatch.fnmatchcase`: case-sensitive, `*`
    also matches `/`) its relative POSIX path, the relative path of a folder above it, or any
    single name in it. So `old` excludes every file or folder named old at any depth,
    `'*/old/*'` what lies in an old folder below the top, `night1/old` that one folder, and
    `'*.csv'` every CSV file. A leading `./` and a trailing `/` of a pattern are ignored.
    Matching the folders above as well keeps a folder walk (which prunes an excluded folder) and
    a glob match (which finds the files inside it directly) in agreement.
    """

    def __init__(self, patterns: Iterable[str] = ()) -> None:
        self.patterns: list[tuple[str, str]] = []  # (as given, normalised)
        for given in patterns:
            pattern = given.replace(os.sep, "/")
            while pattern.startswith("./"):
                pattern = pattern[2:]
            pattern = pattern.rstrip("/") if pattern.strip("/") else pattern
            if not pattern:
                raise ValueError("--exclude needs a pattern, not an empty string")
            self.patterns.append((given, pattern))

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def match(self, rel: str) -> str | None:
        """The first pattern (as given) that excludes the relative path `rel`, or None."""
        if not self.patterns:
            return None
        rel = rel.replace(os.sep, "/")
        lead = "/" if rel.startswith("/") else ""
        names = [n for n in rel.split("/") if n not in ("", ".")]
        for i, name in enumerate(names):
            prefix = lead + "/".join(names[: i + 1])
            for given, pattern in self.patterns:
                if fnmatchcase(prefix, pattern) or fnmatchcase(name, pattern):
                    return given
        return None


def excluded_by(pattern: str) -> str:
    return f"matches --exclude '{pattern}'"


@dataclass
class Inputs:
    """What the inputs expand to: the reports to analyse, notes, and what was found and skipped."""

    paths: list[str]
    notes: list[str] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)


def _below(rel_base: str, name: str) -> str:
    """`name` (a relative path, "." for none) below the relative folder `rel_base`, POSIX style."""
    name = name.replace(os.sep, "/")
    if name in ("", "."):
        return rel_base
    return f"{rel_base}/{name}" if rel_base else name


def _walk(folder: str, rel_base: str, exclude: Exclude, skipped: list[Skipped]) -> list[str]:
    """Every report file under `folder`, recursively, in sorted order; the rest goes to `skipped`.

    `rel_base` is `folder`'s path relative to the input it was found under ("" for the input
    itself): what `exclude` is matched against. Links to folders are not followed (a link loop
    would never end); an earlier batch's output folder is not searched.
    """
    found: list[str] = []

    def cannot_list(exc: OSError) -> None:
        where = exc.filename if isinstance(exc.filename, str) else folder
        skipped.append(Skipped(where, FOLDER, UNREADABLE, f"the folder cannot be listed: {exc.strerror or exc}"))

    for root, dirs, files in os.walk(folder, onerror=cannot_list):
        rel_root = _below(rel_base, os.path.relpath(root, folder))
        if is_batch_output(root, files):
            dirs.clear()
            skipped.append(Skipped(root, FOLDER, BATCH_OUTPUT, BATCH_OUTPUT_TEXT))
            continue
        kept: list[str] = []
        for name in sorted(dirs):
            path = os.path.join(root, name)
            pattern = exclude.match(_below(rel_root, name))
            if pattern is not None:
                skipped.append(Skipped(path, FOLDER, EXCLUDED, excluded_by(pattern)))
            elif os.path.islink(path):
                skipped.append(Skipped(path, FOLDER, LINKED_FOLDER,
                                       "folder walks do not follow links; give its target as an input"))
            else:
                kept.append(name)
        dirs[:] = kept
        for name in sorted(files):
            path = os.path.join(root, name)
            pattern = exclude.match(_below(rel_root, name))
            if pattern is not None:
                skipped.append(Skipped(path, FILE, EXCLUDED, excluded_by(pattern)))
            elif has_report_suffix(name):
                found.append(path)
            else:
                skipped.append(Skipped(path, FILE, NOT_A_REPORT, NOT_A_REPORT_TEXT))
    return found


def glob_base(pattern: str) -> str:
    """The leading folders of a glob pattern that hold no wildcard ("runs" for "runs/**/*.csv", "." for none):
    what `--exclude` patterns are matched relative to."""
    fixed: list[str] = []
    for part in Path(pattern).parts[:-1]:
        if glob.has_magic(part):
            break
        fixed.append(part)
    return os.path.join(*fixed) if fixed else "."


class _BatchFolders:
    """Which folders are batch outputs (each asked once), for the files a glob finds directly."""

    def __init__(self) -> None:
        self.known: dict[str, bool] = {}

    def __call__(self, folder: str) -> bool:
        if folder not in self.known:
            try:
                self.known[folder] = is_batch_output(folder, os.listdir(folder))
            except OSError:
                self.known[folder] = False
        return self.known[folder]

    def above(self, path: str, base: str) -> str | None:
        """The batch output folder that holds `path` (a folder counts itself), up to `base`; None if none."""
        here = os.path.normpath(path if os.path.isdir(path) else (os.path.dirname(path) or "."))
        stop = os.path.normpath(base)
        while True:
            if self(here):
                return here
            parent = os.path.dirname(here) or "."
            if here == stop or parent == here:
                return None
            here = parent


def find_inputs(specs: Iterable[str], exclude: Iterable[str] = ()) -> Inputs:
    """Expand files, folders (recursively) and glob patterns into a sorted list without duplicates.

    Folder walks and glob matches keep only `.ncu-rep`, `.nsight-cuprof-report` and `.csv` files;
    a file named explicitly is kept whatever its suffix, and so is a named path that does not
    exist (it then fails as "no such file"). `exclude` holds `--exclude` patterns (see `Exclude`),
    matched against each path relative to the folder given, relative to a glob pattern's
    leading folders without wildcards, and against a file named explicitly as it was given (the
    input folder itself is never matched). Raises ValueError for an empty pattern.

    Every file or folder found and not analysed is in `skipped` (once, sorted; not when the same
    file is analysed through another input); `notes` say which patterns or folders gave nothing.
    """
    rules = Exclude(exclude)
    found: list[str] = []
    notes: list[str] = []
    skipped: list[Skipped] = []
    batch_folders = _BatchFolders()
    for spec in specs:
        before = len(skipped)
        if os.path.isdir(spec):
            matches = _walk(spec, "", rules, skipped)
            if not matches:
                notes.append(f"{spec}: the folder holds no {', '.join(SUFFIXES)} file"
                             + _skipped_note(len(skipped) - before))
        elif os.path.exists(spec) or not glob.has_magic(spec):
            pattern = rules.match(os.path.normpath(spec))
            if pattern is None:
                matches = [spec]
            else:
                matches = []
                skipped.append(Skipped(spec, FILE, EXCLUDED, excluded_by(pattern)))
        else:
            matches = []
            base = glob_base(spec)
            for m in sorted(glob.glob(spec, recursive=True)):
                is_dir = os.path.isdir(m)
                kind = FOLDER if is_dir else FILE
                rel = os.path.relpath(m, base)
                batch_folder = batch_folders.above(m, base)
                pattern = rules.match(rel)
                if batch_folder is not None:
                    skipped.append(Skipped(batch_folder, FOLDER, BATCH_OUTPUT, BATCH_OUTPUT_TEXT))
                elif pattern is not None:
                    skipped.append(Skipped(m, kind, EXCLUDED, excluded_by(pattern)))
                elif is_dir:
                    matches.extend(_walk(m, rel.replace(os.sep, "/"), rules, skipped))
                elif has_report_suffix(m):
                    matches.append(m)
                else:
                    skipped.append(Skipped(m, FILE, NOT_A_REPORT, NOT_A_REPORT_TEXT))
            if not matches:
                notes.append(f"{spec}: the pattern matches no {', '.join(SUFFIXES)} file"
                             + _skipped_note(len(skipped) - before))
        found.extend(os.path.normpath(m) for m in matches)
    unique: dict[str, str] = {}
    for path in sorted(found):
        unique.setdefault(os.path.realpath(path), path)
    return Inputs(sorted(unique.values()), notes, _unique_skipped(skipped, set(unique)))


def _skipped_note(n: int) -> str:
    return f" to analyse ({n} path{'s' if n != 1 else ''} skipped)" if n else ""


def _unique_skipped(skipped: list[Skipped], analysed: set[str]) -> list[Skipped]:
    """Each skipped path once (the first reason found), sorted, leaving out files analysed through
    another input (a file named explicitly is analysed whatever its suffix)."""
    seen: set[tuple[str, str]] = set()
    kept: list[Skipped] = []
    for s in skipped:
        real = os.path.realpath(s.path)
        if (s.kind == FILE and real in analysed) or (real, s.kind) in seen:
            continue
        seen.add((real, s.kind))
        kept.append(Skipped(os.path.normpath(s.path), s.kind, s.reason, s.detail))
    return sorted(kept, key=lambda s: s.path)


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
