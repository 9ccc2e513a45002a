"""The poll state store: one SQLite file in the state dir (WAL, busy timeout).

Reading it (other commands do: what is still running, what ended how) — a stable API:

    from labctl.poll.store import Store, StoredJob, store_path
    store = Store(store_path(lc.state_dir))      # <state dir>/poll.sqlite
    try:
        jobs = store.jobs("c1")                   # {(job_id_raw, task, submit): StoredJob}
    finally:
        store.close()

    StoredJob: key, job_id, array_job_id, first_seen / last_seen (epoch seconds, this
    machine's clock), verdict (labctl.verdicts), terminal (the job is over), active (poll
    still asks the scheduler about it), stdout / stderr (log paths on the cluster),
    record (the last `job` record poll emitted for it: `labctl schema poll`), progress
    (poll's own progress state; not an API).

Readers need no lock (WAL: they see the last committed poll). Only the poll process that
holds the state lock (`labctl.fsops.state_lock`) writes it; each cluster's results are
written in one transaction, so a crash leaves every cluster either at its previous poll or
at this one. Finished jobs are kept `poll.retention_days`.

    clusters(name PK, last_ok_at, last_ok_remote, last_attempt_at, consecutive_failures,
             first_failure_at, last_error)
        last_ok_remote is the cluster's own clock at its last good poll: the sacct window
        starts from it, so a skewed local clock cannot open a gap.
    jobs(cluster, job_id_raw, task, submit  PK,  job_id, array_job_id, first_seen,
         last_seen, verdict, terminal, active, stdout, stderr, record, progress)
        task is the array task id or -1, submit the submit epoch or 0: ids are reused and
        a requeue resets the submit time. `active` = still asked about by id. `record` is
        the last job record (JSON); `progress` the progress state (issue 5, JSON).
    polls(id PK, started_at, ended_at, clusters_ok, clusters_failed)
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from labctl.poll.model import Key, StoredJob

__all__ = ["SCHEMA_VERSION", "Key", "Store", "StoreError", "StoredJob", "store_path"]

SCHEMA_VERSION = 1
STORE_FILE = "poll.sqlite"


def store_path(state_dir: Path) -> Path:
    """Where the poll state store lives in a state directory."""
    return state_dir / STORE_FILE


_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS clusters(
    name TEXT PRIMARY KEY,
    last_ok_at REAL,
    last_ok_remote REAL,
    last_attempt_at REAL,
    consecutive_failures INTEGER NOT NULL DEFAULT 0,
    first_failure_at REAL,
    last_error TEXT
);
CREATE TABLE IF NOT EXISTS jobs(
    cluster TEXT NOT NULL,
    job_id_raw TEXT NOT NULL,
    task INTEGER NOT NULL,
    submit INTEGER NOT NULL,
    job_id TEXT NOT NULL,
    array_job_id TEXT,
    first_seen REAL NOT NULL,
    last_seen REAL NOT NULL,
    verdict TEXT,
    terminal INTEGER NOT NULL,
    active INTEGER NOT NULL,
    stdout TEXT,
    stderr TEXT,
    record TEXT NOT NULL,
    progress TEXT,
    PRIMARY KEY (cluster, job_id_raw, task, submit)
);
CREATE INDEX IF NOT EXISTS jobs_active ON jobs(cluster, active);
CREATE TABLE IF NOT EXISTS polls(
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    started_at REAL NOT NULL,
    ended_at REAL,
    clusters_ok INTEGER,
    clusters_failed INTEGER
);
"""


class StoreError(Exception):
    pass


