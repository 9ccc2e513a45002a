"""Strict equality, key paths, records, notes, file discovery and the atomic apply."""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import stat
from pathlib import Path

import pytest

from labctl.yamlstrip import (
    ChangedOnDiskError,
    analyze,
    analyze_path,
    append_notes,
    apply,
    file_record,
    iter_yaml_files,
    notes_block,
)
from labctl.yamlstrip.verify import first_difference

# --- 13. strict, type-aware, NaN-aware equality ------------------------------------------


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (math.nan, float("nan")),
        ({"a": 1, "b": [1, 2]}, {"b": [1, 2], "a": 1}),  # order of keys does not matter
        ({math.nan: 1}, {float("nan"): 1}),
        ({1: "x", "k": [True]}, {"k": [True], 1: "x"}),
        ({1, 2}, {2, 1}),
        (dt.date(2024, 1, 2), dt.date(2024, 1, 2)),
        (b"\x00\x01", b"\x00\x01"),
        (None, None),
    ],
)
def test_strictly_equal(a: object, b: object) -> None:
    assert first_difference(a, b) is None


@pytest.mark.parametrize(
    ("a", "b", "where"),
    [
        (True, 1, "."),
        (1, 1.0, "."),
        (0.0, -0.0, "."),
        (math.nan, 1.0, "."),
        ({"a": True}, {"a": 1}, ".a"),
        ({True: "x"}, {1: "x"}, "True"),
        ({"a": [1, 2]}, {"a": [1, 2, 3]}, ".a"),
        ({"a": {"b c": [0, "x"]}}, {"a": {"b c": [0, "y"]}}, '.a.["b c"][1]'),
        ([1, "1"], [1, 1], "[1]"),
        (
            dt.datetime(2024, 1, 1, tzinfo=dt.UTC),
            dt.datetime(2024, 1, 1, 1, tzinfo=dt.timezone(dt.timedelta(hours=1))),
            ".",
        ),
        ({"a": 1}, {"b": 1}, "'a'"),
    ],
)
def test_strict_differences(a: object, b: object, where: str) -> None:
    found = first_difference(a, b)
    assert found is not None
    assert where in found


def test_recursive_structures_terminate() -> None:
    a: list[object] = [1]
    a.append(a)
    b: list[object] = [1]
    b.append(b)
    assert first_difference(a, b) is None


# --- key paths ------------------------------------------------------------------------

CONFIG = b"""\
# Launch config for the PPO run
train:
  # optimiser settings
  lr: 3.0e-4  # tuned on 8 GPUs
  steps: [100, 200]  # two phases
  betas: [0.9,  # first
          0.95]
  "odd.key": 1  # quoted key
layers:
  - name: enc  # encoder
    size: 10
  # the decoder
  - name: dec
  -  # bare item
    x: 1
model: # nested mapping follows
  depth: 2
  # foot of model, indented
# foot of the document
"""


def test_key_paths() -> None:
    paths = {c.text: c.key_path for c in analyze(CONFIG).comments}
    assert paths == {
        "# Launch config for the PPO run": ".train",
        "# optimiser settings": ".train.lr",
        "# tuned on 8 GPUs": ".train.lr",
        "# two phases": ".train.steps",
        "# first": ".train.betas[0]",
        "# quoted key": '.train.["odd.key"]',
        "# encoder": ".layers[0].name",
        "# the decoder": ".layers[1]",
        "# bare item": ".layers[2]",
        "# nested mapping follows": ".model",
        "# foot of model, indented": ".model",
        "# foot of the document": ".",
    }


def test_key_paths_across_documents_and_markers() -> None:
    data = b"%YAML 1.1 # directive\n--- # doc one\na: 1\n... # end\n# between\n---\n- x # item\n"
    paths = [(c.text, c.key_path) for c in analyze(data).comments]
    assert paths == [
        ("# directive", None),
        ("# doc one", "."),
        ("# end", None),
        ("# between", None),
        ("# item", ".[0]"),
    ]


def test_comment_only_file_has_no_key_path() -> None:
    assert [c.key_path for c in analyze(b"# a\n# b\n").comments] == [None, None]


# --- records ---------------------------------------------------------------------------


