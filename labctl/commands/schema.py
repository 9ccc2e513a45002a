"""`labctl schema [COMMAND]`: the machine-readable contract of a command.

One `schema` record per command: its parameters as a JSON Schema object (a tool's input
schema, for agents and MCP), and the JSON Schema of every record kind it emits.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any

import typer

from labctl.context import Context
from labctl.errors import UsageError
from labctl.schemas import COMMON, record

SCHEMAS = {
    **COMMON,
    "schema": record(
        "schema",
        "The contract of one command: its options and the records it emits.",
        {
            "command": {"type": "string"},
            "summary": {"type": "string"},
            "reads_records": {"type": "boolean"},
            "options": {"type": "object"},
            "subcommands": {"type": "object"},
            "records": {"type": "object", "additionalProperties": {"type": "object"}},
        },
        ["command", "options", "records"],
    ),
}
EXAMPLES = ["labctl schema poll --format json", "labctl schema | jq -r .command"]


def run(names: list[str]) -> Iterator[dict[str, Any]]:
    from labctl.introspect import describe, options_schema
    from labctl.registry import BY_NAME, COMMANDS

    unknown = [n for n in names if n not in BY_NAME]
    if unknown:
        raise UsageError(
            f"no such command: {', '.join(unknown)} (commands: "
            f"{', '.join(c.name for c in COMMANDS)})"
        )
    for spec in [BY_NAME[n] for n in names] or list(COMMANDS):
        desc = describe(spec)
        yield {
            "kind": "schema",
            "command": spec.name,
            "summary": desc["summary"],
            "reads_records": desc["reads_records"],
            "options": options_schema(desc["params"]),
            "subcommands": {
                sub["name"]: options_schema(sub["params"]) for sub in desc["subcommands"]
            },
            "records": desc["records"],
        }


def cli(
    lc: Context,
    commands: Annotated[
        list[str] | None, typer.Argument(help="Commands to describe (default: all).")
    ] = None,
) -> int:
    """Print the JSON Schema of a command's options and of every record kind it emits."""
    return lc.emit(run(commands or []))
