"""Line helpers over a block of log bytes (line breaks already normalised to `\\n`)."""

from __future__ import annotations

from labctl.diagnose.catalog import Catalog
from labctl.diagnose.fingerprint import exception_type
from labctl.diagnose.hits import MAX_TEXT, CatalogHit, clip, message
from labctl.diagnose.signs import in_warning, quiet

MAX_LINE = 1 << 20  # bytes without a line break before a forced cut
MAX_LOOK = 256 << 10
MAX_MATCH = 64 << 10  # bytes of a long line given to the per-entry check (around the match)
CRLF_PROBES = 4
CONTEXT_BEFORE = 3
CONTEXT_AFTER = 2


def find_candidates(cat: Catalog, data: bytes, lo: int, hi: int) -> list[tuple[int, int, int]]:
    """(line start, line end, match position) of each line the prefilter matches."""
    out = []
    if cat.atom_index is not None:  # plain `re`: literal prefilter, then per-line checks
        for ls in cat.atom_index.line_starts(data, lo, hi):
            le = data.find(b"\n", ls, hi)
            out.append((ls, hi if le < 0 else le, ls))
        return out
    rx = cat.prefilter
    pos = lo
    while pos < hi:
        m = rx.search(data, pos, hi)
        if m is None:
            break
        s = m.start()
        ls = data.rfind(b"\n", lo, s) + 1 or lo
        le = data.find(b"\n", s, hi)
        if le < 0:
            le = hi
        out.append((ls, le, s))
        pos = le + 1
    return out


def lines_before(data: bytes, ls: int, k: int) -> list[bytes]:
    out: list[bytes] = []
    p = ls - 1
    while k > 0 and p >= 0:
        q = data.rfind(b"\n", max(0, p - MAX_LINE), p)
        out.append(data[max(q + 1, p - MAX_TEXT * 4) : p])
        p, k = q, k - 1
    out.reverse()
    return out


def lines_after(data: bytes, le: int, k: int, hi: int) -> list[bytes]:
    out: list[bytes] = []
    p = le + 1
    while k > 0 and p < hi:
        e = data.find(b"\n", p, hi)
        if e < 0:
            e = hi
        out.append(data[p : min(e, p + MAX_TEXT * 4)])
        p, k = e + 1, k - 1
    return out


def last_lines_bytes(data: bytes, end: int, k: int) -> bytes:
    p = end - 1
    for _ in range(k):
        p = data.rfind(b"\n", max(0, end - MAX_LOOK), p)
        if p < 0:
            break
    s = p + 1
    return data[s:end] if end - s <= MAX_LOOK else b""


def last_lines(data: bytes, n: int, k: int) -> list[str]:
    end = n - 1 if data[n - 1 : n] == b"\n" else n
    return [clip(b) for b in lines_before(data, end + 1, k)] if end >= 0 else []


def normalise_breaks(data: bytes) -> bytes:
    """`\\r` and `\\r\\n` -> `\\n`. A lone-`\\r` chunk (tqdm frames) takes the fast one-pass
    replace; the slower two-pass one runs when one of the first few `\\r` is a `\\r\\n`."""
    i = data.find(b"\r")
    if i < 0:
        return data
    for _ in range(CRLF_PROBES):
        if data[i + 1 : i + 2] == b"\n":
            return data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        i = data.find(b"\r", i + 1)
        if i < 0:
            break
    return data.replace(b"\r", b"\n")


def cut_line(data: bytes, ls: int, le: int, s: int) -> bytes:
    """The line [ls, le), or MAX_MATCH bytes of it around the match at s."""
    if le - ls <= MAX_MATCH:
        return data[ls:le]
    a = max(ls, s - MAX_MATCH // 2)
    return data[a : min(le, a + MAX_MATCH)]


def make_hit(
    cat: Catalog, i: int, data: bytes, ls: int, le: int, *, rel: int, n: int, line: bytes
) -> CatalogHit:
    """The hit of entry `i` on the line [ls, le) of `data` (rel: its line number)."""
    at = cat.match_start(i, line)
    head = line[:at].decode("utf-8", "replace")
    text = head + line[at : at + 4 * MAX_TEXT].decode("utf-8", "replace")
    exc = exception_type(text, len(head))
    before, after = lines_before(data, ls, CONTEXT_BEFORE), lines_after(data, le, CONTEXT_AFTER, n)
    return CatalogHit(
        entry=i,
        rel=rel,
        quiet=quiet(line[:at]) or in_warning(before, after),  # a warning's message line too
        notice=exc is None and cat.is_notice(line, at),
        text=clip(line),
        key=message(line[at:]),
        exc=exc,
        before=tuple(clip(b) for b in before),
        after=tuple(clip(b) for b in after),
        groups=cat.groups(i, line) if cat.capture_rx[i] else {},
    )
