"""Which YAML key a comment sat on, for the records and the notes `--move-to` writes.

Key paths are jq-style strings: `.train.optimizer.lr`, `.layers[2].name`, `.["a.b"]` for
keys that are not plain identifiers, `.` for a document root. They come from the positions
of the parser's events — go-yaml's head/line/foot model computed from positions, so
nothing can be attached to the wrong node. An *entry* is a key of a mapping, an item of a
sequence (an alias included, at its own `*name`) or a document root; the contents of a
complex key (`? [a, b]`) have none.

- inline comment: the deepest entry that starts on the comment's line before it
  (`lr: 3e-4  # tuned` -> `.train.lr`, `- 5  # x` -> `.steps[0]`), ignoring the
  insides of a flow collection closed before it (`steps: [1, 2]  # x` -> `.steps`, but
  `steps: [1,  # x` -> `.steps[0]`);
- a comment on a `---` line with no such entry: `.` (the document it starts); on a `...`
  or directive line: None;
- otherwise a head comment: the next entry in document order (the shallowest one at that
  position, so a comment above `- a: 1` belongs to the item, not to `a`; but a key rather
  than its document's root), unless a `---`/`...`/directive comes first;
- otherwise a foot comment: the last entry of the same document whose column is left of
  the comment's (its indentation says what it closes), else the document root;
- a comment outside every document (before a `---` with no node after it, after a
  `...`): None.

`KeyPaths` gets the events of one walk (`labctl.yamlstrip.scan.Walker`) as they come and
resolves each comment as soon as what decides it has been seen, keeping only the open
collections, the entries of the current line and one entry per indentation column: its
memory does not grow with the file.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

from yaml.events import AliasEvent, MappingStartEvent, ScalarEvent

from labctl.yamlstrip.spans import Span, Tracker

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")


@functools.lru_cache(maxsize=4096)
def key_segment(key: object) -> str:
    """One mapping key as a path segment: `.name` or `.["odd key"]`."""
    if isinstance(key, str) and _IDENT.match(key):
        return "." + key
    text = key if isinstance(key, str) else repr(key)
    return ".[" + json.dumps(text, ensure_ascii=False) + "]"


def index_segment(index: int) -> str:
    return f"[{index}]"


# An entry is a tuple (start, line, column, depth, label, parent entry, flow end): the
# label is a key's scalar value or an item's index (None for a root); the flow end is the
# end box of the flow collection the entry is in (None in block context). A frame is a
# list [entry naming the collection (None inside a complex key), is a mapping, is flow,
#  children read so far (mappings: even = key, odd = value), current key's entry, end box].
# An end box is a one-item list: the offset after `]`/`}` once the flow collection closed
# (-1 before). Entries point at the box, not the frame, so no cycle keeps them alive.
Entry = tuple[Any, ...]
START, LINE, COLUMN, DEPTH, LABEL, PARENT, FLOW = range(7)
F_ENTRY, F_MAPPING, F_FLOW, F_COUNT, F_KEY, F_END = range(6)


def entry_path(entry: Entry) -> str:
    segments: list[str] = []
    while entry[PARENT] is not None:
        label = entry[LABEL]
        segments.append(index_segment(label) if type(label) is int else key_segment(label))
        entry = entry[PARENT]
    return "." + "".join(reversed(segments)).removeprefix(".")


def _open_at(entry: Entry, offset: int) -> bool:
    """Is the entry outside every flow collection closed before `offset`?"""
    flow = entry[FLOW]
    return flow is None or not 0 <= flow[0] <= offset


class KeyPaths(Tracker):
    """Resolves the key path of each comment of one walk; read `paths` after it."""

    def __init__(self, has_bom: bool = False) -> None:
        self.has_bom = has_bom
        self.paths: dict[int, str | None] = {}
        self._frames: list[list[Any]] = []
        self._anchors: dict[str, Any] = {}  # scalar anchors -> their value (alias keys)
        self._steps: list[Entry] = []  # one per indentation column: foot candidates
        self._last: Entry | None = None
        self._held_root: Entry | None = None  # a root that may yield its head to a key
        self._boundary: tuple[int, int, str] | None = None  # the latest (index, line, kind)
        self._pending: list[tuple[int, Span, int]] = []  # (number, span, column)

    # -- the walk's callbacks -------------------------------------------------------------
    def comment(self, number: int, span: Span) -> None:
        held = self._held_root
        if held is not None:  # nothing can start at the held root's offset any more
            self._held_root = None
            self._resolve_heads(held)
        if span.inline:
            answered, path = self._inline(span)
            if answered:
                self.paths[number] = path
                return
        self._pending.append((number, span, span.column(self.has_bom)))

    def boundary(self, index: int, line: int, kind: str) -> None:
        self._settle()
        self._boundary = (index, line, kind)

    def node(self, event: Any, start: int) -> None:
        frames = self._frames
        cls = type(event)
        if frames:
            top = frames[-1]
            count = top[F_COUNT]
            top[F_COUNT] = count + 1
            parent = top[F_ENTRY]
            if parent is None:  # inside a complex key: no entries
                owner = None
            elif top[F_MAPPING]:
                if count & 1:  # a value: its key's entry names it
                    owner = top[F_KEY]
                else:
                    if cls is ScalarEvent:
                        label = event.value
                    elif cls is AliasEvent:
                        label = self._anchors.get(event.anchor, "?")
                    else:
                        label = "?"
                    top[F_KEY] = self._entry(event, start, label, parent, top)
                    owner = None  # a complex key: nothing inside it gets an entry
            else:
                owner = self._entry(event, start, count, parent, top)
        else:
            owner = self._entry(event, start, None, None, None)
        if cls is ScalarEvent:
            if event.anchor is not None:
                self._anchors[event.anchor] = event.value
        elif cls is not AliasEvent:
            flow = bool(event.flow_style)
            frames.append([owner, cls is MappingStartEvent, flow, 0, None, [-1] if flow else None])

    def end(self, event: Any, end: int) -> None:
        frame = self._frames.pop()
        if frame[F_FLOW]:
            frame[F_END][0] = end

    def finish(self) -> None:
        self._settle()

    # -- entries --------------------------------------------------------------------------
    def _entry(self, event: Any, start: int, label: Any, parent: Entry | None, top: Any) -> Entry:
        mark = event.start_mark
        column = mark.column
        entry = (
            start,
            mark.line,
            column,
            0 if parent is None else parent[DEPTH] + 1,
            label,
            parent,
            top[F_END] if top is not None and top[F_FLOW] else None,
        )
        if self._pending:
            self._heads(entry)
        steps = self._steps
        if parent is None:
            steps.clear()
        else:
            while steps and steps[-1][COLUMN] >= column:
                steps.pop()
            steps.append(entry)
        self._last = entry
        return entry

    def _heads(self, entry: Entry) -> None:
        held = self._held_root
        if held is not None:
            self._held_root = None
            self._resolve_heads(entry if entry[START] == held[START] else held)
        if entry[PARENT] is None:
            self._held_root = entry
        elif self._pending:
            self._resolve_heads(entry)

    # -- the rules ------------------------------------------------------------------------
    def _inline(self, span: Span) -> tuple[bool, str | None]:
        """(True, the inline rule's answer), or (False, None) when it has none.

        The deepest open entry on the comment's line is the latest entry or one of its
        ancestors: any other entry on that line sits in a flow collection closed before
        the latest one started, or is shallower than one of them.
        """
        entry = self._last
        while entry is not None and entry[LINE] == span.line:
            if _open_at(entry, span.start):
                return True, entry_path(entry)
            entry = entry[PARENT]
        boundary = self._boundary
        if boundary is not None and boundary[1] == span.line:
            return True, "." if boundary[2] == "start" else None
        return False, None

    def _resolve_heads(self, head: Entry) -> None:
        path = entry_path(head)
        for number, _, _ in self._pending:
            self.paths[number] = path
        self._pending.clear()

    def _settle(self) -> None:
        """No entry follows the pending comments before a boundary: foot comments."""
        held = self._held_root
        if held is not None:
            self._held_root = None
            self._resolve_heads(held)
        for number, _, column in self._pending:
            self.paths[number] = self._foot(column)
        self._pending.clear()

    def _foot(self, column: int) -> str | None:
        last, boundary = self._last, self._boundary
        if last is None or (boundary is not None and boundary[0] > last[START]):
            return None
        for entry in reversed(self._steps):
            if entry[COLUMN] < column:
                return entry_path(entry)
        return "."
