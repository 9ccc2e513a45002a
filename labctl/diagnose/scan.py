"""Streaming scan of log bytes against the catalog, in bounded memory.

`Scanner.feed(bytes)` any number of times, then `finish()`. Lines are split on `\\n`, `\\r`
and `\\r\\n` (counted once), so tqdm `\\r` frames are lines. Data is processed in blocks
(default 8 MiB): one RE2 alternation of every catalog pattern searches the whole block (in
parallel threads: RE2 releases the GIL) and only the candidate lines it finds are checked
entry by entry with an RE2 set. Memory is one block plus a few lines of context; per entry
only the first and last `keep` hits are retained (with a count).

Line numbers (`CatalogHit.rel`) are 1-based and count from the first byte fed to the scanner; the
engine turns them into absolute line numbers when the scan started at the beginning of the
log, and into `line_from_end` always. A run of more than `MAX_LINE` bytes without a line
break is cut there (and counts as a line).
"""

from __future__ import annotations

import os
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor

from labctl.diagnose import wrap
from labctl.diagnose.catalog import Catalog
from labctl.diagnose.hits import (
    KEEP,
    MAX_TEXT,
    CatalogHit,
    EntryHits,
    RegionScan,
    Traceback,
    strip_prefix,
)
from labctl.diagnose.lines import (
    CONTEXT_AFTER,
    CONTEXT_BEFORE,
    MAX_LINE,
    cut_line,
    find_candidates,
    last_lines,
    last_lines_bytes,
    lines_after,
    lines_before,
    make_hit,
    normalise_breaks,
)
from labctl.diagnose.signs import last_progress, quiet
from labctl.diagnose.tracebacks import Pending, TracebackFollower

DEFAULT_BLOCK = 8 << 20
TAIL_LINES = 10
PARALLEL_MIN = 2 << 20
Spans = list[tuple[int, int, int]]
_NONE: frozenset[int] = frozenset()
_TB = b"Traceback (most recent call last)"


