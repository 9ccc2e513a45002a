"""A tool call's arguments: checked against the tool's input schema, then made an argv.

Options become `--name=value` (repeated for a list, the bare flag for `true`, the `--no`
form where a flag has one), and positional arguments go after `--`, so no value can
ever be read as an option (a path named `--apply` stays a path).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from labctl.errors import UsageError
from labctl.toolserver.tools import RECORDS, Tool


def check_arguments(schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> None:
    """UsageError naming the first argument that does not fit the input schema."""
    from jsonschema import Draft202012Validator

    errors = sorted(Draft202012Validator(schema).iter_errors(dict(arguments)), key=str)
    if not errors:
        return
    err = errors[0]
    where = ".".join(str(p) for p in err.absolute_path) or "arguments"
    if err.validator == "additionalProperties":
        known = ", ".join(sorted(schema.get("properties", {}))) or "none"
        extra = sorted(set(arguments) - set(schema.get("properties", {})))
        raise UsageError(f"unknown argument {extra[0][:60]!r} (arguments: {known})")
    raise UsageError(f"{where}: {err.message[:300]}")


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def argv_for(tool: Tool, arguments: Mapping[str, Any]) -> list[str]:
    """The command line (after `labctl`) that runs the tool with these arguments, its
    output JSON Lines."""
    opts: list[str] = []
    positional: list[str] = []
    for param in tool.params:
        value = arguments.get(param.name)
        if value is None:
            continue
        if param.is_flag:
            if value:
                opts.append(param.flags[0])
            elif param.off_flags:
                opts.append(param.off_flags[0])
            continue
        values = value if isinstance(value, list) else [value]
        if param.positional:
            positional.extend(_text(v) for v in values)
        else:
            flag = next((f for f in param.flags if f.startswith("--")), param.flags[0])
            opts.extend(f"{flag}={_text(v)}" for v in values)
    return [*tool.command, "--format=jsonl", *opts, "--", *positional]


def stdin_for(tool: Tool, arguments: Mapping[str, Any]) -> bytes:
    """The records a record-reading tool was given, as JSON Lines (its stdin)."""
    if not tool.reads_records:
        return b""
    records = arguments.get(RECORDS) or []
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")
