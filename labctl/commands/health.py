"""`labctl health`: is the supervisor's machine about to fall over?

One `check` record per check — free disk on each configured volume (`[health] volumes`),
MemAvailable, memory pressure (PSI, where the kernel has it), swap in use, load per CPU —
with `ok`, the value and the threshold. When a memory check fails (or with `--top`), the
processes holding the most memory follow as `process` records (pid, user, RSS, command
line with secret-looking arguments masked). It never signals or kills anything. Exit 1
when any check fails. It runs in every sweep (`scripts/sweep`).
"""

from __future__ import annotations

from typing import Annotated

import typer

from labctl.context import Context
from labctl.schemas import BYTES, COMMON, NUM_OR_NULL, STR_OR_NULL, record

__all__ = ["EXAMPLES", "SCHEMAS", "cli"]

GB = 1_000_000_000
CHECKS = [
    "disk_free",
    "mem_available",
    "psi_memory",
    "psi_memory_some",
    "psi_memory_full",
    "swap_used",
    "load",
]
SCHEMAS = {
    **COMMON,
    "check": record(
        "check",
        "One health check: `ok` when `value` is within `threshold` (disk_free, "
        "mem_available: bytes, at least; psi_memory_*, swap_used: percent, at most; load: "
        "5-minute load average per CPU, at most). `skipped` when the kernel lacks the data.",
        {
            "check": {"enum": CHECKS},
            "ok": {"type": "boolean"},
            "value": NUM_OR_NULL,
            "threshold": NUM_OR_NULL,
            "unit": {"enum": ["bytes", "percent", "per_cpu"]},
            "message": {"type": "string"},
            "target": {"type": "string"},
            "mount": {"type": "string"},
            "total": BYTES,
            "skipped": {"type": "boolean"},
            "avg10": NUM_OR_NULL,
            "avg300": NUM_OR_NULL,
            "swap_total": BYTES,
            "swap_used": BYTES,
            "load1": {"type": "number"},
            "load5": {"type": "number"},
            "load15": {"type": "number"},
            "cpus": {"type": "integer", "minimum": 1},
        },
        ["check", "ok", "value", "threshold", "unit", "message"],
    ),
    "process": record(
        "process",
        "A process holding much memory, largest first (listed when memory is low or with "
        "--top). The command line has secret-looking arguments masked.",
        {
            "rank": {"type": "integer", "minimum": 1},
            "pid": {"type": "integer"},
            "user": {"type": "string"},
            "rss": BYTES,
            "name": STR_OR_NULL,
            "cmdline": {"type": "string"},
        },
        ["rank", "pid", "user", "rss", "cmdline"],
    ),
}
EXAMPLES = [
    "labctl health                 # exit 1 when disk, memory, pressure, swap or load is bad",
    "labctl health --top -f table  # also the 10 largest processes by RSS",
    "labctl health --volume /data --volume /scratch",
]


def cli(
    lc: Context,
    volume: Annotated[
        list[str] | None,
        typer.Option(
            "--volume", metavar="PATH", help="Check this volume (default [health] volumes)."
        ),
    ] = None,
    top: Annotated[
        bool, typer.Option("--top", help="List the largest processes even when memory is fine.")
    ] = False,
) -> int:
    """Check free disk, memory, memory pressure, swap and load; never kills anything.

    One `check` record per check with ok, value and threshold ([health] settings); when
    a memory check fails (or with --top) the largest processes by RSS follow, their
    command lines with secret-looking arguments masked. Exit 1 when any check fails.
    """
    from labctl.health.checks import Thresholds, cpu_count, health
    from labctl.volumes import expand

    cfg = lc.config
    t = Thresholds(
        volumes=tuple(expand(v, lc.environ) for v in (volume or cfg.get("health.volumes"))),
        disk_min_free=int(cfg.get("health.disk_min_free_gb") * GB),
        mem_min_available=int(cfg.get("health.mem_min_available_gb") * GB),
        psi_some_avg60_max=cfg.get("health.psi_some_avg60_max"),
        psi_full_avg60_max=cfg.get("health.psi_full_avg60_max"),
        swap_max_used_pct=cfg.get("health.swap_max_used_pct"),
        load_max_per_cpu=cfg.get("health.load_max_per_cpu"),
        top_n=max(1, cfg.get("health.top_processes")),
    )
    return lc.emit(health(t, cpus=cpu_count(), always_top=top))
