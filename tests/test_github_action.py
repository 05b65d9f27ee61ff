"""The GitHub Action: action.yml and the example workflow checked against the commands and inputs they
name, and the `ncu-roofline github` steps run in a fake workflow against a fake GitHub API on 127.0.0.1."""

from __future__ import annotations

import io
import json
import re
import shlex
import subprocess
import sys
import threading
import zipfile
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import click
import pytest
import yaml
from click.testing import CliRunner, Result

from ncu_roofline.cli import main
from ncu_roofline.cli.github import COMMENT_LIMIT, CUT_NOTE, compose, github
from ncu_roofline.cli.github_api import annotation, newest_artifact

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_reports" / "MODELLED_decode-gemm-sweep_H100-SXM.csv"
REPO = "octo/gpu-app"
RUN_ID = "4242"


# ---------------------------------------------------------------------------------------------
# A fake GitHub: the REST calls the steps make, with what each request carried


class FakeGitHub(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[dict[str, Any]] = []
        self.comments: dict[int, list[dict[str, Any]]] = {}
        self.artifacts: list[dict[str, Any]] = []
        self.blobs: dict[int, bytes] = {}
        self.refuse: dict[tuple[str, str], int] = {}  # (method, path prefix) -> HTTP status
        self.next_id = 1000

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def calls(self, method: str) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["method"] == method]


class _Handler(BaseHTTPRequestHandler):
    server: FakeGitHub

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, status: int, body: Any = None, *, raw: bytes | None = None, headers: dict[str, str] | None = None
              ) -> None:
        data = raw if raw is not None else json.dumps(body).encode() if body is not None else b""
        self.send_response(status)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _handle(self, method: str) -> None:
        server, parts = self.server, urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length)) if length else None
        server.requests.append({"method": method, "path": parts.path, "query": query, "body": body,
                                "authorization": self.headers.get("Authorization")})
        for (m, prefix), status in server.refuse.items():
            if m == method and parts.path.startswith(prefix):
                return self._send(status, {"message": "Resource not accessible by integration"})
        path = parts.path
        if method == "GET" and path == f"/repos/{REPO}":
            return self._send(200, {"default_branch": "main"})
        if method == "GET" and path == f"/repos/{REPO}/actions/artifacts":
            found = [a for a in server.artifacts if a["name"] == query.get("name")]
            return self._send(200, {"total_count": len(found), "artifacts": found})
        if m := re.fullmatch(r"/download/(\d+)", path):
            return self._send(302, headers={"Location": f"{server.url}/blob/{m.group(1)}"})
        if m := re.fullmatch(r"/blob/(\d+)", path):
            return self._send(200, raw=server.blobs[int(m.group(1))])
        if m := re.fullmatch(rf"/repos/{REPO}/issues/(\d+)/comments", path):
            comments = server.comments.setdefault(int(m.group(1)), [])
            if method == "POST":
                server.next_id += 1
                comment = {"id": server.next_id, "body": body["body"],
                           "html_url": f"https://github.com/{REPO}/pull/{m.group(1)}#issuecomment-{server.next_id}"}
                comments.append(comment)
                return self._send(201, comment)
            per_page, page = int(query.get("per_page", 30)), int(query.get("page", 1))
            return self._send(200, comments[(page - 1) * per_page: page * per_page])
        if method == "PATCH" and (m := re.fullmatch(rf"/repos/{REPO}/issues/comments/(\d+)", path)):
            for comment in (c for cs in server.comments.values() for c in cs):
                if comment["id"] == int(m.group(1)):
                    comment["body"] = body["body"]
                    return self._send(200, comment)
        return self._send(404, {"message": "Not Found"})

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_PATCH(self) -> None:
        self._handle("PATCH")


@pytest.fixture
def fake_github() -> Iterator[FakeGitHub]:
    server = FakeGitHub()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


