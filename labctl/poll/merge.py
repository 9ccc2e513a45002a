"""What one cluster's snapshot means against what the store remembers (pure).

For each job the scheduler reported: its verdict (`labctl.poll.verdict.decide`, with its
progress for a running job), its record, with `first_seen`, `new`,
`changed_since_last_poll`, `changed_fields` and `previous_verdict` from the store.
A job is emitted when it is not over, or is new, or changed since the last poll, or (with
`--since`) ended after `since_cut`: a finished job is reported by the poll that first
sees it finished, not by every poll for as long as sacct's window still returns it.

For each job the store last saw alive that the scheduler no longer reports:
- a pending array group whose tasks now show up on their own: dissolved, forgotten;
- the same id and task with another submit time (requeue, or a reused id): superseded.
  A requeued attempt (`earlier_attempt`) continues the job it requeues: its record keeps
  `first_seen`, is not `new`, and says what changed (`restarts`, `submit_time`, `state`);
- otherwise `unknown` (cause `vanished`), never `completed`: emitted once, when it
  vanishes, and still asked about by id until `forget_after_s`, so a late answer from
  slurmdbd turns it back into a real verdict.
A finished job the store saw end that the scheduler has since forgotten is reported again,
from the store's record, when `--since` reaches back to its end (`forgotten`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from labctl.cluster.snapshot import Key, Snapshot, job_key
from labctl.poll.model import (
    TERMINAL_VERDICTS,
    WATCHED_FIELDS,
    StoredJob,
    is_terminal,
    job_record,
    watched_view,
)
from labctl.poll.running import ProgressSettings, observe
from labctl.poll.verdict import judge
from labctl.records import parse_rfc3339, rfc3339
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
    if prev is None or not is_terminal(job) or prev.verdict == "unknown":
        return False
    return not since_asks(job, since_cut) and not _changed(prev.record, watched_view(job))


def since_asks(job: dict[str, Any], since_cut: float | None) -> bool:
    """`--since` reaches back to this job's end (or its end is unknown)."""
    end = job.get("end_epoch")
    return since_cut is not None and (end is None or end >= since_cut)


def squeue_leftover(job: dict[str, Any], prev: StoredJob | None) -> bool:
    """squeue still lists a finished job (for MinJobAge) after sacct's window has moved past
    it. Its record says less than the one the store has from sacct (who cancelled it, the
    `.batch` exit), so the difference is not news and the store's record stands."""
    return (
        prev is not None
        and prev.terminal
        and job.get("source") == "squeue"
        and "sacct" in str(prev.record.get("source"))
        and prev.record.get("state") == job.get("state")
        and is_terminal(job)
    )


