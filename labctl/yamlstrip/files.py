"""The I/O around `analyze`: which files, reading, the `file` record, the atomic write."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from labctl.errors import LabctlError
from labctl.fsops import atomic_write_bytes
from labctl.records import Redacted, error_record
from labctl.redact import default_redactor, redact
from labctl.yamlstrip import model
from labctl.yamlstrip.core import analyze
from labctl.yamlstrip.model import StripResult


class ChangedOnDiskError(LabctlError):
    """The file changed between `analyze` and `apply`; nothing was written."""

    reason = "changed_on_disk"


def analyze_path(path: str | os.PathLike[str]) -> StripResult:
    """Read `path` (through a symlink) as bytes and `analyze` it; never raises for I/O."""
    source = os.fspath(path)
    try:
        with open(path, "rb") as fh:  # not Path(): its parsing costs more than the read
            data = fh.read()
    except OSError as exc:
        return StripResult(
            source=source,
            data=b"",
            new_data=b"",
            reason=model.UNREADABLE,
            message=f"cannot read {source}: {exc.strerror or exc}",
        )
    return analyze(data, source=source)


def apply(path: str | os.PathLike[str], result: StripResult) -> bool:
    """Write `result.new_data` over `path` atomically; True when the file was replaced.

    Writes nothing unless the result is verified and changes something. The file is
    re-read first: if it no longer holds the bytes that were analysed, raises
    `ChangedOnDiskError`. The write keeps mode and owner and goes through a symlink to
    its target (`labctl.fsops.atomic_write_bytes`).
    """
    if not (result.verified and result.changed):
        return False
    if Path(path).read_bytes() != result.data:
        raise ChangedOnDiskError(
            f"{os.fspath(path)} changed since it was read; nothing was written",
            path=os.fspath(path),
        )
    atomic_write_bytes(path, result.new_data)
    return True


def file_record(result: StripResult, path: str | None = None, applied: bool = False) -> Any:
    """The record for one input, redacted.

    An input that could not be analysed (`result.is_error`) gives an `error` record:
    `{"kind": "error", "path", "reason", "message", "line", "column"}`. Otherwise a `file`
    record: `{"kind": "file", "path", "comments": [{"line", "column", "text", "key_path",
    "inline"}], "comments_removed", "bytes_before", "bytes_after", "verified", "verified_with",
    "applied", "changed", "scanner", "scanner_note"}` plus `reason`/`message` when not
    verified. `comments_removed`, `bytes_after` and `changed` describe what applying does
    (or did): 0 removed, the original size and false for a refused file. `verified_with`
    is "events" (the parser's event streams before and after are identical), where they
    differ "safe_load_all" (the data compared) or "compose_all" (node trees compared:
    safe_load cannot build the data, e.g. `!include`), or null (nothing to verify).
    `scanner` is whose reading counts, "libyaml" or "pure" (PyYAML's pure Python parser,
    the reference); `scanner_note` says why the pure one decided (null when libyaml did).
    """
    shown = result.source if path is None else path
    if result.is_error:
        rec = error_record(
            result.reason or "error",
            result.message or "",
            path=shown,
            line=result.problem_line,
            column=result.problem_column,
        )
        return Redacted(redact(rec))
    # the record's shape is known: only its strings can hold a secret (its keys are ours),
    # so each is redacted once -- no walk over thousands of comments' numbers and flags
    red = default_redactor().text
    rec = {
        "kind": "file",
        "path": red(shown) if isinstance(shown, str) else shown,
        "comments": [
            {
                "line": c.line,
                "column": c.column,
                "text": red(c.text),
                "key_path": red(c.key_path) if c.key_path is not None else None,
                "inline": c.inline,
            }
            for c in result.comments
        ],
        "comments_removed": result.comments_removed,
        "bytes_before": result.bytes_before,
        "bytes_after": result.bytes_after,
        "verified": result.verified,
        "verified_with": result.verified_with,
        "applied": applied,
        "changed": result.changed,
        "scanner": result.scanner,
        "scanner_note": result.scanner_note,
    }
    if not result.verified:
        rec["reason"] = result.reason
        rec["message"] = result.message
        rec["line"] = result.problem_line
    for key in ("verified_with", "scanner", "scanner_note", "reason", "message"):
        if isinstance(rec.get(key), str):
            rec[key] = red(rec[key])
    return Redacted(rec)
