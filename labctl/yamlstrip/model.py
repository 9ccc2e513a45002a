"""The values `analyze` returns: one `Comment` per comment found, one `StripResult` per input."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

# Reasons for inputs that could not be analysed at all: the CLI emits an `error` record.
NOT_UTF8 = "not_utf8"
BINARY = "binary"
INVALID_YAML = "invalid_yaml"
TAB_BEFORE_COMMENT = "tab_before_comment"
UNREADABLE = "unreadable"
# Reasons for inputs that were analysed but whose comments cannot be removed safely: the
# CLI emits a `file` record with `verified: false`.
DATA_CHANGED = "data_changed"
INVALID_AFTER_STRIP = "invalid_after_strip"
# Self-checks that should never fire; if one does the file is still left untouched.
COMMENTS_REMAIN = "comments_remain"
BYTES_CHANGED = "bytes_changed"

# How a stripped text was verified: the parser's event streams are identical (so is the
# data, for any loader); or, where the events differ, the data `yaml.safe_load_all` builds,
# or (when safe_load cannot build it, e.g. an application tag like `!include`) the composed
# node trees are strictly equal.
WITH_EVENTS = "events"
WITH_SAFE_LOAD = "safe_load_all"
WITH_NODES = "compose_all"

INPUT_ERRORS = frozenset({NOT_UTF8, BINARY, INVALID_YAML, TAB_BEFORE_COMMENT, UNREADABLE})


class Comment(NamedTuple):
    """One comment: where it is, what it says, and which YAML key it sat on.

    `start`/`end` are character offsets into the decoded text (`end` is the line break or
    the end of the text). `line` and `column` are 1-based; the column counts characters
    (not bytes) and ignores a BOM. `text` is the comment as written, from `#` to the end of
    the line. `inline` is true when something other than blanks precedes it on its line.
    `key_path` is a jq-style path (`.train.optimizer.lr`, `.layers[2]`, `.` for a document
    root) or None when the comment belongs to no document.
    """

    start: int
    end: int
    line: int
    column: int
    text: str
    inline: bool
    key_path: str | None = None


@dataclass(frozen=True, slots=True)
class StripResult:
    """What `analyze` found and produced for one input.

    `new_data` is the stripped file when `verified`, else the original bytes: a refused
    file is never changed. A file without comments is verified trivially
    (`verified_with` None). `reason`/`message` explain a refusal or an input error;
    `problem_line`/`problem_column` (1-based) locate it when known.
    """

    source: str
    data: bytes = field(repr=False)
    new_data: bytes = field(repr=False)
    comments: tuple[Comment, ...] = ()
    verified: bool = False
    reason: str | None = None
    message: str | None = None
    problem_line: int | None = None
    problem_column: int | None = None
    verified_with: str | None = None  # WITH_EVENTS / _SAFE_LOAD / _NODES; None: nothing to strip
    scanner: str | None = None  # "libyaml" or "pure": whose reading of the text this is
    scanner_note: str | None = None  # why the pure parser decided instead of libyaml

    @property
    def changed(self) -> bool:
        return self.new_data != self.data

    @property
    def bytes_before(self) -> int:
        return len(self.data)

    @property
    def bytes_after(self) -> int:
        return len(self.new_data)

    @property
    def is_error(self) -> bool:
        """True when the input could not be analysed (unreadable, not UTF-8, not YAML)."""
        return self.reason in INPUT_ERRORS

    @property
    def comments_removed(self) -> int:
        """Comments that applying this result removes (0 when refused)."""
        return len(self.comments) if self.verified else 0