def continues(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """`new` (submitted later) is the next attempt of the job `old` was, not another job
    that got the same id after a controller reset: same name and user, and `new` has
    restarted more often (squeue gives the count; sacct 22.05 does not: unknown passes)."""
    if (old.get("name"), old.get("user")) != (new.get("name"), new.get("user")):
        return False
    after, before = new.get("restarts"), old.get("restarts")
    return after is None or after > (before or 0)


def fold_attempts(jobs: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[Key, str]]:
    """One record per job: when the scheduler reports several attempts of a requeued job
    (squeue the new one, `sacct -D` the ones preempted or requeued before it), the latest
    is the job and the verdict of the attempt just before it becomes its
    `previous_verdict`. A reused id (another job, see `continues`) is kept apart."""
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
            if mine and mine[-1].get("verdict"):
                ended[job_key(new)] = mine[-1]["verdict"]
    return [j for j in jobs if id(j) not in folded], ended


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


def earlier_attempt(
    job: dict[str, Any], key: Key, candidates: Iterable[StoredJob]
) -> StoredJob | None:
    """The stored attempt a requeued job continues, among the active stored jobs with its id
    and task: submitted earlier (a requeue resets the submit time) and `continues`."""
    for prev in candidates:
        if prev.key[2] < key[2] and continues(prev.record, job):
            return prev
    return None


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
    `window_start`: the sacct window's start (cluster clock), see `out_of_window`."""
    out = ClusterUpdate()
    observed: dict[Key, dict[str, Any]] = {}
    # every job's verdict, from the scheduler's facts and the kill lines read in its log
    jobs, ended_attempt = fold_attempts([judge(j, states=snap.states) for j in snap.jobs])
    attempts: dict[tuple[str, int], list[StoredJob]] = {}
    for stored_job in stored.values():
        if stored_job.active:
            attempts.setdefault(stored_job.key[:2], []).append(stored_job)
    for job in jobs:
        key = job_key(job)
        if out_of_window(job, key, stored, window_start):
            continue
        observed[key] = job
        prev = stored.get(key) or earlier_attempt(job, key, attempts.get(key[:2], ()))
        out.seen += 1
        if prev is not None and squeue_leftover(job, prev):
            out.quiet.append(key)  # the store's fuller record stands
            if since_asks(job, since_cut):  # reported again: the store's record
                out.records.append(restated(prev, now))
            continue
        if is_quiet(job, prev, since_cut):
            out.quiet.append(key)  # the store keeps its record; only last_seen moves
            continue
        state = prev.progress if prev is not None else None
        seen = (state or {}).get("record")
        if progress is not None and job.get("verdict") == Verdict.RUNNING:
            verdict, cause, seen, state = observe(
                job, state, now=now, settings=progress, progress_regex=progress_regex
            )
            job = judge(job, states=snap.states, progress=(verdict, cause))
        rec = job_record(cluster, scheduler, job, observed_at=now, remote_now=snap.now)
        rec["progress"] = seen
        if prev is None:
            changed: list[str] = []
            rec.update(first_seen=rfc3339(now), new=True, previous_verdict=None)
        else:
            changed = _changed(prev.record, rec)
            if prev.key != key and prev.record.get("restarts") != rec.get("restarts"):
                changed.append("restarts")  # a requeued attempt (earlier_attempt)
            rec.update(
                first_seen=rfc3339(prev.first_seen), new=False, previous_verdict=prev.verdict
            )
        if key in ended_attempt:  # how the attempt before this one ended (e.g. preempted)
            rec["previous_verdict"] = ended_attempt[key]
        rec["changed_since_last_poll"] = prev is None or bool(changed)
        rec["changed_fields"] = changed
        terminal = is_terminal(job)
        out.records.append(rec)
        out.updates.append(
            StoredJob(
                key=key,
                job_id=rec["job_id"],
                array_job_id=rec["array_job_id"],
                first_seen=prev.first_seen if prev else now,
                last_seen=now,
                verdict=rec["verdict"],
                terminal=terminal,
                active=not terminal,
                stdout=rec["stdout"] or (prev.stdout if prev else None),
                stderr=rec["stderr"] or (prev.stderr if prev else None),
                record=rec,
                progress=state,
            )
        )
    _vanished(out, cluster, observed, stored, now=now, forget_after_s=forget_after_s)
    if since_cut is not None:
        out.records.extend(restated(p, now) for p in forgotten(observed, stored, since_cut))
    return out


def restated(prev: StoredJob, now: float) -> dict[str, Any]:
    """The store's record of a finished job, reported again (`--since`): not news."""
    return dict(prev.record, observed_at=rfc3339(now), new=False, changed_fields=[]) | {
        "changed_since_last_poll": False,
        "previous_verdict": prev.verdict,
    }


def forgotten(
    observed: Mapping[Key, Any], stored: Mapping[Key, StoredJob], since_cut: float
) -> list[StoredJob]:
    """Finished jobs the store saw end after `since_cut` that the scheduler no longer
    reports (sacct's rows purged, a job table that drops finished jobs): for `--since`, the
    store's record is the answer. Not an attempt of a job the scheduler still reports, nor
    one a later stored attempt continues (a requeued job is reported as its latest attempt)."""
    same_id = {k[:2] for k in observed}
    attempts: dict[tuple[str, int], list[StoredJob]] = {}
    for prev in stored.values():
        attempts.setdefault(prev.key[:2], []).append(prev)
    out = []
    for key, prev in stored.items():
        if key in observed or prev.active or key[:2] in same_id:
            continue
        if not prev.terminal or prev.verdict not in TERMINAL_VERDICTS:
            continue
        if not since_asks({"end_epoch": parse_rfc3339(prev.record.get("end_time"))}, since_cut):
            continue
        later = attempts[key[:2]]
        if any(o.key[2] > key[2] and continues(prev.record, o.record) for o in later):
            continue
        out.append(prev)
    return out


def _vanished(
    out: ClusterUpdate,
    cluster: str,
    observed: dict[Key, dict[str, Any]],
    stored: dict[Key, StoredJob],
    *,
    now: float,
    forget_after_s: float,
) -> None:
    arrays = {str(j["array_job_id"]) for j in observed.values() if j.get("array_job_id")}
    same_id = {(k[0], k[1]) for k in observed}
    for key, prev in stored.items():
        if key in observed or not prev.active:
            continue
        group = key[1] < 0 and prev.record.get("array_tasks") is not None
        if (group and prev.array_job_id in arrays) or (key[0], key[1]) in same_id:
            out.updates.append(_retire(prev))  # dissolved array group / superseded attempt
            continue
        if now - prev.last_seen > forget_after_s:
            out.updates.append(_retire(prev))
            continue
        if prev.verdict == "unknown":
            continue  # already reported as vanished; still asked about by id
        rec = dict(prev.record)
        rec.update(
            state=None,
            state_raw=None,
            verdict="unknown",
            cause="vanished",
            source="store",
            observed_at=rfc3339(now),
            new=False,
            previous_verdict=prev.verdict,
            changed_since_last_poll=True,
            changed_fields=["state", "verdict", "cause"],
            message=(
                f"neither the queue nor accounting knows job {rec.get('job_id')} any more "
                f"(last seen {rfc3339(prev.last_seen)} as {prev.record.get('state')})"
            ),
        )
        out.records.append(rec)
        out.updates.append(
            StoredJob(**{**prev.__dict__, "verdict": "unknown", "record": rec, "active": True})
        )


def _retire(prev: StoredJob) -> StoredJob:
    return StoredJob(
        **{**prev.__dict__, "active": False, "terminal": prev.verdict in TERMINAL_VERDICTS}
    )
