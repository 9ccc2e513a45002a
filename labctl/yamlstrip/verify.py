"""Checks a stripped text must pass before anything is written.

- `first_difference`: the data of every document must be *strictly* equal: NaN equals NaN,
  `True` is not `1`, `1` is not `1.0`, `0.0` is not `-0.0`, mapping order does not matter
  but key and value types do. Returns where the first difference is, or None.
- `first_node_difference`: the same for composed nodes (tag, scalar value, structure); used
  when `safe_load` cannot construct the data (an application tag such as `!include`).
- `contract_holds`: an independent, line-based statement of the byte contract (a
  whole-line comment loses its line, an inline comment loses itself and the blanks before
  it, every other line is identical) checked against the spliced text.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import date, datetime
from typing import Any

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from labctl.yamlstrip.keypath import index_segment, key_segment
from labctl.yamlstrip.spans import LINE_BREAK_CHARS, Span

_MISSING = object()


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _describe(path: str, a: Any, b: Any) -> str:
    where = path or "."
    return f"{where}: {_short(a)} ({type(a).__name__}) became {_short(b)} ({type(b).__name__})"


def _scalar_equal(a: Any, b: Any) -> bool:
    if isinstance(a, float):
        if math.isnan(a):
            return math.isnan(b)
        return bool(a == b) and math.copysign(1.0, a) == math.copysign(1.0, b)
    if isinstance(a, datetime):
        return bool(a == b) and a.utcoffset() == b.utcoffset()
    if isinstance(a, date):
        return bool(a == b)
    return bool(a == b)


def _find_key(key: Any, other: dict[Any, Any] | set[Any], lookup: dict[Any, Any]) -> Any:
    """The key of `other` strictly equal to `key`, or _MISSING."""
    found = lookup.get(key, _MISSING)
    if found is not _MISSING and type(found) is type(key) and _scalar_equal(key, found):
        return found
    for candidate in other:  # NaN keys, or `1` found where `True` was asked
        if type(candidate) is type(key) and _scalar_equal(key, candidate):
            return candidate
    return _MISSING


def first_difference(a: Any, b: Any, path: str = "") -> str | None:
    """None when `a` and `b` are strictly equal, else a description of the first difference."""
    return _diff(a, b, path, set())


def _diff(a: Any, b: Any, path: str, seen: set[tuple[int, int]]) -> str | None:
    if type(a) is not type(b):
        return _describe(path, a, b)
    if isinstance(a, dict | list | set):
        pair = (id(a), id(b))
        if pair in seen:  # shared or recursive (anchors and aliases): already compared
            return None
        seen.add(pair)
        if len(a) != len(b):
            return f"{path or '.'}: {len(a)} entries became {len(b)}"
        if isinstance(a, list):
            for i, (x, y) in enumerate(zip(a, b, strict=True)):
                found = _diff(x, y, path + index_segment(i), seen)
                if found is not None:
                    return found
            return None
        lookup = {k: k for k in b}
        for key in a:
            other = _find_key(key, b, lookup)
            if other is _MISSING:
                return f"{path or '.'}: {_short(key)} is missing after stripping"
            if isinstance(a, dict):
                found = _diff(a[key], b[other], path + key_segment(key), seen)
                if found is not None:
                    return found
        return None
    if _scalar_equal(a, b):
        return None
    return _describe(path, a, b)


def first_node_difference(a: Node, b: Node, path: str = "") -> str | None:
    """Like `first_difference`, for composed nodes (tags and raw scalar values)."""
    return _node_diff(a, b, path, set())


def _node_diff(a: Node, b: Node, path: str, seen: set[tuple[int, int]]) -> str | None:
    where = path or "."
    if type(a) is not type(b) or a.tag != b.tag:
        return f"{where}: {a.tag} node became {b.tag} node"
    if isinstance(a, ScalarNode):
        return None if a.value == b.value else _describe(path, a.value, b.value)
    pair = (id(a), id(b))
    if pair in seen:
        return None
    seen.add(pair)
    if len(a.value) != len(b.value):
        return f"{where}: {len(a.value)} entries became {len(b.value)}"
    if isinstance(a, SequenceNode):
        for i, (x, y) in enumerate(zip(a.value, b.value, strict=True)):
            found = _node_diff(x, y, path + index_segment(i), seen)
            if found is not None:
                return found
    elif isinstance(a, MappingNode):
        for (ka, va), (kb, vb) in zip(a.value, b.value, strict=True):
            label = key_segment(ka.value if isinstance(ka, ScalarNode) else "?")
            found = _node_diff(ka, kb, path + label, seen) or _node_diff(va, vb, path + label, seen)
            if found is not None:
                return found
    return None


def _line_start(text: str, lo: int, pos: int, breaks: str) -> int:
    """The offset after the last line break in text[lo:pos], else `lo`."""
    found = lo
    for ch in breaks:
        at = text.rfind(ch, lo, pos)
        if at >= found:
            found = at + 1
    return found


def contract_holds(before: str, spans: Sequence[Span], after: str) -> bool:
    """Is `after` exactly `before` with each comment cut as the contract says?

    Restated line by line, independently of how the cut was made: a line whose comment
    has only blanks (and, on line 1, a BOM) before it is removed with its line break (the
    BOM stays); otherwise the comment and the blanks before it go and the break stays;
    every other character is unchanged. Compares piece by piece, without building the
    expected text.
    """
    pos = apos = 0  # next unchecked offset in before / after
    breaks = "".join(ch for ch in LINE_BREAK_CHARS if ch in before)
    for span in spans:
        end = span.end
        if end < len(before) and before[end] not in LINE_BREAK_CHARS:
            return False  # a comment runs to the end of its line
        start = _line_start(before, pos, span.start, breaks)
        kept = before[start : span.start]
        bom = "\ufeff" if start == 0 and kept.startswith("\ufeff") else ""
        kept = kept[len(bom) :].rstrip(" \t")
        if kept:
            piece, pos_next = bom + kept, end  # the break after it is checked next
        else:
            brk = 2 if before.startswith("\r\n", end) else (1 if end < len(before) else 0)
            piece, pos_next = bom, end + brk
        unchanged = before[pos:start]
        if not after.startswith(unchanged, apos) or not after.startswith(
            piece, apos + len(unchanged)
        ):
            return False
        apos += len(unchanged) + len(piece)
        pos = pos_next
    rest = before[pos:]
    return len(after) - apos == len(rest) and after.endswith(rest)
