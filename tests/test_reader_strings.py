"""Strings a damaged report cannot give: NVIDIA's reader hands back None for one (a kernel name whose bytes do
not decode) and a lone surrogate for each byte that is not UTF-8. Either is absent or U+FFFD once read, and
every output is written whole: no join, format or encoding after the readers meets anything but a string."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import make_kernel
from test_model import base_metrics

from ncu_roofline.api.analysis import Analysis, ReportResult
from ncu_roofline.api.groups import group_key
from ncu_roofline.api.kernel import analyse_kernel
from ncu_roofline.readers.rules import RuleResult, rule_from_dict
from ncu_roofline.readers.strings import text
from ncu_roofline.render import REPORT, RenderOptions, renderer_for
from ncu_roofline.views.format import short_name

BAD = "\udce7"  # the byte 0xE7 where it is not UTF-8, as `surrogateescape` (and NVIDIA's reader) keep it


def test_text_of_what_a_reader_hands_back() -> None:
    assert text("plain") == "plain" and text("µs") == "µs"
    assert text(None) == "" and text(3) == "" and text(b"bytes") == ""
    assert text(f"r{BAD}b\udcff") == "r\ufffdb\ufffd"


def test_a_raw_kernel_holds_strings_only() -> None:
    k = make_kernel(base_metrics(), name=None, demangled_name=None, mangled_name=None, device=None,
                    nvtx_ranges=[None, f"a{BAD}", "b"])
    assert (k.name, k.demangled_name, k.mangled_name) == ("", "", "")
    assert k.nvtx_ranges == ["a\ufffd", "b"] and k.device is None
    # an absent name falls back to another form of it; a device that is not a string is absent
    k = make_kernel(base_metrics(), name=None, demangled_name=f"void k{BAD}(int)", device=7)
    assert k.name == "void k\ufffd(int)" and k.demangled_name == "void k\ufffd(int)" and k.device is None
    k = make_kernel(base_metrics(), name="k", device=f"GPU{BAD}")
    assert k.device == "GPU\ufffd"
    assert make_kernel(base_metrics(), name="k", nvtx_ranges=["x"]).nvtx_ranges == ["x"]


def test_the_sites_that_join_names_take_none() -> None:
    assert short_name(None) == "" and short_name("") == ""
    m = analyse_kernel(make_kernel(base_metrics(), name="k"))
    m.raw.name = m.raw.demangled_name = None  # type: ignore[assignment]  # as a reader that skipped RawKernel
    assert group_key(m) == group_key(analyse_kernel(make_kernel(base_metrics(), name="")))


def _rules() -> tuple[RuleResult, ...]:
    """Rule results as the reader makes them from NVIDIA's dicts, with bytes that are not UTF-8 and a missing text."""
    return (rule_from_dict({"rule_identifier": f"Occ{BAD}", "name": "Occupancy", "section_identifier": None,
                            "rule_message": {"title": f"T{BAD}", "message": f"message {BAD}", "type": 3},
                            "speedup_estimation": {"speedup": 25.0, "type": 1},
                            "focus_metrics": [{"name": f"m{BAD}", "value": 1.0, "info": "info"}]}),
            RuleResult("CPIStall", "", "", "", "", "info"))


def _analysis() -> Analysis:
    kernels = [make_kernel(base_metrics(), index=0, name=None, demangled_name=None, nvtx_ranges=[f"r{BAD}", None]),
               make_kernel(base_metrics(), index=1, name=f"k{BAD}<int>", device=f"GPU{BAD}", rules=_rules())]
    models = [analyse_kernel(k) for k in kernels]
    return Analysis([ReportResult("/tmp/capture.ncu-rep", "ncu-rep", None, models)], [])


@pytest.mark.parametrize("fmt", ["json", "html", "md", "csv"])
@pytest.mark.parametrize("redact", [False, True])
def test_every_output_of_damaged_strings_is_written(fmt: str, redact: bool) -> None:
    pieces = renderer_for(REPORT, fmt).pieces(_analysis(), RenderOptions(redact=redact))
    written = b"".join(p.encode() if isinstance(p, str) else p for p in pieces).decode()
    assert BAD not in written
    if fmt == "json":
        doc: dict[str, Any] = json.loads(written)
        names = [k["name"] for k in doc["reports"][0]["kernels"]]
        assert names == ["", "k\ufffd<int>"]
        rules = doc["reports"][0]["kernels"][1]["nsight_compute_rules"]
        assert rules[0]["rule"] == "Occ\ufffd" and rules[0]["focus_metrics"][0]["name"] == "m\ufffd"


class _Listed:
    """An action of NVIDIA's reader as `ActionMetrics` reads its names: a fresh list on every call."""

    def __init__(self, names: list[object]) -> None:
        self.names = names

    def metric_names(self) -> list[object]:
        return list(self.names)


def test_kernels_listing_the_same_names_share_one_set_and_one_sorted_list() -> None:
    from ncu_roofline.readers.ncu_rep import ActionMetrics, ReportShared

    shared = ReportShared()
    a, b = (ActionMetrics(None, _Listed(["b__x.sum", "a__y.sum", 7]), shared) for _ in range(2))
    other = ActionMetrics(None, _Listed(["b__x.sum", "c__z.sum"]), shared)
    assert list(a) == ["b__x.sum", "a__y.sum"] and "a__y.sum" in b and "a__y.sum" not in other
    assert a.possible_names is b.possible_names and other.possible_names is not a.possible_names
    assert a.names_starting("a__") == ["a__y.sum"] and b.names_starting("") == ["a__y.sum", "b__x.sum"]
    assert a._sorted is b._sorted and a._sorted == ["a__y.sum", "b__x.sum"]  # sorted once, for both
    assert other.names_starting("") == ["b__x.sum", "c__z.sum"] and other._sorted is not a._sorted
    again = ActionMetrics(None, _Listed(["b__x.sum", "a__y.sum", 7]), shared)  # the list before it differs
    assert again.possible_names == a.possible_names and again.possible_names is not a.possible_names
    assert again.names_starting("b") == ["b__x.sum"]
    alone = ActionMetrics(None, _Listed([]))
    assert len(alone) == 0 and alone.names_starting("") == []
