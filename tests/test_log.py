"""`labctl log`: one dated file per event, numbered on the same day, never overwritten."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.cli import run_labctl
from schema_check import assert_valid


def test_entries_are_dated_files_with_numbered_suffixes(tmp_path: Path) -> None:
    env = {"LABCTL_LOG_DIR": str(tmp_path / "notes")}
    records = [
        {"kind": "job", "cluster": "c1", "job_id": "7", "name": "sft", "verdict": "failed"},
        {
            "kind": "job",
            "cluster": "c1",
            "job_id": "8",
            "name": "rl",
            "verdict": "running-progressing",
        },
    ]
    stdin = "".join(json.dumps(r) + "\n" for r in records)
    first = run_labctl("log", "--topic", "sweep", input=stdin, env=env)
    assert first.code == 1  # a failed job passed through: the entry needs a person
    assert first.records[:2] == records  # records pass through unchanged
    log = first.records[-1]
    assert_valid("log", first.records)
    path = Path(log["path"])
    assert path.name == f"{log['date']}_sweep.md" and log["records"] == 2
    text = path.read_text()
    assert text.startswith("# sweep — ")
    assert "- c1/7 sft: failed" in text and "c1/8" not in text.split("## Records")[0]
    second = run_labctl("log", "-t", "sweep", "-m", "second look", env=env)
    third = run_labctl("log", "-t", "sweep", "-m", "third look", env=env)
    names = {p.name for p in (tmp_path / "notes").iterdir()}
    assert names == {
        path.name,
        path.name.replace(".md", "-2.md"),
        path.name.replace(".md", "-3.md"),
    }
    assert path.read_text() == text  # never appended to or overwritten
    assert "second look" in Path(second.records[-1]["path"]).read_text()
    assert third.code == 0


def test_entries_are_redacted(tmp_path: Path) -> None:
    secret = "hf_" + "Zx9" * 12
    env = {"LABCTL_LOG_DIR": str(tmp_path), "HF_TOKEN": secret}
    res = run_labctl(
        "log", "-t", "launch", "-m", f"exported HF_TOKEN={secret} for the run", env=env
    )
    written = Path(res.records[-1]["path"]).read_text()
    assert secret not in written and "REDACTED" in written


def test_a_topic_that_is_not_a_file_name_is_refused(tmp_path: Path) -> None:
    res = run_labctl("log", "-t", "../etc/passwd", "-m", "x", env={"LABCTL_LOG_DIR": str(tmp_path)})
    assert res.code == 2 and "--topic" in res.records[0]["message"]
    assert list(tmp_path.iterdir()) == []
