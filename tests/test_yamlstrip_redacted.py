"""strip-yaml-comments redacts its records where it makes them (in the worker processes, in
parallel) and marks them `Redacted`, so the emitter writes them without a second look (issue
16's speed): every string field must then be redacted at the source, and the mark is trusted
only by an emitter whose redactor is the one the record was made with."""

from __future__ import annotations

import io
import json
from pathlib import Path
from types import SimpleNamespace

from labctl.emit import Emitter
from labctl.records import Redacted
from labctl.redact import Redactor, default_redactor, set_default_redactor
from labctl.yamlstrip import analyze, analyze_path, file_record

TOKEN = "ghp_" + "Zq9x" * 9
URLPASS = "hunter2-secret"


def _line(rec: dict, redactor: Redactor) -> str:
    out = io.StringIO()
    ctx = SimpleNamespace(fmt="jsonl", stdout=out, redactor=redactor)
    Emitter(ctx).emit(rec)  # type: ignore[arg-type]
    return out.getvalue()


def test_every_string_of_a_file_record_is_redacted_at_its_source(tmp_path: Path) -> None:
    path = tmp_path / f"deploy-{TOKEN}.yaml"
    path.write_text(
        f"# push with {TOKEN}\n"
        f"https://ci:{URLPASS}@git.lab.org/repo: 1  # mirror\n"
        "train:\n  lr: 3.0e-4  # tuned\n"
    )
    rec = file_record(analyze_path(path), str(path))
    assert type(rec) is Redacted and rec["comments"]
    text = json.dumps(rec)
    assert TOKEN not in text and URLPASS not in text
    assert any(c["key_path"] and "REDACTED" in c["key_path"] for c in rec["comments"])
    assert "REDACTED" in rec["path"]


def test_an_error_record_is_redacted_at_its_source_too() -> None:
    rec = file_record(analyze(f"a: [1, 2\nkey: {TOKEN}\n".encode(), source=f"x-{TOKEN}.yaml"))
    assert type(rec) is Redacted and rec["kind"] == "error"
    assert TOKEN not in json.dumps(rec)


def test_the_mark_is_trusted_only_by_the_redactor_it_was_made_with() -> None:
    secret = "s3cr3t-value-of-the-lab"
    rec = Redacted({"kind": "file", "path": f"/srv/{secret}.yaml", "comments": []})
    other = Redactor({"LAB_KEY": secret})
    assert secret not in _line(rec, other)  # another redactor looks again
    saved = default_redactor()
    set_default_redactor(other)
    try:
        assert secret in _line(rec, other)  # the maker's own redactor: written as made
    finally:
        set_default_redactor(saved)