class Store:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.db = sqlite3.connect(str(path), timeout=10, isolation_level=None)
        self.db.execute("PRAGMA busy_timeout = 10000")
        self.db.execute("PRAGMA journal_mode = WAL")
        self.db.execute("PRAGMA synchronous = NORMAL")
        self.db.executescript(_SCHEMA)
        row = self.db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if row is None:
            self.db.execute(
                "INSERT INTO meta(key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
            )
        elif int(row[0]) > SCHEMA_VERSION:
            raise StoreError(
                f"{path} was written by a newer labctl (schema {row[0]} > {SCHEMA_VERSION})"
            )
        path.chmod(0o600)

    def close(self) -> None:
        self.db.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    # -- clusters ------------------------------------------------------------------------

    def cluster(self, name: str) -> dict[str, Any]:
        cur = self.db.execute("SELECT * FROM clusters WHERE name = ?", (name,))
        row = cur.fetchone()
        if row is None:
            return dict.fromkeys(
                ("last_ok_at", "last_ok_remote", "first_failure_at", "last_error"), None
            ) | {"name": name, "consecutive_failures": 0}
        return dict(zip([d[0] for d in cur.description], row, strict=True))

    def cluster_ok(self, name: str, now: float, remote_now: float) -> None:
        self.db.execute(
            "INSERT INTO clusters(name, last_ok_at, last_ok_remote, last_attempt_at, "
            "consecutive_failures, first_failure_at, last_error) "
            "VALUES (?, ?, ?, ?, 0, NULL, NULL) "
            "ON CONFLICT(name) DO UPDATE SET last_ok_at=excluded.last_ok_at, "
            "last_ok_remote=excluded.last_ok_remote, last_attempt_at=excluded.last_attempt_at, "
            "consecutive_failures=0, first_failure_at=NULL, last_error=NULL",
            (name, now, remote_now, now),
        )

    def cluster_failed(self, name: str, now: float, message: str) -> dict[str, Any]:
        self.db.execute(
            "INSERT INTO clusters(name, last_attempt_at, consecutive_failures, first_failure_at, "
            "last_error) VALUES (?, ?, 1, ?, ?) ON CONFLICT(name) DO UPDATE SET "
            "last_attempt_at=excluded.last_attempt_at, "
            "consecutive_failures=clusters.consecutive_failures + 1, "
            "first_failure_at=COALESCE(clusters.first_failure_at, excluded.first_failure_at), "
            "last_error=excluded.last_error",
            (name, now, now, message),
        )
        return self.cluster(name)

    # -- jobs ----------------------------------------------------------------------------

    def jobs(self, cluster: str) -> dict[Key, StoredJob]:
        cur = self.db.execute(
            "SELECT job_id_raw, task, submit, job_id, array_job_id, first_seen, last_seen, "
            "verdict, terminal, active, stdout, stderr, record, progress "
            "FROM jobs WHERE cluster = ?",
            (cluster,),
        )
        out: dict[Key, StoredJob] = {}
        for raw, task, submit, *rest in cur:
            key = (raw, int(task), int(submit))
            job_id, array_job_id, first, last, verdict, terminal, active, so, se, rec, prog = rest
            out[key] = StoredJob(
                key=key, job_id=job_id, array_job_id=array_job_id, first_seen=first,
                last_seen=last, verdict=verdict, terminal=bool(terminal), active=bool(active),
                stdout=so, stderr=se, record=json.loads(rec),
                progress=json.loads(prog) if prog else None,
            )  # fmt: skip
        return out

    def active_count(self, cluster: str) -> int:
        row = self.db.execute(
            "SELECT COUNT(*) FROM jobs WHERE cluster = ? AND active = 1", (cluster,)
        ).fetchone()
        return int(row[0])

    def put_jobs(self, cluster: str, jobs: Iterable[StoredJob]) -> None:
        self.db.executemany(
            "INSERT OR REPLACE INTO jobs(cluster, job_id_raw, task, submit, job_id, "
            "array_job_id, first_seen, last_seen, verdict, terminal, active, stdout, stderr, "
            "record, progress) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [_row(cluster, j) for j in jobs],
        )

    def touch(self, cluster: str, keys: Iterable[Key], now: float) -> None:
        """Jobs seen again unchanged: only `last_seen` moves."""
        self.db.executemany(
            "UPDATE jobs SET last_seen = ? WHERE cluster = ? AND job_id_raw = ? AND task = ? "
            "AND submit = ?",
            [(now, cluster, *key) for key in keys],
        )

    def prune(self, cluster: str, before: float) -> int:
        """Forget finished (or long-vanished) jobs last seen before `before`."""
        cur = self.db.execute(
            "DELETE FROM jobs WHERE cluster = ? AND active = 0 AND last_seen < ?",
            (cluster, before),
        )
        return cur.rowcount

    # -- polls ---------------------------------------------------------------------------

    def poll_started(self, now: float) -> int:
        cur = self.db.execute("INSERT INTO polls(started_at) VALUES (?)", (now,))
        self.db.execute("DELETE FROM polls WHERE id <= ?", (int(cur.lastrowid or 0) - 1000,))
        return int(cur.lastrowid or 0)

    def poll_ended(self, poll_id: int, now: float, ok: int, failed: int) -> None:
        self.db.execute(
            "UPDATE polls SET ended_at = ?, clusters_ok = ?, clusters_failed = ? WHERE id = ?",
            (now, ok, failed, poll_id),
        )


def _row(cluster: str, j: StoredJob) -> tuple[Any, ...]:
    progress = _dumps(j.progress) if j.progress is not None else None
    return (
        cluster, j.key[0], j.key[1], j.key[2], j.job_id, j.array_job_id, j.first_seen,
        j.last_seen, j.verdict, int(j.terminal), int(j.active), j.stdout, j.stderr,
        _dumps(j.record), progress,
    )  # fmt: skip


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), allow_nan=True, default=str)