def test_file_record_shape() -> None:
    result = analyze(b"a: 1  # c\n", source="x.yaml")
    rec = file_record(result, "cfg/x.yaml", applied=False)
    assert rec == {
        "kind": "file",
        "path": "cfg/x.yaml",
        "comments": [{"line": 1, "column": 7, "text": "# c", "key_path": ".a", "inline": True}],
        "comments_removed": 1,
        "bytes_before": 10,
        "bytes_after": 5,
        "verified": True,
        "verified_with": "events",
        "applied": False,
        "changed": True,
        "scanner": "libyaml",
        "scanner_note": None,
    }
    json.dumps(rec)


def test_file_record_refused() -> None:
    rec = file_record(analyze(b"a: |+\n  x\n# c\n\nb: 1\n", source="r.yaml"))
    assert rec["kind"] == "file" and rec["path"] == "r.yaml"
    assert rec["verified"] is False and rec["changed"] is False
    assert rec["reason"] == "data_changed" and rec["message"]
    assert rec["comments_removed"] == 0 and rec["bytes_after"] == rec["bytes_before"]
    assert len(rec["comments"]) == 1


def test_error_record() -> None:
    rec = file_record(analyze(b"a: b\t# c\n", source="t.yaml"))
    assert rec["kind"] == "error"
    assert rec["reason"] == "tab_before_comment"
    assert rec["path"] == "t.yaml" and rec["line"] == 1 and rec["column"] == 5


def test_record_redacts_comment_text() -> None:
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0" * 2
    rec = file_record(analyze(f"a: 1  # token {token}\n".encode()))
    text = rec["comments"][0]["text"]
    assert token not in text and "[REDACTED:github_token]" in text


# --- notes -----------------------------------------------------------------------------


def test_notes_block_and_append(tmp_path: Path) -> None:
    hf = "hf_" + "x" * 30
    result = analyze(
        f"# ------\ntrain:\n  lr: 1  # tuned, key {hf}\n  # `odd` note\n  steps: 2\n".encode(),
        source="cfg.yaml",
    )
    block = notes_block(result, "configs/cfg.yaml", when="2026-11-30T18:24:39Z")
    assert block == (
        "## `configs/cfg.yaml`\n"
        "\n"
        "Comments moved out by `labctl strip-yaml-comments` on 2026-11-30T18:24:39Z.\n"
        "\n"
        "- line 3, `.train.lr`: tuned, key [REDACTED:hf_token]\n"
        "- line 4, `.train.steps`: `odd` note\n"
    )
    notes = tmp_path / "NOTES.md"
    notes.write_bytes(b"# Ops notes\nold line")
    append_notes(notes, [block, ""])
    text = notes.read_text()
    assert text.startswith("# Ops notes\nold line\n\n## `configs/cfg.yaml`\n")
    assert text.endswith("`odd` note\n")
    assert append_notes(notes, [""]) is None


def test_notes_block_empty_for_refused_or_decoration_only() -> None:
    assert notes_block(analyze(b"a: |+\n  x\n# c\n\nb: 1\n")) == ""
    assert notes_block(analyze(b"# ----\n#\na: 1 # ====\n")) == ""


def test_append_notes_creates_file_and_writes_through_symlink(tmp_path: Path) -> None:
    target = tmp_path / "real.md"
    target.write_text("x\n")
    link = tmp_path / "link.md"
    link.symlink_to(target)
    append_notes(link, ["## a\n"])
    assert link.is_symlink()
    assert target.read_text() == "x\n\n## a\n"
    fresh = tmp_path / "new.md"
    append_notes(fresh, ["## b\n", "## c\n"])
    assert fresh.read_text() == "## b\n\n## c\n"


# --- files -----------------------------------------------------------------------------


def _tree(root: Path) -> None:
    (root / "b").mkdir()
    (root / "a.yaml").write_text("a: 1\n")
    (root / "b" / "c.yml").write_text("c: 1\n")
    (root / "b" / "d.YAML").write_text("d: 1\n")
    (root / "b" / "e.json").write_text("{}\n")
    (root / ".git").mkdir()
    (root / ".git" / "x.yaml").write_text("x: 1\n")
    (root / ".hidden.yaml").write_text("h: 1\n")
    (root / "z.yaml").symlink_to(root / "a.yaml")  # same file twice
    (root / "loop").symlink_to(root)  # a directory symlink loop


