"""How roofs are named and coloured on every page: written once, used by every view.

`short_label` is the name in tables and legends ("DRAM", "FP32", "Tensor"); `long_label` is the
name in sentences ("DRAM bandwidth", "FP32 compute"); `roof_css` is the badge class whose colour
the palette of `render/charts` defines (`b-dram`, ..., `b-other` for a name this module does not
know, `b-none` for no roof).
"""

from __future__ import annotations

ROOF_ORDER = ("dram", "l2", "l1", "fp64", "fp32", "fp16", "tensor")
SHORT_LABELS = {"dram": "DRAM", "l2": "L2", "l1": "L1", "fp64": "FP64", "fp32": "FP32", "fp16": "FP16",
                "tensor": "Tensor"}
LONG_LABELS = {
    "dram": "DRAM bandwidth", "l2": "L2 bandwidth", "l1": "L1 bandwidth",
    "fp64": "FP64 compute", "fp32": "FP32 compute", "fp16": "FP16 compute", "tensor": "tensor cores",
}
NO_ROOF = "none"


def short_label(roof: str | None) -> str:
    """"DRAM", "FP32", "Tensor"; "none" for no roof; an unknown name as it is, upper-cased."""
    if not roof or roof == NO_ROOF:
        return NO_ROOF
    return SHORT_LABELS.get(roof, roof.upper())


def long_label(roof: str | None, default: str = "n/a") -> str:
    """"DRAM bandwidth", "FP32 compute"; `default` for no roof; an unknown name as it is."""
    if not roof or roof == NO_ROOF:
        return default
    return LONG_LABELS.get(roof, roof)


def roof_css(roof: str | None) -> str:
    """The badge class of a roof: `b-<roof>`, `b-other` for unknown names, `b-none` for none."""
    if not roof or roof == NO_ROOF:
        return "b-none"
    return f"b-{roof}" if roof in ROOF_ORDER else "b-other"


def roof_rank(roof: str) -> int:
    """Sort key: memory levels outward-in, then compute roofs, then anything else."""
    return ROOF_ORDER.index(roof) if roof in ROOF_ORDER else len(ROOF_ORDER)
