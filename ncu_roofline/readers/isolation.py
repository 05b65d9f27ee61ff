"""Run NVIDIA's native reader in a child process, so that a crash costs one file, not the caller.

Some damage that the container check cannot see makes `ncu_report` abort the whole process
(`Check failed: count >= 0`, SIGABRT). `ReaderPool` keeps a few child processes for many calls,
runs `fn(*args)` there and returns what it returns; a child that dies gives `ReaderCrashed`
(an `InputError` naming the file: "the reader crashed (SIGABRT)") for that call only, and the
next call starts a fresh child. The child's standard output and error (the native reader's protobuf messages
included) go to a log file, of which only the last line is shown, and only after a crash.

The child is a fresh interpreter (`python -c`, with the caller's `sys.path`), never a fork of
the caller (whose threads and state it would copy); unlike multiprocessing's `spawn` it does not
import the caller's main script (a script without an `if __name__ == "__main__"` guard would run
again). It imports `preload` once and then serves every call: one start per child and command, whatever
the number of files. `shared_pool()` is the pool of the process, started on first use and
stopped at exit. Several children (one per CPU,
at most 4) read files in parallel, which pays for the pickling of results across the pipe.

What is sent must pickle by reference: a module-level function and plain arguments.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import multiprocessing
import multiprocessing.connection
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import InputError

DEFAULT_PRELOAD = ("ncu_roofline.readers", "ncu_report")
# The child inherits its end of a socket pair by file descriptor (`pass_fds`), which POSIX has.
AVAILABLE = os.name == "posix"
_COPY_AGAIN = "the file is damaged in a way its container does not show; copy or download it again"


RETIRE_AFTER_CALLS = 200
RETIRE_AT_BYTES = 1 << 30
READY = "ready"  # a child's first message: its preloads are imported
START_UP_LIMIT_S = 60.0  # the longest a child may take to say READY, where the call's timeout is shorter
RETIRE_GRACE_S = 5.0  # how long a child told to exit may take before it is killed
try:
    _PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")
except (AttributeError, ValueError, OSError):  # pragma: no cover - not POSIX
    _PAGE_BYTES = 4096


class ReaderCrashed(InputError):
    """The child process died (or was killed after `timeout`) while it read this file."""


def describe_exit(code: int | None) -> str:
    """`SIGABRT` for a child killed by a signal, `exit code N` otherwise."""
    if code is not None and code < 0:
        try:
            return signal.Signals(-code).name
        except ValueError:
            return f"signal {-code}"
    return "no exit code" if code is None else f"exit code {code}"


def log_tail(log_path: str, limit: int = 200) -> str:
    """The last non-empty line the child wrote, shortened to `limit` characters ('' if none)."""
    try:
        with open(log_path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - 4096))
            text = fh.read().decode("utf-8", "replace")
    except OSError:
        return ""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    last = lines[-1] if lines else ""
    return last if len(last) <= limit else last[: limit - 1] + "…"


# The child's first lines: stdlib only until the caller's `sys.path` has arrived, so that the
# child imports this package (and whatever a call names) from where the caller does.
_BOOT = (
    "import signal, sys\n"
    "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"  # Ctrl-C is the caller's to handle
    "from multiprocessing.connection import Connection\n"
    "conn = Connection(int(sys.argv[1]))\n"
    "sys.path[:], preload, folder = conn.recv()\n"
    "from ncu_roofline.readers.isolation import serve\n"
    "serve(conn, preload, folder)\n"
)


def serve(conn: multiprocessing.connection.Connection, preload: Sequence[str], folder: str) -> None:
    """The child: import `preload`, say READY, then answer (fn, args) requests until the connection closes.

    Its standard output and error are the log file the parent opened; each call starts it anew. Its temporary
    files go in the pool's `folder`, which the pool removes: a child killed or crashed leaves none behind.
    """
    tempfile.tempdir = folder
    for module in preload:
        with contextlib.suppress(ImportError):  # the call that needs it explains
            importlib.import_module(module)
    # A call's time runs from here: its timeout does not pay for this start-up.
    with contextlib.suppress(OSError):  # a pool closed meanwhile: the recv below ends this child
        conn.send(READY)
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return
        if request is None:
            return
        with contextlib.suppress(OSError):  # the log tells about this call only
            sys.stdout.flush()
            os.ftruncate(1, 0)
            os.lseek(1, 0, os.SEEK_SET)
        fn, args = request
        try:
            answer: tuple[str, Any] = ("ok", fn(*args))
        except InputError as exc:
            answer = ("raise", exc)
        except Exception as exc:  # reported to the parent, which names the file
            answer = ("internal", f"{type(exc).__name__}: {exc}")
        try:
            conn.send(answer)
        except Exception as exc:  # an answer that does not pickle
            conn.send(("internal", f"cannot send the result back ({type(exc).__name__}: {exc})"))
        del answer  # what it holds open (a report's launch records) is the parent's now


@dataclass(frozen=True)
class Call:
    """One thing for a child to do: `fn(*args)`, reading the file `path` (named in errors)."""

    fn: Callable[..., Any]
    args: tuple[Any, ...]
    path: str
    size: int | None = None  # the file's size in bytes, where `path` is not where it is read (`file_size`)


def _outcome(call: Call, answer: tuple[str, Any]) -> Any:
    """A child's answer as the call's value, or as the InputError it stands for."""
    kind, value = answer
    if kind == "raise":
        return value
    if kind == "internal":
        return InputError(call.path, f"internal error while reading it ({value})")
    return value


class _Child:
    """One child process (a fresh interpreter), its connection, and the call it is busy with."""

    def __init__(self, preload: tuple[str, ...], log_path: str) -> None:
        ours, theirs = socket.socketpair()
        try:
            with open(log_path, "wb") as log:
                # No OpenBLAS worker threads, which spin once numpy loads: a reader multiplies no matrices.
                env = {"OPENBLAS_NUM_THREADS": "1", **os.environ}
                self.process = subprocess.Popen(
                    [sys.executable, "-c", _BOOT, str(theirs.fileno())], pass_fds=(theirs.fileno(),),
                    stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env)
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self.conn = multiprocessing.connection.Connection(ours.detach())
        self.conn.send((list(sys.path), list(preload), os.path.dirname(log_path)))
        self.log_path = log_path
        self.busy: int | None = None     # the index of the call in flight
        self.call: Call | None = None
        self.since = 0.0
        self.ready = False  # its start-up message read (`took_ready`)
        self.served = 0  # calls answered

    def resident_bytes(self) -> int | None:
        """The child's resident memory (Linux: /proc), None where it cannot be read."""
        try:
            with open(f"/proc/{self.process.pid}/statm") as fh:
                return int(fh.read().split()[1]) * _PAGE_BYTES
        except (OSError, ValueError, IndexError):
            return None

    def worn_out(self, calls: int, resident: int) -> bool:
        """Time to replace it: NVIDIA's reader keeps about twice a report's size of memory after each
        report it loads (8 MB for a 3.6 MB capture, never given back while the process lives)."""
        if self.served >= calls:
            return True
        held = self.resident_bytes()
        return held is not None and held >= resident

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def send(self, index: int, call: Call) -> None:
        self.conn.send((call.fn, call.args))
        self.busy, self.call, self.since = index, call, time.monotonic()

    def took_ready(self) -> bool:
        """True once the child has said it is ready, the first message it sends (read here, when its connection
        is): the call in flight's time then starts anew, so that its timeout does not pay for the start-up. False
        where that message was read before, or the child died first."""
        if self.ready:
            return False
        try:
            self.conn.recv()  # READY: `serve` sends it before it reads any request
        except (EOFError, OSError):
            return False  # it died: `collect` says so
        self.ready, self.since = True, time.monotonic()
        return True

    def collect(self) -> Any:
        """The answer of the call in flight (a value, or an InputError), once its connection is ready to read."""
        assert self.call is not None
        call, self.busy, self.call = self.call, None, None
        try:
            answer = self.conn.recv()
        except (EOFError, OSError):
            pass  # it died (its end of the connection closed with it)
        else:
            self.served += 1
            return _outcome(call, answer)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(5)
        tail = log_tail(self.log_path)
        detail = f"; its last output: {tail}" if tail else ""
        self.stop(kill=True)
        how = describe_exit(self.process.returncode)
        if not self.ready:
            return ReaderCrashed(call.path, f"the reader crashed while starting ({how}){detail}",
                                 f"check that `{sys.executable} -c 'import ncu_report'` runs")
        return ReaderCrashed(call.path, f"the reader crashed ({how}){detail}", _COPY_AGAIN)

    def limit(self, timeout: float) -> float:
        """How long the call in flight may take from `since`: `timeout`, or while the child starts up, at least
        `START_UP_LIMIT_S`."""
        return timeout if self.ready else max(timeout, START_UP_LIMIT_S)

    def timed_out(self, timeout: float) -> Any:
        assert self.call is not None
        call, self.busy, self.call = self.call, None, None
        self.stop(kill=True)
        if not self.ready:
            return ReaderCrashed(call.path, f"the reader did not start within {self.limit(timeout):g} s (its imports "
                                 "took longer)", "the machine may be overloaded or its file system slow: run fewer "
                                 f"reports at once (--jobs), or raise --timeout above {START_UP_LIMIT_S:g} s")
        return ReaderCrashed(call.path, f"timed out after {timeout:g} s", _COPY_AGAIN)

    def retire(self) -> None:
        """Tell it to exit, without waiting: NVIDIA's reader takes a tenth of a second or more to let go of
        the reports it loaded, and the caller goes on meanwhile (`ReaderPool._reap` reaps it, or kills it
        once `RETIRE_GRACE_S` have passed)."""
        with contextlib.suppress(OSError):
            if not self.conn.closed:
                self.conn.send(None)
        self.conn.close()
        self.since = time.monotonic()

    def stop(self, kill: bool) -> None:
        with contextlib.suppress(OSError):
            if not kill and self.alive and not self.conn.closed:
                self.conn.send(None)
        self.conn.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(0 if kill else 5)
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


