"""What one cluster's snapshot means against what the store remembers (pure).

For each job the scheduler reported: its verdict (`labctl.poll.verdict.decide`, with its
progress for a running job), its record, with `first_seen`, `new`,
`changed_since_last_poll`, `changed_fields` and `previous_verdict` from the store.
A job is emitted when it is not over, or is new, or changed since the last poll, or (with
`--since`) ended after `since_cut`: a finished job is reported by the poll that first
sees it finished, not by every poll for as long as sacct's window still returns it.
A requeued attempt continues the job it requeues (`labctl.poll.attempts`): its record
keeps `first_seen`, is not `new`, and says what changed (`restarts`, `submit_time`,
`state`). Jobs the scheduler no longer reports: `labctl.poll.gone`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from labctl.cluster.snapshot import Key, Snapshot, job_key
from labctl.poll.attempts import earlier_attempt, fold_attempts
from labctl.poll.gone import forgotten, restated, since_asks, vanished
from labctl.poll.model import WATCHED_FIELDS, StoredJob, is_terminal, job_record, watched_view
from labctl.poll.running import ProgressSettings, observe
from labctl.poll.verdict import judge
from labctl.records import rfc3339
from labctl.verdicts import Verdict


@dataclass
class ClusterUpdate:
    """What one cluster's poll adds up to: the records to emit and the store's changes."""

    records: list[dict[str, Any]] = field(default_factory=list)
    updates: list[StoredJob] = field(default_factory=list)
    seen: int = 0  # jobs the scheduler reported (emitted or not)
    quiet: list[Key] = field(default_factory=list)  # finished, reported, unchanged


def _changed(prev: dict[str, Any], rec: dict[str, Any]) -> list[str]:
    return [f for f in WATCHED_FIELDS if prev.get(f) != rec.get(f)]


def is_quiet(job: dict[str, Any], prev: StoredJob | None, since_cut: float | None) -> bool:
    """A finished job already reported with the same state, verdict, times…: not emitted
    again (unless `--since` reaches back to its end), so its logs need no look either."""
    if prev is None or not is_terminal(job) or prev.verdict == Verdict.UNKNOWN:
        return False
    return not since_asks(job, since_cut) and not _changed(prev.view, watched_view(job))


def squeue_leftover(job: dict[str, Any], prev: StoredJob | None) -> bool:
    """squeue still lists a finished job (for MinJobAge) after sacct's window has moved past
    it. Its record says less than the one the store has from sacct (who cancelled it, the
    `.batch` exit), so the difference is not news and the store's record stands."""
    return (
        prev is not None
        and prev.terminal
        and job.get("source") == "squeue"
        and "sacct" in str(prev.view.get("source"))
        and prev.view.get("state") == job.get("state")
        and is_terminal(job)
    )


def out_of_window(
    job: dict[str, Any], key: Key, stored: dict[Key, StoredJob], window_start: float | None
) -> bool:
    """A finished job the store never knew that ended before this poll's sacct window: only
    `sacct -D --jobs` returns one (an older job that had the same id before a controller
    reset). It is history, not news: not reported."""
    end = job.get("end_epoch")
    return (
        window_start is not None
        and key not in stored
        and is_terminal(job)
        and end is not None
        and end < window_start
    )


@dataclass
class ClusterMerge:
    """One cluster's merge: its inputs and what it adds up to."""

    cluster: str
    scheduler: str
    snap: Snapshot
    now: float
    since_cut: float | None
    progress: ProgressSettings | None
    progress_regex: str | None
    out: ClusterUpdate = field(default_factory=ClusterUpdate)


def merge(
    cluster: str,
    scheduler: str,
    snap: Snapshot,
    stored: dict[Key, StoredJob],
    *,
    now: float,
    since_cut: float | None,
    forget_after_s: float,
    progress: ProgressSettings | None = None,
    progress_regex: str | None = None,
    window_start: float | None = None,
) -> ClusterUpdate:
    """`progress` set: running jobs get a progress verdict from their probed sources.
    `window_start`: the sacct window's start (cluster clock), see `out_of_window`.
    (The whole update at once; poll itself streams with `merged_records`.)"""
    m = ClusterMerge(cluster, scheduler, snap, now, since_cut, progress, progress_regex)
    merging = merged_records(m, list(snap.jobs), dict(stored), forget_after_s, window_start)
    m.out.records.extend(merging)
    return m.out


