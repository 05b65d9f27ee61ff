"""Whether a kernel reads its data once: the evidence that in-kernel reuse has nothing to work on.

A kernel at the DRAM roof moves fewer bytes by fusion with its neighbours, a narrower data type, or
reuse within itself (tiles in shared memory or registers). The last needs data that the kernel reads
more than once. Where DRAM read as many bytes as the kernel's loads asked for (`ceilings.
dram_reads_per_load_byte`), every sector came from DRAM and none was served again by a cache. Then no
byte is read twice: tiling has nothing to keep, and a low L2 hit rate is no missed reuse.
"""

from __future__ import annotations

from collections.abc import Mapping

# DRAM read bytes ÷ the bytes of the sectors the loads asked for, of a kernel that reads each byte once:
# about 1 (every sector from DRAM), up to 2 where DRAM's 64-byte access fetches two 32-byte sectors for
# one. Below, caches served re-reads (a stencil's neighbours, a GEMM's tiles: 0.03-0.5 in the corpus);
# above, DRAM was read by copies the L1/TEX sector counts do not see (TMA).
READS_ONCE = (0.9, 2.2)


def reads_once(reuse: Mapping[str, float]) -> float | None:
    """DRAM reads per byte its loads asked for, where that says the kernel reads each byte once; else None."""
    ratio = reuse.get("dram_reads_per_load_byte")
    return ratio if ratio is not None and READS_ONCE[0] <= ratio <= READS_ONCE[1] else None


def reads_once_text(ratio: float) -> str:
    """The evidence, in words, for a sentence about the kernel."""
    return (f"it reads its data once: each sector its loads asked for came from DRAM (DRAM read {ratio:.2f}× "
            "their bytes), none from a cache")


def fewer_bytes_action(once: float | None) -> str:
    """The next step of a kernel at a memory roof: fewer bytes; reuse within it only where it may re-read
    data (`once`: `reads_once`, None where not known to read its data once)."""
    if once is None:
        return ("move fewer bytes per FLOP: fuse with the kernels that produce or consume its data, reuse tiles in "
                "shared memory or registers, or store in a lower precision")
    return ("move fewer bytes per FLOP: fuse with the kernels that produce or consume its data, or store in a lower "
            f"precision (tiles in shared memory or registers have nothing to reuse: {reads_once_text(once)})")
