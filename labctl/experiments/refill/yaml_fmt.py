"""YAML: PyYAML's composer gives every node's start and end marks; entries are cut out of
the text between them (safe_load_all verifies the result, document by document)."""

from __future__ import annotations

import re
from typing import Any

from labctl.experiments.refill.edits import (
    ENTRY_FIELDS,
    DataPath,
    Edit,
    Entry,
    Unsupported,
    content_end,
    flow_edits,
    line_end,
    line_start,
)


def _end_of(node: Any) -> int:
    """Where a node's own text ends (block collections end with their last child)."""
    import yaml

    if isinstance(node, yaml.MappingNode | yaml.SequenceNode) and not node.flow_style:
        last = node.value[-1]
        return _end_of(last[1] if isinstance(node, yaml.MappingNode) else last)
    return int(node.end_mark.index)


def _block_lines(text: str, first: int, node: Any) -> Edit:
    if text[line_start(text, first) : first].strip(" \t-") != "":
        raise Unsupported("an entry shares its first line with other content")
    end = content_end(text, _end_of(node))
    if end <= first:
        raise Unsupported("the entry's value is an alias of a node defined elsewhere")
    return Edit(line_start(text, first), line_end(text, end - 1))


def _dash_before(text: str, start: int) -> int:
    i = start - 1
    while i >= 0 and text[i] in " \t\r\n":
        i -= 1
    if i < 0 or text[i] != "-":
        raise Unsupported("a sequence item without its dash")
    return i


def _emptied(text: str, parent_key: Any | None, kind: str) -> Edit:
    """The collection loses its last element: write `{}`/`[]` where it was."""
    empty = "{}" if kind == "map" else "[]"
    if parent_key is None:
        raise Unsupported("removing the only entry would empty the document")
    m = re.compile(r"[ \t]*:").match(text, parent_key.end_mark.index)
    if m is None:
        raise Unsupported("an emptied collection whose key has no ':'")
    return Edit(m.end(), m.end(), " " + empty)


def _edits(
    text: str, coll: Any, hits: list[int], parent_key: Any | None
) -> dict[int, tuple[Edit, ...]]:
    """Edits removing elements `hits` of a collection, keyed by element index."""
    import yaml

    is_map = isinstance(coll, yaml.MappingNode)
    if coll.flow_style:
        pairs = coll.value if is_map else [(item, item) for item in coll.value]
        spans = [(k.start_mark.index, v.end_mark.index) for k, v in pairs]
        return flow_edits(
            text,
            coll.start_mark.index,
            coll.end_mark.index - 1,
            spans,
            hits,
            trailing_comma_ok=True,
            comments=True,
        )
    out: dict[int, tuple[Edit, ...]] = {}
    for i in hits:
        if is_map:
            key, value = coll.value[i]
            out[i] = (_block_lines(text, key.start_mark.index, value),)
        else:
            item = coll.value[i]
            out[i] = (_block_lines(text, _dash_before(text, item.start_mark.index), item),)
    if len(set(hits)) == len(coll.value):
        out[hits[0]] = (*out[hits[0]], _emptied(text, parent_key, "map" if is_map else "seq"))
    return out


def _names(loader: Any, node: Any, name: str) -> bool:
    import yaml

    if isinstance(node, yaml.ScalarNode):
        return loader.construct_object(node) == name
    if isinstance(node, yaml.MappingNode):
        return any(
            isinstance(k, yaml.ScalarNode)
            and k.value in ENTRY_FIELDS
            and isinstance(v, yaml.ScalarNode)
            and loader.construct_object(v) == name
            for k, v in node.value
        )
    return False


def _walk(loader: Any, text: str, node: Any, path: DataPath, name: str, key: Any,
          out: list[Entry]) -> None:  # fmt: skip
    import yaml

    hits: list[tuple[int, DataPath]] = []
    if isinstance(node, yaml.MappingNode):
        for i, (k, v) in enumerate(node.value):
            kval = loader.construct_object(k) if isinstance(k, yaml.ScalarNode) else None
            if kval == name:
                hits.append((i, (*path, kval)))
            elif kval is not None:
                _walk(loader, text, v, (*path, kval), name, k, out)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            if _names(loader, item, name):
                hits.append((i, (*path, i)))
            else:
                _walk(loader, text, item, (*path, i), name, None, out)
    if hits:
        edits = _edits(text, node, [i for i, _ in hits], key)
        out += [Entry(p, edits.get(i, ())) for i, p in hits]


def entries(text: str, name: str) -> tuple[Any, list[Entry]]:
    """(the documents, the entries naming `name`); the path starts with the document."""
    import yaml

    loader = yaml.SafeLoader(text)
    docs: list[Any] = []
    out: list[Entry] = []
    try:
        index = 0
        while loader.check_node():
            root = loader.get_node()
            _walk(loader, text, root, (index,), name, None, out)
            docs.append(loader.construct_document(root))
            index += 1
    finally:
        loader.dispose()
    return docs, out


def parse(text: str) -> Any:
    import yaml

    return list(yaml.safe_load_all(text))
