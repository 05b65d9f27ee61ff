"""1,000 seeded mutations of the real captures, through what `report` does: never a traceback, never a crash.

Every corpus file is mutated about 30 times (a few bits flipped, a few bytes overwritten with random ones, or
a short run zeroed), at places spread over the whole file: its first bytes (signature, file header, the first
block's header), each thirtieth of it in turn, and its last bytes. The mutants are analysed as `report` analyses
them (`api.analysis.analyze(..., strict=False, isolate=True, keep_metrics=False)`: NVIDIA's reader in the
child processes, so that a reader that aborts costs its file only), one mutant of each file per call, and the
analysis is rendered in every report format and encoded as the writers encode it.

What a mutant gives is not checked (the container walk decides which damage it refuses, and that may change):
only that it is analysed, or an InputError naming the file (a crash of the reader included), and that nothing
else escapes. An "internal error" is a Python exception the reader's child process caught: a traceback that a
message hides, a failure too.
"""

from __future__ import annotations

import os
import random
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import CORPUS, corpus_files

from ncu_roofline.api.analysis import Analysis, analyze
from ncu_roofline.render import REPORT, RenderOptions, renderer_for
from ncu_roofline.settings import AnalysisSettings

FILES = corpus_files()
pytestmark = pytest.mark.skipif(not FILES, reason=f"shared report corpus not found at {CORPUS}")

MUTATIONS = 1000
KINDS = ("flip", "overwrite", "zero")
EDGE = 512  # bytes at each end of a file, mutated on purpose: the headers, and the tail a cut would hit
FORMATS = ("json", "html", "md", "csv")


@dataclass(frozen=True)
class Mutation:
    source: Path
    number: int  # of this file's mutations
    kind: str
    offset: int
    note: str

    @property
    def name(self) -> str:
        return f"m{self.number:02d}-{self.kind}-{self.source.name}"


def mutate(data: bytes, source: Path, number: int, count: int) -> tuple[bytes, Mutation]:
    """Mutation `number` of the file's `count`: where in the file by `number` (the first two at its head, the
    last at its tail, the others each in its own slice), what by a seed of the file's name and `number`."""
    rng = random.Random(f"{source.name}:{number}")
    size = len(data)
    if number < 2:
        low, high = 0, min(size, EDGE)
    elif number == count - 1:
        low, high = max(0, size - EDGE), size
    else:
        low, high = size * (number - 2) // max(1, count - 3), size * (number - 1) // max(1, count - 3)
    offset = rng.randrange(low, max(low + 1, high))
    kind = KINDS[number % len(KINDS)]
    buf = bytearray(data)
    if kind == "flip":  # 1 to 3 bits, within 64 bytes
        places = sorted({min(size - 1, offset + rng.randrange(64)) for _ in range(rng.randint(1, 3))})
        for place in places:
            buf[place] ^= 1 << rng.randrange(8)
        note = f"bits flipped at {places}"
    elif kind == "overwrite":  # 1 to 8 random bytes
        run = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        buf[offset:offset + len(run)] = run
        del buf[size:]
        note = f"{run.hex()} written at {offset}"
    else:  # 4 to 64 bytes zeroed
        length = min(size - offset, rng.randint(4, 64))
        buf[offset:offset + length] = bytes(length)
        note = f"{length} bytes zeroed at {offset}"
    return bytes(buf), Mutation(source, number, kind, offset, note)


def plan() -> list[list[tuple[Path, int, int]]]:
    """The mutations in rounds of one per file: (file, number, the file's count); 1,000 in all."""
    counts = {path: MUTATIONS // len(FILES) + (i < MUTATIONS % len(FILES)) for i, path in enumerate(FILES)}
    rounds = max(counts.values())
    return [[(path, n, counts[path]) for path in FILES if n < counts[path]] for n in range(rounds)]


def check_outputs(analysis: Analysis, redact: bool) -> None:
    """What `report` writes, for each format: the renderer's pieces, encoded as `render.output` and `emit` do;
    and its messages (each warning and error goes to standard error)."""
    for result in analysis.reports:
        for warning in result.warnings:
            f"{os.path.basename(result.path) if redact else result.path}: {warning}".encode()
    for err in analysis.errors:
        err.message.encode()
    for fmt in FORMATS:
        renderer = renderer_for(REPORT, fmt)
        for piece in renderer.pieces(analysis, RenderOptions(redact=redact)):
            if isinstance(piece, str):
                piece.encode()


def test_a_thousand_mutations_of_the_corpus_never_give_a_traceback(tmp_path: Path) -> None:
    rounds = plan()
    assert sum(map(len, rounds)) == MUTATIONS
    settings = AnalysisSettings()
    for fmt in FORMATS:
        renderer_for(REPORT, fmt).prepare()
    failures: list[str] = []
    counts = {"analysed": 0, "refused": 0, "reader crashed": 0}
    started = time.monotonic()
    for number, round_ in enumerate(rounds):
        made: dict[str, Mutation] = {}
        for source, n, count in round_:
            data, mutation = mutate(source.read_bytes(), source, n, count)
            path = tmp_path / mutation.name
            path.write_bytes(data)
            made[str(path)] = mutation
        try:
            analysis = analyze(list(made), settings, strict=False, isolate=True, keep_metrics=False)
        except Exception:  # one of the mutants (the traceback says which)
            failures.append(f"round {number}: analyze raised\n{traceback.format_exc()}")
        else:
            for err in analysis.errors:
                mutation = made[err.path]
                if os.path.basename(err.path) not in err.message or "internal error" in err.message:
                    failures.append(f"{mutation.name} ({mutation.note}): {err.message}")
                counts["reader crashed" if "the reader crashed" in err.message else "refused"] += 1
            counts["analysed"] += len(analysis.reports)
            try:
                check_outputs(analysis, redact=number % 2 == 1)
            except Exception:
                shown = "; ".join(f"{m.name} ({m.note})" for m in made.values())
                failures.append(f"round {number} ({shown}): rendering raised\n{traceback.format_exc()}")
        for path in made:
            os.remove(path)
    elapsed = time.monotonic() - started
    print(f"{MUTATIONS} mutations of {len(FILES)} files in {elapsed:.0f} s: {counts}")
    assert sum(counts.values()) == MUTATIONS or failures
    assert not failures, f"{len(failures)} failure(s):\n" + "\n\n".join(failures[:10])
