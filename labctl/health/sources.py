"""What the kernel says about memory, pressure, load and processes (read from a /proc
tree given as an argument, so tests can point at a copy)."""

from __future__ import annotations

import os
import pwd
from dataclasses import dataclass

KB = 1024


def meminfo(proc: str = "/proc") -> dict[str, int]:
    """/proc/meminfo in bytes (`MemAvailable`, `SwapTotal`, `SwapFree`, …)."""
    out: dict[str, int] = {}
    with open(os.path.join(proc, "meminfo"), encoding="ascii") as fh:
        for line in fh:
            name, _, rest = line.partition(":")
            parts = rest.split()
            if parts and parts[0].isdigit():
                out[name] = int(parts[0]) * (KB if parts[1:2] == ["kB"] else 1)
    return out


def pressure(proc: str = "/proc", resource: str = "memory") -> dict[str, dict[str, float]] | None:
    """/proc/pressure/<resource> as {"some": {"avg10": …, "avg60": …}, "full": {…}};
    None when the kernel has no PSI (CONFIG_PSI off, or psi=0). Lines or fields not in the
    kernel's format are left out (an empty dict: nothing parsed)."""
    try:
        with open(os.path.join(proc, "pressure", resource), encoding="ascii") as fh:
            text = fh.read()
    except OSError:
        return None
    out: dict[str, dict[str, float]] = {}
    for line in text.splitlines():  # what does not read as `key=number` is left out
        kind, _, rest = line.strip().partition(" ")
        fields = {}
        for field in rest.split():
            key, _, value = field.partition("=")
            try:
                fields[key] = float(value)
            except ValueError:
                continue
        if kind in ("some", "full") and fields:
            out[kind] = fields
    return out


def loadavg(proc: str = "/proc") -> tuple[float, float, float]:
    with open(os.path.join(proc, "loadavg"), encoding="ascii") as fh:
        one, five, fifteen = fh.read().split()[:3]
    return float(one), float(five), float(fifteen)


@dataclass(frozen=True)
class Process:
    pid: int
    user: str
    rss: int  # bytes
    name: str
    argv: tuple[str, ...]


def _user(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def _process(proc: str, pid: str) -> Process | None:
    base = os.path.join(proc, pid)
    rss, uid, name = 0, -1, ""
    with open(os.path.join(base, "status"), encoding="utf-8", errors="replace") as fh:
        for line in fh:
            key, _, value = line.partition(":")
            if key == "Name":
                name = value.strip()
            elif key == "Uid":
                uid = int(value.split()[0])
            elif key == "VmRSS":
                rss = int(value.split()[0]) * KB
    if rss == 0:
        return None  # kernel threads, zombies
    with open(os.path.join(base, "cmdline"), "rb") as fh:
        raw = fh.read(1 << 16)
    argv = tuple(a.decode("utf-8", "replace") for a in raw.rstrip(b"\0").split(b"\0") if a)
    return Process(int(pid), _user(uid), rss, name, argv)


def top_processes(proc: str = "/proc", n: int = 10) -> list[Process]:
    """The `n` processes with the largest resident set (read-only: nothing is signalled)."""
    found = []
    for pid in os.listdir(proc):
        if not pid.isdigit():
            continue
        try:
            p = _process(proc, pid)
        except (OSError, ValueError):
            continue  # ended while we looked, or unreadable
        if p is not None:
            found.append(p)
    found.sort(key=lambda p: (-p.rss, p.pid))
    return found[:n]
