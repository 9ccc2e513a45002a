"""What processes hold open: files (`/proc/<pid>/fd/*`) and working directories
(`/proc/<pid>/cwd`). A tree with either inside it is in use and is not deleted.

Unprivileged, we can only read our own processes' descriptors: `complete` is then false
and a record says so, since "nobody has it open" is then only "none of ours has".
"""

from __future__ import annotations

import bisect
import os
from dataclasses import dataclass, field


@dataclass
class OpenFiles:
    paths: list[str] = field(default_factory=list)  # sorted real paths
    owners: dict[str, int] = field(default_factory=dict)  # path -> a pid holding it
    complete: bool = True  # every process's descriptors could be read

    def under(self, path: str) -> list[str]:
        """Open paths equal to `path` or inside it (`path` is a real path)."""
        path = path.rstrip("/") or "/"
        prefix = path + "/" if path != "/" else "/"
        out = []
        i = bisect.bisect_left(self.paths, path)
        while i < len(self.paths):
            p = self.paths[i]
            if p == path or p.startswith(prefix):
                out.append(p)
            elif p > prefix:
                break
            i += 1
        return out


def _links(pid_dir: str) -> list[str]:
    out = []
    try:
        out.append(os.readlink(os.path.join(pid_dir, "cwd")))
    except OSError:
        pass
    fd_dir = os.path.join(pid_dir, "fd")
    for fd in os.listdir(fd_dir):
        try:
            out.append(os.readlink(os.path.join(fd_dir, fd)))
        except OSError:
            continue
    return out


def open_files(proc: str = "/proc", *, ignore_pids: frozenset[int] = frozenset()) -> OpenFiles:
    """Scan every process (but `ignore_pids`) for open files and working directories."""
    result = OpenFiles()
    owners: dict[str, int] = {}
    try:
        pids = [name for name in os.listdir(proc) if name.isdigit()]
    except OSError:
        result.complete = False
        return result
    for name in pids:
        pid = int(name)
        if pid in ignore_pids:
            continue
        try:
            targets = _links(os.path.join(proc, name))
        except FileNotFoundError:
            continue  # the process ended
        except OSError:
            result.complete = False
            continue
        for target in targets:
            if target.startswith("/") and not target.endswith(" (deleted)"):
                owners.setdefault(target, pid)
    result.paths = sorted(owners)
    result.owners = owners
    return result