class ReaderPool:
    """Up to `size` child processes that run calls, one call per child at a time.

    Children (fresh interpreters, `_Child`) start on first use and serve call after call; a child that dies or
    runs past the timeout is replaced by the next call that needs one. Not for several threads
    at once.
    """

    def __init__(self, size: int = 1, *, preload: Sequence[str] = DEFAULT_PRELOAD,
                 retire_after: int = RETIRE_AFTER_CALLS, retire_at_bytes: int = RETIRE_AT_BYTES) -> None:
        self.size = max(1, size)
        # A child is replaced after `retire_after` calls or once it holds `retire_at_bytes` (the
        # native reader's memory grows with every report it loads): a command over thousands of
        # reports stays within a bounded footprint, at one start-up (about 0.15 s) per replacement.
        self.retire_after, self.retire_at_bytes = retire_after, retire_at_bytes
        self._preload = tuple(preload)
        self._children: list[_Child] = []
        self._retiring: list[_Child] = []  # told to exit, not yet seen gone (`_reap`)
        self._logs: tempfile.TemporaryDirectory[str] | None = None
        self.started = 0  # how many child processes were started (tests and benchmarks read it)

    def __enter__(self) -> ReaderPool:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def _child(self, slot: int) -> _Child:
        while len(self._children) <= slot:
            self._children.append(self._spawn(len(self._children)))
        if not self._children[slot].alive or self._children[slot].conn.closed:
            self._children[slot] = self._spawn(slot)
        return self._children[slot]

    def _spawn(self, slot: int) -> _Child:
        self._reap()
        if self._logs is None:
            self._logs = tempfile.TemporaryDirectory(prefix="ncu-roofline-reader-")
        self.started += 1
        # A log of its own: a child it replaces may still be writing to its log while it exits.
        return _Child(self._preload, os.path.join(self._logs.name, f"reader-{slot}-{self.started}.log"))

    def warm(self, count: int) -> None:
        """Start up to `count` children now (at most `size`), without a call: each imports its preload
        while the caller does its own start-up work, and the first calls find them ready."""
        for slot in range(min(self.size, max(0, count))):
            self._child(slot)

    def _reap(self) -> None:
        """Forget the retired children that have exited (collecting their exit status, removing their logs), and
        kill those still there `RETIRE_GRACE_S` after they were told to exit."""
        still = []
        for child in self._retiring:
            if child.alive and time.monotonic() - child.since < RETIRE_GRACE_S:
                still.append(child)
                continue
            child.stop(kill=True)
            with contextlib.suppress(OSError):
                os.unlink(child.log_path)
        self._retiring = still

    def close(self) -> None:
        """Stop every child, retired ones included, and remove their logs."""
        for child in self._children:
            if child in self._retiring:  # retired already, not replaced yet
                continue
            if child.busy is None:
                child.retire()
                self._retiring.append(child)
            else:  # stopped in the middle of a call: its state is unknown
                child.stop(kill=True)
        deadline = time.monotonic() + RETIRE_GRACE_S  # one wait for all of them, not one per child
        for child in self._retiring:
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.process.wait(max(0.0, deadline - time.monotonic()))
            child.stop(kill=True)
        self._children, self._retiring = [], []
        if self._logs is not None:
            self._logs.cleanup()
            self._logs = None

    def call(self, fn: Callable[..., Any], *args: Any, path: str, timeout: float | None = None) -> Any:
        """`fn(*args)` in a child: its value; an InputError raised there (or for a crash) is raised."""
        (outcome,) = self.map([Call(fn, args, path)], timeout=timeout)
        if isinstance(outcome, InputError):
            raise outcome
        return outcome

    def map(self, calls: Sequence[Call], timeout: float | None = None,
            finished: Callable[[int, Any], None] | None = None) -> Iterator[Any]:
        """Each call's value, or the InputError it raised or caused, in the order of `calls`.

        The calls run in parallel, one per child, the largest files first; a crash or a timeout costs its call
        only. `finished(index, outcome)` is told of each call as it finishes, before the calls ahead of it in
        `calls` are handed back. A caller that stops early (or is interrupted) has the busy children killed.
        """
        done: dict[int, Any] = {}
        next_out = 0
        for index, outcome, _seconds in self.as_completed(calls, timeout):
            if finished is not None:
                finished(index, outcome)
            done[index] = outcome
            while next_out in done:
                yield done.pop(next_out)
                next_out += 1

    def as_completed(self, calls: Sequence[Call], timeout: float | None = None) -> Iterator[tuple[int, Any, float]]:
        """(index in `calls`, its value or InputError, seconds it took) for each call, as each finishes (`map`).

        The largest files go first (`_largest_first`): a long call started last would leave the other children
        idle while it runs alone."""
        pending = _largest_first(calls)
        slots = min(self.size, len(calls))
        left = len(calls)
        try:
            while left:
                for slot in range(slots):
                    if pending and (slot >= len(self._children) or self._children[slot].busy is None):
                        index = pending.pop()
                        try:
                            self._child(slot).send(index, calls[index])
                        except OSError:  # it died after its last answer: a fresh one takes the call
                            self._children[slot].stop(kill=True)
                            self._child(slot).send(index, calls[index])
                busy = [c for c in self._children[:slots] if c.busy is not None]
                wait_s = None if timeout is None else \
                    max(0.0, min(c.since + c.limit(timeout) for c in busy) - time.monotonic())
                # A child that dies closes its end of the connection: its `conn` is then ready too.
                ready = multiprocessing.connection.wait([c.conn for c in busy], wait_s)
                for child in busy:
                    answered, since = child.busy, child.since
                    assert answered is not None
                    if child.conn in ready:
                        if child.took_ready():
                            continue
                        outcome = child.collect()
                        if child.alive and child.worn_out(self.retire_after, self.retire_at_bytes):
                            child.retire()  # the next call in this slot starts a fresh one meanwhile
                            self._retiring.append(child)
                    elif timeout is not None and time.monotonic() - child.since >= child.limit(timeout):
                        outcome = child.timed_out(timeout)
                    else:
                        continue
                    left -= 1
                    yield answered, outcome, time.monotonic() - since
        finally:
            for child in self._children:
                if child.busy is not None:  # stopped early or interrupted: its state is unknown
                    child.busy = child.call = None
                    child.stop(kill=True)


def file_size(path: str) -> int:
    """The size of a file in bytes; 0 for one that cannot be read (its call says why)."""
    try:
        return os.path.getsize(path)
    except (OSError, ValueError):
        return 0


def _largest_first(calls: Sequence[Call]) -> list[int]:
    """The calls' indices as a stack (`pop` takes the last): the call reading the largest file on top; calls on
    files of one size keep their order."""
    sizes = [file_size(c.path) if c.size is None else c.size for c in calls]
    return sorted(reversed(range(len(calls))), key=sizes.__getitem__)


def default_size() -> int:
    """How many reader processes a command uses: one per CPU, at most 4 (each holds one report)."""
    return max(1, min(4, os.cpu_count() or 1))


_SHARED: dict[tuple[str, ...], ReaderPool] = {}
_SHARED_LOCK = threading.Lock()


def shared_pool(preload: Sequence[str] = DEFAULT_PRELOAD) -> ReaderPool:
    """The process's reader pool for `preload` (the same children for every command), stopped at exit."""
    key = tuple(preload)
    with _SHARED_LOCK:
        pool = _SHARED.get(key)
        if pool is None:
            pool = _SHARED[key] = ReaderPool(default_size(), preload=key)
            atexit.register(pool.close)
        return pool
