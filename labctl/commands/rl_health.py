"""`labctl rl-health`: KILL / NO-KILL / WATCH, with the evidence, for RL jobs in untested settings.

With no JOB, reads job records on stdin (`labctl poll | labctl rl-health`) and looks at the
running jobs of the RL bucket that are untested (a name pattern, a tag, or first seen by
poll within `untested_age_h`; `--all`: every running RL job); every record passes through
and an `rl_health` record follows each job looked at. A JOB argument is a log file, a W&B
run file (`run-*.wandb`), `wandb:ENTITY/PROJECT/RUN_ID` (the W&B API), or a job id
(`[CLUSTER:]JOB_ID`) resolved from the last poll's state store.

It reads the metric history, not the last line, in bounded bytes: the head, evenly spaced
samples and the tail of each log (on the job's cluster through the same transport poll
and diagnose use), the W&B run file poll matched, and with an API key the run's sampled
history. Signals (entropy collapse, grad-norm explosion or NaN, train/inference mismatch,
KL blow-up, zero reward variance, reward drop or hacking, truncation, throughput collapse,
a frozen step counter) each have a window and thresholds in `[rl_health]`; KILL needs two
independent families, a short history is WATCH. labctl never kills a job.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path
from typing import Annotated, Any

import typer

from labctl.context import Context
from labctl.rlhealth.schema import SCHEMAS

__all__ = ["EXAMPLES", "SCHEMAS", "cli"]
EXAMPLES = [
    "labctl poll | labctl rl-health | labctl table",
    "labctl poll | labctl rl-health --all | labctl log --topic rl-health",
    "labctl rl-health runs/grpo-qwen7b/stdout.log",
    "labctl rl-health c1:4812            # a job from the last poll",
    "labctl rl-health wandb:lab/rl/abc123 # a W&B run through the API",
]


def _transport(cfg: Any, name: str | None) -> Any:
    """The transport of a configured cluster, or None (its logs are then read locally)."""
    from labctl.cluster.config import cluster_named
    from labctl.cluster.scheduler import transport_for

    cluster = cluster_named(cfg, name)
    return transport_for(cluster) if cluster is not None else None


def _project(cfg: Any, name: str | None) -> str | None:
    from labctl.cluster.config import cluster_named

    cluster = cluster_named(cfg, name)
    return cluster.wandb_project if cluster is not None else None


def lookup(lc: Context, cluster: str | None, job_id: str) -> list[dict[str, Any]]:
    """The last poll's records of a job (its id as shown or raw), newest first, through the
    poll store's reading API; [] before the first poll."""
    import sqlite3

    from labctl.cluster.config import configured_clusters
    from labctl.poll.store import StoreError, open_to_read, store_path, unreadable

    path = store_path(lc.state_dir)
    if not path.is_file():
        return []
    names = [cluster] if cluster else [c.name for c in configured_clusters(lc.config)]
    store = open_to_read(path)
    try:
        found = [
            job
            for name in names
            for job in store.jobs(name).values()
            if job_id in (job.job_id, job.key[0])
        ]
    except (sqlite3.Error, StoreError) as exc:  # damaged rows: poll moves it aside
        raise unreadable(path, exc) from None
    finally:
        store.close()
    return [job.record for job in sorted(found, key=lambda j: j.last_seen, reverse=True)]


def options(lc: Context, all_jobs: bool) -> Any:
    """[rl_health] settings, the RL bucket and the cluster lookups, as core options."""
    from labctl.render.buckets import bucket_of, rules_from_config
    from labctl.rlhealth.config import Config, Thresholds
    from labctl.rlhealth.logread import ReadConfig
    from labctl.rlhealth.run import Options
    from labctl.rlhealth.select import UntestedRule

    cfg = lc.config
    get = lambda name: cfg.get(f"rl_health.{name}")  # noqa: E731
    try:
        read = ReadConfig(
            head_bytes=get("head_bytes"), tail_bytes=get("tail_bytes"), samples=get("samples"),
            sample_bytes=get("sample_bytes"), max_bytes=get("max_read_bytes"),
        )  # fmt: skip
    except ValueError as exc:
        from labctl.errors import ConfigError

        raise ConfigError(f"[rl_health]: {exc}") from None
    thresholds = Thresholds(**{f.name: get(f.name) for f in fields(Thresholds)})
    rules = rules_from_config(cfg.section("buckets"))
    return Options(
        cfg=Config(thresholds=thresholds, read=read, wandb_samples=get("wandb_samples")),
        now=lc.clock(),
        rule=UntestedRule(
            names=tuple(get("untested_names")),
            tags=tuple(get("untested_tags")),
            age_h=get("untested_age_h"),
        ),
        is_rl=lambda rec: bucket_of(rec, rules) == "RL",
        all_jobs=all_jobs,
        wandb=get("wandb"),
        wandb_api_key=cfg.get("wandb.api_key"),
        wandb_base_url=cfg.get("wandb.base_url"),
        state_dir=lc.state_dir,
        transport_for=lambda name: _transport(cfg, name),
        wandb_project=lambda name: _project(cfg, name),
        check=lambda name, path: _checked(lc, name, path),
    )


def _checked(lc: Context, cluster: str | None, path: str) -> str:
    """A log path the caller named, checked against `labctl mcp`'s roots under it."""
    if lc.confine is None:
        return path
    from labctl.confine import log_path

    timeout = float(lc.config.get("poll.timeout_s"))
    return log_path(lc, cluster, _transport(lc.config, cluster), path, timeout)


def run(
    lc: Context, jobs: list[str], all_jobs: bool, input: Path | None
) -> Iterator[dict[str, Any]]:
    from labctl.rlhealth.run import for_arguments
    from labctl.rlhealth.run import run as run_records
    from labctl.stream import read_records

    opts = options(lc, all_jobs)
    if jobs:
        yield from for_arguments(jobs, opts, lambda cluster, job_id: lookup(lc, cluster, job_id))
    else:
        yield from run_records(read_records(lc, input), opts)


def cli(
    lc: Context,
    jobs: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="[JOB]...",
            help="A log file, a W&B run file, wandb:ENTITY/PROJECT/RUN_ID, or [CLUSTER:]JOB_ID "
            "from the last poll (a bare JOB_ID is looked up in the configured clusters; "
            "default: job records on stdin).",
        ),
    ] = None,
    all_jobs: Annotated[
        bool,
        typer.Option("--all", help="Every running RL job on stdin, not only untested ones."),
    ] = False,
    input: Annotated[
        Path | None, typer.Option("--input", "-i", help="Read job records from FILE.")
    ] = None,
) -> int:
    """KILL / NO-KILL / WATCH with evidence for RL jobs in untested settings (bounded reads).

    Exit 1 when a job's recommendation is KILL (labctl never kills anything: a person
    decides), 2 when a JOB argument is neither a file nor a job of the last poll, 3 when
    a cluster or W&B could not be read (see the error records).
    """
    return lc.emit(run(lc, jobs or [], all_jobs, input))
