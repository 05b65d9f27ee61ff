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
from ncu_roofline.passes.split_vectors import MOST, NEEDED, split_access
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
    ((("STG.E.64 [R4.64+0x10], R2", 0.45), ("STG.E.64 [R4.64+0x18], R6", 0.45)), ("STG.E.64", 2, 16, "+0x10")),
    # predicated 2-byte loads: four fill 8 bytes
    ((("@P0 LDG.E.U16 R1, [R2.64]", 0.24), ("@P0 LDG.E.U16 R3, [R2.64+0x2]", 0.24),
      ("@P0 LDG.E.U16 R5, [R2.64+0x4]", 0.24), ("@P0 LDG.E.U16 R7, [R2.64+0x6]", 0.24)), ("LDG.E.U16", 4, 8, "+0x0")),
    # four bytes fill 4 bytes
    ((("LDG.E.S8 R1, [R6.64]", 0.24), ("LDG.E.S8 R3, [R6.64+0x1]", 0.24), ("LDG.E.S8 R4, [R6.64+0x2]", 0.24),
      ("LDG.E.S8 R5, [R6.64+0x3]", 0.24)), ("LDG.E.S8", 4, 4, "+0x0")),
    # offsets below the register, in both spellings
    ((("LDG.E R1, [R2.64-0x8]", 0.5), ("LDG.E R3, [R2.64+-0x4]", 0.5)), ("LDG.E", 2, 8, "-0x8")),
])
def test_narrow_words_fill_one_aligned_access(entries: tuple[tuple[str, float], ...],
                                              expected: tuple[str, int, int, str]) -> None:
    split = split_access(_top(*entries))
    assert split is not None
    assert (split.op, split.count, split.whole, split.figures()["split_first"]) == expected


@pytest.mark.parametrize("entries", [
    # under nearly all of the counter
    (("LDG.E R1, [R12.64]", 0.2), ("LDG.E R2, [R12.64+0x4]", 0.2), ("LDG.E R3, [R12.64+0x8]", 0.2),
     ("LDG.E R4, [R12.64+0xc]", 0.2), ("LDG.E R5, [R30.64]", 0.2)),
    # not aligned to the access they would fill
    (("LDG.E R1, [R12.64+0x4]", 0.5), ("LDG.E R2, [R12.64+0x8]", 0.5)),
    # a float3: three words make no vector access, and two of them are no float2
    (("LDG.E R1, [R12.64]", 0.33), ("LDG.E R2, [R12.64+0x4]", 0.33), ("LDG.E R3, [R12.64+0x8]", 0.33)),
    # a word loaded twice: the register serves other accesses too
    (("LDG.E R1, [R12.64]", 0.3), ("LDG.E R2, [R12.64]", 0.3), ("LDG.E R3, [R12.64+0x4]", 0.3)),
    # shares far apart: not one access pattern
    (("LDG.E R1, [R12.64]", 0.7), ("LDG.E R2, [R12.64+0x4]", 0.25)),
    # two predicates, two address registers, two widths
    (("@P0 LDG.E R1, [R12.64]", 0.5), ("@P1 LDG.E R2, [R12.64+0x4]", 0.5)),
    (("LDG.E R1, [R12.64]", 0.5), ("LDG.E R2, [R14.64+0x4]", 0.5)),
    (("LDG.E R1, [R12.64]", 0.5), ("LDG.E.64 R2, [R12.64+0x4]", 0.5)),
    # an offset held in a register: the descriptor is no address
    (("LDG.E R1, desc[UR4][R2.64+UR6]", 0.5), ("LDG.E R3, desc[UR4][R2.64+UR6+0x4]", 0.5)),
    # one access, a 16-byte or 32-byte one already, or no SASS text
    (("LDG.E.64 R10, [R12.64]", 0.99),),
    (("LDG.E.128 R4, [R2.64]", 0.5), ("LDG.E.128 R8, [R2.64+0x10]", 0.5)),
    (("LDG.E.ENL2.256 R4, [R2.64]", 0.5), ("LDG.E.ENL2.256 R12, [R2.64+0x20]", 0.5)),
    ((None, 0.5), (None, 0.5)),
    # not a global access
    (("LDS R1, [R12]", 0.5), ("LDS R2, [R12+0x4]", 0.5)),
])
def test_no_split_without_one_aligned_access_holding_nearly_all(entries: tuple[tuple[str | None, float], ...]) -> None:
    assert split_access(_top(*entries)) is None


def _finding(kind: Kind, lever: str | None, factor: float = 0.5) -> Finding:
    return Finding(kind, "cap", "l1", factor, "l2_throughput", speedup=1 / factor, lever=lever)


def test_the_lever_replaces_the_access_steps_where_the_split_explains_the_waste() -> None:
    """A split of 2 words wastes at most half of the sectors: a finding that needs under 0.9 / 2 of them wastes more
    than the split explains (a thread per row); a library's step and a finding without one stay as they are."""
    top = _top(("LDG.E R1, [R12.64]", 0.5), ("LDG.E R2, [R12.64+0x4]", 0.5))
    source = FetchedInstructions({"excessive_global_sectors": top})
    out = attach_where([_finding(Kind.COALESCING, "coalesce"), _finding(Kind.SECTOR_USE, "adjacent"),
                        _finding(Kind.COALESCING, None), _finding(Kind.COALESCING, "library"),
                        _finding(Kind.COALESCING, "coalesce", 0.44), _finding(Kind.COALESCING, "coalesce", 0.45)],
                       source)
    assert [f.lever for f in out] == ["split_vector", "split_vector", None, "library", "coalesce", "split_vector"]
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
                assert share >= MOST and f["factor"] >= NEEDED / fig["split_n"]
                assert f["next_step"].startswith(f"Merge the {fig['split_n']} {fig['split_op']} at ")
    assert seen, "a capture that reads a float4 as four words gives the lever"
