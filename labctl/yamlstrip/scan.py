"""Find comments in one pass over a parser's event stream.

PyYAML and libyaml drop comments, but every event carries `start_mark`/`end_mark`
(offsets into the decoded text). Between two events the text holds only blanks, line
breaks, comments and the one-character indicators `-`, `?`, `:` and `,`, so a `#` in a
gap between events starts a comment that runs to the end of its line. Three kinds of
event span a stretch that can hold a comment too (a node's properties, a document's
directive lines, a block scalar's header); `labctl.yamlstrip.inside` reads them by hand.

The pieces: `spans` (Span, Tracker, the refusals, the Recorder every part shares),
`events` (the kept event stream a second walk is checked against), `inside`, and here
the `Walker` over the event stream. While walking, the composer's checks are made (an
alias must name an anchor of its document, an anchor is defined once per document) so
that invalid files are refused as `safe_load` refuses them, without building any node.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable
from typing import Any

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

from labctl.yamlstrip.events import EventList, Events
from labctl.yamlstrip.inside import BLOCK, PROPERTY, InsideEvents
from labctl.yamlstrip.spans import (
    BREAK_UNIT,
    MAX_DEPTH,
    Span,
    TooDeep,
    Tracker,
    Unsure,
)

_QUOTED = frozenset("'\"")
_OPENS = frozenset({MappingStartEvent, SequenceStartEvent})
_CLOSES = frozenset({MappingEndEvent, SequenceEndEvent})


def _start(span: Span) -> int:
    return span.start


def _ignore(event: Any, at: int) -> None:
    """No tracker: nothing to tell."""


def _ignore_one(event: Any) -> None:
    """No event store: nothing to keep."""


class Walker(InsideEvents):
    """Walks one event stream over `text`, collecting comment spans into `spans`."""

    def __init__(
        self, text: str, shift: int, tracker: Tracker | None = None, *, careful: bool = False
    ) -> None:
        super().__init__(text, shift, tracker, careful=careful)
        self.anchors: set[str] = set()  # of the current document
        self.depth = 0
        self.flow = 0  # open flow collections

    def run(
        self, get_event: Callable[[], Any], events: Events | EventList | None = None
    ) -> list[Span]:
        """Walk the events `get_event()` returns until None, keeping them in `events`;
        once `events.frozen`, check each against the kept ones instead (`Mismatch`)."""
        text, shift, careful = self.text, self.shift, self.careful
        tracker = self.tracker
        node = _ignore if tracker is None else tracker.node
        end_of = _ignore if tracker is None else tracker.end
        note = _ignore_one if events is None else events.note()
        find = text.find
        cov = 0
        cov_mark = None
        # the next `#` (and, for libyaml, tab) at or after `cov`: only a gap holding one
        # needs a closer look
        hash_at = find("#")
        tab_at = self._first_tab()
        for event in iter(get_event, None):
            start = event.start_mark.index + shift
            if 0 <= hash_at < start:
                self._gap(cov, cov_mark, start)
            if careful and (0 <= tab_at < start or self.flow):
                tab_at = self._careful_gap(cov, start, tab_at)
            note(event)
            cls = type(event)
            if cls is ScalarEvent:
                node(event, start)
                if event.anchor is not None or event.tag is not None or event.style in BLOCK:
                    self._inside_node(event, start)
                if careful and self.flow and not event.style and "?" in event.value:
                    raise Unsure("a '?' in a plain scalar in a flow collection")  # pure ends it
            elif cls in _CLOSES and not self.flow:  # the commonest structure, inline
                self.depth -= 1
                end_of(event, event.end_mark.index + shift)
            elif cls in _OPENS and not event.flow_style:
                node(event, start)
                if event.anchor is not None or event.tag is not None:
                    self._inside_node(event, start)
                self.depth += 1
                if self.depth > MAX_DEPTH:
                    raise TooDeep()
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
        return self._finish(events)

    def _finish(self, events: Events | EventList | None) -> list[Span]:
        if events is not None and events.frozen:
            events.check_done()
        if self.tracker is not None:
            self.tracker.finish()
        return self.spans

    def _first_tab(self) -> int:
        """libyaml: the first tab (-1 for none, or for the pure parser); a BOM after the
        start is refused at once."""
        if not self.careful:
            return -1
        if self.text.find("\ufeff", 1) >= 0:
            raise Unsure("a BOM after the start of the text (libyaml skips one at any line start)")
        return self.text.find("\t")

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
            if self.careful and not PROPERTY.fullmatch("&" + event.anchor):
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
                for m in BREAK_UNIT.finditer(text, pos, hash_at):
                    line += 1
                    line_start = m.end()
            pos = self._add(hash_at, line, line_start)
            hash_at = text.find("#", pos, stop)

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


def comment_spans(text: str, get_event: Callable[[], Any], shift: int = 0) -> list[Span]:
    """Just the comment spans of `text`, read from its events (raises like the parser)."""
    return Walker(text, shift).run(get_event)