def test_iter_yaml_files(tmp_path: Path) -> None:
    _tree(tmp_path)
    got = [p.relative_to(tmp_path).as_posix() for p in iter_yaml_files([tmp_path])]
    assert got == ["a.yaml", "b/c.yml", "b/d.YAML"]
    explicit = list(iter_yaml_files([tmp_path / "b" / "e.json", tmp_path / "missing.yaml"]))
    assert [p.name for p in explicit] == ["e.json", "missing.yaml"]


def test_analyze_path_unreadable(tmp_path: Path) -> None:
    result = analyze_path(tmp_path / "missing.yaml")
    assert result.reason == "unreadable" and result.is_error
    assert file_record(result)["kind"] == "error"
    assert analyze_path(tmp_path).reason == "unreadable"


def test_apply_keeps_mode_and_writes_through_symlink(tmp_path: Path) -> None:
    real = tmp_path / "real.yaml"
    real.write_bytes(b"a: 1  # c\r\nb: 2\r\n")
    os.chmod(real, 0o640)
    link = tmp_path / "link.yaml"
    link.symlink_to(real)
    result = analyze_path(link)
    assert apply(link, result) is True
    assert link.is_symlink()
    assert real.read_bytes() == b"a: 1\r\nb: 2\r\n"
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_apply_does_nothing_unless_verified_and_changed(tmp_path: Path) -> None:
    clean = tmp_path / "clean.yaml"
    clean.write_bytes(b"a: 1\n")
    before = clean.stat().st_mtime_ns
    assert apply(clean, analyze_path(clean)) is False
    refused = tmp_path / "refused.yaml"
    data = b"a: |+\n  x\n# c\n\nb: 1\n"
    refused.write_bytes(data)
    assert apply(refused, analyze_path(refused)) is False
    assert refused.read_bytes() == data
    assert clean.stat().st_mtime_ns == before


def test_apply_refuses_a_file_changed_since_read(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_bytes(b"a: 1 # c\n")
    result = analyze_path(path)
    path.write_bytes(b"a: 2 # c\n")
    with pytest.raises(ChangedOnDiskError):
        apply(path, result)
    assert path.read_bytes() == b"a: 2 # c\n"


def test_key_paths_with_anchors_and_aliases() -> None:
    data = (
        b"base: &b {lr: 1}  # anchor\n"
        b"run:\n  <<: *b  # merged\n  items:\n  - &i x\n  - *i\n  - y  # third\n"
    )
    paths = [(c.text, c.key_path) for c in analyze(data).comments]
    assert paths == [
        ("# anchor", ".base"),
        ("# merged", '.run.["<<"]'),
        ("# third", ".run.items[2]"),
    ]


def test_a_file_changed_between_the_notes_and_the_rewrite_is_left_alone(tmp_path: Path) -> None:
    """--move-to's second phase rewrites a file only if it still holds the bytes its notes were
    taken from: an edit in between leaves it as the editor left it, with a changed_on_disk
    record; an unchanged one is rewritten."""
    from labctl.yamlstrip.batch import Job, run_job

    edited, kept = tmp_path / "edited.yaml", tmp_path / "kept.yaml"
    for path in (edited, kept):
        path.write_text("a: 1  # tuned on 8 GPUs\n")
    phase1 = {p: run_job(Job(str(p), when="2026-12-02T12:00:00Z")) for p in (edited, kept)}
    assert all(digest for _, block, digest in phase1.values()) and phase1[kept][1]
    edited.write_text("a: 2  # someone's edit\n")
    rec, _, _ = run_job(Job(str(edited), apply=True, digest=phase1[edited][2]))
    assert rec["kind"] == "error" and rec["reason"] == "changed_on_disk"
    assert edited.read_text() == "a: 2  # someone's edit\n"
    rec, _, _ = run_job(Job(str(kept), apply=True, digest=phase1[kept][2]))
    assert rec["kind"] == "file" and rec["applied"] is True and kept.read_text() == "a: 1\n"
