"""`ncu-roofline github ...`: the steps of the GitHub Action (`action.yml` at the repository root).

One small command per step, in the order the Action runs them: `baseline` finds the run to
compare with, `report` analyses the captures, `diff` compares and gates, `summary` and `comment`
publish the Markdown, `annotate` turns the gate's status into an annotation and the job's exit
status. The steps pass paths and statuses to each other as step outputs (GITHUB_OUTPUT). A
network failure is a warning and the run goes on; only the gate and unreadable input fail a job.
"""

from __future__ import annotations

import glob
import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from ..compare.diff import compare
from ..compare.gate import DEFAULT_MIN_COVERAGE_PCT, GateOptions
from ..errors import RooflineError
from ..render import DIFF, REPORT, RenderOptions, renderer_for
from ..render.output import write_atomic
from ..settings import AnalysisSettings
from ..views.diff_gate import gate_message
from .common import EXIT_BAD_INPUT, warn
from .diff import EXIT_COVERAGE, EXIT_REGRESSION
from .github_api import (
    BASELINE_FILE,
    GitHubError,
    Workflow,
    annotation,
    default_branch,
    extract_baseline,
    find_artifact,
    upsert_comment,
)

DEFAULT_BRANCH = "default-branch"
REPORT_MD, DIFF_MD = "roofline.md", "diff.md"
COMMENT_LIMIT = 65_000  # GitHub refuses a comment body over 65,536 characters
SUMMARY_LIMIT = 500_000  # a step's summary may hold 1 MiB of UTF-8
CUT_NOTE = "\n\n_Cut here to fit: the whole report is in the artifact._\n"
# Exit status of the gate -> (annotation level, title).
GATE_ANNOTATIONS = {EXIT_REGRESSION: ("error", "Roofline gate failed"),
                    EXIT_COVERAGE: ("warning", "Roofline gate not passed: too little compared"),
                    EXIT_BAD_INPUT: ("error", "Roofline diff failed")}


def _optional_pct(maximum: float | None = None) -> Callable[[click.Context, click.Parameter, str], float | None]:
    """A click callback: a percentage, or None for an empty string (how an Action passes an input left empty)."""

    def convert(_ctx: click.Context, _param: click.Parameter, value: str) -> float | None:
        text = value.strip().rstrip("%").strip()
        if not text:
            return None
        try:
            pct = float(text)
        except ValueError:
            raise click.BadParameter(f"{value!r} is not a percentage; give a number such as 5, or leave it "
                                     "empty") from None
        if not 0 <= pct <= (maximum if maximum is not None else float("inf")):
            raise click.BadParameter(f"{value!r} is out of range; give 0 to {maximum or 'any'}")
        return pct

    return convert


def _scratch(prefix: str) -> Path:
    """A new folder in the runner's temporary folder (RUNNER_TEMP), or the system's."""
    return Path(tempfile.mkdtemp(prefix=prefix, dir=os.environ.get("RUNNER_TEMP") or None))


@click.group()
def github() -> None:
    """The steps of the GitHub Action (action.yml), run in a workflow.

    They read the workflow's GITHUB_* variables (GITHUB_TOKEN for the REST calls) and write step
    outputs, the job summary and annotations. See docs/ci.md.
    """


@github.command()
@click.option("--source", default="", metavar="PATH|default-branch",
              help="A baseline capture or analysed JSON, 'default-branch' (the newest artifact of the default "
                   "branch), or empty for none.")
@click.option("--artifact-name", default="ncu-roofline", show_default=True, help="The artifact to look for.")
@click.option("--dest", default=None, type=click.Path(file_okay=False),
              help="Folder for a downloaded baseline (default: a new folder in RUNNER_TEMP).")
