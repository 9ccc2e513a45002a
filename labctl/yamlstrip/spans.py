"""Comment spans and how a walk records them: `Span` (one comment's offsets and line),
`Tracker` (what a walk tells a listener about the structure), the `Unsure` and `TooDeep`
refusals, and `Recorder`, the state and primitives every part of a walk over one text
shares (record a comment, place an offset on its line, refuse a tab for libyaml).
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

# PyYAML (YAML 1.1) breaks lines at these; a comment runs up to the first of them.
LINE_BREAK_CHARS = "\r\n\x85\u2028\u2029"
BREAK = re.compile("[\r\n\x85\u2028\u2029]")
BREAK_UNIT = re.compile("\r\n|[\r\n\x85\u2028\u2029]")
_ODD_BREAK = re.compile("[\r\x85\u2028\u2029]")  # a line break other than `\n`
BLANKS = " \t"
MAX_DEPTH = 1000  # deeper nesting is refused: PyYAML's composer would overflow its stack


class Span(NamedTuple):
    """A comment (0-based line, character offsets into the text)."""

    start: int
    end: int
    line: int
    line_start: int  # offset of the first character of the line (0 on line 1, even with a BOM)
    inline: bool = False  # something other than blanks (and a BOM) precedes it on its line

    def column(self, has_bom: bool) -> int:
        """0-based column in characters, not counting a BOM (as PyYAML counts)."""
        bom = 1 if has_bom and self.line_start == 0 else 0
        return self.start - self.line_start - bom


_new = tuple.__new__


class Unsure(Exception):
    """Where libyaml may read a text otherwise than PyYAML's pure scanner: a tab read as a
    blank outside scalars, a `#` glued to the token before it (`key: |#c`), a BOM after
    the start of the text (libyaml skips one at the start of any line)."""


class TooDeep(Exception):
    """Nesting deeper than MAX_DEPTH."""


class Tracker:
    """What a walk tells about the structure (key paths); the default ignores it all."""

    def comment(self, number: int, span: Span) -> None:
        pass

    def boundary(self, index: int, line: int, kind: str) -> None:
        pass

    def node(self, event: Any, start: int) -> None:
        pass

    def end(self, event: Any, end: int) -> None:
        pass

    def finish(self) -> None:
        pass


class Recorder:
    """One text and the comment spans found in it so far (`spans`, in text order)."""

    def __init__(
        self, text: str, shift: int, tracker: Tracker | None = None, *, careful: bool = False
    ) -> None:
        self.text = text
        self.shift = shift
        self.has_bom = text.startswith("\ufeff")
        self.tracker = tracker
        self.careful = careful  # libyaml: raise Unsure where the pure scanner must decide
        self.spans: list[Span] = []
        # only `\n` breaks lines (the common case): plain string searches will do
        self.plain_breaks = _ODD_BREAK.search(text) is None

    def _add(self, hash_at: int, line: int, line_start: int) -> int:
        """Record the comment starting at `hash_at`; returns where it ends."""
        if self.careful and hash_at > line_start and self.text[hash_at - 1] not in " \ufeff":
            raise Unsure(f"a '#' right after a token (line {line + 1})")
        if self.plain_breaks:
            end = self.text.find("\n", hash_at)
            if end < 0:
                end = len(self.text)
        else:
            brk = BREAK.search(self.text, hash_at)
            end = brk.start() if brk is not None else len(self.text)
        prefix = self.text[line_start:hash_at]
        if line_start == 0 and prefix.startswith("\ufeff"):
            prefix = prefix[1:]
        # tuple.__new__: a NamedTuple's own __new__ is a Python call, twice the cost
        span = _new(Span, (hash_at, end, line, line_start, bool(prefix.strip(BLANKS))))
        if self.tracker is not None:
            self.tracker.comment(len(self.spans), span)
        self.spans.append(span)
        return end

    def _position(self, mark: Any, index: int, pos: int) -> tuple[int, int]:
        """(line, line start) of offset `pos`, counting from an event's start mark."""
        bom = 1 if self.has_bom and mark.line == 0 else 0
        line, line_start = mark.line, index - mark.column - bom
        for m in BREAK_UNIT.finditer(self.text, index, pos):
            line += 1
            line_start = m.end()
        return line, line_start

    def _comment_at(self, mark: Any, index: int, pos: int) -> int:
        line, line_start = self._position(mark, index, pos)
        return self._add(pos, line, line_start)

    def _blank(self, pos: int) -> None:
        if self.careful and self.text[pos] == "\t":
            raise Unsure(f"a tab outside scalars (offset {pos})")
