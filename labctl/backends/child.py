"""Run one supervised child: its own session, output streamed, silence watched, the group
cleaned up afterwards.

- The child starts in a new session, so its process group id is its pid and labctl signals
  only that group (never a group it did not create).
- stdout and stderr share one pipe; one thread (a selector over the pipe, a pidfd for the
  child's exit and the signal wake-up pipe) reads it in chunks. Complete lines of each chunk
  are redacted in one call and written to the attempt's log file (and the tee, a terminal),
  so a token the child prints never reaches either (see `Sink`).
- No output for `stall_after` seconds: SIGTERM to the group, SIGKILL after `kill_grace`.
- SIGTERM/SIGINT to labctl (`Signals`) are forwarded to the group, with the same grace.
- The child gets SIGTERM if labctl itself dies (PR_SET_PDEATHSIG).
- The child's exit is awaited on its pid, never on pipe EOF (a grandchild may hold the
  pipe open): after the exit the pipe is drained until it is quiet (at most DRAIN_S), then
  whatever is left in the group is terminated (and killed after the grace).
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import IO, Any

from labctl.backends.proc import group_members, terminate_group
from labctl.backends.sink import Sink

COALESCE_BELOW = 1 << 14  # after a read smaller than this ...
COALESCE_S = 0.002  # ... wait this long before the next: a 64 KiB pipe does not fill up
DRAIN_S = 2.0
DRAIN_IDLE_S = 0.25
READ_SIZE = 1 << 16


@dataclass
class ChildResult:
    pid: int
    exit_code: int | None  # None when a signal ended it
    signal: int | None
    duration_s: float
    silence_s: float  # seconds without output when it ended (or was killed)
    stalled: bool = False  # labctl killed it for silence
    interrupted: int | None = None  # the signal labctl forwarded to it
    killed: bool = False  # SIGKILL was needed
    leftovers: list[int] = field(default_factory=list)  # group members alive after the exit
    pipe_closed: bool = True  # False: descendants still held the pipe after DRAIN_S
    bytes_out: int = 0
    log_fault: OSError | None = None  # the log could not be opened or stopped taking writes
    tail: bytes = b""  # then: the output's last bytes (redacted), kept in memory


class Signals:
    """SIGTERM/SIGINT caught while supervising: remembered, and the select loop woken."""

    CAUGHT = (signal.SIGTERM, signal.SIGINT)

    def __init__(self) -> None:
        self.signum: int | None = None
        self._r, self._w = os.pipe()
        os.set_blocking(self._r, False)
        os.set_blocking(self._w, False)
        self._old: dict[int, Any] = {}

    @property
    def fd(self) -> int:
        return self._r

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.signum is None:
            self.signum = signum
        with contextlib.suppress(OSError):
            os.write(self._w, b"x")

    def __enter__(self) -> Signals:
        if threading.current_thread() is threading.main_thread():
            for sig in self.CAUGHT:
                self._old[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old)
        os.close(self._r)
        os.close(self._w)

    def clear(self) -> None:
        with contextlib.suppress(BlockingIOError, OSError):
            while os.read(self._r, 512):
                pass

    def wait(self, seconds: float) -> bool:
        """Sleep up to `seconds` (a backoff); True as soon as a signal arrives."""
        deadline = time.monotonic() + seconds
        with selectors.DefaultSelector() as sel:
            sel.register(self._r, selectors.EVENT_READ)
            while self.signum is None and (left := deadline - time.monotonic()) > 0:
                sel.select(left)
                self.clear()
        return self.signum is not None


@dataclass(frozen=True)
class ChildSpec:
    argv: Sequence[str]
    env: Mapping[str, str]
    cwd: str | None
    log_path: Path
    stall_after: float
    kill_grace: float
    redact: Callable[[str], str]
    tee: IO[bytes] | None = None


class _Watch:
    """The state of one running child inside the select loop."""

    def __init__(self, spec: ChildSpec, proc: subprocess.Popen[bytes], signals: Signals) -> None:
        self.spec, self.proc, self.signals = spec, proc, signals
        self.started = self.last = time.monotonic()
        self.term_at: float | None = None
        self.result = ChildResult(proc.pid, None, None, 0.0, 0.0)

    def signal(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, sig)

    def tick(self) -> float | None:
        """Act on signals, silence and the kill grace; the seconds until the next check."""
        now, res, spec = time.monotonic(), self.result, self.spec
        if self.signals.signum is not None and res.interrupted is None:
            res.interrupted = self.signals.signum
            self.signal(self.signals.signum)
            self.term_at = self.term_at or now
        if self.term_at is None and now - self.last > spec.stall_after:
            res.stalled, res.silence_s = True, now - self.last
            self.signal(signal.SIGTERM)
            self.term_at = now
        if self.term_at is not None:
            if res.killed:
                return None
            if now - self.term_at >= spec.kill_grace:
                self.signal(signal.SIGKILL)
                res.killed = True
                return None
            return self.term_at + spec.kill_grace - now
        return self.last + spec.stall_after - now + 0.001


class Child:
    """A started child: `pid` (= its process group id), then `wait` to its end."""

    def __init__(self, spec: ChildSpec) -> None:
        """Start it (OSError when it cannot be started). A log file that cannot be opened
        (a full disk, a read-only state dir) is no reason not to: `log_fault` says why."""
        self.spec = spec
        self.log_fault: OSError | None = None
        self._log: IO[bytes] | None = None
        try:
            self._log = open(spec.log_path, "ab", buffering=0)  # noqa: SIM115 - closed in wait
        except OSError as exc:
            self.log_fault = exc
        try:
            self.proc = subprocess.Popen(
                list(spec.argv),
                env=dict(spec.env),
                cwd=spec.cwd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                bufsize=0,
                # labctl has no other thread while it starts a child (diagnose's scan pool
                # is joined), and the hook only calls a function resolved before the fork
                preexec_fn=_die_with(os.getpid()),  # noqa: PLW1509
            )
        except BaseException:
            self._close_log()
            raise
        self.pid = self.proc.pid

    def _close_log(self) -> None:
        if self._log is not None:
            with contextlib.suppress(OSError):
                self._log.close()

    def wait(self, signals: Signals) -> ChildResult:
        """Stream, watch and clean up (see the module doc) until the child has ended."""
        spec, proc = self.spec, self.proc
        assert proc.stdout is not None
        sink = Sink(self._log, spec.tee, spec.redact)
        watch = _Watch(spec, proc, signals)
        try:
            eof = _watch(watch, sink)
            if not eof:
                eof = _drain(proc.stdout.fileno(), sink, DRAIN_S)
        finally:
            proc.stdout.close()
            if proc.poll() is None:  # an error inside the loop: never leave it running
                watch.signal(signal.SIGKILL)
                proc.wait()
            sink.close()
            self._close_log()
        res = watch.result
        res.log_fault, res.tail = self.log_fault or sink.fault, sink.tail
        res.duration_s = time.monotonic() - watch.started
        if not res.stalled:
            res.silence_s = time.monotonic() - watch.last
        code = proc.returncode
        res.exit_code, res.signal = (code, None) if code >= 0 else (None, -code)
        res.pipe_closed, res.bytes_out = eof, sink.bytes_in
        res.leftovers = group_members(proc.pid)
        if res.leftovers:
            terminate_group(proc.pid, spec.kill_grace)
        return res


def _die_with(parent: int) -> Callable[[], None] | None:
    """In the child before exec: SIGTERM when labctl dies (PR_SET_PDEATHSIG), so a killed
    supervisor does not leave its experiment running unsupervised."""
    import ctypes

    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    pdeathsig, term = 1, int(signal.SIGTERM)

    def setup() -> None:
        prctl(pdeathsig, term)
        if os.getppid() != parent:  # labctl died before the call
            os.kill(os.getpid(), term)

    return setup


def _watch(w: _Watch, sink: Sink) -> bool:
    """The select loop until the child exits; True if the pipe reached EOF."""
    assert w.proc.stdout is not None
    out = w.proc.stdout.fileno()
    eof = False
    with selectors.DefaultSelector() as sel:
        sel.register(out, selectors.EVENT_READ, "out")
        sel.register(w.signals.fd, selectors.EVENT_READ, "signal")
        pidfd = _pidfd(w.proc.pid)
        if pidfd is not None:
            sel.register(pidfd, selectors.EVENT_READ, "exit")
        try:
            while w.proc.poll() is None:
                timeout = w.tick()
                if pidfd is None:  # no pidfd (old kernel): look at the child every 0.1 s
                    timeout = 0.1 if timeout is None else min(timeout, 0.1)
                for key, _ in sel.select(timeout):
                    if key.data == "out":
                        chunk = os.read(out, READ_SIZE)
                        if not chunk:
                            sel.unregister(out)
                            eof = True
                            continue
                        w.last = time.monotonic()
                        sink.feed(chunk)
                        if len(chunk) < COALESCE_BELOW:  # a fast writer: let the pipe fill
                            time.sleep(COALESCE_S)  # a little, for fewer, larger reads
                    elif key.data == "signal":
                        w.signals.clear()
        finally:
            if pidfd is not None:
                os.close(pidfd)
    return eof


def _pidfd(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _drain(fd: int, sink: Sink, seconds: float) -> bool:
    """Read what is left in the pipe: until EOF, a pause of DRAIN_IDLE_S (what the child
    wrote before it exited is already there) or `seconds`; True if it reached EOF."""
    deadline = time.monotonic() + seconds
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        while (left := deadline - time.monotonic()) > 0:
            if not sel.select(min(left, DRAIN_IDLE_S)):
                return False
            chunk = os.read(fd, READ_SIZE)
            if not chunk:
                return True
            sink.feed(chunk)
    return False
