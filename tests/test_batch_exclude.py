"""`batch` passes nothing over silently: `--exclude`, the skipped list (index, manifest, stderr), kernels.parquet.

The inputs are hand-made folders in tmp_path: copies of the project's MODELLED sample (an ncu CSV export,
6 kernels) where a report must be analysed, and tiny text files where only the file walk matters. No
corpus is needed.
"""

from __future__ import annotations

import csv
import html
import io
import json
import os
import re
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ncu_roofline.batch import run_batch
from ncu_roofline.batch.inputs import (
    BATCH_OUTPUT,
    EXCLUDED,
    FILE,
    FOLDER,
    LINKED_FOLDER,
    NOT_A_REPORT,
    REASON_LABELS,
    UNREADABLE,
    Exclude,
    find_inputs,
)
from ncu_roofline.cli import main
from ncu_roofline.cli.batch import SKIPPED_LINES
from ncu_roofline.settings import AnalysisSettings

SAMPLE = Path(__file__).resolve().parents[1] / "sample_reports" / "MODELLED_decode-gemm-sweep_H100-SXM.csv"
SAMPLE_KERNELS = 6


def run(*args: str):
    return CliRunner().invoke(main, ["batch", *args])


def manifest(out: Path) -> dict:
    return json.loads((out / "manifest.json").read_text(encoding="utf-8"))


