"""Whose kernel this is: a library's own kernel (CUB, Thrust, PyTorch, cuBLAS, cuDNN) has its launch and code
chosen by the library, so what a fix would take is the library's to do (`passes.diagnosis` words it)."""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..model.roofline import KernelModel

# Kernels whose launch configuration a library chooses (a demangled name's namespace -> the library).
_LIBRARY = re.compile(r"(cub|thrust|at::native|at::cuda)::")  # at the start of the kernel's own name
_LIBRARY_NAMES = {"cub": "CUB", "thrust": "Thrust", "at::native": "PyTorch", "at::cuda": "PyTorch"}


# cuBLAS's own kernels, by the names its builds give them: an architecture-prefixed GEMM with its tile
# (`volta_sgemm_32x128_nn`, `sm80_xmma_gemm_…_tilesize128x128x32_…`), `nvjet_` kernels, its GEMV and split-K
# kernels, its namespaces, and the CUTLASS kernels it ships (`cutlass_80_tensorop_…`, `cutlass::Kernel2<
# cutlass_80_…>`; one of CUTLASS's own templates, namespaced, is the user's). A name with `cudnn` is cuDNN's.
_CUBLAS = re.compile(r"(?:void )?(?:(?:maxwell|pascal|volta|turing|ampere|ada|hopper|blackwell|sm\d{2,3})_\w*?gemm\w*?"
                     r"\d+x\d+|nvjet_|gemv2[NT]_kernel|gemmSN_\w+_kernel|gemmk1_kernel|splitKreduce_kernel|cublasLt::|"
                     r"xmma_cublas::|cublas::|cutlass_\d+_\w*gemm|cutlass::Kernel2?<cutlass_\d+_)")


# cuDNN's own kernels: `cudnn` in the name, or its convolution passes (`sm80_xmma_fprop_implicit_gemm_…`).
_CUDNN = re.compile(r"cudnn|xmma_(?:fprop|dgrad|wgrad)", re.IGNORECASE)


def library_of(m: KernelModel) -> str | None:
    """The library whose own kernel this is (CUB, Thrust, PyTorch, cuBLAS, cuDNN), judged by its name."""
    return _library_named(m.raw.demangled_name or m.raw.name or "")


@functools.lru_cache(maxsize=4096)  # every launch of a kernel asks again: one look at each name
def _library_named(name: str) -> str | None:
    library = _LIBRARY.match(_own_name(name))
    if library is None:
        return "cuDNN" if _CUDNN.search(_own_name(name)) else "cuBLAS" if _CUBLAS.match(name) else None
    return _LIBRARY_NAMES.get(library.group(1), library.group(1))


def _own_name(demangled: str) -> str:
    """A kernel's own qualified name: no return type, template arguments or parameters
    (`void cub::X::K<cub::Sum>(float*)` -> `cub::X::K`); "(anonymous namespace)" stays in it."""
    name = demangled.removeprefix("void ").replace("(anonymous namespace)", "_anonymous_")
    name = name.replace("<unnamed>", "_anonymous_")
    return re.split(r"[<(]", name, maxsplit=1)[0]


# PyTorch's random-number fills (`torch.rand`, `randn`, `uniform_`, `normal_`, ...): its distribution kernels, by
# their qualified names, or by their two names alone where that is all a name holds (a CSV export's `function` base).
_RANDOM_FILL = re.compile(r"at::native::(?:\w+::)*distribution_\w*kernel$")
_RANDOM_FILL_NAMES = frozenset({"distribution_elementwise_grid_stride_kernel", "distribution_nullary_kernel"})


def random_fill(demangled: str) -> bool:
    """Whether a kernel is one of PyTorch's random-number fills, judged by its own qualified name."""
    own = _own_name(demangled)
    return own in _RANDOM_FILL_NAMES or _RANDOM_FILL.match(own) is not None

