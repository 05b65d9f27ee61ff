"""The diff as a pull-request comment (Markdown): one verdict line, counts, warnings, the groups that moved.

Laid out from `views.diff.build_diff_view`, in this order: the title; the verdict line (status,
summary, the regressions it names); the counts of improved / regressed / unchanged / new / gone
groups (and ambiguous, not timed); GPU time and coverage; environment differences as warnings;
a BASE / HEAD / Δ table of the groups that moved, with the pass that paired them, the evidence
for the call, the work (a problem size that changed in bold, with the time per unit of work), the
likely cause and the limiter before and after; the ambiguous candidates; why they changed (the causes,
ranked); groups only in one run; the rules. Kernel names are code spans; everything else from a report goes through
`md_escape`. The whole comment stays under GitHub's 65,536-character limit: lines past the budget
are left out, with a note that says how many.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..views.diff import build_diff_view
from .markdown import comment_length, md_code, md_escape

if TYPE_CHECKING:
    from ..compare.diff import Diff
    from . import RenderOptions

COMMENT_LIMIT = 65_536  # GitHub's limit on a comment body
MAX_MD_CHANGES = 50  # rows of the table of groups that moved
MAX_MD_LIST = 20  # entries of each list
MAX_CANDIDATES = 5  # candidates per side of an ambiguous bucket
MAX_NAMED = 3  # regressions named in the verdict line
GATE_ICONS = {"passed": "✅", "failed": "❌", "insufficient_coverage": "⚠️", "off": "ℹ️"}


def _name(short: str, *, table: bool = False) -> str:
    return md_code(short, table=table)


def _verdict_line(gate: dict[str, Any]) -> str:
    """The one line a reader needs: status, summary, and the first regressions by name."""
    # the title, summary and hint are the tool's own words (no report text): written as they are
    line = f"{GATE_ICONS[gate['status']]} **{gate['title']}**: {gate['summary']}"
    named = gate["regressions"][:MAX_NAMED]
    if named:
        parts = [(_name(r["short_name"]) if r["scope"] in ("group", "metric") else md_escape(r["name"]))
                 + f" {r['what'] if r['scope'] == 'metric' else r['pct']}" for r in named]
        more = len(gate["regressions"]) - len(named)
        line += " " + ", ".join(parts) + (f", and {more} more" if more > 0 else "") + "."
    if gate["hint"]:
        line += " " + gate["hint"].replace("--match 'BASE_REGEX=HEAD_REGEX'", "`--match 'BASE_REGEX=HEAD_REGEX'`")
    return line


def _counts_line(h: dict[str, Any]) -> str:
    c = h["counts"]
    parts = [f"{c.get('improved', 0)} improved", f"{c.get('regressed', 0)} regressed",
             f"{c.get('unchanged', 0)} unchanged", f"{c.get('new', 0)} new", f"{c.get('gone', 0)} gone"]
    if c.get("ambiguous_base") or c.get("ambiguous_head"):
        parts.append(f"{c.get('ambiguous_base', 0)} + {c.get('ambiguous_head', 0)} ambiguous (BASE + HEAD)")
    if c.get("unknown"):
        parts.append(f"{c['unknown']} not timed")
    if c.get("size_changed"):
        parts.append(f"{c['size_changed']} with another problem size, judged per unit of work")
    return "**Groups:** " + " · ".join(parts)


def _header(view: dict[str, Any]) -> list[str]:
    h, ta, tm, gate = view["header"], view["total_all"], view["total_matched"], view["gate"]
    lines = [
        f"### Roofline diff: {md_escape(h['base_name'])} → {md_escape(h['head_name'])}",
        "",
        _verdict_line(gate),
        "",
        _counts_line(h),
        "",
        f"**GPU time:** all kernels {ta['base']} → {ta['head']} ({ta['pct']}) · compared groups "
        + (f"{tm['base']} → {tm['head']} ({tm['pct']})" if h["counts"].get("improved", 0) + h["counts"].get(
            "regressed", 0) + h["counts"].get("unchanged", 0) else "none")
        + f" · **coverage:** {h['coverage']} · **GPU:** {md_escape(h['devices_text'])}",
        "",
    ]
    if h["warnings"]:
        lines += [f"> ⚠️ {md_escape(w)}" for w in h["warnings"]] + [""]
    if gate["rule"]:
        lines += [gate["rule"], ""]
    return lines


def _limiter(r: dict[str, Any]) -> str:
    base = f"{r['bound_base_text']} {r['util_base']}"
    head = f"{r['bound_head_text']} {r['util_head']}"
    return f"{md_escape(base)} → " + (f"**{md_escape(head)}**" if r["bound_changed"] else md_escape(head))


def _moved_row(r: dict[str, Any]) -> str:
    name = _name(r["short_name"], table=True)
    if r["name_changed"]:
        name += " → " + _name(r["head_short_name"], table=True)
    launch = " (launch config changed)" if r["launch_changed"] else ""
    delta = f"**{r['delta_pct_text']}**" if r["regressed"] else r["delta_pct_text"]
    match = md_escape(r["match"] + (f": {r['rule']}" if r["rule"] else ""))
    return (f"| {name}{launch} | {match} | {md_escape(r['launches'])} | {r['base_time']} | {r['head_time']} | "
            f"{delta} | {md_escape(r['evidence'])} | {_work(r['work'])} | {md_escape(r['why'])} | {_limiter(r)} |")


def _work(w: dict[str, Any]) -> str:
    """The work cell: what changed (bold for another problem size) and, then, the time per unit of work."""
    if not w["size_changed"]:
        return md_escape(w["text"])
    return f"**{md_escape(w['text'])}**; {md_escape(w['per_unit'])}"


def _moved(view: dict[str, Any]) -> list[str]:
    rows, compared = view["moved"], view["header"]["counts"]
    if not rows:
        return []
    shown = rows[:MAX_MD_CHANGES]
    total = sum(compared.get(v, 0) for v in ("improved", "regressed", "unchanged"))
    lines = [f"Groups that moved ({len(rows)} of {total} compared, by time gained or lost; medians of the "
             "launches):", "",
             "| Kernel | Matched by | Launches | BASE | HEAD | Δ | Evidence | Work | Why | Limiter BASE → HEAD |",
             "|---|---|---:|---:|---:|---:|---|---|---|---|"]
    lines += [_moved_row(r) for r in shown]
    if len(rows) > len(shown):
        lines.append(f"| … {len(rows) - len(shown)} more | | | | | | | | | |")
    return [*lines, ""]


def _candidates(items: list[dict[str, Any]]) -> str:
    shown = [f"{_name(u['short_name'])} ({md_escape(u['launch'])}, {u['total']})" for u in items[:MAX_CANDIDATES]]
    more = len(items) - len(shown)
    return ", ".join(shown) + (f", and {more} more" if more > 0 else "")


def _ambiguous(view: dict[str, Any]) -> list[str]:
    items = view["ambiguous"]
    if not items:
        return []
    lines = ["Ambiguous, so not compared (several candidates; pair them with `--match 'BASE_REGEX=HEAD_REGEX'`):", ""]
    for a in items[:MAX_MD_LIST]:
        lines.append(f"- {_name(a['short_name'])} ({md_escape(a['match'])}): BASE {_candidates(a['base'])}; "
                     f"HEAD {_candidates(a['head'])}")
    if len(items) > MAX_MD_LIST:
        lines.append(f"- … and {len(items) - MAX_MD_LIST} more")
    return [*lines, ""]


def _findings(findings: list[dict[str, Any]]) -> list[str]:
    if not findings:
        return []
    lines = ["Why they changed, from the findings that appeared or went away (the likely cause first):", ""]
    for r in findings[:MAX_MD_LIST]:
        step = f" {md_escape(r['work']['next_step'])}" if r["work"]["size_changed"] else ""
        lines.append(f"- {_name(r['short_name'])} ({r['delta_pct_text']}): {md_escape('; '.join(r['causes']))}.{step}")
    if len(findings) > MAX_MD_LIST:
        lines.append(f"- … and {len(findings) - MAX_MD_LIST} more")
    return [*lines, ""]


def _unmatched(label: str, items: list[dict[str, Any]]) -> list[str]:
    if not items:
        return []
    lines = [f"{label} ({len(items)}):", ""]
    for u in items[:MAX_MD_LIST]:
        count = f" ×{u['launches']}" if u["launches"] > 1 else ""
        lines.append(f"- {_name(u['short_name'])} ({md_escape(u['launch'])}){count}: {u['total']}")
    if len(items) > MAX_MD_LIST:
        lines.append(f"- … and {len(items) - MAX_MD_LIST} more")
    return [*lines, ""]


def _skipped(view: dict[str, Any]) -> list[str]:
    skipped = [(side, s) for side in ("base", "head") for s in view[f"skipped_{side}"]]
    lines = [f"- Not compared ({side.upper()}): {md_escape(s['path'])}: {md_escape(s['reason'])}"
             for side, s in skipped]
    return [*lines, ""] if skipped else []


def _footer(view: dict[str, Any]) -> list[str]:
    h = view["header"]
    rules = "".join(f" · --match {md_escape(r)}" for r in h["rules"])
    missing = (f" · not recorded in the documents, so not compared: {md_escape(', '.join(h['not_recorded']))}"
               if h["not_recorded"] else "")
    return [f"_{h['noise_rule']} Δ = (HEAD − BASE) / BASE of the median launch; the limiter and its "
            f"utilisation are those of the median launch{rules}{missing} · ncu-roofline {h['tool_version']}_"]


def fit(core: list[str], body: list[str], footer: list[str], limit: int = COMMENT_LIMIT) -> str:
    """`core`, as much of `body` as fits, a note on what was left out, and `footer`, under `limit`."""
    note_room = 200
    used = comment_length("\n".join(core + footer)) + note_room
    kept: list[str] = []
    for n, line in enumerate(body):
        cost = comment_length(line) + 1
        if used + cost > limit:
            left = len(body) - n
            kept += ["", f"_… {left} more line{'s' if left != 1 else ''} left out to stay under GitHub's "
                         f"{limit:,}-character comment limit; the JSON and HTML outputs have everything._", ""]
            break
        kept.append(line)
        used += cost
    text = "\n".join(core + kept + footer) + "\n"
    if comment_length(text) > limit:  # the core alone is too long (it should never be): cut it
        note = "\n\n_… cut to stay under GitHub's comment limit; the JSON and HTML outputs have everything._\n"
        room = limit - comment_length(note)
        while comment_length(text) > room:
            text = text[: max(0, len(text) - (comment_length(text) - room) - 1)]
        text = text.rsplit("\n", 1)[0] + note
    return text


def render_diff_markdown(diff: Diff, options: RenderOptions) -> str:
    """A pull-request comment: verdict, counts, warnings, groups that moved, ambiguous, unmatched."""
    view = build_diff_view(diff)
    body = _moved(view) + _ambiguous(view) + _findings(view["findings"])
    body += _unmatched("Gone: only in BASE", view["unmatched_base"])
    body += _unmatched("New: only in HEAD", view["unmatched_head"])
    body += _skipped(view)
    return fit(_header(view), body, _footer(view))


__all__ = ["COMMENT_LIMIT", "fit", "render_diff_markdown"]
