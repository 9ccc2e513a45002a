"""The regex engine behind diagnose: RE2 (google-re2) when installed, Python `re` otherwise.

Everything is matched on BYTES. RE2 runs in Latin-1 mode (one byte = one character, so any
byte sequence is valid input and `.` matches any byte but newline); Python `re` on bytes
patterns behaves the same way. Patterns must use the common dialect of both: no look-around,
no backreferences, `(?i)` only at the very start (it becomes a scoped `(?i:...)` group when
patterns are combined into one alternation).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Protocol

try:  # pragma: no cover - exercised implicitly; the fallback is tested by monkeypatching
    import re2 as _re2
except ImportError:  # pragma: no cover
    _re2 = None

HAVE_RE2 = _re2 is not None
_RE2_MAX_MEM = 256 << 20  # DFA budget for the big alternation (never allocated up front)


class Matcher(Protocol):
    def search(self, text: bytes, pos: int = ..., endpos: int = ...) -> Any: ...


class PatternError(ValueError):
    """A catalog pattern that one of the engines rejects."""


def split_flags(pattern: str) -> tuple[str, str]:
    """`(?i)abc` -> ("i", "abc"). Only a leading flag group is recognised."""
    m = re.match(r"\(\?([aiLmsux]+)\)", pattern)
    if not m:
        return "", pattern
    return m.group(1), pattern[m.end() :]


_NAMED = re.compile(r"(?<!\\)((?:\\\\)*)\(\?P<\w+>")


def scoped(pattern: str) -> str:
    """A pattern safe to embed in an alternation: leading `(?i)` becomes `(?i:...)` and named
    groups become plain groups (names may repeat across patterns)."""
    flags, body = split_flags(pattern)
    body = _NAMED.sub(r"\1(?:", body)
    return f"(?{flags}:{body})" if flags else f"(?:{body})"


def _re2_options(use_re2: bool) -> Any:
    assert _re2 is not None and use_re2
    opts = _re2.Options()
    opts.encoding = _re2.Options.Encoding.LATIN1
    opts.max_mem = _RE2_MAX_MEM
    opts.log_errors = False
    return opts


def compile_one(pattern: str, *, use_re2: bool = HAVE_RE2, multiline: bool = False) -> Matcher:
    """Compile one pattern for bytes input; raises PatternError with the engine's reason."""
    try:
        re.compile(pattern.encode("utf-8"))
    except re.error as exc:
        raise PatternError(f"invalid regex: {exc}") from None
    body = split_flags(pattern)[1]
    if "(?" in body and re.search(r"\(\?[aiLmsux]+\)", body):
        raise PatternError("inline flags such as (?i) are only allowed at the start")
    text = ("(?m)" if multiline else "") + pattern
    if use_re2 and _re2 is not None:
        try:
            return _re2.compile(text.encode("utf-8"), _re2_options(use_re2))
        except _re2.error as exc:
            msg = f"not supported by RE2 ({exc}); avoid look-around/backreferences"
            raise PatternError(msg) from None
    return re.compile(text.encode("utf-8"))


def compile_alternation(patterns: Sequence[str], *, use_re2: bool = HAVE_RE2) -> Matcher:
    """One multi-line alternation of every pattern: the cheap prefilter over a whole block."""
    body = "|".join(scoped(p) for p in patterns) or "(?!)"
    if use_re2 and _re2 is not None:
        if not patterns:
            body = "[^\\x00-\\xff]"  # matches nothing (RE2 has no (?!))
        opts = _re2_options(use_re2)
        opts.never_capture = True  # only the match start is used
        return _re2.compile(("(?m)" + body).encode("utf-8"), opts)
    return re.compile(("(?m)" + body).encode("utf-8"))


class LineSet:
    """Which of N patterns match one line: RE2::Set when available, else a loop."""

    def __init__(self, patterns: Sequence[str], *, use_re2: bool = HAVE_RE2) -> None:
        self._set: Any = None
        self._each: list[re.Pattern[bytes]] = []
        if use_re2 and _re2 is not None and patterns:
            s = _re2.Set.SearchSet(_re2_options(use_re2))
            for p in patterns:
                s.Add(scoped(p).encode("utf-8"))
            s.Compile()
            self._set = s
        else:
            self._each = [re.compile(scoped(p).encode("utf-8")) for p in patterns]

    def match(self, line: bytes) -> list[int]:
        if self._set is not None:
            return list(self._set.Match(line) or ())
        return [i for i, rx in enumerate(self._each) if rx.search(line)]
