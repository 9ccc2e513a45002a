"""A long tool call reports progress, and a cancelled or timed-out call leaves no process
behind: not the command, nor what it started in a session of its own."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio  # noqa: TID253 - a test, not a start-up path
from helpers.config import write_config
from helpers.toolclient import records, with_stdio


def hung_cluster(tmp: Path, **mcp: Any) -> tuple[Path, Path]:
    """A cluster whose job table command hangs, writing its shell's pid first."""
    pidfile = tmp / "pid"
    cluster = {
        "name": "hung",
        "scheduler": "command",
        "command": f"echo $$ > {pidfile}; exec sleep 120",
        "timeout_s": 300,
    }
    extra = {"mcp": {"roots": [str(tmp)], **mcp}, "paths": {"state_dir": str(tmp / "state")}}
    return write_config(tmp, [cluster], extra=extra), pidfile


def dead(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[0] == "Z"  # killed, not yet reaped
    except FileNotFoundError:
        return True


def gone(pid: int, within_s: float = 10.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if dead(pid):
            return True
        time.sleep(0.1)
    return False


async def gone_while_serving(pid: int, within_s: float = 10.0) -> bool:
    """`gone`, polled from inside the client's session: the server is still up."""
    with anyio.move_on_after(within_s):
        while not dead(pid):
            await anyio.sleep(0.05)
    return dead(pid)


def test_cancelled_call_kills_the_command_and_its_children(tmp_path: Path) -> None:
    config, pidfile = hung_cluster(tmp_path)

    async def body(client: Any) -> list[Any]:
        seen: list[Any] = []
        started = anyio.Event()

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            seen.append(message)
            started.set()

        async def call() -> None:
            await client.call_tool("poll", {}, progress_callback=on_progress)

        async with anyio.create_task_group() as tg:
            tg.start_soon(call)
            with anyio.fail_after(30):
                await started.wait()
                while not pidfile.exists() or not pidfile.read_text().strip():
                    await anyio.sleep(0.05)
            tg.cancel_scope.cancel()  # the client abandons the call: notifications/cancelled
        # killed by the cancellation itself, while the server (and this session) lives on
        pid = int(pidfile.read_text())
        killed = await gone_while_serving(pid)
        # the server answers the next call at once: the cancelled one holds nothing
        after = await client.call_tool("schema", {"commands": ["poll"]})
        return [seen, after, pid, killed]

    seen, after, pid, killed = with_stdio(body, config)
    assert killed, f"the hung job-table command (pid {pid}) survived the cancellation"
    assert seen and seen[0].startswith("started labctl poll")
    assert records(after)[0]["command"] == "poll"


def test_call_past_the_timeout_is_stopped_and_reported(tmp_path: Path) -> None:
    config, pidfile = hung_cluster(tmp_path, timeout_s=2)

    async def body(client: Any) -> Any:
        return await client.call_tool("poll", {})

    started = time.monotonic()
    res = with_stdio(body, config)
    assert time.monotonic() - started < 60
    assert res.is_error and res.structured_content["exit_code"] == 130
    assert records(res)[-1]["reason"] == "timeout"
    assert gone(int(pidfile.read_text()))
