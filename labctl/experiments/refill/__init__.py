"""Keep-N/refill entries naming an experiment, removed from YAML/TOML/JSON byte-exactly.

`plan(path, raw, name)` finds the entries (by the file's own parser), splices them out of
the text (labctl.experiments.refill.edits) and re-parses the result: it must equal the
original data minus exactly those entries, or the plan is not verified and nothing may be
written. What an entry is, in every format: a key equal to the name (at any depth), a
list item equal to the name, or a list item that is a table whose `name` or `experiment`
is the name. Only the outermost match counts (its insides go with it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from labctl.experiments.refill.edits import Entry, Unsupported, label, splice, without

FORMATS = {".yaml": "yaml", ".yml": "yaml", ".json": "json", ".toml": "toml"}


@dataclass
class RefillPlan:
    path: Path
    entries: list[dict[str, Any]] = field(default_factory=list)  # {entry, removed}
    new: bytes | None = None
    verified: bool = True
    error: str | None = None


def _module(fmt: str) -> Any:
    from labctl.experiments.refill import json_fmt, toml_fmt, yaml_fmt

    return {"yaml": yaml_fmt, "json": json_fmt, "toml": toml_fmt}[fmt]


def _label(entry: Entry, fmt: str, docs: int) -> str:
    path = entry.path[1:] if fmt == "yaml" and docs == 1 else entry.path
    return label(path)


def plan(path: Path, raw: bytes, name: str) -> RefillPlan:
    out = RefillPlan(path)
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        out.verified, out.error = False, "not a .yaml, .yml, .json or .toml file"
        return out
    mod = _module(fmt)
    try:
        text = raw.decode("utf-8")
        data, found = mod.entries(text, name)
    except Unsupported as exc:
        out.verified, out.error = False, f"cannot cut the entry out exactly: {exc}; edit by hand"
        return out
    except Exception as exc:  # any parser's error: the file cannot be read as its format
        out.verified, out.error = False, f"cannot read it as {fmt}: {_first_line(exc)}"
        return out
    if not found:
        return out
    docs = len(data) if fmt == "yaml" else 1
    out.entries = [
        {"entry": _label(e, fmt, docs), "removed": [text[x.start : x.end] for x in e.edits]}
        for e in found
    ]
    try:
        new_text = splice(text, [x for e in found for x in e.edits])
        new_data = mod.parse(new_text)
    except Exception as exc:
        out.verified, out.error = False, f"the edit would break the file: {_first_line(exc)}"
        return out
    expected = without(data, found)
    if new_data != expected and not (
        fmt == "toml" and new_data == mod.prune_emptied(expected, found)
    ):
        out.verified = False
        out.error = "removing the entries would change other data; edit this file by hand"
        return out
    out.new = new_text.encode("utf-8")
    return out


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
