"""TOML: entries are tables (`[refill.exp1]`, and the lines under them), `[[x]]` elements
whose `name`/`experiment` is the experiment, keys (`exp1 = …`, `refill.exp1 = …`), and
elements of arrays and inline tables; located with toml_scan, verified with tomllib."""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from typing import Any

from labctl.experiments.refill.edits import (
    ENTRY_FIELDS,
    DataPath,
    Edit,
    Entry,
    flow_edits,
    names_entry,
)
from labctl.experiments.refill.toml_scan import Statement, Value, scan


def _aot_entries(text: str, stmts: Sequence[Statement], name: str) -> set[DataPath]:
    """[[x]] elements that name the experiment (their `name`/`experiment` key)."""
    out = set()
    for st in stmts:
        if st.kind == "kv" and st.value is not None and len(st.path) >= 2:
            *parent, last = st.path
            if last in ENTRY_FIELDS and isinstance(parent[-1], int):
                try:
                    if st.value.data(text) == name:
                        out.add(tuple(parent))
                except tomllib.TOMLDecodeError:
                    continue
    return out


def _entry_of(path: DataPath, aots: set[DataPath], name: str) -> DataPath | None:
    for n in range(1, len(path) + 1):
        if path[:n] in aots or path[n - 1] == name:
            return path[:n]
    return None


def _flow(text: str, value: Value, data: Any, path: DataPath, name: str,
          out: list[Entry]) -> None:  # fmt: skip
    hits: list[tuple[int, DataPath]] = []
    for i, child in enumerate(value.items):
        if value.kind == "table":
            key = value.keys[i][0]
            here, sub = (*path, *key), data[key[0]]
            hit = len(key) == 1 and key[0] == name
        else:
            here, sub, hit = (*path, i), data[i], names_entry(data[i], name)
        if hit:
            hits.append((i, here))
        elif child.kind != "atom":
            _flow(text, child, sub, here, name, out)
    if not hits:
        return
    spans = [
        (value.keys[k][1] if value.kind == "table" else c.start, c.end)
        for k, c in enumerate(value.items)
    ]
    edits = flow_edits(
        text, value.start, value.end - 1, spans, [i for i, _ in hits],
        trailing_comma_ok=value.kind == "array", comments=value.kind == "array",
    )  # fmt: skip
    out += [Entry(p, edits.get(i, ())) for i, p in hits]


def entries(text: str, name: str) -> tuple[Any, list[Entry]]:
    data = tomllib.loads(text)
    stmts = scan(text)
    aots = _aot_entries(text, stmts, name)
    runs: list[tuple[DataPath, list[Statement]]] = []
    out: list[Entry] = []
    for st in stmts:
        entry = _entry_of(st.path, aots, name)
        if entry is None:
            if st.kind == "kv" and st.value is not None and st.value.kind != "atom":
                node = data
                for part in st.path:
                    node = node[part]
                _flow(text, st.value, node, st.path, name, out)
            runs.append(((), []))
            continue
        if runs and runs[-1][0] == entry:
            runs[-1][1].append(st)
        else:
            runs.append((entry, [st]))
    grouped: dict[DataPath, list[Edit]] = {}
    for entry, run in runs:
        if run:
            grouped.setdefault(entry, []).append(Edit(run[0].start, run[-1].end))
    for entry, edits in grouped.items():
        single = isinstance(entry[-1], int) and _aot_size(stmts, entry) == 1
        out.append(Entry(entry, tuple(edits), drop_key=single))
    return data, out


def _aot_size(stmts: Sequence[Statement], element: DataPath) -> int:
    prefix = element[:-1]
    return len({st.path[-1] for st in stmts if st.kind == "aot" and st.path[:-1] == prefix})


def parse(text: str) -> Any:
    return tomllib.loads(text)


def prune_emptied(data: Any, entries: Sequence[Entry]) -> Any:
    """TOML has no way to keep a table that only held the entry: drop emptied parents."""
    for entry in entries:
        for n in range(len(entry.path) - 1, 0, -1):
            holder = data
            try:
                for part in entry.path[: n - 1]:
                    holder = holder[part]
                key = entry.path[n - 1]
                if isinstance(holder, dict) and holder.get(key) == {}:
                    del holder[key]
            except (KeyError, IndexError, TypeError):
                break
    return data
