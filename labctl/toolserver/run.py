"""Run one tool call: the command as a child process, its records read as they stream.

A subprocess, not an in-process call, by choice: every call gets its own Context,
emitter, redactor, config, cwd, environment and global state (the default redactor,
poll's threads and locks) with nothing to reset; a crash or a memory blow-up ends the
call, not the server; and cancellation is exact: when the client cancels, the call
outlives `[mcp] timeout_s` or the server stops, the child and every process it started
(squeue, ssh, a bash script in a session of its own) are frozen and killed. labctl
writes atomically, so a killed command leaves the old state or the new, never a mix.
The price is the command's start-up (about 0.1 s), which start-up discipline keeps
small (benchmarks/mcp_server.py measures it).

The child prints JSON Lines (its emitter redacts them); each record counts as progress,
each stderr line becomes a progress message, at most a few per second.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from labctl.errors import ExitCode

Progress = Callable[[int, str | None], Awaitable[None]]
PROGRESS_EVERY_S = 0.5
STDERR_LINES = 20


@dataclass
class Outcome:
    records: list[dict[str, Any]] = field(default_factory=list)
    omitted: int = 0
    exit_code: int = 0
    stderr: list[str] = field(default_factory=list)  # the last lines (for errors)

    def add(self, rec: dict[str, Any], limit: int) -> None:
        if len(self.records) < limit:
            self.records.append(rec)
        else:
            self.omitted += 1


def _record(line: bytes) -> dict[str, Any]:
    try:
        rec = json.loads(line)
    except ValueError:
        rec = None
    if isinstance(rec, dict):
        return rec
    text = line.decode("utf-8", "replace")[:200]
    return {"kind": "error", "reason": "internal_error", "message": f"not a record: {text!r}"}


class _Reporter:
    """Rate-limited progress: records so far, and the latest diagnostic as the message."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.last = 0.0
        self.count = 0

    async def __call__(self, message: str | None = None, *, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self.last >= PROGRESS_EVERY_S:
            self.last = now
            await self.progress(self.count, message)


async def _lines(stream: Any) -> Any:
    """The lines of a byte stream as they arrive (without their newline)."""
    import anyio

    buf = b""
    while True:
        try:
            chunk = await stream.receive(1 << 16)
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            break
        buf += chunk
        *lines, buf = buf.split(b"\n")
        for line in lines:
            yield line
    if buf:
        yield buf


async def _feed(stream: Any, data: bytes) -> None:
    import anyio

    try:
        if data:
            await stream.send(data)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
        pass  # the command stopped reading (a usage error, or records it did not need)
    finally:
        await stream.aclose()


def _children() -> dict[int, list[int]]:
    """Every process's children, from /proc (ppid is the 4th field of /proc/PID/stat)."""
    out: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    ppid = int(f.read().rpartition(b")")[2].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            out.setdefault(ppid, []).append(int(entry))
    return out


def _tree(pid: int) -> set[int]:
    kids, seen, todo = _children(), {pid}, [pid]
    while todo:
        for child in kids.get(todo.pop(), []):
            if child not in seen:
                seen.add(child)
                todo.append(child)
    return seen


def _signal(pids: set[int], sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def kill_tree(pid: int) -> None:
    """Freeze the process and all its descendants (so none can start another), then kill
    them all: processes in sessions of their own included, which a process group is not."""
    frozen: set[int] = set()
    for _ in range(20):
        found = _tree(pid) - frozen
        if not found:
            break
        _signal(found, signal.SIGSTOP)
        frozen |= found
    _signal(frozen, signal.SIGKILL)
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


async def _stop(proc: Any) -> None:
    """Kill the child's whole tree unless it has ended; reap the child."""
    import anyio

    with anyio.CancelScope(shield=True):
        if proc.returncode is None:
            kill_tree(proc.pid)
        await proc.wait()


async def run_command(
    argv: list[str],
    stdin: bytes,
    *,
    env: Mapping[str, str],
    timeout_s: float,
    max_records: int,
    progress: Progress,
) -> Outcome:
    """Run `labctl <argv>`; its records (the first `max_records`), exit code, stderr tail."""
    import anyio

    out = Outcome()
    report = _Reporter(progress)
    proc = await anyio.open_process(
        [sys.executable, "-m", "labctl", *argv], env=dict(env), start_new_session=True
    )

    async def read_stdout() -> None:
        async for line in _lines(proc.stdout):
            if line.strip():
                out.add(_record(line), max_records)
                report.count += 1
                await report()

    async def read_stderr() -> None:
        async for line in _lines(proc.stderr):
            text = line.decode("utf-8", "replace").rstrip()
            if text:
                out.stderr = [*out.stderr[-(STDERR_LINES - 1) :], text]
                await report(text[:300])

    try:
        await report(f"started labctl {' '.join(argv[:2])}", force=True)
        with anyio.move_on_after(timeout_s) as deadline:
            async with anyio.create_task_group() as tg:
                tg.start_soon(_feed, proc.stdin, stdin)
                tg.start_soon(read_stderr)
                await read_stdout()
            out.exit_code = await proc.wait()
        if deadline.cancelled_caught:
            out.add(_timeout_record(timeout_s), max_records + 1)
            out.exit_code = int(ExitCode.INTERRUPTED)
    finally:
        await _stop(proc)
    if out.exit_code < 0:  # killed by a signal from outside
        out.add(_signal_record(-out.exit_code), max_records + 1)
        out.exit_code = int(ExitCode.INTERRUPTED)
    return out


def _timeout_record(timeout_s: float) -> dict[str, Any]:
    return {
        "kind": "error",
        "reason": "timeout",
        "message": f"stopped after {timeout_s:g} s ([mcp] timeout_s); what it had emitted is kept",
    }


def _signal_record(sig: int) -> dict[str, Any]:
    return {
        "kind": "error",
        "reason": "internal_error",
        "message": f"the command was killed by signal {sig}",
    }
