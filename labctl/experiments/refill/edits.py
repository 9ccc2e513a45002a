"""Byte splices that remove one entry, and the data the file must parse to afterwards.

An entry is found by the format's own parser (its marks, or a scanner for JSON/TOML that
records where each value starts and ends); the edit removes exactly the entry's text and
the separator that belonged to it, and nothing is ever re-serialised:

- block layouts (YAML block collections, TOML tables): whole lines, from the entry's
  first line to the end of the line where its content ends (a comment on that line goes
  with it; comment lines above and below stay);
- flow layouts (JSON, YAML/TOML `[...]` and `{...}`): an element alone on its line goes
  with its line (and, when it was the last one, the comma before it if the format allows
  no trailing comma); otherwise `, elem` (or `elem, ` for the first) goes; the only
  element goes with everything between the brackets.

`expected` is the original data with the entries taken out; the new text must parse to
exactly that, or nothing is written.
"""

from __future__ import annotations

import copy
import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

DataPath = tuple[Any, ...]
ENTRY_FIELDS = ("name", "experiment")


class Unsupported(ValueError):
    """The entry is there, but its text cannot be cut out exactly (edit by hand)."""


@dataclass(frozen=True)
class Edit:
    start: int  # replace text[start:end] (str indices) with `insert`
    end: int
    insert: str = ""


@dataclass(frozen=True)
class Entry:
    path: DataPath  # where the entry is in the parsed data
    edits: tuple[Edit, ...]
    drop_key: bool = False  # the container disappears with its last element (TOML [[x]])

    @property
    def label(self) -> str:
        return label(self.path)


def label(path: DataPath) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(document)"


def names_entry(item: Any, name: str) -> bool:
    """A list item that is the entry: the name itself, or a table naming it."""
    if isinstance(item, str):
        return item == name
    return isinstance(item, dict) and any(item.get(f) == name for f in ENTRY_FIELDS)


def splice(text: str, edits: Iterable[Edit]) -> str:
    """Apply non-overlapping edits (ValueError if two overlap)."""
    ordered = sorted(set(edits), key=lambda e: (e.start, e.end))
    if any(e.end < e.start for e in ordered):
        raise ValueError("an entry's text does not follow its key (an alias?)")
    for a, b in itertools.pairwise(ordered):
        if b.start < a.end:
            raise ValueError("two entries overlap")
    for e in reversed(ordered):
        text = text[: e.start] + e.insert + text[e.end :]
    return text


def without(data: Any, entries: Sequence[Entry]) -> Any:
    """`data` with every entry removed (list items highest index first)."""
    out = copy.deepcopy(data)

    def order(entry: Entry) -> list[tuple[int, Any]]:
        return [(0, p) if isinstance(p, int) else (1, str(p)) for p in entry.path]

    for entry in sorted(entries, key=order, reverse=True):
        *parent_path, last = entry.path
        parent = out
        for part in parent_path:
            parent = parent[part]
        del parent[last]
        if entry.drop_key and not parent and parent_path:
            holder = out
            for part in parent_path[:-1]:
                holder = holder[part]
            del holder[parent_path[-1]]
    return out


def line_start(text: str, i: int) -> int:
    return text.rfind("\n", 0, i) + 1


def line_end(text: str, i: int) -> int:
    """The index just after the line break of the line holding index i (or the end)."""
    j = text.find("\n", i)
    return len(text) if j < 0 else j + 1


def content_end(text: str, end: int) -> int:
    """Step back over blanks and line breaks to just after the last content character."""
    while end > 0 and text[end - 1] in " \t\r\n":
        end -= 1
    return end


def whole_lines(text: str, start: int, end: int) -> Edit:
    """The lines from the one holding `start` to the one holding the content before `end`."""
    return Edit(line_start(text, start), line_end(text, max(start, content_end(text, end) - 1)))


_AFTER = re.compile(r"[ \t]*(,)?[ \t]*(#[^\n]*)?(\r?\n)")
_AFTER_NO_COMMENT = re.compile(r"[ \t]*(,)?[ \t]*(\r?\n)")


def _runs(hits: Sequence[int]) -> list[tuple[int, int]]:
    """Consecutive indices as (first, last) runs: [1, 2, 4] -> [(1, 2), (4, 4)]."""
    runs: list[tuple[int, int]] = []
    for i in sorted(set(hits)):
        if runs and runs[-1][1] == i - 1:
            runs[-1] = (runs[-1][0], i)
        else:
            runs.append((i, i))
    return runs


def flow_edits(
    text: str,
    open_at: int,
    close_at: int,
    elems: Sequence[tuple[int, int]],
    hits: Sequence[int],
    *,
    trailing_comma_ok: bool,
    comments: bool,
) -> dict[int, tuple[Edit, ...]]:
    """Remove elements `hits` of a flow collection whose brackets are at open_at/close_at.

    Consecutive elements go as one run; returns {first index of a run: its edits}."""
    if len(set(hits)) == len(elems):
        return {min(hits): (Edit(open_at + 1, close_at),)}
    out: dict[int, tuple[Edit, ...]] = {}
    for first, last in _runs(hits):
        start, end = elems[first][0], elems[last][1]
        after = (_AFTER if comments else _AFTER_NO_COMMENT).match(text, end)
        alone = text[line_start(text, start) : start].strip() == ""
        if alone and after is not None:
            edits = [Edit(line_start(text, start), after.end())]
            if last == len(elems) - 1 and after.group(1) is None and not trailing_comma_ok:
                comma = text.find(",", elems[first - 1][1], start)
                if comma >= 0:
                    edits.append(Edit(comma, comma + 1))
            out[first] = tuple(edits)
        elif first > 0:
            out[first] = (Edit(elems[first - 1][1], end),)
        else:
            out[first] = (Edit(start, elems[last + 1][0]),)
    return out
