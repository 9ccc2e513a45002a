"""Delete a file or tree inside a root, and nothing else, whatever the symlinks say.

The root is opened once; every step below it is `openat(O_NOFOLLOW | O_DIRECTORY)`
relative to its parent's descriptor, so a directory swapped for a symlink while we work
makes the open fail instead of leading us elsewhere. Symlinks are unlinked (the link
goes, never its target). A directory on another file system (a mount point) is never
entered: the removal stops there and reports it. Bytes freed count an inode's blocks
when its last link goes, so a hard-linked file that lives on elsewhere frees nothing.
With `owner`, an entry another uid owns is never unlinked (nor a directory of another
uid's entered): it is reported and stays, whatever changed since the last check.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field

from labctl.disk.usage import DIR_FLAGS


class OutsideRoot(Exception):
    """The target is not strictly inside the root (after resolving every symlink)."""


@dataclass
class Removal:
    bytes_freed: int = 0
    removed: int = 0  # entries unlinked or removed
    errors: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)
    links_left: dict[int, int] = field(default_factory=dict)  # ino -> links still elsewhere

    def error(self, path: str, reason: str) -> None:
        if len(self.errors) < 20:
            self.errors.append((path, reason))


def relative_inside(root_real: str, path: str) -> list[str]:
    """The components of `path` below `root_real`, resolving every symlink on the way to
    its parent (the last component itself is not followed). Raises OutsideRoot."""
    parent = os.path.realpath(os.path.dirname(os.path.abspath(path)))
    name = os.path.basename(os.path.abspath(path))
    if name in ("", ".", ".."):
        raise OutsideRoot(path)
    if parent != root_real and not parent.startswith(root_real.rstrip("/") + "/"):
        raise OutsideRoot(path)
    rel = os.path.relpath(parent, root_real)
    parts = [] if rel == "." else rel.split("/")
    return [*parts, name]


def _unlink(fd: int, name: str, st: os.stat_result, out: Removal, where: str) -> None:
    try:
        os.unlink(name, dir_fd=fd)
    except FileNotFoundError:
        return
    except OSError as exc:
        out.error(where, exc.strerror or "unlink_failed")
        return
    out.removed += 1
    if st.st_nlink <= 1:
        out.bytes_freed += st.st_blocks * 512
        return
    left = out.links_left.get(st.st_ino, st.st_nlink) - 1
    out.links_left[st.st_ino] = left
    if left == 0:
        out.bytes_freed += st.st_blocks * 512


def _foreign(st: os.stat_result, owner: int | None, out: Removal, where: str) -> bool:
    if owner is None or st.st_uid == owner:
        return False
    out.error(where, f"owned by uid {st.st_uid}, not {owner}")
    return True


def _remove_tree(
    parent_fd: int, name: str, dev: int, out: Removal, where: str, owner: int | None
) -> None:
    """Depth-first, iterative: each frame holds one directory descriptor."""
    stack: list[tuple[int, str, int, os.stat_result, str, list[os.DirEntry[str]]]] = []

    def push(pfd: int, nm: str, path: str) -> None:
        fd = os.open(nm, DIR_FLAGS, dir_fd=pfd)
        st = os.fstat(fd)
        if st.st_dev != dev:
            os.close(fd)
            out.error(path, "mount_point")
            return
        with os.scandir(fd) as it:
            entries = list(it)
        stack.append((pfd, nm, fd, st, path, entries))

    try:
        push(parent_fd, name, where)
    except OSError as exc:
        out.error(where, exc.strerror or "open_failed")
        return
    while stack:
        pfd, nm, fd, st, path, entries = stack[-1]
        if entries:
            entry = entries.pop()
            child = f"{path}/{entry.name}"
            try:
                est = entry.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue
            except OSError as exc:
                out.error(child, exc.strerror or "stat_failed")
                continue
            if _foreign(est, owner, out, child):
                continue
            if stat.S_ISDIR(est.st_mode):
                try:
                    push(fd, entry.name, child)
                except OSError as exc:
                    out.error(child, exc.strerror or "open_failed")
            else:
                _unlink(fd, entry.name, est, out, child)
            continue
        stack.pop()
        os.close(fd)
        try:
            os.rmdir(nm, dir_fd=pfd)
        except FileNotFoundError:
            continue
        except OSError as exc:
            out.error(path, exc.strerror or "rmdir_failed")
            continue
        out.removed += 1
        out.bytes_freed += st.st_blocks * 512


def remove_inside(
    root_real: str, path: str, *, device: int | None = None, owner: int | None = None
) -> Removal:
    """Delete `path` (file, symlink or tree), which must lie strictly inside `root_real`
    (a real path). Never leaves the root, follows no symlink, enters no other file system
    (`device`: the file system the target must be on; default the root's), deletes
    nothing another uid than `owner` owns (None: no owner check)."""
    parts = relative_inside(root_real, path)
    out = Removal()
    fd = os.open(root_real, DIR_FLAGS)
    try:
        for part in parts[:-1]:
            nfd = os.open(part, DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = nfd
        name = parts[-1]
        try:
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            return out
        dev = device if device is not None else os.fstat(fd).st_dev
        if st.st_dev != dev:
            out.error(path, "mount_point")
        elif _foreign(st, owner, out, path):
            pass
        elif stat.S_ISDIR(st.st_mode):
            _remove_tree(fd, name, dev, out, path, owner)
        else:
            _unlink(fd, name, st, out, path)
    finally:
        os.close(fd)
    return out
