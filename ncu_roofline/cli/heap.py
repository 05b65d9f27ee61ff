"""Keep freed memory in the process while a command runs, instead of handing it back to the system.

Reading a large CSV export cuts blocks of rows into temporaries of a few megabytes each (the
rows' text, their quotes' positions, the number cells gathered at once) that are freed a block
later. With glibc's defaults the top of the heap is given back whenever more than 128 kB of it
is free, and taken again, page by page, for the next block: at 50,000 launches that is about
three quarters of a million page faults and a sixth of the command's CPU time spent in the
kernel (`benchmarks/bench_scale.py` prints both). Padding the heap by `TOP_PAD` keeps that much
at its top, so the next block reuses the pages the last one touched.

Only glibc on Linux has the setting (`mallopt(M_TOP_PAD)`); elsewhere nothing is changed.
"""

from __future__ import annotations

import ctypes
import sys

M_TOP_PAD = -2  # glibc's <malloc.h>: extra memory asked of sbrk, and kept when the heap is trimmed
TOP_PAD = 64 << 20  # 64 MiB: the temporaries of a few blocks; pages never touched are never resident


def pad_heap(pad: int = TOP_PAD) -> bool:
    """Ask the C library to keep `pad` bytes at the top of the heap; True where it did (glibc)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the process's own C library
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_TOP_PAD, pad) == 1)  # glibc returns 1 on success (musl's stub returns 0)
