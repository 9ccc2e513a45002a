"""Lines a terminal wrapped at a fixed width (issue 15).

A log saved from a terminal (a tmux/screen capture, a console pasted into an issue) breaks
every line longer than the terminal's width W into rows of exactly W bytes, often mid-word:
`torch.OutOfMemoryError: CUDA out of me` / `mory. Tried to allocate ...`. The scanner matches
the catalog one line at a time, so such a failure would not be seen.

- `width(sample)`: the wrap width of a log, read from its first bytes, or None. The longest
  line W (MIN_WIDTH..MAX_WIDTH bytes) must be shared by several different lines, most of them
  followed by a shorter, non-empty row (the rest of the wrapped line), and at least one break
  must fall mid-word (a letter or digit on both sides). The rows that end a wrapped line are
  its remainders, shorter than W by any amount (median at most 3/4 W), and lines just short of
  W are as rare as any other length: logs of formatted records of nearly equal length (a
  metrics line whose numbers gain a digit), and one long line printed twice, are not wrapped.
- `rows(data, lo, hi, w)`: each wrapped logical line of data[lo:hi]: its first row's start,
  its last row's end, and the rows joined. `hits`: the catalog entries only the joined text
  matches (a break split their words); the scanner adds them, rows keep their own hits.
- Rich's logging handler (RichHandler: distilabel, NeMo, Typer apps) wraps a record instead
  at word breaks, onto rows indented to its message column and padded to the console's width:
  `[06/24/25 19:03:08] ERROR    Failed to load step ...: Step` / `<29 spaces>load failed: 404
  Client Error: Not Found for url:` / `<29 spaces>https://api-inference.huggingface.co/...`.
  `rich_indent(sample)`: that column, when a record of the sample continues on such rows, or
  None; `rich_rows(data, lo, hi, k)`: each record with rows indented by `k`, joined with
  spaces (the padding stripped), for `hits` as above.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from labctl.diagnose.catalog import Catalog
from labctl.diagnose.hits import CatalogHit
from labctl.diagnose.lines import make_hit

MIN_WIDTH = 40
MAX_WIDTH = 512
MAX_ROWS = 16  # rows joined into one logical line at most
MIN_ROWS = 3  # wrapped lines needed (and 1 full-width row in MIN_SHARE lines)
MIN_SHARE = 200
SAMPLE = 256 << 10
# a record of Rich's handler (time column optional, blank when it repeats), then its next row
_RICH = re.compile(
    rb"^((?:\[[^\]\n]{1,40}\] +| +)?(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) +)\S[^\n]*\n( +)\S",
    re.MULTILINE,
)


def width(sample: bytes) -> int | None:
    lines = sample.split(b"\n")[:-1]  # the last piece may be cut
    if len(lines) < 3:
        return None
    lens = [len(x) for x in lines]
    w = max(lens)
    if not MIN_WIDTH <= w <= MAX_WIDTH:
        return None
    full = [k for k, n in enumerate(lens[:-1]) if n == w]
    if len(full) < max(MIN_ROWS, len(lines) // MIN_SHARE) or len({lines[k] for k in full}) < 2:
        return None  # one long line repeated (two ranks print the same error) is not a wrap
    if 4 * sum(1 for n in lens if w - 3 < n < w) > len(full):
        return None  # records a digit or two shorter: formatted records, not cut rows
    ends = [k for k in full if lens[k + 1] != w]  # the last row of each run of full rows
    rest = sorted(lens[k + 1] for k in ends if lens[k + 1] > 0)
    if len(rest) < MIN_ROWS or 2 * len(rest) < len(ends) or rest[len(rest) // 2] > 0.75 * w:
        return None  # records of (nearly) equal length, not the remainders of wrapped lines
    mid = [k for k in full if lines[k][-1:].isalnum() and lines[k + 1][:1].isalnum()]
    return w if mid else None


def rows(
    data: bytes, lo: int, hi: int, w: int, limit: int | None = None
) -> Iterator[tuple[int, int, bytes]]:
    """(start of the first row, end of the last row, joined text) of each logical line whose
    first row is in data[lo:hi] that a terminal of width `w` wrapped (rows of exactly `w` bytes,
    then one shorter row; rows may run on to data[:limit]). A logical line is yielded once,
    from its first row."""
    limit = hi if limit is None else limit
    rx = re.compile(rb"^[^\n]{%d}\n" % w, re.MULTILINE)
    pos = lo
    while pos < hi:
        m = rx.search(data, pos, hi)
        if m is None:
            return
        start, end = m.start(), m.end() - 1
        parts = [data[start:end]]
        while len(parts) < MAX_ROWS and end < limit:
            nxt = data.find(b"\n", end + 1, limit)
            nxt = limit if nxt < 0 else nxt
            row = data[end + 1 : nxt]
            if not row:
                break
            parts.append(row)
            end = nxt
            if len(row) != w:
                break
        if len(parts) > 1:
            yield start, end, b"".join(parts)
        pos = end + 1


def rich_indent(sample: bytes) -> int | None:
    """The message column of a log Rich's handler wrote, when a record of `sample` continues
    on a row indented to it (10 columns at least: a level name and its padding), else None."""
    for m in _RICH.finditer(sample):
        k = len(m.group(1))
        if k >= 10 and len(m.group(2)) == k:
            return k
    return None


def rich_rows(
    data: bytes, lo: int, hi: int, k: int, limit: int | None = None
) -> Iterator[tuple[int, int, bytes]]:
    """(start of the first row, end of the last row, rows joined by spaces) of each record
    whose first row is in data[lo:hi] and whose next rows are indented by `k` columns (Rich's
    wrap); at most MAX_ROWS rows, which may run on to data[:limit]."""
    limit = hi if limit is None else limit
    rx = re.compile(rb"(?:^ {%d}\S[^\n]*(?:\n|\Z))+" % k, re.MULTILINE)
    pos = lo
    while pos < hi:
        m = rx.search(data, pos, limit)
        if m is None or m.start() >= hi:
            return
        pos = m.end()
        first = data.rfind(b"\n", 0, max(m.start() - 1, 0)) + 1  # the record's first row
        if m.start() == 0 or first < lo:  # no row above, or it is the look-behind's
            continue
        end = m.end() - 1 if data[m.end() - 1 : m.end()] == b"\n" else m.end()
        parts = data[first:end].split(b"\n")[:MAX_ROWS]
        yield first, first + len(b"\n".join(parts)), b" ".join(r.strip() for r in parts)


def hits(
    cat: Catalog,
    data: bytes,
    lo: int,
    logical: Iterator[tuple[int, int, bytes]],
    first_line: int,
    limit: int,
) -> Iterator[tuple[int, int, CatalogHit]]:
    """(first row's line number, rows, hit) for each wrapped logical line (`rows` or
    `rich_rows` of data[lo:...], whose first line is number `first_line`) that matches an entry
    no single row of it matches (a break split its words). Rows keep their own hits: a wrap
    only adds what a break had hidden. Entries that need context (`near`, `frames`) are left
    to the rows."""
    pos, line = lo, first_line
    for start, end, joined in logical:
        line += data.count(b"\n", pos, start)
        pos = start
        found = [i for i in cat.match_line(joined) if not cat.near_rx[i] and not cat.frames_idx[i]]
        if not found:
            continue
        alone: set[int] = set()
        a = start
        while a <= end:
            b = data.find(b"\n", a, end)
            b = end if b < 0 else b
            alone.update(cat.match_line(data[a:b]))
            a = b + 1
        new = [i for i in found if i not in alone]
        if new:
            n_rows = data.count(b"\n", start, end) + 1
            hit = make_hit(cat, new[0], data, start, end, rel=line, n=limit, line=joined)
            yield line, n_rows, hit
