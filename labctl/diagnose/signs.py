"""What surrounds a failure-looking line: its log level, and whether the job moved on after it.

- `level(prefix)`: the log level a line was written at, read from the text before the catalog
  match (logging's `- WARNING -`, `[WARNING]`, `WARNING:`, glog's `W0101 12:00:00` and
  `[W file.cpp:12]`, Optuna's, Tornado's and Jupyter's `[W 2024-03-01 10:05:00,000]`,
  `NCCL INFO`, TensorFlow's `I tensorflow/...cc:12]`, a Python warning category
  `UserWarning:`). A traceback printed inside a WARNING/INFO record is a logged warning, not a
  crash. NCCL has two levels, INFO and WARN, and writes its failures at WARN (`NCCL WARN Cuda
  failure 'out of memory'`, an InfiniBand completion error): its WARN is an error level.
- `in_warning(before, after)`: a line of a Python warning's message that the warning's header
  (`path.py:8: RuntimeWarning: Failed to read commit hash:`) starts above it and its quoted
  source line (indented) ends below it -- the message of an exception the warning reports
  (`No module named 'x'`) is the warning's text, written at warning level like its header.
- `last_progress(rx, data, lo, hi, before)`: where the job last moved on in data[lo:hi] -- the
  last forward-progress line (a step, an epoch, a progress bar; the catalog's `[progress]`
  patterns) whose text differs from the one before it -- searched from the end so a block
  dense with progress costs one small window.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from labctl.diagnose.hits import strip_prefix

# levels that mean "this was reported, not raised": the job goes on after such a line
QUIET_LEVELS = frozenset({"warning", "info", "debug"})
_LEVEL = re.compile(
    rb"(?:^|[\s\[(|:,;-])(?P<name>WARN(?:ING)?|INFO|DEBUG|NOTICE|ERROR|CRITICAL|FATAL)"
    rb"(?=[\]\s:|)]|$)"
)
_GLOG = re.compile(rb"(?:^|[\s\]:])\[?(?P<letter>[IWEF])\d{3,4} \d\d:\d\d:\d\d")
_BRACKET = re.compile(rb"\[(?P<letter>[IWEF])(?:\d{0,4} [\w./-]+(?:\.\w+)?:\d+)?\]")
_TF1 = re.compile(rb"(?:^|[\s\]:])(?P<letter>[IWEF]) tensorflow/[\w/.-]+:\d+\]")
# a level letter and a timestamp in brackets: Optuna's "[W 2024-03-01 10:05:00,000]", Tornado's
# and Jupyter's "[I 240301 10:00:00 web:2250]", "[E 10:00:00.123 ServerApp]"
_STAMP = re.compile(
    rb"\[(?P<letter>[IWEFDC]) (?:\d{4}-\d\d-\d\d |\d{6} )?\d\d:\d\d:\d\d(?:[.,]\d+)?"
    rb"(?: [\w.:-]+)?\]"
)
_PYWARN = re.compile(rb"\b[A-Z]\w*Warning: |^Warning: ")
_NCCL_WARN = re.compile(rb"\bNCCL WARN\b")
_ERRWORD = re.compile(rb"(?i)\b(?:error|fatal|exception|traceback)\b")
_LETTERS = {
    b"I": "info",
    b"W": "warning",
    b"E": "error",
    b"F": "error",
    b"D": "debug",
    b"C": "critical",
}
WINDOWS = (2 << 10, 16 << 10, 256 << 10)
_WARN_HEAD = re.compile(rb"\.py:\d+: [A-Z]\w*Warning: ")
_ANSI = re.compile(rb"\x1b\[[0-9;]*m")
WARNING_LINES = 2  # message lines between a warning's header and its source line, at most


def level(prefix: bytes) -> str | None:
    """The level named in the text before a match (the last one written wins), or None."""
    found: list[tuple[int, str]] = []
    for m in _LEVEL.finditer(prefix):
        name = m.group("name").decode()
        found.append((m.start(), "warning" if name.startswith("WARN") else name.lower()))
    for rx in (_GLOG, _BRACKET, _TF1, _STAMP):
        for m in rx.finditer(prefix):
            found.append((m.start(), _LETTERS[m.group("letter")]))
    for m in _PYWARN.finditer(prefix):
        found.append((m.start(), "warning"))
    for m in _NCCL_WARN.finditer(prefix):  # written after _LEVEL's "WARN" inside it: wins
        found.append((m.end(), "error"))
    return max(found)[1] if found else None


def quiet(prefix: bytes) -> bool:
    return level(prefix) in QUIET_LEVELS


def errorish(prefix: bytes) -> bool:
    """Written at an error level, or said to be an error, before the match (`srun: error:`,
    `E0101 ...`, `[ERROR]`): such a line is never a mere notice."""
    return level(prefix) in ("error", "critical", "fatal") or bool(_ERRWORD.search(prefix))


def in_warning(before: Sequence[bytes], after: Sequence[bytes]) -> bool:
    """Is the line between `before` (oldest first) and `after` part of a Python warning's
    message: its header above, only message lines between, its source line below?"""
    for b in reversed(before[-WARNING_LINES:]):
        if _WARN_HEAD.search(b):
            break
        if _indented(b) or not b.strip():
            return False
    else:
        return False
    for a in after[:WARNING_LINES]:
        if _indented(a):
            return True
        if not a.strip():
            return False
    return False


def _indented(line: bytes) -> bool:
    body = strip_prefix(_ANSI.sub(b"", line))
    return body[:1] in (b" ", b"\t") and bool(body.strip())


def last_progress(
    rx: Any, data: bytes, lo: int, hi: int, before: bytes | None = None
) -> tuple[int, bytes] | tuple[None, bytes | None]:
    """Where the job last moved on in data[lo:hi]: the offset of the last progress match whose
    text differs from the match before it (a repeated "iter 7" is not progress), and the text
    of the last match (carry it to the next block as `before`). (None, ...) when it never moved.
    """
    if rx is None or hi <= lo:
        return None, before
    for size in (*WINDOWS, hi - lo):
        a = max(lo, hi - size)
        prev, moved, last = (before if a == lo else None), None, None
        for m in rx.finditer(data, a, hi):
            text = m.group(0)
            if prev is not None and text != prev:
                moved = m.start()
            prev = last = text
        if moved is not None:
            return moved, last
        if a == lo:
            return None, last if last is not None else before
    return None, before
