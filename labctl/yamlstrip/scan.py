"""Find comments in one pass over a parser's event stream.

PyYAML and libyaml drop comments, but every event carries `start_mark`/`end_mark`
(offsets into the decoded text). Between two events the text holds only blanks, line
breaks, comments and the one-character indicators `-`, `?`, `:` and `,`, so a `#` in a
gap between events starts a comment that runs to the end of its line. Three kinds of
event span a stretch that can hold a comment too; they are read here by hand:

- a node with properties (`&anchor`, `!tag`) starts at its first property, and a comment
  may follow the properties (`key: &a  # c` before a nested mapping);
- an explicit document start spans its directive lines, which may hold comments after
  their parameters; a reserved directive's parameter may itself hold `#` (`%FOO a#b`),
  and only a `#` after a blank starts a comment;
- a block scalar's header comment (`key: | # c`) is inside the scalar.

While walking, the composer's checks are made (an alias must name an anchor of its
document, an anchor is defined once per document) so that invalid files are refused as
`safe_load` refuses them, without building any node.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_right
from collections.abc import Callable
from typing import Any, NamedTuple

from yaml.composer import ComposerError
from yaml.events import (
    AliasEvent,
    DocumentEndEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
)

# PyYAML (YAML 1.1) breaks lines at these; a comment runs up to the first of them.
LINE_BREAK_CHARS = "\r\n\x85\u2028\u2029"
_BREAK = re.compile("[\r\n\x85\u2028\u2029]")
_BREAK_UNIT = re.compile("\r\n|[\r\n\x85\u2028\u2029]")
_BLANKS = " \t"
_SPACE = " \t\r\n\x85\u2028\u2029"
_PROPERTY_END = _SPACE  # as far as PyYAML's pure scanner reads a tag (`,` included)
_BLOCK = frozenset("|>")
_QUOTED = frozenset("'\"")
# properties both parsers read alike: an anchor; a verbatim, primary, secondary or named tag
_PROPERTY = re.compile(
    r"&[A-Za-z0-9_-]+|!<[^>]*>|!(?:[A-Za-z0-9_-]*!)?[A-Za-z0-9;/?:@&=+$_.~*'()%-]*"
)
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


class Mismatch(Exception):
    """Two event streams differ."""


def event_shape(event: Any) -> tuple[Any, ...]:
    """Everything about a non-scalar event but its marks, as a hashable tuple."""
    cls = type(event)
    if cls is MappingStartEvent or cls is SequenceStartEvent:
        return (cls, event.flow_style, event.tag, event.anchor, event.implicit)
    if cls is AliasEvent:
        return (cls, event.anchor)
    if cls is DocumentStartEvent:
        tags = None if event.tags is None else tuple(sorted(event.tags.items()))
        return (cls, event.explicit, event.version, tags)
    if cls is DocumentEndEvent:
        return (cls, event.explicit)
    return (cls,)


class Events:
    """The events of one walk, kept compactly (marks aside) to check another walk against:
    a small id per event for its shape (`(ScalarEvent, style, tag, anchor, implicit)` for
    scalars, `event_shape` for the rest) and, for scalars, the value, stored in long
    joined chunks with their lengths (not as a million small strings)."""

    CHUNK = 1 << 16  # characters per joined chunk of values

    def __init__(self) -> None:
        self.shapes = array("H")  # per event: its shape's index in `_table`
        self.lengths = array("L")  # per scalar: the length of its value
        self.chunks: list[str] = []  # the values, joined
        self.frozen = False
        self._table: dict[tuple[Any, ...], int] = {}
        self._pending: list[str] = []
        self._pending_size = 0
        self._at = self._value_at = self._chunk_at = self._offset = 0

    def _shape_id(self, shape: tuple[Any, ...]) -> int:
        found = self._table.get(shape)
        if found is None:
            found = self._table[shape] = len(self._table)
            if found >= 1 << 16:
                raise Unsure("too many kinds of tags and anchors to keep")
        return found

    def keep(self, event: Any) -> None:
        if type(event) is ScalarEvent:
            shape = (ScalarEvent, event.style, event.tag, event.anchor, event.implicit)
            value = event.value
            self.lengths.append(len(value))
            self._pending.append(value)
            self._pending_size += len(value)
            if self._pending_size >= self.CHUNK:
                self._flush()
        else:
            shape = event_shape(event)
        self.shapes.append(self._shape_id(shape))

    def _flush(self) -> None:
        if self._pending:
            self.chunks.append("".join(self._pending))
            self._pending, self._pending_size = [], 0

    def freeze(self) -> None:
        self._flush()
        self.frozen = True

    def check(self, event: Any) -> None:
        at = self._at
        if at >= len(self.shapes):
            raise Mismatch()
        if type(event) is ScalarEvent:
            shape = (ScalarEvent, event.style, event.tag, event.anchor, event.implicit)
            if self._table.get(shape) != self.shapes[at] or not self._same_value(event.value):
                raise Mismatch()
        elif self._table.get(event_shape(event)) != self.shapes[at]:
            raise Mismatch()
        self._at = at + 1

    def _same_value(self, value: str) -> bool:
        """Is `value` the next kept value? (compared in place, no copy)"""
        length = self.lengths[self._value_at]
        if len(value) != length:
            return False
        chunk = self.chunks[self._chunk_at]
        while self._offset + length > len(chunk):  # values never straddle chunks
            self._chunk_at += 1
            self._offset = 0
            chunk = self.chunks[self._chunk_at]
        same = chunk.startswith(value, self._offset)
        self._offset += length
        self._value_at += 1
        return same

    def check_done(self) -> None:
        if self._at != len(self.shapes):
            raise Mismatch()


class TooDeep(Exception):
    """Nesting deeper than MAX_DEPTH."""


def _start(span: Span) -> int:
    return span.start


class Unsure(Exception):
    """Where libyaml may read a text otherwise than PyYAML's pure scanner: a tab read as a
    blank outside scalars, a `#` glued to the token before it (`key: |#c`), a BOM after
    the start of the text (libyaml skips one at the start of any line)."""


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


class Walker:
    """Walks one event stream over `text`, collecting comment spans into `spans`."""

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
        self.plain_breaks = not any(ch in text for ch in "\r\x85\u2028\u2029")
        self.anchors: set[str] = set()  # of the current document
        self.depth = 0
        self.flow = 0  # open flow collections

    def run(self, get_event: Callable[[], Any], events: Events | None = None) -> list[Span]:
        """Walk the events `get_event()` returns until None, keeping them in `events`;
        once `events.frozen`, check each against the kept ones instead (`Mismatch`)."""
        text, shift, careful = self.text, self.shift, self.careful
        node = self.tracker.node if self.tracker is not None else None
        note = None if events is None else events.check if events.frozen else events.keep
        find = text.find
        cov = 0
        cov_mark = None
        # the next `#` (and, for libyaml, tab) at or after `cov`: only a gap holding one
        # needs a closer look
        hash_at = find("#")
        tab_at = find("\t") if careful else -1
        if careful and find("\ufeff", 1) >= 0:
            raise Unsure("a BOM after the start of the text (libyaml skips one at any line start)")
        for event in iter(get_event, None):
            start = event.start_mark.index + shift
            if 0 <= hash_at < start:
                self._gap(cov, cov_mark, start)
            if careful and (0 <= tab_at < start or self.flow):
                tab_at = self._careful_gap(cov, start, tab_at)
            if note is not None:
                note(event)
            if type(event) is ScalarEvent:
                if node is not None:
                    node(event, start)
                if event.anchor is not None or event.tag is not None or event.style in _BLOCK:
                    self._inside_node(event, start)
                if careful and self.flow and not event.style and "?" in event.value:
                    raise Unsure("a '?' in a plain scalar in a flow collection")  # pure ends it
            else:
                self._structure(event, start)
            end_mark = event.end_mark
            end = end_mark.index + shift
            if end > cov:
                cov = end
                cov_mark = end_mark
                if 0 <= hash_at < end:
                    hash_at = find("#", end)
                if 0 <= tab_at < end:
                    tab_at = self._event_tabs(event, tab_at, end)
        if events is not None and events.frozen:
            events.check_done()
        if self.tracker is not None:
            self.tracker.finish()
        return self.spans

    def _structure(self, event: Any, start: int) -> None:
        """Collections, aliases and document markers."""
        cls, tracker = type(event), self.tracker
        if cls is MappingStartEvent or cls is SequenceStartEvent:
            if tracker is not None:
                tracker.node(event, start)
            if event.anchor is not None or event.tag is not None:
                self._inside_node(event, start)
            self._nest(event, 1)
        elif cls is MappingEndEvent or cls is SequenceEndEvent:
            self._nest(event, -1)
            if tracker is not None:
                tracker.end(event, event.end_mark.index + self.shift)
        elif cls is AliasEvent:
            if self.careful and not _PROPERTY.fullmatch("&" + event.anchor):
                raise Unsure(f"an alias libyaml may read otherwise ({event.anchor!r})")
            if event.anchor not in self.anchors:
                raise ComposerError(
                    None, None, f"found undefined alias {event.anchor!r}", event.start_mark
                )
            if tracker is not None:
                tracker.node(event, start)
        elif cls is DocumentStartEvent:
            self.anchors = set()
            if event.explicit:
                self._directives(event, start)
        elif cls is DocumentEndEvent and event.explicit and tracker is not None:
            tracker.boundary(start, event.start_mark.line, "end")

    def _nest(self, event: Any, step: int) -> None:
        """Count open collections (and flow collections) as one opens or closes."""
        self.depth += step
        if self.depth > MAX_DEPTH:
            raise TooDeep()
        if step > 0:
            if event.flow_style:
                self.flow += 1
        elif self.flow and self.text.startswith(("]", "}"), event.start_mark.index + self.shift):
            self.flow -= 1

    def _add(self, hash_at: int, line: int, line_start: int) -> int:
        """Record the comment starting at `hash_at`; returns where it ends."""
        if self.careful and hash_at > line_start and self.text[hash_at - 1] not in " \ufeff":
            raise Unsure(f"a '#' right after a token (line {line + 1})")
        if self.plain_breaks:
            end = self.text.find("\n", hash_at)
            if end < 0:
                end = len(self.text)
        else:
            brk = _BREAK.search(self.text, hash_at)
            end = brk.start() if brk is not None else len(self.text)
        prefix = self.text[line_start:hash_at]
        if line_start == 0 and prefix.startswith("\ufeff"):
            prefix = prefix[1:]
        span = Span(hash_at, end, line, line_start, bool(prefix.strip(_BLANKS)))
        if self.tracker is not None:
            self.tracker.comment(len(self.spans), span)
        self.spans.append(span)
        return end

    def _gap(self, cov: int, cov_mark: Any, stop: int) -> None:
        """Record the comments in text[cov:stop], which holds only blanks, breaks, comments;
        `cov_mark` is the end mark of the event that ends at `cov` (None at the start)."""
        text = self.text
        if cov_mark is None:
            line = line_start = 0
        else:
            line = cov_mark.line
            bom = 1 if self.has_bom and line == 0 else 0
            line_start = cov - cov_mark.column - bom
        pos = cov
        hash_at = text.find("#", pos, stop)
        while hash_at >= 0:
            if self.plain_breaks:
                breaks = text.count("\n", pos, hash_at)
                if breaks:
                    line += breaks
                    line_start = text.rfind("\n", pos, hash_at) + 1
            else:
                for m in _BREAK_UNIT.finditer(text, pos, hash_at):
                    line += 1
                    line_start = m.end()
            pos = self._add(hash_at, line, line_start)
            hash_at = text.find("#", pos, stop)

    def _position(self, mark: Any, index: int, pos: int) -> tuple[int, int]:
        """(line, line start) of offset `pos`, counting from an event's start mark."""
        bom = 1 if self.has_bom and mark.line == 0 else 0
        line, line_start = mark.line, index - mark.column - bom
        for m in _BREAK_UNIT.finditer(self.text, index, pos):
            line += 1
            line_start = m.end()
        return line, line_start

    def _comment_at(self, mark: Any, index: int, pos: int) -> int:
        line, line_start = self._position(mark, index, pos)
        return self._add(pos, line, line_start)

    def _careful_gap(self, cov: int, start: int, tab_at: int) -> int:
        """libyaml: what in the gap before an event the pure parser may read otherwise;
        returns the next tab at or after `start`."""
        if self.flow and self.text.find("?", cov, start) >= 0:
            raise Unsure("an explicit key in a flow collection")
        if 0 <= tab_at < start:
            tab_at = self._gap_tabs(tab_at, start)  # raises Unsure outside comments
        return tab_at

    def _event_tabs(self, event: Any, tab_at: int, end: int) -> int:
        """A tab inside an event: only a quoted scalar may hold one (libyaml reads tabs
        as blanks in places the pure parser rejects them)."""
        if type(event) is not ScalarEvent or event.style not in _QUOTED:
            self._blank(tab_at)
        if event.anchor is not None or event.tag is not None:
            self._blank(tab_at)
        return self.text.find("\t", end)

    def _gap_tabs(self, tab_at: int, stop: int) -> int:
        """Tabs in a gap are fine inside comments (already recorded), a sign of trouble
        elsewhere; returns the next tab at or after `stop`."""
        spans, find = self.spans, self.text.find
        while 0 <= tab_at < stop:
            k = bisect_right(spans, tab_at, key=_start) - 1
            if k < 0 or not spans[k].start < tab_at < spans[k].end:
                self._blank(tab_at)
            tab_at = find("\t", spans[k].end)
        return tab_at

    def _blank(self, pos: int) -> None:
        if self.careful and self.text[pos] == "\t":
            raise Unsure(f"a tab outside scalars (offset {pos})")

    def _inside_node(self, event: Any, start: int) -> None:
        """Comments after a node's properties, and a block scalar's header comment."""
        anchor = event.anchor
        if anchor is not None:
            if anchor in self.anchors:
                raise ComposerError(
                    None, None, f"found duplicate anchor {anchor!r}", event.start_mark
                )
            self.anchors.add(anchor)
        content = start
        if anchor is not None or event.tag is not None:
            content = self._properties(event, start)
        if type(event) is ScalarEvent and event.style in _BLOCK:
            self._block_header(event, start, content)

    def _properties(self, event: Any, start: int) -> int:
        """Skip `&anchor`/`!tag` and the blanks, breaks and comments after them; returns
        where the content starts (at most the event's end)."""
        text, n = self.text, len(self.text)
        stop = min(event.end_mark.index + self.shift, n)
        i = start
        while i < stop:
            ch = text[i]
            if ch in "&!":
                begin = i
                if text.startswith("!<", i):
                    close = text.find(">", i)
                    i = close + 1 if close >= 0 else stop
                else:
                    while i < n and text[i] not in _PROPERTY_END:
                        i += 1
                if self.careful and not _PROPERTY.fullmatch(text, begin, i):
                    raise Unsure(f"a tag or anchor libyaml may read otherwise (offset {begin})")
            elif ch in _SPACE:
                self._blank(i)
                i += 1
            elif ch == "#":
                i = self._comment_at(event.start_mark, start, i)
            else:
                break
        return i

    def _block_header(self, event: Any, start: int, content: int) -> None:
        """A comment after `|`/`>` and its indicators lives inside the scalar's span."""
        text, n = self.text, len(self.text)
        i = content + 1
        while i < n and text[i] in "+-0123456789":
            i += 1
        while i < n and text[i] in _BLANKS:
            self._blank(i)
            i += 1
        if i < n and text[i] == "#":
            self._comment_at(event.start_mark, start, i)

    def _directives(self, event: Any, start: int) -> None:
        """The directive lines of an explicit document start, then its `---`."""
        text = self.text
        dashes = event.end_mark.index + self.shift - 3
        mark = event.start_mark
        pos = start
        while pos < dashes:
            brk = _BREAK.search(text, pos, dashes)
            eol = brk.start() if brk is not None else dashes
            i = pos
            while i < eol and text[i] in _BLANKS:
                self._blank(i)
                i += 1
            if i < eol and text[i] == "%":
                line, _ = self._position(mark, start, i)
                if self.tracker is not None:
                    self.tracker.boundary(i, line, "directive")
                self._directive_line(mark, start, i, eol)
            elif i < eol and text[i] == "#":
                self._comment_at(mark, start, i)
            pos = brk.end() if brk is not None else dashes
        if self.tracker is not None:
            self.tracker.boundary(dashes, event.end_mark.line, "start")

    def _directive_line(self, mark: Any, start: int, i: int, eol: int) -> None:
        """`%NAME param param # comment`: a `#` starts a comment only after a blank."""
        text = self.text
        while i < eol:
            while i < eol and text[i] not in _BLANKS:
                i += 1
            while i < eol and text[i] in _BLANKS:
                self._blank(i)
                i += 1
            if i < eol and text[i] == "#":
                self._comment_at(mark, start, i)
                return


def comment_spans(text: str, get_event: Callable[[], Any], shift: int = 0) -> list[Span]:
    """Just the comment spans of `text`, read from its events (raises like the parser)."""
    return Walker(text, shift).run(get_event)
