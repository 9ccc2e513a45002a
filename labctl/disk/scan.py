"""What every prune-disk collector is handed: the time, who holds what open, the paths
never to delete, the Hub, and how to size a tree (with progress)."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from labctl.disk.candidate import Guarded
from labctl.disk.inuse import OpenFiles, open_files
from labctl.disk.usage import Usage, usage_or_none

ProgressFn = Callable[[str, int, int], None]  # (what, entries seen, bytes so far)


@dataclass
class ScanEnv:
    now: float
    protected: list[Guarded]  # never deleted (managed roots: by their own kind only)
    hub: Any = None  # labctl.backends.hf_hub.HubTrees, or None when no Hub is configured
    verify: str = "size"  # "size" for a dry run; "hash" before deleting
    workers: int = 1
    progress: ProgressFn | None = None
    proc: str = "/proc"
    self_pid: int = 0
    open_files: OpenFiles = field(default_factory=OpenFiles)
    hf_cache_api: Any = None  # module with scan_cache / delete_cached_repo (labctl.backends.hf_hub)
    uid: int = field(default_factory=os.geteuid)  # labctl's user: whose files it may delete

    def refresh_open_files(self) -> OpenFiles:
        self.open_files = open_files(self.proc, ignore_pids=frozenset({self.self_pid}))
        return self.open_files

    def measure(self, path: str, label: str | None = None) -> Usage | None:
        """Disk usage of `path` (None if it vanished), reporting progress as it goes."""
        progress = None
        if self.progress is not None:
            report = self.progress
            what = label or path

            def progress(entries: int, nbytes: int) -> None:
                report(what, entries, nbytes)

        return usage_or_none(path, workers=self.workers, progress=progress, owner=self.uid)
