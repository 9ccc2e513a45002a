"""One configuration setting: its key, default, help, environment variables and type."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Setting:
    key: str  # "section.name"
    default: Any
    help: str
    env: tuple[str, ...] = ()
    secret: bool = False
    choices: tuple[str, ...] = ()
    kind: type = field(default=str)

    @property
    def section(self) -> str:
        return self.key.split(".", 1)[0]

    @property
    def name(self) -> str:
        return self.key.split(".", 1)[1]


def setting(key: str, default: Any, help: str, **kw: Any) -> Setting:
    """A Setting whose type is its default's unless `kind` says otherwise."""
    kind = kw.pop("kind", type(default))
    return Setting(key, default, help, kind=kind, **kw)
