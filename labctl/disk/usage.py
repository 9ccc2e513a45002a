"""Disk usage of a tree, counted the way `du -sxB1` counts it.

- bytes are allocated blocks (`st_blocks * 512`), not apparent sizes;
- a file with several hard links is counted once (by inode), wherever its links are;
- directories count their own blocks, the top one included;
- symlinks are never followed (a link counts its own blocks);
- the walk never crosses into another file system (mount points are listed, not entered).

It counts the entries owned by another user than `owner` (default: this process's
effective uid), by uid: prune-disk deletes nothing of another user's.

It also says what deleting the tree would give back: `exclusive` counts an inode only
when every one of its hard links lies inside the tree (a uv cache hard-linked into
virtual environments is large by `du` and frees little). A file deleted while we scan is
counted as `vanished`; a directory we may not read is an error and makes the result
`partial`; neither stops the walk.

The walk is iterative (no recursion limit), opens each directory once with O_NOFOLLOW and
stats entries relative to that descriptor (one path lookup per directory, not per file).
A large tree is split between this process and forked children, each walking its share
of the pending directories; hard links are merged by inode at the end, so the totals are
exact whatever the split.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FMT = stat.S_IFMT(0o177777)
_DIR = stat.S_IFDIR
MAX_LISTED = 20  # paths kept per kind of problem; the counts are complete
SPLIT_AFTER = 4000  # entries seen before a walk is worth splitting across processes
PROGRESS_EVERY = 64  # directories between progress callbacks

Progress = Callable[[int, int], None]  # (entries seen, bytes so far)


@dataclass
class Usage:
    """What a walk found under `path`."""

    path: str
    bytes: int = 0  # du -sxB1
    apparent: int = 0  # du --apparent-size -sx (st_size)
    exclusive: int = 0  # bytes whose every hard link is inside the tree
    files: int = 0  # non-directories (regular files, symlinks, …)
    dirs: int = 0
    newest_mtime: float | None = None
    newest_atime: float | None = None  # of files: reading a folder sets its own atime
    errors: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)
    error_count: int = 0
    vanished: int = 0  # entries deleted while we walked
    mounts: list[str] = field(default_factory=list)  # other file systems not entered
    mount_count: int = 0
    device: int = 0
    owner: int = -1  # the uid entries were compared with
    other_owners: dict[int, int] = field(default_factory=dict)  # uid -> entries it owns
    other_paths: list[str] = field(default_factory=list)  # some of those entries

    @property
    def other_owned(self) -> int:
        """Entries (files, directories, links) owned by another user than `owner`."""
        return sum(self.other_owners.values())

    @property
    def partial(self) -> bool:
        """Some of the tree could not be read: the sizes are a lower bound."""
        return self.error_count > 0


class Walk:
    """The running totals of one process's share of a walk."""

    __slots__ = (
        "atime",
        "blocks",
        "dev",
        "dirs",
        "errors",
        "files",
        "links",
        "mounts",
        "mtime",
        "n_errors",
        "n_mounts",
        "other_paths",
        "others",
        "size",
        "uid",
        "vanished",
    )

    def __init__(self, dev: int, uid: int) -> None:
        self.dev = dev
        self.uid = uid
        self.others: dict[int, int] = {}  # uid -> entries
        self.other_paths: list[str] = []
        self.blocks = self.size = self.files = self.dirs = 0
        self.mtime = self.atime = 0.0
        self.links: dict[int, tuple[int, int, int, int]] = {}  # ino: blocks, size, nlink, seen
        self.errors: list[tuple[str, str]] = []
        self.n_errors = self.vanished = self.n_mounts = 0
        self.mounts: list[str] = []

    def error(self, path: str, exc: OSError) -> None:
        self.n_errors += 1
        if len(self.errors) < MAX_LISTED:
            reason = "permission_denied" if isinstance(exc, PermissionError) else "unreadable"
            if exc.errno == 40:  # ELOOP: a directory became a symlink under us
                reason = "changed_during_scan"
            self.errors.append((path, reason))

    def mount(self, path: str) -> None:
        self.n_mounts += 1
        if len(self.mounts) < MAX_LISTED:
            self.mounts.append(path)

    def other(self, path: str, uid: int) -> None:
        self.others[uid] = self.others.get(uid, 0) + 1
        if len(self.other_paths) < MAX_LISTED:
            self.other_paths.append(path)

    def add_links(self, links: dict[int, tuple[int, int, int, int]]) -> None:
        mine = self.links
        for ino, (blocks, size, nlink, seen) in links.items():
            old = mine.get(ino)
            mine[ino] = (blocks, size, nlink, seen + (old[3] if old else 0))

    def as_tuple(self) -> tuple[object, ...]:
        return (self.blocks, self.size, self.files, self.dirs, self.mtime, self.atime,
                self.links, self.errors, self.n_errors, self.vanished, self.mounts,
                self.n_mounts, self.others, self.other_paths)  # fmt: skip

    def merge(self, data: tuple[object, ...]) -> None:
        (blocks, size, files, dirs, mtime, atime, links, errors, n_errors, vanished, mounts,
         n_mounts, others, other_paths) = data  # fmt: skip
        self.blocks += blocks  # type: ignore[operator]
        self.size += size  # type: ignore[operator]
        self.files += files  # type: ignore[operator]
        self.dirs += dirs  # type: ignore[operator]
        self.mtime = max(self.mtime, mtime)  # type: ignore[call-overload]
        self.atime = max(self.atime, atime)  # type: ignore[call-overload]
        self.add_links(links)  # type: ignore[arg-type]
        self.errors = (self.errors + errors)[:MAX_LISTED]  # type: ignore[operator]
        self.n_errors += n_errors  # type: ignore[operator]
        self.vanished += vanished  # type: ignore[operator]
        self.mounts = (self.mounts + mounts)[:MAX_LISTED]  # type: ignore[operator]
        self.n_mounts += n_mounts  # type: ignore[operator]
        for uid, n in others.items():  # type: ignore[attr-defined]
            self.others[uid] = self.others.get(uid, 0) + n
        self.other_paths = (self.other_paths + other_paths)[:MAX_LISTED]  # type: ignore[operator]


