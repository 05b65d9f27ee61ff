"""The README and the docs: the README stays an on-ramp, every relative link resolves, and its test
command is the one CI runs."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
CI_RUN = ROOT / ".ci" / "run"
PAGES = sorted([README, ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md", *(ROOT / "docs").rglob("*.md")])
README_MAX_LINES = 200

_FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.MULTILINE | re.DOTALL)
_CODE_SPAN = re.compile(r"(`+).+?\1", re.DOTALL)
_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def relative_links(text: str) -> list[str]:
    """The targets of the Markdown links and images in `text` that point at a file (code left out)."""
    prose = _CODE_SPAN.sub("", _FENCE.sub("", text))
    targets = (m.group(1) for m in _LINK.finditer(prose))
    return [t for t in targets if not _SCHEME.match(t) and not t.startswith(("#", "/"))]


def test_relative_links_finds_links_outside_code() -> None:
    text = "[a](docs/x.md#part) ![b](img.png \"t\") [c](https://e.org) [d](#here)\n`[e](no.md)`\n```\n[f](no.md)\n```\n"
    assert relative_links(text) == ["docs/x.md#part", "img.png"]


def test_readme_is_an_on_ramp() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; the manual belongs in docs/"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    broken = []
    for target in relative_links(page.read_text(encoding="utf-8")):
        path = target.split("#", 1)[0].split("?", 1)[0]
        if path and not (page.parent / path).is_file():
            broken.append(target)
    assert not broken, f"{page.relative_to(ROOT)} links to files that do not exist: {broken}"


def _readme_test_command() -> str:
    text = README.read_text(encoding="utf-8")
    blocks = re.findall(r"^```sh\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
    commands = [line for block in blocks for line in block.splitlines() if "pytest" in line]
    assert len(commands) == 1, f"the README should show one test command, found {commands}"
    return commands[0].strip()


def _ci_command() -> str:
    lines = [line.strip() for line in CI_RUN.read_text(encoding="utf-8").splitlines()]
    commands = [line for line in lines if "pytest" in line and not line.startswith("#")]
    assert len(commands) == 1, f".ci/run should run one test command, found {commands}"
    return commands[0]


def test_readme_test_command_is_what_ci_runs() -> None:
    readme, ci = _readme_test_command(), _ci_command()
    assert shlex.split(readme) == shlex.split(ci), f"README: {readme}\n.ci/run: {ci}"
    assert "mkdocs build --strict" in readme, "the test command builds the docs"
