"""Read a W&B run's progress from its local transaction log, without the network.

A run directory (`wandb/run-<YYYYMMDD_HHMMSS>-<id>/` or `wandb/offline-run-…/`, newest one
behind the `wandb/latest-run` symlink) holds `run-<id>.wandb`: a LevelDB-style log. A 7-byte
header (`:W&B`, magic 0xBEE1 little-endian, version 0) is followed by 32 KiB blocks of chunks
`crc32 u32 | length u16 | type u8 | data`, type FULL=1, FIRST=2, MIDDLE=3, LAST=4; the CRC is
zlib's CRC-32 of the type byte and the data; a block tail shorter than a chunk header is zero
padding. Each record is a protobuf `wandb_internal_pb2.Record`.

wandb-core appends to the file as the run logs and flushes at least every 15 s
(`x_transaction_log_flush_interval`) or when its buffer fills, so a live file often ends in
the middle of a record. We read only a window at the end (widened, up to a cap, until a
history record turns up), find chunk boundaries by their CRC (so a shifted or damaged file
still parses) and keep the last `history` record: `_step`, `_timestamp`, `_runtime` and its
scalar metrics. An `exit` record means the run finished.
"""

from __future__ import annotations

import json
import math
import os
import struct
import zlib
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

BLOCK = 32768
HEADER = 7
MAGIC = b":W&B" + struct.pack("<HB", 0xBEE1, 0)
FULL, FIRST, MIDDLE, LAST = 1, 2, 3, 4
_HDR = struct.Struct("<IHB")
_TYPE_CRC = [zlib.crc32(bytes([t])) for t in range(5)]
MAX_METRICS = 200
VALUE_JSON_MAX = 256  # longer value_json strings are media/tables, not scalars


@dataclass
class WandbFileProgress:
    path: str
    run_id: str | None
    size: int
    mtime: float
    step: int | None = None
    timestamp: float | None = None  # `_timestamp`: wall clock of the last logged step
    runtime: float | None = None  # `_runtime`: seconds since the run started
    metrics: dict[str, float] = field(default_factory=dict)
    finished: bool = False  # an exit record was read
    exit_code: int | None = None
    records: int = 0  # records decoded in the window
    bytes_read: int = 0
    partial_tail: bool = False  # the file ends inside a chunk (a live write)
    gaps: int = 0  # stretches of bytes skipped to resynchronise (damage, or the window start)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["metrics"] = {k: v if math.isfinite(v) else str(v) for k, v in self.metrics.items()}
        return out


def iter_chunks(buf: bytes, pos: int = 0) -> Iterator[tuple[int, bytes | None]]:
    """(type, data) for each CRC-valid chunk from `pos`; (0, None) marks skipped bytes.

    No block alignment is assumed: zero padding and garbage are stepped over until the next
    offset holding a chunk whose CRC matches. A chunk that runs past the end of `buf` (a
    write in progress) ends the iteration with (-1, None).
    """
    end = len(buf)
    skipping = False
    while pos + HEADER <= end:
        crc, length, kind = _HDR.unpack_from(buf, pos)
        if FULL <= kind <= LAST and length <= BLOCK - HEADER:
            stop = pos + HEADER + length
            if stop > end:
                if not skipping:
                    yield -1, None
                    return
            elif zlib.crc32(buf[pos + HEADER : stop], _TYPE_CRC[kind]) == crc:
                skipping = False
                yield kind, buf[pos + HEADER : stop]
                pos = stop
                continue
        if buf[pos] != 0 and not skipping:
            skipping = True
            yield 0, None
        pos += 1


GAP, PARTIAL = 0, -1


def iter_records(buf: bytes, pos: int = 0) -> Iterator[bytes | int]:
    """Reassembled record payloads, plus GAP where bytes were skipped and PARTIAL when the
    window ends inside a chunk (a write in progress)."""
    parts: list[bytes] | None = None
    for kind, data in iter_chunks(buf, pos):
        if data is None:
            parts = None  # a record spanning a gap cannot be trusted
            yield PARTIAL if kind < 0 else GAP
        elif kind == FULL:
            parts = None
            yield data
        elif kind == FIRST:
            parts = [data]
        elif parts is not None:
            parts.append(data)
            if kind == LAST:
                yield b"".join(parts)
                parts = None


def _item_value(item: Any) -> float | None:
    which = item.WhichOneof("value")
    if which in ("integer", "number"):
        value = getattr(item, which)
    elif item.value_json and len(item.value_json) <= VALUE_JSON_MAX:
        try:
            value = json.loads(item.value_json)
        except ValueError:
            return None
    else:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value


@dataclass
class HistoryRow:
    """One `history` record: `_step`, `_timestamp`, `_runtime` and its scalar metrics."""

    step: int | None = None
    timestamp: float | None = None
    runtime: float | None = None
    metrics: dict[str, float] = field(default_factory=dict)


