"""The events of one walk, kept to check a second walk against: after stripping, the text
must give the very same events, marks aside (`Mismatch`). `Events` keeps them compactly
(a big file's millions of events would not fit as objects); `EventList` keeps a small
text's event objects themselves and compares the two lists attribute by attribute in C
(`map`, `attrgetter`), with no Python call per event. `kept_events(size)` picks one."""

from __future__ import annotations

from array import array
from collections.abc import Callable
from itertools import compress, repeat
from operator import attrgetter, is_
from typing import Any

from yaml.events import (
    AliasEvent,
    DocumentEndEvent,
    DocumentStartEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceStartEvent,
)

from labctl.yamlstrip.spans import Unsure


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
        self.lengths = array("I")  # per scalar: the length of its value (4 bytes, not 8)
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

    def note(self) -> Callable[[Any], None]:
        """What a walk calls with each event: keep it, or (once frozen) check it."""
        return self.check if self.frozen else self.keep

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

    def rewind(self) -> None:
        """Check a walk from its first event again."""
        self._at = self._value_at = self._chunk_at = self._offset = 0

    def check_done(self) -> None:
        if self._at != len(self.shapes):
            raise Mismatch()


# what must be equal, per kind of event, for two streams to be the same (marks aside; the
# end events and StreamStart/StreamEnd carry nothing else that parsing a text can vary)
_SCALAR = attrgetter("value", "style", "tag", "anchor", "implicit")
_COLLECTION = attrgetter("flow_style", "tag", "anchor", "implicit")  # mapping, sequence start
_COLLECTIONS = frozenset({MappingStartEvent, SequenceStartEvent})
_OTHER = {  # a few per text
    AliasEvent: attrgetter("anchor"),
    DocumentStartEvent: attrgetter("explicit", "version", "tags"),
    DocumentEndEvent: attrgetter("explicit"),
}
LIST_MAX_CHARS = 1 << 16  # texts up to this size keep their event objects (a few MB at most)


def same_events(a: list[Any], b: list[Any]) -> bool:
    """Are two lists of events the same, marks aside (what `Events.check` decides)?"""
    if len(a) != len(b):
        return False
    kinds = list(map(type, a))
    if kinds != list(map(type, b)):
        return False
    picked = list(map(is_, kinds, repeat(ScalarEvent)))
    if list(map(_SCALAR, compress(a, picked))) != list(map(_SCALAR, compress(b, picked))):
        return False
    picked = list(map(_COLLECTIONS.__contains__, kinds))
    if list(map(_COLLECTION, compress(a, picked))) != list(map(_COLLECTION, compress(b, picked))):
        return False
    for cls, get in _OTHER.items():
        if cls in kinds:  # most texts hold none but one document's start and end
            picked = list(map(is_, kinds, repeat(cls)))
            if list(map(get, compress(a, picked))) != list(map(get, compress(b, picked))):
                return False
    return True


class EventList:
    """A small text's events as the objects themselves (see the module's docstring)."""

    def __init__(self) -> None:
        self.kept: list[Any] = []
        self.seen: list[Any] = []
        self.frozen = False

    def note(self) -> Callable[[Any], None]:
        return self.seen.append if self.frozen else self.kept.append

    def freeze(self) -> None:
        self.frozen = True

    def rewind(self) -> None:
        self.seen = []

    def check_done(self) -> None:
        if not same_events(self.kept, self.seen):
            raise Mismatch()


def kept_events(chars: int) -> Events | EventList:
    """The store for a walk over a text of `chars` characters."""
    return EventList() if chars <= LIST_MAX_CHARS else Events()
