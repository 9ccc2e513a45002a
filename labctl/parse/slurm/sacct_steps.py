"""A job's rows in sacct: its allocation row with the step rows after it (`group_sacct`),
and what the steps say about how the job ended (`combine_exit`, `summarise_sacct_job`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from labctl.parse.slurm.table import TERMINAL_STATES, JobRecord, new_record, ran_on_a_node


def group_sacct(records: Iterable[JobRecord]) -> list[dict[str, Any]]:
    """Allocation rows with their step rows: `[{"job": rec | None, "steps": [rec, ...]}]`.

    Steps attach to the latest preceding allocation row with the same id, so `sacct -D`
    (a requeued job's earlier attempts, each followed by its own steps) groups correctly.
    Steps without an allocation row (`sacct -j 12.batch`) get `"job": None`.
    """
    groups: list[dict[str, Any]] = []
    by_id: dict[str, dict[str, Any]] = {}
    for rec in records:
        key = rec["job_id"]
        if rec["step"] is None:
            group: dict[str, Any] = {"job": rec, "steps": []}
            groups.append(group)
            by_id[key] = group
        else:
            found = by_id.get(key)
            if found is None:
                found = {"job": None, "steps": []}
                groups.append(found)
                by_id[key] = found
            found["steps"].append(rec)
    return groups


_ENDED_BY_SIGNAL = frozenset({"TIMEOUT", "CANCELLED", "PREEMPTED", "DEADLINE"})


def combine_exit(
    job: JobRecord, steps: Sequence[JobRecord]
) -> tuple[int | None, int | None, str | None]:
    """The exit code and signal a user should see, and where they came from
    (`"job"`, `"batch"`, or None when there is none).

    The allocation row's `code:signal` wins when it is not `0:0` (FAILED `3:0`, OOM `0:9`);
    otherwise the `.batch` step's (TIMEOUT and cancels: job `0:0`, batch `0:15`). `.extern`
    is ignored (COMPLETED even for failed jobs, CANCELLED on node failure). A job that
    never ran on a node (cancelled while pending, DEADLINE before start) or is not over has
    none; NODE_FAIL steps have an empty ExitCode, which also gives none.
    """
    if job["state"] not in TERMINAL_STATES or not ran_on_a_node(job):
        return None, None, None
    code, sig = job["exit_code"], job["signal"]
    batch = next((s for s in steps if s["step"] == "batch"), None)
    if code or sig:
        return code, sig, "job"
    if batch is not None:
        if batch["exit_code"] is None and batch["signal"] is None:
            return None, None, None
        if batch["exit_code"] or batch["signal"]:
            return batch["exit_code"], batch["signal"], "batch"
    if code is None and sig is None:
        return None, None, None
    if batch is None and job["state"] in _ENDED_BY_SIGNAL:
        # The job row of a timed-out or cancelled job always reads 0:0; the signal lives
        # on the `.batch` row, which slurmdbd may not have written yet. Unknown, not 0.
        return None, None, None
    return code, sig, "job"


_STEP_FAILED = frozenset({"FAILED", "OUT_OF_MEMORY", "NODE_FAIL", "TIMEOUT"})


def summarise_sacct_job(group: Mapping[str, Any]) -> JobRecord:
    """One job record: the allocation row plus `exit_code`/`signal` from `combine_exit`,
    `exit_source`, `steps` (compact: the `.batch` step's state tells an OverMemoryKill
    from a plain signal) and `failed_steps`."""
    job: JobRecord | None = group["job"]
    steps: list[JobRecord] = group["steps"]
    if job is None:  # only step rows came back: nothing to say about the job itself
        rec = new_record("sacct")
        if steps:
            first = steps[0]
            for key in ("job_id", "job_id_raw", "array_job_id", "array_task_id", "het_job_id"):
                rec[key] = first[key]
            rec["het_offset"] = first["het_offset"]
        rec.update(exit_source=None, steps=[], failed_steps=[])
        return rec
    rec = dict(job)
    code, sig, source = combine_exit(job, steps)
    rec["exit_code"], rec["signal"], rec["exit_source"] = code, sig, source
    rec["steps"] = [
        {
            "step": s["step"],
            "state": s["state"],
            "cancelled_by": s["cancelled_by"],
            "exit_code": s["exit_code"],
            "signal": s["signal"],
        }
        for s in steps
    ]
    rec["failed_steps"] = [
        s["step"]
        for s in steps
        if s["step"] != "extern" and (s["state"] in _STEP_FAILED or (s["exit_code"] or 0) > 0)
    ]
    return rec