def baseline(source: str, artifact_name: str, dest: str | None) -> None:
    """Find the baseline and set the step output `path` (empty when there is none).

    A baseline that cannot be found or fetched is a warning: the run goes on without the diff.
    """
    workflow = Workflow.from_env()
    source = source.strip()
    path = ""
    if not source:
        click.echo("No baseline given: the diff is skipped.")
    elif source != DEFAULT_BRANCH:
        if Path(source).exists():
            path = source
        else:
            click.echo(annotation("warning", "No roofline baseline",
                                  f"Baseline {source} not found: the diff is skipped. Give an existing file, or "
                                  f"{DEFAULT_BRANCH}."))
    else:
        try:
            path = _fetch_baseline(workflow, artifact_name, Path(dest) if dest else None)
        except GitHubError as exc:
            click.echo(annotation("warning", "Roofline baseline not fetched", f"{exc}. The diff is skipped."))
    workflow.set_output("path", path)


def _fetch_baseline(workflow: Workflow, artifact_name: str, dest: Path | None) -> str:
    api = workflow.api()
    branch = default_branch(api, workflow.repository, workflow.event)
    artifact = find_artifact(api, workflow.repository, artifact_name, branch, workflow.run_id)
    if artifact is None:
        click.echo(annotation("warning", "No roofline baseline",
                              f"No artifact {artifact_name!r} from branch {branch} yet: the diff is skipped. Run this "
                              f"workflow on {branch} to make one."))
        return ""
    archive = api.download(str(artifact.get("archive_download_url", "")), hint="give the job "
                           "`permissions: actions: read`; an expired artifact cannot be downloaded")
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", branch)
    path = extract_baseline(archive, artifact_name, (dest or _scratch("ncu-roofline-baseline-")) /
                            f"{name}.{BASELINE_FILE}")
    run = artifact.get("workflow_run") or {}
    click.echo(f"Baseline: artifact {artifact_name!r} of run {run.get('id')} on {branch} "
               f"({str(run.get('head_sha', ''))[:12]}), {path}")
    return str(path)


def expand_captures(patterns: str) -> list[str]:
    """The files that the globs in `patterns` (one or more, a line or a space apart) match, sorted."""
    found: set[str] = set()
    for pattern in patterns.split():
        found.update(p for p in glob.glob(pattern, recursive=True) if os.path.isfile(p))
    return sorted(found)


@github.command("report")
@click.option("--captures", required=True, metavar="GLOB",
              help="Captures to analyse: .ncu-rep or ncu CSV globs (** allowed), a space or a line apart.")
@click.option("--out-dir", default=None, type=click.Path(file_okay=False),
              help="Folder for roofline.html, roofline.json and roofline.md (default: a new one in RUNNER_TEMP).")
def report_step(captures: str, out_dir: str | None) -> None:
    """Analyse the captures into HTML, JSON (the next run's baseline) and Markdown.

    Step outputs: dir, json, html, markdown, and unread (how many captures could not be analysed;
    each gets an error annotation). Exit status 2 when none could.
    """
    from ..api.analysis import analyze

    workflow = Workflow.from_env()
    paths = expand_captures(captures)
    if not paths:
        click.echo(annotation("error", "No roofline capture", f"No file matches {captures.strip()!r}: check the "
                              "captures input and that the capture step wrote its files."))
        raise SystemExit(EXIT_BAD_INPUT)
    analysis = analyze(paths, AnalysisSettings(), strict=False, isolate=True, keep_metrics=False)
    for result in analysis.reports:
        for warning in result.warnings:
            warn(f"{result.path}: {warning}")
    for err in analysis.errors:
        click.echo(annotation("error", "Capture not analysed", err.message))
    if not analysis.reports:
        raise SystemExit(EXIT_BAD_INPUT)
    folder = Path(out_dir) if out_dir else _scratch("ncu-roofline-")
    folder.mkdir(parents=True, exist_ok=True)
    written = {}
    for fmt, file in (("json", BASELINE_FILE), ("md", REPORT_MD), ("html", "roofline.html")):
        renderer = renderer_for(REPORT, fmt)
        written[fmt] = write_atomic(folder / file, renderer.pieces(analysis, RenderOptions()), force=True)
        click.echo(f"Wrote {written[fmt]}")
    for name, value in (("dir", str(folder)), ("json", str(written["json"])), ("html", str(written["html"])),
                        ("markdown", str(written["md"])), ("unread", str(len(analysis.errors)))):
        workflow.set_output(name, value)


