"""Seeded mutations of `.ncu-rep` files at the container level, for the fault tests.

Each mutant says what was done to the file (`kind`), whether the container walk can see it
(`seen`: the file is then refused or read with a note saying so), and whether the walk may refuse
it (`refusable`: only proven loss, a cut inside a block, lengths that do not add up, no kernel
result). docs/limits.md lists what the walk cannot see (a cut between two kernels'
blocks after the session records, whole kernel blocks deleted, bit flips inside records).
The block walk here is written independently of `ncu_roofline.readers.container`, so that the
test does not grade the code with itself.
"""

from __future__ import annotations

import random
import struct
from dataclasses import dataclass


@dataclass(frozen=True)
class Block:
    """One block of the container: its byte range, the offset of its payload, and what it holds."""

    start: int
    payload: int
    end: int
    kind: str  # "session", "source", "result" or "table"
    session: int = 0  # a session block: the first field of its record (2 start, 6 device, 4 system, ...)


@dataclass(frozen=True)
class Mutant:
    kind: str
    data: bytes
    note: str
    seen: bool              # the walk can tell: the file is refused or read with a note
    refusable: bool         # proven loss (or a change that may prove it): the file may be refused
    kernels_lost: int = 0   # when not seen: how many kernels a whole-looking result may lack


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7


def _header_fields(buf: bytes) -> dict[int, int]:
    """The varint fields of a block header, and 3 -> 1 when it holds a session record."""
    out: dict[int, int] = {}
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            out[number], pos = _varint(buf, pos)
        elif wire == 2:
            length, pos = _varint(buf, pos)
            if number == 3:
                out[3] = _varint(buf, pos)[0] >> 3 if length else 0
            pos += length
        else:
            pos += 8 if wire == 1 else 4
    return out


def blocks(data: bytes) -> list[Block]:
    """The blocks of a whole report."""
    (size,) = struct.unpack_from("<I", data, 4)
    offset = 8 + size
    found = []
    while offset < len(data):
        (n,) = struct.unpack_from("<I", data, offset)
        fields = _header_fields(data[offset + 4: offset + 4 + n])
        payload = offset + 4 + n
        end = payload + fields.get(5, 0)
        kind = ("session" if 3 in fields else "source" if fields.get(1) else "result" if fields.get(2)
                else "table")  # a 2023.3 addendum to the metric-name table
        found.append(Block(offset, payload, end, kind, fields.get(3, 0)))
        offset = end
    return found


def _system_record_end(bs: list[Block]) -> int:
    """The index just past the session's system record (field 4), which follows the first result."""
    return next(i for i, b in enumerate(bs) if b.kind == "session" and b.session == 4) + 1


def mutants(data: bytes, rng: random.Random, count: int) -> list[Mutant]:
    """`count` seeded mutants of one whole report."""
    bs = blocks(data)
    head = data[: bs[0].start]
    parts = [data[b.start: b.end] for b in bs]
    results = [i for i, b in enumerate(bs) if b.kind == "result"]
    group_end = _system_record_end(bs)
    out: list[Mutant] = []

    def join(ps: list[bytes]) -> bytes:
        return head + b"".join(ps)

    makers = ["edit", "swap", "delete", "duplicate", "cut", "cut_inside", "append", "flip"]
    while len(out) < count:
        kind = makers[len(out) % len(makers)]
        if kind == "edit":  # a block's or a record's length field changed
            b = rng.choice(bs)
            where = rng.choice([b.start, b.payload]) if b.payload < b.end else b.start
            (old,) = struct.unpack_from("<I", data, where)
            new = max(0, old + rng.choice([-7, -1, 1, 3, 64, 1 << 20, -(old // 2)]))
            buf = bytearray(data)
            struct.pack_into("<I", buf, where, new & 0xFFFFFFFF)
            out.append(Mutant(kind, bytes(buf), f"u32 at {where}: {old} -> {new}", True, True))
        elif kind == "swap":
            i, j = sorted(rng.sample(range(len(bs)), 2))
            ps = list(parts)
            ps[i], ps[j] = ps[j], ps[i]
            # Nothing is lost; the container tells when the order it requires is broken.
            out.append(Mutant(kind, join(ps), f"blocks {i} <-> {j}", False, False))
        elif kind == "delete":
            i = rng.randrange(len(bs))
            ps = parts[:i] + parts[i + 1:]
            later_result = bs[i].kind == "result" and i != results[0]
            optional = bs[i].kind in ("source", "table") or (bs[i].kind == "session" and bs[i].session not in (2, 6, 4))
            # A later kernel's block, a code record or a tool-version record can go unnoticed; the
            # session start, device and system records and the first result cannot. Nothing but the
            # only result is proven lost.
            out.append(Mutant(kind, join(ps), f"block {i} ({bs[i].kind})", not (later_result or optional),
                              bs[i].kind == "result" and len(results) == 1, 1 if bs[i].kind == "result" else 0))
        elif kind == "duplicate":
            i = rng.randrange(len(bs))
            at = rng.randrange(i + 1, len(bs) + 1)
            ps = [*parts[:at], parts[i], *parts[at:]]
            out.append(Mutant(kind, join(ps), f"block {i} ({bs[i].kind}) again at {at}",
                              bs[i].kind not in ("source", "table"), False))
        elif kind == "cut":  # at a block boundary
            i = rng.randrange(0, len(bs))
            kept = bs[:i]
            # After the system record, a cut that does not leave a code record last looks whole.
            whole_looking = i >= group_end and kept[-1].kind != "source"
            lost = len(results) - sum(1 for b in kept if b.kind == "result")
            out.append(Mutant(kind, join(parts[:i]), f"after block {i - 1}", not whole_looking,
                              lost == len(results), lost))
        elif kind == "cut_inside":  # between a block's header and payload, or anywhere inside
            b = rng.choice(bs)
            inside = [rng.randrange(b.start + 1, b.end)] + ([b.payload] if b.payload < b.end else [])
            cut = rng.choice(inside)
            out.append(Mutant(kind, data[:cut], f"at byte {cut}", True, True))
        elif kind == "append":
            out.append(Mutant(kind, data + b"".join(parts), "its own blocks appended", True, False))
        else:  # bit flips anywhere after the signature
            buf = bytearray(data)
            flips = []
            for _ in range(rng.randint(1, 3)):
                pos = rng.randrange(4, len(buf))
                buf[pos] ^= 1 << rng.randrange(8)
                flips.append(pos)
            out.append(Mutant(kind, bytes(buf), f"bits flipped at {flips}", False, True, len(results)))
    return out