class Scanner(TracebackFollower):
    def __init__(
        self,
        catalog: Catalog,
        *,
        block: int = DEFAULT_BLOCK,
        threads: int | None = None,
        keep: int = KEEP,
        skip_partial_first: bool = False,
    ) -> None:
        self.cat = catalog
        self.block = max(block, 1 << 12)
        self.keep = keep
        self.L = max(CONTEXT_BEFORE, CONTEXT_AFTER, catalog.max_near, TAIL_LINES)
        self.threads = threads if threads is not None else min(4, os.cpu_count() or 1)
        self._pool: ThreadPoolExecutor | None = None
        self._look = b""
        self._pieces: list[bytes] = []
        self._plen = 0
        self._cr = False
        self._skip_first = skip_partial_first
        self._lines = 0  # lines completed before the next unscanned byte
        self.bytes_in = 0
        self.hits: dict[int, EntryHits] = {}
        self.shadow: dict[int, int] = {}
        self.tracebacks: deque[Traceback] = deque(maxlen=3)
        self._tb: Traceback | None = None  # a traceback still being followed
        self._tb_next = 0  # rel line where following resumes
        # exception lines that end a traceback, code_error unless a catalog entry claims the
        # line (tracebacks.Pending until materialised)
        self._pending_exc: dict[int, CatalogHit | Pending] = {}
        self._ignored: deque[int] = deque(maxlen=64)  # exception lines of ignored tracebacks
        self._body = (0, 0)  # rel lines [a, b] of the current traceback's frames: source code
        # this block's hits per entry, (rel, line start, line end, match, shadowed): only those
        # that will be kept (first/last `keep`) are turned into Hits, at the end of the block
        self._raw: dict[int, list[tuple[int, int, int, int, tuple[int, ...]]]] = {}
        self._code_error = catalog.by_id.get("code_error")
        self._tail: list[str] = []
        self._exc_tags: dict[int, frozenset[int]] = {}  # exception line -> frames tags
        self._progress: int | None = None  # rel line of the last forward-progress line
        self._progress_text: bytes | None = None  # the last progress match (carried across blocks)
        self._wrap: int | None = None  # a terminal's wrap width (0: not wrapped); wrap.py

    # -- input ------------------------------------------------------------------------------
    def feed(self, data: bytes) -> None:
        if not data:
            return
        self.bytes_in += len(data)
        if self._cr and data[:1] == b"\n":
            data = data[1:]
        if self._skip_first:
            cut = min((i for i in (data.find(b"\n"), data.find(b"\r")) if i >= 0), default=-1)
            if cut < 0:
                return
            self._skip_first = False
            if data[cut : cut + 2] == b"\r\n":
                cut += 1
            self._cr = cut == len(data) - 1 and data[cut:] == b"\r"
            data = data[cut + 1 :]
        if not data:
            return
        self._cr = data[-1:] == b"\r"
        data = normalise_breaks(data)
        self._pieces.append(data)
        self._plen += len(data)
        if self._plen >= self.block:
            self._process(final=False)

    def finish(self) -> RegionScan:
        self._process(final=True)
        if self._tb is not None:
            self._end_tb(self._tb, None, None)
        for rel in sorted(self._pending_exc):
            item = self._pending_exc.pop(rel)
            if isinstance(item, CatalogHit):
                self._record(item)
        self.close()
        return RegionScan(
            self.hits,
            self.shadow,
            self._lines,
            self.bytes_in,
            self._tail,
            list(self.tracebacks),
            self._progress,
        )

    def close(self) -> None:
        """Stop the worker threads (also after a read error)."""
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None

    # -- blocks -----------------------------------------------------------------------------
    def _cut(self, data: bytes, start: int) -> int:
        pos = len(data)
        for _ in range(self.L + 1):
            pos = data.rfind(b"\n", start, pos)
            if pos < 0:
                return -1
        return pos + 1

    def _process(self, final: bool) -> None:
        data = b"".join([self._look, *self._pieces])  # the one copy per block
        start, n = len(self._look), len(data)
        forced = False
        if final:
            end = n
        else:
            end = self._cut(data, start)
            if end <= start:
                if n - start < MAX_LINE + self.block:
                    self._pieces, self._plen = [data[start:]], n - start
                    return
                end = data.rfind(b"\n", start) + 1 or n
                forced = end == n
        base = self._lines
        if self._wrap is None:  # decided once per scan, from the first block's first bytes
            self._wrap = wrap.width(data[start : min(end, start + wrap.SAMPLE)]) or 0
        if self._tb is not None:
            self._continue_tb(data, start, n, base, final)
        pending = self._submit(data, start, end)
        nl = data.count(b"\n", start, end)  # overlaps the RE2 threads (they release the GIL)
        spans = [
            span
            for part in pending
            for span in (part.result() if isinstance(part, Future) else part)
        ]
        cpos, cline = start, base + 1
        for ls, le, s in spans:
            cline += data.count(b"\n", cpos, ls)
            cpos = ls
            self._line(data, ls, le, s, rel=cline, n=n, final=final)
        self._lines = (
            base
            + nl
            + (1 if (forced or (final and end > start and data[end - 1 : end] != b"\n")) else 0)
        )
        if self._wrap:
            self._unwrap(data, start, end, n, base + 1)
        self._materialise(data, n)
        for rel in sorted(self._pending_exc):
            item = self._pending_exc[rel]
            if not isinstance(item, CatalogHit):
                item = self._pending_exc[rel] = self._synthetic(data, rel, item)
            if final or rel <= self._lines:
                del self._pending_exc[rel]
                self._record(item)
        self._note_progress(data, start, end, base + nl)
        if final:
            self._tail = last_lines(data, n, TAIL_LINES)
        self._look = last_lines_bytes(data, end, self.L) if not final else b""
        self._pieces = [data[end:]] if end < n else []
        self._plen = n - end

    def _note_progress(self, data: bytes, start: int, end: int, lines_at_end: int) -> None:
        pos, self._progress_text = last_progress(
            self.cat.progress_rx, data, start, end, self._progress_text
        )
        if pos is not None:  # counted back from the block's end: progress sits near it
            self._progress = lines_at_end - data.count(b"\n", pos, end) + 1

    def _submit(self, data: bytes, start: int, end: int) -> list[Future[Spans] | Spans]:
        """Candidate lines of [start, end): futures (RE2 in threads) or a computed list."""
        size = end - start
        if self.threads <= 1 or size < PARALLEL_MIN or not self.cat.use_re2:
            return [find_candidates(self.cat, data, start, end)]
        parts, lo = [], start
        step = size // self.threads
        for k in range(1, self.threads):
            cut = data.find(b"\n", start + k * step, end)
            if cut < 0:
                break
            parts.append((lo, cut + 1))
            lo = cut + 1
        parts.append((lo, end))
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="diagnose")
        return [self._pool.submit(find_candidates, self.cat, data, a, b) for a, b in parts]

    # -- one candidate line -----------------------------------------------------------------
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
            ignored = bool(prev) and b"Exception ignored" in prev[0]
            head, lead = strip_prefix(line), line[: line.find(_TB)]
            logged = bool(head[: head.find(_TB)].strip())  # a logger's prefix, e.g. dynamo's
            indent = 0 if logged else len(head) - len(head.lstrip(b" \t"))
            self._tb = Traceback(rel=rel, header=line[:MAX_TEXT], ignored=ignored, indent=indent)
            self._tb.quiet = quiet(lead)
            self._tb.lead = lead if logged else b""
            if self.cat.frames_set is not None:
                self._tb.tags = self.cat.frames_match(lines_before(data, ls, CONTEXT_BEFORE))
            self._tb_next = rel + 1
            self._follow(data, le + 1, n, rel + 1, final)

    def _unwrap(self, data: bytes, start: int, end: int, n: int, first_line: int) -> None:
        """Hits only a wrapped line's joined rows show (wrap.py); each takes its rows from less
        specific hits (the generic claim of code_error on an exception line)."""
        assert self._wrap
        rows = wrap.hits(self.cat, data, start, end, self._wrap, first_line, n)
        for rel, n_rows, hit in rows:
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
                eh.add(hit, self.keep)
            eh.count += len(raws) - len(keep)
        self._raw = {}

    def _record(self, hit: CatalogHit) -> None:
        self.hits.setdefault(hit.entry, EntryHits()).add(hit, self.keep)
