"""JSON Schemas of what the tool reads back: peaks files, report documents, batch manifests.

They state what the readers rely on (types, ranges, nesting), not every key the writers put
in: unknown keys are allowed in documents and manifests, so that a newer writer's output still
reads, while a hand-edited `nvtx_ranges: 5`, `bound_by: ["l2"]` or a negative duration does
not. Peaks files are closed (an unknown key is a typo). Numbers are finite and non-finite
tokens are refused before a schema is checked (`jsonio.parse_json`).

Public: `PEAKS`, `REPORT_DOCUMENT`, `BATCH_MANIFEST` (draft 2020-12 schemas), `REPORT_SCHEMAS`
(the document versions read), `BATCH_SCHEMA_PREFIX`, and `validate_document` /
`validate_manifest` for the two readers of documents (`compare/runs.py` and the batch re-run).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .jsonio import validate
from .wording import Kind

REPORT_SCHEMAS = ("ncu-roofline/1", "ncu-roofline/2", "ncu-roofline/3", "ncu-roofline/4", "ncu-roofline/5")
BATCH_SCHEMA_PREFIX = "ncu-roofline-batch/"
PEAKS_SCHEMA = "ncu-roofline-peaks/1"
PEAK_KEYS = ("dram_bytes_per_s", "l2_bytes_per_s", "l1_bytes_per_s",
             "fp64_flop_per_s", "fp32_flop_per_s", "fp16_flop_per_s")

# A peak in bytes or FLOP per second: from 1 (a rate below 1 B/s is a unit mistake) to 1e30 (past any GPU, and
# the model's limit on any figure, `model.ranges.FIGURE_LIMIT`).
_PEAK: dict[str, Any] = {"type": "number", "minimum": 1, "maximum": 1e30}
_NUMBER_OR_NULL: dict[str, Any] = {"type": ["number", "null"]}
_AT_LEAST_0_OR_NULL: dict[str, Any] = {"type": ["number", "null"], "minimum": 0}
_COUNT_OR_NULL: dict[str, Any] = {"type": ["integer", "null"], "minimum": 0}
_TEXT_OR_NULL: dict[str, Any] = {"type": ["string", "null"]}
_TEXTS: dict[str, Any] = {"type": "array", "items": {"type": "string"}}
_DIMS: dict[str, Any] = {"type": ["array", "null"], "items": {"type": "integer", "minimum": 0},
                         "minItems": 3, "maxItems": 3}
_NUMBERS_BY_NAME: dict[str, Any] = {"type": "object", "additionalProperties": _NUMBER_OR_NULL}

_PEAK_SET: dict[str, Any] = {
    "type": "object",
    "properties": {
        **{key: _PEAK for key in PEAK_KEYS},
        "tensor_flop_per_s": {"anyOf": [_PEAK, {"type": "object", "additionalProperties": _PEAK}]},
    },
    "additionalProperties": False,
}

PEAKS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "schema": {"const": PEAKS_SCHEMA},
        "note": {"type": "string"},
        "peaks": _PEAK_SET,
        "devices": {"type": "object", "additionalProperties": _PEAK_SET},
    },
    "additionalProperties": False,
}

# A finding (`ncu-roofline/4`: kind, variant, lever, figures and its words; earlier documents: kind, roof, text).
_FINDING: dict[str, Any] = {"type": "object", "properties": {
    "kind": {"enum": [k.value for k in Kind]}, "variant": _TEXT_OR_NULL, "lever": _TEXT_OR_NULL,
    "roof": _TEXT_OR_NULL, "text": _TEXT_OR_NULL, "headline": _TEXT_OR_NULL, "next_step": _TEXT_OR_NULL,
    "detail": _TEXT_OR_NULL, "bound_note": _TEXT_OR_NULL, "speedup": _NUMBER_OR_NULL,
    "figures": {"type": "object"}, "basis": _TEXTS, "evidence": _TEXTS,
    # the top instructions by the finding's per-instruction counter (`passes.where`); null without them
    "where": {"type": ["array", "null"], "items": {"type": "object", "required": ["pc", "sass", "share", "value"]}}}}

_KERNEL: dict[str, Any] = {
    "type": "object",
    "required": ["name"],
    "properties": {
        "name": {"type": "string"},
        "demangled_name": _TEXT_OR_NULL,
        "index": _COUNT_OR_NULL,
        "device": _TEXT_OR_NULL,
        "grid_size": _DIMS,
        "block_size": _DIMS,
        "nvtx_ranges": _TEXTS,
        "usable": {"type": "boolean"},
        "bound_by": _TEXT_OR_NULL,
        "bound_kind": _TEXT_OR_NULL,
        "regime": _TEXT_OR_NULL,
        "duration_s": _AT_LEAST_0_OR_NULL,
        "utilization": _NUMBERS_BY_NAME,
        "unit_recipes": {"type": "object", "additionalProperties": {"type": "string"}},
        "intensity_flop_per_byte": _NUMBERS_BY_NAME,
        "achieved_flop_per_s": _NUMBER_OR_NULL,
        "peaks": {"type": "object", "additionalProperties": {"type": ["number", "null", "object"]}},
        "work_flop": {"type": "object"},
        "tensor_ops_by_datapath": {"type": "object"},
        "set_aside_traffic_bytes": {"type": "object", "additionalProperties": {"type": "array", "items": {
            "type": "object", "required": ["definition", "recipe", "bytes"],
            "properties": {"bytes": _AT_LEAST_0_OR_NULL}}}},
        "diagnosis": {"type": "array", "items": _FINDING},
        "ceilings": {"type": "array", "items": {"type": "object"}},
        "recipe_set": _COUNT_OR_NULL,
    },
}

_REPORT: dict[str, Any] = {
    "type": "object",
    "required": ["kernels"],
    "properties": {
        "path": _TEXT_OR_NULL,
        "source_format": _TEXT_OR_NULL,
        "ncu_version": _TEXT_OR_NULL,
        "devices": _TEXTS,
        "kernel_count": _COUNT_OR_NULL,
        "unusable_kernel_count": _COUNT_OR_NULL,
        "total_duration_s": _AT_LEAST_0_OR_NULL,
        "warnings": _TEXTS,
        "completeness": _TEXT_OR_NULL,
        "kernels": {"type": "array", "items": _KERNEL},
        "units": {"type": "object", "additionalProperties": {"type": "object", "properties": {
            "label": {"type": "string"}, "group": {"type": "string"}, "parent": _TEXT_OR_NULL,
            "recipe": {"type": "string"}}}},
        # /5: where the findings are (each launch's, or each group's from its longest launch), and each distinct
        # provenance and missing-quantity list once, named by the launches' `recipe_set`
        "findings": {"enum": ["launch", "group"]},
        "recipe_sets": {"type": "array", "items": {"type": "object", "required": ["provenance", "missing"],
                                                   "properties": {
            "provenance": {"type": "object", "additionalProperties": {"type": "string"}},
            "missing": {"type": "array", "items": {"type": "object", "required": ["quantity", "reason"]}}}}},
    },
}

REPORT_DOCUMENT: dict[str, Any] = {
    "type": "object",
    "required": ["schema", "reports"],
    "properties": {
        "schema": {"enum": list(REPORT_SCHEMAS)},
        "generator": {"type": "object"},
        "settings": {"type": "object"},
        "reports": {"type": "array", "items": _REPORT},
        "errors": {"type": "array", "items": {"type": "object", "properties": {
            "path": {"type": "string"}, "message": {"type": "string"}}}},
    },
}

_ENTRY: dict[str, Any] = {
    "type": "object",
    "required": ["status"],
    "properties": {
        "path": _TEXT_OR_NULL,
        "key": _TEXT_OR_NULL,
        "sha256": _TEXT_OR_NULL,
        "status": {"type": "string"},
        "error": _TEXT_OR_NULL,
        "json": _TEXT_OR_NULL,
        "html": _TEXT_OR_NULL,
        "kernel_count": _COUNT_OR_NULL,
        "unusable_kernel_count": _COUNT_OR_NULL,
        "total_duration_s": _AT_LEAST_0_OR_NULL,
        "device": _TEXT_OR_NULL,
        "bound_mix": {"type": ["object", "null"], "additionalProperties": {"type": "integer", "minimum": 0}},
        "worst": {"type": ["array", "null"], "items": {"type": "object", "properties": {
            "name": _TEXT_OR_NULL, "duration_s": _AT_LEAST_0_OR_NULL, "bound_by": _TEXT_OR_NULL}}},
        "warnings": {"type": "array", "items": {"type": "string"}},
        "seconds": _AT_LEAST_0_OR_NULL,
    },
}

BATCH_MANIFEST: dict[str, Any] = {
    "type": "object",
    "required": ["schema", "reports"],
    "properties": {
        "schema": {"type": "string", "pattern": f"^{BATCH_SCHEMA_PREFIX}"},
        "generator": {"type": "object"},
        "settings": {"type": "object"},
        "reports": {"type": "array", "items": _ENTRY},
    },
}


def validate_document(doc: Any, path: str | Path) -> None:
    """An `ncu-roofline/1` to `/5` report document, or InputError naming `path` and what is wrong."""
    validate(doc, REPORT_DOCUMENT, path, "ncu-roofline JSON document",
             hint="give a report file, or a JSON file written by `ncu-roofline report --format json`")


def validate_manifest(doc: Any, path: str | Path) -> None:
    """An `ncu-roofline-batch/...` manifest, or InputError naming `path` and what is wrong."""
    validate(doc, BATCH_MANIFEST, path, "ncu-roofline batch manifest",
             hint="write the folder again with `ncu-roofline batch`")


__all__ = [
    "BATCH_MANIFEST",
    "BATCH_SCHEMA_PREFIX",
    "PEAKS",
    "PEAKS_SCHEMA",
    "PEAK_KEYS",
    "REPORT_DOCUMENT",
    "REPORT_SCHEMAS",
    "validate_document",
    "validate_manifest",
]
