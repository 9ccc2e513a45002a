"""What the file system says about a path: the free space of its volume, where that
volume is mounted, and a configured path expanded against $HOME (from the given
environment, not os.environ). Shared by prune-disk and health."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

GB = 1_000_000_000


@dataclass(frozen=True)
class Volume:
    path: str  # what was asked about
    mount: str  # the mount point holding it
    device: int
    total: int  # bytes
    free: int  # bytes an unprivileged user may still write (f_bavail), like `df`'s Avail

    @property
    def used(self) -> int:
        return self.total - self.free


def mount_point(path: str) -> str:
    """The mount point of the file system holding `path` (walk up until st_dev changes)."""
    real = os.path.realpath(path)
    dev = os.stat(real).st_dev
    while real != "/":
        parent = os.path.dirname(real)
        if os.stat(parent).st_dev != dev:
            return real
        real = parent
    return real


def volume(path: str) -> Volume:
    """Raises OSError when `path` does not exist."""
    vfs = os.statvfs(path)
    return Volume(
        path=path,
        mount=mount_point(path),
        device=os.stat(path).st_dev,
        total=vfs.f_blocks * vfs.f_frsize,
        free=vfs.f_bavail * vfs.f_frsize,
    )


def free_bytes(path: str) -> int:
    vfs = os.statvfs(path)
    return vfs.f_bavail * vfs.f_frsize


def existing_ancestor(path: str) -> str:
    """`path`, or its nearest ancestor that exists (a volume is known before its dirs)."""
    while not os.path.exists(path) and path not in ("/", ""):
        path = os.path.dirname(path)
    return path or "/"


def expand(path: str, environ: Mapping[str, str]) -> str:
    """`~` and relative paths are under $HOME (as `environ` says); the result is normalised."""
    home = environ.get("HOME") or "/"
    if path == "~" or path.startswith("~/"):
        path = home + path[1:]
    if not os.path.isabs(path):
        path = os.path.join(home, path)
    return os.path.normpath(path)
