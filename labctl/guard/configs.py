"""forbid_setting: a key in launch configs must not hold a value (e.g. registration off).

Files are read with their parsers — YAML (every document), TOML, JSON by suffix — never
grepped, so the key inside a comment or inside a string value is not a setting. `key` is
a dotted path from the top of the document (`train.db.enable_registration`) or a bare
name, which matches that key at any depth; lists are looked through. A match is a
violation only when the value equals the forbidden one with the same type (`1` is not
`true`, the string "true" is not `true`).
"""

from __future__ import annotations

import glob
import json
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from labctl.guard.rules import Rule
from labctl.records import error_record

YAML_SUFFIXES = (".yaml", ".yml")
Found = tuple[str, Any, int | None]  # key path, value, line (1-based, YAML only)


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def _wanted(path: list[str], key: str) -> bool:
    return path == key.split(".") if "." in key else bool(path) and path[-1] == key


def _walk_data(value: Any, path: list[str]) -> Iterator[tuple[list[str], Any]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield [*path, str(k)], v
            yield from _walk_data(v, [*path, str(k)])
    elif isinstance(value, list):
        for item in value:
            yield from _walk_data(item, path)


def _walk_yaml(node: Any, path: list[str]) -> Iterator[tuple[list[str], Any, Any]]:
    import yaml

    if isinstance(node, yaml.MappingNode):
        for knode, vnode in node.value:
            key = [*path, str(knode.value)]
            yield key, vnode, knode
            yield from _walk_yaml(vnode, key)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            yield from _walk_yaml(item, path)


def _yaml_found(text: str, key: str) -> list[Found]:
    import yaml

    loader = yaml.SafeLoader(text)
    out: list[Found] = []
    try:
        while loader.check_node():
            root = loader.get_node()
            for path, vnode, knode in _walk_yaml(root, []):
                if _wanted(path, key):
                    value = loader.construct_object(vnode, deep=True)
                    out.append((".".join(path), value, knode.start_mark.line + 1))
    finally:
        loader.dispose()
    return out


def settings_in(path: Path, key: str) -> list[Found]:
    """Every occurrence of `key` in the file (raises ValueError/OSError if unreadable)."""
    text = path.read_text("utf-8")
    suffix = path.suffix.lower()
    if suffix in YAML_SUFFIXES:
        return _yaml_found(text, key)
    data = tomllib.loads(text) if suffix == ".toml" else json.loads(text)
    return [(".".join(p), v, None) for p, v in _walk_data(data, []) if _wanted(p, key)]


def forbid_setting(rule: Rule, base: Path) -> list[dict[str, Any]]:
    assert rule.key is not None
    paths: set[Path] = set()
    for pattern in rule.files:
        full = pattern if Path(pattern).is_absolute() else str(base / pattern)
        paths.update(Path(p) for p in glob.glob(full, recursive=True) if Path(p).is_file())
    hits, out = [], []
    for path in sorted(paths):
        try:
            found = settings_in(path, rule.key)
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            out.append(_unreadable(rule, path, exc))
            continue
        except Exception as exc:  # yaml.YAMLError: imported lazily
            if type(exc).__module__.startswith("yaml"):
                out.append(_unreadable(rule, path, exc))
                continue
            raise
        hits += [
            {"path": str(path), "key_path": kp, "value": v, "line": line}
            for kp, v, line in found
            if _same(v, rule.value)
        ]
    if hits:
        out.append(
            {
                "kind": "violation",
                "rule": rule.name,
                "rule_kind": rule.kind,
                "cluster": None,
                "count": len(hits),
                "limit": 0,
                "jobs": [],
                "files": hits,
                "message": (rule.message + ": " if rule.message else "")
                + f"{rule.key} = {json.dumps(rule.value)} in {len(hits)} place(s): "
                + ", ".join(
                    f"{h['path']}" + (f":{h['line']}" if h["line"] else "") for h in hits[:5]
                ),
            }
        )
    return out


def _unreadable(rule: Rule, path: Path, exc: BaseException) -> dict[str, Any]:
    detail = getattr(exc, "strerror", None) or (str(exc).splitlines() or [type(exc).__name__])[0]
    return error_record(
        "unparseable",
        f"guard rule {rule.name}: cannot read {path} as a config: {detail}",
        rule=rule.name,
        path=str(path),
    )
