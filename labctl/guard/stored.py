"""The jobs the last poll saw, from poll's state store (its public read API, nothing else).

Used by `guard admit` and `migrate-experiment` when no records are piped in. Only the
jobs the store still tracks as active (not finished, not forgotten) are returned, as
their last `job` record, with when each cluster was last polled successfully.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class StoredJobs:
    records: list[dict[str, Any]] = field(default_factory=list)
    polled_at: dict[str, float | None] = field(default_factory=dict)  # cluster -> last ok
    exists: bool = True


def stored_jobs(state_dir: Path, clusters: Sequence[str]) -> StoredJobs:
    """Active jobs of `clusters` as the last poll saw them (exists=False: never polled)."""
    from labctl.poll.store import Store, store_path

    path = store_path(state_dir)
    if not path.is_file():
        return StoredJobs(polled_at=dict.fromkeys(clusters), exists=False)
    store = Store(path)
    try:
        out = StoredJobs()
        for cluster in clusters:
            out.polled_at[cluster] = store.cluster(cluster)["last_ok_at"]
            out.records += [j.record for j in store.jobs(cluster).values() if j.active]
        return out
    finally:
        store.close()
