"""Death markers in new log bytes: lines that say the job is dying or dead while Slurm may
still report RUNNING.

`hard` markers end the job (slurmstepd kill lines, cgroup oom-kill, NCCL watchdog timeout);
`soft` ones (a final Python traceback, a CUDA OOM or error, an srun task exit) may be caught
and survived, so the verdict layer confirms them with "no growth since". A marker's `final`
flag says no progress line follows it in the bytes scanned.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

from labctl.verdicts import KILLED, kill_lines

# (kind, literal pre-check, line regex, cause, severity)
_SIMPLE: tuple[tuple[str, bytes, re.Pattern[bytes], str, str], ...] = (
    ("oom_kill", b"oom-kill", re.compile(rb"Detected \d+ oom-kill event|oom-kill"), "oom", "hard"),
    (
        "nccl_timeout",
        b"ollective operation timeout",
        re.compile(rb"Watchdog caught collective operation timeout"),
        "nccl_timeout",
        "hard",
    ),
    (
        "cuda_oom",
        b"out of memory",
        re.compile(rb"CUDA out of memory|OutOfMemoryError"),
        "oom",
        "soft",
    ),
    ("cuda_error", b"CUDA error", re.compile(rb"CUDA error: "), "user_code", "soft"),
    (
        "srun_task",
        b"srun: error:",
        re.compile(
            rb"srun: error: \S+: tasks? [\d,-]+: "
            rb"(?:Killed|Out Of Memory|Exited with exit code [1-9]|Terminated)"
        ),
        "user_code",
        "soft",
    ),
)
_LINE = re.compile(rb"[^\r\n]*")
TRACEBACK = b"Traceback (most recent call last)"
_RANK_PREFIX = re.compile(r"^(?:\[rank\d+\]:|\(\w+ pid=\d+\))\s?")
_EXC_LINE = re.compile(
    r"^[A-Za-z_][\w.]*(?:Error|Exception|Interrupt|Exit|Warning|Failure)?\b(?::.*)?$"
)
LINE_MAX = 500


@dataclass(slots=True)
class Marker:
    # slurm_cancel | slurm_failed | oom_kill | nccl_timeout | cuda_oom | cuda_error | srun_task
    # | traceback
    kind: str
    # a cause of labctl.verdicts (CAUSE_VERDICT): time_limit | preemption | node_fail | requeue
    # | user_cancel | oom | nccl_timeout | user_code
    cause: str
    severity: str  # hard | soft
    line: str
    offset: int  # file offset of the (newest) line
    count: int = 1
    final: bool = True
    detail: str | None = None  # the exception line of a traceback

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _line_at(buf: bytes, pos: int) -> tuple[int, bytes]:
    start = max(buf.rfind(b"\n", 0, pos), buf.rfind(b"\r", 0, pos)) + 1
    m = _LINE.match(buf, start)
    return start, (m.group(0) if m else b"")


def _text(line: bytes) -> str:
    return line.decode("utf-8", "replace").strip()[:LINE_MAX]


def find_markers(buf: bytes, base: int = 0, limit: int = 16) -> list[Marker]:
    """Markers in `buf` (complete lines only), one per kind/cause, newest occurrence kept.

    `base` is the file offset of `buf[0]`; the result is sorted by offset.
    """
    found: dict[tuple[str, str], Marker] = {}

    def add(kind: str, cause: str, severity: str, pos: int) -> None:
        start, line = _line_at(buf, pos)
        prev = found.get((kind, cause))
        count = prev.count + 1 if prev else 1
        found[(kind, cause)] = Marker(kind, cause, severity, _text(line), base + start, count)

    for pos, kill in kill_lines(buf):
        if kill is None:
            add("slurm_failed", "user_code", "hard", pos)
        else:
            add("slurm_cancel", KILLED[kill][1], "hard", pos)
    for kind, literal, pattern, cause, severity in _SIMPLE:
        if literal in buf:
            for m in pattern.finditer(buf):
                add(kind, cause, severity, m.start())
    return sorted(found.values(), key=lambda mk: mk.offset)[-limit:]


def traceback_marker(buf: bytes, pos: int, base: int = 0) -> Marker:
    """The traceback block starting at `buf[pos]`: its exception line becomes `detail`."""
    header_start, header = _line_at(buf, pos)
    detail: str | None = None
    tail = buf[header_start + len(header) : header_start + len(header) + 65536]
    for raw in re.split(rb"[\r\n]", tail):
        text = _RANK_PREFIX.sub("", raw.decode("utf-8", "replace")).rstrip()
        if (
            not text
            or text[0] in " \t"
            or text.startswith(("Traceback", "During handling", "The above"))
        ):
            continue
        if text.startswith("^") or text.startswith("~"):
            continue
        if _EXC_LINE.match(text):
            detail = text[:LINE_MAX]
            break
    return Marker(
        "traceback", "user_code", "soft", _text(header), base + header_start, detail=detail
    )
