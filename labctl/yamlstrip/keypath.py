"""Which YAML key a comment sat on, for the notes `--move-to` writes.

Key paths are jq-style strings: `.train.optimizer.lr`, `.layers[2].name`, `.["a.b"]` for
keys that are not plain identifiers, `.` for a document root. They come from the positions
of the composed nodes (`start_mark`) — go-yaml's head/line/foot model computed from
positions, so nothing can be attached to the wrong node:

- inline comment: the deepest key or item that starts on the comment's line before it
  (`lr: 3e-4  # tuned` -> `.train.lr`, `- 5  # x` -> `.steps[0]`), ignoring the
  insides of a flow collection closed before it (`steps: [1, 2]  # x` -> `.steps`, but
  `steps: [1,  # x` -> `.steps[0]`);
- a comment on a `---` line with no such key: `.` (the document it starts); on a `...` or
  directive line: None;
- otherwise a head comment: the next key or item in document order (the shallowest one
  at that position, so a comment above `- a: 1` belongs to the item, not to `a`), unless a
  `---`/`...`/directive lies between the comment and that node;
- otherwise a foot comment: the last key or item of the same document whose column is
  left of the comment's (its indentation says what it closes), else the document root;
- a comment outside every document (before a `---` with no node after it, after a
  `...`): None.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from yaml.error import Mark
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from labctl.yamlstrip.scan import Boundary, Span

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")


def key_segment(key: object) -> str:
    """One mapping key as a path segment: `.name` or `.["odd key"]`."""
    if isinstance(key, str) and _IDENT.match(key):
        return "." + key
    text = key if isinstance(key, str) else repr(key)
    return ".[" + json.dumps(text, ensure_ascii=False) + "]"


def index_segment(index: int) -> str:
    return f"[{index}]"


@dataclass(slots=True)
class Entry:
    """A key of a mapping, an item of a sequence, or a document root (depth 0)."""

    start: int
    line: int
    column: int
    depth: int
    doc: int
    segment: str
    parent: Entry | None
    flow_end: int = -1  # for a key or item of a flow collection: where that collection ends

    def path(self) -> str:
        segments: list[str] = []
        entry: Entry | None = self
        while entry is not None:
            segments.append(entry.segment)
            entry = entry.parent
        text = "".join(reversed(segments))
        return text if text.startswith(".") else "." + text


def _entries(roots: Sequence[Node]) -> list[Entry]:
    """Every entry in document order (by position, shallower first at one position).

    An alias has no position of its own (its node's marks point at the anchor), so an
    aliased sequence item gets no entry and an aliased key is placed at its value.
    """
    out: list[Entry] = []
    seen: set[int] = set()  # nodes entered (anchors: later uses are aliases)
    seen_keys: set[int] = set()
    for doc, root in enumerate(roots):
        # (node to enter, position of its entry, segment, parent entry, flow end)
        stack: list[tuple[Node, Mark, str, Entry | None, int]] = [
            (root, root.start_mark, "", None, -1)
        ]
        while stack:
            node, pos, segment, parent, flow_end = stack.pop()
            depth = 0 if parent is None else parent.depth + 1
            entry = Entry(pos.index, pos.line, pos.column, depth, doc, segment, parent, flow_end)
            out.append(entry)
            if id(node) in seen:
                continue
            seen.add(id(node))
            children: list[tuple[Node, Mark, str, Entry | None, int]] = []
            if isinstance(node, MappingNode):
                flow = node.end_mark.index if node.flow_style else -1
                for key, value in node.value:
                    label = key.value if isinstance(key, ScalarNode) else "?"
                    mark = key.start_mark
                    if id(key) in seen_keys:
                        if id(value) in seen:
                            continue
                        mark = value.start_mark
                    seen_keys.add(id(key))
                    children.append((value, mark, key_segment(label), entry, flow))
            elif isinstance(node, SequenceNode):
                flow = node.end_mark.index if node.flow_style else -1
                pending: set[int] = set()
                for i, item in enumerate(node.value):
                    if id(item) in seen or id(item) in pending:
                        continue
                    pending.add(id(item))
                    children.append((item, item.start_mark, index_segment(i), entry, flow))
            stack.extend(reversed(children))
    out.sort(key=lambda e: (e.start, e.depth))
    return out


class KeyIndex:
    """Answers `path_for(span)` for the comments of one text."""

    def __init__(self, roots: Sequence[Node], boundaries: Sequence[Boundary]) -> None:
        self.entries = _entries(roots)
        self.starts = [e.start for e in self.entries]
        self.boundaries = sorted(boundaries)
        self.boundary_starts = [b.index for b in self.boundaries]

    def _boundary_between(self, lo: int, hi: int) -> bool:
        """Is there a boundary token at an offset in (lo, hi)?"""
        i = bisect_right(self.boundary_starts, lo)
        return i < len(self.boundaries) and self.boundaries[i].index < hi

    def path_for(self, span: Span, column: int, inline: bool) -> str | None:
        entries = self.entries
        i = bisect_left(self.starts, span.start)  # entries before the comment: [0, i)
        if inline:
            best: Entry | None = None
            j = i - 1
            while j >= 0 and entries[j].line == span.line:
                # skip keys and items of a flow collection closed before the comment
                entry = entries[j]
                open_here = entry.flow_end < 0 or entry.flow_end > span.start
                if open_here and (best is None or entry.depth > best.depth):
                    best = entry
                j -= 1
            if best is not None:
                return best.path()
            k = bisect_left(self.boundary_starts, span.start) - 1
            if k >= 0 and self.boundaries[k].line == span.line:
                return "." if self.boundaries[k].kind == "start" else None
        # head: the next entry, unless a document boundary comes first
        if i < len(entries) and not self._boundary_between(span.start, entries[i].start):
            head = entries[i]
            if head.depth == 0 and i + 1 < len(entries) and entries[i + 1].start == head.start:
                head = entries[i + 1]
            return head.path()
        # foot: something before it in the same document, by indentation
        if i == 0 or self._boundary_between(entries[i - 1].start, span.start):
            return None
        doc = entries[i - 1].doc
        j = i - 1
        while j >= 0 and entries[j].doc == doc:
            if entries[j].column < column and entries[j].depth > 0:
                return entries[j].path()
            if entries[j].depth == 0:
                return "."
            j -= 1
        return "."
