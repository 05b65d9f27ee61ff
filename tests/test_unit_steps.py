"""The next-step table: one short imperative sentence for every unit, and the special levers."""

from __future__ import annotations

import re

import pytest

from ncu_roofline.knowledge.throughputs import HEADLINES, SUB_UNITS, UNITS
from ncu_roofline.knowledge.unit_steps import UNIT_STEPS

EXTRA_KEYS = ("issue_vector", "issue_no_loads", "lsu_no_shared", "lsu_pipe_no_shared", "lsu_unsplit",
              "lsu_no_conflicts", "fp64_own", "fp64_division", "fp64_library")
UNIT_IDS = sorted({u.id for u in (*UNITS, *HEADLINES, *SUB_UNITS)})


def test_every_unit_has_a_step() -> None:
    missing = [unit_id for unit_id in UNIT_IDS if unit_id not in UNIT_STEPS]
    assert not missing


def test_extra_keys_exist() -> None:
    missing = [key for key in EXTRA_KEYS if key not in UNIT_STEPS]
    assert not missing


def test_no_stray_keys() -> None:
    assert set(UNIT_STEPS) == set(UNIT_IDS) | set(EXTRA_KEYS)


@pytest.mark.parametrize("key", sorted(UNIT_STEPS))
def test_step_is_one_short_sentence(key: str) -> None:
    step = UNIT_STEPS[key]
    assert step == step.strip()
    assert len(step.split()) <= 20, f"{key}: {len(step.split())} words"
    assert step[0].isupper(), key
    assert step.endswith("."), key
    # One sentence: no sentence end (., ! or ? then a space or the end) before the last character.
    assert not re.search(r"[.!?](\s|$)", step[:-1]), key
    assert "(" not in step and ")" not in step, key
    assert "this diagnosis" not in step.lower(), key
