"""The catalog's top-level pattern tables (issue 15): lists of regexes that are not entries.

- `[progress] patterns`: lines that show a job moving on (steps, epochs, progress bars); a
  failure-looking line followed by progress was survived (demote.py);
- `[notice] before` / `[notice] line`: a hit that is advice or a hypothetical, not a report of
  a failure (catalog.Catalog.is_notice).

User catalogs add patterns to each list.
"""

from __future__ import annotations

from typing import Any

from labctl.diagnose import regex
from labctl.errors import ConfigError

# table -> keys (each a list of regexes)
PATTERN_TABLES = {"progress": ("patterns",), "notice": ("before", "line")}


def catalog_error(src: str, where: str, msg: str) -> ConfigError:
    """A problem in a catalog file, naming the file and where in it (exit 2)."""
    return ConfigError(f"{src}: {where}: {msg}", reason="bad_config", file=src)


def pattern_table(table: Any, src: str, name: str, keys: tuple[str, ...]) -> dict[str, list[str]]:
    """`[progress] patterns = [...]` (lines that show a job moving on: steps, epochs, bars) and
    `[notice] before/line = [...]` (advice or a hypothetical, not a failure): lists of regexes,
    returned as {"progress", "notice_before", "notice_line"}."""
    if not isinstance(table, dict) or set(table) - set(keys):
        raise catalog_error(src, name, f"must be a table with the key(s) {', '.join(keys)}")
    out = {}
    for key in keys:
        pats = table.get(key, [])
        if not isinstance(pats, list) or not all(isinstance(p, str) for p in pats):
            raise catalog_error(src, name, f"{key!r} must be a list of regexes")
        for p in pats:
            try:
                regex.compile_one(p)
            except regex.PatternError as exc:
                raise catalog_error(src, name, f"pattern {p!r}: {exc}") from None
        out[name if key == "patterns" else f"{name}_{key}"] = pats
    return out
