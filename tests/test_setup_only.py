"""A capture that holds only PyTorch's random-number fills (`torch.rand`, `randn`: the input a script makes first,
which `--launch-count 1` catches) says so, with how to select the kernel under study."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from conftest import CORPUS, corpus_files

import ncu_roofline
from ncu_roofline.api.analysis import setup_only_warning
from ncu_roofline.passes.libraries import random_fill

needs_corpus = pytest.mark.skipif(not corpus_files(), reason=f"shared report corpus not found at {CORPUS}")
FILL = ("void at::native::<unnamed>::distribution_elementwise_grid_stride_kernel<float, (int)4, void at::native::"
        "templates::cuda::uniform_and_transform<float, float, at::CUDAGeneratorImpl *, void>()>(long, "
        "at::PhiloxCudaState, T3, T4)")
NULLARY = "void at::native::distribution_nullary_kernel<float, float, float4>(at::TensorIteratorBase &)"


def _launch(name: str, usable: bool = True) -> Any:
    return SimpleNamespace(raw=SimpleNamespace(demangled_name=name, name=name), usable=usable)


def test_random_fills_by_their_own_name() -> None:
    assert random_fill(FILL) and random_fill(NULLARY)
    assert not random_fill("void at::native::vectorized_elementwise_kernel<(int)4, distribution_kernel>(int)")
    assert not random_fill("void my::distribution_kernel(float *)")  # not PyTorch's
    assert not random_fill("silu_kernel_non_strided")
    # a CSV export's function names: the two fills alone, not another kernel of that stem
    assert random_fill("distribution_elementwise_grid_stride_kernel") and random_fill("distribution_nullary_kernel")
    assert not random_fill("distribution_kernel") and not random_fill("my_distribution_nullary_kernel")


def test_the_warning_only_where_every_usable_launch_is_a_fill() -> None:
    assert setup_only_warning([_launch(FILL), _launch(NULLARY)]) is not None
    assert setup_only_warning([_launch(FILL), _launch("silu_kernel(float *)", usable=False)]) is not None
    assert setup_only_warning([_launch(FILL), _launch("silu_kernel(float *)")]) is None
    assert setup_only_warning([_launch(FILL, usable=False)]) is None
    assert setup_only_warning([]) is None


def _by_hand(path: Any) -> bool:
    """Every launch of the capture, by NVIDIA's reader's demangled names, is a distribution kernel of PyTorch's."""
    import ncu_report

    ctx = ncu_report.load_report(str(path))
    names = [rng.action_by_idx(j).name(ncu_report.IAction.NameBase_DEMANGLED)
             for rng in (ctx.range_by_idx(r) for r in range(ctx.num_ranges())) for j in range(rng.num_actions())]
    own = [n.replace("<unnamed>", "").split("<")[0] for n in names]  # no template arguments or parameters
    return bool(names) and all(n.startswith("void at::native::") and "::distribution_" in n for n in own)


@needs_corpus
@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name)
def test_a_capture_of_fills_alone_warns_and_no_other_does(path: Any) -> None:
    report = ncu_roofline.analyze(path).reports[0]
    warned = [w for w in report.warnings if "random-number fill" in w]
    assert bool(warned) == _by_hand(path)
    if warned:
        assert "ncu -k regex:NAME" in warned[0] and "--launch-skip N" in warned[0]


@needs_corpus
def test_a_report_analysed_by_group_warns_alike(tmp_path: Any) -> None:
    """Above 1,000 launches a report is analysed by group: each group's longest launch stands for its launches."""
    import dataclasses

    from ncu_csv_writer import write_ncu_csv

    from ncu_roofline.readers import read_report
    from ncu_roofline.readers.record import Metric, RawReport

    (fill,) = read_report(CORPUS / "cs599k__silu-pytorch.ncu-rep").kernels
    fill = dataclasses.replace(fill, metrics={n: m for n, m in fill.metrics.items() if isinstance(m, Metric)},
                               rules=())
    path = tmp_path / "fills.csv"
    write_ncu_csv(RawReport("fills.csv", "csv", [dataclasses.replace(fill, index=i) for i in range(1001)]), path)
    report = ncu_roofline.analyze(path).reports[0]
    assert report.launch_count == 1001 and report.findings == "group"
    assert any("random-number fill" in w for w in report.warnings)