@github.command("diff")
@click.option("--baseline", "baseline_path", default="", metavar="PATH",
              help="The baseline (a capture or analysed JSON); empty: no diff.")
@click.option("--head", "head_path", required=True, metavar="JSON", help="This run's roofline.json.")
@click.option("--out-dir", required=True, type=click.Path(file_okay=False), help="Where diff.md and diff.html go.")
@click.option("--fail-on-regression", "fail_pct", default="", metavar="PCT", callback=_optional_pct(),
              help="As `diff`; empty: off.")
@click.option("--fail-on-total", "total_pct", default="", metavar="PCT", callback=_optional_pct(),
              help="As `diff`; empty: off.")
@click.option("--min-coverage", "min_coverage", default="", metavar="PCT", callback=_optional_pct(100),
              help=f"As `diff`; empty: {DEFAULT_MIN_COVERAGE_PCT:g}.")
@click.option("--allow-unmatched", type=click.BOOL, default=False, help="As `diff` (true or false).")
def diff_step(baseline_path: str, head_path: str, out_dir: str, fail_pct: float | None, total_pct: float | None,
              min_coverage: float | None, allow_unmatched: bool) -> None:
    """Compare this run with the baseline and apply the gate; always exits 0.

    Step outputs: status (the exit status `diff` would have: 0, 1 regression, 2 unusable input,
    3 too little compared), message, and markdown (diff.md, absent without a baseline).
    """
    workflow = Workflow.from_env()
    status, message = 0, ""
    if baseline_path.strip():
        status, message = _diff(workflow, baseline_path, head_path, Path(out_dir), GateOptions(
            fail_on_regression=fail_pct, fail_on_total=total_pct, allow_unmatched=allow_unmatched,
            min_coverage_pct=DEFAULT_MIN_COVERAGE_PCT if min_coverage is None else min_coverage))
    else:
        click.echo("No baseline: the diff is skipped.")
    workflow.set_output("status", str(status))
    workflow.set_output("message", message)


def _diff(workflow: Workflow, baseline_path: str, head_path: str, out_dir: Path, gate: GateOptions) -> tuple[int, str]:
    try:
        result = compare(baseline_path, head_path, gate=gate)
        for fmt, file in (("md", DIFF_MD), ("html", "diff.html")):
            write_atomic(out_dir / file, renderer_for(DIFF, fmt).render(result, RenderOptions()), force=True)
    except RooflineError as exc:
        message = f"Diff against {baseline_path} failed: {exc}"
        click.echo(message)
        return EXIT_BAD_INPUT, message
    workflow.set_output("markdown", str(out_dir / DIFF_MD))
    click.echo(f"Compared with {baseline_path}: gate {result.gate['status']}.")
    if result.failed or result.insufficient_coverage:
        return (EXIT_REGRESSION if result.failed else EXIT_COVERAGE), gate_message(result)
    return 0, ""


def _cut(text: str, budget: int) -> str:
    """`text`, or as many whole lines of it as fit in `budget` characters with a note saying so."""
    if len(text) <= budget:
        return text
    room = budget - len(CUT_NOTE)
    if room <= 0:
        return ""
    head = text[:room]
    return head[: head.rfind("\n") + 1 or room] + CUT_NOTE


def compose(out_dir: Path, footer: str, limit: int, marker: str = "") -> str:
    """The Markdown of a run: the diff first where there is one, the report (collapsed below a diff),
    then `footer`; cut to `limit` characters, the report first."""
    diff_md = (out_dir / DIFF_MD).read_text(encoding="utf-8") if (out_dir / DIFF_MD).is_file() else ""
    report_md = (out_dir / REPORT_MD).read_text(encoding="utf-8") if (out_dir / REPORT_MD).is_file() else ""
    opening, closing = "<details><summary>Roofline report of this run</summary>\n\n", "\n\n</details>"
    budget = limit - len(marker) - len(opening) - len(closing) - len(footer) - 8  # 8: the separators
    diff_md = _cut(diff_md, budget).strip()
    report_md = _cut(report_md, budget - len(diff_md)).strip()
    if diff_md and report_md:
        report_md = opening + report_md + closing
    body = "\n\n".join(part for part in (diff_md, report_md, footer) if part)
    return f"{marker}\n{body}\n" if marker else f"{body}\n"


