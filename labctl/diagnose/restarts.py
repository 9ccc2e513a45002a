"""Logs that hold several runs of one job script (issue 15): the last run decides.

`bsub -o/-e` appends by default, `>>` and `nohup` append, a retry loop or a script that runs
its program once per setting writes each run into the same file: the log then holds one run
after another, and only the last one says how the job ended (a shell script's exit status is
its last command's). A new run starts where the log's opening line -- what the job printed
first: a module system's or a site script's banner, a framework's start-up line -- recurs whole.
The opening must be banner-like (at least MIN_OPENING characters with letters, not indented, no
progress, no failure: `opening`), so a short header, a separator, a traceback's header or frame
that one program repeats is not taken for a new run.

- `learn_head(data, lo, hi)`: the log's first HEAD_LINES lines (the opening and what follows it);
- `last_restart(data, lo, hi, head, line0, at_log_start)`: the last line in data[lo:hi] that
  repeats the opening: its offset, and how many of the head's lines the new run repeats, when
  the first run went on past them (0 when it did not: it ended inside its opening).

Candidates before the last restart belong to earlier runs (`earlier_run`); a candidate among the
lines the last run shares with the first one's opening, when an earlier run went on past it to
another failure or a success, was printed by every run as it started (demote.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

HEAD_LINES = 32
HEAD_BYTES = 64 << 10
MIN_OPENING = 16  # characters of the opening line, blanks excluded
MAX_OPENING = 4096
_LETTERS = re.compile(rb"[A-Za-z]")


def learn_head(data: bytes, lo: int, hi: int) -> list[bytes]:
    """The first HEAD_LINES whole lines of data[lo:hi] (line breaks already `\\n`)."""
    out: list[bytes] = []
    pos = lo
    while len(out) < HEAD_LINES and pos < hi:
        e = data.find(b"\n", pos, hi)
        if e < 0:
            break
        out.append(data[pos:e])
        pos = e + 1
    return out


def opening(head: Sequence[bytes], cat: Any) -> bytes | None:
    """The line whose recurrence starts a new run, or None when the log's first line is
    too short or has no letters, is indented (a traceback's frame, a table's row), shows
    progress (a step counter repeats by nature) or looks like a failure (a traceback's header
    recurs in a chained exception; a catalog candidate)."""
    if not head:
        return None
    line = bytes(head[0])
    text = line.strip()
    if len(b"".join(text.split())) < MIN_OPENING or len(line) > MAX_OPENING:
        return None
    if line[:1] in (b" ", b"\t") or len(_LETTERS.findall(text)) < 3:
        return None
    for rx in (cat.progress_rx, cat.prefilter):
        if rx is not None and rx.search(line):
            return None
    return line


def last_restart(
    data: bytes, lo: int, hi: int, head: Sequence[bytes], line0: bytes, *, at_log_start: bool
) -> tuple[int, int] | None:
    """(offset, shared) of the last line starting in data[lo:hi] that equals `line0`; `shared`
    is the number of head lines the run repeats from there, or 0 when the first run did not
    go on past them. None when the opening does not recur there."""
    needle = b"\n" + line0 + b"\n"
    i = data.rfind(needle, max(lo - 1, 0), hi)
    if i >= 0 and i + 1 >= lo:
        p = i + 1
    elif lo == 0 and not at_log_start and data.startswith(line0 + b"\n"):
        p = 0  # a region of the log's tail that starts with a new run
    else:
        return None
    shared, pos = 0, p
    while shared < len(head) and pos < len(data):
        e = data.find(b"\n", pos)
        if e < 0 or data[pos:e] != head[shared]:
            break
        shared, pos = shared + 1, e + 1
    went_on = shared < len(head) and head[shared] != line0
    return p, shared if went_on else 0
