"""Writing outputs safely: all analysis is done first, then a temporary file is renamed into place."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from ..errors import OutputError


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def check_target(path: str | Path, force: bool) -> Path:
    """Why `path` cannot be written, as an OutputError (a folder, an existing file without `force`, a missing
    folder); else the folder it goes in. Commands call it before their analysis too, so that a run of
    minutes does not end in a refusal it could have made at once."""
    target = Path(path)
    if target.is_dir():
        raise OutputError(f"{target}: is a directory; give a file name with -o")
    if target.exists() and not force:
        raise OutputError(f"{target}: already exists; pass --force to overwrite it")
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise OutputError(f"{target}: the folder {folder} does not exist")
    return folder


def write_atomic(path: str | Path, text: str | bytes | Iterable[str | bytes], *, force: bool = False) -> Path:
    """Write `text` (a string, UTF-8 bytes written as they are, or pieces of either) to `path` via a
    temporary file in the same folder and an atomic rename.

    Refuses to replace an existing file unless `force`; never leaves a partial file behind.
    """
    target = Path(path)
    folder = check_target(target, force)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:  # a read-only folder or file system, a full disk, ...
        raise OutputError(f"{target}: cannot write into the folder {folder} ({exc.strerror or exc})") from exc
    try:
        with os.fdopen(fd, "wb") as raw:
            if isinstance(text, (str, bytes)):
                raw.write(text.encode() if isinstance(text, str) else text)
            else:
                for piece in text:  # made as written: a large document is never held whole
                    raw.write(piece.encode() if isinstance(piece, str) else piece)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; a report is an ordinary file
        os.replace(tmp, target)
    except BaseException as exc:
        # Whatever stops the write (an OS error, Ctrl-C, SIGTERM turned into an exception by the
        # CLI), the temporary file goes; the target is either the old file or the whole new one.
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise OutputError(f"{target}: cannot write ({exc.strerror or exc})") from exc
        raise
    return target


def move_into_place(source: str | Path, target: str | Path) -> Path:
    """Move a finished file (`source`, written by another process) to `target` by an atomic rename, with
    the mode `write_atomic` gives (0666 less this process's umask). Where a rename cannot do it (another
    file system, a folder in the way) the file is copied with `write_atomic`, which says what is wrong.
    `source` is gone afterwards either way."""
    src, dst = Path(source), Path(target)
    try:
        os.chmod(src, 0o666 & ~_umask())
        if not dst.is_dir():
            os.replace(src, dst)
            return dst
    except OSError:
        pass  # copied below
    try:
        with src.open("rb") as fh:
            return write_atomic(dst, iter(lambda: fh.read(1 << 20), b""), force=True)
    finally:
        with contextlib.suppress(OSError):
            src.unlink()