def merged_records(
    m: ClusterMerge,
    jobs: list[dict[str, Any]],
    stored: dict[Key, StoredJob],
    forget_after_s: float,
    window_start: float | None,
) -> Iterator[dict[str, Any]]:
    """The records of one cluster's merge as each job is merged, its store changes into
    `m.out`. `jobs` (the snapshot's facts) and `stored` are consumed: a job's facts and its
    stored entry are dropped once its record is built, so a poll of 10,000 jobs never holds
    facts, stored jobs and records of all of them at once. Jobs the scheduler no longer
    reports come last (they need every observed key, and only unobserved stored jobs)."""
    states = m.snap.states
    # a requeued job's attempts fold into its latest; the attempt before says how it ended
    folded, ended_attempt = fold_attempts(jobs, lambda j: judge(j, states=states)["verdict"])
    jobs.clear()
    pending = deque(folded)
    del folded
    observed: dict[Key, str | None] = {}  # key -> array job id (vanished array groups)
    attempts: dict[tuple[str, int], list[StoredJob]] = {}
    for stored_job in stored.values():
        if stored_job.active:
            attempts.setdefault(stored_job.key[:2], []).append(stored_job)
    while pending:
        # its verdict, from the scheduler's facts and the kill lines read in its log
        job = judge(pending.popleft(), states=states)
        key = job_key(job)
        if out_of_window(job, key, stored, window_start):
            continue
        observed[key] = job.get("array_job_id")
        prev = stored.pop(key, None) or earlier_attempt(job, key, attempts.get(key[:2], ()))
        m.out.seen += 1
        rec = _merge_job(m, job, key, prev, ended_attempt.get(key))
        if rec is not None:
            yield rec
    records, updates = vanished(observed, stored, now=m.now, forget_after_s=forget_after_s)
    m.out.updates += updates
    yield from records
    if m.since_cut is not None:
        yield from (restated(p, m.now) for p in forgotten(observed, stored, m.since_cut))


def _merge_job(
    m: ClusterMerge, job: dict[str, Any], key: Key, prev: StoredJob | None, ended: str | None
) -> dict[str, Any] | None:
    """One reported job: quiet (the store keeps its record), or its record (returned) and
    store row. `ended`: how the attempt before this one ended (a requeued job, e.g.
    preempted)."""
    if prev is not None and squeue_leftover(job, prev):
        m.out.quiet.append(key)  # the store's fuller record stands
        if since_asks(job, m.since_cut):  # reported again: the store's record
            return restated(prev, m.now)
        return None
    if is_quiet(job, prev, m.since_cut):
        m.out.quiet.append(key)  # the store keeps its record; only last_seen moves
        return None
    state = prev.progress if prev is not None else None
    seen = (state or {}).get("record")
    if m.progress is not None and job.get("verdict") == Verdict.RUNNING:
        o = observe(job, state, now=m.now, settings=m.progress, progress_regex=m.progress_regex)
        job = judge(job, states=m.snap.states, progress=(o.verdict, o.cause))
        seen, state = o.record, o.state
    rec = job_record(m.cluster, m.scheduler, job, observed_at=m.now, remote_now=m.snap.now)
    rec["progress"] = seen
    _compare(rec, key, prev, m.now)
    if ended is not None:
        rec["previous_verdict"] = ended
    terminal = is_terminal(job)
    m.out.updates.append(
        StoredJob(
            key=key,
            job_id=rec["job_id"],
            array_job_id=rec["array_job_id"],
            first_seen=prev.first_seen if prev else m.now,
            last_seen=m.now,
            verdict=rec["verdict"],
            terminal=terminal,
            active=not terminal,
            stdout=rec["stdout"] or (prev.stdout if prev else None),
            stderr=rec["stderr"] or (prev.stderr if prev else None),
            record=rec,
            progress=state,
        )
    )
    return rec


def _compare(rec: dict[str, Any], key: Key, prev: StoredJob | None, now: float) -> None:
    """The store's fields of a record: `first_seen`, `new`, what changed since the last
    poll, and the verdict it had then."""
    if prev is None:
        changed: list[str] = []
        rec.update(first_seen=rfc3339(now), new=True, previous_verdict=None)
    else:
        changed = _changed(prev.view, rec)
        if prev.key != key and prev.view.get("restarts") != rec.get("restarts"):
            changed.append("restarts")  # a requeued attempt (earlier_attempt)
        rec.update(first_seen=rfc3339(prev.first_seen), new=False, previous_verdict=prev.verdict)
    rec["changed_since_last_poll"] = prev is None or bool(changed)
    rec["changed_fields"] = changed
