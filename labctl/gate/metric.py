"""Where a score lives: a column, or a JSON path into a column, extracted on the server.

Written in the config the way PostgreSQL or PostgREST users already write it:

    score                              a plain column
    stats->'metrics'->>'pass@1'        PostgreSQL
    stats->metrics->>pass@1            PostgREST (keys may also be "double-quoted")

Both parse to the same `Path(column, keys)`. The server always extracts the last key as
text (`->>`), so only that small string travels, never the whole JSON blob; the same path
is applied to nested dicts for rows read on stdin.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from labctl.errors import ConfigError

IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_BARE_KEY = re.compile(r"^[A-Za-z0-9_]+$")


@dataclass(frozen=True)
class Path:
    column: str
    keys: tuple[str, ...] = ()

    @property
    def is_json(self) -> bool:
        return bool(self.keys)

    def sql_text(self) -> str:
        """PostgreSQL spelling, for people: stats->'metrics'->>'pass@1'."""
        if not self.keys:
            return self.column
        quoted = ["'" + k.replace("'", "''") + "'" for k in self.keys]
        return self.column + "".join(f"->{q}" for q in quoted[:-1]) + f"->>{quoted[-1]}"

    def postgrest(self) -> str:
        """PostgREST spelling for `select`: stats->metrics->>"pass@1"."""
        if not self.keys:
            return self.column
        keys = [k if _BARE_KEY.match(k) else f'"{k}"' for k in self.keys]
        return self.column + "".join(f"->{k}" for k in keys[:-1]) + f"->>{keys[-1]}"

    def extract(self, row: dict[str, Any]) -> Any:
        """The value a server's `->>` would give for a row held in memory (text or None)."""
        value = row.get(self.column)
        if not self.keys:
            return value
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                return None
        for key in self.keys:
            if not isinstance(value, dict):
                return None
            value = value.get(key)
        if value is None or isinstance(value, str):
            return value
        return json.dumps(value) if isinstance(value, dict | list | bool) else str(value)


def _key(text: str, i: int, where: str) -> tuple[str, int]:
    """One key starting at text[i]: 'quoted', "quoted" or bare (up to the next ->)."""
    while i < len(text) and text[i].isspace():
        i += 1
    if i < len(text) and text[i] in "'\"":
        quote = text[i]
        out = []
        j = i + 1
        while j < len(text):
            if text[j] == quote:
                if quote == "'" and text[j + 1 : j + 2] == "'":  # '' inside '…'
                    out.append("'")
                    j += 2
                    continue
                return "".join(out), j + 1
            out.append(text[j])
            j += 1
        raise ConfigError(f"{where}: unterminated {quote} in {text!r}")
    end = text.find("->", i)
    end = len(text) if end < 0 else end
    return text[i:end].strip(), end


def parse_path(text: str, where: str) -> Path:
    """`score`, `stats->'metrics'->>'pass@1'` or `stats->metrics->>pass@1` -> Path."""
    if not isinstance(text, str) or not text.strip():
        raise ConfigError(
            f"{where}: must be a column name or a JSON path such as stats->'metrics'->>'pass@1'"
        )
    text = text.strip()
    first = text.find("->")
    column = (text if first < 0 else text[:first]).strip()
    if not IDENT.match(column):
        raise ConfigError(f"{where}: {column!r} is not a column name (letters, digits, _)")
    keys: list[str] = []
    i = len(column) if first < 0 else first
    while i < len(text):
        op = "->>" if text.startswith("->>", i) else "->" if text.startswith("->", i) else None
        if op is None:
            raise ConfigError(f"{where}: expected -> or ->> at {text[i:]!r} in {text!r}")
        key, i = _key(text, i + len(op), where)
        if not key:
            raise ConfigError(f"{where}: empty JSON key in {text!r}")
        if '"' in key:
            raise ConfigError(f"{where}: a JSON key may not contain a double quote ({key!r})")
        keys.append(key)
        while i < len(text) and text[i].isspace():
            i += 1
    return Path(column, tuple(keys))
