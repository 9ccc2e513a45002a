"""Run a command on a cluster: locally, or over SSH through the user's host alias.

One `Transport` per cluster. Commands run as child processes (`subprocess`, or `ssh` with
the user's ~/.ssh/config; plumbum was the wrapper once, and its import alone cost a poll
about 60-100 ms of a 0.7 s budget). Every call has a deadline: the child runs in its own session and
the whole process group is killed when the deadline passes, so a hung `sacct` (or a
shell that spawned it) can never hang the caller. Failures are classified for the
caller's `error` record: `unreachable` (ssh could not connect), `auth`, `timeout`,
`command_failed`.

SSH runs in batch mode (no prompts under cron), with short connect timeouts,
keep-alives and connection sharing (ControlMaster) so a poll's several calls to one
cluster pay for one handshake.
"""

from __future__ import annotations

import os
import select
import shlex
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from labctl.errors import BackendError

SSH_BASE_OPTIONS = (
    "-o", "BatchMode=yes",
    "-o", "ConnectTimeout=10",
    "-o", "ServerAliveInterval=15",
    "-o", "ServerAliveCountMax=2",
    "-o", "ControlMaster=auto",
    "-o", "ControlPersist=60",
)  # fmt: skip
MAX_OUTPUT = 64 * 1024 * 1024  # bytes kept per stream; a poll never needs more


@dataclass(frozen=True)
class CommandResult:
    argv: tuple[str, ...]
    returncode: int
    stdout: bytes
    stderr: bytes
    elapsed_s: float
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    def stderr_tail(self, limit: int = 600) -> str:
        text = self.stderr.decode("utf-8", "replace").strip()
        return text[-limit:]


class TransportError(BackendError):
    """A command could not be run or failed; `reason` says how."""


