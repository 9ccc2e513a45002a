"""`labctl strip-yaml-comments` end to end: dry run, --apply, --move-to, --check, stdin."""

from __future__ import annotations

import os
from pathlib import Path

import yaml
from helpers.cli import run_labctl
from schema_check import assert_valid

CONFIG = (
    "# RL config for the GRPO sweep\n"
    "model: qwen-7b   # tuned on 8 GPUs, see 11-02 log\n"
    "train:\n"
    "  lr: 3.0e-7 # was 1e-6, collapsed at step 900\n"
    "  url: 'http://x/#frag'\n"
    "  notes: a#b\n"
)
STRIPPED = "model: qwen-7b\ntrain:\n  lr: 3.0e-7\n  url: 'http://x/#frag'\n  notes: a#b\n"


def _tree(tmp_path: Path) -> Path:
    root = tmp_path / "configs"
    (root / "rl").mkdir(parents=True)
    (root / "rl" / "grpo.yaml").write_text(CONFIG)
    (root / "rl" / "keep.yml").write_text("a: 1\n")
    (root / "rl" / "notes.txt").write_text("# not yaml\n")
    (root / "bad.yaml").write_bytes(b"a: |+\n  x\n# c\n\nb: 1\n")  # removal would change data
    (root / "latin1.yaml").write_bytes(b"a: caf\xe9 # x\n")
    return root


