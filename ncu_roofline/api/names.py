"""Kernel names people can read: the function name with its template arguments and parameters elided.

`short_name("void at::native::vectorized_elementwise_kernel<(int)4, …>(int, T2, T3)")` is
`vectorized_elementwise_kernel<…>(…)`. `display_names` makes the short names of one report's
groups unique by the smallest part that tells them apart: a template argument or parameter
(`gemm<…, 256, …>(…)`), else a name inside one (`vectorized_elementwise_kernel<…silu_kernel…>(…)`),
else the launch configuration (`[grid 64×1×1]`), else a number (`#2`). The full demangled name
stays in every output beside it.

Pure string functions: demangled names are parsed by bracket depth only (`()`, `<>`, `[]`, `{}`),
with `operator<`-style names, `(anonymous namespace)` and `<unnamed>` taken as words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

ELLIPSIS = "…"
_OPEN, _CLOSE = "(<[{", ")>]}"
# Words that hold brackets but are not nested parts of a name; hidden behind one private-use
# character each while the brackets are counted.
_WORDS = re.compile(r"\(anonymous namespace\)|<unnamed>|\{lambda|"
                    r"operator\s*(?:<<=|>>=|<=>|<<|>>|<=|>=|->\*|->|\(\)|\[\]|[<>!=+\-*/%^&|~,]=?)\s*")
_TRAILING = re.compile(r"(\s+(const|volatile|noexcept|&&|&)|\s*\[clone [^\]]*\])+$")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+")
_PRIVATE = 0xE000
SHORT_ARG = 32  # a distinguishing argument up to this long is shown whole


@dataclass(frozen=True)
class Signature:
    """A demangled kernel name taken apart: its bare function name, template arguments, parameters."""

    function: str
    template_args: tuple[str, ...] | None  # None: not a template
    params: tuple[str, ...] | None  # None: no parameter list in the name (a C name)

    def short(self, template: str | None = None, params: str | None = None) -> str:
        """`name<…>(…)`, with `template` / `params` in place of the elided parts when given."""
        text = self.function
        if self.template_args is not None:
            text += f"<{template if template is not None else ELLIPSIS}>"
        if self.params is not None:
            text += f"({params if params is not None else (ELLIPSIS if self.params else '')})"
        return text


class _Hidden:
    """A name with its bracket-holding words hidden, and the way back."""

    def __init__(self, text: str) -> None:
        self.words: dict[str, str] = {}

        def hide(match: re.Match[str]) -> str:
            char = chr(_PRIVATE + len(self.words))
            self.words[char] = match.group(0)
            return char

        # One private-use character per word: a name with thousands of them is left as it is.
        self.text = _WORDS.sub(hide, text) if len(_WORDS.findall(text)) < 0x1000 else text

    def restore(self, text: str) -> str:
        for char, word in self.words.items():
            text = text.replace(char, word)
        return text


def _groups(text: str) -> list[tuple[str, int, int]] | None:
    """Top-level bracket groups (opening bracket, start, end) and spaces; None if unbalanced."""
    depth = 0
    out: list[tuple[str, int, int]] = []
    start = 0
    for i, ch in enumerate(text):
        if ch in _OPEN:
            if depth == 0:
                start = i
            depth += 1
        elif ch in _CLOSE:
            depth -= 1
            if depth < 0:
                return None
            if depth == 0:
                out.append((text[start], start, i))
        elif ch == " " and depth == 0:
            out.append((" ", i, i))
    return out if depth == 0 else None


def _split_args(inner: str) -> tuple[str, ...]:
    """Top-level comma-separated arguments, stripped (an empty list for `()`)."""
    args: list[str] = []
    depth, start = 0, 0
    for i, ch in enumerate(inner):
        if ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth -= 1
        elif ch == "," and depth == 0:
            args.append(inner[start:i].strip())
            start = i + 1
    last = inner[start:].strip()
    if last or args:
        args.append(last)
    return tuple(args)


def parse_signature(full: str) -> Signature:
    """Take a demangled name apart; a name that does not parse is its own function name. Line breaks and tabs are
    spaces here (no demangled name holds one; an edited one must not break a table row or a chart label)."""
    original = " ".join(full.split())
    hidden = _Hidden(original)
    text = _TRAILING.sub("", hidden.text)
    groups = _groups(text)
    if not text or groups is None:
        return Signature(_fallback(original), None, None)
    params: tuple[str, ...] | None = None
    head_end = len(text)
    last = groups[-1] if groups else None
    if last is not None and last[0] == "(" and last[2] == len(text) - 1 and last[1] > 0:
        params = tuple(hidden.restore(a) for a in _split_args(text[last[1] + 1:last[2]]))
        head_end = last[1]
    # a return type before the name (`void f<T>(int)`) only where there is a parameter list: a name with
    # spaces and none (`kernel 0`, a label) is not a signature
    spaces = [g[1] for g in groups if g[0] == " " and g[1] < head_end] if params is not None else []
    component = _last_component(text[(spaces[-1] + 1) if spaces else 0:head_end].strip())
    template: tuple[str, ...] | None = None
    sub = _groups(component) or []
    if sub and sub[-1][0] == "<" and sub[-1][2] == len(component) - 1 and sub[-1][1] > 0:
        template = tuple(hidden.restore(a) for a in _split_args(component[sub[-1][1] + 1:-1]))
        component = component[:sub[-1][1]]
    function = hidden.restore(component).strip()
    return Signature(function or _fallback(original), template, params)


def _last_component(head: str) -> str:
    """`ns::cls<T>::f<U>` -> `f<U>` (splits at top-level `::`)."""
    depth, cut = 0, 0
    i = 0
    while i < len(head):
        ch = head[i]
        if ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth -= 1
        elif ch == ":" and depth == 0 and head.startswith("::", i):
            cut = i + 2
            i += 1
        i += 1
    return head[cut:]


def _fallback(name: str) -> str:
    """A name that does not parse: up to its first bracket, else as it is (cut at 80 characters)."""
    head = re.split(r"[<(]", name, maxsplit=1)[0].strip() or name
    return head if len(head) <= 80 else head[:79] + ELLIPSIS


def short_name(full: str) -> str:
    """The function name with template arguments and parameters elided: `gemm<…>(…)`."""
    return parse_signature(full).short()


@dataclass(frozen=True)
class NameEntry:
    """One group to name: its full name and launch configuration (None where not part of the key)."""

    full: str
    grid: tuple[int, int, int] | None = None
    block: tuple[int, int, int] | None = None


def _dims(dims: tuple[int, int, int] | None) -> str:
    return "×".join(map(str, dims)) if dims else "n/a"


def _tokens(text: str) -> list[str]:
    return _IDENT.findall(text)


def _distinguish(sig: Signature, others: Sequence[Signature]) -> str | None:
    """The short name with the smallest part of `sig` that no other signature has in that place."""
    candidates: list[tuple[int, int, str]] = []  # (length, order, rendered)
    for kind, mine in (("t", sig.template_args), ("p", sig.params)):
        if not mine:
            continue
        theirs = [(o.template_args if kind == "t" else o.params) or () for o in others]
        for pos, arg in enumerate(mine):
            if any(pos < len(t) and t[pos] == arg for t in theirs):
                continue  # another name has the same argument here
            if len(arg) <= SHORT_ARG:
                part = ("…, " if pos else "") + arg + (", …" if pos < len(mine) - 1 else "")
            else:
                seen = {tok for t in theirs if pos < len(t) for tok in _tokens(t[pos])}
                word = next((tok for tok in _tokens(arg) if tok not in seen and not tok.isdigit()), None)
                if word is None:
                    continue
                part = f"{ELLIPSIS}{word}{ELLIPSIS}"
            rendered = sig.short(template=part) if kind == "t" else sig.short(params=part)
            candidates.append((len(part), len(candidates), rendered))
    return min(candidates)[2] if candidates else None


def _config_suffix(entry: NameEntry, twins: Sequence[NameEntry]) -> str:
    """The launch configuration part that tells `entry` from groups of the same full name."""
    grids = [t.grid for t in twins]
    blocks = [t.block for t in twins]
    if grids.count(entry.grid) == 1:
        return f" [grid {_dims(entry.grid)}]"
    if blocks.count(entry.block) == 1:
        return f" [block {_dims(entry.block)}]"
    return f" [grid {_dims(entry.grid)}, block {_dims(entry.block)}]"


def display_names(entries: Sequence[NameEntry]) -> list[str]:
    """One short name per entry, unique among them (in the same order as `entries`)."""
    sigs = [parse_signature(e.full) for e in entries]
    names = [s.short() for s in sigs]
    by_short: dict[str, list[int]] = {}
    for i, name in enumerate(names):
        by_short.setdefault(name, []).append(i)
    for members in by_short.values():
        if len(members) < 2:
            continue
        fulls = {entries[i].full for i in members}
        for i in members:
            if len(fulls) > 1:
                others = [sigs[j] for j in members if entries[j].full != entries[i].full]
                names[i] = _distinguish(sigs[i], others) or names[i]
            twins = [entries[j] for j in members if entries[j].full == entries[i].full]
            if len({(t.grid, t.block) for t in twins}) > 1:
                names[i] += _config_suffix(entries[i], twins)
    seen: dict[str, int] = {}
    for i, name in enumerate(names):
        n = seen.get(name, 0) + 1
        seen[name] = n
        if n > 1:
            names[i] = f"{name} #{n}"
    return names
