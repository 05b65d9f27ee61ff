"""Markdown: a GitHub-flavoured summary for a pull-request comment or $GITHUB_STEP_SUMMARY.

Plain Markdown only (no HTML that GitHub would strip); kernel names are escaped so that
template brackets, pipes and backticks cannot break the table.
"""

from __future__ import annotations

import re

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|<>~])")


def md_escape(text: str) -> str:
    """Escape Markdown and table syntax, for every document written as Markdown.

    Angle brackets become entities GitHub shows as text, and `&` becomes `&amp;` first, so that a
    name holding `&lt;` shows those four characters rather than `<`. Line breaks become spaces.
    """
    return _MD_SPECIAL.sub(lambda m: {"<": "&lt;", ">": "&gt;", "|": "\\|"}.get(m.group(1), "\\" + m.group(1)),
                           text.replace("&", "&amp;").replace("\r", " ").replace("\n", " "))
