"""One candidate line of the scan (a mixin of Scanner): which catalog entry it is a hit of
(the first whose near-lines and frames agree; the others are shadowed), whether it starts a
traceback, the hits only a terminal-wrapped line's joined rows show, and which hits are kept
(the first and last `keep` per entry, turned into CatalogHits at the end of a block).
"""

from __future__ import annotations

from labctl.diagnose import wrap
from labctl.diagnose.hits import MAX_TEXT, CatalogHit, EntryHits, Traceback, strip_prefix
from labctl.diagnose.lines import (
    CONTEXT_BEFORE,
    cut_line,
    lines_after,
    lines_before,
    make_hit,
)
from labctl.diagnose.signs import quiet
from labctl.diagnose.tracebacks import TracebackFollower

_NONE: frozenset[int] = frozenset()
# a traceback's header; read without its first letter, which a paste or an overwriting
# terminal sometimes loses ("raceback (most recent call last):"): the rest is unmistakable
_TB = b"raceback (most recent call last)"
# the lines Python prints above a traceback that cannot end the process: an exception in a
# destructor or callback ("Exception ignored in: ..."), and one in a thread while the
# interpreter shuts down ("Exception in thread X (most likely raised during interpreter
# shutdown):"), and one in an atexit callback (Python 3.10's "Error in atexit._run_exitfuncs:";
# later versions say "Exception ignored in atexit callback"); and the libraries that log a
# failure of an optional part with its traceback and carry on without it (bitsandbytes'
# cextension.py, when its native library does not load: a CPU-only or ROCm build)
_IGNORED = (
    b"Exception ignored",
    b"raised during interpreter shutdown",
    b"Error in atexit._run_exitfuncs",
    b"Could not load bitsandbytes native library",
)


def _tb_at(line: bytes) -> int:
    """Where the header starts in `line` (its `T` when there is one)."""
    at = line.find(_TB)
    return at - 1 if at > 0 and line[at - 1 : at] in (b"T", b"t") else at


class CandidateLines(TracebackFollower):
    keep: int
    hits: dict[int, EntryHits]
    shadow: dict[int, int]
    # this block's hits per entry, (rel, line start, line end, match, shadowed)
    _raw: dict[int, list[tuple[int, int, int, int, tuple[int, ...]]]]
    _rich: int  # the message column of a Rich handler's wrapped records (wrap.py), or 0

    def _line(
        self, data: bytes, ls: int, le: int, s: int, *, rel: int, n: int, final: bool
    ) -> None:
        line = cut_line(data, ls, le, s)
        winner: int | None = None
        shadowed: list[int] = []
        for i in self.cat.match_line(line):
            if self.cat.near_rx[i]:
                k = self.cat.entries[i].near_lines
                ctx = [*lines_before(data, ls, k), line, *lines_after(data, le, k, n)]
                if not self.cat.near_ok(i, ctx):
                    continue
            if self.cat.frames_idx[i] and not (
                self.cat.frames_idx[i] & self._exc_tags.get(rel, _NONE)
            ):
                continue  # its traceback's frames do not name the culprit
            if winner is None:
                winner = i
            else:
                shadowed.append(i)
        if winner is not None and winner == self._code_error and rel in self._ignored:
            winner = None
        if self._body[0] <= rel <= self._body[1]:
            winner, shadowed = None, []  # a source line quoted in a traceback, not an event
        if winner is not None:
            self._pending_exc.pop(rel, None)
            self._raw.setdefault(winner, []).append((rel, ls, le, s, tuple(shadowed)))
            for j in shadowed:
                self.shadow[j] = self.shadow.get(j, 0) + 1
        if _TB in line:
            if self._tb is not None:
                self._end_tb(self._tb, None, None)
            prev = lines_before(data, ls, 1)
            ignored = bool(prev) and any(w in prev[0] for w in _IGNORED)
            head, lead = strip_prefix(line), line[: _tb_at(line)]
            logged = bool(head[: _tb_at(head)].strip())  # a logger's prefix, e.g. dynamo's
            indent = 0 if logged else len(head) - len(head.lstrip(b" \t"))
            self._tb = Traceback(rel=rel, header=line[:MAX_TEXT], ignored=ignored, indent=indent)
            self._tb.quiet = quiet(lead)
            self._tb.lead = lead if logged else b""
            self._tb.intro = prev[0] if prev and not logged else b""
            if self.cat.frames_set is not None:
                # the lines before it, and what it interrupted on its own line (a progress bar)
                before = [*lines_before(data, ls, CONTEXT_BEFORE), lead]
                self._tb.tags = self.cat.frames_match(before)
            self._tb_next = rel + 1
            self._follow(data, le + 1, n, rel + 1, final)

    def _unwrap(self, data: bytes, start: int, end: int, n: int, first_line: int) -> None:
        """Hits only a wrapped line's joined rows show (wrap.py); each takes its rows from less
        specific hits (the generic claim of code_error on an exception line)."""
        logical = (
            wrap.rows(data, start, end, self._wrap, n)
            if self._wrap
            else wrap.rich_rows(data, start, end, self._rich, n)
        )
        for rel, n_rows, hit in wrap.hits(self.cat, data, start, logical, first_line, n):
            spec = self.cat.entries[hit.entry].specificity
            for r in range(rel, rel + n_rows):
                self._pending_exc.pop(r, None)
            for i, raws in self._raw.items():
                if self.cat.entries[i].specificity < spec:
                    self._raw[i] = [x for x in raws if not rel <= x[0] < rel + n_rows]
            self._record(hit)

    def _materialise(self, data: bytes, n: int) -> None:
        for i, raws in self._raw.items():
            eh = self.hits.setdefault(i, EntryHits())
            room = max(0, self.keep - len(eh.first))
            keep = {r[0]: r for r in raws[:room] + raws[-self.keep :]}
            for rel, ls, le, s, shadowed in keep.values():
                line = cut_line(data, ls, le, s)
                hit = make_hit(self.cat, i, data, ls, le, rel=rel, n=n, line=line)
                hit.shadowed = shadowed
                hit.quiet = hit.quiet or rel in self._quiet_exc
                eh.add(hit, self.keep)
            eh.count += len(raws) - len(keep)
        self._raw = {}

    def _record(self, hit: CatalogHit) -> None:
        self.hits.setdefault(hit.entry, EntryHits()).add(hit, self.keep)
