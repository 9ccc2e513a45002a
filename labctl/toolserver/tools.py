"""The tools `labctl mcp` serves, generated from the command registry (no MCP SDK here).

One tool per registered command (one per subcommand for a group such as `config`):
- name: the command's (`config-show` for a subcommand), description: its help;
- input schema: `labctl schema`'s options schema without the output options the server
  sets itself, plus `records` (an array of records) for a command that reads records;
- output schema: the records it emits (each kind's JSON Schema), the exit code and its
  meaning;
- what writes: the registry's `writes` (flags, subcommands, or the whole command).
Adding a command to the registry adds its tool; nothing here names a command.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from labctl.errors import MEANINGS
from labctl.registry import CommandSpec

# Options the server decides for every call: JSON Lines out, its own config, stderr kept.
SERVER_OPTIONS = frozenset({"format", "config", "quiet", "summary"})
RECORDS = "records"  # the input array of a record-reading tool


@dataclass(frozen=True)
class Param:
    """One option or argument of a tool, as the argv builder needs it."""

    name: str
    flags: tuple[str, ...]  # --apply (empty for a positional argument)
    off_flags: tuple[str, ...]  # --dry-run, the `False` of a --apply/--dry-run flag
    is_flag: bool
    many: bool
    writes: bool

    @property
    def positional(self) -> bool:
        return not self.flags

    def is_write(self, value: Any) -> bool:
        """Whether passing `value` makes the command write."""
        if not self.writes or value is None:
            return False
        return bool(value) if self.is_flag else value != []


@dataclass(frozen=True)
class Tool:
    name: str
    command: tuple[str, ...]  # argv prefix: ("poll",), ("config", "show")
    spec: CommandSpec
    description: str
    params: tuple[Param, ...]
    options_schema: Mapping[str, Any]  # every parameter, write options included
    record_schemas: Mapping[str, Any]
    always_writes: bool
    reads_records: bool

    @property
    def write_params(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params if p.writes)

    @property
    def writes(self) -> bool:
        """Whether the tool can change anything (always, or given a write option)."""
        return self.always_writes or bool(self.write_params)


def _params(click_params: Iterable[Any], write_flags: tuple[str, ...]) -> tuple[Param, ...]:
    out = []
    for p in click_params:
        if p.name in SERVER_OPTIONS or p.name == "help" or getattr(p, "hidden", False):
            continue
        flags = tuple(p.opts) if p.param_type_name == "option" else ()
        off = tuple(getattr(p, "secondary_opts", ()) or ())
        out.append(
            Param(
                name=p.name,
                flags=flags,
                off_flags=off,
                is_flag=bool(getattr(p, "is_flag", False)),
                many=bool(p.multiple) or (p.nargs is not None and p.nargs < 0),
                writes=any(f in write_flags for f in flags),
            )
        )
    return tuple(out)


def _tool(spec: CommandSpec, sub: str | None, cmd: Any, params: list[Any], module: Any) -> Tool:
    from labctl.introspect import describe_param, options_schema

    kept = _params(params, spec.writes.options)
    names = {p.name for p in kept}
    schema = options_schema([describe_param(p) for p in params if p.name in names])
    return Tool(
        name=spec.name if sub is None else f"{spec.name}-{sub}",
        command=(spec.name,) if sub is None else (spec.name, sub),
        spec=spec,
        description=(cmd.help or spec.help).strip(),
        params=kept,
        options_schema=schema,
        record_schemas=getattr(module, "SCHEMAS", {}),
        always_writes=spec.writes.always or (sub is not None and sub in spec.writes.subcommands),
        reads_records=spec.reads_records and sub is None,
    )


def tools_for(spec: CommandSpec) -> list[Tool]:
    """The tools of one command: itself, and one per subcommand of a group (a group is a
    tool of its own only when it runs without a subcommand, as `guard` does; a group's
    `reads_records` is its own, not its subcommands')."""
    import importlib

    from labctl.cli import load_command

    cmd = load_command(spec)
    module = importlib.import_module(spec.module)
    subs = getattr(cmd, "commands", {})
    tools = [_tool(spec, name, sub, sub.params, module) for name, sub in sorted(subs.items())]
    if not subs or getattr(cmd, "invoke_without_command", False):
        tools.insert(0, _tool(spec, None, cmd, cmd.params, module))
    return tools


def generate(commands: Iterable[CommandSpec] | None = None) -> list[Tool]:
    """Every tool of the registry as it is now (the server itself excluded)."""
    from labctl import registry

    specs = registry.COMMANDS if commands is None else commands
    return [tool for spec in specs if spec.tool for tool in tools_for(spec)]


def input_schema(tool: Tool, writes_allowed: bool) -> dict[str, Any]:
    """The tool's input schema; write options appear only where writes are allowed."""
    props = dict(tool.options_schema["properties"])
    required = list(tool.options_schema["required"])
    if not writes_allowed:
        for name in tool.write_params:
            props.pop(name, None)
    if tool.reads_records:
        props[RECORDS] = {
            "type": "array",
            "items": {"type": "object", "required": ["kind"]},
            "description": "The records the command reads (what it would read on stdin), "
            "e.g. the `records` of a `poll` result.",
        }
    return {
        "type": "object",
        "properties": props,
        "required": required,
        "additionalProperties": False,
    }


def output_schema(tool: Tool) -> dict[str, Any]:
    """The records (each kind of this command's validated by its schema; a record-reading
    command's pass-through records are whatever it was given), the exit code, its meaning."""
    items: dict[str, Any] = {
        "type": "object",
        "required": ["kind"],
        "properties": {"kind": {"type": "string"}},
    }
    kinds = sorted(k for k in tool.record_schemas if k != "*")
    if not tool.reads_records:
        items["allOf"] = [
            {
                "if": {"properties": {"kind": {"const": kind}}, "required": ["kind"]},
                "then": {k: v for k, v in tool.record_schemas[kind].items() if k != "$schema"},
            }
            for kind in kinds
        ]
    return {
        "type": "object",
        "properties": {
            RECORDS: {
                "type": "array",
                "items": items,
                "description": f"kinds: {', '.join(kinds)}"
                + ("; records read pass through unchanged" if tool.reads_records else ""),
            },
            "exit_code": {"type": "integer", "enum": [int(c) for c in MEANINGS]},
            "exit_meaning": {"type": "string"},
            "records_omitted": {"type": "integer", "minimum": 0},
        },
        "required": [RECORDS, "exit_code", "exit_meaning"],
    }


def tool_annotations(tool: Tool, writes_allowed: bool) -> dict[str, Any]:
    """MCP tool annotations (hints for the client; the server enforces)."""
    if not tool.writes or not writes_allowed:
        return {"readOnlyHint": True, "destructiveHint": False}
    return {
        "readOnlyHint": False,
        "destructiveHint": tool.spec.writes.destructive,
        "idempotentHint": False,
    }
