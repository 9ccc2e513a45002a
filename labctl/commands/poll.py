"""`labctl poll`: every job of every configured cluster, one `job` record each, streamed.

Clusters come from `[[clusters]]` in the config (default: one local SLURM). They are
polled concurrently; a cluster that cannot be read gives one `error` record and the rest
go on. The state store (SQLite in the state dir) remembers what each poll saw, so records
say what is new or changed, and a job that vanished is `unknown`, never `completed`.

Per SLURM cluster and poll: one script with `squeue --states=all`, `sacct --jobs=<ids
the store saw alive>` (chunks of 200) and `sacct --starttime=<last good poll - margin>`
(never sacct's default window, never a full-history scan), then one script that stats the
job logs (and reads the stderr tail of fresh failures for kill fingerprints).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Annotated, Any

import typer

from labctl.poll.schema import SCHEMAS

__all__ = ["EXAMPLES", "SCHEMAS", "cli"]

EXAMPLES = [
    "labctl poll | labctl diagnose | labctl table",
    "labctl poll --cluster c1 --format table",
    "labctl poll --since 6h      # also re-report jobs that ended in the last 6 hours",
    "labctl poll --changed-only  # only what changed since the previous poll",
]
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$")
_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(text: str) -> float:
    from labctl.errors import UsageError

    m = _DURATION.match(text)
    if m is None:
        raise UsageError(f"--since {text!r}: use a number with s, m, h or d (e.g. 6h)")
    return float(m.group(1)) * _UNITS[m.group(2)]


def run(
    lc: Any, clusters: list[str], since: str | None, changed_only: bool
) -> Iterator[dict[str, Any]]:
    from labctl.poll.clusters import clusters_from_config
    from labctl.poll.core import PollSettings
    from labctl.poll.core import run as poll_run

    cfg = lc.config
    chosen = clusters_from_config(
        cfg.table_list("clusters"), default_timeout=cfg.get("poll.timeout_s"), only=clusters
    )
    settings = PollSettings(
        lock_wait_s=cfg.get("poll.lock_wait_s"),
        lookback_s=cfg.get("poll.lookback_h") * 3600,
        window_margin_s=cfg.get("poll.window_margin_s"),
        forget_after_s=cfg.get("poll.forget_after_h") * 3600,
        retention_s=cfg.get("poll.retention_days") * 86400,
        since_s=parse_duration(since) if since is not None else None,
    )
    for rec in poll_run(chosen, state_dir=lc.state_dir, settings=settings, clock=lc.clock):
        if changed_only and rec.get("kind") == "job" and not rec.get("changed_since_last_poll"):
            continue
        yield rec


def cli(
    ctx: typer.Context,
    cluster: Annotated[
        list[str] | None,
        typer.Option("--cluster", "-c", help="Poll only this cluster (repeatable)."),
    ] = None,
    since: Annotated[
        str | None,
        typer.Option(
            "--since",
            metavar="DURATION",
            help="Also report again jobs that ended within DURATION (30m, 6h, 2d); by "
            "default a finished job is reported once, by the poll that first sees it end.",
        ),
    ] = None,
    changed_only: Annotated[
        bool,
        typer.Option("--changed-only", help="Only job records that changed since the last poll."),
    ] = False,
) -> int:
    """Poll every configured cluster: one `job` record per job, with labctl's verdict.

    Clusters are `[[clusters]]` tables in the config: name; host ("local" or an SSH
    alias) and ssh_options; scheduler ("slurm", or "command": a command printing JSON
    job rows, with `fields` and `states` mappings and an optional `rows` path); users,
    accounts or all_users; skip (name patterns counted in one `skipped` record);
    timeout_s; path_prepend; accounting (false: a SLURM without slurmdbd). The state
    store is poll.sqlite in the state directory; [poll] settings tune its windows.

    Exit 1 when a job needs a person (failed, timeout, out_of_memory, node_fail, unknown,
    running-stalled), 3 when a cluster could not be read (its `error` record says why).
    """
    from labctl.cli import context_from

    lc = context_from(ctx, "poll")
    return int(lc.emit(run(lc, cluster or [], since, changed_only)))
