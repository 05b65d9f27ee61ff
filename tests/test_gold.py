"""Golden outputs: every document of `report`, `diff`, `trend` and `batch`, byte for byte after scrubbing.

A change that alters any output shows up here as a diff against `tests/gold/`. Regenerate on
purpose with `NCU_ROOFLINE_REGOLD=1 python -m pytest tests/test_gold.py` (see tests/goldtest.py)
and review the diff. The golden files hold kernel names and numbers only: input paths are scrubbed
to `<CORPUS>/<file>`, and reports carry no host names or source.
"""

from __future__ import annotations

import datetime
import os
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import CORPUS, make_kernel
from goldtest import _CAPTURE_PATH_RE, GOLD, compare
from ncu_csv_writer import write_ncu_csv
from test_model import base_metrics

from ncu_roofline.cli import main
from ncu_roofline.readers.record import RawReport

needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"shared report corpus not found at {CORPUS}")

# A dozen captures: old and new Nsight Compute, basic and full sets, tensor, FP64, NVTX, many kernels.
REPORTS = [
    "pmkid-brute-force__profile.nsight-cuprof-report",   # 2019-era, Pascal names, no version string
    "self-join-mistic__profile.ncu-rep",                  # 154 kernels, FP64, 2021.2
    "gpu-workshop__MW_Baseline.ncu-rep",                  # V100, FP64, 2022.2
    "cutlass__report-s8.ncu-rep",                         # A100 tensor-core GEMM, 2024.1
    "accelsim-test__n1000_int8_abt_view_algo64_profile.1528422.ncu-rep",  # B200, basic set, 2025.2
    "esmm-research__profile.5c6231e.ncu-rep",             # basic set, a NaN kernel
    "nsight-training__manual_nvtx.ncu-rep",               # NVTX ranges
    "fuzigrad__output.ncu-rep",                           # 100 launches of one kernel
    "cs599k__profile.ncu-rep",                            # GH200, hierarchical roofline sections
    "cudaprogramming__smemTranspose.ncu-rep",             # bank conflicts
    "cudacode__naive.ncu-rep",                            # uncoalesced, GTX 1660
    "nsight-compute-files__3136_64_64_rtx2080ti_sgemm.ncu-rep",  # Turing, single-precision chart
]
FORMATS = ("json", "md", "csv", "html")
HOSTILE = "</script><b>x</b> & \"q\" 'y' | `z` @octocat void f<int, std::vector<float>>(T*)"
EPOCH = "1700000000"


def _run(args: list[str]) -> str:
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code in (0, 1, 2, 3), result.output
    return result.output


def _replacements(tmp: Path) -> dict[str, str]:
    return {str(CORPUS): "<CORPUS>", str(tmp): "<TMP>"}


@pytest.fixture(autouse=True)
def _fixed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)


@needs_corpus
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", REPORTS)
def test_report_gold(name: str, fmt: str, tmp_path: Path) -> None:
    out = tmp_path / f"out.{fmt}"
    _run(["report", str(CORPUS / name), "-f", fmt, "-o", str(out)])
    compare(f"report/{name}.{fmt}", out.read_text(encoding="utf-8"), _replacements(tmp_path))


@pytest.mark.parametrize("fmt", FORMATS)
def test_hostile_csv_gold(fmt: str, tmp_path: Path) -> None:
    names = [f"{HOSTILE} 0", "plain_&lt;not_a_tag&gt;_kernel", "=HYPERLINK(\"http://e.invalid\") @team | `x`"]
    kernels = [make_kernel(base_metrics(), index=i, name=name, demangled_name=name) for i, name in enumerate(names)]
    kernels.append(make_kernel({"gpu__time_duration.sum": (float("nan"), "ns")}, index=3, name="nan_kernel"))
    src = write_ncu_csv(RawReport("hostile.csv", "csv", kernels), tmp_path / "hostile.csv")
    out = tmp_path / f"out.{fmt}"
    _run(["report", str(src), "-f", fmt, "-o", str(out)])
    compare(f"report/hostile.csv.{fmt}", out.read_text(encoding="utf-8"), _replacements(tmp_path))


