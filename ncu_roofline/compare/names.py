"""Kernel names as matching sees them: the function a name belongs to, generated suffixes, user rules.

- `base_function_name`: the demangled name without its return type, template arguments,
  parameters and trailing qualifiers: `void gemm<128, 8, 128, 8, 8, false>(float*, int)` and
  `gemm<128, 8, 128, 8, 8>(float const*)` are both `gemm`; `ns::Tile<4>::run<2>(int) const` is
  `ns::Tile::run`. A mangled name without its demangled form (`_Z4gemmILi128EEvPf`) gives its
  source name (`gemm`), read from the Itanium encoding.
- `generated_name_key`: the base name with the generated part of its last `_` token removed, so
  that the same kernel matches across builds: a numeric gensym or counter (Julia's
  `julia__5_11155` → `julia__5_`, Inductor's `triton_poi_fused_add_0` → `triton_poi_fused_add_`),
  a Triton specialisation suffix (`_0d1d2d3de`), a hexadecimal hash of 8 or more characters
  with digits and letters (`_9f3a61c2d0`, also just before a stripped counter).
- `MatchRule`: a user rule `BASE_REGEX=HEAD_REGEX` (`--match`, or one per line of a `--match-file`):
  a BASE kernel whose name the first regex finds pairs with a HEAD kernel whose name the second
  finds, and, where the regexes capture groups, whose captured texts are equal.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError, RooflineError

_OPEN = {"<": ">", "(": ")", "[": "]"}
_CLOSE = {v: k for k, v in _OPEN.items()}
# Words that name no function: return types before the name, qualifiers after the parameters.
_QUALIFIERS = {"const", "volatile", "noexcept", "&", "&&", "__restrict__"}
# Spellings of anonymous scopes that would otherwise read as template arguments or parameters.
_ANONYMOUS = (("(anonymous namespace)", "{anonymous}"), ("<unnamed>", "{unnamed}"))
_COUNTER = re.compile(r"\d+|(?:\d+[cde]+){2,}\d*")   # 11155, 0d1d2d3de (Triton's specialisation)
_HASH = re.compile(r"[0-9a-f]{8,}")


def _depth_zero(text: str) -> str:
    """The characters of `text` outside every <...>, (...) and [...] (unbalanced closers ignored)."""
    out: list[str] = []
    stack: list[str] = []
    for ch in text:
        if ch in _OPEN:
            stack.append(_OPEN[ch])
        elif ch in _CLOSE and stack:
            if stack[-1] == ch:
                stack.pop()
        elif not stack:
            out.append(ch)
    return "".join(out)


def _identifier(name: str, pos: int) -> tuple[int, int] | None:
    """(start, end) of the length-prefixed identifier whose length starts at `pos`; None if none."""
    start = pos
    while start < len(name) and name[start].isdigit():
        start += 1
    if start == pos:
        return None
    length = int(name[pos:start])
    return (start, start + length) if length > 0 and start + length <= len(name) else None


def _skip_template_args(name: str, pos: int) -> int:
    """The position after the `I...E` block starting at `pos` (nested I/N/X blocks counted, L...E literals)."""
    depth = 0
    while pos < len(name):
        ch = name[pos]
        if ch == "L":  # a literal: type code and value up to its E
            end = name.find("E", pos)
            pos = end + 1 if end >= 0 else len(name)
            continue
        if ch.isdigit():
            span = _identifier(name, pos)
            pos = span[1] if span is not None else pos + 1
            continue
        if ch in "INX":
            depth += 1
        elif ch == "E":
            depth -= 1
            if depth == 0:
                return pos + 1
        pos += 1
    return pos


def _itanium_source_name(name: str) -> str | None:
    """The source name of an Itanium-mangled name (`_Z4gemmI...`, `_ZN2ns4gemmE...`); None if not one."""
    if not name.startswith("_Z") or len(name) < 3:
        return None
    nested = name[2] == "N"
    pos = 3 if nested else 2
    while nested and pos < len(name) and name[pos] in "rVKRO":  # qualifiers of a nested name
        pos += 1
    parts: list[str] = []
    while pos < len(name):
        if name[pos] == "I" and parts:
            pos = _skip_template_args(name, pos)  # a scope's template arguments: not a name
            continue
        span = _identifier(name, pos)
        if span is None:
            break
        parts.append(name[span[0]:span[1]])
        pos = span[1]
        if not nested:
            break
    return "::".join(parts) if parts else None


def base_function_name(name: str) -> str:
    """The function a (demangled) kernel name belongs to, without template arguments or parameters."""
    text = name.strip()
    mangled = _itanium_source_name(text)
    if mangled is not None:
        return mangled
    for spelled, token in _ANONYMOUS:
        text = text.replace(spelled, token)
    words = [w for w in _depth_zero(text).split() if w]
    while words and words[-1] in _QUALIFIERS:
        words.pop()
    if not words:
        return text
    last = words[-1].strip("*&")
    return last or text


def _is_hash(token: str) -> bool:
    return bool(_HASH.fullmatch(token)) and any(c.isdigit() for c in token) and any(c.isalpha() for c in token)


def generated_name_key(name: str) -> str:
    """The base function name with a generated suffix (counter, Triton specialisation, hash) removed."""
    base = base_function_name(name)
    scope, sep, leaf = base.rpartition("::")
    tokens = leaf.split("_")
    if len(tokens) < 2:
        return base
    last = tokens[-1]
    if _COUNTER.fullmatch(last):
        tokens[-1] = ""
        if len(tokens) > 2 and _is_hash(tokens[-2]):
            tokens[-2:] = [""]
    elif _is_hash(last):
        tokens[-1] = ""
    else:
        return base
    return scope + sep + "_".join(tokens)


# --------------------------------------------------------------------------------------------
# User rules


class MatchRuleError(RooflineError):
    """A `--match` rule or match file that cannot be used."""


@dataclass(frozen=True)
class MatchRule:
    """`BASE_REGEX=HEAD_REGEX`: pair a BASE kernel the first regex finds with a HEAD kernel the second finds."""

    text: str
    base: re.Pattern[str]
    head: re.Pattern[str]

    def key(self, pattern: re.Pattern[str], name: str) -> tuple[str | None, ...] | None:
        """The captured groups of `pattern` in `name` (empty tuple without groups); None: no match."""
        m = pattern.search(name)
        if m is None:
            return None
        return m.groups()


def _split_rule(text: str) -> tuple[str, str] | None:
    """BASE and HEAD of `BASE=HEAD`, split at the first `=` not escaped by a backslash."""
    escaped = False
    for n, ch in enumerate(text):
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == "=":
            return text[:n], text[n + 1:]
    return None


def parse_match_rule(text: str) -> MatchRule:
    """A `BASE_REGEX=HEAD_REGEX` rule; raises `MatchRuleError` when it is not one."""
    halves = _split_rule(text)
    if halves is None or not halves[0] or not halves[1]:
        raise MatchRuleError(f"--match {text!r}: expected BASE_REGEX=HEAD_REGEX (write a literal '=' in "
                             "BASE_REGEX as '\\=')")
    try:
        base, head = re.compile(halves[0]), re.compile(halves[1])
    except re.error as exc:
        raise MatchRuleError(f"--match {text!r}: not a regular expression ({exc})") from exc
    if base.groups != head.groups:
        raise MatchRuleError(f"--match {text!r}: both sides must capture the same number of groups "
                             f"(BASE {base.groups}, HEAD {head.groups})")
    return MatchRule(text, base, head)


def read_match_file(path: str | Path) -> list[MatchRule]:
    """The rules of a match file: one `BASE_REGEX=HEAD_REGEX` per line; blank lines and `#` comments skipped."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(path, f"cannot read the match file ({exc})") from exc
    rules = []
    for number, line in enumerate(lines, 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        try:
            rules.append(parse_match_rule(text))
        except MatchRuleError as exc:
            raise InputError(path, f"line {number}: {exc}") from exc
    return rules


def match_rules(rules: Iterable[str] = (), files: Iterable[str | Path] = ()) -> list[MatchRule]:
    """The rules given on the command line, then those of each match file, in order."""
    return [parse_match_rule(r) for r in rules] + [rule for f in files for rule in read_match_file(f)]
