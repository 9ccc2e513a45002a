"""Bounded reading of one log: tail-first windows, whole-file streams, gzip, byte chunks.

Tail-first (the default): scan the last `window` bytes; if the engine finds no conclusive
signal there, scan the `window`-sized region before it, then twice that, ... (each byte is
read once) until `max_window` bytes were read or the start of the file is reached. Each
region starts at the first line break after its start offset and ends where the next
(later) region's first line begins, so no line is lost or scanned twice.
`.gz` logs cannot be read from the end: they are always streamed whole (decompressed on the
fly, never held in memory). So are logs in UTF-16 (Windows PowerShell's `>` and `Out-File`
write it, with a byte-order mark): the patterns are UTF-8, so the text is transcoded on the
fly (`transcoded`).
"""

from __future__ import annotations

import codecs
import gzip
import os
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from labctl.diagnose.catalog import Catalog
from labctl.diagnose.hits import RegionScan
from labctl.diagnose.lines import normalise_breaks
from labctl.diagnose.restarts import HEAD_BYTES, learn_head
from labctl.diagnose.scan import DEFAULT_BLOCK, Scanner
from labctl.errors import BackendError

READ_SIZE = 8 << 20
_LINE_BREAK = (b"\n", b"\r")
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_UTF32_LE_BOM = b"\xff\xfe\x00\x00"


class LogUnreadable(BackendError):
    """A log could not be read (missing, a directory, no permission, corrupt gzip)."""

    reason = "unreadable"


@dataclass
class Segment:
    start: int  # first byte scanned (after the partial line was skipped)
    end: int
    result: RegionScan


def streamed_whole(path: Path) -> str | None:
    """ "gzip" or "utf16" for a log that cannot be read from its end (its first bytes say,
    read once), else None."""
    try:
        with path.open("rb") as f:
            head = f.read(4)
    except OSError:
        head = b""
    if path.suffix == ".gz" or head.startswith(b"\x1f\x8b"):
        return "gzip"
    return "utf16" if _utf16(head) else None


def _utf16(start: bytes) -> bool:
    return start.startswith(_UTF16_BOMS) and not start.startswith(_UTF32_LE_BOM)


def transcoded(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """The chunks of a text as UTF-8: a text that starts with a UTF-16 byte-order mark is
    decoded on the fly (a broken surrogate becomes U+FFFD), any other passes as it is."""
    it = iter(chunks)
    first = b""
    for chunk in it:
        first += chunk
        if len(first) >= 4:
            break
    if not _utf16(first):
        if first:
            yield first
        yield from it
        return
    decoder = codecs.getincrementaldecoder("utf-16")(errors="replace")
    yield decoder.decode(first).encode("utf-8")
    for chunk in it:
        yield decoder.decode(chunk).encode("utf-8")
    yield decoder.decode(b"", final=True).encode("utf-8")


class LogMissing(LogUnreadable):
    """The log does not exist (cleaned up, or on a node-local disk): for a job record that
    is a fact about the job, noted in its diagnosis, not a failure to reach anything."""


def unreadable(path: str | Path, exc: BaseException) -> LogUnreadable:
    why = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    kind = LogMissing if isinstance(exc, FileNotFoundError) else LogUnreadable
    return kind(f"cannot read {path}: {why}", path=str(path))


def scan_chunks(
    cat: Catalog,
    chunks: Iterable[bytes],
    *,
    tail: bool = False,
    threads: int | None = None,
    block: int = DEFAULT_BLOCK,
    head: list[bytes] | None = None,
    at_start: bool | None = None,
) -> RegionScan:
    """Scan a stream; `head` is the log's first lines when the stream is not its start
    (restarts.py), `at_start` whether the stream begins at the log's first byte."""
    scanner = Scanner(
        cat, threads=threads, skip_partial_first=tail, block=block, head=head, at_start=at_start
    )
    try:
        for chunk in chunks:
            scanner.feed(bytes(chunk))
        return scanner.finish()
    finally:
        scanner.close()


def _read_range(f: BinaryIO, start: int, end: int) -> Iterator[bytes]:
    f.seek(start)
    left = end - start
    while left > 0:
        data = f.read(min(READ_SIZE, left))
        if not data:
            return
        left -= len(data)
        yield data


def first_break(f: BinaryIO, start: int, end: int) -> int:
    """Offset just after the first line break at or after `start` (end if none)."""
    pos = start
    while pos < end:
        f.seek(pos)
        data = f.read(min(1 << 16, end - pos))
        if not data:
            return end
        idx = [i for i in (data.find(b"\n"), data.find(b"\r")) if i >= 0]
        if idx:
            i = pos + min(idx)
            if data[min(idx) : min(idx) + 1] == b"\r":
                f.seek(i + 1)
                if f.read(1) == b"\n":
                    i += 1
            return i + 1
        pos += len(data)
    return end


def scan_segment(
    cat: Catalog,
    f: BinaryIO,
    start: int,
    end: int,
    threads: int | None = None,
    head: list[bytes] | None = None,
) -> Segment:
    """Scan [start, end) of an open file, dropping the partial line at `start` (if > 0);
    `head`: the file's first lines (read_head), for a region that does not start the file."""
    first = first_break(f, start - 1, end) if start > 0 else 0
    chunks = _read_range(f, first, end)
    result = scan_chunks(cat, chunks, threads=threads, head=head, at_start=first == 0)
    result.bytes_in = end - start
    return Segment(first, end, result)


def read_head(f: BinaryIO) -> list[bytes]:
    """The first lines of an open file (restarts.HEAD_LINES at most, from HEAD_BYTES)."""
    f.seek(0)
    data = normalise_breaks(f.read(HEAD_BYTES))
    return learn_head(data, 0, len(data))


def stream_whole(
    cat: Catalog, path: Path, threads: int | None = None, *, gz: bool = False
) -> RegionScan:
    """Scan a whole log as a stream: gzip decompressed, UTF-16 transcoded, on the fly."""
    try:
        with gzip.open(path, "rb") if gz else path.open("rb") as g:
            chunks = transcoded(iter(lambda: g.read(READ_SIZE), b""))
            return scan_chunks(cat, chunks, threads=threads)
    except (OSError, EOFError, zlib.error) as exc:
        raise unreadable(path, exc) from None


def file_size(path: Path) -> int:
    try:
        st = path.stat()
    except OSError as exc:
        raise unreadable(path, exc) from None
    if not os.path.isfile(path):
        raise LogUnreadable(f"cannot read {path}: not a regular file", path=str(path))
    return st.st_size
