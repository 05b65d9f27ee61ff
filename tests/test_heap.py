"""The CLI keeps freed heap pages for the next block of rows (`cli.heap`): fewer page faults, same results."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from ncu_roofline import cli
from ncu_roofline.cli.heap import pad_heap

# Blocks of temporaries as the CSV reader makes them: each about 4 MB in pieces under glibc's mmap threshold,
# freed before the next. The child prints its minor page faults over the loop.
_CHURN = textwrap.dedent("""
    import resource, sys
    from ncu_roofline.cli.heap import pad_heap
    if sys.argv[1] == "pad" and not pad_heap():
        sys.exit(3)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(int(sys.argv[2])):
        block = [b"x" * (100 << 10) for _ in range(40)]
        del block
    print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
""")


def _faults(mode: str, blocks: int) -> int:
    done = subprocess.run([sys.executable, "-c", _CHURN, mode, str(blocks)], capture_output=True, text=True,
                          check=False)
    if done.returncode == 3:
        pytest.skip("this C library has no M_TOP_PAD (not glibc)")
    assert done.returncode == 0, done.stderr
    return int(done.stdout)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt is Linux's")
def test_padded_heap_reuses_the_pages_of_freed_blocks() -> None:
    # Without the pad glibc trims the heap's top after a 4 MB block and faults its pages back in for the next (for
    # as long as its own thresholds let it: about 40,000 faults over 100 blocks here, fewer where the kernel faults
    # anonymous memory in larger pieces). With it the pages stay: the faults are the first block's.
    plain = _faults("plain", 100) - _faults("plain", 1)
    padded = _faults("pad", 100) - _faults("pad", 1)
    if plain < 1_000:
        pytest.skip(f"the C library gives no freed block back here ({plain} faults over 99 blocks): nothing to keep")
    assert padded < plain / 10


def test_pad_heap_reports_whether_the_library_took_it() -> None:
    took = pad_heap()
    assert isinstance(took, bool)
    if not sys.platform.startswith("linux"):
        assert took is False


def test_every_command_pads_the_heap(monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    calls: list[int] = []
    monkeypatch.setattr(cli, "pad_heap", lambda: calls.append(1) or True)
    result = CliRunner().invoke(cli.main, ["metrics", "--help"])
    assert result.exit_code == 0
    # `--help` exits while the options are parsed, before a command runs: call one that runs
    result = CliRunner().invoke(cli.main, ["report", "/nonexistent/x.ncu-rep", "-f", "json", "-o", "-"])
    assert calls, result.output
