"""CLI conventions: -q/-v, defaults from NCU_ROOFLINE_* variables, examples in every --help, shell completion."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from conftest import CORPUS, ROOT

from ncu_roofline.cli import main

SAMPLE = ROOT / "sample_reports" / "MODELLED_decode-gemm-sweep_H100-SXM.csv"  # a CSV export: no corpus needed
WARNS = CORPUS / "esmm-research__profile.5c6231e.ncu-rep"  # its last launch has no duration: one warning
OURS = ("report", "batch", "diff", "trend", "metrics")
ENV_CLEAN = {k: None for k in os.environ if k.startswith("NCU_ROOFLINE_")}


def run(*args: str | Path, env: dict[str, str] | None = None) -> click.testing.Result:
    return CliRunner().invoke(main, [str(a) for a in args], env={**ENV_CLEAN, **(env or {})})


def threshold_of(result: click.testing.Result) -> float:
    assert result.exit_code == 0, result.output
    return float(json.loads(result.stdout)["settings"]["regime_threshold"])


# ---- -q / -v


@pytest.mark.skipif(not WARNS.is_file(), reason=f"corpus report not found: {WARNS}")
@pytest.mark.parametrize("where", ["group", "command"])
def test_quiet_drops_warnings_keeps_the_output(where: str) -> None:
    loud = run("report", WARNS, "-f", "json")
    assert loud.exit_code == 0 and "ncu-roofline: warning: " in loud.stderr
    args = ["-q", "report", WARNS, "-f", "json"] if where == "group" else ["report", "-q", WARNS, "-f", "json"]
    quiet = run(*args)
    assert quiet.exit_code == 0 and quiet.stderr == ""
    assert quiet.stdout == loud.stdout


def test_quiet_still_prints_errors_and_keeps_the_exit_status(tmp_path: Path) -> None:
    empty = tmp_path / "empty.ncu-rep"
    empty.write_bytes(b"")
    result = run("-q", "report", empty, "-f", "json")
    assert result.exit_code == 2
    assert result.stderr.startswith("ncu-roofline: error: ") and "empty.ncu-rep" in result.stderr


def test_quiet_batch_drops_skipped_and_ok_lines_keeps_failures(tmp_path: Path) -> None:
    inputs = tmp_path / "in"
    inputs.mkdir()
    shutil.copy(SAMPLE, inputs / "good.csv")
    (inputs / "empty.ncu-rep").write_bytes(b"")
    (inputs / "notes.txt").write_text("not a report\n")
    loud = run("batch", inputs, "-o", tmp_path / "loud")
    assert loud.exit_code == 1
    assert "ncu-roofline: skipped " in loud.stderr and "good.csv ok" in loud.stderr
    quiet = run("batch", "-q", inputs, "-o", tmp_path / "quiet")
    assert quiet.exit_code == 1
    # "[done/total]" counts files as they finish, and the two files finish in either order
    failed = [line for line in loud.stderr.splitlines() if "empty.ncu-rep failed" in line]
    assert len(failed) == 1 and failed[0].startswith(("[1/2] ", "[2/2] "))
    quiet_lines = quiet.stderr.splitlines()
    assert len(quiet_lines) == 1 and quiet_lines[0].startswith(("[1/2] ", "[2/2] "))
    assert quiet_lines[0][len("[1/2] "):] == failed[0][len("[1/2] "):]
    assert "Wrote " in quiet.stdout  # the summary is the command's output, on standard output


def test_verbose_says_what_was_read_how_and_when() -> None:
    normal = run("report", SAMPLE, "-f", "json")
    assert normal.exit_code == 0 and normal.stderr == ""
    result = run("-v", "report", SAMPLE, "-f", "json")
    assert result.exit_code == 0 and result.stdout == normal.stdout
    line = next(x for x in result.stderr.splitlines() if SAMPLE.name in x)
    assert "6 launches read as a CSV export in this process; done " in line and line.endswith(" s after the start")
    assert "JSON output made and written in " in result.stderr


def test_verbose_batch_keeps_every_line_with_its_seconds(tmp_path: Path) -> None:
    result = run("batch", "-v", SAMPLE, "-o", tmp_path / "out")
    assert result.exit_code == 0
    line = result.stderr.splitlines()[0]
    assert line.startswith(f"[1/1] {SAMPLE.name} ok (") and " in " in line and line.endswith(" s")


def test_verbose_names_the_variable_a_default_came_from() -> None:
    result = run("-v", "report", SAMPLE, "-f", "json", env={"NCU_ROOFLINE_THRESHOLD": "0.7"})
    assert "ncu-roofline: --threshold 0.7 from NCU_ROOFLINE_THRESHOLD" in result.stderr.splitlines()
    assert "from NCU_ROOFLINE" not in run("report", SAMPLE, "-f", "json",
                                          env={"NCU_ROOFLINE_THRESHOLD": "0.7"}).stderr


@pytest.mark.parametrize(("args", "env", "verbose"), [
    (["-q", "report", "-v"], {}, True),  # the command's own option wins over the group's
    (["-v", "report", "-q"], {}, False),
    (["-q", "report"], {"NCU_ROOFLINE_VERBOSE": "1"}, False),  # the command line wins over the environment
    (["report"], {"NCU_ROOFLINE_VERBOSE": "1"}, True),
])
def test_which_of_quiet_and_verbose_wins(args: list[str], env: dict[str, str], verbose: bool) -> None:
    result = run(*args, SAMPLE, "-f", "json", env=env)
    assert result.exit_code == 0
    assert ("launches read" in result.stderr) is verbose


@pytest.mark.parametrize("args", [["-q", "-v", "report"], ["report", "-v", "-q"]])
def test_quiet_and_verbose_together_are_a_usage_error(args: list[str]) -> None:
    result = run(*args, SAMPLE, "-f", "json")
    assert result.exit_code == 2 and "-q/--quiet and -v/--verbose" in result.stderr
    assert result.stdout == ""


MW_BASE, MW_HEAD = CORPUS / "gpu-workshop__MW_Baseline.ncu-rep", CORPUS / "gpu-workshop__MW_DivToMult.ncu-rep"


@pytest.mark.skipif(not (MW_BASE.is_file() and MW_HEAD.is_file()), reason=f"corpus reports not found in {CORPUS}")
def test_quiet_keeps_the_line_that_explains_a_failed_gate(tmp_path: Path) -> None:
    result = run("-q", "diff", MW_HEAD, MW_BASE, "--fail-on-regression", "5", "-o", tmp_path / "d.json")
    assert result.exit_code == 1
    assert result.stderr.startswith("ncu-roofline: ") and "compute_tendencies_x_279_gpu" in result.stderr


def test_quiet_metrics_drops_notes_not_options() -> None:
    loud = run("metrics", "--ncu-version", "2022.2")
    quiet = run("metrics", "-q", "--ncu-version", "2022.2")
    assert "ncu-roofline: note: " in loud.stderr and quiet.stderr == ""
    assert quiet.exit_code == 0 and quiet.stdout == loud.stdout


# ---- defaults from the environment


def test_environment_sets_a_default_and_the_flag_wins() -> None:
    args = ("report", SAMPLE, "-f", "json")
    assert threshold_of(run(*args)) == 0.6
    assert threshold_of(run(*args, env={"NCU_ROOFLINE_THRESHOLD": "0.7"})) == 0.7
    both = {"NCU_ROOFLINE_THRESHOLD": "0.7", "NCU_ROOFLINE_REPORT_THRESHOLD": "0.8"}
    assert threshold_of(run(*args, env=both)) == 0.8  # the command's own name first
    assert threshold_of(run(*args, "--threshold", "0.5", env=both)) == 0.5
    assert threshold_of(run(*args, env={"NCU_ROOFLINE_THRESHOLD": ""})) == 0.6  # empty: unset


def test_every_option_reads_a_name_made_from_its_flag() -> None:
    result = run("report", SAMPLE, env={"NCU_ROOFLINE_REPORT_FORMAT": "json", "NCU_ROOFLINE_REPORT_TOP": "2"})
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert len(doc["reports"][0]["groups"]) == 2
    assert run("report", SAMPLE, "-f", "md", env={"NCU_ROOFLINE_REPORT_FORMAT": "json"}).stdout.startswith("#")


def test_a_bad_value_from_the_environment_is_a_usage_error() -> None:
    result = run("report", SAMPLE, "-f", "json", env={"NCU_ROOFLINE_THRESHOLD": "2"})
    assert result.exit_code == 2 and "--threshold" in result.stderr and "Traceback" not in result.output


def test_help_names_the_variables() -> None:
    report = run("report", "--help").stdout
    flat = " ".join(report.split())
    assert "NCU_ROOFLINE_REPORT_THRESHOLD, NCU_ROOFLINE_THRESHOLD" in flat
    assert "NCU_ROOFLINE_REPORT_FORMAT" in flat and "NCU_ROOFLINE_REPORT_QUIET" not in flat
    assert "NCU_ROOFLINE_DIFF_FAIL_ON_REGRESSION" in " ".join(run("diff", "--help").stdout.split())
    top = " ".join(run("--help").stdout.split())
    assert "NCU_ROOFLINE_QUIET" in top and "NCU_ROOFLINE_VERSION" not in top


def test_every_option_has_a_variable() -> None:
    def walk(command: click.Command, path: str) -> list[str]:
        missing = [f"{path} {p.opts[-1]}" for p in command.params
                   if isinstance(p, click.Option) and not p.is_eager and not p.envvar
                   and p.opts[-1] not in ("--quiet", "--verbose")]
        for name, sub in getattr(command, "commands", {}).items():
            missing += walk(sub, f"{path} {name}")
        return missing

    assert walk(main, "ncu-roofline") == []


# ---- examples in --help


def example_lines(text: str) -> list[list[str]]:
    """The commands under 'Examples:' in a help text, as words from `ncu-roofline` on."""
    found = []
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == "Examples:")
    for line in lines[start + 1:]:
        if not line.strip():
            break
        if "$(" in line:  # ncu $(ncu-roofline metrics ...) -o run ./app: the part inside
            line = line.split("$(", 1)[1].split(")", 1)[0]
        words = shlex.split(line)
        if "ncu-roofline" in words:
            found.append(words[words.index("ncu-roofline"):])
    return found


def options_of(command: click.Command) -> set[str]:
    return {o for p in command.params for o in (*p.opts, *p.secondary_opts)} | {"-h", "--help"}


@pytest.mark.parametrize("name", ["", *OURS])
def test_help_has_examples_with_real_options(name: str) -> None:
    result = run(*([name] if name else []), "--help")
    assert result.exit_code == 0
    examples = example_lines(result.stdout)
    assert len(examples) >= 2
    for words in examples:
        group_opts = options_of(main)
        i = 1
        while words[i].startswith("-"):
            assert words[i] in group_opts, words
            i += 1
        command = main.commands[words[i]]
        assert not name or words[i] == name, words
        known = options_of(command)
        for word in words[i + 1:]:
            if word.startswith("-") and word != "-":
                assert word in known, f"{word} is not an option of {words[i]}: {words}"


def test_metrics_example_is_an_ncu_command_line() -> None:
    text = run("metrics", "--help").stdout
    assert "ncu $(ncu-roofline metrics) -o run ./app" in text


# ---- shell completion


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_script(shell: str) -> None:
    result = CliRunner().invoke(main, [], prog_name="ncu-roofline", env={"_NCU_ROOFLINE_COMPLETE": f"{shell}_source"})
    assert result.exit_code == 0
    assert "_NCU_ROOFLINE_COMPLETE" in result.stdout and "ncu-roofline" in result.stdout


@pytest.mark.parametrize(("line", "expected"), [
    ("ncu-roofline tr", ["trend"]),
    ("ncu-roofline report --format ", ["csv", "html", "json", "md"]),
    ("ncu-roofline report --bytes-d", ["--bytes-definition"]),
    ("ncu-roofline -", ["--version", "-q", "--quiet", "-v", "--verbose", "-h", "--help"]),
])
def test_completion_answers(line: str, expected: list[str]) -> None:
    words = line.split(" ")
    env = {"_NCU_ROOFLINE_COMPLETE": "bash_complete", "COMP_WORDS": line, "COMP_CWORD": str(len(words) - 1)}
    result = CliRunner().invoke(main, [], prog_name="ncu-roofline", env=env)
    assert result.exit_code == 0
    assert [item.split(",", 1)[1] for item in result.stdout.splitlines()] == expected


def test_completion_as_a_user_gets_it() -> None:
    script = Path(sys.executable).with_name("ncu-roofline")
    command = [str(script)] if script.is_file() else [sys.executable, "-m", "ncu_roofline"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("NCU_ROOFLINE_")}
    source = subprocess.run(command, env={**env, "_NCU_ROOFLINE_COMPLETE": "bash_source"},
                            capture_output=True, text=True, timeout=120, check=True)
    assert "complete -o nosort -F _ncu_roofline_completion" in source.stdout
    answer = subprocess.run(command, env={**env, "_NCU_ROOFLINE_COMPLETE": "bash_complete",
                                          "COMP_WORDS": "ncu-roofline di", "COMP_CWORD": "1"},
                            capture_output=True, text=True, timeout=120, check=True)
    assert answer.stdout.splitlines() == ["plain,diff"]
