"""Local processes seen through /proc: who is in a process group, is a pid still the same
process, and ending a group labctl created (TERM, then KILL after a grace)."""

from __future__ import annotations

import os
import signal
import time


def _stat(pid: int | str) -> list[str] | None:
    """Fields of /proc/PID/stat after the command name: [state, ppid, pgrp, ...]."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            raw = fh.read().decode("ascii", "replace")
    except OSError:
        return None
    return raw[raw.rfind(")") + 2 :].split()


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes whose process group is `pgid`."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        fields = _stat(name)
        if fields and len(fields) > 2 and fields[2] == str(pgid) and fields[0] not in "ZX":
            out.append(int(name))
    return sorted(out)


def start_ticks(pid: int) -> int | None:
    """When the process started (clock ticks since boot): with the pid, its identity (a
    reused pid has another start time)."""
    fields = _stat(pid)
    try:
        return int(fields[19]) if fields else None
    except (IndexError, ValueError):
        return None


def is_running(pid: int, ticks: int | None) -> bool:
    """Is `pid` still the process that started at `ticks` (and not a zombie)?"""
    fields = _stat(pid)
    if not fields or fields[0] in "ZX":
        return False
    return ticks is None or start_ticks(pid) == ticks


def terminate_group(pgid: int, grace: float) -> bool:
    """SIGTERM to the group, SIGKILL to what is left after `grace`; True when it is empty."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        deadline = time.monotonic() + wait
        while group_members(pgid):
            if time.monotonic() >= deadline:
                break
            time.sleep(0.05)
        else:
            return True
    return not group_members(pgid)
