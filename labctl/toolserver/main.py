"""What `labctl mcp` does: serve, list its tools, or print a client's configuration."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from labctl.context import Context
from labctl.errors import ConfigError, UsageError
from labctl.toolserver.policy import Policy
from labctl.toolserver.tools import Tool, generate

DEFAULT_HOST = "127.0.0.1"
MIN_TOKEN = 16


def parse_http(text: str) -> tuple[str, int]:
    """`PORT`, `HOST:PORT` or `[IPv6]:PORT` (the host defaults to 127.0.0.1)."""
    host, sep, port = text.rpartition(":")
    host = host.strip("[]") if sep else DEFAULT_HOST
    if not port.isdigit() or not 0 <= int(port) <= 65535 or not host:
        raise UsageError(f"--http {text!r}: use PORT or HOST:PORT (e.g. 127.0.0.1:8765)")
    return host, int(port)


def setup(lc: Context) -> tuple[dict[str, Tool], Policy]:
    """The tools and the policy, with the [mcp] config checked before anything is served."""
    from labctl.confine import Confinement

    Confinement.for_context(lc)  # a bad [mcp] roots or log_roots fails here, not per call
    tools = {t.name: t for t in generate()}
    return tools, Policy.from_config(lc.config, tools)


def tool_records(lc: Context) -> Iterator[dict[str, Any]]:
    tools, policy = setup(lc)
    for tool in tools.values():
        yield {
            "kind": "tool",
            "name": tool.name,
            "summary": tool.description.splitlines()[0],
            "served": policy.exposed(tool),
            "reads_records": tool.reads_records,
            "writes": "always" if tool.always_writes else list(_write_flags(tool)),
            "writes_allowed": tool.writes and policy.writes_allowed(tool),
        }


def _write_flags(tool: Tool) -> Iterator[str]:
    for p in tool.params:
        if p.writes:
            yield p.flags[0]


def _labctl_command() -> list[str]:
    script = Path(sys.executable).parent / "labctl"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "labctl"]


def client_config(lc: Context, http: str | None) -> dict[str, Any]:
    """The `mcpServers` entry an MCP client (Claude Code, Cursor, …) takes; a token is
    never printed, only the variable that holds it."""
    if http is not None:
        host, port = parse_http(http)
        where = f"[{host}]" if ":" in host else host
        entry: dict[str, Any] = {
            "type": "http",
            "url": f"http://{where}:{port}/mcp",
            "headers": {"Authorization": "Bearer ${LABCTL_MCP_TOKEN}"},
        }
    else:
        command = _labctl_command()
        args = [*command[1:], "mcp"]
        if lc.config.path_source != "default":
            args += ["--config", str(lc.config.path.resolve())]
        entry = {"type": "stdio", "command": command[0], "args": args, "env": {}}
    return {"mcpServers": {"labctl": entry}}


def serve(lc: Context, http: str | None) -> int:
    import anyio

    from labctl.toolserver.server import Served, build_server, child_env, serve_http, serve_stdio

    tools, policy = setup(lc)
    token = str(lc.config.get("mcp.token") or "")
    if http is not None:
        host, port = parse_http(http)
        if len(token) < MIN_TOKEN:
            raise ConfigError(
                f"labctl mcp --http needs a bearer token of at least {MIN_TOKEN} characters: "
                "set LABCTL_MCP_TOKEN or [mcp] token (e.g. `openssl rand -hex 32`)",
                key="mcp.token",
            )
    server = build_server(Served(lc=lc, tools=tools, policy=policy, env=child_env(lc)))
    if http is None and lc.stdin_isatty:
        lc.note("labctl mcp: serving MCP on stdio for an agent to launch (see --print-config)")
    try:
        if http is None:
            anyio.run(serve_stdio, server)
        else:
            anyio.run(serve_http, server, lc, host, port, token)
    except KeyboardInterrupt:
        pass
    return 0
