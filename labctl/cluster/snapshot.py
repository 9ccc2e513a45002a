"""What poll asks a scheduler (`Ask`) and what the scheduler answers (`Snapshot`), and the
identity of a job across polls (`Key`).

A job in a snapshot is a plain dict of facts in the parse layer's shape (`labctl.parse.
slurm.RECORD_KEYS`: epoch times, ints, None for unknowns): state, reason, exit code,
signal, log paths, … — never a verdict: poll decides that (`labctl.poll.verdict`).
"""

from __future__ import annotations

import fnmatch
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

# (job_id_raw, array task or -1, submit epoch or 0): ids are reused, array tasks share
# the master's raw id with the pending group, and a requeue resets the submit time.
Key = tuple[str, int, int]


def job_key(job: Mapping[str, Any]) -> Key:
    task = job.get("array_task_id")
    return (
        str(job["job_id_raw"] if job.get("job_id_raw") is not None else job["job_id"]),
        int(task) if task is not None else -1,
        int(job.get("submit_epoch") or 0),
    )


def key_text(cluster: str, key: Key) -> str:
    raw, task, submit = key
    return f"{cluster}:{raw}" + (f"/{task}" if task >= 0 else "") + f"@{submit}"


@dataclass(frozen=True)
class Ask:
    """What poll asks a scheduler for, from what its state store remembers."""

    active_ids: tuple[str, ...] = ()  # raw ids last seen alive: ask about them by id
    since: float | None = None  # window start for jobs never seen (epoch, cluster clock)
    logs: Mapping[Key, tuple[str | None, str | None]] = field(default_factory=dict)
    # ^ (stdout, stderr) remembered per job, for when the scheduler has forgotten them


@dataclass
class Snapshot:
    """One cluster's jobs as its scheduler reported them in this poll."""

    now: float  # the cluster's clock
    jobs: list[dict[str, Any]]
    user: str | None = None
    skipped: Counter[str] = field(default_factory=Counter)
    commands: list[str] = field(default_factory=list)
    elapsed_s: float = 0.0
    errors: list[tuple[str, Exception]] = field(default_factory=list)  # (stage, error)
    # how the jobs' `state` words map to verdicts; None: SLURM's own states
    states: Mapping[str, str] | None = None
    # jobs that ended before this (cluster clock) and were never seen are history, not news:
    # set by a scheduler that can return such jobs (SLURM's `sacct --jobs`)
    window_start: float | None = None


def split_skipped(
    jobs: Iterable[dict[str, Any]], patterns: tuple[str, ...]
) -> tuple[list[dict[str, Any]], Counter[str]]:
    """The jobs whose names match none of `patterns`, and how many each pattern skipped."""
    kept: list[dict[str, Any]] = []
    skipped: Counter[str] = Counter()
    for job in jobs:
        name = job.get("name") or ""
        hit = next((p for p in patterns if fnmatch.fnmatchcase(name, p)), None)
        if hit is None:
            kept.append(job)
        else:
            skipped[hit] += 1
    return kept, skipped
