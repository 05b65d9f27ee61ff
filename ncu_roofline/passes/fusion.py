"""What fusing multiplies and adds into FMA can give a kernel: its FMA-balance ceiling's lever and bound.

The FMA-balance ceiling states what the kernel's mix of FP instructions allows: with a share f of FMA among
its add, multiply and FMA instructions, at most (1 + f) / 2 of the FP roof (an FMA does two FLOP in one
issue, an add or a multiply one). That is a fact of the mix as it is. What fusion can change is smaller: an
FMA takes one multiply and one add, so at most min(adds, multiplies) pairs fuse, and the same FLOP then take
N - pairs instructions instead of N: where those instructions bound the kernel, it runs at most
N / (N - pairs) times faster. A kernel of adds alone (a matrix addition) or multiplies alone has nothing to
fuse: its ceiling stays, and the fix has no bound.
"""

from __future__ import annotations

from collections.abc import Mapping

# Per precision: the SASS opcodes of its add, multiply and FMA (thread instructions, predicated on).
MIX = {"fp64": ("dadd", "dmul", "dfma"), "fp32": ("fadd", "fmul", "ffma"), "fp16": ("hadd", "hmul", "hfma")}
FUSE = ("fuse multiplies and adds into FMA (contract expressions, avoid separate a*b then +c, check that "
        "fast-math contraction is not disabled)")


def fma_action(precision: str, adds: float, multiplies: float) -> str:
    """The ceiling's action: fusion where there are pairs to fuse; otherwise why there is none."""
    if adds > 0 and multiplies > 0:
        return FUSE
    if adds <= 0 and multiplies <= 0:
        return f"none: every {precision.upper()} add and multiply is already an FMA"
    alone = "adds" if adds > 0 else "multiplies"
    return (f"none by fusion: the {precision.upper()} {alone} have no "
            f"{'multiplies' if alone == 'adds' else 'adds'} to pair with (an FMA takes one of each); fewer "
            f"instructions per result, or a faster precision, is the lever")


def fusion_bound(roof: str, factor: float, evidence: Mapping[str, float]
                 ) -> tuple[float | None, tuple[str, ...], dict[str, float]]:
    """The bound of the fix of an FMA-balance ceiling (on `roof`, at `factor`), its basis and figures:
    N / (N - min(adds, multiplies)), from the ceiling's evidence (1 / factor where it lacks the counts)."""
    opcodes = MIX.get(roof)
    counts = [evidence.get(f"{roof}_{op}_thread_inst") for op in opcodes] if opcodes else []
    if len(counts) != 3 or any(n is None for n in counts):
        return (1.0 / factor if factor > 0 else None), ("roof_over_ceiling",), {}
    adds, multiplies, fmas = (float(n) for n in counts)  # type: ignore[arg-type]
    total = adds + multiplies + fmas
    pairs = min(adds, multiplies)
    if pairs <= 0:
        return None, ("no_pairs",), {}
    return total / (total - pairs), ("fusion",), {"pairs": pairs, "inst_now": total, "inst_after": total - pairs}
