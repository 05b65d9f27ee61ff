"""mkdocs hooks: the reference pages filled from the package, never copied by hand.

- `<!-- schema: NAME -->` on a line of its own becomes that schema of `ncu_roofline.knowledge.schemas`, as JSON.
- On the CLI reference, a placeholder of the commands' help such as `<first input>`, which mkdocs-click passes on
  as raw HTML, is escaped so that it reads as written.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ncu_roofline.knowledge import schemas

_MARKER = re.compile(r"^<!-- schema: (\w+) -->$", re.MULTILINE)
_CLI_PAGE = "reference/cli.md"
# The elements mkdocs-click and Markdown write; any other `<word ...>` on the CLI page is text from a help string.
_HTML_TAGS = frozenset({
    "a", "p", "code", "pre", "div", "span", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "table", "thead",
    "tbody", "tr", "th", "td", "em", "strong", "br", "hr", "img", "blockquote", "details", "summary", "sup", "sub",
    "dl", "dt", "dd",
})
_TAG = re.compile(r"<([A-Za-z][\w-]*)([^<>]*)>")


def _schema_block(match: re.Match[str]) -> str:
    name = match.group(1)
    if name not in schemas.__all__ or not isinstance(getattr(schemas, name), dict):
        raise ValueError(f"<!-- schema: {name} -->: not a schema of ncu_roofline.knowledge.schemas")
    return "```json\n" + json.dumps(getattr(schemas, name), indent=2, sort_keys=True, ensure_ascii=False) + "\n```"


def _escape_placeholder(match: re.Match[str]) -> str:
    if match.group(1).lower() in _HTML_TAGS:
        return match.group(0)
    return "&lt;" + match.group(1) + match.group(2) + "&gt;"


def on_page_markdown(markdown: str, **_kwargs: Any) -> str:
    """The page's Markdown with every schema marker replaced by the schema as indented JSON."""
    return _MARKER.sub(_schema_block, markdown)


def on_page_content(html: str, page: Any, **_kwargs: Any) -> str:
    """The CLI reference's HTML with the help strings' placeholders escaped; other pages as they are."""
    if page.file.src_uri != _CLI_PAGE:
        return html
    return _TAG.sub(_escape_placeholder, html)
