"""Talk to `labctl mcp` as an agent would: the real MCP SDK client, the real server as a
subprocess over stdio (or over HTTP)."""

from __future__ import annotations

import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio  # noqa: TID253 - a test helper, not a start-up path
from mcp import Client, StdioServerParameters  # noqa: TID253

from helpers.cli import ROOT

Body = Callable[[Client], Awaitable[Any]]


def server_env(config: Path | None, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LABCTL_")}
    if config is not None:
        env["LABCTL_CONFIG"] = str(config)
    env.update(extra)
    return env


def with_stdio(body: Body, config: Path | None, *, cwd: Path | None = None, **env: str) -> Any:
    """Start `labctl mcp` (stdio) with this config, run `body(client)`, stop the server."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "labctl", "mcp"],
        env=server_env(config, **env),
        cwd=str(cwd or ROOT),
    )

    async def main() -> Any:
        with anyio.fail_after(120):
            async with Client(params) as client:
                return await body(client)

    return anyio.run(main)


def records(result: Any) -> list[dict[str, Any]]:
    return list(result.structured_content["records"])


def call(client: Client, name: str, arguments: dict[str, Any], **kw: Any) -> Awaitable[Any]:
    return client.call_tool(name, arguments, **kw)