@dataclass
class Transport:
    """Where a cluster's commands run: `host` is "local" or an SSH host alias."""

    host: str = "local"
    ssh_options: Sequence[str] = field(default_factory=tuple)
    env: Mapping[str, str] = field(default_factory=dict)

    @property
    def is_local(self) -> bool:
        return self.host in ("", "local", "localhost-direct")

    def argv(self, argv: Sequence[str]) -> list[str]:
        """The full argv that runs `argv` on the cluster with this transport's env."""
        envs = [f"{k}={v}" for k, v in self.env.items()]
        if self.is_local:
            return ["env", *envs, *argv] if envs else list(argv)
        remote = " ".join(shlex.quote(a) for a in (["env", *envs] if envs else []) + list(argv))
        return [
            "ssh",
            *SSH_BASE_OPTIONS,
            "-o",
            f"ControlPath={_control_dir()}/%C",
            *self.ssh_options,
            self.host,
            "--",
            remote,
        ]

    def run(
        self,
        argv: Sequence[str],
        *,
        timeout: float,
        input: bytes | None = None,
        check: bool = False,
    ) -> CommandResult:
        """Run `argv` on the cluster; never waits longer than `timeout` seconds."""
        full = self.argv(argv)
        started = time.monotonic()
        proc = self._popen(full, stdin=subprocess.PIPE, stderr=subprocess.PIPE)
        timed_out = False
        try:
            out, err = proc.communicate(input=input, timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(proc.pid)
            out, err = _drain_after_kill(proc)
        result = CommandResult(
            argv=tuple(full),
            returncode=proc.returncode if not timed_out else -int(signal.SIGKILL),
            stdout=out[:MAX_OUTPUT],
            stderr=err[:MAX_OUTPUT],
            elapsed_s=time.monotonic() - started,
            timed_out=timed_out,
        )
        if check and not result.ok:
            raise self.error_for(result, what=" ".join(argv[:2]))
        return result

    def stream(
        self, argv: Sequence[str], *, timeout: float, what: str = "command", chunk: int = 1 << 20
    ) -> Iterator[bytes]:
        """Run `argv` on the cluster and yield its stdout as it arrives (memory stays at one
        chunk, whatever the size), under the same deadline as `run`. Raises TransportError
        after the last chunk when the command failed or the deadline passed; a consumer that
        stops early kills the command."""
        full = self.argv(argv)
        started = time.monotonic()
        with tempfile.TemporaryFile() as err:
            proc = self._popen(full, stdin=subprocess.DEVNULL, stderr=err)
            assert proc.stdout is not None
            fd, timed_out, eof = proc.stdout.fileno(), False, False
            try:
                while True:
                    left = started + timeout - time.monotonic()
                    if left <= 0 or not select.select([fd], [], [], left)[0]:
                        timed_out = True
                        break
                    block = os.read(fd, chunk)
                    if not block:
                        eof = True
                        break
                    yield block
            finally:
                if eof:  # its output ended: let it exit (it may not have yet), within the deadline
                    timed_out = not _exits(proc, started + timeout - time.monotonic())
                if timed_out or proc.poll() is None:  # the deadline, or a consumer that stopped
                    _kill_group(proc.pid)
                proc.stdout.close()
                returncode = proc.wait()
            err.seek(0)
            result = CommandResult(
                argv=tuple(full),
                returncode=returncode if not timed_out else -int(signal.SIGKILL),
                stdout=b"",
                stderr=err.read(MAX_OUTPUT),
                elapsed_s=time.monotonic() - started,
                timed_out=timed_out,
            )
        if not result.ok:
            raise self.error_for(result, what=what)

    def _popen(self, full: list[str], *, stdin: Any, stderr: Any) -> subprocess.Popen[bytes]:
        """Start `full` in its own session (so a deadline can kill its whole group)."""
        try:
            return subprocess.Popen(
                full, stdin=stdin, stdout=subprocess.PIPE, stderr=stderr, start_new_session=True
            )
        except OSError as exc:  # not on PATH, not executable
            raise TransportError(
                f"{self.host}: cannot run {full[0]}: {exc.strerror or exc}", reason="command_failed"
            ) from None

    def run_script(self, script: str, *, timeout: float, check: bool = False) -> CommandResult:
        """Run a bash script on the cluster (fed on stdin: one connection, no quoting)."""
        return self.run(["bash", "-s"], timeout=timeout, input=script.encode(), check=check)

    def error_for(self, result: CommandResult, what: str = "command") -> TransportError:
        """Classify a failed result into a TransportError with a one-line message."""
        tail = result.stderr_tail(300).replace("\n", " | ")
        where = f"cluster host {self.host}" if not self.is_local else "local"
        if result.timed_out:
            return TransportError(
                f"{where}: {what} did not finish within {result.elapsed_s:.0f}s",
                reason="timeout",
            )
        if not self.is_local and result.returncode == 255:
            reason = "auth" if "Permission denied" in tail or "publickey" in tail else "unreachable"
            return TransportError(f"{where}: ssh failed: {tail or 'exit 255'}", reason=reason)
        return TransportError(
            f"{where}: {what} exited {result.returncode}: {tail or 'no stderr'}",
            reason="command_failed",
        )


def _drain_after_kill(proc: subprocess.Popen[bytes]) -> tuple[bytes, bytes]:
    """What the killed command wrote, without waiting for EOF forever: an ssh mux client
    hands its stdout/stderr descriptors to the ControlMaster, which keeps them open while
    the remote command runs on, so after the kill we read for at most a moment."""
    try:
        return proc.communicate(timeout=1)
    except subprocess.TimeoutExpired:
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
        proc.wait()
        return b"", b""


def _exits(proc: subprocess.Popen[bytes], within: float) -> bool:
    """Does `proc` exit within `within` seconds? (A command that has closed its output may
    still be exiting: a stream that killed it then would report a success as SIGKILL.)"""
    try:
        proc.wait(timeout=max(within, 0.0))
    except subprocess.TimeoutExpired:
        return False
    return True


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _control_dir() -> str:
    """A short per-user directory for SSH control sockets (paths are length-limited)."""
    path = Path(tempfile.gettempdir()) / f"labctl-ssh-{os.getuid()}"
    path.mkdir(mode=0o700, exist_ok=True)
    return str(path)
