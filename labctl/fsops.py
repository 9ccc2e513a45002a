"""File-system helpers every command shares: atomic replace, exclusive create, state lock.

A crash at any point leaves the old or the new content of a file, never a mix: we write a
temporary file beside the target, fsync it, give it the target's mode and ownership, rename
it over the target and fsync the directory. A symlink is written through to its target.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from labctl.errors import LockedError


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_temp(directory: Path, name: str, data: bytes) -> Path:
    """`data` in a new hidden temporary file beside `name`, flushed to disk."""
    try:
        fd, tmp_name = tempfile.mkstemp(dir=directory, prefix=f".{name}.", suffix=".tmp")
    except OSError as exc:
        exc.filename = exc.filename or str(directory / name)
        raise
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        if isinstance(exc, OSError) and not exc.filename:  # a full disk: name the file
            exc.filename = str(directory / name)
        raise
    return tmp


def atomic_write_bytes(
    path: str | os.PathLike[str], data: bytes, *, mode: int | None = None
) -> Path:
    """Replace `path` with `data` atomically; returns the path actually written.

    Keeps the existing file's permission bits and (when we may) its owner and group; a new
    file gets `mode` (default 0o644 minus the umask). Symlinks are followed, so the link
    stays a link and its target gets the new content.
    """
    target = Path(os.path.realpath(path))
    directory = target.parent
    try:
        st: os.stat_result | None = target.stat()
    except FileNotFoundError:
        st = None
    tmp = _write_temp(directory, target.name, data)
    try:
        if st is not None:
            os.chmod(tmp, stat.S_IMODE(st.st_mode))
            with contextlib.suppress(PermissionError):
                os.chown(tmp, st.st_uid, st.st_gid)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, (mode if mode is not None else 0o666) & ~umask)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise
    _fsync_dir(directory)
    return target


def atomic_write_text(path: str | os.PathLike[str], text: str, *, mode: int | None = None) -> Path:
    """`atomic_write_bytes` for UTF-8 text labctl wrote itself. Callers redact first."""
    return atomic_write_bytes(path, text.encode("utf-8"), mode=mode)


def create_exclusive(path: Path, data: bytes, *, mode: int = 0o644) -> Path:
    """Create `path` with `data`; never overwrite. Raises FileExistsError if it exists.

    The content is written to a temporary file first and linked into place with
    `os.link`, which fails if the name exists: readers never see a half-written file.
    """
    tmp = _write_temp(path.parent, path.name, data)
    try:
        os.chmod(tmp, mode)
        os.link(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    _fsync_dir(path.parent)
    return path


@contextlib.contextmanager
def state_lock(state_dir: Path, name: str = "labctl", *, wait_s: float = 10.0) -> Iterator[Path]:
    """Hold an exclusive `flock` on `<state_dir>/<name>.lock`.

    Waits up to `wait_s` seconds for a concurrent run (cron overlap) to finish, then
    raises `LockedError` (exit 3, reason `locked`) naming the holder's pid. The lock dies
    with the process, so a crashed run never leaves a stale lock behind: a lock file that
    names a dead pid is simply taken. A read-only or full state dir still serialises runs
    (`_open_lock`), and a full disk that refuses the holder's pid does not refuse the lock.
    Raises OSError only when not even a directory can be opened to lock.
    """
    with contextlib.suppress(OSError):  # a full or read-only disk: _open_lock copes
        state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    lock_path = state_dir / f"{name}.lock"
    fd = _open_lock(lock_path)
    deadline = time.monotonic() + wait_s
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
                if time.monotonic() >= deadline:
                    raise LockedError(
                        f"another labctl run holds {lock_path} ({_holder(lock_path)}); "
                        f"waited {wait_s:g}s",
                        path=str(lock_path),
                    ) from None
                time.sleep(0.1)
        with contextlib.suppress(OSError):  # the pid is for people; a full disk refuses it
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
        yield lock_path
    finally:
        os.close(fd)


# ENOTDIR: a file stands where the state dir should be (its folder is locked instead).
_NO_NEW_FILE = (errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOSPC, errno.EDQUOT, errno.ENOENT,
                errno.ENOTDIR)  # fmt: skip


def _open_lock(lock_path: Path) -> int:
    """The lock file, opened; flock needs no write access, so an existing one is locked
    read-only on a read-only disk, and where none can be made (a full disk, a state dir
    that cannot be created) the nearest existing directory is locked instead: a command
    that frees space (prune-disk) must never need space to take its lock."""
    from labctl.volumes import existing_ancestor

    try:
        return os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        if exc.errno not in _NO_NEW_FILE:
            raise
    if lock_path.is_file():
        return os.open(lock_path, os.O_RDONLY)
    where = existing_ancestor(str(lock_path.parent))
    while not os.path.isdir(where):  # a file where a directory should be
        where = os.path.dirname(where)
    return os.open(where, os.O_RDONLY | os.O_DIRECTORY)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's live process
    return True


def _holder(lock_path: Path) -> str:
    """Who holds a lock file, as far as its content (the pid that took it) tells."""
    try:
        text = lock_path.read_text("utf-8").strip()
        since = time.time() - lock_path.stat().st_mtime
    except (OSError, UnicodeDecodeError):
        return "holder unknown"
    if not text.isdigit():
        return "holder unknown"
    pid = int(text)
    if pid_alive(pid):
        return f"pid {pid}, running, took it {since:.0f}s ago"
    return f"taken by pid {pid}, which is gone: a process it started still has the lock open"


def lock_holders(path: Path) -> list[int]:
    """The pids holding a POSIX or flock lock on `path` (from /proc/locks; [] elsewhere)."""
    try:
        st = path.stat()
        lines = Path("/proc/locks").read_text().splitlines()
    except OSError:
        return []
    dev = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    pids = []
    for line in lines:
        fields = line.replace("->", "").split()
        if len(fields) >= 6 and fields[5] == dev and fields[4].isdigit():
            pids.append(int(fields[4]))
    return sorted(set(pids))
