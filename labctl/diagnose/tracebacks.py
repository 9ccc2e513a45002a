"""Following Python tracebacks through the scan (a mixin of Scanner).

When the scanner meets `Traceback (most recent call last)` it walks the following lines:
indented lines (after launcher prefixes) are frames and quoted source code, the first
non-indented line is the exception. That gives the last traceback for `unknown`, a
code_error hit for an exception line no catalog entry claims (`StopIteration`), the frames
range (source lines quoted there are never hits) and tracebacks printed under
"Exception ignored in" (never fatal). A log that begins inside a traceback -- its header cut off:
a paste of the frames alone, a tail of a longer log -- is followed from its first frame
(`_headless`).
"""

from __future__ import annotations

import re
from collections import deque
from typing import Any

from labctl.diagnose.hits import MAX_TEXT, CatalogHit, Traceback, clip, message, strip_prefix
from labctl.diagnose.lines import make_hit
from labctl.diagnose.signs import quiet

TB_MAX_LINES = 400
TAGS_KEPT = 64
_EXC = re.compile(rb"^(?P<exc>[A-Za-z_][\w.]*)(?::|\s*$)")
# a timestamped record (a launcher's, another rank's logger) -- never an exception line
_STAMPED = re.compile(rb"^\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d")
# how much of an exception's message a log record must quote to be the record it was logged with
EXC_INFO_MIN, EXC_INFO_CHARS = 12, 80
# a frame of a Python traceback, as the interpreter prints it (faulthandler's has no comma)
_FRAME = re.compile(rb'^[ \t]+File "[^"\n]+", line \d+, in \S')
# an exception line ending a traceback: line start, line end, block end, raw line, exception
# type, the line without its prefix, whether the traceback was written at WARNING/INFO level
Pending = tuple[int, int, int, bytes, str, bytes, bool]


