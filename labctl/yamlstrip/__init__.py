"""Byte-exact YAML comment removal, verified before anything is written (issue 3).

The pure core of `labctl strip-yaml-comments`. PyYAML's pure-Python scanner decides what
a comment is (a `#` in a gap between tokens, or after a block-scalar header); the comments
are cut out of the original text and nothing else changes. Before a result is offered for
writing it is checked three ways: the text matches an independent line-by-line statement
of the contract, a re-scan finds no comment, and `safe_load_all` of before and after are
strictly equal (NaN == NaN, True != 1, 1 != 1.0, mapping order ignored; for documents with
application tags `safe_load` cannot construct, the composed node trees are compared).

API
- `analyze(data: bytes, *, source: str = "-") -> StripResult` — pure (no I/O). Never
  raises for bad input: `reason` is one of `not_utf8`, `binary`, `invalid_yaml`,
  `tab_before_comment` (input errors, `result.is_error`), or `data_changed`,
  `invalid_after_strip` (the comments cannot be removed without changing the data; the
  result is `verified=False` and `new_data` is the input), with a human `message`.
  `comments` are listed in every case where the text could be scanned. For stdin mode,
  write `result.new_data` (the input itself when refused).
- `analyze_path(path) -> StripResult` — reads bytes (reason `unreadable` on OSError).
- `iter_yaml_files(paths) -> Iterator[Path]` — files as named, directories recursively.
- `apply(path, result) -> bool` — atomic replace through `labctl.fsops`, only when
  verified and changed; raises `ChangedOnDiskError` if the file changed since it was read.
- `file_record(result, path=None, applied=False) -> dict` — the `file` record, or an
  `error` record when `result.is_error`; redacted. Exit codes for the CLI: a `file`
  record with `verified: false` needs a person (1); `--check` fails when any `file`
  record has comments.
- `notes_block(result, path=None, *, when=None) -> str` and
  `append_notes(notes_path, blocks) -> Path | None` — `--move-to` (append BEFORE apply).

`Comment` and `StripResult` are in `labctl.yamlstrip.model`; lines and columns are 1-based,
columns count characters. `StripResult` holds unredacted comment text: show it only
through `file_record` / `notes_block`.

Cost: about two pure-Python `safe_load_all` passes (one scan+load of the input, one of
the result); the analysis pauses the garbage collector while it runs.
"""

from __future__ import annotations

from labctl.yamlstrip.core import analyze
from labctl.yamlstrip.files import (
    ChangedOnDiskError,
    analyze_path,
    apply,
    file_record,
    iter_yaml_files,
)
from labctl.yamlstrip.model import INPUT_ERRORS, Comment, StripResult
from labctl.yamlstrip.notes import append_notes, notes_block

__all__ = [
    "INPUT_ERRORS",
    "ChangedOnDiskError",
    "Comment",
    "StripResult",
    "analyze",
    "analyze_path",
    "append_notes",
    "apply",
    "file_record",
    "iter_yaml_files",
    "notes_block",
]
