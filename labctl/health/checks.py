"""The health checks: one `check` record each (ok, value, threshold), and, when memory
is low, the processes holding the most of it. Nothing is ever signalled or killed."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from labctl.health import sources

GB = 1_000_000_000
MAX_CMDLINE = 300
_SECRET_FLAG = re.compile(
    r"^--?[\w-]*(token|secret|password|passwd|api[-_]?key|access[-_]?key|auth)[\w-]*$", re.I
)


@dataclass(frozen=True)
class Thresholds:
    volumes: tuple[str, ...]
    disk_min_free: int  # bytes
    mem_min_available: int  # bytes
    psi_some_avg60_max: float  # percent
    psi_full_avg60_max: float
    swap_max_used_pct: float
    load_max_per_cpu: float
    top_n: int


def redact_argv(argv: tuple[str, ...]) -> str:
    """A command line with the values of secret-looking flags masked (`--token X`,
    `--api-key=X`); the emitter's redactor then removes known token shapes too."""
    out: list[str] = []
    hide_next = False
    for arg in argv:
        if hide_next:
            out.append("[REDACTED:argument]")
            hide_next = False
            continue
        flag, eq, _ = arg.partition("=")
        if _SECRET_FLAG.match(flag):
            if eq:
                out.append(f"{flag}=[REDACTED:argument]")
                continue
            hide_next = True
        out.append(arg)
    text = " ".join(out)
    return text if len(text) <= MAX_CMDLINE else text[: MAX_CMDLINE - 1] + "…"


def _check(name: str, ok: bool, value: Any, threshold: Any, unit: str, message: str,
           **extra: Any) -> dict[str, Any]:  # fmt: skip
    rec = {"kind": "check", "check": name, "ok": ok, "value": value, "threshold": threshold,
           "unit": unit, "message": message}  # fmt: skip
    rec.update(extra)
    return rec


def disk_checks(t: Thresholds) -> Iterator[dict[str, Any]]:
    from labctl.volumes import existing_ancestor, volume

    seen: set[int] = set()
    for path in t.volumes:
        try:
            vol = volume(existing_ancestor(path))
        except OSError as exc:
            yield _check("disk_free", False, None, t.disk_min_free, "bytes",
                         f"cannot stat {path}: {exc.strerror}", target=path)  # fmt: skip
            continue
        if vol.device in seen:
            continue
        seen.add(vol.device)
        ok = vol.free >= t.disk_min_free
        yield _check(
            "disk_free", ok, vol.free, t.disk_min_free, "bytes",
            f"{vol.free / GB:.1f} GB free on {vol.mount}"
            + ("" if ok else f", under {t.disk_min_free / GB:g} GB: run labctl prune-disk"),
            target=path, mount=vol.mount, total=vol.total,
        )  # fmt: skip


def memory_checks(t: Thresholds, proc: str) -> Iterator[dict[str, Any]]:
    try:
        info = sources.meminfo(proc)
    except OSError as exc:  # an odd /proc: say so, as failed checks, and go on
        why = f"cannot read {os.path.join(proc, 'meminfo')}: {exc.strerror or exc}"
        yield _check("mem_available", False, None, t.mem_min_available, "bytes", why)
        yield from psi_checks(t, sources.pressure(proc))
        yield _check("swap_used", False, None, t.swap_max_used_pct, "percent", why)
        return
    avail = info.get("MemAvailable", info.get("MemFree", 0))
    ok = avail >= t.mem_min_available
    yield _check("mem_available", ok, avail, t.mem_min_available, "bytes",
                 f"{avail / GB:.1f} GB of {info.get('MemTotal', 0) / GB:.1f} GB available",
                 total=info.get("MemTotal"))  # fmt: skip
    yield from psi_checks(t, sources.pressure(proc))
    total, free = info.get("SwapTotal", 0), info.get("SwapFree", 0)
    if total:
        pct = round(100.0 * (total - free) / total, 1)
        yield _check("swap_used", pct <= t.swap_max_used_pct, pct, t.swap_max_used_pct,
                     "percent", f"{(total - free) / GB:.1f} GB of {total / GB:.1f} GB swap used",
                     swap_total=total, swap_used=total - free)  # fmt: skip
    else:
        yield _check("swap_used", True, None, t.swap_max_used_pct, "percent",
                     "no swap configured", swap_total=0, swap_used=0)  # fmt: skip


def psi_checks(t: Thresholds, psi: dict[str, dict[str, float]] | None) -> list[dict[str, Any]]:
    """One check per PSI line with an avg60; a skipped `psi_memory` when there is none."""
    out = []
    for kind, limit in (("some", t.psi_some_avg60_max), ("full", t.psi_full_avg60_max)):
        line = (psi or {}).get(kind, {})
        value = line.get("avg60")
        if value is None:
            continue
        out.append(_check(f"psi_memory_{kind}", value <= limit, value, limit, "percent",
                          f"{kind} tasks stalled on memory {value:g}% of the last 60 s",
                          avg10=line.get("avg10"), avg300=line.get("avg300")))  # fmt: skip
    if not out:
        why = ("the kernel reports no pressure stall information" if psi is None
               else "the pressure file holds no avg60 reading in the kernel's format")  # fmt: skip
        out.append(_check("psi_memory", True, None, None, "percent", why, skipped=True))
    return out


def load_check(t: Thresholds, proc: str, cpus: int) -> dict[str, Any]:
    try:
        one, five, fifteen = sources.loadavg(proc)
    except (OSError, ValueError) as exc:
        why = f"cannot read {os.path.join(proc, 'loadavg')}: {getattr(exc, 'strerror', 0) or exc}"
        return _check("load", False, None, t.load_max_per_cpu, "per_cpu", why, cpus=cpus)
    per_cpu = round(five / max(1, cpus), 2)
    return _check("load", per_cpu <= t.load_max_per_cpu, per_cpu, t.load_max_per_cpu,
                  "per_cpu", f"5-minute load {five:g} on {cpus} CPUs",
                  load1=one, load5=five, load15=fifteen, cpus=cpus)  # fmt: skip


def process_record(p: sources.Process, rank: int) -> dict[str, Any]:
    return {"kind": "process", "rank": rank, "pid": p.pid, "user": p.user, "rss": p.rss,
            "name": p.name, "cmdline": redact_argv(p.argv)}  # fmt: skip


MEMORY_CHECKS = ("mem_available", "psi_memory_some", "psi_memory_full", "swap_used")


def health(
    t: Thresholds, *, proc: str = "/proc", cpus: int = 1, always_top: bool = False
) -> Iterator[dict[str, Any]]:
    records = [*disk_checks(t), *memory_checks(t, proc), load_check(t, proc, cpus)]
    yield from records
    low = any(r["check"] in MEMORY_CHECKS and not r["ok"] for r in records)
    if low or always_top:
        for rank, p in enumerate(sources.top_processes(proc, t.top_n), start=1):
            yield process_record(p, rank)


def cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1
