"""Jobs the store knows that the scheduler no longer reports.

For each job the store last saw alive (`vanished`):
- a pending array group whose tasks now show up on their own: dissolved, forgotten;
- the same id and task with another submit time (requeue, or a reused id): superseded;
- otherwise `unknown` (cause `vanished`: `labctl.poll.verdict.decide` says so), never
  `completed`: emitted once, when it vanishes, and still asked about by id until
  `forget_after_s`, so a late answer from slurmdbd turns it back into a real verdict.
A finished job the store saw end that the scheduler has since forgotten is reported again,
from the store's record, when `--since` reaches back to its end (`forgotten`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from labctl.cluster.snapshot import Key
from labctl.poll.attempts import continues
from labctl.poll.model import TERMINAL_VERDICTS, StoredJob
from labctl.poll.verdict import decide
from labctl.records import parse_rfc3339, rfc3339
from labctl.verdicts import Verdict


def since_asks(job: Mapping[str, Any], since_cut: float | None) -> bool:
    """`--since` reaches back to this job's end (or its end is unknown)."""
    end = job.get("end_epoch")
    return since_cut is not None and (end is None or end >= since_cut)


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
        if not since_asks({"end_epoch": parse_rfc3339(prev.view.get("end_time"))}, since_cut):
            continue
        later = attempts[key[:2]]
        if any(o.key[2] > key[2] and continues(prev.view, o.view) for o in later):
            continue
        out.append(prev)
    return out


def vanished(
    observed: Mapping[Key, Any],
    stored: Mapping[Key, StoredJob],
    *,
    now: float,
    forget_after_s: float,
) -> tuple[list[dict[str, Any]], list[StoredJob]]:
    """(records to emit, store updates) for the active stored jobs not observed.
    `observed`: key -> the job's array job id (or its facts, which hold it)."""
    records: list[dict[str, Any]] = []
    updates: list[StoredJob] = []
    arrays = {str(a) for a in map(_array_id, observed.values()) if a}
    same_id = {(k[0], k[1]) for k in observed}
    for key, prev in stored.items():
        if key in observed or not prev.active:
            continue
        group = key[1] < 0 and prev.view.get("array_tasks") is not None
        if (group and prev.array_job_id in arrays) or (key[0], key[1]) in same_id:
            updates.append(_retire(prev))  # dissolved array group / superseded attempt
            continue
        if now - prev.last_seen > forget_after_s:
            updates.append(_retire(prev))
            continue
        if prev.verdict == Verdict.UNKNOWN:
            continue  # already reported as vanished; still asked about by id
        rec = prev.record
        verdict, cause = decide({**rec, "vanished": True})
        rec.update(
            state=None,
            state_raw=None,
            verdict=verdict,
            cause=cause,
            source="store",
            observed_at=rfc3339(now),
            new=False,
            previous_verdict=prev.verdict,
            changed_since_last_poll=True,
            changed_fields=["state", "verdict", "cause"],
            message=(
                f"neither the queue nor accounting knows job {rec.get('job_id')} any more "
                f"(last seen {rfc3339(prev.last_seen)} as {prev.view.get('state')})"
            ),
        )
        records.append(rec)
        updates.append(
            StoredJob(**{**prev.fields(), "verdict": verdict, "record": rec, "active": True})
        )
    return records, updates


def _array_id(seen: Any) -> Any:
    return seen.get("array_job_id") if isinstance(seen, Mapping) else seen


def _retire(prev: StoredJob) -> StoredJob:
    return StoredJob(
        **{**prev.fields(), "active": False, "terminal": prev.verdict in TERMINAL_VERDICTS}
    )
