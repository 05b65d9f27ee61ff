"""A cache level never moves fewer bytes than the level below it: every DRAM byte passes L2, every L2 byte
the SMs ask for passes L1.

Nsight Compute's roofline-chart byte definitions count one path of a level's traffic: at L2 the returns to
L1 (reads alone), at L1 what loads write back to registers. A kernel that mostly stores then shows L2 and
L1 bytes far below DRAM's (a store-only fill: 385x), and an intensity there that claims more reuse than the
hierarchy allows. Where a level's bytes are fewer than those below it, the level takes another definition
that counts its whole traffic (`lts__t_sectors`: reads and writes) if the report holds one that is not
fewer; else the level has no bytes, with the reason. One exception, at L1 only: copies from L2 straight into
shared memory (cp.async, TMA) never pass the LSU write-back, so a kernel that ran them may rightly show
fewer L1 than L2 bytes; its L1 bytes stay, and say so.

The notes and reasons name counters, never a launch's figures: every launch of one recipe set shares them
(`recipe_sets` of the JSON document), and the figures are in each launch's own `traffic_bytes`.
"""

from __future__ import annotations

import dataclasses

from ..knowledge import recipes as R
from .resolver import Missing, Resolver, Value

# Counters of two levels come from different replay passes and round to sectors: a shortfall within 1 % is
# the same traffic, not a contradiction.
TOLERANCE = 0.99
_LABEL = {"dram": "DRAM", "l2": "L2", "l1": "L1"}
_WHOLE = {"l2": "lts__t_bytes.sum", "l1": "l1tex__t_bytes.sum"}


def _named(value: Value) -> str:
    what = value.note or value.recipe
    return f"{value.definition or 'counts'}: {what}"


def copies_into_shared(res: Resolver) -> bool:
    """Whether the kernel copied from L2 straight into shared memory (cp.async or TMA), by its own counts."""
    for name in R.SHARED_COPY_COUNTS:
        got = res.count(name)
        if got is not None and got[0] > 0:
            return True
    return False


def within_hierarchy(level: str, measured: Value | None, below: Value | None, below_level: str,
                     res: Resolver, options: tuple[R.Recipe, ...]
                     ) -> tuple[Value | None, Missing | None, tuple[Value, ...]]:
    """`measured` (a level's bytes) where it is not fewer than `below` (the bytes of the level under it);
    else the first of `options` of another definition that is not; else, at L1, `measured` where the kernel
    copied into shared memory; else no bytes, and why. Last, the counts set aside for being fewer (the launch's
    own figures, which the shared texts do not quote)."""
    if measured is None or below is None or not below.value > 0 or measured.value >= TOLERANCE * below.value:
        return measured, None, ()
    label, under = _LABEL[level], _LABEL[below_level]
    tried = [measured]
    for option in options:
        if option.definition == measured.definition != R.TAGS:
            continue  # the same quantity in another form: `first` took the first the report holds
        got = res.recipe(option)
        if got is None or got.recipe == measured.recipe:
            continue  # not held, or the count already measured (tag counts differ: the SMs' own, all lookups)
        if got.value >= TOLERANCE * below.value:
            instead = (f"the {measured.definition or 'counts'} definition" if got.definition != measured.definition
                       else measured.recipe)
            note = (f"{got.note + '; ' if got.note else ''}in place of {instead}, which counts fewer bytes than "
                    f"{under} moved")
            return dataclasses.replace(got, note=note), None, tuple(tried)
        tried.append(got)
    if level == "l1" and copies_into_shared(res):
        note = (f"{measured.note + '; ' if measured.note else ''}fewer than {under}'s bytes: the kernel copies from "
                "L2 into shared memory (cp.async or TMA), which bypasses the LSU write-back")
        return dataclasses.replace(measured, note=note), None, ()
    counted = "; ".join(_named(v) for v in tried)
    path = (f"the SMs' traffic to {under} passes {label}, so {under} fetched more than {label}'s counts show "
            "(over-fetch by DRAM, or traffic of other units)" if level == "l2" else
            f"the SMs' loads and stores reach {under} through {label}")
    reason = (f"no {label} bytes: the report's {label} counts ({counted}) are fewer than the bytes {under} moved, "
              f"while {path}; an {label} point would claim more reuse than the memory hierarchy "
              "allows")
    whole = _WHOLE[level]
    if any(whole in v.recipe or whole.replace("_bytes", "_sectors") in v.recipe for v in tried):
        collect = f"nothing more to collect: the report's own {label} counts of all traffic are below {under}'s"
    else:
        collect = f"--metrics {whole} (all {label} traffic, reads and writes)"
    return None, Missing(f"traffic_bytes.{level}", reason, collect), tuple(tried)
