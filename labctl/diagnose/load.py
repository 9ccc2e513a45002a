"""Loading a catalog: the shipped TOML merged with user files, validated, compiled.

Merging a user file: an entry with a new id is added; an existing id is extended (scalar
fields replace, list fields append) unless it says `merge = "replace"` (then it replaces the
entry whole) or `disabled = true` (then the entry is dropped). Every problem is reported as a
`ConfigError` (exit 2) naming the file, the entry and the field.
"""

from __future__ import annotations

import functools
import re
import tomllib
from collections.abc import Iterable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from labctl.diagnose import regex
from labctl.diagnose.catalog import (
    CATEGORY_SEVERITY,
    CONTROL_FIELDS,
    KNOWN_FIELDS,
    LIST_FIELDS,
    PATTERN_FIELDS,
    ROLES,
    SEVERITIES,
    Catalog,
    Entry,
)
from labctl.diagnose.tables import PATTERN_TABLES, pattern_table
from labctl.diagnose.tables import catalog_error as _err
from labctl.errors import ConfigError

ACTION_FIELDS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    # type: (required, optional)
    "none": (frozenset(), frozenset()),
    "resubmit": (frozenset(), frozenset({"resume", "exclude_node", "kill_first", "backoff_s"})),
    "scale_arg": (frozenset({"arg", "factor"}), frozenset({"min", "max", "once"})),
    "reduce_scope": (
        frozenset({"arg", "factor"}),
        frozenset({"min", "once", "kill_first", "resume"}),
    ),
    "add_arg": (frozenset({"arg"}), frozenset({"value", "once"})),
    "set_env": (frozenset({"name"}), frozenset({"value", "unset", "once"})),
    "install_module": (frozenset({"from_group"}), frozenset({"module", "once"})),
    "prune_disk": (frozenset(), frozenset({"min_free_bytes"})),
    "scale_resource": (frozenset({"resource", "factor"}), frozenset({"max"})),
    "previous_checkpoint": (frozenset(), frozenset()),
}
# value types of action fields (any other field: a string)
_ACTION_NUMBERS = frozenset({"factor", "min", "max", "backoff_s", "min_free_bytes"})
_ACTION_FLAGS = frozenset({"once", "unset", "resume", "exclude_node", "kill_first"})
_ID = re.compile(r"^[a-z][a-z0-9_]*$")
MAX_NEAR_LINES = 20


def _check_entry(raw: Mapping[str, Any], src: str, where: str) -> dict[str, Any]:
    unknown = sorted(set(raw) - KNOWN_FIELDS)
    if unknown:
        raise _err(src, where, f"unknown field(s) {', '.join(unknown)}")
    out = _check_lists(raw, src, where)
    _check_scalars(out, src, where)
    if "action" in out:
        _check_action(out["action"], src, where)
    for k in PATTERN_FIELDS:
        for p in out.get(k, ()):
            try:
                regex.compile_one(p)
            except regex.PatternError as exc:
                raise _err(src, where, f"field {k!r}: pattern {p!r}: {exc}") from None
    return out


_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f]")


