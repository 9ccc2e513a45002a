"""The MCP server: the registry's tools on the low-level SDK server, over stdio or HTTP.

Only `labctl mcp` imports this module (the SDK, pydantic, starlette and uvicorn cost
every other command nothing). Every answer passes the server's redactor: tool
descriptions, records, error messages and progress messages.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server

from labctl import __version__
from labctl.context import Context
from labctl.emit import dumps
from labctl.errors import MEANINGS, ExitCode, LabctlError, exit_code_for_reason
from labctl.toolserver.args import argv_for, check_arguments, stdin_for
from labctl.toolserver.policy import Policy
from labctl.toolserver.run import Outcome, run_command
from labctl.toolserver.tools import Tool, input_schema, output_schema, tool_annotations

INSTRUCTIONS = (
    "labctl: the commands that keep an ML lab's jobs moving, as tools. Each result holds "
    "the command's records, its exit code and what the code means (0 nothing needs a "
    "person, 1 something does, 2 nothing was done, 3 a backend was unreachable). Pass a "
    "`poll` result's records to `diagnose`, `table` or `log` as their `records`."
)
MAX_CONCURRENT = 4


@dataclass(frozen=True)
class Served:
    """The server's fixed view: tools by name, what it may do, how children run."""

    lc: Context
    tools: Mapping[str, Tool]
    policy: Policy
    env: Mapping[str, str]

    def listing(self) -> list[types.Tool]:
        out = []
        for tool in self.tools.values():
            if not self.policy.exposed(tool):
                continue
            allowed = self.policy.writes_allowed(tool)
            hints = tool_annotations(tool, allowed)
            out.append(
                types.Tool(
                    name=tool.name,
                    description=self.lc.redactor.text(tool.description),
                    input_schema=self.lc.redactor.value(input_schema(tool, allowed)),
                    output_schema=output_schema(tool),
                    annotations=types.ToolAnnotations.model_validate(hints),
                )
            )
        return out


def child_env(lc: Context) -> dict[str, str]:
    """The environment every command runs in: the server's, confined, with its config."""
    from labctl.confine import ENV

    dropped = {"LABCTL_DEBUG", "LABCTL_FORMAT", "LABCTL_MCP_TOKEN"}  # the token is the server's
    env = {k: v for k, v in lc.environ.items() if k not in dropped}
    env.update({ENV: "1", "NO_COLOR": "1", "PYTHONUNBUFFERED": "1"})
    if lc.config.path_source != "default" or lc.config.exists:
        env["LABCTL_CONFIG"] = str(lc.config.path)
    return env


def result(lc: Context, out: Outcome) -> types.CallToolResult:
    """Records, exit code and its meaning, redacted; an error when nothing was done."""
    code = ExitCode(out.exit_code) if out.exit_code in set(MEANINGS) else ExitCode.ATTENTION
    records = lc.redactor.value(out.records)
    structured: dict[str, Any] = {
        "records": records,
        "exit_code": int(code),
        "exit_meaning": MEANINGS[code],
    }
    if out.omitted:
        structured["records_omitted"] = out.omitted
    only_errors = all(r.get("kind") == "error" for r in records)
    failed = code in (ExitCode.USAGE, ExitCode.INTERRUPTED) or (
        code == ExitCode.BACKEND and only_errors
    )
    if failed and not records and out.stderr:  # say why, in the command's own words
        message = lc.redactor.text(out.stderr[-1])
        structured["records"] = [{"kind": "error", "reason": "internal_error", "message": message}]
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=dumps(structured))],
        structured_content=structured,
        is_error=failed,
    )


def refused(lc: Context, reason: str, message: str) -> types.CallToolResult:
    rec = {"kind": "error", "reason": reason, "message": message}
    return result(lc, Outcome(records=[rec], exit_code=int(exit_code_for_reason(reason))))


def build_server(served: Served) -> Server[Any]:
    import anyio

    limiter = anyio.CapacityLimiter(MAX_CONCURRENT)
    listing = served.listing()
    lc = served.lc

    async def on_list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listing)

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        tool = served.tools.get(params.name)
        if tool is None:
            names = ", ".join(t.name for t in listing)
            return refused(lc, "unknown_tool", f"no tool {params.name[:60]!r} (tools: {names})")
        args = params.arguments or {}
        try:
            check_arguments(input_schema(tool, True), args)
        except LabctlError as exc:
            return refused(lc, exc.reason, f"{tool.name}: {exc.message}")
        refusal = served.policy.refusal(tool, args)
        if refusal is not None:
            return refused(lc, refusal.reason, refusal.message)

        async def progress(count: int, message: str | None) -> None:
            text = lc.redactor.text(message) if message else None
            await ctx.session.report_progress(count, None, text)

        async with limiter:
            out = await run_command(
                argv_for(tool, args),
                stdin_for(tool, args),
                env=served.env,
                timeout_s=float(lc.config.get("mcp.timeout_s")),
                max_records=int(lc.config.get("mcp.max_records")),
                progress=progress,
            )
        return result(lc, out)

    return Server(
        "labctl",
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )


async def serve_stdio(server: Server[Any]) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


async def serve_http(server: Server[Any], lc: Context, host: str, port: int, token: str) -> None:
    import socket

    import uvicorn

    from labctl.toolserver.auth import BearerAuth

    app = BearerAuth(server.streamable_http_app(host=host), token)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)  # connections wait in the backlog until uvicorn accepts them
    bound = sock.getsockname()[1]
    where = f"[{host}]" if ":" in host else host
    lc.note(f"labctl mcp: serving http://{where}:{bound}/mcp (bearer token required)")
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
    await uvicorn.Server(config).serve(sockets=[sock])
