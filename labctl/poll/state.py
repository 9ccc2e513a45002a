"""Poll's hold on its state store: losing the store costs the memory, never the report.

    state = open_state(state_dir, now=..., timeout_s=..., lock_fault=None)
    state.read(fn) / state.write(fn)     fn(store) -> value; a write is one transaction
    state.faults()                       the `error` records not emitted yet
    state.close()

A store that cannot be used (not a database, corrupt, data that does not read back, a
newer labctl's schema, a file the state dir holds but SQLite cannot open) is moved aside
as `poll.sqlite.corrupt-<UTC>`, with its -wal/-shm/-journal files, and a fresh store is
started: one `state_reset` record, and this poll reports every job as on a first poll.
The newest `KEEP_ASIDE` moved-aside stores are kept.

A state dir that takes no write (full disk, read-only mount, permission, quota, failing
disk), found when the store is opened or when a write fails (the transaction rolls back:
the file stays at its last commit), sends the rest of the poll to a copy of the store in
memory: jobs are still compared with the last saved poll when the file can be read, else
as on a first poll, and nothing is saved: one `state_unwritable` record. Another process
holding the store's SQLite lock past the busy timeout gives the same, reason `locked`.
Any other exception is a bug and propagates. These records carry `stage: "state"`: the
jobs the poll reports with them are right (a caller like `guard admit --poll` uses them).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from labctl.faults import fault_record, probe
from labctl.poll.store import Store, store_path
from labctl.poll.storefile import unusable_cause
from labctl.records import error_record

T = TypeVar("T")
KEEP_ASIDE = 3
SIDE_FILES = ("-wal", "-shm", "-journal")


_ASIDE = re.compile(r"\.corrupt-(\d{8}T\d{6}Z)(?:-(\d+))?$")  # side files do not match


def _asides(path: Path) -> list[tuple[tuple[str, int], Path]]:
    """The moved-aside stores beside `path`, oldest first ((UTC stamp, number), path)."""
    found = []
    for p in path.parent.glob(f"{path.name}.corrupt-*"):
        m = _ASIDE.search(p.name)
        if m:
            found.append(((m[1], int(m[2] or 1)), p))
    return sorted(found)


def move_aside(path: Path, now: float) -> Path:
    """Rename the store (side files first: a stale -wal must never meet a fresh store) to
    `<name>.corrupt-<UTC>[-N]`; keep only the newest KEEP_ASIDE such copies."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now))
    n = 1 + max((k[1] for k, _ in _asides(path) if k[0] == stamp), default=0)
    aside = path.with_name(f"{path.name}.corrupt-{stamp}" + (f"-{n}" if n > 1 else ""))
    while any(os.path.lexists(f"{aside}{s}") for s in ("", *SIDE_FILES)):
        n += 1
        aside = path.with_name(f"{path.name}.corrupt-{stamp}-{n}")
    for suffix in SIDE_FILES:
        with contextlib.suppress(FileNotFoundError):
            os.rename(f"{path}{suffix}", f"{aside}{suffix}")
    os.rename(path, aside)
    for _, old in _asides(path)[:-KEEP_ASIDE]:
        for suffix in ("", *SIDE_FILES):
            with contextlib.suppress(OSError):
                os.unlink(f"{old}{suffix}")
    return aside


