"""The I/O around `analyze`: which files, reading, the `file` record, the atomic write."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from labctl.errors import LabctlError
from labctl.fsops import atomic_write_bytes
from labctl.records import error_record
from labctl.redact import redact
from labctl.yamlstrip import model
from labctl.yamlstrip.core import analyze
from labctl.yamlstrip.model import StripResult

YAML_SUFFIXES = frozenset({".yaml", ".yml"})


class ChangedOnDiskError(LabctlError):
    """The file changed between `analyze` and `apply`; nothing was written."""

    reason = "changed_on_disk"


def _walk(top: Path) -> Iterator[Path]:
    for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if not name.startswith(".") and Path(name).suffix.lower() in YAML_SUFFIXES:
                yield Path(dirpath, name)


def iter_yaml_files(paths: Iterable[str | os.PathLike[str]]) -> Iterator[Path]:
    """The files to process, in a deterministic order, each real file once.

    A named file is yielded whatever its suffix (and even when missing or unreadable: the
    read reports it). A directory (a symlink to one included, when named) is searched
    recursively for `*.yaml`/`*.yml`, sorted by name, skipping hidden files and
    directories (`.git`, `.venv`) and not following symlinked directories inside it (no
    loops); symlinked files inside it are included. A file reached twice (a symlink and
    its target) is yielded once, under the first name seen.
    """
    seen: set[str] = set()
    for given in paths:
        path = Path(given)
        found = _walk(path) if path.is_dir() else iter((path,))
        for file in found:
            real = os.path.realpath(file)
            if real in seen:
                continue
            seen.add(real)
            yield file


def analyze_path(path: str | os.PathLike[str]) -> StripResult:
    """Read `path` (through a symlink) as bytes and `analyze` it; never raises for I/O."""
    source = os.fspath(path)
    try:
        data = Path(path).read_bytes()
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
    "applied", "changed"}` plus `reason`/`message` when not verified. `comments_removed`,
    `bytes_after` and `changed` describe what applying does (or did): 0 removed, the
    original size and false for a refused file. `verified_with` is "safe_load_all" (data
    compared), "compose_all" (node trees compared: safe_load cannot build the data, e.g.
    `!include`) or null (no comments, nothing to verify).
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
        return redact(rec)
    rec = {
        "kind": "file",
        "path": shown,
        "comments": [
            {
                "line": c.line,
                "column": c.column,
                "text": c.text,
                "key_path": c.key_path,
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
    }
    if not result.verified:
        rec["reason"] = result.reason
        rec["message"] = result.message
        rec["line"] = result.problem_line
    return redact(rec)
