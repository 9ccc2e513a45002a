"""The poll store at the level of bytes and rows: its SQL schema, a job as a row and back,
how a store file is recognised, copied into memory, and judged unusable."""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from labctl.poll.model import StoredJob, store_json, view_of


class StoreError(Exception):
    pass


class StoreUnusable(StoreError):
    """The store cannot be used as it is: not a database, corrupt, unreadable data, or
    written by a newer labctl (poll moves it aside and starts afresh: labctl.poll.state)."""


SCHEMA = """
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


SQLITE_MAGIC = b"SQLite format 3\x00"
_UNUSABLE_CODES = ("SQLITE_CORRUPT", "SQLITE_NOTADB", "SQLITE_FORMAT")


def unusable_cause(exc: BaseException) -> str | None:
    """Why `exc` says the store file itself is bad (None: it says something else)."""
    if isinstance(exc, StoreUnusable):
        return str(exc)
    name = getattr(exc, "sqlite_errorname", None) or ""
    if name.startswith(_UNUSABLE_CODES) or type(exc) is sqlite3.DatabaseError:
        return str(exc)
    if isinstance(exc, sqlite3.DataError):  # a damaged length: "string or blob too big"
        return str(exc)
    return None


@contextmanager
def damaged(doing: str) -> Iterator[None]:
    """Text SQLite hands back that is not UTF-8 (even in its own error messages) means
    damaged bytes: StoreUnusable, not a UnicodeDecodeError from deep inside."""
    try:
        yield
    except UnicodeDecodeError as exc:
        raise StoreUnusable(f"{doing}: damaged text ({exc.reason} at byte {exc.start})") from None


def _columns(db: sqlite3.Connection) -> dict[str, list[tuple[str, str, int]]]:
    """Each table's columns (name, declared type, NOT NULL) as SQLite reads them."""
    names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    return {
        t: [(c[1], c[2], c[3]) for c in db.execute(f"PRAGMA table_info('{t}')")]
        for t in names
        if not t.startswith("sqlite_")
    }


@functools.cache
def _expected() -> dict[str, list[tuple[str, str, int]]]:
    """The columns SCHEMA makes, read from a fresh database in memory."""
    fresh = sqlite3.connect(":memory:")
    try:
        fresh.executescript(SCHEMA)
        return _columns(fresh)
    finally:
        fresh.close()


def schema_problem(db: sqlite3.Connection) -> str | None:
    """What makes an existing store's tables other than SCHEMA's (None when they are ours,
    or when there are none yet). Checked before anything is written: a byte changed in the
    schema's text (SQLite keeps it as text) still reads as a database, whose next statement
    fails only after this poll's first transactions were committed into the damaged file."""
    found = _columns(db)
    if not found:
        return None
    for table, columns in _expected().items():
        if table not in found:
            return f"its schema has no table {table!r}"
        if found[table] != columns:
            return f"its schema's table {table!r} is not the one labctl writes"
    return None


def memory_image(image: bytes) -> bytes:
    """A store file's bytes as SQLite deserializes them into memory (a WAL-mode header
    would send it looking for a -wal file: bytes 18-19 say rollback journal instead)."""
    if image[:16] == SQLITE_MAGIC and image[18:20] == b"\x02\x02":
        return image[:18] + b"\x01\x01" + image[20:]
    return image


def strict_text(data: bytes) -> str:
    return data.decode("utf-8")  # bad bytes raise (sqlite3 would only say "Could not decode")


def stored_job(row: tuple[Any, ...]) -> StoredJob:
    raw, task, submit, job_id, array_job_id, first, last, verdict, terminal, active, *rest = row
    so, se, rec, prog = rest
    record = json.loads(rec)
    if not isinstance(record, dict):
        raise TypeError(f"job {raw}: its record is not an object")
    view = view_of(record)
    del record  # only its view is held: thousands of stored jobs, parsed, would not fit
    return StoredJob(
        key=(raw, int(task), int(submit)), job_id=job_id, array_job_id=array_job_id,
        first_seen=float(first), last_seen=float(last), verdict=verdict,
        terminal=bool(terminal), active=bool(active), stdout=so, stderr=se, record_json=rec,
        view=view,
        progress=json.loads(prog) if prog else None,
    )  # fmt: skip


def job_row(cluster: str, j: StoredJob) -> tuple[Any, ...]:
    progress = dumps(j.progress) if j.progress is not None else None
    return (
        cluster, j.key[0], j.key[1], j.key[2], j.job_id, j.array_job_id, j.first_seen,
        j.last_seen, j.verdict, int(j.terminal), int(j.active), j.stdout, j.stderr,
        j.record_json, progress,
    )  # fmt: skip


def dumps(value: Any) -> str:
    return store_json(value)
