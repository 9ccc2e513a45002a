"""A bounded read of a training log and the metric history in it.

Never the whole multi-GB file: the head (the baseline after warm-up), `samples` evenly
spaced regions between (the trend, each reached with a seek) and the tail (the current
window), capped at `max_bytes` in all. The I/O is a `RangeSource` (a local file, or a
cluster file read through the transport), so the same parser serves both:

    regions = plan(size, cfg)                   # [(start, length), ...] in file order
    data    = source.read(regions)              # one bytes per region
    history = parse(regions, data, size)

Lines are split on `\\n` and `\\r` (tqdm redraws with `\\r`) and handed to poll's progress
recognisers: verl `step:N - key:value` lines, HF
Trainer / TRL metric dicts, tqdm postfixes (OpenRLHF, Lightning), Levanter
(`labctl.progress.formats.parse_progress_line`). A region's
partial first and last lines are dropped. A TRL dict takes its step from the training bar
drawn before it; SkyRL's console logger (`Step N:` then a pprint'ed dict over several lines)
is joined into one dict first.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from labctl.progress.formats import parse_hf_dict, parse_progress_line
from labctl.progress.line import ProgressLine
from labctl.rlhealth.history import History
from labctl.rlhealth.keys import RATE_KEY

KiB, MiB = 1 << 10, 1 << 20
_SKYRL_STEP = re.compile(rb"(?:^|\s)Step (\d+):\s*$")
SKYRL_BLOCK_MAX = 256  # lines of one pprint'ed metrics dict
Region = tuple[int, int]


@dataclass(frozen=True)
class ReadConfig:
    head_bytes: int = 1 * MiB
    tail_bytes: int = 8 * MiB
    samples: int = 8
    sample_bytes: int = 256 * KiB
    max_bytes: int = 16 * MiB

    def __post_init__(self) -> None:
        if min(self.head_bytes, self.tail_bytes, self.sample_bytes) <= 0:
            raise ValueError("read sizes must be positive")
        if self.max_bytes < 64 * KiB:
            raise ValueError("max_read_bytes must be at least 65536")
        if self.samples < 0:
            raise ValueError("samples must be >= 0")


class RangeSource(Protocol):
    """Bytes of one file: its size and the bytes of several regions."""

    def size(self) -> int: ...

    def read(self, regions: Sequence[Region]) -> list[bytes]: ...


class LocalFile:
    """A log on this machine: one seek per region, never more than the regions' bytes."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        st = os.stat(self.path)
        self._size, self.mtime = st.st_size, st.st_mtime

    def size(self) -> int:
        return self._size

    def read(self, regions: Sequence[Region]) -> list[bytes]:
        with open(self.path, "rb") as fh:
            out = []
            for start, length in regions:
                fh.seek(start)
                out.append(fh.read(length))
            return out


