"""The poll state store: one SQLite file in the state dir (WAL, busy timeout).

Reading it (other commands do: what is still running, what ended how) — a stable API:

    from labctl.poll.store import StoredJob, open_to_read, store_path
    store = open_to_read(store_path(lc.state_dir))   # <state dir>/poll.sqlite
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
at this one. Finished jobs are kept `poll.retention_days`. A store that cannot be used
raises `StoreUnusable` (not a database, corrupt, data that does not read back, a newer
labctl's schema); any other sqlite3/OS error is the file system's (labctl.poll.state
decides what poll does about either). `Store.in_memory(image)` is a store that saves
nothing (poll's fallback), `check()` SQLite's quick_check, `image()` the content as bytes.

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

import contextlib
import sqlite3
import stat
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from labctl.poll.model import Key, StoredJob
from labctl.poll.storefile import (
    SCHEMA,
    SQLITE_MAGIC,
    StoreError,
    StoreUnusable,
    damaged,
    job_row,
    memory_image,
    schema_problem,
    stored_job,
    strict_text,
)

__all__ = [
    "SCHEMA_VERSION",
    "Key",
    "Store",
    "StoreError",
    "StoreUnusable",
    "StoredJob",
    "open_to_read",
    "store_path",
    "unreadable",
]

SCHEMA_VERSION = 1
STORE_FILE = "poll.sqlite"


def store_path(state_dir: Path) -> Path:
    """Where the poll state store lives in a state directory."""
    return state_dir / STORE_FILE


def open_to_read(path: Path) -> Store:
    """The store for a reader (guard, migrate-experiment, rl-health): the file, or a copy
    of it in memory when its directory takes no write (SQLite's WAL needs its -shm file).
    A store that cannot be read at all raises `unreadable(path, exc)`."""
    try:
        return Store(path)
    except (sqlite3.Error, StoreError, OSError) as exc:
        first: BaseException = exc
    try:
        store = Store.in_memory(path.read_bytes())
        store.check()
        return store
    except (sqlite3.Error, StoreError, OSError):
        raise unreadable(path, first) from None


def unreadable(path: Path, exc: BaseException) -> Exception:
    """`state_unreadable` (exit 3): what a reader of the store says when it cannot."""
    from labctl.errors import BackendError

    return BackendError(
        f"poll's state store {path} cannot be read ({exc}): the next `labctl poll` moves "
        "it aside and starts afresh; meanwhile pipe poll's records in instead",
        reason="state_unreadable",
        path=str(path),
    )


class Store:
    def __init__(self, path: Path, *, timeout_s: float = 10.0) -> None:
        self.path: Path | None = path
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with contextlib.suppress(FileNotFoundError), path.open("rb") as fh:
            head = fh.read(len(SQLITE_MAGIC))
            if head and head != SQLITE_MAGIC:  # empty: SQLite's own empty database
                raise StoreUnusable("not a SQLite database (it does not start with the header)")
        self.db = sqlite3.connect(str(path), timeout=timeout_s, isolation_level=None)
        try:
            with damaged("opening it"):
                self.db.execute(f"PRAGMA busy_timeout = {int(timeout_s * 1000)}")
                self.db.execute("PRAGMA journal_mode = WAL")
                self.db.execute("PRAGMA synchronous = NORMAL")
                problem = schema_problem(self.db)
                if problem is not None:
                    raise StoreUnusable(problem)
                self._setup(str(path))
            if stat.S_IMODE(path.stat().st_mode) != 0o600:
                path.chmod(0o600)
        except BaseException:
            self.db.close()
            raise

    @classmethod
    def in_memory(cls, image: bytes | None = None) -> Store:
        """A store that saves nothing: empty, or a copy of a store file's bytes."""
        self = cls.__new__(cls)
        self.path = None
        self.db = sqlite3.connect(":memory:", isolation_level=None)
        try:
            with damaged("copying it"):
                if image:
                    self.db.deserialize(memory_image(image))
                self._setup("the copy in memory")
        except BaseException:
            self.db.close()
            raise
        return self

    def _setup(self, where: str) -> None:
        self.db.text_factory = strict_text
        self.db.executescript(SCHEMA)
        row = self.db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if row is None:
            self.db.execute(
                "INSERT INTO meta(key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
            )
        elif not str(row[0]).isdigit():
            raise StoreUnusable(f"{where} has no schema version (it says {row[0]!r})")
        elif int(row[0]) > SCHEMA_VERSION:
            raise StoreUnusable(
                f"{where} was written by a newer labctl (schema {row[0]} > {SCHEMA_VERSION})"
            )

    def check(self) -> None:
        """SQLite's quick_check (every page read, every record well-formed)."""
        with damaged("checking it"):
            rows = self.db.execute("PRAGMA quick_check").fetchall()
        if rows != [("ok",)]:
            raise StoreUnusable(f"quick_check: {rows[0][0] if rows else 'no answer'}")

    def image(self) -> bytes:
        """The store's content as one SQLite image (what `in_memory` copies)."""
        return bytes(self.db.serialize())

    def close(self) -> None:
        self.db.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """All or nothing: a failed statement or COMMIT (a full disk) rolls back, and the
        file stays at the last commit."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
            self.db.execute("COMMIT")
        except BaseException:
            if self.db.in_transaction:  # SQLite rolls back by itself on some errors
                with contextlib.suppress(sqlite3.Error):
                    self.db.execute("ROLLBACK")
            raise

    # -- clusters ------------------------------------------------------------------------

    def cluster(self, name: str) -> dict[str, Any]:
        cur = self.db.execute("SELECT * FROM clusters WHERE name = ?", (name,))
        with damaged("reading a cluster"):
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

    def jobs(self, cluster: str, *, seen_since: float | None = None) -> dict[Key, StoredJob]:
        """Every stored job of the cluster; with `seen_since`, only those a poll can meet
        again: the ones still asked about (active), the ones seen since then, and every
        attempt with the id of an active one (`sacct -D --jobs` returns them). A lab's
        store holds weeks of finished jobs; a poll needs the few its window returns."""
        columns = (
            "SELECT job_id_raw, task, submit, job_id, array_job_id, first_seen, last_seen, "
            "verdict, terminal, active, stdout, stderr, record, progress FROM jobs "
        )
        if seen_since is None:
            cur = self.db.execute(columns + "WHERE cluster = ?", (cluster,))
        else:
            cur = self.db.execute(
                columns + "WHERE cluster = ? AND (active = 1 OR last_seen >= ? OR job_id_raw IN "
                "(SELECT job_id_raw FROM jobs WHERE cluster = ? AND active = 1))",
                (cluster, seen_since, cluster),
            )
        try:
            return {job.key: job for job in map(stored_job, cur)}
        except (ValueError, TypeError) as exc:  # bad UTF-8 or JSON: the data is damaged
            raise StoreUnusable(f"a stored job cannot be read back: {exc}") from None

    def active_ids(self, cluster: str) -> list[str]:
        """The raw ids of the jobs still asked about by id."""
        cur = self.db.execute(
            "SELECT DISTINCT job_id_raw FROM jobs WHERE cluster = ? AND active = 1", (cluster,)
        )
        with damaged("reading active job ids"):
            return [str(row[0]) for row in cur]

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
            [job_row(cluster, j) for j in jobs],
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
