"""Where a supervised child's output goes: redacted, to its log file and (maybe) a terminal.

Output arrives in arbitrary chunks. Only complete lines (ending in \\n or \\r, so progress
bars flow) are redacted and written, all the complete lines of a chunk in one redactor call
(the per-line cost stays low); the unfinished rest waits for the next chunk, so a token
split across two reads is still seen whole. A partial line longer than PARTIAL_CAP is
written up to its last blank. A private-key block cut by a chunk boundary stays masked
until its END line. A log that refuses a write (a full disk) is written no more: the
output is still read and still goes to the tee, `fault` says what stopped the log, and
`tail` keeps the last TAIL_KEEP bytes since (redacted) for the diagnosis.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import IO

PARTIAL_CAP = 1 << 18
TAIL_KEEP = 1 << 20


class Sink:
    def __init__(
        self, log: IO[bytes] | None, tee: IO[bytes] | None, redact: Callable[[str], str]
    ) -> None:
        self.log, self.tee, self.redact = log, tee, redact
        self.pending = b""
        self.in_key = False  # inside a private-key block whose END has not come yet
        self.bytes_in = 0
        self.fault: OSError | None = None  # why the log stopped (None: it has everything)
        self.tail = b""  # since the log stopped: its last TAIL_KEEP bytes

    def feed(self, chunk: bytes) -> None:
        self.bytes_in += len(chunk)
        buf = self.pending + chunk if self.pending else chunk
        cut = max(buf.rfind(b"\n"), buf.rfind(b"\r"))
        if cut < 0:
            if len(buf) < PARTIAL_CAP:
                self.pending = buf
                return
            cut = max(buf.rfind(b" "), buf.rfind(b"\t"))
            cut = cut if cut >= 0 else len(buf) - 1
        self.pending = buf[cut + 1 :]
        self._write(buf[: cut + 1])

    def close(self) -> None:
        if self.pending:
            self._write(self.pending)
            self.pending = b""

    def _write(self, block: bytes) -> None:
        text = self._redact(block.decode("utf-8", "surrogateescape"))
        data = text.encode("utf-8", "surrogateescape")
        if self.log is not None:
            try:
                write_all(self.log, data)
            except OSError as exc:  # a full disk: the child must not block on its pipe
                self.fault, self.log = exc, None
        if self.log is None:
            self.tail = (self.tail + data)[-TAIL_KEEP:]
        if self.tee is not None:
            try:
                self.tee.write(data)
                self.tee.flush()
            except (OSError, ValueError):
                self.tee = None  # the terminal went away; the log still gets everything

    def _redact(self, text: str) -> str:
        if self.in_key:  # the mask was written with the block's start: drop the rest
            end = text.find("-----END")
            if end < 0:
                return ""
            eol = text.find("\n", end)
            text = text[eol:] if eol >= 0 else ""
            self.in_key = False
        begin = text.rfind("-----BEGIN")
        if begin >= 0 and "PRIVATE KEY" in text[begin : begin + 64]:
            self.in_key = "-----END" not in text[begin:]
        return self.redact(text)


def write_all(out: IO[bytes], data: bytes) -> None:
    """Write every byte (a raw file may write less than asked)."""
    view = memoryview(data)
    while view:
        n = out.write(view)
        if n is None:
            continue
        view = view[n:]
    with contextlib.suppress(AttributeError):
        out.flush()
