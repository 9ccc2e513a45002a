"""`labctl mcp`: every labctl command as a tool for agents (Model Context Protocol).

The tools are generated from the command registry: name, the command's help, its
options as the input schema (`labctl schema`), `records` (an array) for a command that
reads records, and a result holding the records (structured), the exit code and its
meaning. Each call runs the command as a child process, confined to the configured
roots (`[mcp] roots`; default: the state dir, the log dir and each cluster's
`log_roots`): a path outside them, or a job record whose logs are, is a tool error.
The server is read-only unless `[mcp] allow_writes = true` (or per tool, `[mcp.tools."name"]
allow_writes = true`): `--apply`, `--register` and commands that always write (`log`,
`config-init`) are neither listed nor run. Everything returned passes the redactor.

stdio by default (what a local agent launches); `--http HOST:PORT` serves streamable HTTP
(127.0.0.1 unless a host is named) and requires `Authorization: Bearer $LABCTL_MCP_TOKEN`.
"""

from __future__ import annotations

from typing import Annotated

import typer

from labctl.context import Context
from labctl.schemas import COMMON, record

SCHEMAS = {
    **COMMON,
    "tool": record(
        "tool",
        "A tool `labctl mcp` generates from a command (--tools): whether this config serves "
        "it, and what makes it write (flags, or always) and whether it may.",
        {
            "name": {"type": "string"},
            "summary": {"type": "string"},
            "served": {"type": "boolean"},
            "reads_records": {"type": "boolean"},
            "writes": {
                "anyOf": [{"const": "always"}, {"type": "array", "items": {"type": "string"}}]
            },
            "writes_allowed": {"type": "boolean"},
        },
        ["name", "served", "writes", "writes_allowed"],
    ),
}
EXAMPLES = [
    "labctl mcp --print-config        # paste into the agent's MCP client configuration",
    "labctl mcp --tools --format table # what this config serves, and what may write",
    "LABCTL_MCP_TOKEN=$(openssl rand -hex 32) labctl mcp --http 127.0.0.1:8765",
]


def cli(
    lc: Context,
    http: Annotated[
        str | None,
        typer.Option(
            "--http",
            metavar="[HOST:]PORT",
            help="Serve streamable HTTP here (host 127.0.0.1 unless given; needs a token).",
        ),
    ] = None,
    print_config: Annotated[
        bool,
        typer.Option("--print-config", help="Print the JSON an MCP client needs, and exit."),
    ] = False,
    tools: Annotated[
        bool, typer.Option("--tools", help="List the tools this config serves, and exit.")
    ] = False,
) -> int:
    """Serve every labctl command as a tool to agents (MCP over stdio, or --http)."""
    from labctl.toolserver import main

    if print_config:
        import json

        from labctl.emit import write_raw

        snippet = json.dumps(main.client_config(lc, http), indent=2) + "\n"
        write_raw(lc, lc.redactor.text(snippet).encode("utf-8"))
        return 0
    if tools:
        return lc.emit(main.tool_records(lc))
    return main.serve(lc, http)
