"""What a whole `.ncu-rep` is: the container check, and a seeded mutation test of every fault it can see.

The mutation test (720 mutants of six reports, read through the isolated reader
processes as the commands read them) asserts: no exception but InputError, no traceback, every
failure names its file, every mutant the container can tell from a whole report is refused, and
a mutant it cannot tell (the limits in docs/limits.md) never gains kernels.
"""

from __future__ import annotations

import random
import struct
from pathlib import Path

import pytest
from conftest import CORPUS
from mutation import blocks, mutants

import ncu_roofline
from ncu_roofline.errors import InputError
from ncu_roofline.readers import read_report_isolated
from ncu_roofline.readers.container import UNCHECKABLE, scan_container
from ncu_roofline.readers.isolation import ReaderCrashed

needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"shared report corpus not found at {CORPUS}")
NVTX = "nsight-training__manual_nvtx.ncu-rep"
MUTATED = [NVTX, "cudaprogramming__simpleDivergence.ncu-rep", "gpu-workshop__MW_Baseline.ncu-rep",
           "pmkid-brute-force__profile.nsight-cuprof-report", "cs599k__2025-04-21-v1.ncu-rep",
           "self-join-mistic__profileHiggs.out.ncu-rep"]
PER_FILE = 120  # 15 of each of the 8 kinds


def _reports() -> list[Path]:
    return sorted(p for p in CORPUS.iterdir() if p.suffix in (".ncu-rep", ".nsight-cuprof-report"))


@needs_corpus
def test_every_corpus_report_is_read_with_the_readers_kernel_count() -> None:
    """Every shared report NVIDIA's reader opens is read, with the kernels the reader finds; only the one
    that lacks a session record the others hold says so."""
    import ncu_report
    for path in _reports():
        data = path.read_bytes()
        scan = scan_container(data)
        assert scan.whole and scan.walked and not scan.duplicates, (path.name, scan.problem)
        assert scan.results == sum(1 for b in blocks(data) if b.kind == "result")
        ctx = ncu_report.load_report(str(path))
        found = sum(ctx.range_by_idx(r).num_actions() for r in range(ctx.num_ranges()))
        report = read_report_isolated(path)
        assert len(report.kernels) == found == scan.results, path.name
        assert report.completeness.endswith(UNCHECKABLE)
        sessions = {b.session for b in blocks(data) if b.kind == "session"}
        # A whole layout gives no note; a missing device or system record is the one thing noted here.
        assert bool(scan.notes) == (not {6, 4} <= sessions), (path.name, scan.notes)
        assert bool(report.warnings) == bool(scan.notes)


@needs_corpus
def test_the_container_walk_never_raises() -> None:
    """Random bytes flipped, cut or repeated anywhere: a problem or a whole file, never an exception."""
    rng = random.Random(7)
    for name in MUTATED[:2]:
        data = (CORPUS / name).read_bytes()
        for _ in range(400):
            buf = bytearray(data)
            for _ in range(rng.randint(1, 4)):
                buf[rng.randrange(4, len(buf))] = rng.randrange(256)
            cut = bytes(buf[: rng.randrange(len(buf) + 1)]) if rng.random() < 0.3 else bytes(buf)
            scan_container(cut)
            scan_container(cut + cut[8:])


@needs_corpus
def test_a_cut_before_the_first_kernel_says_so() -> None:
    data = (CORPUS / NVTX).read_bytes()
    first = blocks(data)[0]
    scan = scan_container(data[: first.end])
    assert "no kernel result" in scan.problem and "cut short" in scan.problem
    assert "filter" not in scan.problem + scan.hint and "-k" not in scan.hint


@needs_corpus
def test_appended_and_duplicated_blocks_are_read_once(tmp_path: Path) -> None:
    data = (CORPUS / NVTX).read_bytes()
    bs = blocks(data)
    kernels = sum(1 for b in bs if b.kind == "result")
    appended = data + data[bs[0].start:]
    scan = scan_container(appended)
    assert scan.whole and len(scan.duplicates) == kernels
    assert any("session record(s) appear twice" in n for n in scan.notes)
    result = next(b for b in bs[3:] if b.kind == "result")
    doubled = data[: result.end] + data[result.start: result.end] + data[result.end:]
    for name, buf in (("appended.ncu-rep", appended), ("doubled.ncu-rep", doubled)):
        path = tmp_path / name
        path.write_bytes(buf)
        report = read_report_isolated(path)
        assert len(report.kernels) == kernels, name  # each launch once
        assert [k.index for k in report.kernels] == list(range(kernels))
        assert any("appear twice" in w and "analysed once" in w for w in report.warnings), report.warnings


