"""Look at files ON the cluster in one round trip: stat the job logs, read their tails.

Sizes and mtimes come from `stat` on the cluster and are compared with the cluster's own
clock (`date +%s` in the same script), so a skewed local clock cannot make a live log look
stale. Reads are bounded (`tail -c N`), so a 2 GB log costs N bytes.

    _m clock out; date +%s
    _m stat out; printf '%s\\0' <paths> | xargs -0 -r stat -L --printf '%s %Y %n\\0' --
    _m read.<i> out; tail -c <N> -- <path>          (one per read)
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from labctl.backends.script import Script, Section, clock_of, run_script
from labctl.backends.transport import Transport
from labctl.errors import BackendError

MAX_TAIL = 1 << 20


@dataclass(frozen=True)
class TailRead:
    """The last `nbytes` bytes of `path`."""

    path: str
    nbytes: int

    def shell(self) -> str:
        n = max(1, min(self.nbytes, MAX_TAIL))
        return f"tail -c {n} -- {shlex.quote(self.path)} 2>/dev/null"


@dataclass(frozen=True)
class RangeRead:
    """`length` bytes of `path` from byte `start` (GNU tail seeks on a regular file)."""

    path: str
    start: int
    length: int

    def shell(self) -> str:
        return (
            f"tail -c +{self.start + 1} -- {shlex.quote(self.path)} 2>/dev/null"
            f" | head -c {max(0, self.length)}"
        )


class Read(Protocol):
    def shell(self) -> str: ...


@dataclass
class FileStat:
    size: int
    mtime: float


@dataclass
class FilesResult:
    now: float  # the cluster's clock
    stats: dict[str, FileStat] = field(default_factory=dict)  # missing files are absent
    data: list[bytes] = field(default_factory=list)  # one per read, in order
    elapsed_s: float = 0.0
    sections: dict[str, Section] = field(default_factory=dict)  # everything, for probes


def files_script(
    paths: Sequence[str],
    reads: Sequence[Read],
    path_prepend: Sequence[str] = (),
    defs: Sequence[str] = (),
    probes: Sequence[str] = (),
) -> Script:
    """`probes` are shell snippets that print their own sections (progress sources);
    `defs` the shell functions they use."""
    script = Script(path_prepend=path_prepend)
    for code in defs:
        script.define(code)
    unique = list(dict.fromkeys(p for p in paths if p))
    if unique:
        listing = " ".join(shlex.quote(p) for p in unique)
        script.raw(
            "stat",
            f"printf '%s\\0' {listing} | xargs -0 -r stat -L --printf '%s %Y %n\\0' -- 2>/dev/null",
        )
    for i, read in enumerate(reads):
        script.raw(f"read.{i}", read.shell())
    for code in probes:
        script.emit(code)
    return script


def parse_stat(out: bytes) -> dict[str, FileStat]:
    stats: dict[str, FileStat] = {}
    for item in out.split(b"\0"):
        if not item.strip():
            continue
        size, _, rest = item.partition(b" ")
        mtime, _, name = rest.partition(b" ")
        if not size.isdigit() or not mtime.lstrip(b"-").isdigit() or not name:
            raise BackendError(f"unexpected stat output: {item[:80]!r}", reason="bad_output")
        stats[name.decode("utf-8", "surrogateescape")] = FileStat(int(size), float(mtime))
    return stats


def look_at_files(
    transport: Transport,
    paths: Sequence[str],
    reads: Sequence[Read] = (),
    *,
    timeout: float,
    path_prepend: Sequence[str] = (),
    defs: Sequence[str] = (),
    probes: Sequence[str] = (),
) -> FilesResult:
    script = files_script(paths, reads, path_prepend, defs, probes)
    sections, elapsed = run_script(transport, script, timeout=timeout, what="a look at the logs")
    result = FilesResult(now=clock_of(sections), elapsed_s=elapsed, sections=sections)
    if "stat" in sections:
        result.stats = parse_stat(sections["stat"].out)
    result.data = [
        sections[f"read.{i}"].out if f"read.{i}" in sections else b"" for i in range(len(reads))
    ]
    return result


class RemoteFile:
    """A file on a cluster as a `labctl.rlhealth.logread.RangeSource`: one round trip for
    its size and mtime (against the cluster's clock), one for all the regions asked."""

    def __init__(self, transport: Transport, path: str, *, timeout: float) -> None:
        self.transport, self.path, self.timeout = transport, path, timeout
        self._stat: FileStat | None = None
        self.now: float | None = None  # the cluster's clock at the stat
        self.bytes_read = 0

    def stat(self) -> FileStat:
        if self._stat is None:
            result = look_at_files(self.transport, [self.path], timeout=self.timeout)
            st = result.stats.get(self.path)
            if st is None:
                raise FileNotFoundError(self.path)
            self._stat, self.now = st, result.now
        return self._stat

    def size(self) -> int:
        return self.stat().size

    def read(self, regions: Sequence[tuple[int, int]]) -> list[bytes]:
        if not regions:
            return []
        reads = [RangeRead(self.path, start, length) for start, length in regions]
        result = look_at_files(self.transport, [], reads, timeout=self.timeout)
        self.bytes_read += sum(len(d) for d in result.data)
        return result.data
