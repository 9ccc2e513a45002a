"""Which files a directory run reads: ripgrep/fd conventions, checked against git itself."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from helpers.cli import run_labctl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schema_check import assert_valid

from labctl.yamlstrip import Skipped, iter_yaml_files

TREES = Path(__file__).parent / "fixtures" / "yamlstrip" / "gitignore_trees.json"
GIT_ENV = {
    **os.environ,
    "GIT_CONFIG_GLOBAL": os.devnull,  # no core.excludesFile from the machine
    "GIT_CONFIG_NOSYSTEM": "1",
    "XDG_CONFIG_HOME": os.devnull,
}


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _git_tree(root: Path, ignore_files: dict[str, str], yaml_files: list[str]) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True, env=GIT_ENV)
    _write(root, ignore_files)
    _write(root, {rel: "a: 1 # c\n" for rel in yaml_files})


def _git_keeps(root: Path) -> set[str]:
    """The YAML files git does not ignore (nothing is committed, so all are untracked)."""
    out = subprocess.run(
        ["git", "-C", str(root), "ls-files", "--others", "--exclude-standard", "-z"],
        check=True,
        capture_output=True,
        text=True,
        env=GIT_ENV,
    ).stdout
    return {p for p in out.split("\0") if p.lower().endswith((".yaml", ".yml"))}


def _ours(root: Path, **kw: bool) -> set[str]:
    return {p.relative_to(root).as_posix() for p in iter_yaml_files([root], **kw)}


def test_real_gitignore_files_choose_what_git_chooses(tmp_path: Path) -> None:
    tree = json.loads(TREES.read_text())
    _git_tree(tmp_path, tree["ignore_files"], tree["yaml_files"])
    keeps = _git_keeps(tmp_path)
    assert _ours(tmp_path, hidden=True) == keeps
    # the cases the tree was built for, spelled out
    assert {"configs/important.local.yaml", "configs/sub/generated/y.yaml"} <= keeps
    assert {"src/build.yaml", "levanter/sub/scratch/x.yaml", "a/top-only.yaml"} <= keeps
    assert not {"configs/b.local.yaml", "build/x.yaml", "a/b/checkpoints/c.yaml"} & keeps
    assert not {"a/scratch.yaml", "top-only.yaml", "levanter/.levanter.yaml"} & keeps


_ATOMS = ["*.yaml", "a", "b/", "/c", "a/**/x.yaml", "**/b", "!a", "!x.yaml", "!b/", "*",
          "?.yaml", "[ab].yml", "c/*", "!c/x.yaml", "x.*", "\\!a", "a/", "/b/x.yaml", "c/**",
          "a/**/", "[!a]*.yaml", "x.yaml   ", "!*.yml", "**", "b/**/a", "/*.yaml", "**/a/x.yaml",
          "[[:alpha:]].yaml", "*/", "a/*/", "# c", ""]  # fmt: skip
_DIRS = ["", "a/", "b/", "c/", "a/b/", "b/a/", "c/a/"]
_NAMES = ["x.yaml", "y.yml", "a.yaml", "b.yaml", "a", "b"]


@settings(
    max_examples=int(os.environ.get("YAMLSTRIP_GIT_EXAMPLES", "25")),
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
@given(
    st.dictionaries(
        st.sampled_from(["", "a/", "b/", "c/"]),
        st.lists(st.sampled_from(_ATOMS), min_size=1, max_size=5),
        min_size=1,
    ),
    st.sets(st.tuples(st.sampled_from(_DIRS), st.sampled_from(_NAMES)), min_size=1),
)
def test_generated_gitignores_choose_what_git_chooses(
    tmp_path_factory: pytest.TempPathFactory,
    ignores: dict[str, list[str]],
    files: set[tuple[str, str]],
) -> None:
    root = tmp_path_factory.mktemp("tree")
    names = {d + n for d, n in files}
    # a file and a directory cannot share a name
    names = {n for n in names if not any(m.startswith(n + "/") for m in names)}
    yaml_names = sorted(n for n in names if n.endswith((".yaml", ".yml")))
    ignore_files = {f"{d}.gitignore": "\n".join(lines) + "\n" for d, lines in ignores.items()}
    _git_tree(root, ignore_files, yaml_names)
    assert _ours(root, hidden=True) == _git_keeps(root)


def test_hidden_and_ignored_are_skipped_and_counted(tmp_path: Path) -> None:
    _git_tree(
        tmp_path,
        {".gitignore": "build/\n*.gen.yaml\n!.github/\n"},
        ["a.yaml", "x.gen.yaml", "build/b.yaml", ".github/workflows/ci.yaml", ".hidden.yml"],
    )
    (tmp_path / ".cache").mkdir()
    skipped = Skipped()
    got = _ours(tmp_path)
    assert got == {"a.yaml", ".github/workflows/ci.yaml"}  # `!.github/` re-includes it
    list(iter_yaml_files([tmp_path], skipped=skipped))
    assert dict(skipped.counts) == {"hidden": 3, "ignored": 2}  # .cache .git .hidden.yml
    assert _ours(tmp_path, hidden=True) == {"a.yaml", ".github/workflows/ci.yaml", ".hidden.yml"}
    assert "build/b.yaml" in _ours(tmp_path, ignore=False)
    assert ".hidden.yml" not in _ours(tmp_path, ignore=False)
    # the .git directory is skipped even with --hidden, read with --hidden --no-ignore
    (tmp_path / ".git" / "x.yaml").write_text("a: 1\n")
    assert ".git/x.yaml" not in _ours(tmp_path, hidden=True)
    assert ".git/x.yaml" in _ours(tmp_path, hidden=True, ignore=False)


def test_gitignore_applies_only_in_a_work_tree_but_dot_ignore_everywhere(tmp_path: Path) -> None:
    _write(tmp_path, {".gitignore": "a.yaml\n", ".ignore": "b.yaml\n", "a.yaml": "", "b.yaml": ""})
    assert _ours(tmp_path) == {"a.yaml"}
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, env=GIT_ENV)
    assert _ours(tmp_path) == set()


def test_parent_gitignores_apply_to_a_named_subdirectory(tmp_path: Path) -> None:
    _git_tree(tmp_path, {".gitignore": "gen/\n"}, ["sub/gen/x.yaml", "sub/y.yaml"])
    got = {p.relative_to(tmp_path).as_posix() for p in iter_yaml_files([tmp_path / "sub"])}
    assert got == {"sub/y.yaml"}


def test_named_files_and_directories_are_never_skipped(tmp_path: Path) -> None:
    _git_tree(tmp_path, {".gitignore": "build/\nx.yaml\n"}, ["build/b.yaml", "x.yaml"])
    named = [tmp_path / "x.yaml", tmp_path / "build"]
    got = {p.relative_to(tmp_path).as_posix() for p in iter_yaml_files(named)}
    assert got == {"x.yaml", "build/b.yaml"}


def test_cli_skipped_record_and_options(tmp_path: Path) -> None:
    _git_tree(
        tmp_path,
        {".gitignore": "build/\n"},
        ["a.yaml", "build/b.yaml", ".github/workflows/ci.yaml"],
    )
    res = run_labctl("strip-yaml-comments", "--check", str(tmp_path))
    assert_valid("strip-yaml-comments", res.records)
    files = [r["path"] for r in res.records if r["kind"] == "file"]
    assert files == [str(tmp_path / "a.yaml")]
    skipped = [r for r in res.records if r["kind"] == "skipped"]
    assert len(skipped) == 1 and res.records[-1] is not None
    assert skipped[0]["counts"] == {"hidden": 2, "ignored": 1}  # .git, .github; build
    assert str(tmp_path / ".github") in skipped[0]["examples"]["hidden"]
    assert "--hidden" in skipped[0]["message"] and "--no-ignore" in skipped[0]["message"]
    every = run_labctl("strip-yaml-comments", "--check", "-H", "-I", str(tmp_path))
    paths = {r["path"] for r in every.records if r["kind"] == "file"}
    assert str(tmp_path / ".github" / "workflows" / "ci.yaml") in paths
    assert str(tmp_path / "build" / "b.yaml") in paths
    assert res.code == 1 and every.code == 1  # comments remain


def test_parallel_run_gives_the_records_of_a_serial_one_in_order(tmp_path: Path) -> None:
    for i in range(40):
        body = f"k{i}: {i} # c{i}\n" if i % 3 else f"k{i}: |+\n  x\n# c\n\nb: 1\n"
        (tmp_path / f"f{i:02d}.yaml").write_text(body)
    (tmp_path / "bad.yaml").write_bytes(b"a: \xff\n")
    serial = run_labctl("strip-yaml-comments", "--jobs", "1", str(tmp_path))
    parallel = run_labctl("strip-yaml-comments", "--jobs", "2", str(tmp_path))
    assert parallel.records == serial.records
    assert [r["path"] for r in serial.records] == sorted(r["path"] for r in serial.records)
    applied = run_labctl(
        "strip-yaml-comments",
        "--apply",
        "-j",
        "2",
        "--move-to",
        str(tmp_path / "notes.md"),
        str(tmp_path),
    )
    assert sum(r.get("applied", False) for r in applied.records) == 26
    assert (tmp_path / "f01.yaml").read_text() == "k1: 1\n"
    assert "- line 1, `.k1`: c1" in (tmp_path / "notes.md").read_text()


def test_a_tree_too_big_to_count_first_streams_into_the_pool_in_the_walks_order(
    tmp_path: Path,
) -> None:
    """Past COUNTED_FILES, files go to the workers while the walk goes on: the records are
    still the serial run's, in the walk's order, and the skipped entries are still counted."""
    from labctl.yamlstrip.batch import COUNTED_FILES

    for i in range(COUNTED_FILES + 60):
        sub = tmp_path / f"d{i // 200}"
        sub.mkdir(exist_ok=True)
        (sub / f"f{i:05d}.yaml").write_text(f"k: {i}  # c{i}\n" if i % 7 else f"k: {i}\n")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "h.yaml").write_text("h: 1  # h\n")
    serial = run_labctl("strip-yaml-comments", "--check", "--jobs", "1", str(tmp_path))
    parallel = run_labctl("strip-yaml-comments", "--check", "--jobs", "2", str(tmp_path))
    assert parallel.stdout == serial.stdout and parallel.code == serial.code == 1
    files = [r for r in parallel.records if r["kind"] == "file"]
    assert len(files) == COUNTED_FILES + 60
    assert [r["path"] for r in files] == sorted(r["path"] for r in files)
    assert parallel.records[-1]["kind"] == "skipped"
    assert parallel.records[-1]["counts"] == {"hidden": 1}


def test_each_real_file_is_read_once_however_it_is_reached(tmp_path: Path) -> None:
    """Overlapping named paths, a symlinked directory named beside its target, a path
    through a symlinked parent, a symlinked file: every real file is read once, under the
    name it was first reached by."""
    real = tmp_path / "real"
    _write(real, {"a.yaml": "a: 1\n", "sub/b.yaml": "b: 1\n"})
    (tmp_path / "via").symlink_to(real, target_is_directory=True)
    (real / "sub" / "c.yaml").symlink_to(real / "a.yaml")
    got = [
        p.relative_to(tmp_path).as_posix()
        for p in iter_yaml_files(
            [tmp_path / "via", real, real / "sub", tmp_path / "via" / "sub" / "b.yaml"]
        )
    ]
    assert got == ["via/a.yaml", "via/sub/b.yaml"]