class PollState:
    def __init__(self, state_dir: Path, *, now: float, timeout_s: float) -> None:
        self.state_dir = state_dir
        self.path = store_path(state_dir)
        self.now = now
        self.timeout_s = timeout_s
        self.store: Store | None = None  # None only while opening
        self.saving = True
        self._reset = False
        self._pending: list[dict[str, Any]] = []

    # -- what poll calls -----------------------------------------------------------------

    def read(self, fn: Callable[[Store], T]) -> T:
        try:
            return fn(self._current())
        except Exception as exc:
            self._handle(exc)
        return fn(self._current())

    def write(self, fn: Callable[[Store], T]) -> T:
        """`fn` in one transaction; after a fault, once more on the store it led to."""
        for attempt in (1, 2):
            store = self._current()
            try:
                with store.transaction():
                    return fn(store)
            except Exception as exc:
                if attempt == 2:
                    raise
                self._handle(exc)
        raise AssertionError("unreachable")

    def faults(self) -> Iterator[dict[str, Any]]:
        while self._pending:
            yield self._pending.pop(0)

    def close(self) -> None:
        if self.store is not None:
            with contextlib.suppress(sqlite3.Error):
                self.store.close()
            self.store = None

    # -- faults --------------------------------------------------------------------------

    def _current(self) -> Store:
        assert self.store is not None
        return self.store

    def _handle(self, exc: Exception) -> None:
        """Decide what `exc` means for the store, and move to the store it leads to."""
        if not self.saving:
            raise exc  # the copy in memory failed: a bug
        cause = unusable_cause(exc)
        code = getattr(exc, "sqlite_errorname", None) or ""
        if cause is None and code.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
            self._in_memory(self._locked_record(str(exc)))
            return
        sqlite_fault = type(exc) in (sqlite3.OperationalError, sqlite3.DatabaseError)
        if cause is None and not (sqlite_fault or isinstance(exc, OSError)):
            raise exc
        found = None if cause is not None else probe(self.state_dir)
        if found is None and code.startswith("SQLITE_FULL"):
            found = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        if found is not None:
            self._in_memory(self._unwritable_record(found))
        elif not self._reset:  # the file itself is bad (the directory takes writes)
            self._reset_store(cause or f"{type(exc).__name__}: {exc}")
        else:  # a fresh store fails too, in a directory that takes writes
            fault = OSError(errno.EIO, f"a fresh store fails too: {cause or exc}")
            self._in_memory(self._unwritable_record(fault))

    def _reset_store(self, cause: str) -> None:
        self._reset = True
        self.close()
        try:
            aside = move_aside(self.path, self.now)
        except OSError as exc:
            what = f"{self.path} cannot be used ({cause}) and cannot be moved aside"
            self._in_memory(self._unwritable_record(probe(self.state_dir) or exc, what))
            return
        self._pending.append(
            error_record(
                "state_reset",
                f"poll's state store {self.path} could not be used ({cause}): moved it "
                f"(with any -wal/-shm/-journal file) to {aside} and started a fresh store; "
                "this poll reports every job as on a first poll. Nothing to do: the next "
                f"poll is clean (the {KEEP_ASIDE} newest moved-aside stores are kept).",
                path=str(self.path),
                moved_to=str(aside),
                cause=cause,
                stage="state",
            )
        )
        self._open()

    def _open(self) -> None:
        try:
            store = Store(self.path, timeout_s=self.timeout_s)
        except Exception as exc:
            self._handle(exc)
            return
        try:
            store.check()
        except Exception as exc:
            self.store = store
            self._handle(exc)
            return
        self.store = store

    def _in_memory(self, record: dict[str, Any]) -> None:
        """The rest of this poll runs on a copy in memory of what the store last saved."""
        image = None
        if self.store is not None:
            with contextlib.suppress(sqlite3.Error):
                image = self.store.image()
        if image is None:
            with contextlib.suppress(OSError):
                image = self.path.read_bytes()
        self.close()
        self.saving = False
        self.store = _copy(image)
        copied = _has_polls(self.store)  # an empty copy holds no cluster's last poll
        record["compared_with"] = "last_saved_poll" if copied else "nothing"
        how = "compared with the last saved poll" if copied else "as on a first poll"
        record["message"] += f". This poll still reports every job, {how}, and saves nothing."
        self._pending.append(record)

    def _unwritable_record(self, exc: OSError, what: str | None = None) -> dict[str, Any]:
        what = what or f"poll's state in {self.state_dir} cannot be saved"
        return fault_record(
            "state_unwritable", self.state_dir, exc, what, saved=False, stage="state"
        )

    def _locked_record(self, message: str) -> dict[str, Any]:
        from labctl.fsops import lock_holders

        pids = [p for p in lock_holders(self.path) if p != os.getpid()]
        who = f"pid {', '.join(map(str, pids))}" if pids else "another process"
        return error_record(
            "locked",
            f"{self.path} is locked by {who} past the {self.timeout_s:g}s busy timeout ({message})",
            path=str(self.path),
            holders=pids,
            saved=False,
            stage="state",
        )


def _copy(image: bytes | None) -> Store:
    """A store in memory holding `image` when it is a usable store, else an empty one."""
    if image:
        try:
            memory = Store.in_memory(image)
        except Exception:  # not a usable store: an empty one
            return Store.in_memory()
        try:
            memory.check()
            return memory
        except Exception:
            memory.close()
    return Store.in_memory()


def _has_polls(store: Store) -> bool:
    return bool(store.db.execute("SELECT 1 FROM clusters LIMIT 1").fetchone())


def open_state(
    state_dir: Path, *, now: float, timeout_s: float, lock_fault: OSError | None = None
) -> PollState:
    """The store, checked; or what a fault leaves (see the module's docstring).
    `lock_fault`: the state lock could not even be created (the dir takes no write)."""
    state = PollState(state_dir, now=now, timeout_s=timeout_s)
    if lock_fault is not None:
        state._in_memory(state._unwritable_record(probe(state_dir) or lock_fault))
    else:
        state._open()
    return state
