"""One exception hierarchy for the library; only the CLI turns these into messages and exit codes."""

from __future__ import annotations

from pathlib import Path


class RooflineError(Exception):
    """Base class of every error the library raises on purpose."""


class InputError(RooflineError):
    """An input file cannot be analysed: it names the file, the likely cause and what to do."""

    def __init__(self, path: str | Path, reason: str, hint: str = "") -> None:
        self.path = str(path)
        self.reason = reason
        self.hint = hint
        super().__init__(self.message)

    def __reduce__(self) -> tuple[type[InputError], tuple[str, str, str]]:
        # Pickled by its fields (it crosses from the reader's child process to the caller).
        return (type(self), (self.path, self.reason, self.hint))

    @property
    def message(self) -> str:
        text = f"{self.path}: {self.reason}"
        return f"{text}; {self.hint}" if self.hint else text


class PeaksFileError(InputError):
    """The user-supplied peaks file is unreadable or malformed."""


class OutputError(RooflineError):
    """An output cannot be written (exists without --force, unwritable folder, ...)."""