def _check_lists(raw: Mapping[str, Any], src: str, where: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in raw.items():
        if k in LIST_FIELDS:
            if not isinstance(v, list):
                raise _err(src, where, f"field {k!r} must be a list")
            want: type = int if k == "exit_codes" else str
            for item in v:
                if not isinstance(item, want) or isinstance(item, bool):
                    raise _err(src, where, f"field {k!r}: {item!r} is not a {want.__name__}")
                if k in PATTERN_FIELDS and isinstance(item, str) and _CONTROL.search(item):
                    # a regex in a TOML "basic string": \b became a backspace, \f a form feed
                    raise _err(
                        src,
                        where,
                        f"field {k!r}: {item!r} holds a control character; write "
                        "regexes as TOML literal strings ('...'), where a backslash stays one",
                    )
            out[k] = tuple(v)
        else:
            out[k] = v
    return out


def _check_scalars(out: Mapping[str, Any], src: str, where: str) -> None:
    for k in ("id", "title", "category", "fix", "severity", "role"):
        if k in out and not isinstance(out[k], str):
            raise _err(src, where, f"field {k!r} must be a string")
    for k in ("specificity", "near_lines", "min_hits"):
        if k in out and (not isinstance(out[k], int) or isinstance(out[k], bool) or out[k] < 0):
            raise _err(src, where, f"field {k!r} must be a non-negative integer")
    if "near_lines" in out and out["near_lines"] > MAX_NEAR_LINES:
        raise _err(src, where, f"field 'near_lines' must be at most {MAX_NEAR_LINES}")
    for k in ("retryable", "disabled", "logged", "survivable", "last_only"):
        if k in out and not isinstance(out[k], bool):
            raise _err(src, where, f"field {k!r} must be true or false")
    if "id" in out and not _ID.match(out["id"]):
        raise _err(src, where, f"id {out['id']!r} must be snake_case")
    if "category" in out and not _ID.match(out["category"]):
        raise _err(src, where, f"category {out['category']!r} must be snake_case")
    if "role" in out and out["role"] not in ROLES:
        raise _err(src, where, f"role must be one of {', '.join(ROLES)}")
    if "severity" in out and out["severity"] not in SEVERITIES:
        raise _err(src, where, f"severity must be one of {', '.join(SEVERITIES)}")
    if "fingerprint" in out and out["fingerprint"] not in ("line", "entry"):
        raise _err(src, where, "fingerprint must be 'line' or 'entry'")
    if "merge" in out and out["merge"] not in ("extend", "replace"):
        raise _err(src, where, "merge must be 'extend' or 'replace'")


def _check_action(action: Any, src: str, where: str) -> None:
    if not isinstance(action, dict) or not isinstance(action.get("type"), str):
        raise _err(src, where, "field 'action' must be a table with a 'type'")
    kind = action["type"]
    if kind not in ACTION_FIELDS:
        raise _err(src, where, f"action type {kind!r} is not one of {', '.join(ACTION_FIELDS)}")
    required, optional = ACTION_FIELDS[kind]
    missing = sorted(required - set(action))
    extra = sorted(set(action) - required - optional - {"type"})
    if missing:
        raise _err(src, where, f"action {kind!r} needs {', '.join(missing)}")
    if extra:
        raise _err(src, where, f"action {kind!r}: unknown field(s) {', '.join(extra)}")
    for k, v in action.items():
        number = isinstance(v, int | float) and not isinstance(v, bool)
        flag = isinstance(v, bool)
        if (k in _ACTION_NUMBERS and not number) or (k in _ACTION_FLAGS and not flag):
            want = "a number" if k in _ACTION_NUMBERS else "true or false"
            raise _err(src, where, f"action {kind!r}: {k} must be {want}")
    if kind in ("scale_arg", "reduce_scope") and action["factor"] <= 0:
        raise _err(src, where, f"action {kind!r}: factor must be positive")
    if kind == "set_env" and ("value" in action) == bool(action.get("unset")):
        raise _err(src, where, "action 'set_env' needs a value, or unset = true (not both)")


def _finish(d: Mapping[str, Any], src: str, where: str) -> Entry:
    for k in ("id", "title", "category", "fix"):
        if k not in d:
            raise _err(src, where, f"missing required field {k!r}")
    role = d.get("role", "fatal")
    if role != "meta" and not (d.get("any") or d.get("all") or d.get("states")):
        raise _err(src, where, "needs at least one pattern in 'any' or 'all' (or 'states')")
    fields = {k: v for k, v in d.items() if k not in CONTROL_FIELDS}
    fields.setdefault("severity", CATEGORY_SEVERITY.get(d["category"], "high"))
    fields.setdefault("role", "fatal")
    fields.setdefault("specificity", 50)
    fields.setdefault("retryable", False)
    fields.setdefault("action", {"type": "none"})
    fields["source"] = src
    return Entry(**fields)


Parsed = tuple[
    list[dict[str, Any]], dict[str, str], dict[str, tuple[str, ...]], dict[str, list[str]]
]


def _parse(text: str, src: str) -> Parsed:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _err(src, "file", f"not valid TOML: {exc}") from None
    known = {"version", "entry", "module_packages", "arg_families", *PATTERN_TABLES}
    extra = sorted(set(data) - known)
    if extra:
        raise _err(src, "file", f"unknown top-level key(s) {', '.join(extra)}")
    if data.get("version", 1) != 1:
        raise _err(src, "file", f"unsupported catalog version {data.get('version')!r}")
    raw = data.get("entry", [])
    if not isinstance(raw, list):
        raise _err(src, "file", "'entry' must be an array of tables ([[entry]])")
    out = []
    for n, item in enumerate(raw, 1):
        where = f"entry {item.get('id', f'#{n}')!s}" if isinstance(item, dict) else f"entry #{n}"
        if not isinstance(item, dict):
            raise _err(src, where, "must be a table")
        if "id" not in item:
            raise _err(src, where, "missing required field 'id'")
        out.append(_check_entry(item, src, where))
    mp = data.get("module_packages", {})
    if not isinstance(mp, dict) or not all(isinstance(v, str) for v in mp.values()):
        raise _err(src, "module_packages", "must map module names to package names")
    tables: dict[str, list[str]] = {}
    for name, keys in PATTERN_TABLES.items():
        tables.update(pattern_table(data.get(name, {}), src, name, keys))
    return out, dict(mp), _families(data.get("arg_families", {}), src), tables


def _families(raw: Any, src: str) -> dict[str, tuple[str, ...]]:
    """`[arg_families]`: a family name -> the spellings of one command-line argument."""
    ok = isinstance(raw, dict) and all(
        isinstance(v, list) and v and all(isinstance(x, str) and x.strip() for x in v)
        for v in raw.values()
    )
    if not ok:
        raise _err(src, "arg_families", "must map family names to non-empty lists of names")
    for name in raw:
        if not _ID.match(name):
            raise _err(src, "arg_families", f"family {name!r} must be snake_case")
    return {k: tuple(v) for k, v in raw.items()}


def _merge(base: dict[str, dict[str, Any]], items: list[dict[str, Any]], src: str) -> None:
    for item in items:
        ident = item["id"]
        where = f"entry {ident}"
        if item.get("disabled"):
            base.pop(ident, None)
            continue
        if ident not in base or item.get("merge") == "replace":
            new = dict(item)
            new["_src"] = src
            base[ident] = new
            continue
        cur = base[ident]
        for k, v in item.items():
            if k in CONTROL_FIELDS:
                continue
            if k in LIST_FIELDS:
                cur[k] = tuple(cur.get(k, ())) + tuple(x for x in v if x not in cur.get(k, ()))
            else:
                cur[k] = v
        cur["_src"] = f"{cur['_src']}+{src}" if src not in cur["_src"] else cur["_src"]
        if "title" not in cur:
            raise _err(src, where, "missing required field 'title'")


def shipped_text() -> str:
    return resources.files("labctl").joinpath("data/catalog.toml").read_text(encoding="utf-8")


def load_catalog(
    user_files: Iterable[str | Path] = (), *, shipped: bool = True, use_re2: bool | None = None
) -> Catalog:
    """The shipped catalog merged with `user_files` (in order), validated and compiled."""
    merged: dict[str, dict[str, Any]] = {}
    modules: dict[str, str] = {}
    families: dict[str, tuple[str, ...]] = {}
    patterns: dict[str, list[str]] = {"progress": [], "notice_before": [], "notice_line": []}
    sources: list[tuple[str, str]] = []
    if shipped:
        sources.append(("labctl/data/catalog.toml", shipped_text()))
    for f in user_files:
        p = Path(f).expanduser()
        try:
            sources.append((str(p), p.read_text(encoding="utf-8")))
        except OSError as exc:
            raise _err(str(p), "file", f"cannot read: {exc.strerror or exc}") from None
    for src, text in sources:
        items, mp, fam, tables = _parse(text, src)
        _merge(merged, items, src)
        modules.update(mp)
        for name, spellings in fam.items():  # a user file adds spellings to a family
            families[name] = tuple(dict.fromkeys(families.get(name, ()) + spellings))
        for name, pats in tables.items():
            patterns[name].extend(p for p in pats if p not in patterns[name])
    entries = []
    for ident, d in merged.items():
        src = d.pop("_src")
        entries.append(_finish(d, src.split("+")[-1], f"entry {ident}"))
        d["_src"] = src
    ids = {e.id for e in entries}
    cats = {e.category for e in entries}
    for e in entries:
        for t in e.explains + e.explains_later:
            if t != "*" and t not in ids and not (t.startswith("category:") and t[9:] in cats):
                raise _err(e.source, f"entry {e.id}", f"explains unknown id or category {t!r}")
    for required in ("unknown", "hung_no_output"):
        if required not in ids:
            raise _err("catalog", f"entry {required}", "required entry is missing or disabled")
    kw = {} if use_re2 is None else {"use_re2": use_re2 and regex.HAVE_RE2}
    return Catalog(
        entries,
        modules,
        families,
        progress=tuple(patterns["progress"]),
        notice_before=tuple(patterns["notice_before"]),
        notice_line=tuple(patterns["notice_line"]),
        **kw,
    )


def configured_catalog(catalog_section: Mapping[str, Any]) -> Catalog:
    """The shipped catalog merged with the config's `[catalog] files` (a list of paths)."""
    files = catalog_section.get("files", [])
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        raise ConfigError("[catalog] files must be a list of TOML catalog paths")
    return load_catalog([Path(f).expanduser() for f in files])


@functools.lru_cache(maxsize=1)
def default_catalog() -> Catalog:
    """The shipped catalog alone (cached)."""
    return load_catalog()
