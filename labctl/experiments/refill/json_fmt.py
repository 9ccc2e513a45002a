"""JSON: a small scanner records where every value, key and bracket is, so an entry can
be cut out of the text as it is (json.loads verifies the result)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from labctl.experiments.refill.edits import DataPath, Entry, flow_edits, names_entry

_WS = re.compile(r"[ \t\r\n]*")
_STRING = re.compile(r'"(?:[^"\\\x00-\x1f]|\\.)*"')
_SCALAR = re.compile(r"-?\d[\d.eE+-]*|true|false|null")


@dataclass
class Node:
    start: int
    end: int
    value: Any = None  # scalars: the value; containers: None
    items: list[Node] = field(default_factory=list)  # array items / object values
    keys: list[tuple[str, int]] = field(default_factory=list)  # object: (key, key start)
    is_object: bool = False


def _scan(text: str, i: int) -> Node:
    i = _WS.match(text, i).end()  # type: ignore[union-attr]
    ch = text[i : i + 1]
    if ch in "[{":
        node = Node(i, i, is_object=ch == "{")
        i += 1
        while True:
            i = _WS.match(text, i).end()  # type: ignore[union-attr]
            if text[i : i + 1] in "]}":
                node.end = i + 1
                return node
            if node.is_object:
                m = _STRING.match(text, i)
                if m is None:
                    raise ValueError(f"expected a key at {i}")
                node.keys.append((json.loads(m.group(0)), i))
                i = _WS.match(text, m.end()).end()  # type: ignore[union-attr]
                i += 1  # the colon
            child = _scan(text, i)
            node.items.append(child)
            i = _WS.match(text, child.end).end()  # type: ignore[union-attr]
            if text[i : i + 1] == ",":
                i += 1
    m = _STRING.match(text, i) if ch == '"' else _SCALAR.match(text, i)
    if m is None:
        raise ValueError(f"unexpected {ch!r} at {i}")
    return Node(i, m.end(), value=json.loads(m.group(0)))


def _walk(text: str, node: Node, data: Any, path: DataPath, name: str, out: list[Entry]) -> None:
    hits: list[tuple[int, DataPath]] = []
    for i, child in enumerate(node.items):
        key: Any = node.keys[i][0] if node.is_object else i
        if (key == name) if node.is_object else names_entry(data[i], name):
            hits.append((i, (*path, key)))
        else:
            _walk(text, child, data[key], (*path, key), name, out)
    if not hits:
        return
    spans = [
        (node.keys[k][1] if node.is_object else child.start, child.end)
        for k, child in enumerate(node.items)
    ]
    edits = flow_edits(
        text, node.start, node.end - 1, spans, [i for i, _ in hits],
        trailing_comma_ok=False, comments=False,
    )  # fmt: skip
    out += [Entry(p, edits.get(i, ())) for i, p in hits]


def entries(text: str, name: str) -> tuple[Any, list[Entry]]:
    data = json.loads(text)
    out: list[Entry] = []
    _walk(text, _scan(text, 0), data, (), name, out)
    return data, out


def parse(text: str) -> Any:
    return json.loads(text)
