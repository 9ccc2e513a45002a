"""The metric history of a W&B run: from its local `run-*.wandb` file, or from API rows.

The run file is read like a log: the head, evenly spaced samples and the tail (the same
byte plan as `logread`), each region decoded on its own with the CRC-resynchronising
reader of `labctl.progress.wandb_file` (a region may start mid-record: the first whole
chunk after it is found by its CRC). Every `history` record becomes a point with its
`_step` and `_timestamp`, so a frozen run shows as time without steps.

API rows (`run.history(keys=..., samples=...)`, fetched by `labctl.backends.wandb_api`) are
already sampled by the server: they become points in step order.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from labctl.rlhealth.history import History
from labctl.rlhealth.logread import ReadConfig, Region, plan


def parse_run_file(
    regions: Sequence[Region], data: Sequence[bytes], size: int, *, source: str = "wandb_file"
) -> History:
    from wandb.proto import wandb_internal_pb2  # heavy: only when a run file is read

    from labctl.progress.wandb_file import HEADER, MAGIC, history_row, iter_records

    pb: Any = wandb_internal_pb2
    history = History(source)
    for (start, _length), chunk in zip(regions, data, strict=True):
        pos = HEADER if start == 0 and chunk.startswith(MAGIC) else 0
        for i, payload in enumerate(iter_records(chunk, pos)):
            if isinstance(payload, int):
                continue
            record = pb.Record()
            try:
                record.ParseFromString(payload)
            except Exception:  # a CRC-valid chunk that is not a Record: damage
                continue
            if record.WhichOneof("record_type") != "history":
                continue
            row = history_row(record.history)
            history.add(start + i, row.step, row.metrics, time=row.timestamp)
    history.read = {
        "bytes_read": sum(len(d) for d in data),
        "file_size": size,
        "regions": [[s, len(d)] for (s, _), d in zip(regions, data, strict=True)],
    }
    return history.finish()


def read_run_file(path: str | os.PathLike[str], cfg: ReadConfig) -> History:
    from labctl.rlhealth.logread import LocalFile

    source = LocalFile(path)
    regions = plan(source.size(), cfg)
    return parse_run_file(regions, source.read(regions), source.size())


def from_rows(rows: Iterable[Mapping[str, Any]], *, read: dict[str, Any] | None = None) -> History:
    """API history rows ({"_step": 3, "_timestamp": ..., "actor/entropy": 0.4, ...})."""
    history = History("wandb_api")
    for i, row in enumerate(sorted(rows, key=lambda r: _num(r.get("_step")) or 0)):
        metrics = {
            k: float(v)
            for k, v in row.items()
            if not k.startswith("_") and isinstance(v, int | float) and not isinstance(v, bool)
        }
        step = _num(row.get("_step"))
        history.add(
            i, int(step) if step is not None else None, metrics, time=_num(row.get("_timestamp"))
        )
    history.read = dict(read or {})
    return history.finish()


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)
