"""Checks a stripped text must pass before anything is written.

- `first_difference`: the data of every document must be *strictly* equal: NaN equals NaN,
  `True` is not `1`, `1` is not `1.0`, `0.0` is not `-0.0`, mapping order does not matter
  but key and value types do. Returns where the first difference is, or None.
- `first_node_difference`: the same for composed nodes (tag, scalar value, structure); used
  when `safe_load` cannot construct the data (an application tag such as `!include`).
- `expected_text`: an independent, line-based statement of the byte contract (a
  whole-line comment loses its line, an inline comment loses itself and the blanks before
  it, every other line is identical) to compare the spliced text against.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from datetime import date, datetime
from typing import Any

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from labctl.yamlstrip.keypath import index_segment, key_segment
from labctl.yamlstrip.scan import Span

_MISSING = object()
_SPLIT = re.compile("(\r\n|[\r\n\x85\u2028\u2029])")


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


def expected_text(before: str, spans: Iterable[Span]) -> str:
    """`before` rewritten line by line: what stripping `spans` must produce."""
    pieces = _SPLIT.split(before)  # [line, break, line, break, ..., last line]
    by_line = {span.line: span for span in spans}
    out: list[str] = []
    offset = 0
    for index in range(0, len(pieces), 2):
        content = pieces[index]
        brk = pieces[index + 1] if index + 1 < len(pieces) else ""
        span = by_line.get(index // 2)
        if span is None:
            out.append(content)
            out.append(brk)
        else:
            column = span.start - offset
            prefix = content[:column]
            bom = "\ufeff" if offset == 0 and prefix.startswith("\ufeff") else ""
            kept = prefix[len(bom) :].rstrip(" \t")
            out.append(bom + kept)
            if kept:
                out.append(brk)
        offset += len(content) + len(brk)
    return "".join(out)
