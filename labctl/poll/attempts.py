"""A requeued job is one job across attempts.

A requeue resets SLURM's submit time (part of a job's key), so a preempted-and-requeued
job comes back under a new key. The latest attempt is the job: it continues the stored
attempt before it (`earlier_attempt`: `first_seen` kept, not `new`) and says how that one
ended (`previous_verdict`). A job that got the same id after a controller reset is another
job (`continues`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from labctl.cluster.snapshot import Key, job_key
from labctl.poll.model import StoredJob


def continues(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """`new` (submitted later) is the next attempt of the job `old` was, not another job
    that got the same id after a controller reset: same name and user, and `new` has
    restarted more often (squeue gives the count; sacct 22.05 does not: unknown passes)."""
    if (old.get("name"), old.get("user")) != (new.get("name"), new.get("user")):
        return False
    after, before = new.get("restarts"), old.get("restarts")
    return after is None or after > (before or 0)


def fold_attempts(
    jobs: list[dict[str, Any]],
    verdict_of: Callable[[dict[str, Any]], str | None] = lambda job: job.get("verdict"),
) -> tuple[list[dict[str, Any]], dict[Key, str]]:
    """One record per job: when the scheduler reports several attempts of a requeued job
    (squeue the new one, `sacct -D` the ones preempted or requeued before it), the latest
    is the job and the verdict of the attempt just before it (`verdict_of`, asked only of
    such attempts) becomes its `previous_verdict`. A reused id (another job, see
    `continues`) is kept apart."""
    by_id: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for job in jobs:
        key = job_key(job)
        by_id.setdefault((key[0], key[1]), []).append(job)
    folded: set[int] = set()
    ended: dict[Key, str] = {}
    for group in by_id.values():
        if len(group) < 2:
            continue
        group = sorted(group, key=lambda j: job_key(j)[2])
        for i, new in enumerate(group):
            if id(new) in folded:
                continue
            earlier = [old for old in group[:i] if id(old) not in folded]
            mine = [
                old for old in earlier if job_key(old)[2] < job_key(new)[2] and continues(old, new)
            ]
            folded.update(id(old) for old in mine)
            if mine and (verdict := verdict_of(mine[-1])):
                ended[job_key(new)] = verdict
    return [j for j in jobs if id(j) not in folded], ended


def earlier_attempt(
    job: dict[str, Any], key: Key, candidates: Iterable[StoredJob]
) -> StoredJob | None:
    """The stored attempt a requeued job continues, among the active stored jobs with its id
    and task: submitted earlier (a requeue resets the submit time) and `continues`."""
    for prev in candidates:
        if prev.key[2] < key[2] and continues(prev.view, job):
            return prev
    return None