def plan(size: int, cfg: ReadConfig) -> list[Region]:
    """Head, evenly spaced samples and tail, non-overlapping, within `max_bytes`."""
    if size <= cfg.max_bytes:
        return [(0, size)] if size else []
    tail = min(cfg.tail_bytes, cfg.max_bytes // 2)
    head = min(cfg.head_bytes, (cfg.max_bytes - tail) // 2)
    left = cfg.max_bytes - tail - head
    regions: list[Region] = [(0, head)]
    gap_start, gap_stop = head, size - tail
    gap = gap_stop - gap_start
    # stride >= sample_bytes: samples never overlap each other, the head or the tail
    n = min(cfg.samples, left // cfg.sample_bytes, gap // cfg.sample_bytes - 1)
    if n > 0:
        stride = gap / (n + 1)
        for i in range(1, n + 1):
            start = int(gap_start + i * stride - cfg.sample_bytes / 2)
            regions.append((start, cfg.sample_bytes))
    regions.append((size - tail, tail))
    return regions


def _lines(data: bytes, start: int, at_eof: bool) -> Iterator[tuple[int, bytes]]:
    """(offset, line) for the whole lines of a region; a partial first line (unless the
    region starts the file) and a partial last line (unless it ends the file) are dropped."""
    pos = 0
    if start > 0:
        cut = [i for i in (data.find(b"\n"), data.find(b"\r")) if i >= 0]
        if not cut:
            return
        pos = min(cut) + 1
    end = len(data)
    if not at_eof:
        end = max(data.rfind(b"\n"), data.rfind(b"\r")) + 1
        if end <= pos:
            return
    for line in data[pos:end].splitlines():
        yield start + pos, line
        pos += len(line) + 1  # an approximate offset across \r\n pairs is fine here


@dataclass
class _State:
    bar_step: int | None = None  # the training bar's counter, last seen
    bar_rate: float | None = None  # and its seconds per iteration
    block: list[bytes] | None = None  # a SkyRL pprint block being collected
    block_step: int | None = None
    block_offset: int = 0


def parse(regions: Sequence[Region], data: Sequence[bytes], size: int) -> History:
    """The metric history in the regions read (file order)."""
    history = History("log")
    for (start, _length), chunk in zip(regions, data, strict=True):
        st = _State()  # regions are not contiguous: no state crosses a gap
        at_eof = start + len(chunk) >= size
        for offset, line in _lines(chunk, start, at_eof):
            _feed(history, st, offset, line)
    history.read = {
        "bytes_read": sum(len(d) for d in data),
        "file_size": size,
        "regions": [[s, len(d)] for (s, _), d in zip(regions, data, strict=True)],
    }
    return history.finish()


def _feed(history: History, st: _State, offset: int, line: bytes) -> None:
    if st.block is not None:
        st.block.append(line.strip())
        if line.rstrip().endswith(b"}") or len(st.block) > SKYRL_BLOCK_MAX:
            hit = parse_hf_dict(b" ".join(st.block))
            if hit is not None and hit.metrics:
                history.add(st.block_offset, st.block_step, hit.metrics, offset=st.block_offset)
            st.block = None
        return
    if b"Step " in line:
        m = _SKYRL_STEP.search(line)
        if m is not None:
            st.block, st.block_step, st.block_offset = [], int(m.group(1)), offset
            return
    hit = parse_progress_line(line)
    if hit is None:
        return
    _hit(history, st, offset, hit)


def _hit(history: History, st: _State, offset: int, hit: ProgressLine) -> None:
    if hit.slot == "tqdm":
        if hit.role != "train" or hit.value is None:
            return
        st.bar_step = int(hit.value) if hit.counter == "step" else st.bar_step
        st.bar_rate = hit.seconds_per_it or st.bar_rate
        if hit.metrics:  # OpenRLHF / Lightning postfix: the bar's counter is the step
            history.add(offset, int(hit.value), _with_rate(hit.metrics, st), offset=offset)
        return
    if hit.slot in ("verl", "levanter") and hit.metrics:
        step = int(hit.value) if hit.value is not None else None
        history.add(offset, step, hit.metrics, offset=offset)
    elif hit.slot == "hf_dict" and hit.metrics:
        epoch = hit.metrics.get("epoch")
        step = _dict_step(hit.metrics)
        history.add(
            offset,
            step if step is not None else st.bar_step,
            _with_rate(hit.metrics, st),
            offset=offset,
            epoch=epoch,
            inferred=step is None and st.bar_step is not None,
        )
    elif hit.slot == "hf_done":
        history.add_boundary(offset)


def _dict_step(metrics: dict[str, float]) -> int | None:
    for key in ("step", "global_step", "trainer/global_step", "training/global_step"):
        value = metrics.get(key)
        if value is not None and math.isfinite(value):
            return int(value)
    return None


def _with_rate(metrics: dict[str, float], st: _State) -> dict[str, float]:
    if st.bar_rate is None:
        return metrics
    return {**metrics, RATE_KEY: st.bar_rate}


def read_log(source: RangeSource, cfg: ReadConfig) -> History:
    size = source.size()
    regions = plan(size, cfg)
    return parse(regions, source.read(regions), size)