class TracebackFollower:
    _tb: Traceback | None
    _tb_next: int
    _body: tuple[int, int]
    _ignored: deque[int]
    _pending_exc: dict[int, CatalogHit | Pending]
    _code_error: int | None
    _exc_tags: dict[int, frozenset[int]]
    _quiet_exc: deque[int]  # exception lines of tracebacks a WARNING/INFO record was logged with
    tracebacks: deque[Traceback]
    cat: Any
    _wrap: int | None

    def _continue_tb(self, data: bytes, start: int, n: int, base: int, final: bool) -> None:
        pos, rel = start, base + 1
        while rel < self._tb_next and pos < n:
            e = data.find(b"\n", pos, n)
            if e < 0:
                return
            pos, rel = e + 1, rel + 1
        if rel == self._tb_next:
            self._follow(data, pos, n, rel, final)

    def _headless(self, data: bytes, start: int, n: int, final: bool) -> None:
        """Follow a traceback whose header is not in the log: its first line is a frame."""
        e = data.find(b"\n", start, n)
        first = strip_prefix(data[start : e if e >= 0 else n])
        if not _FRAME.match(first):
            return
        # frames sit two columns deeper than the header and the exception line (a paste may
        # indent them all); only its frames and its exception line count: the frames of a
        # stack printed without an exception (TensorFlow's "Caused by op ..., defined at:")
        # look the same
        self._tb = Traceback(rel=0, indent=max(0, _indent(first) - 2), headless=True)
        self._tb_next = 1
        self._follow(data, start, n, 1, final)

    def _follow(self, data: bytes, pos: int, hi: int, rel: int, final: bool) -> None:
        tb = self._tb
        assert tb is not None
        while pos < hi and tb.seen < TB_MAX_LINES:
            e = data.find(b"\n", pos, hi)
            if e < 0:
                if not final:
                    break
                e = hi
            raw = data[pos:e]
            body = tb.body(raw)
            tb.seen += 1
            wrapped = bool(self._wrap) and tb.last_len == self._wrap  # a row of a wrapped frame
            tb.last_len = len(raw)
            if tb.frames and (_interleaved(raw) or _interleaved(body)):
                pos, rel = e + 1, rel + 1  # another process's log record, amid the frames
                continue
            if body.strip() and _indent(body) <= tb.indent and not wrapped:  # frames sit deeper
                self._end_tb(tb, rel, raw, data=data, ls=pos, le=e, hi=hi)
                return
            if body.strip():
                tb.frames.append(raw[:MAX_TEXT])
                if self.cat.frames_set is not None:
                    tb.tags |= self.cat.frames_match([raw])
            self._body = (tb.rel + 1, rel)
            pos, rel = e + 1, rel + 1
        self._tb_next = rel
        if tb.seen >= TB_MAX_LINES:
            self._end_tb(tb, None, None)

    def _end_tb(
        self,
        tb: Traceback,
        rel: int | None,
        raw: bytes | None,
        *,
        data: bytes = b"",
        ls: int = 0,
        le: int = 0,
        hi: int = 0,
    ) -> None:
        self._tb = None
        tb.exc_rel = rel
        tb.exc_text = clip(raw) if raw is not None else None
        tb.excerpt = ([clip(tb.header)] if tb.header else []) + [clip(f) for f in tb.frames]
        if tb.exc_text is not None:
            tb.excerpt.append(tb.exc_text)
        if tb.ignored:
            if rel is not None:
                self._ignored.append(rel)
            return
        if rel is not None and tb.tags:
            if len(self._exc_tags) >= TAGS_KEPT:
                self._exc_tags.pop(next(iter(self._exc_tags)))
            self._exc_tags[rel] = tb.tags
        if not tb.headless:
            self.tracebacks.append(tb)
        if raw is None or rel is None or self._code_error is None:
            return
        body = tb.body(raw)
        m = _EXC.match(body)
        if m is None or rel in self._pending_exc:
            return
        exc = m.group("exc").decode("utf-8", "replace")
        if not tb.quiet and tb.intro and _exc_info_of(tb.intro, body, exc):
            tb.quiet = True  # the traceback of a WARNING/INFO record that quotes its exception
            self._quiet_exc.append(rel)  # an entry's hit on its exception line is logged too
        self._pending_exc[rel] = (ls, le, hi, raw, exc, body, tb.quiet)

    def _synthetic(self, data: bytes, rel: int, item: Pending) -> CatalogHit:
        ls, le, hi, raw, exc, body, logged = item
        assert self._code_error is not None
        hit = make_hit(self.cat, self._code_error, data, ls, le, rel=rel, n=hi, line=raw)
        hit.groups = {"exc": exc}
        hit.key = message(body)
        hit.exc = exc
        hit.quiet = logged  # the exception of a traceback printed inside a WARNING record
        hit.synthetic = "traceback"
        return hit


def _indent(body: bytes) -> int:
    return len(body) - len(body.lstrip(b" \t"))


def _exc_info_of(intro: bytes, body: bytes, exc: str) -> bool:
    """Is this traceback the `exc_info` of the log record on the line before its header?
    Python's logging writes a record's message, then the traceback of the exception it was
    given; the record quotes that exception -- its message ("file_cache is unavailable ...") or
    its repr (Optuna's "... because of the following error: ValueError('bad')."). A record
    that quotes nothing of it is a line that merely came before a crash (a deprecation warning,
    then the script's own failure). Only a record at WARNING/INFO/DEBUG level makes it quiet."""
    if not quiet(intro):
        return False
    name = exc.rsplit(".", 1)[-1]
    if f"{name}(".encode() in intro:
        return True
    msg = body[len(exc) + 1 :].strip()[:EXC_INFO_CHARS]
    return len(msg) >= EXC_INFO_MIN and msg in intro


def _interleaved(body: bytes) -> bool:
    """A log record at WARNING/INFO/DEBUG level with a timestamp, printed by another process
    (torchelastic's agent, another rank) while this traceback was being written: it neither
    ends the traceback nor is its exception."""
    return bool(_STAMPED.match(body)) and quiet(body)
