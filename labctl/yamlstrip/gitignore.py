"""gitignore(5) patterns, matched against one path at a time, as git matches them.

`IgnoreFile.verdict(rel, is_dir)` answers for the path itself: True (excluded), False
(re-included by a `!pattern`) or None (no pattern matches); the last matching line wins.
A pattern never matches a path merely because it lies inside a matching directory: the
walk does not enter an excluded directory, which is how git excludes what is inside it
(and why nothing there can be re-included).

The rules: blank lines and `#` lines are skipped (`\\#`, `\\!` escape them); trailing
spaces are dropped unless escaped; `!` negates; a trailing `/` matches directories only;
a pattern with a `/` at its start or middle is anchored to the file's directory, any other
matches a name at any depth; `*` and `?` do not cross `/`; `[...]` is a class (`[!...]`
negated); `**/` at the start matches any leading directories, `/**` at the end everything
inside, `/**/` zero or more directories.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

_CLASSES = {  # the POSIX classes git's wildmatch knows
    "alnum": "a-zA-Z0-9",
    "alpha": "a-zA-Z",
    "digit": "0-9",
    "lower": "a-z",
    "upper": "A-Z",
    "space": r"\s",
    "xdigit": "0-9a-fA-F",
    "punct": re.escape("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"),
}


def _class(segment: str, i: int) -> tuple[str, int] | None:
    """The regex for the class starting at segment[i] == '[', and the index after it."""
    j = i + 1
    negate = j < len(segment) and segment[j] in "!^"
    if negate:
        j += 1
    parts: list[str] = []
    first = True
    while j < len(segment):
        ch = segment[j]
        if ch == "]" and not first:
            body = "".join(parts)
            return ("[^/" + body + "]" if negate else "[" + body + "]"), j + 1
        first = False
        if ch == "[" and segment.startswith("[:", j):
            close = segment.find(":]", j + 2)
            name = segment[j + 2 : close] if close > 0 else ""
            if name in _CLASSES:
                parts.append(_CLASSES[name])
                j = close + 2
                continue
        if ch == "\\" and j + 1 < len(segment):
            j += 1
            ch = segment[j]
        if ch == "-" and parts and j + 1 < len(segment) and segment[j + 1] != "]":
            parts.append("-")
        else:
            parts.append(re.escape(ch))
        j += 1
    return None  # no closing bracket: a literal '['


def _segment(segment: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(segment):
        ch = segment[i]
        if ch == "*":
            while i < len(segment) and segment[i] == "*":
                i += 1
            out.append("[^/]*")
            continue
        if ch == "?":
            out.append("[^/]")
        elif ch == "[" and (found := _class(segment, i)) is not None:
            out.append(found[0])
            i = found[1]
            continue
        elif ch == "\\" and i + 1 < len(segment):
            i += 1
            out.append(re.escape(segment[i]))
        else:
            out.append(re.escape(ch))
        i += 1
    return "".join(out)


def _strip_trailing_spaces(line: str) -> str:
    end = len(line)
    while end > 0 and line[end - 1] == " " and not (end > 1 and line[end - 2] == "\\"):
        end -= 1
    return line[:end]


@dataclass(frozen=True, slots=True)
class Pattern:
    regex: re.Pattern[str]
    negate: bool
    dir_only: bool


def compile_line(line: str) -> Pattern | None:
    """One line of an ignore file; None for blanks and comments."""
    line = _strip_trailing_spaces(line.rstrip("\r"))
    if not line or line.startswith("#"):
        return None
    negate = line.startswith("!")
    if negate or line.startswith(("\\!", "\\#")):
        line = line[1:]
    dir_only = line.endswith("/")
    line = line.rstrip("/")
    if not line:
        return None
    anchored = "/" in line
    segments = line.lstrip("/").split("/") if anchored else [line]
    body = "" if anchored else "(?:.*/)?"
    last = len(segments) - 1
    for n, segment in enumerate(segments):
        if segment == "**":
            if last == 0:
                body += ".*"  # everything
            elif n == 0:
                body += "(?:.*/)?"  # any leading directories
            elif n == last:
                body += "/.*"  # everything inside
            else:
                body += "(?:/.*)?"  # zero or more directories
            continue
        if n > 1 or (n == 1 and segments[0] != "**"):
            body += "/"
        body += _segment(segment)
    return Pattern(re.compile(body + r"\Z", re.DOTALL), negate, dir_only)


class IgnoreFile:
    """The patterns of one ignore file."""

    def __init__(self, lines: Iterable[str]) -> None:
        self.patterns = [p for p in map(compile_line, lines) if p is not None]

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def verdict(self, rel: str, is_dir: bool) -> bool | None:
        """True: excluded, False: re-included, None: no pattern matches `rel`
        (a path relative to the file's directory, `/`-separated, no trailing slash)."""
        for pattern in reversed(self.patterns):
            if pattern.dir_only and not is_dir:
                continue
            if pattern.regex.match(rel):
                return not pattern.negate
        return None
