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

from collections.abc import Callable
from typing import Any

from yaml.events import ScalarEvent

from labctl.yamlstrip.events import Events
from labctl.yamlstrip.inside import BLOCK


def quick_verify(text: str, shift: int, get_event: Callable[[], Any], events: Events) -> bool:
    """True when `get_event()`'s events are the kept ones and no `#` can start a comment;
    False when the full walk must decide (rewind `events` first). Raises `Mismatch`."""
    check, find = events.check, text.find
    hash_at = find("#")
    for event in iter(get_event, None):
        start = event.start_mark.index + shift
        if 0 <= hash_at < start:
            return False  # a `#` between events
        check(event)
        end = event.end_mark.index + shift
        if 0 <= hash_at < end:
            if type(event) is not ScalarEvent or event.anchor is not None or event.tag is not None:
                return False
            if event.style in BLOCK and not 0 <= find("\n", start) < hash_at:
                return False  # on a block scalar's header line (past it: the content)
            hash_at = find("#", end)
    events.check_done()
    return True
