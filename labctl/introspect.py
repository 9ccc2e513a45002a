"""Describe commands from the CLI itself: the one source for schemas, man pages and
completions (so they cannot drift from the code)."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Any

from labctl.registry import COMMANDS, CommandSpec


def _json_type(param: Any) -> dict[str, Any]:
    """JSON Schema of a parameter's value, from its click-style ParamType."""
    ptype = param.type
    name = type(ptype).__name__
    schema: dict[str, Any]
    choices = getattr(ptype, "choices", None)
    if choices:
        schema = {"type": "string", "enum": [str(c) for c in choices]}
    elif getattr(param, "is_flag", False) or name.startswith("Bool"):
        schema = {"type": "boolean"}
    elif name.startswith("Int"):
        schema = {"type": "integer"}
    elif name.startswith("Float"):
        schema = {"type": "number"}
    elif "Path" in name or "File" in name:
        schema = {"type": "string", "format": "path"}
    else:
        schema = {"type": "string"}
    if getattr(param, "multiple", False) or (param.nargs is not None and param.nargs < 0):
        return {"type": "array", "items": schema}
    return schema


def describe_param(param: Any) -> dict[str, Any]:
    kind = "argument" if type(param).__name__.endswith("Argument") else "option"
    default = param.default
    if callable(default) or isinstance(default, enum.Enum | Path):
        default = str(default) if not callable(default) else None
    return {
        "name": param.name,
        "kind": kind,
        "flags": list(param.opts) + list(getattr(param, "secondary_opts", []) or []),
        "help": getattr(param, "help", None) or "",
        "required": bool(param.required),
        "default": default if isinstance(default, str | int | float | bool | list) else None,
        "schema": _json_type(param),
        "is_flag": bool(getattr(param, "is_flag", False)),
        "hidden": bool(getattr(param, "hidden", False)),
    }


def describe(spec: CommandSpec) -> dict[str, Any]:
    """A command as data: help, parameters, subcommands, record schemas, examples."""
    import importlib

    from labctl.cli import load_command

    cmd = load_command(spec)
    module = importlib.import_module(spec.module)
    return {
        "name": spec.name,
        "summary": spec.help,
        "help": (cmd.help or spec.help).strip(),
        "reads_records": spec.reads_records,
        "params": [describe_param(p) for p in cmd.params if p.name != "help"],
        "subcommands": [
            {
                "name": name,
                "help": (sub.help or "").strip(),
                "params": [describe_param(p) for p in sub.params if p.name != "help"],
            }
            for name, sub in sorted(getattr(cmd, "commands", {}).items())
        ],
        "records": getattr(module, "SCHEMAS", {}),
        "examples": getattr(module, "EXAMPLES", []),
    }


def describe_all() -> list[dict[str, Any]]:
    return [describe(spec) for spec in COMMANDS]


def options_schema(params: list[dict[str, Any]]) -> dict[str, Any]:
    """The parameters of a command as one JSON Schema object (a tool's input schema)."""
    props = {}
    required = []
    for p in params:
        if p["hidden"]:
            continue
        entry = dict(p["schema"])
        if p["help"]:
            entry["description"] = p["help"]
        if p["default"] not in (None, [], ()):
            entry["default"] = p["default"]
        props[p["name"]] = entry
        if p["required"]:
            required.append(p["name"])
    return {"type": "object", "properties": props, "required": required}
