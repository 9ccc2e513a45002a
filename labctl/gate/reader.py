"""Typed access to one config table, every message prefixed with where it is."""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping, Sequence
from typing import Any

from labctl.errors import ConfigError
from labctl.gate.metric import IDENT


class TableReader:
    """Typed access to one table, with the gate's name in every message."""

    def __init__(self, table: Mapping[str, Any], where: str) -> None:
        self.table, self.where = table, where

    def fail(self, message: str) -> ConfigError:
        return ConfigError(f"{self.where}: {message}")

    def check_keys(
        self, allowed: frozenset[str], nested: frozenset[str] = frozenset(), inner: str = ""
    ) -> None:
        """Unknown keys are errors, with a hint (maybe: it belongs in the `inner` table)."""
        for key in self.table:
            if key not in allowed:
                hint = difflib.get_close_matches(key, sorted(allowed | nested), n=1)
                where = f" in a {inner} table" if hint and hint[0] not in allowed else ""
                raise self.fail(
                    f"unknown key {key!r}"
                    + (f" (did you mean {hint[0]!r}{where}?)" if hint else "")
                )

    def text(self, key: str, default: str | None = None) -> str:
        value = self.table.get(key, default)
        if not isinstance(value, str) or (default is None and not value):
            raise self.fail(
                f"{key} must be a non-empty string" if key in self.table else f"{key} is required"
            )
        return value

    def ident(self, key: str, default: str, allow_empty: bool = False) -> str:
        value = self.text(key, default)
        if allow_empty and value == "":
            return value
        if not IDENT.match(value):
            raise self.fail(f"{key} {value!r} is not a column name (letters, digits, _)")
        return value

    def number(self, key: str) -> float:
        value = self.table.get(key)
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            raise self.fail(
                f"{key} must be a finite number" if key in self.table else f"{key} is required"
            )
        return float(value)

    def integer(self, key: str, default: int, minimum: int = 1) -> int:
        value = self.table.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self.fail(f"{key} must be an integer >= {minimum}")
        return value

    def choice(self, key: str, default: str, choices: Sequence[str]) -> str:
        value = self.table.get(key, default)
        if value not in choices:
            raise self.fail(f"{key} must be one of {', '.join(choices)}, not {value!r}")
        return str(value)

    def strings(self, key: str, default: Sequence[str] = ()) -> tuple[str, ...]:
        value = self.table.get(key, list(default))
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.fail(f"{key} must be a string or a list of strings")
        return tuple(value)
