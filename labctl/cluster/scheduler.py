"""Scheduler adapters behind one protocol, and the transport that reaches a cluster.

A scheduler adapter is one module that defines

    def make(cluster: ClusterConfig, transport: Transport, *, state_dir: Path | None)
        -> Scheduler
    def check_config(cluster: ClusterConfig, fail: Fail) -> None     (optional)

and one line in SCHEDULERS below: its module and the config keys only it takes (other
schedulers' clusters refuse them; `ClusterConfig.options` holds their values).
`Scheduler.read` does the scheduler's round trip and returns facts (`Snapshot`); poll then
reads the jobs' logs and progress and decides the verdicts. Adapters: `slurm` (squeue +
sacct), `command` (a job table printed as JSON), `supervise` (the runs `labctl supervise`
registered on this machine).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from labctl.backends.transport import Transport
    from labctl.cluster.config import ClusterConfig
    from labctl.cluster.snapshot import Ask, Snapshot
    from labctl.errors import ConfigError

Fail = Callable[[str, str | None], "ConfigError"]  # (message, key) -> the error to raise


class Scheduler(Protocol):
    """One cluster's scheduler, as poll sees it."""

    # its failed jobs' logs may end with slurmstepd's kill lines (worth an 8 KiB tail read)
    kill_lines: bool

    def read(self, ask: Ask, deadline: float) -> Snapshot:
        """Every job of the cluster the scheduler knows now (and the ones `ask` names),
        as facts. Raises BackendError (reason: unreachable, timeout, bad_output, …)."""
        ...


@dataclass(frozen=True)
class SchedulerSpec:
    module: str
    keys: tuple[str, ...]  # the config keys only this scheduler takes


SCHEDULERS: dict[str, SchedulerSpec] = {
    "slurm": SchedulerSpec("labctl.cluster.slurm", ("accounting", "accounts")),
    "command": SchedulerSpec("labctl.cluster.jobtable", ("command", "rows", "fields", "states")),
    "supervise": SchedulerSpec("labctl.cluster.supervise", ("runs_dir",)),
}


def owner_of(key: str) -> str | None:
    """The scheduler whose own config key this is (None: a key every cluster takes)."""
    return next((name for name, spec in SCHEDULERS.items() if key in spec.keys), None)


def check_config(cluster: ClusterConfig, fail: Fail) -> None:
    """The scheduler's own checks of a cluster's config (after the common ones)."""
    module = importlib.import_module(SCHEDULERS[cluster.scheduler].module)
    check = getattr(module, "check_config", None)
    if check is not None:
        check(cluster, fail)


def scheduler_for(
    cluster: ClusterConfig, transport: Transport, *, state_dir: Path | None = None
) -> Scheduler:
    """The adapter for the cluster's scheduler."""
    module = importlib.import_module(SCHEDULERS[cluster.scheduler].module)
    scheduler: Scheduler = module.make(cluster, transport, state_dir=state_dir)
    return scheduler


def transport_for(cluster: ClusterConfig) -> Transport:
    """How to run commands on the cluster: locally, or over SSH through its host alias."""
    from labctl.backends.transport import Transport

    return Transport(host=cluster.host, ssh_options=cluster.ssh_options)
