"""Crontab text as lines, and line-exact edits of it.

Every edit keeps every byte of every line it does not add or remove: comments, blank
lines, environment lines, `@reboot` lines, other tools' lines, CRLF endings and a last
line without a newline all stay as they were. The only byte ever added besides labctl's
own line is the newline that must separate it from a last line that had none (the
crontab command refuses a file without a final newline).

labctl finds its own lines again by a trailing tag comment on a job line:

    */30 * * * * SWEEP_QUIET_OK=1 /opt/labctl/scripts/sweep # labctl:sweep
    0 * * * * /lab/experiments/active/exp1/refill.sh # labctl:experiment=exp1

The tag must be the last thing on the line, after whitespace; the shell sees it as a
comment. A commented-out line is a comment: never treated as a rule, never edited.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

TAG_PREFIX = "labctl:"
_TAG = re.compile(r"(?:^|[ \t])#[ \t]*labctl:([A-Za-z0-9_.:=/@+-]+)[ \t]*$")
_ENV = re.compile(r"""^[ \t]*("[^"]*"|'[^']*'|[^\s="']+)[ \t]*=""")
_JOB = re.compile(
    r"^[ \t]*(?P<when>@[A-Za-z]+|(?:\S+[ \t]+){4}\S+)[ \t]+(?P<rest>.*)$",
)
KINDS = ("job", "env", "comment", "blank", "other")


@dataclass(frozen=True)
class Line:
    """One line of a crontab: its 1-based number, byte offset, bytes (with the ending)."""

    number: int
    start: int
    raw: bytes
    kind: str
    schedule: str | None = None
    user: str | None = None  # the user field of a system crontab (/etc/crontab, cron.d)
    command: str | None = None  # what the shell runs (the tag comment included)
    tag: str | None = None

    @property
    def text(self) -> str:
        """The line without its ending, as text (undecodable bytes kept as escapes)."""
        return self.raw.rstrip(b"\r\n").decode("utf-8", "surrogateescape")

    @property
    def shown(self) -> str:
        """The line for a record or a document (undecodable bytes replaced)."""
        return self.raw.rstrip(b"\r\n").decode("utf-8", "replace")


def split(data: bytes) -> list[bytes]:
    """The lines of `data`, each with its own ending (the last may have none)."""
    return data.splitlines(keepends=True) if data else []


def _classify(number: int, start: int, raw: bytes, system: bool) -> Line:
    text = raw.rstrip(b"\r\n").decode("utf-8", "surrogateescape")
    body = text.strip()
    if not body:
        return Line(number, start, raw, "blank")
    if body.startswith("#"):
        return Line(number, start, raw, "comment")
    first = body[0]
    if first in "@*" or first.isdigit():
        m = _JOB.match(text)
        if m is None:
            return Line(number, start, raw, "other")
        rest, user = m.group("rest"), None
        if system:
            parts = re.split(r"[ \t]+", rest, maxsplit=1)
            user, rest = parts[0], (parts[1] if len(parts) > 1 else "")
        tag = _TAG.search(rest)
        return Line(
            number,
            start,
            raw,
            "job",
            schedule=m.group("when"),
            user=user,
            command=rest,
            tag=tag.group(1) if tag else None,
        )
    if _ENV.match(text):
        return Line(number, start, raw, "env")
    return Line(number, start, raw, "other")


def parse(data: bytes, *, system: bool = False) -> list[Line]:
    """Every line of a crontab, classified. `system`: lines carry a user field."""
    out, offset = [], 0
    for number, raw in enumerate(split(data), start=1):
        out.append(_classify(number, offset, raw, system))
        offset += len(raw)
    return out


def tagged(lines: Iterable[Line], tag: str) -> list[Line]:
    """The job lines whose trailing tag is exactly `labctl:<tag>`."""
    return [line for line in lines if line.kind == "job" and line.tag == tag]


def without_tag(command: str) -> str:
    """A job line's command with labctl's trailing tag comment taken off."""
    return _TAG.sub("", command).rstrip(" \t")


def shell_code(command: str) -> str:
    """A shell command without its comment (a `#` starting a word, outside quotes)."""
    quote, prev = "", " "
    for i, ch in enumerate(command):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and prev in " \t;&|(":
            return command[:i]
        prev = ch
    return command


def assignment(line: Line) -> tuple[str, str] | None:
    """An environment line's (name, value), as cron reads it: spaces around `=` and one
    pair of quotes around the name or the value dropped, nothing expanded."""
    if line.kind != "env":
        return None
    name, _, value = line.text.partition("=")
    name, value = name.strip(), value.strip()
    for q in "\"'":
        if len(name) > 1 and name[0] == name[-1] == q:
            name = name[1:-1]
        if len(value) > 1 and value[0] == value[-1] == q:
            value = value[1:-1]
    return name, value


def append_line(data: bytes, line: str) -> bytes:
    """`data` with `line` added at the end (a newline first if the last line had none)."""
    new = line.encode("utf-8")
    if b"\n" in new or b"\r" in new:
        raise ValueError("a crontab line cannot contain a line break")
    if data and not data.endswith(b"\n"):
        data += b"\n"
    return data + new + b"\n"


def remove_lines(data: bytes, numbers: Iterable[int]) -> bytes:
    """`data` without the lines numbered `numbers`; every other byte stays."""
    drop = set(numbers)
    return b"".join(raw for n, raw in enumerate(split(data), start=1) if n not in drop)


def replace_line(data: bytes, number: int, line: str) -> bytes:
    """`data` with line `number` replaced by `line` (its line ending kept)."""
    out = []
    for n, raw in enumerate(split(data), start=1):
        if n == number:
            ending = raw[len(raw.rstrip(b"\r\n")) :] or b"\n"
            raw = line.encode("utf-8") + ending
        out.append(raw)
    return b"".join(out)


def escape_percent(command: str) -> str:
    """cron turns an unescaped `%` into a newline: escape every one that is not already."""
    return re.sub(r"(?<!\\)%", r"\\%", command)
