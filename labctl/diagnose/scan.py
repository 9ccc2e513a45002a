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

Here: the input and the blocks; each candidate line is decided in
`labctl.diagnose.candidates`, tracebacks are followed in `labctl.diagnose.tracebacks`.
"""

from __future__ import annotations

import os
import re
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor

from labctl.diagnose import restarts, wrap
from labctl.diagnose.candidates import CandidateLines
from labctl.diagnose.catalog import Catalog
from labctl.diagnose.hits import (
    KEEP,
    RAY_WORKER,
    CatalogHit,
    EntryHits,
    RegionScan,
    Traceback,
)
from labctl.diagnose.lines import (
    CONTEXT_AFTER,
    CONTEXT_BEFORE,
    MAX_LINE,
    find_candidates,
    last_lines,
    last_lines_bytes,
    normalise_breaks,
)
from labctl.diagnose.signs import last_progress
from labctl.diagnose.tracebacks import Pending

_RAY_ONLY = re.compile(rb"(?:\x1b\[[\d;]*m|\s)*$")


def _relayed(data: bytes, lo: int, pos: int) -> bool:
    """Is the line holding offset `pos` a Ray worker's, relayed by the driver? A tqdm frame's
    `\r` (a break once normalised) leaves the prefix alone on the line before it."""
    line = data.rfind(b"\n", lo, pos) + 1 or lo
    if RAY_WORKER.match(data, line) is not None:
        return True
    if line - 1 <= lo:
        return False
    prev = data.rfind(b"\n", lo, line - 1) + 1 or lo
    m = RAY_WORKER.match(data, prev, line - 1)
    return m is not None and _RAY_ONLY.match(data, m.end(), line - 1) is not None


DEFAULT_BLOCK = 8 << 20
TAIL_LINES = 10
PARALLEL_MIN = 2 << 20
Spans = list[tuple[int, int, int]]


class Scanner(CandidateLines):
    def __init__(
        self,
        catalog: Catalog,
        *,
        block: int = DEFAULT_BLOCK,
        threads: int | None = None,
        keep: int = KEEP,
        skip_partial_first: bool = False,
        head: Sequence[bytes] | None = None,
        at_start: bool | None = None,
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
        self._quiet_exc: deque[int] = deque(maxlen=64)  # ... of logged records' tracebacks
        self._body = (0, 0)  # rel lines [a, b] of the current traceback's frames: source code
        # this block's hits per entry, (rel, line start, line end, match, shadowed): only those
        # that will be kept (first/last `keep`) are turned into Hits, at the end of the block
        self._raw: dict[int, list[tuple[int, int, int, int, tuple[int, ...]]]] = {}
        self._code_error = catalog.by_id.get("code_error")
        self._tail: list[str] = []
        self._exc_tags: dict[int, frozenset[int]] = {}  # exception line -> frames tags
        self._progress: int | None = None  # rel line of the last forward-progress line
        self._progress_text: bytes | None = None  # the last progress match (carried across blocks)
        self._progress_by_worker = False  # that line is a Ray worker's, relayed by the driver
        self._wrap: int | None = None  # a terminal's wrap width (0: not wrapped); wrap.py
        self._rich = 0  # the message column of a Rich handler's wrapped records (0: none)
        # several runs in one log (restarts.py): the log's first lines, given or learnt when
        # this scan starts at the log's first byte, and the last line that repeats the first
        self._at_start = not skip_partial_first if at_start is None else at_start
        self._head: list[bytes] | None = list(head) if head is not None else None
        self._opening: restarts.Opening | None = None
        self._restart: tuple[int, int] | None = None  # (rel line, head lines it repeats)

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
        ends_ignored = self._tb is not None and self._tb.ignored
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
            self._restart,
            ends_ignored,
            self._progress_by_worker,
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
        cut = self._block_end(data, start, n, final)
        if cut is None:  # not one whole line yet: wait for more bytes
            self._pieces, self._plen = [data[start:]], n - start
            return
        end, forced = cut
        base = self._lines
        if self._wrap is None:  # decided once per scan, from the first block's first bytes
            sample = data[start : min(end, start + wrap.SAMPLE)]
            self._wrap = wrap.width(sample) or 0
            self._rich = 0 if self._wrap else wrap.rich_indent(sample) or 0
            if self._head is None and self._at_start:
                self._head = restarts.learn_head(data, start, end)
            self._opening = restarts.opening(self._head or [], self.cat)
        if self._tb is not None:
            self._continue_tb(data, start, n, base, final)
        elif base == 0:
            self._headless(data, start, n, final)
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
        if self._wrap or self._rich:
            self._unwrap(data, start, end, n, base + 1)
        self._materialise(data, n)
        self._settle_exceptions(data, final)
        self._note_progress(data, start, end, base + nl)
        self._note_restart(data, start, end, base)
        if final:
            self._tail = last_lines(data, n, TAIL_LINES)
        self._look = last_lines_bytes(data, end, self.L) if not final else b""
        self._pieces = [data[end:]] if end < n else []
        self._plen = n - end

    def _block_end(self, data: bytes, start: int, n: int, final: bool) -> tuple[int, bool] | None:
        """Where this block's scan ends, and whether a line over MAX_LINE is cut there; None
        while the bytes after the look-behind are too few to hold a whole line."""
        if final:
            return n, False
        end = self._cut(data, start)
        if end > start:
            return end, False
        if n - start < MAX_LINE + self.block:
            return None
        end = data.rfind(b"\n", start) + 1 or n
        return end, end == n

    def _settle_exceptions(self, data: bytes, final: bool) -> None:
        """Exception lines that ended a traceback become hits (code_error unless an entry
        claimed them) once the lines after them are scanned."""
        for rel in sorted(self._pending_exc):
            item = self._pending_exc[rel]
            if not isinstance(item, CatalogHit):
                item = self._pending_exc[rel] = self._synthetic(data, rel, item)
            if final or rel <= self._lines:
                del self._pending_exc[rel]
                self._record(item)

    def _note_progress(self, data: bytes, start: int, end: int, lines_at_end: int) -> None:
        pos, self._progress_text = last_progress(
            self.cat.progress_rx, data, start, end, self._progress_text
        )
        if pos is not None:  # counted back from the block's end: progress sits near it
            self._progress = lines_at_end - data.count(b"\n", pos, end) + 1
            self._progress_by_worker = _relayed(data, start, pos)

    def _note_restart(self, data: bytes, start: int, end: int, base: int) -> None:
        if self._opening is None or self._head is None:
            return
        found = restarts.last_restart(
            data, start, end, self._head, self._opening, at_log_start=self._at_start
        )
        if found is not None:
            pos, shared = found
            self._restart = (base + 1 + data.count(b"\n", start, pos), shared)

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