def _list_dir(w: Walk, path: str, fd: int, stack: list[str]) -> int:
    """Count the entries of one open directory; push its subdirectories. Returns how
    many entries it saw. The hot loop: locals only, no call per entry but the stat."""
    dev, links, uid = w.dev, w.links, w.uid
    blocks = size = files = dirs = seen = 0
    mtime, atime = w.mtime, w.atime
    with os.scandir(fd) as it:
        for entry in it:
            try:
                s = entry.stat(follow_symlinks=False)
            except FileNotFoundError:
                w.vanished += 1
                continue
            except OSError as exc:
                w.error(f"{path}/{entry.name}", exc)
                continue
            seen += 1
            if s.st_dev != dev:
                w.mount(f"{path}/{entry.name}")
                continue
            if s.st_uid != uid:
                w.other(f"{path}/{entry.name}", s.st_uid)
            if s.st_mtime > mtime:  # noqa: PLR1730 (max() is slower here)
                mtime = s.st_mtime
            if s.st_mode & _FMT == _DIR:
                stack.append(f"{path}/{entry.name}")
                dirs += 1
                blocks += s.st_blocks
                size += s.st_size
                continue
            files += 1
            if s.st_atime > atime:  # noqa: PLR1730 (files only: listing sets a dir's atime)
                atime = s.st_atime
            if s.st_nlink > 1:
                old = links.get(s.st_ino)
                links[s.st_ino] = (s.st_blocks, s.st_size, s.st_nlink, old[3] + 1 if old else 1)
                continue
            blocks += s.st_blocks
            size += s.st_size
    w.blocks += blocks
    w.size += size
    w.files += files
    w.dirs += dirs
    w.mtime, w.atime = mtime, atime
    return seen


def scan(w: Walk, stack: list[str], budget: int, tick: Callable[[], None] | None) -> None:
    """Walk the directories on `stack` (depth first) until it is empty or `budget`
    entries were seen; unwalked directories stay on the stack."""
    seen = done = 0
    while stack and seen < budget:
        path = stack.pop()
        try:
            fd = os.open(path, DIR_FLAGS)
        except FileNotFoundError:
            w.vanished += 1
            continue
        except OSError as exc:
            w.error(path, exc)
            continue
        try:
            seen += _list_dir(w, path, fd, stack)
        except OSError as exc:
            w.error(path, exc)
        finally:
            os.close(fd)
        done += 1
        if tick is not None and done % PROGRESS_EVERY == 0:
            tick()


def disk_usage(
    path: str,
    *,
    workers: int = 1,
    progress: Progress | None = None,
    split_after: int = SPLIT_AFTER,
    owner: int | None = None,
) -> Usage:
    """Measure the tree at `path` (see the module docstring). `workers` > 1 shares a tree
    of more than `split_after` entries with forked children; `owner`: the uid whose
    entries are ours (default the effective uid). Raises OSError when `path` itself cannot
    be looked up."""
    top = os.lstat(path)
    w = Walk(top.st_dev, os.geteuid() if owner is None else owner)
    w.mtime = top.st_mtime
    if top.st_uid != w.uid:
        w.other(path, top.st_uid)
    if stat.S_ISDIR(top.st_mode):
        w.dirs = 1
        w.blocks, w.size = top.st_blocks, top.st_size
        stack = [path.rstrip("/") or "/"]

        def tick() -> None:
            if progress is not None:
                progress(w.files + w.dirs, w.blocks * 512)

        scan(w, stack, split_after if workers > 1 else 1 << 62, tick)
        if stack and len(stack) >= workers > 1:
            from labctl.disk.usage_fork import split

            split(w, stack, workers, progress)
        elif stack:
            scan(w, stack, 1 << 62, tick)
    else:
        w.files = 1
        w.atime = top.st_atime
        if top.st_nlink > 1:
            w.links[top.st_ino] = (top.st_blocks, top.st_size, top.st_nlink, 1)
        else:
            w.blocks, w.size = top.st_blocks, top.st_size
    return _result(path, w)


def _result(path: str, w: Walk) -> Usage:
    linked_blocks = sum(v[0] for v in w.links.values())
    linked_size = sum(v[1] for v in w.links.values())
    whole = sum(v[0] for v in w.links.values() if v[3] >= v[2])
    return Usage(
        path=path,
        bytes=(w.blocks + linked_blocks) * 512,
        apparent=w.size + linked_size,
        exclusive=(w.blocks + whole) * 512,
        files=w.files,
        dirs=w.dirs,
        newest_mtime=w.mtime or None,
        newest_atime=w.atime or None,
        errors=list(w.errors),
        error_count=w.n_errors,
        vanished=w.vanished,
        mounts=list(w.mounts),
        mount_count=w.n_mounts,
        device=w.dev,
        owner=w.uid,
        other_owners=dict(w.others),
        other_paths=list(w.other_paths),
    )


def usage_or_none(path: str, **kw: object) -> Usage | None:
    """`disk_usage`, or None when the path vanished before we could look at it."""
    with contextlib.suppress(FileNotFoundError):
        return disk_usage(path, **kw)  # type: ignore[arg-type]
    return None
