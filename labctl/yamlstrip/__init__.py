"""Byte-exact YAML comment removal, verified before anything is written (issues 3, 16).

The pure core of `labctl strip-yaml-comments`. A comment is a `#` the parser's events do
not cover (plus the three places inside an event that can hold one: after a node's
properties, on directive lines, after a block scalar's header); the comments are cut out
of the original text and nothing else changes. Before a result is offered for writing,
it must match an independent line-by-line statement of the contract, and the parser's
event stream of the result must equal the original's (so the data is the same for every
loader) with no comment left. libyaml parses when PyYAML has it; PyYAML's pure parser,
the reference, decides wherever libyaml cannot vouch for a result, and where the pure
parser sees different events, `safe_load_all` of before and after must be strictly equal
(NaN == NaN, True != 1, 1 != 1.0, mapping order ignored; node trees for application tags).

API
- `analyze(data: bytes, *, source: str = "-", scanner=None) -> StripResult` — pure (no
  I/O). Never raises for bad input: `reason` is one of `not_utf8`, `binary`,
  `invalid_yaml`, `tab_before_comment` (input errors, `result.is_error`), or
  `data_changed`, `invalid_after_strip` (the comments cannot be removed without changing
  the data; the result is `verified=False` and `new_data` is the input), with a human
  `message`. `comments` are listed in every case where the text could be parsed. For
  stdin mode, write `result.new_data` (the input itself when refused).
- `analyze_path(path) -> StripResult` — reads bytes (reason `unreadable` on OSError).
- `iter_yaml_files(paths, hidden=False, ignore=True, skipped=None)` — files as named,
  directories searched like ripgrep/fd (`labctl.yamlstrip.walk`).
- `strip_files(...)` — many files across cores, one record each, then a `skipped` record
  (`labctl.yamlstrip.batch`).
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

Cost (libyaml): one parse of the input and one of the result, with the garbage collector
paused; memory stays a small multiple of the file (the walks keep no node tree).
"""

from __future__ import annotations

from labctl.yamlstrip.core import analyze
from labctl.yamlstrip.files import ChangedOnDiskError, analyze_path, apply, file_record
from labctl.yamlstrip.model import INPUT_ERRORS, Comment, StripResult
from labctl.yamlstrip.notes import append_notes, notes_block
from labctl.yamlstrip.walk import Skipped, iter_yaml_files

__all__ = [
    "INPUT_ERRORS",
    "ChangedOnDiskError",
    "Comment",
    "Skipped",
    "StripResult",
    "analyze",
    "analyze_path",
    "append_notes",
    "apply",
    "file_record",
    "iter_yaml_files",
    "notes_block",
]
