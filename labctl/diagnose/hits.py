"""What a scan yields: hits (one matched line each), per-entry hit lists, tracebacks.

Per entry only the first and last `keep` hits are kept (with the total count), so memory
does not grow with the log.
"""

from __future__ import annotations

import bisect
import re
from collections import deque
from dataclasses import dataclass, field

MAX_TEXT = 400  # characters kept per evidence line
KEY_CHARS = 1200  # characters of a hit's line kept for its fingerprint
KEEP = 3
_PREFIX = re.compile(
    rb"^(?:(?:\[[^\]\n]{0,60}\]:?|\([^)\n]{0,60}\)|\d{1,5}:|<std(?:err|out)>:?) ?)*"
)


def message(raw: bytes) -> str:
    """A fingerprint's message: the line from the match on, long enough that the cut never
    falls inside the part fingerprint.py keeps (MESSAGE_CHARS after normalising)."""
    return raw[: 4 * KEY_CHARS].decode("utf-8", "replace")[:KEY_CHARS].rstrip()


def clip(raw: bytes, limit: int = MAX_TEXT) -> str:
    """Bytes of one line -> text for evidence: decoded, right-stripped, capped."""
    text = raw[: limit * 4].decode("utf-8", "replace").rstrip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


# the prefix Ray's driver puts on a line it relays from a worker or actor process:
# `(pid=69443) `, `(TrainWorker pid=41491) `, `(pid=41491, ip=10.0.0.7) `, after any ANSI colour
RAY_WORKER = re.compile(rb"(?:\x1b\[[\d;]*m)*\((?:\w+ )?pid=\d+(?:, ip=[\d.]+)?\)")


def strip_prefix(raw: bytes) -> bytes:
    """Drop launcher prefixes (`[rank0]:`, `0:`, `(pid=1)`, `<stderr>:`) from a line."""
    return raw[_PREFIX.match(raw).end() :]  # type: ignore[union-attr]


@dataclass(slots=True)
class CatalogHit:
    """One log line that matched a catalog entry (`entry` is its index in the catalog)."""

    entry: int
    rel: int
    text: str
    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()
    groups: dict[str, str] = field(default_factory=dict)
    shadowed: tuple[int, ...] = ()
    synthetic: str | None = None
    key: str = ""  # the line from the start of the catalog match: the fingerprint's message
    exc: str | None = None  # exception type printed on the line (nearest before the match)
    from_end: int = 0  # set by the engine: 1 = last line, 0 = after the log (scheduler)
    line: int | None = None  # set by the engine when the absolute number is known
    quiet: bool = False  # written at WARNING/INFO/DEBUG level: reported, not raised
    notice: bool = False  # advice or a hypothetical (catalog `[notice]`): not a failure


@dataclass
class EntryHits:
    count: int = 0
    first: list[CatalogHit] = field(default_factory=list)
    last: list[CatalogHit] = field(default_factory=list)

    def add(self, hit: CatalogHit, keep: int = KEEP) -> None:
        self.count += 1
        for lst, drop_last in ((self.first, True), (self.last, False)):
            bisect.insort(lst, hit, key=lambda h: h.rel)
            if len(lst) > keep:
                lst.pop(-1 if drop_last else 0)

    def hits(self) -> list[CatalogHit]:
        seen: dict[int, CatalogHit] = {}
        for h in self.first + self.last:
            seen.setdefault(h.rel, h)
        return [seen[k] for k in sorted(seen)]


@dataclass
class Traceback:
    rel: int
    exc_rel: int | None = None
    exc_text: str | None = None
    excerpt: list[str] = field(default_factory=list)
    frames: deque[bytes] = field(default_factory=lambda: deque(maxlen=4))
    seen: int = 0
    header: bytes = b""
    ignored: bool = False  # printed under "Exception ignored in": never fatal
    indent: int = 0  # leading whitespace of the header: frames are indented deeper
    tags: frozenset[int] = frozenset()  # catalog frames patterns its frames/context matched
    quiet: bool = False  # its header was written at WARNING/INFO level (a logged traceback)
    lead: bytes = b""  # a logger prefix before its header that every line of it repeats
    last_len: int = 0  # bytes of the last line followed (a terminal-wrapped row continues)
    headless: bool = False  # the log begins inside it: its header (and maybe more) is cut off
    intro: bytes = b""  # the line before its header: the log record it may be the exc_info of

    def body(self, raw: bytes) -> bytes:
        """A line of this traceback without its logger or launcher prefix."""
        if self.lead and raw.startswith(self.lead):
            return raw[len(self.lead) :]
        return strip_prefix(raw)


@dataclass
class RegionScan:
    """What scanning one region of a log yields (the engine merges regions: `Findings`)."""

    hits: dict[int, EntryHits]
    shadow_counts: dict[int, int]
    lines: int
    bytes_in: int
    tail: list[str]
    tracebacks: list[Traceback]
    last_progress: int | None = None  # rel line of the last forward-progress line
    restart: tuple[int, int] | None = None  # the last run (restarts.py): rel line, lines shared
    ends_ignored: bool = False  # it stops inside a traceback printed "Exception ignored in"
    progress_by_worker: bool = False  # the last progress line is a Ray worker's `(pid=N) ...`
