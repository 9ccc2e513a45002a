"""The stretches inside events that can hold a comment, read by hand (`InsideEvents`):

- a node with properties (`&anchor`, `!tag`) starts at its first property, and a comment
  may follow the properties (`key: &a  # c` before a nested mapping);
- an explicit document start spans its directive lines, which may hold comments after
  their parameters; a reserved directive's parameter may itself hold `#` (`%FOO a#b`),
  and only a `#` after a blank starts a comment;
- a block scalar's header comment (`key: | # c`) is inside the scalar.

A node's anchor is also checked here as the composer checks it (defined once per
document).
"""

from __future__ import annotations

import re
from typing import Any

from yaml.composer import ComposerError
from yaml.events import ScalarEvent

from labctl.yamlstrip.spans import BLANKS, BREAK, Recorder, Unsure

_SPACE = " \t\r\n\x85\u2028\u2029"
_PROPERTY_END = _SPACE  # as far as PyYAML's pure scanner reads a tag (`,` included)
BLOCK = frozenset("|>")
# properties both parsers read alike: an anchor; a verbatim, primary, secondary or named tag
PROPERTY = re.compile(
    r"&[A-Za-z0-9_-]+|!<[^>]*>|!(?:[A-Za-z0-9_-]*!)?[A-Za-z0-9;/?:@&=+$_.~*'()%-]*"
)


class InsideEvents(Recorder):
    """Comments inside a node's properties, a block scalar's header, a document's
    directives; `anchors`: those defined so far in the current document."""

    anchors: set[str]

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
        if type(event) is ScalarEvent and event.style in BLOCK:
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
                if self.careful and not PROPERTY.fullmatch(text, begin, i):
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
        while i < n and text[i] in BLANKS:
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
            brk = BREAK.search(text, pos, dashes)
            eol = brk.start() if brk is not None else dashes
            i = pos
            while i < eol and text[i] in BLANKS:
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
            while i < eol and text[i] not in BLANKS:
                i += 1
            while i < eol and text[i] in BLANKS:
                self._blank(i)
                i += 1
            if i < eol and text[i] == "#":
                self._comment_at(mark, start, i)
                return
