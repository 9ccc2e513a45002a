"""Logs that hold several runs of one job script (issue 15): the last run decides.

`bsub -o/-e` appends by default, `>>` and `nohup` append, a retry loop or a script that runs
its program once per setting writes each run into the same file: the log then holds one run
after another, and only the last one says how the job ended (a shell script's exit status is
its last command's). A new run starts where the log's opening line -- what the job printed
first: a module system's or a site script's banner, a framework's start-up line -- recurs whole.
The opening must be banner-like (at least MIN_OPENING characters with letters, not indented, no
progress, no failure: `opening`), so a short header, a separator, a traceback's header or frame
that one program repeats is not taken for a new run. A job script that prints the date first
(`date`: `Mon Jan 19 10:28:25 2026`, `2026-01-19 10:28:25`) starts every run with another one:
its opening is then a time stamp of that shape followed by the same second line (a requeued
SLURM job prints it again after its preemption banner), matched at least MIN_OPENING long.

- `learn_head(data, lo, hi)`: the log's first HEAD_LINES lines (the opening and what follows it);
- `last_restart(data, lo, hi, head, opening, at_log_start)`: the last line in data[lo:hi] that
  repeats the opening: its offset, and how many of the head's lines the new run repeats, when
  the first run went on past them (0 when it did not: it ended inside its opening).

Candidates before the last restart belong to earlier runs (`earlier_run`); a candidate among the
lines the last run shares with the first one's opening, when an earlier run went on past it to
another failure or a success, was printed by every run as it started (demote.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

HEAD_LINES = 32
HEAD_BYTES = 64 << 10
MIN_OPENING = 16  # characters of the opening line, blanks excluded
MAX_OPENING = 4096
_LETTERS = re.compile(rb"[A-Za-z]")


# `date`'s output alone on a line (C locale, a zone or not; ISO 8601): a run's own time stamp
_STAMP = re.compile(
    rb"^\s*(?:(?:[A-Z][a-z]{2},? +)?(?:[A-Z][a-z]{2} +\d{1,2}|\d{1,2} +[A-Z][a-z]{2})"
    rb"(?: +\d{4})? +\d{1,2}:\d{2}:\d{2}(?: *[AP]M)?(?: +[A-Z]{2,5}| +[+-]\d{4})?(?: +\d{4})?"
    rb"|\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?)\s*$"
)


# a logger's time stamp before a record's text: `2025-05-06 20:14:27,402 INFO ...`, or in
# brackets, with the next field glued on as Hydra writes it: `[2022-09-23 19:29:09,028][main]`
_LOGSTAMP = re.compile(
    rb"^\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?"
    rb"(?:\]\s*|\s+)(?=\S)"
)


@dataclass(frozen=True)
class Opening:
    """What starts a run: `line` recurring whole, or (`stamped`) a time stamp of any value
    followed by `line` (the log's second line), or (`logged`) a logger's record whose text after
    its time stamp is `line`, followed by the record whose text is `then` (two records, since
    one record's text may recur within a run) or right after a line reporting a failure (the
    run before ended there)."""

    line: bytes
    stamped: bool = False
    logged: bool = False
    then: bytes = b""

    def starts(self, line: bytes) -> bool:
        if self.logged:
            return unstamped(line) == self.line
        return bool(_STAMP.match(line)) if self.stamped else line == self.line


def unstamped(line: bytes) -> bytes | None:
    """A logger record's text without its time stamp (None when it has none)."""
    m = _LOGSTAMP.match(line)
    return line[m.end() :] if m else None


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


def opening(head: Sequence[bytes], cat: Any) -> Opening | None:
    """What starts a new run, or None when the log's first line is too short or has no
    letters, is indented (a traceback's frame, a table's row), shows progress (a step counter
    repeats by nature) or looks like a failure (a traceback's header recurs in a chained
    exception; a catalog candidate). A first line that is a time stamp alone is matched by its
    shape, with the second line, which must be long enough and no progress or failure."""
    if not head:
        return None
    if _STAMP.match(head[0]):
        second = bytes(head[1]) if len(head) > 1 else b""
        if len(b"".join(second.split())) < MIN_OPENING or _busy(second, cat):
            return None
        return Opening(second, stamped=True)
    line = bytes(head[0])
    rest = unstamped(line)
    if rest is not None:
        # the record that follows the opening; a run that ended inside it (started again at
        # once: the opening repeats) does not say what follows, the next run does
        then = next((t for t in (unstamped(bytes(h)) for h in head[1:]) if t != rest), None)
        if then is None or not (_usable(rest, cat) and _usable(then, cat)):
            return None
        return Opening(rest, logged=True, then=then)
    if not _usable(line, cat):
        return None
    return Opening(line)


def _usable(line: bytes, cat: Any) -> bool:
    """Long enough, with letters, not indented, no progress and no failure."""
    text = line.strip()
    if len(b"".join(text.split())) < MIN_OPENING or len(line) > MAX_OPENING:
        return False
    return not (line[:1] in (b" ", b"\t") or len(_LETTERS.findall(text)) < 3 or _busy(line, cat))


# words of a failure report: a line that says something failed is part of an error's report
# (a gRPC status printed once per failed op, a chained exception's detail), not an opening,
# even where no catalog entry names it
_FAILING = re.compile(rb"(?i)\b(?:error|errors|failed|failure|fatal|exception|traceback)\b")


def _busy(line: bytes, cat: Any) -> bool:
    """Progress, a catalog candidate or a failure's words, or too long to be an opening."""
    if len(line) > MAX_OPENING or _FAILING.search(line):
        return True
    return any(rx is not None and rx.search(line) for rx in (cat.progress_rx, cat.prefilter))


def last_restart(
    data: bytes, lo: int, hi: int, head: Sequence[bytes], op: Opening, *, at_log_start: bool
) -> tuple[int, int] | None:
    """(offset, shared) of the last line starting in data[lo:hi] that starts a run (`op`);
    `shared` is the number of head lines the run repeats from there, or 0 when the first run
    did not go on past them. None when the opening does not recur there."""
    p = _last_stamped(data, lo, hi, op.line, at_log_start) if op.stamped else None
    if op.logged:
        p = _last_logged(data, lo, hi, op, at_log_start)
    elif not op.stamped:
        needle = b"\n" + op.line + b"\n"
        i = data.rfind(needle, max(lo - 1, 0), hi)
        if i >= 0 and i + 1 >= lo:
            p = i + 1
        elif lo == 0 and not at_log_start and data.startswith(op.line + b"\n"):
            p = 0  # a region of the log's tail that starts with a new run
    if p is None:
        return None
    shared, pos = 0, p
    while shared < len(head) and pos < len(data):
        e = data.find(b"\n", pos)
        line = data[pos:e] if e >= 0 else b""
        if e < 0 or not (line == head[shared] or (shared == 0 and op.starts(line))):
            break
        shared, pos = shared + 1, e + 1
    went_on = shared < len(head) and not op.starts(head[shared])
    return p, shared if went_on else 0


def _last_stamped(data: bytes, lo: int, hi: int, second: bytes, at_log_start: bool) -> int | None:
    """Offset of the last time-stamp line starting in data[lo:hi] that `second` follows."""
    needle = b"\n" + second + b"\n"
    end = hi
    while (i := data.rfind(needle, max(lo, 0), end)) >= 0:
        s = data.rfind(b"\n", 0, i)
        p = s + 1
        if p >= lo and _STAMP.match(data[p:i]) and (s >= 0 or not at_log_start):
            return p
        end = i + len(needle) - 1
    return None


def _last_logged(data: bytes, lo: int, hi: int, op: Opening, at_log_start: bool) -> int | None:
    """Offset of the last line starting in data[lo:hi] that is a time-stamped record with the
    opening's text, followed by one with the text of the log's second record -- or right after
    a line that reports a failure: the run before it ended there and the program was started
    again (a relaunch may log something else second: its code changed in between)."""
    needle = op.line + b"\n"
    end = hi
    while (i := data.rfind(needle, max(lo, 0), end)) >= 0:
        p = data.rfind(b"\n", 0, i) + 1
        e = data.find(b"\n", i + len(needle))
        nxt = data[i + len(needle) : e if e >= 0 else len(data)]
        m = _LOGSTAMP.match(data[p : i + 1])
        at_start = m is not None and p + m.end() == i and p >= lo and (p > 0 or not at_log_start)
        if at_start and (unstamped(nxt) == op.then or _after_failure(data, p)):
            return p
        end = i + len(needle) - 1
    return None


# the last line of a run that died: a failure's words, or an exception line (`OSError: ...`)
_EXCEPTION_LINE = re.compile(rb"^\s*(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception|Exit|Interrupt)\b")


def _after_failure(data: bytes, p: int) -> bool:
    """Does the line before offset `p` (a line start) report a failure?"""
    if p <= 0:
        return False
    prev = data[data.rfind(b"\n", 0, p - 1) + 1 : p - 1]
    text = unstamped(prev) or prev
    return bool(_FAILING.search(text) or _EXCEPTION_LINE.match(text))