@needs_corpus
@pytest.mark.parametrize("fmt", ("json", "md", "html"))
@pytest.mark.parametrize("pair", [("gpu-workshop__MW_Baseline", "gpu-workshop__MW_DivToMult"),
                                  ("cudacode__naive", "cudacode__global_mem_coalesce")])
def test_diff_gold(pair: tuple[str, str], fmt: str, tmp_path: Path) -> None:
    out = tmp_path / f"diff.{fmt}"
    base, head = (str(CORPUS / f"{p}.ncu-rep") for p in pair)
    _run(["diff", base, head, "-f", fmt, "-o", str(out), "--fail-on-regression", "5"])
    compare(f"diff/{pair[0]}.{fmt}", out.read_text(encoding="utf-8"), _replacements(tmp_path))


@needs_corpus
@pytest.mark.parametrize("fmt", ("json", "md", "csv", "html"))
def test_trend_gold(fmt: str, tmp_path: Path) -> None:
    runs = []
    for date, name in [("2026-11-01", "cs599k__silu-2025-04-18-v4-naive"),
                       ("2026-11-02", "cs599k__silu-2025-04-18-v8"),
                       ("2026-11-03", "cs599k__silu-2025-04-18-v9")]:
        folder = tmp_path / date
        folder.mkdir()
        copy = folder / "silu.ncu-rep"  # the same program name in every run
        shutil.copyfile(CORPUS / f"{name}.ncu-rep", copy)
        stamp = datetime.datetime.fromisoformat(f"{date}T03:00:00+00:00").timestamp()
        os.utime(copy, (stamp, stamp))  # a report file is dated by its modification time
        runs.append(str(copy))
    out = tmp_path / f"trend.{fmt}"
    _run(["trend", *runs, "-f", fmt, "-o", str(out)])
    compare(f"trend/silu.{fmt}", out.read_text(encoding="utf-8"), _replacements(tmp_path))


@needs_corpus
def test_batch_gold(tmp_path: Path) -> None:
    inputs = tmp_path / "in"
    inputs.mkdir()
    for name in ("gpu-workshop__MW_Baseline.ncu-rep", "cudacode__naive.ncu-rep",
                 "nsight-training__manual_nvtx.ncu-rep"):
        shutil.copyfile(CORPUS / name, inputs / name)
    (inputs / "empty.ncu-rep").write_bytes(b"")
    out = tmp_path / "site"
    _run(["batch", str(inputs), "-o", str(out), "--jobs", "1"])
    files = sorted(p for p in out.rglob("*") if p.is_file() and p.suffix in (".html", ".json", ".csv"))
    assert files
    for path in files:
        rel = _HASH_RE.sub("", path.relative_to(out).as_posix())
        text = _SECONDS_RE.sub(r'"seconds": "<SECONDS>"', _HASH_RE.sub("", path.read_text(encoding="utf-8")))
        text = _DATE_RE.sub("<DATE>", text)
        compare(f"batch/{rel}", text, _replacements(tmp_path))


# Batch page names carry a hash of the input path (a temporary folder here), and per-report timings.
_HASH_RE = re.compile(r"-[0-9a-f]{10}(?=[.\"])")
_SECONDS_RE = re.compile(r'"seconds": [0-9.e+-]+')
# Pages carry the time they were made.
_DATE_RE = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC")


def test_golden_files_hold_no_capturer_paths() -> None:
    """Nsight Compute's rule messages quote the capturing machine's paths ("/root/Documents/NVIDIA Nsight
    Compute/…/Occupancy.py:44"): the scrubber replaces them, so no golden file holds one."""
    held = {p.relative_to(GOLD).as_posix(): m.group(0) for p in sorted(GOLD.rglob("*")) if p.is_file()
            for m in [_CAPTURE_PATH_RE.search(p.read_text(encoding="utf-8"))] if m is not None}
    assert held == {}
