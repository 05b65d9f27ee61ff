"""Whatever the bytes, reading gives a report or an InputError naming the file: never a traceback."""

from __future__ import annotations

import json
import random

import pytest

import ncu_roofline
from ncu_roofline.errors import InputError
from ncu_roofline.readers import read_report
from ncu_roofline.render import REPORT, RenderOptions, render

HEADER = '"ID","Process ID","Process Name","Host Name","Kernel Name","Device","CC","gpu__time_duration.sum"\n'


def junk(rng: random.Random) -> bytes:
    kind = rng.randrange(6)
    if kind == 0:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(0, 300)))
    if kind == 1:  # the report signature followed by noise
        return b"NVR\x00" + bytes(rng.randrange(256) for _ in range(rng.randrange(0, 300)))
    if kind == 2:  # a CSV header with mangled rows
        rows = ['"0","1","p","h","k","0","9.0","' + rng.choice(["1,000", "n/a", "x", "", "1e3", "nan"]) + '"']
        text = HEADER + '"","","","","","","","' + rng.choice(["ns", "usecond", "", "?"]) + '"\n'
        return (text + "\n".join(rows[: rng.randrange(2)])).encode()
    if kind == 3:  # truncated CSV
        text = HEADER + '"","","","","","","","ns"\n"0","1","p","h","k","0","9.0","12"\n'
        return text[: rng.randrange(len(text))].encode()
    if kind == 4:
        return "".join(rng.choice('",\n=PROF abc\t') for _ in range(rng.randrange(200))).encode()
    return b"version https://git-lfs.github.com/spec/v1\n"[: rng.randrange(60)]


@pytest.mark.parametrize("seed", range(120))
@pytest.mark.parametrize("suffix", [".ncu-rep", ".csv", ".bin"])
def test_junk_never_raises_anything_but_input_error(tmp_path, seed: int, suffix: str) -> None:
    path = tmp_path / f"junk{suffix}"
    path.write_bytes(junk(random.Random(seed * 7 + len(suffix))))
    try:
        report = read_report(path)
    except InputError as exc:
        assert str(path) in exc.message
    else:
        assert report.kernels  # a file that reads must hold at least one kernel
        analysis = ncu_roofline.analyze(path)  # and analyses and renders, odd values and all
        json.loads(analysis.to_json())
        render(REPORT, analysis, "md", RenderOptions())