def _footer(workflow: Workflow, artifact_name: str, artifact_url: str) -> str:
    if artifact_url:
        return f"HTML report and JSON: [artifact `{artifact_name}`]({artifact_url})."
    if workflow.repository and workflow.run_id:
        return f"HTML report and JSON: artifact `{artifact_name}` of [this run]({workflow.run_url})."
    return ""


def _publish_options(f: Any) -> Any:
    f = click.option("--artifact-url", default="", help="The uploaded artifact's URL, for the link.")(f)
    f = click.option("--artifact-name", default="ncu-roofline", show_default=True, help="The artifact's name.")(f)
    return click.option("--out-dir", required=True, type=click.Path(exists=True, file_okay=False),
                        help="The folder the report step wrote (and the diff step, if it ran).")(f)


@github.command()
@_publish_options
def summary(out_dir: str, artifact_name: str, artifact_url: str) -> None:
    """Write the diff and the report, as Markdown, to the job summary (GITHUB_STEP_SUMMARY)."""
    workflow = Workflow.from_env()
    text = compose(Path(out_dir), _footer(workflow, artifact_name, artifact_url), SUMMARY_LIMIT)
    if not workflow.append_summary(text):
        click.echo("GITHUB_STEP_SUMMARY is not set: no job summary written.")


@github.command()
@_publish_options
def comment(out_dir: str, artifact_name: str, artifact_url: str) -> None:
    """Create, or update, this pull request's one roofline comment (found by a hidden marker).

    Outside a pull request it does nothing; a refused or failed call is a warning. Step output: url.
    """
    workflow = Workflow.from_env()
    number = workflow.pull_request
    if number is None:
        click.echo("Not a pull request: no comment.")
        return
    marker = f"<!-- ncu-roofline: {artifact_name.replace('--', '-')} -->"
    body = compose(Path(out_dir), _footer(workflow, artifact_name, artifact_url), COMMENT_LIMIT, marker)
    try:
        action, url = upsert_comment(workflow.api(), workflow.repository, number, marker, body)
    except GitHubError as exc:
        click.echo(annotation("warning", "Roofline comment not posted", f"{exc}."))
        return
    click.echo(f"Comment {action}: {url}")
    workflow.set_output("url", url)


@github.command()
@click.option("--status", default="", metavar="N", help="The diff step's status output (empty: 0).")
@click.option("--message", default="", help="The diff step's message output.")
@click.option("--unread", type=click.IntRange(min=0), default=0, help="The report step's unread output.")
def annotate(status: str, message: str, unread: int) -> None:
    """Turn the gate's status into an annotation, and exit with it.

    1 (a regression) and 2 (a baseline the diff cannot use) are errors, 3 (too little compared)
    a warning; all three fail the job. Captures that could not be analysed fail it with 2.
    """
    try:
        code = int(status.strip() or 0)
    except ValueError:
        raise click.BadParameter(f"{status!r} is not an exit status", param_hint="--status") from None
    if code in GATE_ANNOTATIONS:
        level, title = GATE_ANNOTATIONS[code]
        click.echo(annotation(level, title, message or f"ncu-roofline diff exited {code}."))
    elif unread:
        click.echo(annotation("error", f"{unread} capture{'s' if unread != 1 else ''} not analysed",
                              "See the errors above: fix those captures or leave them out of the captures input."))
        code = EXIT_BAD_INPUT
    else:
        click.echo("Roofline gate: no failure." if code == 0 else f"ncu-roofline diff exited {code}.")
    raise SystemExit(code)
