"""What this server may do: which tools it serves and which of them may write.

`[mcp] allow_writes` (default false) lets every tool write; `[mcp.tools."name"]` tables
override it per tool (`allow_writes = true|false`) or hide a tool (`enabled = false`).
A read-only server lists a tool that only writes (`log`, `config-init`) not at all, and
a tool with write options (`--apply`) without them; passing one anyway, or calling a
hidden tool, is a tool error: the refusal is here, not in the client's hints.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from labctl.errors import ConfigError
from labctl.toolserver.tools import Tool

TOOL_KEYS = {"enabled", "allow_writes"}


@dataclass(frozen=True)
class Refusal:
    reason: str  # writes_not_allowed, unknown_tool
    message: str


@dataclass(frozen=True)
class Policy:
    allow_writes: bool = False
    per_tool: Mapping[str, Mapping[str, bool]] = field(default_factory=dict)

    @classmethod
    def from_config(cls, config: Any, tool_names: Iterable[str]) -> Policy:
        names = sorted(tool_names)
        tables = config.subtable("mcp.tools")
        for name, table in tables.items():
            if name not in names:
                hint = difflib.get_close_matches(name, names, n=1)
                raise ConfigError(
                    f'config: [mcp.tools."{name}"]: no such tool'
                    + (f" (did you mean {hint[0]!r}?)" if hint else ""),
                    key="mcp.tools",
                )
            for key, value in table.items():
                if key not in TOOL_KEYS or not isinstance(value, bool):
                    raise ConfigError(
                        f'config: [mcp.tools."{name}"] takes enabled and allow_writes '
                        f"(true or false), not {key} = {value!r}",
                        key="mcp.tools",
                    )
        return cls(allow_writes=bool(config.get("mcp.allow_writes")), per_tool=tables)

    def enabled(self, tool: Tool) -> bool:
        return self.per_tool.get(tool.name, {}).get("enabled", True)

    def writes_allowed(self, tool: Tool) -> bool:
        return self.per_tool.get(tool.name, {}).get("allow_writes", self.allow_writes)

    def exposed(self, tool: Tool) -> bool:
        """Listed by the server: enabled, and not a tool that only writes on a server
        that may not write with it."""
        return self.enabled(tool) and (not tool.always_writes or self.writes_allowed(tool))

    def refusal(self, tool: Tool, arguments: Mapping[str, Any]) -> Refusal | None:
        """Why this call may not run, or None."""
        if not self.enabled(tool):
            return Refusal("unknown_tool", f"{tool.name} is disabled by [mcp.tools]")
        if self.writes_allowed(tool):
            return None
        how = f'set [mcp] allow_writes = true, or [mcp.tools."{tool.name}"] allow_writes = true'
        if tool.always_writes:
            return Refusal(
                "writes_not_allowed",
                f"{tool.name} changes things and this server is read-only ({how})",
            )
        writing = [p for p in tool.params if p.is_write(arguments.get(p.name))]
        if writing:
            flag = writing[0].flags[0] if writing[0].flags else writing[0].name
            return Refusal(
                "writes_not_allowed",
                f"{tool.name} {flag} changes things and this server is read-only ({how})",
            )
        return None
