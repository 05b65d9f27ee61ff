"""One wide access split into narrow ones (`passes.split_vectors`): hand-written SASS, then every finding of the
corpus that takes the lever, checked against NVIDIA's reader (the SASS and the per-instruction counter at each PC)."""

from __future__ import annotations

import math
import re

import pytest
from conftest import CORPUS
from test_where import WITH_COUNTERS, _actions, _by_hand, needs_corpus

from ncu_roofline.api.analysis import analyze
from ncu_roofline.knowledge.wording import Kind
from ncu_roofline.passes.finding import Finding
from ncu_roofline.passes.split_vectors import MAJORITY, split_access
from ncu_roofline.passes.where import attach_where
from ncu_roofline.readers.instructions import FetchedInstructions, Instruction, TopInstructions


def _top(*entries: tuple[str | None, float]) -> TopInstructions:
    total = 100.0
    return TopInstructions("excessive_global_sectors", "m", total,
                           tuple(Instruction(pc, pc, sass, share * total, share)
                                 for pc, (sass, share) in enumerate(entries)))


def test_a_float4_read_as_four_words_is_one_16_byte_access() -> None:
    split = split_access(_top(("LDG.E R5, desc[UR4][R8.64]", 0.25), ("LDG.E R6, desc[UR4][R8.64+0x4]", 0.25),
                              ("LDG.E R7, desc[UR4][R8.64+0x8]", 0.25), ("LDG.E R9, desc[UR4][R8.64+0xc]", 0.25)))
    assert split is not None
    assert (split.op, split.base, split.count, split.width, split.whole) == ("LDG.E", "R8.64", 4, 4, 16)
    assert split.figures()["split_first"] == "+0x0" and split.figures()["split_last"] == "+0xc"
    assert split.share == pytest.approx(1.0)


@pytest.mark.parametrize(("entries", "expected"), [
    # two 8-byte stores, address first, no descriptor: one 16-byte store
    ((("STG.E.64 [R4.64+0x10], R2", 0.3), ("STG.E.64 [R4.64+0x18], R6", 0.3)), ("STG.E.64", 2, 16)),
    # predicated 2-byte loads: four fill 8 bytes
    ((("@P0 LDG.E.U16 R1, [R2.64]", 0.2), ("@P0 LDG.E.U16 R3, [R2.64+0x2]", 0.2),
      ("@P0 LDG.E.U16 R5, [R2.64+0x4]", 0.2), ("@P0 LDG.E.U16 R7, [R2.64+0x6]", 0.2)), ("LDG.E.U16", 4, 8)),
    # two bytes make no 4-byte access; four do
    ((("LDG.E.S8 R1, [R6.64]", 0.3), ("LDG.E.S8 R3, [R6.64+0x1]", 0.3), ("LDG.E.S8 R4, [R6.64+0x2]", 0.1),
      ("LDG.E.S8 R5, [R6.64+0x3]", 0.1)), ("LDG.E.S8", 4, 4)),
])
def test_narrow_words_fill_the_widest_aligned_access(entries: tuple[tuple[str, float], ...],
                                                     expected: tuple[str, int, int]) -> None:
    split = split_access(_top(*entries))
    assert split is not None
    assert (split.op, split.count, split.whole) == expected


@pytest.mark.parametrize("entries", [
    # under half of the counter
    (("LDG.E R1, [R12.64]", 0.2), ("LDG.E R2, [R12.64+0x4]", 0.15), ("LDG.E R3, [R12.64+0x8]", 0.05),
     ("LDG.E R4, [R12.64+0xc]", 0.05), ("LDG.E R5, [R30.64]", 0.55)),
    # not aligned to the access they would fill (+0x4 to +0x10 straddles two 16-byte ones; +0x4, +0x8 two 8-byte ones)
    (("LDG.E R1, [R12.64+0x4]", 0.3), ("LDG.E R2, [R12.64+0x8]", 0.3)),
    # two address registers
    (("LDG.E R1, [R12.64]", 0.3), ("LDG.E R2, [R14.64+0x4]", 0.3)),
    # two widths at the same register
    (("LDG.E R1, [R12.64]", 0.3), ("LDG.E.64 R2, [R12.64+0x4]", 0.3)),
    # one access, a 16-byte one already, or no SASS text
    (("LDG.E.64 R10, [R12.64]", 0.99),),
    (("LDG.E.128 R4, [R2.64]", 0.5), ("LDG.E.128 R8, [R2.64+0x10]", 0.5)),
    ((None, 0.5), (None, 0.5)),
    # not a global access
    (("LDS R1, [R12]", 0.5), ("LDS R2, [R12+0x4]", 0.5)),
])
def test_no_split_without_one_aligned_access_holding_half(entries: tuple[tuple[str | None, float], ...]) -> None:
    assert split_access(_top(*entries)) is None


def _finding(kind: Kind, lever: str | None) -> Finding:
    return Finding(kind, "cap", "l1", 0.5, "l2_throughput", speedup=2.0, lever=lever)


def test_the_lever_goes_to_coalescing_and_sector_use_findings_with_a_lever() -> None:
    top = _top(("LDG.E R1, [R12.64]", 0.5), ("LDG.E R2, [R12.64+0x4]", 0.5))
    source = FetchedInstructions({"excessive_global_sectors": top})
    out = attach_where([_finding(Kind.COALESCING, "coalesce"), _finding(Kind.SECTOR_USE, "adjacent"),
                        _finding(Kind.COALESCING, None)], source)
    assert [f.lever for f in out] == ["split_vector", "split_vector", None]
    step = out[0].words().next_step
    assert step == "Merge the 2 LDG.E at R12.64 +0x0 to +0x4 into one 8-byte access, 8-byte aligned."
    assert out[0].speedup == 2.0 and out[0].where is top  # the bound and the instructions stay


@needs_corpus
def test_every_split_is_the_readers_sass_and_counter() -> None:
    """For every launch finding that takes the lever: at the PCs of its top instructions, NVIDIA's reader's SASS has
    the opcode and address register at the offsets the step names, one word apart, and the counter at those PCs
    holds the share it states, at least half of the kernel's total."""
    seen = 0
    for name in WITH_COUNTERS:
        path = CORPUS / name
        doc = analyze(path).to_dict()
        actions = _actions(path)
        for k in doc["reports"][0]["kernels"]:
            for f in k["diagnosis"]:
                if f["lever"] != "split_vector":
                    continue
                seen += 1
                assert f["kind"] in ("coalescing", "sector_use")
                fig, action = f["figures"], actions[k["index"]]
                values = _by_hand(action, f["where"][0]["counter"])
                first, last = int(fig["split_first"], 16), int(fig["split_last"], 16)
                width = fig["split_whole"] // fig["split_n"]
                wanted = set(range(first, last + 1, width))
                held = 0.0
                for e in f["where"]:
                    sass = " ".join(action.sass_by_pc(e["pc"]).split())
                    found = re.search(r"\[" + re.escape(fig["split_base"]) + r"(?:\+(0x[0-9a-f]+))?\]", sass)
                    if sass.split()[0] == fig["split_op"] and found and int(found.group(1) or "0", 16) in wanted:
                        wanted.discard(int(found.group(1) or "0", 16))
                        held += values[e["pc"]]
                assert not wanted, "every word of the access is one of the top instructions"
                share = held / math.fsum(values.values())
                assert share == pytest.approx(fig["split_share"], rel=1e-9)
                assert share >= MAJORITY
                assert f["next_step"].startswith(f"Merge the {fig['split_n']} {fig['split_op']} at ")
    assert seen, "a capture that reads a float4 as four words gives the lever"
