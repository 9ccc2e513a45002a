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


def _open(path: Path) -> Any:
    """The store; a copy of its file in memory when the state dir takes no write (a full
    disk, a read-only mount). A store that cannot be read: `state_unreadable` (exit 3)."""
    import sqlite3

    from labctl.poll.store import Store, StoreError

    try:
        return Store(path)
    except (sqlite3.Error, StoreError, OSError) as exc:
        first = exc
    try:
        store = Store.in_memory(path.read_bytes())
        store.check()
        return store
    except (sqlite3.Error, StoreError, OSError):
        pass
    raise unreadable(path, first)


def unreadable(path: Path, exc: BaseException) -> Exception:
    from labctl.errors import BackendError

    return BackendError(
        f"poll's state store {path} cannot be read ({exc}): the next `labctl poll` moves "
        "it aside and starts afresh; meanwhile pipe poll's records in instead",
        reason="state_unreadable",
        path=str(path),
    )


def stored_jobs(state_dir: Path, clusters: Sequence[str]) -> StoredJobs:
    """What the store holds for `clusters` (exists=False: poll never ran here)."""
    import sqlite3

    from labctl.poll.store import StoreError, store_path

    path = store_path(state_dir)
    if not path.is_file():
        return StoredJobs(polled_at=dict.fromkeys(clusters), exists=False)
    store = _open(path)
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