def history_row(history: Any) -> HistoryRow:
    row = HistoryRow()
    for item in history.item:
        key = item.key or ".".join(item.nested_key)
        value = _item_value(item)
        if value is None or not key:
            continue
        if key == "_step":
            row.step = int(value)
        elif key == "_timestamp":
            row.timestamp = float(value)
        elif key == "_runtime":
            row.runtime = float(value)
        elif len(row.metrics) < MAX_METRICS and not key.startswith("_"):
            row.metrics[key] = float(value)
    if row.step is None and history.HasField("step"):
        row.step = int(history.step.num)
    return row


def _apply_history(progress: WandbFileProgress, history: Any) -> None:
    row = history_row(history)
    progress.step, progress.timestamp, progress.runtime = row.step, row.timestamp, row.runtime
    progress.metrics = row.metrics


def read_wandb_file(
    path: str | os.PathLike[str], *, window: int = 2 * BLOCK, max_bytes: int = 4 << 20
) -> WandbFileProgress:
    """The last history step in a `.wandb` file, reading at most `max_bytes` from its end."""
    from wandb.proto import wandb_internal_pb2 as pb  # heavy: only when a run file is read

    p = Path(path)
    name = p.name
    run_id = name[4:-6] if name.startswith("run-") and name.endswith(".wandb") else None
    with open(p, "rb") as fh:
        st = os.fstat(fh.fileno())
        progress = WandbFileProgress(str(p), run_id, st.st_size, st.st_mtime)
        size = st.st_size
        while True:
            start = max(0, (size - window) // BLOCK * BLOCK)
            fh.seek(start)
            buf = fh.read(size - start)
            progress.bytes_read += len(buf)
            pos = HEADER if start == 0 and buf.startswith(MAGIC) else 0
            found = _decode_window(progress, pb, buf, pos)
            if found or start == 0 or window >= max_bytes:
                return progress
            window = min(window * 4, max_bytes)


def _decode_window(progress: WandbFileProgress, pb: Any, buf: bytes, pos: int) -> bool:
    progress.records = progress.gaps = 0
    progress.partial_tail = False
    history: Any = None
    for payload in iter_records(buf, pos):
        if isinstance(payload, int):
            progress.partial_tail = payload == PARTIAL
            progress.gaps += payload == GAP
            continue
        record = pb.Record()
        try:
            record.ParseFromString(payload)
        except Exception:  # a CRC-valid chunk that is not a Record: damage
            progress.gaps += 1
            continue
        progress.records += 1
        kind = record.WhichOneof("record_type")
        if kind == "history":
            history = record.history
        elif kind == "exit":
            progress.finished, progress.exit_code = True, int(record.exit.exit_code)
        elif kind in ("final", "footer"):
            progress.finished = True
    if history is None:
        return False
    _apply_history(progress, history)
    return True


@dataclass
class RunDir:
    path: str
    run_id: str
    offline: bool
    latest: bool  # the target of `wandb/latest-run`
    wandb_file: str | None  # newest `run-*.wandb` inside
    mtime: float  # of that file (or of the directory)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def find_run_dirs(root: str | os.PathLike[str], *, depth: int = 2) -> list[RunDir]:
    """W&B run directories under a job's working/output dir, newest first.

    Looks in `root/wandb`, `root` itself when it is a `wandb` dir, and `wandb` dirs up to
    `depth` levels below `root` (bounded: no recursive walk of large trees).
    """
    base = Path(root)
    candidates: list[Path] = []
    levels = [base]
    for _ in range(depth + 1):
        nxt: list[Path] = []
        for d in levels:
            if d.name == "wandb":
                candidates.append(d)
                continue  # run dirs are not searched further
            if (d / "wandb").is_dir():
                candidates.append(d / "wandb")
            try:
                nxt.extend(c for c in d.iterdir() if c.is_dir() and not c.name.startswith("."))
            except OSError:
                continue
        levels = nxt[:256]
    runs: dict[str, RunDir] = {}
    for wdir in dict.fromkeys(candidates):
        latest = (wdir / "latest-run").resolve() if (wdir / "latest-run").is_symlink() else None
        for d in wdir.glob("*run-*"):
            if d.is_symlink() or not d.is_dir():
                continue
            offline = d.name.startswith("offline-run-")
            if not (offline or d.name.startswith("run-")):
                continue
            files = sorted(d.glob("run-*.wandb"), key=lambda f: f.stat().st_mtime)
            wfile = files[-1] if files else None
            mtime = (wfile or d).stat().st_mtime
            runs[str(d.resolve())] = RunDir(
                str(d), d.name.rsplit("-", 1)[-1], offline, d.resolve() == latest,
                str(wfile) if wfile else None, mtime,
            )  # fmt: skip
    return sorted(runs.values(), key=lambda r: (r.latest, r.mtime), reverse=True)