def make_tree(root: Path, files: dict[str, str | None]) -> Path:
    """Files under `root` from {relative path: text, or None for a copy of the MODELLED sample}."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if text is None:
            shutil.copy(SAMPLE, path)
        else:
            path.write_text(text, encoding="utf-8")
    return root


def skipped_of(inputs_or_doc, root: Path) -> list[tuple[str, str, str]]:
    """(path relative to root, kind, reason) of each skipped entry, in order."""
    items = inputs_or_doc["skipped"] if isinstance(inputs_or_doc, dict) else [
        s.as_dict() for s in inputs_or_doc.skipped]
    return [(Path(s["path"]).relative_to(root).as_posix(), s["kind"], s["reason"]) for s in items]


def rel_paths(paths: list[str], root: Path) -> list[str]:
    return [Path(p).relative_to(root).as_posix() for p in paths]


# -- the matching rules -----------------------------------------------------------------------------

@pytest.mark.parametrize(("pattern", "rel", "excluded"), [
    ("bad", "bad", True),                          # a folder name at the top
    ("bad", "night1/bad/x.ncu-rep", True),         # ... at any depth, and what it holds
    ("bad", "badly.csv", False),                   # a name, not a prefix of one
    ("*/old/*", "night1/old/a.csv", True),         # in an old folder below the top
    ("*/old/*", "a/b/old/c/d.csv", True),          # `*` matches "/" too
    ("*/old/*", "old/a.csv", False),               # ... but needs a folder above old
    ("*.csv", "a.csv", True),
    ("*.csv", "night1/a.csv", True),
    ("*.csv", "A.CSV", False),                     # case-sensitive
    ("night1/old", "night1/old/a.csv", True),      # a relative folder path: what lies below it too
    ("night1/old", "x/night1/old/a.csv", False),   # ... only from the top
    ("./old/", "old/a.csv", True),                 # a leading ./ and a trailing / are ignored
    ("n?ght[12]", "night2/a.csv", True),
])
def test_exclude_rules(pattern: str, rel: str, excluded: bool) -> None:
    assert (Exclude([pattern]).match(rel) == pattern) is excluded


def test_exclude_names_the_first_matching_pattern_and_refuses_an_empty_one() -> None:
    assert Exclude(["*.txt", "old", "*.csv"]).match("old/a.csv") == "old"
    assert Exclude([]).match("anything") is None
    with pytest.raises(ValueError, match="needs a pattern"):
        Exclude([""])


# -- what the inputs expand to (no analysis) --------------------------------------------------------

def test_a_folder_walk_lists_every_file_it_does_not_take(tmp_path: Path) -> None:
    root = make_tree(tmp_path / "in", {
        "a.csv": "x", "b.ncu-rep": "x", "README.md": "x", "night1/c.csv": "x", "night1/old/d.csv": "x",
        "night1/old/notes.txt": "x", "bad/e.ncu-rep": "x", "bad/deep/f.ncu-rep": "x", "g.CSV": "x",
    })
    found = find_inputs([str(root)], ["bad", "*/old/*", "*.CSV"])
    assert rel_paths(found.paths, root) == ["a.csv", "b.ncu-rep", "night1/c.csv"]
    assert skipped_of(found, root) == [
        ("README.md", FILE, NOT_A_REPORT),
        ("bad", FOLDER, EXCLUDED),             # listed once, not searched: its files are not listed
        ("g.CSV", FILE, EXCLUDED),
        ("night1/old/d.csv", FILE, EXCLUDED),
        ("night1/old/notes.txt", FILE, EXCLUDED),
    ]
    details = {s.path: s.detail for s in found.skipped}
    assert details[str(root / "bad")] == "matches --exclude 'bad'"
    assert "does not end in .ncu-rep" in details[str(root / "README.md")]
    assert found.notes == []


def test_without_exclude_nothing_changes_but_the_list(tmp_path: Path) -> None:
    root = make_tree(tmp_path / "in", {"a.csv": "x", "sub/b.ncu-rep": "x", "sub/x.txt": "x"})
    found = find_inputs([str(root)])
    assert rel_paths(found.paths, root) == ["a.csv", "sub/b.ncu-rep"]
    assert skipped_of(found, root) == [("sub/x.txt", FILE, NOT_A_REPORT)]


def test_globs_are_matched_relative_to_their_fixed_folders(tmp_path: Path) -> None:
    root = make_tree(tmp_path / "in", {"night1/a.csv": "x", "night1/old/b.csv": "x", "night2/c.csv": "x",
                                       "night2/notes.txt": "x"})
    found = find_inputs([str(root / "**" / "*")], ["*/old/*", "night2"])
    assert rel_paths(found.paths, root) == ["night1/a.csv"]
    assert skipped_of(found, root) == [
        ("night1/old/b.csv", FILE, EXCLUDED),
        ("night2", FOLDER, EXCLUDED),
        ("night2/c.csv", FILE, EXCLUDED),       # the glob finds these directly: each is listed
        ("night2/notes.txt", FILE, EXCLUDED),
    ]
    only_reports = find_inputs([str(root / "*" / "*.csv")], ["night1"])
    assert rel_paths(only_reports.paths, root) == ["night2/c.csv"]
    assert skipped_of(only_reports, root) == [("night1/a.csv", FILE, EXCLUDED)]  # the pattern never met notes.txt


def test_a_named_file_is_matched_as_given_and_a_file_analysed_anyway_is_not_listed(tmp_path: Path) -> None:
    root = make_tree(tmp_path / "in", {"keep/a.csv": "x", "keep/notes.txt": "x", "drop/b.csv": "x"})
    found = find_inputs([str(root / "keep"), str(root / "keep" / "notes.txt"), str(root / "drop" / "b.csv")],
                        ["drop"])
    assert rel_paths(found.paths, root) == ["keep/a.csv", "keep/notes.txt"]  # named: taken whatever its suffix
    assert skipped_of(found, root) == [("drop/b.csv", FILE, EXCLUDED)]


def test_batch_outputs_links_and_unreadable_folders_are_listed(tmp_path: Path, monkeypatch) -> None:
    root = make_tree(tmp_path / "in", {"a.csv": "x", "target/b.csv": "x",
                                       "out/manifest.json": json.dumps({"schema": "ncu-roofline-batch/1"}),
                                       "out/kernels.csv": "name\n", "locked/c.csv": "x"})
    (root / "link").symlink_to(root / "target", target_is_directory=True)
    scandir = os.scandir

    def refusing(path="."):  # a folder this user may not list (chmod 0 does not stop root)
        if os.fspath(path) == str(root / "locked"):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return scandir(path)

    monkeypatch.setattr(os, "scandir", refusing)
    found = find_inputs([str(root)])
    assert rel_paths(found.paths, root) == ["a.csv", "target/b.csv"]
    assert skipped_of(found, root) == [("link", FOLDER, LINKED_FOLDER), ("locked", FOLDER, UNREADABLE),
                                       ("out", FOLDER, BATCH_OUTPUT)]
    assert "cannot be listed: Permission denied" in found.skipped[1].detail
    # the same folder through a glob: out/kernels.csv is found directly and still not taken
    globbed = find_inputs([str(root / "**" / "*.csv")])
    assert ("out", FOLDER, BATCH_OUTPUT) in skipped_of(globbed, root)
    assert "out/kernels.csv" not in rel_paths(globbed.paths, root)


# -- the batch end to end ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def excluded_batch(tmp_path_factory):
    """One batch over a folder of 3 MODELLED samples and 4 things it must skip, with repeated --exclude."""
    root = make_tree(tmp_path_factory.mktemp("excl") / "in", {
        "a.csv": None, "night1/c.csv": None, "night1/old/b.csv": None, "night1/raw.csv": None,
        "bad/d.ncu-rep": "not a report", "README.md": "# captures\n",
    })
    out = root.parent / "out"
    result = run(str(root), "-o", str(out), "-j", "2", "--exclude", "bad", "--exclude", "*/old/*",
                 "--exclude", "raw.csv")
    return root, out, result


EXPECTED_SKIPPED = [
    ("README.md", FILE, NOT_A_REPORT),
    ("bad", FOLDER, EXCLUDED),
    ("night1/old/b.csv", FILE, EXCLUDED),
    ("night1/raw.csv", FILE, EXCLUDED),
]


def test_excluded_paths_are_not_analysed(excluded_batch) -> None:
    root, out, result = excluded_batch
    assert result.exit_code == 0, result.output
    doc = manifest(out)
    assert [Path(e["path"]).relative_to(root).as_posix() for e in doc["reports"]] == ["a.csv", "night1/c.csv"]
    assert all(e["status"] == "ok" for e in doc["reports"])
    assert "2 analysed, 4 skipped" in result.stdout


def test_the_manifest_lists_every_skipped_path_with_its_reason(excluded_batch) -> None:
    root, out, _ = excluded_batch
    doc = manifest(out)
    assert skipped_of(doc, root) == EXPECTED_SKIPPED
    assert {s["detail"] for s in doc["skipped"] if s["reason"] == EXCLUDED} == {
        "matches --exclude 'bad'", "matches --exclude '*/old/*'", "matches --exclude 'raw.csv'"}


def test_the_index_page_lists_every_skipped_path_once(excluded_batch) -> None:
    root, out, _ = excluded_batch
    page = html.unescape((out / "index.html").read_text(encoding="utf-8"))
    section = page[page.index('<section id="skipped">'):page.index('<section id="files"')]
    assert "Skipped (4)" in section and 'href="#skipped"' in page
    for rel, kind, _ in EXPECTED_SKIPPED:
        shown = f"<code>{root / rel}{'/' if kind == FOLDER else ''}</code>"
        assert section.count(shown) == 1, shown
    assert "4 paths skipped (3 excluded, 1 not a report)" in page
    assert "matches --exclude '*/old/*'" in section and "not a report" in section


def test_stderr_names_every_skipped_path_once_with_its_reason(excluded_batch) -> None:
    root, _, result = excluded_batch
    lines = [line for line in result.stderr.splitlines() if line.startswith("ncu-roofline: skipped ")]
    assert len(lines) == len(EXPECTED_SKIPPED)
    for rel, kind, reason in EXPECTED_SKIPPED:
        head = f"ncu-roofline: skipped {root / rel}{'/' if kind == FOLDER else ''}: {REASON_LABELS[reason]} ("
        assert sum(line.startswith(head) for line in lines) == 1, head
    assert "ncu-roofline: 4 paths skipped (3 excluded, 1 not a report); all listed in" in result.stderr


def test_kernels_parquet_is_written_by_the_default_install(excluded_batch) -> None:
    import pyarrow.parquet as pq  # a dependency of the package: no importorskip

    _, out, result = excluded_batch
    table = pq.read_table(out / "kernels.parquet")
    rows = list(csv.DictReader(io.StringIO((out / "kernels.csv").read_text(encoding="utf-8"))))
    assert table.num_rows == len(rows) == 2 * SAMPLE_KERNELS
    assert manifest(out)["kernels_parquet"] == {"written": True, "reason": None}
    assert "kernels.parquet too" in result.stdout
    assert "was not written" not in (out / "index.html").read_text(encoding="utf-8")


def test_many_skipped_files_are_counted_on_stderr_and_all_listed_in_the_index(tmp_path: Path) -> None:
    many = SKIPPED_LINES + 5
    root = make_tree(tmp_path / "in", {"a.csv": None, **{f"notes/{n:02}.txt": "x" for n in range(many)}})
    out = tmp_path / "out"
    result = run(str(root), "-o", str(out), "-j", "1")
    assert result.exit_code == 0, result.output
    named = [line for line in result.stderr.splitlines() if line.startswith("ncu-roofline: skipped ")]
    assert len(named) == SKIPPED_LINES
    assert f"{many} paths skipped ({many} not a report); 5 more not named here" in result.stderr
    assert len(manifest(out)["skipped"]) == many
    page = (out / "index.html").read_text(encoding="utf-8")
    assert all(f"{n:02}.txt</code>" in page for n in range(many))


def test_redact_shows_skipped_paths_by_base_name(tmp_path: Path) -> None:
    root = make_tree(tmp_path / "secret-project", {"a.csv": None, "old/b.csv": None})
    out = tmp_path / "out"
    result = run(str(root), "-o", str(out), "-j", "1", "--redact", "--exclude", "old")
    assert result.exit_code == 0, result.output
    assert manifest(out)["skipped"] == [{"path": "old", "kind": FOLDER, "reason": EXCLUDED,
                                         "detail": "matches --exclude 'old'"}]
    assert "secret-project" not in (out / "index.html").read_text(encoding="utf-8")
    assert "ncu-roofline: skipped old/: excluded (matches --exclude 'old')" in result.stderr


def test_excluding_everything_is_a_usage_error_that_names_the_skipped(tmp_path: Path) -> None:
    root = make_tree(tmp_path / "in", {"a.csv": "x", "b.csv": "x"})
    result = run(str(root), "-o", str(tmp_path / "out"), "--exclude", "*.csv")
    assert result.exit_code == 2
    assert "no input report found" in result.stderr
    assert re.search(r"skipped: .*a\.csv: excluded \(matches --exclude '\*\.csv'\)", result.stderr)
    assert not (tmp_path / "out").exists()
    assert run(str(root), "-o", str(tmp_path / "out"), "--exclude", "").exit_code == 2


def test_help_shows_an_exclude_example() -> None:
    result = run("--help")
    assert result.exit_code == 0
    assert "--exclude GLOB" in result.stdout
    assert re.search(r"ncu-roofline batch \S+ -o out .*--exclude", result.stdout)


def test_without_pyarrow_the_batch_says_so_everywhere(tmp_path: Path, monkeypatch) -> None:
    """A trimmed environment: kernels.parquet is not written, and stderr, the index and the manifest say why."""
    root = make_tree(tmp_path / "in", {"a.csv": None})
    out = tmp_path / "out"
    assert run_batch([str(root)], out, AnalysisSettings(), jobs=1).parquet
    assert (out / "kernels.parquet").is_file()
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # `import pyarrow` raises ImportError
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    result = run(str(root), "-o", str(out), "-j", "1", "--force")
    assert result.exit_code == 0, result.output
    assert not (out / "kernels.parquet").exists()  # no stale table from the run that had pyarrow
    assert "ncu-roofline: warning: kernels.parquet not written: pyarrow cannot be imported" in result.stderr
    assert "no kernels.parquet" in result.stdout
    status = manifest(out)["kernels_parquet"]
    assert status["written"] is False and "pip install 'pyarrow>=14'" in status["reason"]
    page = html.unescape((out / "index.html").read_text(encoding="utf-8"))
    assert "kernels.parquet</code> was not written: pyarrow cannot be imported" in page