def test_dry_run_reports_and_changes_nothing(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    res = run_labctl("strip-yaml-comments", str(root))
    assert_valid("strip-yaml-comments", res.records)
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before
    by_path = {Path(r["path"]).name: r for r in res.records}
    assert set(by_path) == {"grpo.yaml", "keep.yml", "bad.yaml", "latin1.yaml"}
    grpo = by_path["grpo.yaml"]
    assert [c["line"] for c in grpo["comments"]] == [1, 2, 4]
    assert grpo["applied"] is False and grpo["verified"] is True
    assert grpo["bytes_after"] == len(STRIPPED)
    assert by_path["bad.yaml"]["verified"] is False
    assert by_path["bad.yaml"]["reason"] == "data_changed"
    assert by_path["latin1.yaml"]["kind"] == "error"
    assert by_path["latin1.yaml"]["reason"] == "not_utf8"
    assert res.code == 1  # an unverifiable file needs a person


def test_apply_rewrites_atomically_keeping_mode_and_moves_comments_first(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    grpo = root / "rl" / "grpo.yaml"
    grpo.chmod(0o640)
    link = tmp_path / "link.yaml"
    link.symlink_to(grpo)
    notes = tmp_path / "ops-notes.md"
    notes.write_text("# Ops notes\n\nolder entry\n")
    original = yaml.safe_load(CONFIG)
    res = run_labctl(
        "strip-yaml-comments", "--apply", "--move-to", str(notes), str(link), str(root / "bad.yaml")
    )
    assert_valid("strip-yaml-comments", res.records)
    assert grpo.read_text() == STRIPPED
    assert yaml.safe_load(grpo.read_text()) == original
    assert link.is_symlink() and grpo.stat().st_mode & 0o777 == 0o640
    text = notes.read_text()
    assert text.startswith("# Ops notes\n\nolder entry\n")
    assert "- line 4, `.train.lr`: was 1e-6, collapsed at step 900" in text
    assert (root / "bad.yaml").read_bytes() == b"a: |+\n  x\n# c\n\nb: 1\n"
    assert [r["applied"] for r in res.records] == [True, False]
    assert res.code == 1
    leftovers = [p.name for p in grpo.parent.iterdir() if p.name.startswith(".")]
    assert leftovers == []


def test_check_exits_1_while_comments_remain(tmp_path: Path) -> None:
    path = tmp_path / "x.yaml"
    path.write_text(CONFIG)
    assert run_labctl("strip-yaml-comments", "--check", str(path)).code == 1
    assert path.read_text() == CONFIG
    assert run_labctl("strip-yaml-comments", "--apply", str(path)).code == 0
    assert run_labctl("strip-yaml-comments", "--check", str(path)).code == 0


def test_stdin_to_stdout(tmp_path: Path) -> None:
    res = run_labctl("strip-yaml-comments", "-", input=CONFIG)
    assert res.code == 0 and res.stdout == STRIPPED
    assert '"kind":"file"' in res.stderr
    bad = run_labctl("strip-yaml-comments", "-", input="a: |+\n  x\n# c\n\nb: 1\n")
    assert bad.code == 1 and bad.stdout == "a: |+\n  x\n# c\n\nb: 1\n"  # unchanged bytes


def test_stdin_mode_never_prints_a_secret() -> None:
    secret = "ghp_" + "a1B2c3D4e5" * 4
    res = run_labctl("strip-yaml-comments", "-", input=f"token: {secret}  # rotate monthly\n")
    assert secret not in res.stdout + res.stderr
    assert res.stdout == "" and "secret_in_output" in res.stderr


def test_comment_text_in_records_is_redacted(tmp_path: Path) -> None:
    secret = "hf_" + "Q7w" * 12
    path = tmp_path / "c.yaml"
    path.write_text(f"a: 1  # old token {secret}\n")
    res = run_labctl(
        "strip-yaml-comments", "--apply", "--move-to", str(tmp_path / "n.md"), str(path)
    )
    assert secret not in res.stdout and secret not in (tmp_path / "n.md").read_text()
    assert path.read_text() == "a: 1\n"


def test_missing_and_unreadable_paths_do_not_stop_the_others(tmp_path: Path) -> None:
    good = tmp_path / "g.yaml"
    good.write_text("a: 1 # c\n")
    res = run_labctl("strip-yaml-comments", "--apply", str(tmp_path / "nope.yaml"), str(good))
    kinds = [r["kind"] for r in res.records]
    assert kinds == ["error", "file"]
    assert good.read_text() == "a: 1\n"
    assert os.path.exists(good)


def test_pre_commit_hooks_run_the_documented_commands(tmp_path: Path) -> None:
    """The hooks in .pre-commit-hooks.yaml are what pre-commit runs with the staged files."""
    import shlex

    hooks = yaml.safe_load((Path(__file__).parent.parent / ".pre-commit-hooks.yaml").read_text())
    by_id = {hook["id"]: hook for hook in hooks}
    assert set(by_id) == {"strip-yaml-comments", "strip-yaml-comments-apply"}
    path = tmp_path / "x.yaml"
    for hook_id, code, after in (
        ("strip-yaml-comments", 1, CONFIG),
        ("strip-yaml-comments-apply", 0, STRIPPED),
        ("strip-yaml-comments", 0, STRIPPED),
    ):
        hook = by_id[hook_id]
        assert hook["types"] == ["yaml"] and hook["language"] == "python"
        if hook_id.endswith("apply") or after == CONFIG:
            path.write_text(CONFIG)
        entry = shlex.split(hook["entry"])
        assert entry[:2] == ["labctl", "strip-yaml-comments"]
        res = run_labctl(*entry[1:], str(path))
        assert res.code == code, (hook_id, res.stdout)
        assert path.read_text() == after


def _many(tmp_path: Path, secret: str) -> Path:
    """Enough files for the worker pool: commented, clean, refused, undecodable, one whose
    comments hold a configured secret and one holding a token shape."""
    root = _tree(tmp_path)
    for i in range(12):
        (root / "rl" / f"sweep{i:02d}.yaml").write_text(CONFIG.replace("900", str(900 + i)))
    (root / "rl" / "leak.yaml").write_text(f"a: 1  # the key was {secret}\nb: 2\n")
    (root / "rl" / "shape.yaml").write_text("c: 3  # ghp_" + "Zx9" * 12 + "\n")
    return root


def test_the_worker_pool_writes_what_one_process_writes(tmp_path: Path) -> None:
    """Records made in worker processes cross back already encoded (records.Encoded): in
    every format, with and without --check, the output and the exit code are those of
    --jobs 1, byte for byte, and no secret gets out either way."""
    secret = "Sx" + "7kQ" * 10
    root = _many(tmp_path, secret)
    env = {"LAB_DB_PASSWORD": secret}  # a name the redactor takes for a secret
    for extra in ([], ["--check"]):
        for fmt in ("jsonl", "json", "table"):
            args = ("--format", fmt, "strip-yaml-comments", *extra, str(root))
            one = run_labctl(*args, "--jobs", "1", env=env)
            two = run_labctl(*args, "--jobs", "2", env=env)
            assert (two.code, two.stdout) == (one.code, one.stdout), (extra, fmt)
            assert one.code == 1 and secret not in two.stdout
            assert "ghp_Zx9" not in two.stdout
    records = run_labctl("strip-yaml-comments", "--jobs", "2", str(root), env=env).records
    assert len(records) == 17 + 1  # the files, then the `skipped` record (notes.txt is not YAML)


def test_check_in_the_worker_pool_exits_1_until_applied(tmp_path: Path) -> None:
    """The exit code of encoded records is the command's rule too: --check fails on
    comments alone (no refusal among the files), and passes once they are applied."""
    root = tmp_path / "ok"
    root.mkdir()
    for i in range(12):
        (root / f"s{i:02d}.yaml").write_text(CONFIG)
    assert run_labctl("strip-yaml-comments", "--jobs", "2", str(root)).code == 0
    assert run_labctl("strip-yaml-comments", "--check", "--jobs", "2", str(root)).code == 1
    assert run_labctl("strip-yaml-comments", "--apply", "--jobs", "2", str(root)).code == 0
    assert run_labctl("strip-yaml-comments", "--check", "--jobs", "2", str(root)).code == 0
    assert (root / "s03.yaml").read_text() == STRIPPED
