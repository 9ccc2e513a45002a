"""`labctl poll`: every job of every configured cluster, one `job` record each, streamed.

Clusters come from `[[clusters]]` in the config (default: one local SLURM). They are
polled concurrently; a cluster that cannot be read gives one `error` record and the rest
go on. The state store (SQLite in the state dir) remembers what each poll saw, so records
say what is new or changed, and a job that vanished is `unknown`, never `completed`.

Per SLURM cluster and poll: one script with `squeue --states=all`, `sacct --jobs=<ids
the store saw alive>` (chunks of 200) and `sacct --starttime=<last good poll - margin>`
(never sacct's default window, never a full-history scan), then one script that stats the
job logs, reads the stderr tail of fresh failures for kill fingerprints, and reads each
running job's progress sources (new log bytes, result files, W&B run files); with a W&B
API key and a cluster's `wandb_project`, one paged runs query per project.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any

import typer

from labctl.context import Context
from labctl.poll.schema import SCHEMAS

__all__ = ["EXAMPLES", "SCHEMAS", "cli"]

EXAMPLES = [
    "labctl poll | labctl diagnose | labctl table",
    "labctl poll --cluster c1 --format table",
    "labctl poll --since 6h      # also re-report jobs that ended in the last 6 hours",
    "labctl poll --changed-only  # only what changed since the previous poll",
]


def since_seconds(text: str) -> float:
    """`--since` in seconds (a usage error when it is not a duration)."""
    from labctl.errors import UsageError
    from labctl.records import duration_seconds

    try:
        return duration_seconds(text)
    except ValueError:
        raise UsageError(f"--since {text!r}: use a number with s, m, h or d (e.g. 6h)") from None


def progress_settings(cfg: Any, state_dir: Any = None) -> Any:
    """[progress] settings and the per-job `[jobs."<name pattern>"]` cadence overrides."""
    from labctl.errors import ConfigError
    from labctl.poll.running import ProgressSettings
    from labctl.progress.cadence import CadenceConfig

    if not cfg.get("progress.enabled"):
        return None
    cadence = CadenceConfig(
        poll_interval_s=cfg.get("progress.poll_interval_s"),
        startup_grace_s=cfg.get("progress.startup_grace_s"),
        floor_s=cfg.get("progress.floor_s"),
        checkpoint_allowance_s=cfg.get("progress.checkpoint_allowance_s"),
        eval_allowance_s=cfg.get("progress.eval_allowance_s"),
        misses_to_stall=max(1, cfg.get("progress.misses_to_stall")),
    )
    overrides = []
    for pattern, table in cfg.section("jobs").items():
        if not isinstance(table, dict):
            raise ConfigError(f'config: [jobs."{pattern}"] must be a table of cadence settings')
        try:
            cadence.for_job(table)
        except ValueError as exc:
            raise ConfigError(f'config: [jobs."{pattern}"]: {exc}') from None
        overrides.append((pattern, dict(table)))
    return ProgressSettings(
        cadence=cadence,
        max_read=max(4096, cfg.get("progress.max_read_bytes")),
        first_tail=max(4096, cfg.get("progress.first_tail_bytes")),
        wandb_files=cfg.get("progress.wandb_files"),
        job_overrides=tuple(overrides),
        wandb_api_key=cfg.get("wandb.api_key"),
        wandb_base_url=cfg.get("wandb.base_url"),
        state_dir=state_dir,
    )


def run(
    lc: Context, clusters: list[str], since: str | None, changed_only: bool
) -> Iterator[dict[str, Any]]:
    from labctl.cluster.config import configured_clusters
    from labctl.poll.core import PollSettings
    from labctl.poll.core import run as poll_run

    cfg = lc.config
    chosen = configured_clusters(cfg, only=clusters)
    settings = PollSettings(
        progress=progress_settings(cfg, lc.state_dir),
        lock_wait_s=cfg.get("poll.lock_wait_s"),
        lookback_s=cfg.get("poll.lookback_h") * 3600,
        window_margin_s=cfg.get("poll.window_margin_s"),
        forget_after_s=cfg.get("poll.forget_after_h") * 3600,
        retention_s=cfg.get("poll.retention_days") * 86400,
        since_s=since_seconds(since) if since is not None else None,
    )
    for rec in poll_run(chosen, state_dir=lc.state_dir, settings=settings, clock=lc.clock):
        if changed_only and rec.get("kind") == "job" and not rec.get("changed_since_last_poll"):
            continue
        yield rec


def cli(
    lc: Context,
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
    timeout_s; path_prepend; accounting (false: a SLURM without slurmdbd); progress
    sources: progress_regex (a regex with (?P<step>...)), results (result-file names
    counted under the job's WorkDir), wandb_project (entity/project for the W&B API).
    The state store is poll.sqlite in the state directory; [poll] settings tune its
    windows.

    RUNNING is not progress: a running job is running-progressing (two polls saw its step,
    trial count or W&B step rise, the later one within its allowance), running-stalled (no
    rise past its allowance on two consecutive polls) or running-unverified (first
    sighting, no rise yet, a first miss, start-up grace, nothing readable); a
    death marker in its log (slurmstepd kill line, oom-kill, NCCL watchdog timeout, a
    final traceback with no growth since) gives a terminal verdict. [progress] settings
    set the allowance; [jobs."<name pattern>"] tables override it per job (allowance_s,
    startup_grace_s, floor_s, checkpoint_allowance_s, eval_allowance_s, ...).

    A broken state store or state dir costs the memory, never the report: an unusable
    store is moved aside (`state_reset`), a state dir that takes no write (full disk,
    read-only, permissions) is not saved to (`state_unwritable`); every job is still
    reported.

    Exit 1 when a job needs a person (failed, timeout, out_of_memory, node_fail, unknown,
    running-stalled), 3 when a cluster could not be read or poll's own state is broken
    (its `error` record says why).
    """

    return int(lc.emit(run(lc, cluster or [], since, changed_only)))
