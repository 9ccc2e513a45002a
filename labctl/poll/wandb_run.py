"""Which W&B run file belongs to a job, and its last step, from bytes read on the cluster.

A run started inside a SLURM job records the job's environment (`slurm.job_id`, …) in an
`environment` record near the start of `run-<id>.wandb`; the probe brings the head of each
candidate file (newer than the job's start) and the block-aligned tail. The head picks the
run, the tail gives the last history step (decoded by `labctl.progress.wandb_file`). Once
matched, the path is remembered and only the tail is read.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from labctl.records import rfc3339


@dataclass
class WandbSeen:
    path: str
    run_id: str | None
    size: int
    mtime: float
    step: int | None = None
    timestamp: float | None = None
    runtime: float | None = None
    finished: bool = False
    metrics: dict[str, float] = field(default_factory=dict)

    def to_dict(self, now: float) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "path": self.path,
            "step": self.step,
            "logged_at": rfc3339(self.timestamp),
            "runtime_s": self.runtime,
            "finished": self.finished,
            "file_size": self.size,
        }


def slurm_job_id(head: bytes) -> str | None:
    """The SLURM job id recorded in a run file's environment record, if any."""
    from wandb.proto import wandb_internal_pb2

    from labctl.progress.wandb_file import HEADER, MAGIC, iter_records

    pb: Any = wandb_internal_pb2  # generated code: no attribute types for mypy
    for n, payload in enumerate(iter_records(head, HEADER if head.startswith(MAGIC) else 0)):
        if n > 16:
            break
        if isinstance(payload, int):
            continue
        record = pb.Record()
        try:
            record.ParseFromString(payload)
        except Exception:
            continue
        if record.WhichOneof("record_type") == "environment":
            slurm = dict(record.environment.slurm)
            if slurm.get("job_id"):
                return str(slurm["job_id"])
    return None


def decode_tail(path: str, tail: bytes) -> Any:
    """`read_wandb_file` on the tail bytes (through a private temporary file)."""
    from labctl.progress.wandb_file import BLOCK, read_wandb_file

    name = os.path.basename(path) or "run-unknown.wandb"
    with tempfile.TemporaryDirectory(prefix="labctl-wandb-") as tmp:
        local = os.path.join(tmp, name)
        with open(local, "wb") as fh:
            fh.write(tail)
        size = len(tail) + BLOCK
        return read_wandb_file(local, window=size, max_bytes=size)


def match_wandb(
    candidates: Sequence[Mapping[str, bytes]], job: Mapping[str, Any], known: str | None
) -> WandbSeen | None:
    """The job's run among the probed candidates (newest first), decoded; else None."""
    parsed = []
    for parts in candidates:
        path = parts.get("path", b"").decode("utf-8", "surrogateescape")
        meta = parts.get("meta", b"").split()
        if not path or len(meta) < 2:
            continue
        parsed.append((path, int(meta[0]), float(meta[1]), parts))
    if not parsed:
        return None
    raw_id = str(job.get("job_id_raw") or job.get("job_id"))
    chosen = None
    if known is not None and parsed[0][0] == known and "head" not in parsed[0][3]:
        chosen = parsed[0]
    else:
        ids = [slurm_job_id(p[3].get("head", b"")) for p in parsed]
        chosen = next((p for p, i in zip(parsed, ids, strict=True) if i == raw_id), None)
        if chosen is None and len(parsed) == 1 and ids[0] is None:
            chosen = parsed[0]  # not started under SLURM (a command scheduler): the only run
    if chosen is None:
        return None
    path, size, mtime, parts = chosen
    progress = decode_tail(path, parts.get("tail", b""))
    return WandbSeen(
        path=path,
        run_id=progress.run_id,
        size=size,
        mtime=mtime,
        step=progress.step,
        timestamp=progress.timestamp,
        runtime=progress.runtime,
        finished=progress.finished,
        metrics=dict(progress.metrics),
    )
