"""Read `.ncu-rep` / `.nsight-cuprof-report` files through NVIDIA's `ncu_report` package.

`ncu_report.load_report` accepts almost anything silently (an empty file, a Git LFS pointer,
random bytes all load as a report with no kernels, and a truncated file loses its tail kernels),
so the file is checked here before and after loading, and every problem becomes an InputError.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import re
import struct
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ..errors import InputError
from .record import Metric, RawKernel, RawReport
from .rules import ActionRules

MAGIC = b"NVR\x00"
# After the 4-byte magic and 6 more header bytes, a report is a sequence of blocks, each a
# little-endian uint32 length followed by that many bytes; a whole file ends exactly on a block
# boundary. Checked on every report of the shared corpus (2020.3 to 2025.2, and a pre-2021 file).
_FIRST_BLOCK_OFFSET = 10
_VERSION_RE = re.compile(rb"(20[12]\d\.\d+\.\d+(?:\.\d+)?) \(build (\d+)\)")
LFS_PREFIX = b"version https://git-lfs"

_STRING_KIND = 2


def sniff_problem(head: bytes) -> str | None:
    """A reason the file is not a report, judged from its first bytes; None when it looks like one."""
    if not head:
        return "the file is empty (0 bytes)"
    if head.startswith(LFS_PREFIX):
        return (
            "this is a Git LFS pointer, not the report itself; run `git lfs pull` "
            "(or `git lfs fetch && git lfs checkout`) to fetch the real file"
        )
    if not head.startswith(MAGIC):
        return "not an Nsight Compute report (the file does not start with the report signature)"
    return None


def check_framing(data: bytes | mmap.mmap) -> str | None:
    """Walk the block lengths; a reason when the file ends mid-block (truncated), else None."""
    size = len(data)
    offset = _FIRST_BLOCK_OFFSET
    if size < offset:
        return f"the file is truncated: only {size} bytes, shorter than a report header"
    while offset + 4 <= size:
        (length,) = struct.unpack_from("<I", data, offset)
        offset += 4 + length
    if offset != size:
        return (
            f"the file is truncated or damaged: a block runs past the end of the file "
            f"({size:,} bytes on disk, {offset:,} expected); copy or download it again"
        )
    return None


def find_ncu_version(data: bytes | mmap.mmap) -> str | None:
    """The Nsight Compute version that wrote the report, when the file records it."""
    match = _VERSION_RE.search(data)
    if match is None:
        return None
    return f"{match.group(1).decode()} (build {match.group(2).decode()})"


def _metric(action: Any, name: str) -> Metric | None:
    m = action.metric_by_name(name)
    if m is None:
        return None
    unit = m.unit() or ""
    if m.kind() == _STRING_KIND:
        return Metric(m.as_string(), unit)
    return Metric(m.as_double(), unit)


class ActionMetrics(Mapping[str, Metric]):
    """The metrics of one profiled kernel, read from the report only when first asked for.

    A full-set report holds about 2,000 metrics per kernel and the analysis needs a few hundred;
    reading each on demand (and once) is what keeps the JSON path close to the cost of loading
    the report. Holds the report context so the native objects stay valid.
    """

    def __init__(self, ctx: Any, action: Any) -> None:
        self._ctx = ctx
        self._action = action
        self._names = tuple(action.metric_names())
        self._known = frozenset(self._names)
        self._cache: dict[str, Metric | None] = {}

    def __getitem__(self, name: str) -> Metric:
        if name not in self._known:
            raise KeyError(name)
        if name not in self._cache:
            self._cache[name] = _metric(self._action, name)
        found = self._cache[name]
        if found is None:
            raise KeyError(name)
        return found

    def __contains__(self, name: object) -> bool:
        return name in self._known

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


def _triple(metrics: Mapping[str, Metric], prefix: str) -> tuple[int, int, int] | None:
    out = []
    for axis in "xyz":
        m = metrics.get(f"{prefix}_{axis}")
        if m is None or not m.is_number or m.is_nan:
            return None
        out.append(int(float(m.value)))
    return (out[0], out[1], out[2])


def _nvtx(action: Any) -> list[str]:
    ranges: list[str] = []
    state = action.nvtx_state()
    if state is None:
        return ranges
    for dom_id in state.domains():
        dom = state.domain_by_id(dom_id)
        dom_name = dom.name()
        prefix = "" if dom_name in ("", "<default domain>") else f"{dom_name}:"
        stack = [str(r) for r in dom.push_pop_ranges()]
        if stack:
            ranges.append(prefix + "/".join(stack))
        ranges.extend(prefix + str(r) for r in dom.start_end_ranges())
    return ranges


def _string(metrics: Mapping[str, Metric], name: str) -> str | None:
    m = metrics.get(name)
    return str(m.value) if m is not None and not m.is_number else None


def _int(metrics: Mapping[str, Metric], name: str) -> int | None:
    m = metrics.get(name)
    if m is None or not m.is_number or m.is_nan:
        return None
    return int(float(m.value))


def kernel_from_metrics(
    index: int,
    name: str,
    demangled: str,
    metrics: Mapping[str, Metric],
    **identity: Any,
) -> RawKernel:
    """Build a RawKernel, taking launch and device identity from the standard metrics."""
    major = _int(metrics, "device__attribute_compute_capability_major")
    minor = _int(metrics, "device__attribute_compute_capability_minor")
    cc = f"{major}.{minor}" if major is not None and minor is not None else None
    identity.setdefault("device", _string(metrics, "device__attribute_display_name"))
    identity.setdefault("compute_capability", cc)
    identity.setdefault("sm_count", _int(metrics, "device__attribute_multiprocessor_count"))
    identity.setdefault("grid_size", _triple(metrics, "launch__grid_dim"))
    identity.setdefault("block_size", _triple(metrics, "launch__block_dim"))
    identity.setdefault("stream_id", _int(metrics, "launch__stream_id"))
    return RawKernel(index=index, name=name, demangled_name=demangled, metrics=metrics, **identity)


@contextlib.contextmanager
def _native_stderr_silenced(active: bool) -> Iterator[None]:
    """Send file descriptor 2 to /dev/null while native code runs (when `active`)."""
    if not active:
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def read_ncu_rep(path: Path) -> RawReport:
    """Read every kernel of every range of a report; raise InputError for anything unusable."""
    try:
        with path.open("rb") as fh:
            head = fh.read(64)
            problem = sniff_problem(head)
            if problem:
                raise InputError(path, problem)
            with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
                truncated = check_framing(data)
                version = find_ncu_version(data)
    except OSError as exc:
        raise InputError(path, f"cannot read the file ({exc.strerror or exc})") from exc

    try:
        import ncu_report  # NVIDIA's reader, from PyPI; imported late so CSV runs do not need it
    except ImportError as exc:  # pragma: no cover - an install problem, not an input problem
        raise InputError(
            path,
            "the `ncu-report` package is not installed",
            "install it with `pip install ncu-report` (it reads reports on any CPU)",
        ) from exc

    # A damaged file makes the native reader log parse errors on standard error; the reason is
    # reported here in one line instead, so its noise is silenced for those files only.
    with _native_stderr_silenced(bool(truncated)):
        ctx = ncu_report.load_report(str(path))
        kernels: list[RawKernel] = []
        demangled_base = ncu_report.IAction.NameBase_DEMANGLED
        mangled_base = ncu_report.IAction.NameBase_MANGLED
        for r in range(ctx.num_ranges()):
            rng = ctx.range_by_idx(r)
            for j in range(rng.num_actions()):
                action = rng.action_by_idx(j)
                metrics = ActionMetrics(ctx, action)
                kernels.append(
                    kernel_from_metrics(
                        len(kernels),
                        action.name(),
                        action.name(demangled_base),
                        metrics,
                        mangled_name=action.name(mangled_base),
                        range_index=r,
                        nvtx_ranges=_nvtx(action),
                        rules=ActionRules(action),
                    )
                )

    if truncated:
        hint = (f"only the first {len(kernels)} kernel(s) could be read; a partial report is not analysed"
                if kernels else "no kernel could be read from it")
        raise InputError(path, truncated, hint)
    if not kernels:
        raise InputError(
            path,
            "the report holds no profiled kernels (0 kernels)",
            "check that ncu's kernel filters (-k, --launch-skip, --launch-count) matched a launch",
        )
    return RawReport(path=str(path), source_format="ncu-rep", kernels=kernels, ncu_version=version)
