"""Where things are in a TOML text: headers, key/value statements and value nodes.

tomllib parses but keeps no positions, so this scanner walks the text once more and
records, for every statement, its full data path and its span (whole lines), and for
every value its span and, inside arrays and inline tables, its elements' spans. It only
locates; tomllib remains the judge of what the text means.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from typing import Any

_BARE = re.compile(r"[A-Za-z0-9_-]+")
_BASIC = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_LITERAL = re.compile(r"'[^'\n]*'")
_ML_BASIC = re.compile(r'"""(?:[^"\\]|\\.|"(?!""))*"""(?:"{1,2}(?!"))?', re.S)
_ML_LITERAL = re.compile(r"'''(?:[^']|'(?!''))*'''(?:'{1,2}(?!'))?", re.S)
_DATETIME = re.compile(
    r"\d{4}-\d{2}-\d{2}(?:[Tt ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:[Zz]|[+-]\d{2}:\d{2})?)?"
)
_ATOM = re.compile(r"[^\s,\]\}#]+")
_SPACE = re.compile(r"[ \t]*")
_FILL = re.compile(r"(?:[ \t\r\n]|#[^\n]*)*")  # blanks, line breaks and comments
_REST = re.compile(r"[ \t]*(?:#[^\n]*)?(?:\r?\n|\Z)")


@dataclass
class Value:
    start: int
    end: int
    items: list[Value] = field(default_factory=list)  # array elements / table values
    keys: list[tuple[tuple[str, ...], int]] = field(default_factory=list)  # inline table
    kind: str = "atom"  # atom, array, table

    def data(self, text: str) -> Any:
        return tomllib.loads("v = " + text[self.start : self.end])["v"]


@dataclass
class Statement:
    kind: str  # "table", "aot" (a [[header]]) or "kv"
    path: tuple[Any, ...]  # full data path (an [[x]] element's index included)
    start: int  # line start
    end: int  # after the line break of its last line
    value: Value | None = None


def _key(text: str, i: int) -> tuple[tuple[str, ...], int]:
    parts = []
    while True:
        i = _SPACE.match(text, i).end()  # type: ignore[union-attr]
        ch = text[i : i + 1]
        m = (_BASIC if ch == '"' else _LITERAL if ch == "'" else _BARE).match(text, i)
        if m is None:
            raise ValueError(f"bad key at {i}")
        raw = m.group(0)
        parts.append(tomllib.loads(f"k = {raw}")["k"] if ch in "\"'" else raw)
        i = _SPACE.match(text, m.end()).end()  # type: ignore[union-attr]
        if text[i : i + 1] != ".":
            return tuple(parts), i
        i += 1


def _value(text: str, i: int) -> Value:
    ch = text[i : i + 1]
    if ch in ("[", "{"):
        node = Value(i, i, kind="array" if ch == "[" else "table")
        i += 1
        while True:
            i = (_FILL if ch == "[" else _SPACE).match(text, i).end()  # type: ignore[union-attr]
            if text[i : i + 1] in "]}":
                node.end = i + 1
                return node
            if node.kind == "table":
                key, j = _key(text, i)
                node.keys.append((key, i))
                i = _SPACE.match(text, j + 1).end()  # type: ignore[union-attr]
            child = _value(text, i)
            node.items.append(child)
            i = (_FILL if ch == "[" else _SPACE).match(text, child.end).end()  # type: ignore[union-attr]
            if text[i : i + 1] == ",":
                i += 1
    for rx in (_ML_BASIC, _ML_LITERAL, _BASIC, _LITERAL, _DATETIME, _ATOM):
        m = rx.match(text, i)
        if m is not None and m.end() > i:
            return Value(i, m.end())
    raise ValueError(f"bad value at {i}")


def scan(text: str) -> list[Statement]:
    out: list[Statement] = []
    table: tuple[Any, ...] = ()
    aot_count: dict[tuple[Any, ...], int] = {}
    i = 0
    while True:
        i = _FILL.match(text, i).end()  # type: ignore[union-attr]
        if i >= len(text):
            return out
        start = text.rfind("\n", 0, i) + 1
        if text.startswith("[[", i):
            key, j = _key(text, i + 2)
            n = aot_count.get(key, -1) + 1
            table = (*_resolve(key, aot_count), n)
            aot_count[key] = n
            aot_count = {k: v for k, v in aot_count.items() if k[: len(key)] != key or k == key}
            end = _REST.match(text, j + 2).end()  # type: ignore[union-attr]
            out.append(Statement("aot", table, start, end))
        elif text.startswith("[", i):
            key, j = _key(text, i + 1)
            table = _resolve(key, aot_count)
            end = _REST.match(text, j + 1).end()  # type: ignore[union-attr]
            out.append(Statement("table", table, start, end))
        else:
            key, j = _key(text, i)
            value = _value(text, _SPACE.match(text, j + 1).end())  # type: ignore[union-attr]
            end = _REST.match(text, value.end).end()  # type: ignore[union-attr]
            out.append(Statement("kv", (*table, *key), start, end, value))
        i = end


def _resolve(key: tuple[str, ...], aot_count: dict[tuple[Any, ...], int]) -> tuple[Any, ...]:
    """[a.b] under [[a]] means a[last].b: put the array indices into the path."""
    path: list[Any] = []
    for n in range(1, len(key) + 1):
        path.append(key[n - 1])
        if key[:n] in aot_count and n < len(key):
            path.append(aot_count[key[:n]])
    return tuple(path)
