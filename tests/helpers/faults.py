"""Real file-system faults for tests: a tmpfs (helpers.disk.tmpfs) filled to its last
byte or remounted read-only; a job table for `command` clusters. Needs root (mount)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

STATES = {"ACTIVE": "running", "QUEUED": "pending", "SUCCEEDED": "completed", "FAILED": "failed"}


def remount(path: Path, mode: str) -> None:
    """`mode` "ro" or "rw": the tmpfs at `path` turns read-only or writable again."""
    subprocess.run(["mount", "-o", f"remount,{mode}", str(path)], capture_output=True, check=True)


def fill(directory: Path, name: str = "filler") -> Path:
    """Write a file in `directory` until the file system refuses one more byte."""
    path = directory / name
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        for chunk in (b"\0" * 4096, b"\0"):
            try:
                while True:
                    os.write(fd, chunk)
            except OSError as exc:
                assert exc.errno == 28, exc  # ENOSPC
    finally:
        os.close(fd)
    st = os.statvfs(directory)
    assert st.f_bavail == 0, "the disk is not full"
    return path


def row(job_id: str, status: str, name: str = "train", **extra: Any) -> dict[str, Any]:
    return {"id": job_id, "name": name, "status": status, "owner": "carol", **extra}


def table_cluster(name: str, rows_file: Path, before: str = "") -> dict[str, Any]:
    """A `command` cluster printing the rows in `rows_file` (a JSON array); `before`: a
    shell command run first (a test fills the disk there, mid-poll)."""
    command = f"cat {rows_file}"
    return {
        "name": name,
        "scheduler": "command",
        "command": f"{before}; {command}" if before else command,
        "fields": {"job_id": "id", "name": "name", "state": "status", "user": "owner"},
        "states": STATES,
    }


def write_rows(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps(rows))
    return path