class Workflow:
    """A fake workflow run: its GITHUB_* environment in temporary files, and the steps run in it."""

    def __init__(self, tmp_path: Path, api_url: str, event: dict[str, Any] | None = None) -> None:
        self.summary, self.output = tmp_path / "summary.md", tmp_path / "output.txt"
        self.event = tmp_path / "event.json"
        self.summary.write_text("")
        self.output.write_text("")
        self.event.write_text(json.dumps(event or {}))
        (tmp_path / "runner-temp").mkdir()
        self.env: dict[str, str | None] = {
            "GITHUB_API_URL": api_url, "GITHUB_SERVER_URL": "https://github.com", "GITHUB_TOKEN": "t0ken",
            "GITHUB_REPOSITORY": REPO, "GITHUB_RUN_ID": RUN_ID, "GITHUB_EVENT_PATH": str(self.event),
            "GITHUB_STEP_SUMMARY": str(self.summary), "GITHUB_OUTPUT": str(self.output),
            "RUNNER_TEMP": str(tmp_path / "runner-temp")}

    def step(self, *args: str) -> Result:
        """One `ncu-roofline github` step, its outputs read afresh."""
        self.output.write_text("")
        return CliRunner().invoke(main, ["github", *args], env=self.env)

    def outputs(self) -> dict[str, str]:
        """GITHUB_OUTPUT as the runner reads it (NAME<<DELIMITER lines)."""
        lines, out = self.output.read_text().split("\n"), {}
        i = 0
        while i < len(lines):
            if "<<" in lines[i]:
                name, delimiter = lines[i].split("<<", 1)
                end = lines.index(delimiter, i + 1)
                out[name] = "\n".join(lines[i + 1:end])
                i = end
            i += 1
        return out


@pytest.fixture
def workflow(tmp_path: Path, fake_github: FakeGitHub) -> Workflow:
    return Workflow(tmp_path, fake_github.url, {"pull_request": {"number": 7},
                                                "repository": {"default_branch": "main"}})


@pytest.fixture(scope="module")
def analysed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample capture analysed by the report step, once: its folder."""
    tmp = tmp_path_factory.mktemp("analysed")
    result = Workflow(tmp, "http://127.0.0.1:9").step("report", "--captures", str(SAMPLE), "--out-dir",
                                                      str(tmp / "out"))
    assert result.exit_code == 0, result.output
    return tmp / "out"


def _variant(analysed: Path, tmp_path: Path, name: str, change: Any) -> Path:
    """The sample's roofline.json with `change(index, kernel)` applied to every kernel."""
    doc = json.loads((analysed / "roofline.json").read_text())
    for report in doc["reports"]:
        for i, kernel in enumerate(report["kernels"]):
            change(i, kernel)
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def _copy_report(analysed: Path, tmp_path: Path) -> Path:
    out = tmp_path / "out"
    out.mkdir()
    for file in analysed.iterdir():
        if file.name.startswith("roofline."):
            (out / file.name).write_bytes(file.read_bytes())
    return out


# ---------------------------------------------------------------------------------------------
# action.yml and the example workflow


def _action() -> dict[str, Any]:
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert isinstance(action, dict)
    return action


def _expressions(text: str, kind: str) -> set[str]:
    """What `${{ kind.NAME }}` expressions, and `if:` conditions, name."""
    found = set(re.findall(rf"\$\{{\{{\s*{kind}\.([A-Za-z0-9_.-]+)\s*\}}\}}", text))
    for condition in re.findall(r"^\s*if: (.*)$", text, re.M):
        found.update(re.findall(rf"\b{kind}\.([A-Za-z0-9_.-]+)", condition))
    return found


