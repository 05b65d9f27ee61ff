"""Display names: the function name with template arguments and parameters elided, unique per report."""

from __future__ import annotations

import pytest

from ncu_roofline.api.names import NameEntry, display_names, parse_signature, short_name

SILU = ("void at::native::vectorized_elementwise_kernel<(int)4, at::native::<unnamed>::silu_kernel(at::"
        "TensorIteratorBase &)::[lambda() (instance 1)]::operator ()() const::[lambda() (instance 2)]::operator ()() "
        "const::[lambda(float) (instance 1)], std::array<char *, (unsigned long)2>>(int, T2, T3)")
NORMAL = ("void at::native::<unnamed>::distribution_elementwise_grid_stride_kernel<float, (int)4, void at::native::"
          "templates::cuda::normal_and_transform<float, float, at::CUDAGeneratorImpl *>(const at::TensorBase &, "
          "double, double, T1)::[lambda(float) (instance 1)]>(long, at::PhiloxCudaState, T3, T4)")


@pytest.mark.parametrize(("full", "short"), [
    (SILU, "vectorized_elementwise_kernel<…>(…)"),
    (NORMAL, "distribution_elementwise_grid_stride_kernel<…>(…)"),
    ("void gemm<128, 64>(float*, int)", "gemm<…>(…)"),
    ("init_data_kernel(int, double *)", "init_data_kernel(…)"),
    ("matmul_2d_tiling", "matmul_2d_tiling"),
    ("void (anonymous namespace)::k<1>() const", "k<…>()"),
    ("void cutlass::Kernel<cutlass::gemm::kernel::Gemm<X, Y>>(T1::Params) [clone .kd]", "Kernel<…>(…)"),
    ("bool operator< <int>(A, B)", "operator<<…>(…)"),
    ("unbalanced<(x", "unbalanced"),
])
def test_short_names(full: str, short: str) -> None:
    assert short_name(full) == short


def test_parse_keeps_arguments_for_telling_names_apart() -> None:
    sig = parse_signature(SILU)
    assert sig.function == "vectorized_elementwise_kernel"
    assert sig.template_args is not None and len(sig.template_args) == 3 and sig.template_args[0] == "(int)4"
    assert sig.params == ("int", "T2", "T3")


def test_names_are_unique_by_the_smallest_distinguishing_part() -> None:
    normal = NORMAL
    uniform = NORMAL.replace("normal_and_transform", "uniform_and_transform")
    names = display_names([NameEntry(normal), NameEntry(uniform), NameEntry(SILU),
                           NameEntry(SILU.replace("silu_kernel", "add_kernel"))])
    assert names == ["distribution_elementwise_grid_stride_kernel<…normal_and_transform…>(…)",
                     "distribution_elementwise_grid_stride_kernel<…uniform_and_transform…>(…)",
                     "vectorized_elementwise_kernel<…silu_kernel…>(…)",
                     "vectorized_elementwise_kernel<…add_kernel…>(…)"]
    short_args = display_names([NameEntry("void gemm<128, 64>(float*)"), NameEntry("void gemm<256, 64>(float*)")])
    assert short_args == ["gemm<128, …>(…)", "gemm<256, …>(…)"]
    params = display_names([NameEntry("void f(float*)"), NameEntry("void f(double*)")])
    assert params == ["f(float*)", "f(double*)"]


def test_same_kernel_other_launch_configuration() -> None:
    names = display_names([NameEntry("k(int)", (64, 1, 1), (128, 1, 1)), NameEntry("k(int)", (128, 1, 1), (128, 1, 1)),
                           NameEntry("k(int)", (128, 1, 1), (256, 1, 1))])
    assert names == ["k(…) [grid 64×1×1]", "k(…) [grid 128×1×1, block 128×1×1]", "k(…) [block 256×1×1]"]


def test_every_name_is_unique_even_when_nothing_tells_them_apart() -> None:
    names = display_names([NameEntry("k"), NameEntry("k"), NameEntry("k")])
    assert names == ["k", "k #2", "k #3"]
    hostile = "</script><b>x</b> & \"q\" 'y' | `z` @octocat void f<int, std::vector<float>>(T*)"
    (name,) = display_names([NameEntry(hostile)])
    assert name == "f<…>(…)"
    assert len(set(display_names([NameEntry(f"void k<{i}>(int)") for i in range(50)]))) == 50


def test_a_name_with_spaces_and_no_parameter_list_is_not_cut_at_a_space() -> None:
    """A return type is dropped only before a parameter list (`void f(int)`): a label with spaces and none (the
    `kernel 3` a launch with no name is called, a hand-written name) is its own name, not its last word."""
    for label in ("kernel 3", "my fused kernel", "layer 2 attention"):
        assert parse_signature(label).function == label
        assert short_name(label) == label
    assert parse_signature("void scale<float>(float*, int)").function == "scale"
    assert short_name("unsigned long long count(int)") == "count(…)"


def test_line_breaks_and_tabs_in_a_name_are_spaces_on_display() -> None:
    """An edited name holding a line break or a tab (a CSV cell may): one space on display, so that no table row or
    chart label breaks (matplotlib has no glyph for a carriage return)."""
    assert short_name("my\r\nkernel\t 2") == "my kernel 2"
    assert parse_signature("x\r\nvoid f<int>(float*)").function == "f"
