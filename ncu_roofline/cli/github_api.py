"""What the GitHub Action's steps share: the workflow's environment, its workflow commands
(annotations, step outputs, the job summary) and the few REST calls the steps make.

Every REST call goes through `Api.call`, which turns an HTTP status, an unreachable host or an
answer that is not JSON into a `GitHubError` naming the call and saying what to do; the steps
report it as a warning or an error annotation, never as a traceback.
"""

from __future__ import annotations

import io
import json
import os
import secrets
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from ..errors import RooflineError
from ..version import __version__

DEFAULT_API_URL = "https://api.github.com"
TIMEOUT_S = 30.0
PAGE_SIZE = 100
MAX_PAGES = 10  # artifacts and comments are listed newest first (artifacts) or a PR holds few: enough to find one
BASELINE_FILE = "roofline.json"  # the analysed JSON the report step writes, and a later run's baseline
ACTIONS_READ = "give the job `permissions: actions: read`"
PULL_REQUESTS_WRITE = ("give the job `permissions: pull-requests: write` (a pull request from a fork gets a "
                       "read-only token)")


class GitHubError(RooflineError):
    """A call to GitHub's REST API failed: the message names the call, the answer and what to do."""


@dataclass(frozen=True)
class Workflow:
    """The parts of a workflow run's environment the steps read."""

    api_url: str = DEFAULT_API_URL
    server_url: str = "https://github.com"
    token: str = ""
    repository: str = ""
    run_id: str = ""
    event: Mapping[str, Any] = field(default_factory=dict)
    summary: Path | None = None
    output: Path | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Workflow:
        """The workflow as GitHub's runner describes it in GITHUB_* variables."""
        env = os.environ if environ is None else environ
        return cls(api_url=env.get("GITHUB_API_URL") or DEFAULT_API_URL,
                   server_url=env.get("GITHUB_SERVER_URL") or "https://github.com",
                   token=env.get("GITHUB_TOKEN", ""), repository=env.get("GITHUB_REPOSITORY", ""),
                   run_id=env.get("GITHUB_RUN_ID", ""), event=_event(env.get("GITHUB_EVENT_PATH")),
                   summary=Path(env["GITHUB_STEP_SUMMARY"]) if env.get("GITHUB_STEP_SUMMARY") else None,
                   output=Path(env["GITHUB_OUTPUT"]) if env.get("GITHUB_OUTPUT") else None)

    @property
    def pull_request(self) -> int | None:
        """The pull request's number, for `pull_request` and `pull_request_target` events."""
        number = (self.event.get("pull_request") or {}).get("number")
        return number if isinstance(number, int) else None

    @property
    def run_url(self) -> str:
        return f"{self.server_url}/{self.repository}/actions/runs/{self.run_id}"

    def api(self) -> Api:
        """A client for this run's API with its token; a GitHubError where there is no token or repository."""
        if not self.token:
            raise GitHubError("GITHUB_TOKEN is not set; pass the action's github-token input")
        if not self.repository:
            raise GitHubError("GITHUB_REPOSITORY is not set; run this step in a GitHub Actions workflow")
        return Api(self.api_url, self.token)

    def set_output(self, name: str, value: str) -> None:
        """A step output; nothing outside a workflow. The heredoc form takes any text, newlines included."""
        if self.output is None:
            return
        delimiter = f"ncu_roofline_{secrets.token_hex(8)}"
        with self.output.open("a", encoding="utf-8") as fh:
            fh.write(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")

    def append_summary(self, markdown: str) -> bool:
        """Add `markdown` to the job summary; False outside a workflow."""
        if self.summary is None:
            return False
        with self.summary.open("a", encoding="utf-8") as fh:
            fh.write(markdown if markdown.endswith("\n") else markdown + "\n")
        return True


def _event(path: str | None) -> Mapping[str, Any]:
    if not path:
        return {}
    try:
        event = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return event if isinstance(event, dict) else {}


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def annotation(level: str, title: str, message: str) -> str:
    """A workflow command: `::error title=...::message` (level error, warning or notice), escaped."""
    title = _escape_data(title).replace(":", "%3A").replace(",", "%2C")
    return f"::{level} title={title}::{_escape_data(message)}"


class Api:
    """GitHub's REST API over urllib, with a token; paths are relative to the API's root."""

    def __init__(self, url: str, token: str, timeout_s: float = TIMEOUT_S) -> None:
        self.url, self.token, self.timeout_s = url.rstrip("/"), token, timeout_s

    def _fetch(self, method: str, target: str, body: Any, hint: str) -> bytes:
        url = target if "://" in target else f"{self.url}{target}"
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(url, data=data, method=method)
        request.add_header("Accept", "application/vnd.github+json")
        request.add_header("X-GitHub-Api-Version", "2022-11-28")
        request.add_header("User-Agent", f"ncu-roofline/{__version__}")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        # Not passed on through a redirect: an artifact's download answers with a signed URL on another
        # host, which must not receive the token.
        request.add_unredirected_header("Authorization", f"Bearer {self.token}")
        parts = urllib.parse.urlsplit(url)
        what = f"{method} {parts.path}"
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as answer:
                data_in: bytes = answer.read()
                return data_in
        except urllib.error.HTTPError as exc:
            raise GitHubError(f"{what} answered HTTP {exc.code} {exc.reason}; "
                              f"{'pass a valid github-token' if exc.code == 401 else hint}") from None
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            reason = getattr(exc, "reason", None) or exc
            raise GitHubError(f"{what} failed: cannot reach {parts.scheme}://{parts.netloc} ({reason}); check the "
                              "runner's network and GITHUB_API_URL") from None

    def call(self, method: str, target: str, body: Any = None, *, hint: str) -> Any:
        """The JSON answer of one call; `hint` says what to do when GitHub refuses it."""
        answer = self._fetch(method, target, body, hint)
        try:
            return json.loads(answer) if answer else None
        except ValueError:
            raise GitHubError(f"{method} {target} answered with something that is not JSON; "
                              "check GITHUB_API_URL") from None

    def download(self, url: str, *, hint: str) -> bytes:
        """The bytes behind `url`, following redirects (without the token)."""
        return self._fetch("GET", url, None, hint)


# ---------------------------------------------------------------------------------------------
# Pull-request comments


def find_comment(api: Api, repository: str, number: int, marker: str) -> dict[str, Any] | None:
    """The first comment of pull request `number` holding `marker`, else None."""
    for page in range(1, MAX_PAGES + 1):
        comments = api.call("GET", f"/repos/{repository}/issues/{number}/comments?per_page={PAGE_SIZE}&page={page}",
                            hint=PULL_REQUESTS_WRITE)
        if not isinstance(comments, list):
            break
        for comment in comments:
            if isinstance(comment, dict) and marker in str(comment.get("body", "")):
                return comment
        if len(comments) < PAGE_SIZE:
            break
    return None


def upsert_comment(api: Api, repository: str, number: int, marker: str, body: str) -> tuple[str, str]:
    """Update the comment holding `marker`, or create it: ("created" or "updated", its URL)."""
    existing = find_comment(api, repository, number, marker)
    if existing is not None:
        answer = api.call("PATCH", f"/repos/{repository}/issues/comments/{existing['id']}", {"body": body},
                          hint=PULL_REQUESTS_WRITE)
        action = "updated"
    else:
        answer = api.call("POST", f"/repos/{repository}/issues/{number}/comments", {"body": body},
                          hint=PULL_REQUESTS_WRITE)
        action = "created"
    return action, str((answer or {}).get("html_url", ""))


# ---------------------------------------------------------------------------------------------
# The baseline: the newest artifact of the default branch


def default_branch(api: Api, repository: str, event: Mapping[str, Any]) -> str:
    """The repository's default branch: from the event, else asked of the API."""
    branch = (event.get("repository") or {}).get("default_branch")
    if isinstance(branch, str) and branch:
        return branch
    answer = api.call("GET", f"/repos/{repository}", hint=ACTIONS_READ)
    branch = (answer or {}).get("default_branch") if isinstance(answer, dict) else None
    if not isinstance(branch, str) or not branch:
        raise GitHubError(f"GET /repos/{repository} names no default branch; pass a baseline path instead")
    return branch


def _created(artifact: Mapping[str, Any]) -> datetime:
    return datetime.fromisoformat(str(artifact.get("created_at", "1970-01-01T00:00:00Z")).replace("Z", "+00:00"))


def newest_artifact(artifacts: list[Any], branch: str, run_id: str = "") -> dict[str, Any] | None:
    """The newest unexpired artifact made on `branch` of this repository (not a fork's branch of that
    name), by another run than `run_id`."""
    chosen: dict[str, Any] | None = None
    for artifact in artifacts:
        if not isinstance(artifact, dict) or artifact.get("expired"):
            continue
        run = artifact.get("workflow_run") or {}
        if run.get("head_branch") != branch or (run_id and str(run.get("id")) == run_id):
            continue
        if run.get("head_repository_id") is not None and run.get("head_repository_id") != run.get("repository_id"):
            continue
        if chosen is None or _created(artifact) > _created(chosen):
            chosen = artifact
    return chosen


def find_artifact(api: Api, repository: str, name: str, branch: str, run_id: str = "") -> dict[str, Any] | None:
    """The newest artifact called `name` made on `branch` (see `newest_artifact`), else None."""
    quoted = urllib.parse.quote(name, safe="")
    for page in range(1, MAX_PAGES + 1):
        answer = api.call("GET", f"/repos/{repository}/actions/artifacts?name={quoted}&per_page={PAGE_SIZE}"
                                 f"&page={page}", hint=ACTIONS_READ)
        artifacts = (answer or {}).get("artifacts") if isinstance(answer, dict) else None
        if not isinstance(artifacts, list):
            return None
        found = newest_artifact(artifacts, branch, run_id)
        if found is not None or len(artifacts) < PAGE_SIZE:
            return found  # listed newest first: a later page holds older ones only
    return None


def extract_baseline(archive: bytes, name: str, dest: Path) -> Path:
    """`roofline.json` out of an artifact's zip archive, written to `dest`."""
    try:
        with zipfile.ZipFile(io.BytesIO(archive)) as zf:
            members = [m for m in zf.namelist() if m.rsplit("/", 1)[-1] == BASELINE_FILE]
            if not members:
                raise GitHubError(f"artifact {name!r} holds no {BASELINE_FILE}; upload the folder the report "
                                  "step writes")
            data = zf.read(min(members, key=len))  # the top-level one where there are several
    except zipfile.BadZipFile:
        raise GitHubError(f"artifact {name!r} is not a zip archive; download it by hand to check it") from None
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(data)
    return dest
