"""The jobs the last poll saw, from poll's state store (its public read API, nothing else).

Used by `guard admit` and `migrate-experiment` when no records are piped in: the jobs
the store still tracks as active (not finished, not forgotten) as their last `job`
record, every stored job with when poll last saw it, and when each cluster was last
polled successfully.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class StoredJobs:
    records: list[dict[str, Any]] = field(default_factory=list)  # active jobs
    seen: list[tuple[dict[str, Any], float]] = field(default_factory=list)  # all, last seen
    polled_at: dict[str, float | None] = field(default_factory=dict)  # cluster -> last ok
    exists: bool = True


def stored_jobs(state_dir: Path, clusters: Sequence[str]) -> StoredJobs:
    """What the store holds for `clusters` (exists=False: poll never ran here)."""
    import sqlite3

    from labctl.poll.store import StoreError, open_to_read, store_path, unreadable

    path = store_path(state_dir)
    if not path.is_file():
        return StoredJobs(polled_at=dict.fromkeys(clusters), exists=False)
    store = open_to_read(path)
    try:
        out = StoredJobs()
        for cluster in clusters:
            out.polled_at[cluster] = store.cluster(cluster)["last_ok_at"]
            for job in store.jobs(cluster).values():
                out.seen.append((job.record, job.last_seen))
                if job.active:
                    out.records.append(job.record)
        return out
    except (sqlite3.Error, StoreError) as exc:
        raise unreadable(path, exc) from None
    finally:
        store.close()
