"""Golden-file comparison with scrubbing, after coverage.py's scheme.

`compare(name, text)` scrubs `text` (paths, dates, tool version, chart geometry) and compares it with
`tests/gold/<name>`. To regenerate every golden file after an intended change of output::

    NCU_ROOFLINE_REGOLD=1 python -m pytest tests/test_gold.py

and review the `git diff` of `tests/gold/` before committing it. JSON golden files are indented with sorted
keys; a mismatch shows a unified diff and leaves the actual output beside the golden file (`*.actual`).
`tests/gold/verdicts/` holds what each corpus capture is found to be (limit, regime, finding kinds and
bounds) without any wording, so that a wording change and a behaviour change fail in different files.

Charts are compared by structure (their text labels and element counts), not by matplotlib's path
bytes, which change between matplotlib releases.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from collections import Counter
from pathlib import Path

from ncu_roofline import __version__

GOLD = Path(__file__).resolve().parent / "gold"
REGOLD = os.environ.get("NCU_ROOFLINE_REGOLD") == "1"
DIFF_LINES = 60  # of a mismatch's unified diff, in the assertion message

_SVG_RE = re.compile(r"<svg\b.*?</svg>", re.S)
_TAG_RE = re.compile(r"<([a-zA-Z][\w:-]*)")
_TEXT_RE = re.compile(r"<text\b[^>]*>(.*?)</text>", re.S)
_TSPAN_RE = re.compile(r"<[^>]+>")


def _svg_summary(match: re.Match[str]) -> str:
    svg = match.group(0)
    tags = Counter(_TAG_RE.findall(svg))
    texts = [_TSPAN_RE.sub("", t).strip() for t in _TEXT_RE.findall(svg)]
    label = re.search(r'aria-label="([^"]*)"', svg[:2000])
    shape = ",".join(f"{tag}:{n}" for tag, n in sorted(tags.items()))
    lines = [f"<svg-scrubbed label={label.group(1) if label else ''!r} elements={shape}>"]
    lines += [f"  text: {t}" for t in texts if t]
    return "\n".join(lines) + "\n</svg-scrubbed>"


# Absolute paths of the machine a capture was made on, as Nsight Compute's own rule messages quote them
# ("/root/Documents/NVIDIA Nsight Compute/2023.1.1/Sections/Occupancy.py:44"): up to a quote, an angle
# bracket, a line end or a JSON escape. Golden files hold none of a capturer's paths.
_CAPTURE_PATH_RE = re.compile(r"/(?:root|home|usr|opt|Users|mnt|scratch|var|workspace)/[^\"'<>\n\\]*")


def scrub(text: str, replacements: dict[str, str]) -> str:
    """Paths and temporary folders -> placeholders (a capturer's own paths -> <CAPTURE-PATH>); tool version ->
    <VERSION>; charts -> structure."""
    for old, new in sorted(replacements.items(), key=lambda kv: -len(kv[0])):
        text = text.replace(old, new)
    text = _CAPTURE_PATH_RE.sub("<CAPTURE-PATH>", text)
    text = re.sub(r"(ncu-roofline[ /]|\"version\": ?\"|>v)" + re.escape(__version__), r"\1<VERSION>", text)
    return _SVG_RE.sub(_svg_summary, text)


def readable(name: str, text: str) -> str:
    """A JSON golden file indented with sorted keys, so that a change shows as the lines it changes."""
    if not name.endswith(".json"):
        return text
    return json.dumps(json.loads(text), indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def compare(name: str, text: str, replacements: dict[str, str]) -> None:
    """Assert that scrubbed `text` equals `tests/gold/<name>` (or rewrite it with REGOLD).

    On a mismatch the actual output is saved beside the golden file as `<name>.actual` (ignored by git), and the
    assertion shows the start of a unified diff."""
    actual = readable(name, scrub(text, replacements))
    path = GOLD / name
    stale = path.with_name(path.name + ".actual")
    if REGOLD:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8", newline="")
        stale.unlink(missing_ok=True)
        return
    assert path.is_file(), f"missing golden file {path}; regenerate with NCU_ROOFLINE_REGOLD=1"
    expected = path.read_text(encoding="utf-8")
    if actual == expected:
        stale.unlink(missing_ok=True)
        return
    stale.write_text(actual, encoding="utf-8", newline="")
    diff = list(difflib.unified_diff(expected.splitlines(), actual.splitlines(), f"gold/{name}", "actual",
                                     lineterm="", n=2))
    shown = "\n".join(line[:300] for line in diff[:DIFF_LINES])
    more = f"\n... {len(diff) - DIFF_LINES} more diff lines" if len(diff) > DIFF_LINES else ""
    raise AssertionError(f"{name} differs from its golden file (actual output saved as {stale}):\n{shown}{more}")