def test_action_is_composite_and_its_steps_run_the_tool() -> None:
    action, text = _action(), (ROOT / "action.yml").read_text()
    assert action["runs"]["using"] == "composite"
    steps = action["runs"]["steps"]
    inputs = set(action["inputs"])
    assert {"captures", "baseline", "fail-on-regression", "fail-on-total", "min-coverage", "comment",
            "artifact-name", "python-version"} <= inputs
    assert action["inputs"]["captures"]["required"] is True
    assert _expressions(text, "inputs") == inputs  # every reference names an input, and every input is used
    ids = {s["id"] for s in steps if "id" in s}
    assert {ref.split(".")[0] for ref in _expressions(text, "steps")} <= ids
    for output in action["outputs"].values():
        assert _expressions(output["value"], "steps")
    install = next(s for s in steps if "pip install" in s.get("run", ""))
    # into a venv of its own (PEP 668 runners), from the action's folder as container jobs map it, then first on PATH
    assert '"$GITHUB_ACTION_PATH"' in install["run"] and "-m venv" in install["run"]
    assert "$GITHUB_PATH" in install["run"]
    upload = next(s for s in steps if str(s.get("uses", "")).startswith("actions/upload-artifact@"))
    assert upload["with"]["path"] == "${{ steps.report.outputs.dir }}"
    assert upload["with"]["name"] == "${{ inputs.artifact-name }}"
    assert steps.index(upload) < steps.index(next(s for s in steps if "github comment" in s.get("run", "")))
    runs = [s for s in steps if "run" in s]
    assert all(s["shell"] == "bash" for s in runs)
    # Inputs reach the shell through the environment, never pasted into the script.
    assert all("inputs." not in s["run"] for s in runs)
    commands = [s["run"] for s in runs if "ncu_roofline github" in s["run"]]
    assert [shlex.split(c)[4] for c in commands] == ["baseline", "report", "diff", "summary", "comment", "annotate"]
    for command in commands:
        words = shlex.split(command)
        sub = github.commands[words[4]]
        assert isinstance(sub, click.Command)
        known = {opt for p in sub.params for opt in p.opts}
        assert {w for w in words[5:] if w.startswith("--")} <= known, command
    assert steps[-1]["run"].split()[4] == "annotate"  # the gate fails the job last, after the artifact and comment


def test_action_reads_the_outputs_the_steps_write(workflow: Workflow, tmp_path: Path) -> None:
    text = (ROOT / "action.yml").read_text()
    written: dict[str, set[str]] = {}
    workflow.step("baseline", "--source", str(SAMPLE))
    written["baseline"] = set(workflow.outputs())
    out = tmp_path / "out"
    workflow.step("report", "--captures", str(SAMPLE), "--out-dir", str(out))
    written["report"] = set(workflow.outputs())
    workflow.step("diff", "--baseline", str(out / "roofline.json"), "--head", str(out / "roofline.json"),
                  "--out-dir", str(out))
    written["diff"] = set(workflow.outputs())
    written["comment"] = {"url"}
    written["upload"] = {"artifact-url"}  # actions/upload-artifact's own
    for ref in _expressions(text, "steps"):
        step, _, name = ref.split(".")
        assert name in written[step], ref


