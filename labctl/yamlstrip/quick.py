"""The second walk, quickly: check the stripped text's events against the kept ones.

Stripping deletes comment text only, so every character the first walk's checks looked at
outside comments (tabs, `?`, a BOM, the bytes inside events) is still there, unchanged and in
order; those checks cannot fire again. What the second walk must establish is that the events
are the same (`Mismatch` otherwise) and that no comment is left. A `#` in a gap, or inside an
event whose properties may hold a comment, or on a block scalar's header line, is left to the
full `Walker` (`quick_verify` returns False); a `#` inside a plain or quoted scalar, or in a
block scalar's content, is content.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from yaml.events import ScalarEvent

from labctl.yamlstrip.events import EventList, Events, Mismatch, same_events
from labctl.yamlstrip.inside import BLOCK


def quick_verify(
    text: str, shift: int, get_event: Callable[[], Any], events: Events | EventList
) -> bool:
    """True when `get_event()`'s events are the kept ones and no `#` can start a comment;
    False when the full walk must decide (rewind `events` first). Raises `Mismatch`."""
    if isinstance(events, EventList):  # the whole stream at C speed, then compared at once
        seen = list(iter(get_event, None))
        if not same_events(events.kept, seen):
            raise Mismatch()
        return text.find("#") < 0 or _hashes_are_content(text, shift, iter(seen), None)
    quick = _hashes_are_content(text, shift, iter(get_event, None), events.check)
    if quick:
        events.check_done()
    return quick


def _hashes_are_content(
    text: str, shift: int, stream: Iterator[Any], check: Callable[[Any], None] | None
) -> bool:
    """Is every `#` of `text` inside a scalar's content (see the module's docstring)?
    `check` sees each event (up to the first `#` that is not)."""
    find = text.find
    hash_at = find("#")
    for event in stream:
        start = event.start_mark.index + shift
        if 0 <= hash_at < start:
            return False  # a `#` between events
        if check is not None:
            check(event)
        end = event.end_mark.index + shift
        if 0 <= hash_at < end:
            if type(event) is not ScalarEvent or event.anchor is not None or event.tag is not None:
                return False
            if event.style in BLOCK and not 0 <= find("\n", start) < hash_at:
                return False  # on a block scalar's header line (past it: the content)
            hash_at = find("#", end)
    return True