@needs_corpus
def test_a_cut_between_kernels_is_the_stated_limit(tmp_path: Path) -> None:
    """Cut exactly after a kernel's block (after the session records): it reads as a shorter report."""
    data = (CORPUS / "self-join-mistic__profile.ncu-rep").read_bytes()
    path = tmp_path / "cut.ncu-rep"
    path.write_bytes(data[:1_807_830])
    report = read_report_isolated(path)
    assert len(report.kernels) == 75  # of 154: the container cannot tell, and says so
    assert "cannot be checked for completeness" in report.completeness
    doc = ncu_roofline.analyze(path).to_dict()
    assert doc["reports"][0]["completeness"] == UNCHECKABLE


def test_huge_sparse_files_are_refused_at_once(tmp_path: Path) -> None:
    """A 2 GB sparse file that starts with the report signature: refused from its first bytes."""
    whole_header = b"NVR\x00" + struct.pack("<I", 2) + b"\x08\x07"
    for name, head in (("zeros.ncu-rep", b"NVR\x00"), ("header.ncu-rep", whole_header)):
        path = tmp_path / name
        with path.open("wb") as fh:
            fh.write(head)
            fh.truncate(2 << 30)
        with pytest.raises(InputError, match="damaged") as info:
            read_report_isolated(path)
        assert str(path) in info.value.message


@needs_corpus
def test_seeded_mutants_are_refused_only_for_proven_loss_and_never_read_as_more(tmp_path: Path) -> None:
    """Mutants of corpus captures: refused only where data is provably lost; a file cut inside a block is read
    where NVIDIA's reader reads it, as exactly the kernel results wholly before the cut, with a note."""
    plan: list[tuple[Path, object, int]] = []
    ends: dict[Path, list[int]] = {}  # where each kernel result of a mutant's capture ends
    for n, name in enumerate(MUTATED):
        data = (CORPUS / name).read_bytes()
        results = [b.end for b in blocks(data) if b.kind == "result"]
        kernels = len(results)
        for m, mutant in enumerate(mutants(data, random.Random(1000 + n), PER_FILE)):
            path = tmp_path / f"{n:02d}-{m:03d}-{mutant.kind}.ncu-rep"
            path.write_bytes(mutant.data)
            plan.append((path, mutant, kernels))
            ends[path] = results
    analysis = ncu_roofline.analyze([p for p, _, _ in plan], strict=False, isolate=True)
    by_path = {r.path: r for r in analysis.reports}
    errors = {e.path: e for e in analysis.errors}
    assert len(by_path) + len(errors) == len(plan)
    crashed = [e for e in errors.values() if isinstance(e, ReaderCrashed)]
    wrong = []
    for path, mutant, kernels in plan:
        error = errors.get(str(path))
        if error is not None:
            assert str(path) in error.message and "Traceback" not in error.message
            assert "internal error" not in error.message, error.message
            if not mutant.refusable and not isinstance(error, ReaderCrashed):
                wrong.append(f"{path.name} ({mutant.note}): refused, nothing proven lost: {error.message}")
            continue
        report = by_path[str(path)]
        read = len(report.kernels)
        if mutant.kind == "cut_inside":
            whole = sum(1 for end in ends[path] if end <= len(mutant.data))
            if read != whole or not any("the file is cut short" in w for w in report.warnings):
                wrong.append(f"{path.name} ({mutant.note}): a cut file read as {read} kernels, {whole} whole")
        if mutant.seen and not report.warnings:
            wrong.append(f"{path.name} ({mutant.note}): read as {read} of {kernels} kernels with no note")
        if read > kernels and not report.warnings:
            wrong.append(f"{path.name} ({mutant.note}): read as {read} of {kernels} kernels")
        if read < kernels - mutant.kernels_lost and not report.warnings:
            wrong.append(f"{path.name} ({mutant.note}): {read} of {kernels} kernels read, the loss unsaid")
        if mutant.kind in ("append", "duplicate") and read != kernels:
            wrong.append(f"{path.name} ({mutant.note}): read as {read} of {kernels} kernels")
    assert not wrong, "\n".join(wrong)
    cut_read = sum(1 for p, m, _ in plan if m.kind == "cut_inside" and str(p) in by_path)
    assert cut_read  # some cut files are read (NVIDIA's reader reads a file cut inside a kernel's result)
    assert len(crashed) <= len(plan) // 20, [e.message for e in crashed]