def _workflow_steps(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [step for job in doc["jobs"].values() for step in job["steps"]]


def _ci_examples() -> list[dict[str, Any]]:
    page = (ROOT / "docs" / "ci.md").read_text()
    blocks = [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", page, re.S)]
    return [yaml.safe_load((ROOT / "docs" / "examples" / "gpu-runner.yml").read_text()), *blocks]


def test_example_workflows_parse_and_use_the_actions_inputs() -> None:
    inputs = _action()["inputs"]
    required = {name for name, spec in inputs.items() if spec.get("required")}
    examples = _ci_examples()
    assert len(examples) >= 2
    for doc in examples:
        assert doc["permissions"]["actions"] == "read" and doc["permissions"]["pull-requests"] == "write"
        steps = _workflow_steps(doc)
        uses = [s for s in steps if str(s.get("uses", "")).split("@")[0].endswith("/ncu-roofline")]
        assert len(uses) == 1
        assert required <= set(uses[0]["with"]) <= set(inputs)
        capture = next(s for s in steps if "ncu $(ncu-roofline metrics)" in s.get("run", ""))
        assert steps.index(capture) < steps.index(uses[0])
        assert "-o captures/" in capture["run"] and uses[0]["with"]["captures"].startswith("captures/")
    full = examples[0]
    assert full[True if True in full else "on"]["push"]["branches"] == ["main"]  # YAML 1.1 reads `on` as true


def test_ci_page_documents_every_input_and_output() -> None:
    page, action = (ROOT / "docs" / "ci.md").read_text(), _action()
    for name in [*action["inputs"], *action["outputs"]]:
        assert f"| `{name}` |" in page, name
    for name, spec in action["inputs"].items():
        default = spec.get("default", "")
        if default and "${{" not in default:
            assert f"| `{name}` | `{default}` |" in page, name


# ---------------------------------------------------------------------------------------------
# Report and summary


def test_report_writes_the_three_files_and_the_summary(workflow: Workflow, tmp_path: Path) -> None:
    result = workflow.step("report", "--captures", f"{SAMPLE.parent}/**/*.csv")
    assert result.exit_code == 0, result.output
    out = workflow.outputs()
    folder = Path(out["dir"])
    assert folder.parent == tmp_path / "runner-temp"  # a new folder in RUNNER_TEMP
    assert sorted(p.name for p in folder.iterdir()) == ["roofline.html", "roofline.json", "roofline.md"]
    assert out["json"] == str(folder / "roofline.json") and out["unread"] == "0"
    assert json.loads(Path(out["json"]).read_text())["reports"][0]["kernel_count"] == 6
    result = workflow.step("summary", "--out-dir", out["dir"], "--artifact-name", "roofline")
    assert result.exit_code == 0, result.output
    summary = workflow.summary.read_text()
    assert summary.startswith("### Roofline summary")
    assert "gemm\\_bf16\\_decode\\_n1024" in summary
    assert summary.rstrip().endswith(f"HTML report and JSON: artifact `roofline` of "
                                     f"[this run](https://github.com/{REPO}/actions/runs/{RUN_ID}).")


def test_report_of_real_captures_diffs_them(workflow: Workflow, corpus: Path, tmp_path: Path) -> None:
    for name in ("gpu-workshop__MW_Baseline.ncu-rep", "gpu-workshop__MW_DivToMult.ncu-rep"):
        (tmp_path / name.split("__")[1]).symlink_to(corpus / name)
    base = workflow.step("report", "--captures", str(tmp_path / "MW_Baseline.ncu-rep"), "--out-dir",
                         str(tmp_path / "base"))
    assert base.exit_code == 0, base.output
    head = workflow.step("report", "--captures", str(tmp_path / "MW_DivToMult.ncu-rep"), "--out-dir",
                         str(tmp_path / "head"))
    assert head.exit_code == 0, head.output
    result = workflow.step("diff", "--baseline", str(tmp_path / "base" / "roofline.json"), "--head",
                           str(tmp_path / "head" / "roofline.json"), "--out-dir", str(tmp_path / "head"),
                           "--fail-on-total", "1000")
    assert result.exit_code == 0, result.output
    assert workflow.outputs()["status"] == "0"
    assert (tmp_path / "head" / "diff.md").read_text().startswith(
        "### Roofline diff: roofline.json → roofline.json")


def test_report_without_a_matching_capture_is_an_error(workflow: Workflow, tmp_path: Path) -> None:
    result = workflow.step("report", "--captures", f"{tmp_path}/none/*.ncu-rep")
    assert result.exit_code == 2
    assert result.stdout.startswith("::error title=No roofline capture::No file matches ")
    assert "Traceback" not in result.output


def test_an_unreadable_capture_is_annotated_and_fails_the_gate(workflow: Workflow, tmp_path: Path) -> None:
    junk = tmp_path / "caps" / "junk.csv"
    junk.parent.mkdir()
    junk.write_text("not,an,ncu,export\n1,2\n")
    (tmp_path / "caps" / SAMPLE.name).write_bytes(SAMPLE.read_bytes())
    result = workflow.step("report", "--captures", f"{tmp_path}/caps/*.csv", "--out-dir", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    errors = [line for line in result.stdout.splitlines() if line.startswith("::error")]
    assert len(errors) == 1 and errors[0].startswith("::error title=Capture not analysed::") and "junk.csv" in errors[0]
    assert workflow.outputs()["unread"] == "1"
    gate = workflow.step("annotate", "--status", "0", "--unread", "1")
    assert gate.exit_code == 2
    assert gate.stdout.startswith("::error title=1 capture not analysed::")


def test_compose_cuts_to_the_limit_report_first(tmp_path: Path) -> None:
    (tmp_path / "diff.md").write_text("### Roofline diff\n\nverdict\n")
    (tmp_path / "roofline.md").write_text("".join(f"| row {i} |\n" for i in range(20_000)))
    body = compose(tmp_path, "footer", COMMENT_LIMIT, "<!-- m -->")
    assert len(body) <= COMMENT_LIMIT
    assert body.startswith("<!-- m -->\n### Roofline diff\n\nverdict\n\n<details>")
    assert CUT_NOTE.strip() in body and body.rstrip().endswith("</details>\n\nfooter")
    assert "| row 0 |\n" in body and "| row 19999 |" not in body


# ---------------------------------------------------------------------------------------------
# Baseline


def _artifact(ident: int, branch: str, created: str, *, expired: bool = False, run_id: int = 1,
              head_repository_id: int = 1, name: str = "roofline") -> dict[str, Any]:
    return {"id": ident, "name": name, "expired": expired, "created_at": created,
            "archive_download_url": f"/download/{ident}",
            "workflow_run": {"id": run_id, "head_branch": branch, "head_sha": f"{ident:040d}",
                             "repository_id": 1, "head_repository_id": head_repository_id}}


def _zip(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return buffer.getvalue()


def test_baseline_is_the_newest_artifact_of_the_default_branch(workflow: Workflow, fake_github: FakeGitHub,
                                                               analysed: Path, tmp_path: Path) -> None:
    fake_github.artifacts = [
        _artifact(1, "feature", "2025-03-09T00:00:00Z"),  # the newest, but of a pull request's branch
        _artifact(2, "main", "2025-03-08T00:00:00Z", expired=True),
        _artifact(3, "main", "2025-03-07T00:00:00Z", head_repository_id=99),  # a fork's main
        _artifact(4, "main", "2025-03-06T00:00:00Z", run_id=int(RUN_ID)),  # this very run
        _artifact(5, "main", "2025-03-04T00:00:00Z"),
        _artifact(6, "main", "2025-03-05T00:00:00Z"),  # the one: newest of the rest
        _artifact(7, "main", "2025-03-10T00:00:00Z", name="other"),
    ]
    baseline = (analysed / "roofline.json").read_bytes()
    fake_github.blobs = {i: _zip({"roofline.json": b'{"wrong": %d}' % i}) for i in range(1, 8)}
    fake_github.blobs[6] = _zip({"roofline.html": b"<html>", "roofline.json": baseline})
    result = workflow.step("baseline", "--source", "default-branch", "--artifact-name", "roofline")
    assert result.exit_code == 0, result.output
    path = Path(workflow.outputs()["path"])
    assert path.name == "main.roofline.json" and path.read_bytes() == baseline
    listing = fake_github.calls("GET")[0]
    assert listing["path"] == f"/repos/{REPO}/actions/artifacts" and listing["query"]["name"] == "roofline"
    download, blob = fake_github.requests[-2:]
    assert download["path"] == "/download/6" and download["authorization"] == "Bearer t0ken"
    assert blob["path"] == "/blob/6" and blob["authorization"] is None  # the token stays with GitHub's API
    assert "::" not in result.stdout


def test_newest_artifact_asks_for_the_branch_when_the_event_does_not_name_it(tmp_path: Path,
                                                                            fake_github: FakeGitHub) -> None:
    run = Workflow(tmp_path, fake_github.url, {"pull_request": {"number": 7}})
    result = run.step("baseline", "--source", "default-branch")
    assert result.exit_code == 0
    assert [r["path"] for r in fake_github.requests] == [f"/repos/{REPO}", f"/repos/{REPO}/actions/artifacts"]
    assert result.stdout.startswith("::warning title=No roofline baseline::No artifact 'ncu-roofline' from "
                                    "branch main yet: the diff is skipped. Run this workflow on main to make one.")
    assert run.outputs() == {"path": ""}
    assert newest_artifact([], "main") is None


@pytest.mark.parametrize(("refuse", "expected"), [
    (("GET", f"/repos/{REPO}/actions"), "answered HTTP 403 Forbidden; give the job `permissions: actions: read`"),
    (("GET", f"/repos/{REPO}/actions"), "answered HTTP 401 Unauthorized; pass a valid github-token"),
    (("GET", "/download/"), "answered HTTP 410 Gone; give the job `permissions: actions: read`; an expired"),
])
def test_a_failed_baseline_fetch_is_a_warning(workflow: Workflow, fake_github: FakeGitHub,
                                              refuse: tuple[str, str], expected: str) -> None:
    fake_github.artifacts = [_artifact(6, "main", "2025-03-05T00:00:00Z", name="ncu-roofline")]
    fake_github.refuse[refuse] = int(re.search(r"HTTP (\d+)", expected).group(1))  # type: ignore[union-attr]
    result = workflow.step("baseline", "--source", "default-branch")
    assert result.exit_code == 0 and "Traceback" not in result.output
    assert result.stdout.startswith("::warning title=Roofline baseline not fetched::GET /")
    assert expected in result.stdout and result.stdout.rstrip().endswith("The diff is skipped.")
    assert workflow.outputs() == {"path": ""}


def test_an_unreachable_api_or_a_bad_archive_is_a_warning(tmp_path: Path, fake_github: FakeGitHub) -> None:
    closed = FakeGitHub()
    port = closed.server_address[1]
    closed.server_close()
    run = Workflow(tmp_path, f"http://127.0.0.1:{port}", {"repository": {"default_branch": "main"}})
    result = run.step("baseline", "--source", "default-branch")
    assert result.exit_code == 0
    assert f"failed: cannot reach http://127.0.0.1:{port} (" in result.stdout
    assert "check the runner's network and GITHUB_API_URL" in result.stdout
    run.env["GITHUB_API_URL"] = fake_github.url
    fake_github.artifacts = [_artifact(6, "main", "2025-03-05T00:00:00Z", name="ncu-roofline")]
    fake_github.blobs[6] = _zip({"index.html": b"<html>"})
    result = run.step("baseline", "--source", "default-branch")
    assert "artifact 'ncu-roofline' holds no roofline.json; upload the folder the report step writes" in result.stdout
    fake_github.blobs[6] = b"not a zip"
    assert "is not a zip archive" in run.step("baseline", "--source", "default-branch").stdout
    run.env["GITHUB_TOKEN"] = None
    result = run.step("baseline", "--source", "default-branch")
    assert "GITHUB_TOKEN is not set; pass the action's github-token input" in result.stdout


def test_a_baseline_path_is_taken_as_it_is(workflow: Workflow, tmp_path: Path, fake_github: FakeGitHub) -> None:
    assert workflow.step("baseline", "--source", str(SAMPLE)).exit_code == 0
    assert workflow.outputs() == {"path": str(SAMPLE)}
    result = workflow.step("baseline", "--source", str(tmp_path / "gone.json"))
    assert result.stdout.startswith("::warning title=No roofline baseline::Baseline ")
    assert workflow.outputs() == {"path": ""}
    assert workflow.step("baseline", "--source", "").stdout == "No baseline given: the diff is skipped.\n"
    assert fake_github.requests == []


# ---------------------------------------------------------------------------------------------
# Diff and gate


def _slower(_i: int, kernel: dict[str, Any]) -> None:
    kernel["duration_s"] *= 1.5


def _renamed(i: int, kernel: dict[str, Any]) -> None:
    if "n1024" not in kernel["name"]:  # the biggest kernel (45 % of the GPU time) keeps its name; nothing pairs
        # the others
        kernel["name"] = kernel["demangled_name"] = f"unrelated_{i}"


@pytest.mark.parametrize(("head", "status", "annotation_line"), [
    (None, 0, "Roofline gate: no failure."),
    # The message is the `diff` command's (its wording is tested there): here, that it arrives whole and escaped.
    (_slower, 1, "::error title=Roofline gate failed::gate failed: 6 kernels regressed"),
    (_renamed, 3, "::warning title=Roofline gate not passed%3A too little compared::gate not passed: only 45 %25 "),
    ("garbage", 2, "::error title=Roofline diff failed::Diff against "),
])
def test_the_gate_status_becomes_an_annotation(workflow: Workflow, analysed: Path, tmp_path: Path, head: Any,
                                               status: int, annotation_line: str) -> None:
    out = _copy_report(analysed, tmp_path)
    base = out / "roofline.json"
    if head == "garbage":
        base = tmp_path / "base.json"
        base.write_text("{ not json")
    elif head is not None:
        base = _variant(analysed, tmp_path, "base.json", lambda i, k: None)
        _variant(analysed, out, "roofline.json", head)
    result = workflow.step("diff", "--baseline", str(base), "--head", str(out / "roofline.json"), "--out-dir",
                           str(out), "--fail-on-regression", "5", "--fail-on-total", "", "--min-coverage", "50",
                           "--allow-unmatched", "false")
    assert result.exit_code == 0, result.output  # the diff step never fails: the artifact and comment come first
    outputs = workflow.outputs()
    assert outputs["status"] == str(status)
    assert (outputs.get("markdown") == str(out / "diff.md")) is (status != 2)
    gate = workflow.step("annotate", "--status", outputs["status"], "--message", outputs["message"], "--unread", "0")
    assert gate.exit_code == status
    assert gate.stdout.startswith(annotation_line), gate.stdout
    assert gate.stdout.count("\n") == 1 and ("%0A  gemm_bf16_decode_n1024: " in gate.stdout) is (status == 1)
    if status != 2:
        assert (out / "diff.html").is_file()
        workflow.step("summary", "--out-dir", str(out))
        summary = workflow.summary.read_text()
        assert summary.startswith("### Roofline diff: ")  # the verdict first, the report below
        assert "<details><summary>Roofline report of this run</summary>\n\n### Roofline summary" in summary


def test_gate_inputs_left_empty_mean_no_gate(workflow: Workflow, analysed: Path, tmp_path: Path) -> None:
    out = _copy_report(analysed, tmp_path)
    _variant(analysed, out, "roofline.json", _slower)
    result = workflow.step("diff", "--baseline", str(analysed / "roofline.json"), "--head", str(out / "roofline.json"),
                           "--out-dir", str(out), "--fail-on-regression", "", "--min-coverage", "")
    assert result.exit_code == 0, result.output
    assert workflow.outputs()["status"] == "0" and "gate off" in result.stdout
    bad = workflow.step("diff", "--baseline", "", "--head", "x.json", "--out-dir", str(out), "--min-coverage", "120")
    assert bad.exit_code == 2 and "'120' is out of range; give 0 to 100" in bad.output
    skipped = workflow.step("diff", "--baseline", "", "--head", "x.json", "--out-dir", str(out))
    assert skipped.stdout == "No baseline: the diff is skipped.\n"
    assert workflow.outputs() == {"status": "0", "message": ""}


def test_annotate_runs_as_a_workflow_runs_it() -> None:
    done = subprocess.run([sys.executable, "-m", "ncu_roofline", "github", "annotate", "--status", "1",
                           "--message", "gate failed: 1 kernel regressed\n  k: 1 µs -> 2 µs (+100 %)"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 1
    assert done.stdout == "::error title=Roofline gate failed::gate failed: 1 kernel regressed%0A  k: 1 µs -> 2 µs " \
                          "(+100 %25)\n"


def test_annotation_escapes_workflow_command_syntax() -> None:
    assert annotation("warning", "a: b, c", "50 %\r\nnext") == "::warning title=a%3A b%2C c::50 %25%0D%0Anext"


# ---------------------------------------------------------------------------------------------
# The pull-request comment


def test_one_comment_created_then_updated(workflow: Workflow, fake_github: FakeGitHub, analysed: Path,
                                          tmp_path: Path) -> None:
    # A busy pull request: the Action's comment lands on the second page of the listing.
    fake_github.comments[7] = [{"id": i, "body": f"review {i}", "html_url": ""} for i in range(100)]
    out = _copy_report(analysed, tmp_path)
    first = workflow.step("comment", "--out-dir", str(out), "--artifact-name", "roofline",
                          "--artifact-url", "https://example.invalid/artifact/1")
    assert first.exit_code == 0, first.output
    assert [r["method"] for r in fake_github.requests] == ["GET", "GET", "POST"]
    assert all(r["authorization"] == "Bearer t0ken" for r in fake_github.requests)
    created = fake_github.comments[7][-1]
    assert created["body"].startswith("<!-- ncu-roofline: roofline -->\n### Roofline summary")
    assert created["body"].rstrip().endswith("[artifact `roofline`](https://example.invalid/artifact/1).")
    assert first.stdout == f"Comment created: {created['html_url']}\n"
    assert workflow.outputs() == {"url": created["html_url"]}

    workflow.step("diff", "--baseline", str(out / "roofline.json"), "--head", str(out / "roofline.json"),
                  "--out-dir", str(out), "--fail-on-regression", "5")
    fake_github.requests.clear()
    second = workflow.step("comment", "--out-dir", str(out), "--artifact-name", "roofline")
    assert second.exit_code == 0, second.output
    assert [(r["method"], r["path"]) for r in fake_github.requests] == [
        ("GET", f"/repos/{REPO}/issues/7/comments"), ("GET", f"/repos/{REPO}/issues/7/comments"),
        ("PATCH", f"/repos/{REPO}/issues/comments/{created['id']}")]
    marked = [c for c in fake_github.comments[7] if "<!-- ncu-roofline: roofline -->" in c["body"]]
    assert marked == [created] and len(fake_github.comments[7]) == 101
    assert created["body"].startswith("<!-- ncu-roofline: roofline -->\n### Roofline diff: ")
    assert "Gate passed" in created["body"]
    assert second.stdout.startswith("Comment updated: ")

    # Another artifact name is another comment: two uses of the Action in one workflow keep theirs.
    workflow.step("comment", "--out-dir", str(out), "--artifact-name", "roofline-a100")
    assert len(fake_github.comments[7]) == 102


def test_no_comment_outside_a_pull_request(tmp_path: Path, fake_github: FakeGitHub, analysed: Path) -> None:
    run = Workflow(tmp_path, fake_github.url, {"ref": "refs/heads/main"})
    result = run.step("comment", "--out-dir", str(analysed))
    assert result.exit_code == 0 and result.stdout == "Not a pull request: no comment.\n"
    assert fake_github.requests == []


def test_a_refused_comment_is_a_warning(workflow: Workflow, fake_github: FakeGitHub, analysed: Path) -> None:
    fake_github.refuse[("POST", f"/repos/{REPO}/issues/")] = 403
    result = workflow.step("comment", "--out-dir", str(analysed))
    assert result.exit_code == 0 and "Traceback" not in result.output
    assert result.stdout == (f"::warning title=Roofline comment not posted::POST /repos/{REPO}/issues/7/comments "
                             "answered HTTP 403 Forbidden; give the job `permissions: pull-requests: write` (a pull "
                             "request from a fork gets a read-only token).\n")
    assert workflow.outputs() == {}

