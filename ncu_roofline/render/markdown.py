"""Markdown: a GitHub-flavoured summary for a pull-request comment or $GITHUB_STEP_SUMMARY.

Plain Markdown only (no HTML that GitHub would strip). Every text that comes from a report (kernel
names, paths, device names, messages) goes through `md_escape` or, for kernel names, `md_code`:

- table and emphasis syntax, template brackets, pipes and backticks cannot break the layout;
- CR, LF and other control characters become spaces (a line break would end a table row);
- `@name` cannot mention a user or team, `#123` cannot reference an issue, and `http://…`,
  `www.…` and `a@b.c` are not turned into links: `md_escape` puts an invisible zero-width space
  (`&#8203;`) after the `@` and `#`, and writes the `:` of `://` and the `.` of `www.` as
  entities. In a code span (`md_code`) GitHub links and mentions nothing; only the fence and,
  in a table, the pipe need care there.
"""

from __future__ import annotations

import re

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|<>~])")
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]")
_ZWSP = "&#8203;"
_NEUTRALISE = (
    (re.compile(r"@"), "@" + _ZWSP),                           # mentions, e-mail autolinks
    (re.compile(r"(?<=\\#)(?=\d)"), _ZWSP),                    # issue references (# is escaped first)
    (re.compile(r":(?=//)"), "&#58;"),                         # scheme://
    (re.compile(r"(?i)\b(www)\."), r"\1&#46;"),                 # www. autolinks
)


def md_escape(text: str) -> str:
    """Escape Markdown and table syntax, and neutralise mentions and links, in any Markdown text.

    Angle brackets become entities GitHub shows as text, and `&` becomes `&amp;` first, so that a
    name holding `&lt;` shows those four characters rather than `<`. Line breaks become spaces.
    """
    out = _MD_SPECIAL.sub(lambda m: {"<": "&lt;", ">": "&gt;", "|": "\\|"}.get(m.group(1), "\\" + m.group(1)),
                          _CONTROL.sub(" ", text.replace("&", "&amp;")))
    for pattern, replacement in _NEUTRALISE:
        out = pattern.sub(replacement, out)
    return out


def md_code(text: str, *, table: bool = False) -> str:
    """`text` as an inline code span (kernel names): shown as written, never a link or a mention.

    The fence is one backtick longer than the longest run of backticks in the text; line breaks
    become spaces; in a table cell (`table=True`) pipes are escaped, as GitHub requires there.
    """
    body = _CONTROL.sub(" ", text)
    if table:
        body = body.replace("|", "\\|")
    if not body.strip():
        return "(no name)"
    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if body[0] == "`" or body[-1] == "`" or (body[0] == " " and body[-1] == " ") else ""
    return f"{fence}{pad}{body}{pad}{fence}"


def comment_length(text: str) -> int:
    """The length GitHub counts against its comment limit, conservatively: UTF-16 code units."""
    return len(text.encode("utf-16-le")) // 2
