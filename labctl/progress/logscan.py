"""Bounded incremental reading of a training log and the progress it shows.

The I/O is kept apart from the parsing so the same code serves a local file and bytes fetched
from a cluster:

    plan = plan_read(state, size)              # which byte range to fetch (first sight: a tail)
    data = <bytes plan.start .. plan.start+plan.length>   # plan.shell(path) for `tail | head`
    result = scan_chunk(data, state, start=plan.start, size=size)
    store(result.state.to_dict())              # JSON; give it back as `state` next poll

`scan_file(path, state)` does the three steps locally. Lines are split on both `\\r` and `\\n`
(tqdm redraws with `\\r` only). The unterminated last line is read as tqdm's newest frame (of
a bar already known) and carried into the next chunk, so a chunk boundary inside a line loses
nothing. Every line of a chunk is considered, newest first, keeping the newest hit per format
(older frames of a bar already read are skipped cheaply), so chunking never changes the answer.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import accumulate

from labctl.progress.bars import parse_tqdm
from labctl.progress.fold import (
    COUNTER_SLOTS,
    resolve_bar,
    update_counter,
    update_metrics,
    update_phase,
)
from labctl.progress.formats import parse_progress_line, quick_key
from labctl.progress.line import ProgressLine
from labctl.progress.logstate import (
    DEFAULT_CONFIG,
    KiB,
    ReadPlan,
    ScanConfig,
    ScanResult,
    ScanState,
    plan_read,
)
from labctl.progress.markers import TRACEBACK, Marker, find_markers, traceback_marker

__all__ = [
    "DEFAULT_CONFIG",
    "ReadPlan",
    "ScanConfig",
    "ScanResult",
    "ScanState",
    "plan_read",
    "scan_chunk",
    "scan_file",
]
ESC_UP = b"\x1b[A"
SOURCE = {
    "regex": "log:regex",
    "verl": "log:verl",
    "levanter": "log:levanter",
    "hf_dict": "log:hf_dict",
}


def scan_file(
    path: str | os.PathLike[str],
    state: ScanState | None = None,
    config: ScanConfig = DEFAULT_CONFIG,
) -> ScanResult:
    """Read the new bytes of a local log (bounded by the config) and scan them."""
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        plan = plan_read(state, size, config)
        fh.seek(plan.start)
        data = fh.read(plan.length)
    return scan_chunk(data, state, start=plan.start, size=size, config=config)


def _reverse_blocks(buf: bytes, block: int = 256 * KiB) -> Iterator[tuple[list[bytes], list[int]]]:
    """Whole lines (with their terminators) and their offsets, in blocks from the end.

    bytes.splitlines splits on `\\n`, `\\r` and `\\r\\n` only, at C speed; blocks keep
    the lists small (memory stays bounded whatever the chunk size).
    """
    end = len(buf)
    while end > 0:
        start = 0
        if end > block:
            start = max(buf.rfind(b"\n", 0, end - block), buf.rfind(b"\r", 0, end - block)) + 1
        parts = buf[start:end].splitlines(keepends=True)
        yield parts, list(accumulate(map(len, parts), initial=start))
        end = start


def _prepare(
    data: bytes, state: ScanState | None, start: int, size: int
) -> tuple[ScanState, bytes, int, int, bool]:
    """Normalise the chunk against the state: (state, data, start, skipped, reset)."""
    st = ScanState.from_dict(state.to_dict()) if state is not None else ScanState()
    reset = False
    if state is not None and size < state.offset:
        st, reset = ScanState(resets=state.resets + 1), True
    skipped = 0
    if start < st.offset:  # overlap with bytes already consumed
        cut = min(st.offset - start, len(data))
        data, start = data[cut:], start + cut
    if start > st.offset:  # a first-sight tail, or the cap made us jump over old bytes
        skipped = start - st.offset if st.offset else 0
        st.carry, st.midline = "", True
    return st, data, start, skipped, reset


def scan_chunk(
    data: bytes,
    state: ScanState | None = None,
    *,
    start: int | None = None,
    size: int | None = None,
    config: ScanConfig = DEFAULT_CONFIG,
) -> ScanResult:
    """Scan `data`, the file's bytes from offset `start` (default: where `state` stopped).

    `size` is the file size seen when the bytes were fetched; a size below the stored offset
    means the log was truncated or rewritten (a requeue), and the state starts afresh. The
    input state is not modified; the new one is `result.state`.
    """
    begin = (state.offset if state is not None else 0) if start is None else start
    end = begin + len(data)
    size = max(size if size is not None else end, end)
    st, data, begin, skipped, reset = _prepare(data, state, begin, size)
    if not data and not reset and state is not None:
        st.size = size
        return _result(st, [], 0, skipped, reset, seen=False)
    buf = st.carry.encode("latin-1") + data
    if st.midline:  # drop the head-less line fragment
        first = [i for i in (buf.find(b"\n"), buf.find(b"\r")) if i >= 0]
        cut = min(first) if first else -1
        buf = buf[cut + 1 :] if cut >= 0 else b""
        st.midline = cut < 0
    base = end - len(buf)  # file offset of buf[0]
    complete = max(buf.rfind(b"\n"), buf.rfind(b"\r")) + 1
    if len(buf) - complete > config.carry_cap:
        st.carry, st.midline = "", True
    else:
        st.carry = buf[complete:].decode("latin-1")
    st.offset, st.size = end, size

    bars, newest, first_phase, tb_pos = _collect(buf, complete, st, config)
    train_bar = resolve_bar(st, bars)
    if train_bar is not None:
        newest["tqdm"] = train_bar
    st.slots = sorted(set(st.slots) | {k for k in newest if k not in ("checkpoint", "done")})
    progress_pos = max((p for k, (_, p) in newest.items() if k in COUNTER_SLOTS), default=-1)
    seen = update_counter(st, newest)
    update_metrics(st, newest)
    update_phase(st, first_phase, train_bar, newest, seen)

    markers = find_markers(buf[:complete], base, config.max_markers)
    if tb_pos is not None:
        markers.append(traceback_marker(buf, tb_pos, base))
    for mk in markers:
        mk.final = mk.offset > base + progress_pos
    return _result(st, markers, len(data), skipped, reset, seen=seen)


@dataclass
class _Walk:
    bars: dict[str, tuple[ProgressLine, int]] = field(default_factory=dict)
    newest: dict[str, tuple[ProgressLine, int]] = field(default_factory=dict)
    first_phase: tuple[ProgressLine, int] | None = None
    tb_pos: int | None = None
    progress_seen: bool = False

    def add(self, hit: ProgressLine, pos: int, st: ScanState) -> None:
        if self.first_phase is None and hit.phase and (hit.role != "noise" or st.value is None):
            self.first_phase = (hit, pos)
        if hit.bar is not None:
            self.bars.setdefault(hit.bar, (hit, pos))
            self.progress_seen = (
                self.progress_seen
                or hit.role == "train"
                or (st.bar is None and hit.role == "eval" and not hit.nested)
            )
        else:
            self.newest.setdefault(hit.slot, (hit, pos))
            self.progress_seen = self.progress_seen or hit.slot in COUNTER_SLOTS


def _collect(
    buf: bytes, complete: int, st: ScanState, config: ScanConfig
) -> tuple[
    dict[str, tuple[ProgressLine, int]],
    dict[str, tuple[ProgressLine, int]],
    tuple[ProgressLine, int] | None,
    int | None,
]:
    """Newest hit per bar and per slot, the newest phase event, a final traceback's offset.

    Lines are read newest first. The unterminated last line is read only as a tqdm frame
    (tqdm's newest frame has no terminator until the next redraw), and only for a bar also
    seen in complete lines or already in use: a nested bar's frame gets its ESC[A after the
    frame, so cut before that an eval frame would otherwise pass for a new training bar.
    A bar whose only frame so far is the last line is thus read one poll later.
    """
    walk = _Walk()
    done_keys: set[tuple[bytes, ...]] = set()
    tail_bar: tuple[ProgressLine, int] | None = None
    custom = config.regex
    run_head, run_seg, run_nested = b"\0", b"\0", False  # the bar frames being skipped
    for parts, offsets in _reverse_blocks(buf):
        for i in range(len(parts) - 1, -1, -1):
            line = parts[i]
            if line.startswith(run_head) and run_seg in line and (ESC_UP in line) is run_nested:
                continue  # fast path: another older frame of a bar already read
            pos = offsets[i]
            line = line.rstrip(b"\r\n")
            if not line:
                continue
            if pos >= complete:
                hit = parse_tqdm(line) if b"%|" in line else None
                tail_bar = (hit, pos) if hit is not None and hit.bar is not None else None
                continue
            if walk.tb_pos is None and not walk.progress_seen and TRACEBACK in line:
                walk.tb_pos = pos
            key = None if custom is not None else quick_key(line)
            if key is not None and key in done_keys:
                if key[0] == b"bar":  # same description and percentage: skip its run cheaply
                    run_head = line[: line.find(b"%|") + 2]
                    run_seg, run_nested = b"/" + key[2] + b" [", key[3] == b"n"
                continue  # an older frame of a bar (or dict kind) already read
            hit = parse_progress_line(line, custom, config.regex_counter)
            if hit is None:
                continue
            if key is not None:
                done_keys.add(key)
            walk.add(hit, pos, st)
    if tail_bar is not None and (tail_bar[0].bar in walk.bars or tail_bar[0].bar == st.bar):
        hit, pos = tail_bar
        assert hit.bar is not None
        walk.bars[hit.bar] = tail_bar
        if hit.phase and hit.role != "noise":
            walk.first_phase = tail_bar
    return walk.bars, walk.newest, walk.first_phase, walk.tb_pos


def _result(
    st: ScanState, markers: list[Marker], nbytes: int, skipped: int, reset: bool, *, seen: bool
) -> ScanResult:
    source = None
    if st.slot == "tqdm":
        lightning = st.counter == "epoch_step" or (st.bar or "").startswith("Epoch")
        source = "log:lightning" if lightning else "log:tqdm"
    elif st.slot is not None:
        source = SOURCE[st.slot]
    key = f"{source}:{st.counter}:{st.bar if st.slot == 'tqdm' else ''}" if source else None
    return ScanResult(
        st.counter, st.value, st.total, source, key, st.phase, st.finished, seen,
        dict(st.metrics), dict(st.metrics_raw), markers, st.offset, st.size, nbytes,
        skipped, reset, st,
    )  # fmt: skip
