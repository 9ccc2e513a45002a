"""`labctl mcp --http`: streamable HTTP on 127.0.0.1, only for a client with the token."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio  # noqa: TID253 - a test, not a start-up path
import pytest
from helpers.cli import run_labctl
from helpers.config import write_config
from helpers.toolclient import records, server_env

TOKEN = "labctl-test-" + "t0k3n" * 6


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    config = write_config(tmp_path, [{"name": "local"}], extra={"mcp": {"roots": [str(tmp_path)]}})
    proc = subprocess.Popen(
        [sys.executable, "-m", "labctl", "mcp", "--http", "127.0.0.1:0"],
        env=server_env(config, LABCTL_MCP_TOKEN=TOKEN),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    line = proc.stderr.readline()
    found = re.search(r"serving (http://127\.0\.0\.1:\d+/mcp)", line)
    assert found, line
    try:
        yield found.group(1), proc
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def post(url: str, token: str | None) -> int:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=20) as resp:
            return int(resp.status)
    except urllib.error.HTTPError as exc:
        return exc.code


def call_over_http(url: str, token: str) -> Any:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async def main() -> Any:
        with anyio.fail_after(60):
            headers = {"Authorization": f"Bearer {token}"}
            async with (
                httpx2.AsyncClient(headers=headers, timeout=30) as http,
                Client(streamable_http_client(url, http_client=http)) as client,
            ):
                tools = (await client.list_tools()).tools
                res = await client.call_tool("schema", {"commands": ["diagnose"]})
                return [t.name for t in tools], res

    return anyio.run(main)


def test_http_with_the_token_serves_the_tools(http_server: tuple[str, Any]) -> None:
    url, _ = http_server
    names, res = call_over_http(url, TOKEN)
    assert {"poll", "diagnose", "strip-yaml-comments"} <= set(names)
    assert records(res)[0]["command"] == "diagnose" and not res.is_error


def test_http_without_the_token_is_refused(http_server: tuple[str, Any]) -> None:
    url, proc = http_server
    assert post(url, None) == 401
    assert post(url, TOKEN[:-1] + "x") == 401
    assert post(url, "") == 401
    with pytest.raises(BaseException):  # the SDK client cannot even initialise
        call_over_http(url, "wrong-" + TOKEN)
    proc.terminate()
    _, err = proc.communicate(timeout=20)
    assert TOKEN not in err  # never logged


def test_http_needs_a_token_to_start(tmp_path: Path) -> None:
    started = time.monotonic()
    res = run_labctl("mcp", "--http", "127.0.0.1:0", env={"LABCTL_MCP_TOKEN": ""}, timeout=60)
    assert res.code == 2 and time.monotonic() - started < 60
    (err,) = res.records
    assert err["reason"] == "config" and "LABCTL_MCP_TOKEN" in err["message"]


def test_print_config_names_the_token_variable_not_its_value() -> None:
    res = run_labctl("mcp", "--print-config", "--http", "8765", env={"LABCTL_MCP_TOKEN": TOKEN})
    entry = json.loads(res.stdout)["mcpServers"]["labctl"]
    assert entry["url"] == "http://127.0.0.1:8765/mcp"
    assert entry["headers"]["Authorization"] == "Bearer ${LABCTL_MCP_TOKEN}"
    assert TOKEN not in res.stdout + res.stderr
    stdio = json.loads(run_labctl("mcp", "--print-config").stdout)["mcpServers"]["labctl"]
    assert stdio["args"][-1] == "mcp" and Path(stdio["command"]).exists()
