"""Preemption on the real test SLURM: a job in `urgent` cancels a `scavenger` job that holds
the whole node (scripts/slurm-up configures preempt/partition_prio, PreemptMode=CANCEL).

poll must call it `preempted` (not failed, not cancelled by a user), and diagnose, fed poll's
record, must name preemption from the scheduler's state and the slurmstepd line in the log.
"""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import pytest
from helpers.cli import run_labctl
from helpers.slurm import local_cluster, poll, sbatch, slurm
from schema_check import assert_valid

pytestmark = pytest.mark.slurm

SCAVENGER = """#!/bin/bash
for i in $(seq 1 600); do echo "step $i loss 0.5"; sleep 1; done
"""


def _state(job_id: str) -> dict[str, str]:
    out = slurm("sacct", "--noheader", "-P", "-o", "JobID,State", "-j", job_id)
    return dict(line.split("|", 1) for line in out.splitlines() if line)


def _attempts(job_id: str) -> list[str]:
    """`id|State` of every attempt of a job (sacct --duplicates), oldest first."""
    out = slurm("sacct", "--noheader", "-P", "-D", "-X", "-o", "JobID,State", "-j", job_id)
    return out.split()


def _wait(what: str, cond, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            queue = slurm("squeue", "-a", "-o", "%i %P %j %T %C %R", check=False)
            raise AssertionError(f"timed out waiting for {what}; the queue:\n{queue}")
        time.sleep(0.5)


@pytest.fixture(scope="module")
def preempted(tmp_path_factory: pytest.TempPathFactory):
    workdir = tmp_path_factory.mktemp("preempt")
    workdir.chmod(0o777)
    cpus = slurm("sinfo", "-h", "-p", "scavenger", "-o", "%c").split()[0]
    tag = f"pre{uuid.uuid4().hex[:6]}"
    low = sbatch(workdir, "-J", f"{tag}-low", "-p", "scavenger", "-c", cpus, script=SCAVENGER)
    high = None
    try:
        _wait("the scavenger job to run", lambda: _state(low).get(low) == "RUNNING")
        high = sbatch(workdir, "-J", f"{tag}-high", "-p", "urgent", "-c", "1", wrap="echo urgent")
        _wait(
            "the scavenger job to be preempted and its .batch row written",
            lambda: (
                _state(low).get(low) == "PREEMPTED"
                and _state(low).get(f"{low}.batch", "RUNNING") not in ("RUNNING", "PENDING")
            ),
        )
        _wait("the urgent job to finish", lambda: _state(high).get(high) == "COMPLETED")
        yield workdir, low, high
    finally:
        slurm("scancel", low, *([high] if high else []), check=False)


def test_a_preempted_job_is_preempted_not_failed_and_diagnose_says_why(
    tmp_path: Path, preempted
) -> None:
    workdir, low, high = preempted
    res = poll(tmp_path, [local_cluster()])
    jobs = {r["job_id"]: r for r in res.records if r["kind"] == "job"}
    assert (jobs[low]["verdict"], jobs[low]["cause"]) == ("preempted", "preemption")
    assert jobs[low]["partition"] == "scavenger" and jobs[low]["end_time"] is not None
    assert (jobs[high]["verdict"], jobs[high]["partition"]) == ("completed", "urgent")
    log = Path(jobs[low]["stdout"])
    assert log.parent == workdir and "step 1 loss" in log.read_text()

    mine = json.dumps(jobs[low])
    diag = run_labctl("diagnose", input=mine + "\n")
    assert_valid("diagnose", diag.records)
    (job,) = diag.records
    d = job["diagnosis"]
    assert (d["category"], d["retryable"], d["action"]["type"]) == (
        "preemption",
        True,
        "resubmit",
    ), d
    assert any("DUE TO PREEMPTION" in e["text"] for e in d["evidence"]), d["evidence"]


def test_a_requeued_job_is_the_same_job_on_its_next_attempt(tmp_path: Path) -> None:
    """In `spot` (PreemptMode=REQUEUE) preemption sends the job back to the queue with a new
    submit time and Restarts=1. poll must not lose it, call it new, or call it unknown."""
    workdir = tmp_path / "jobs"
    workdir.mkdir(mode=0o777)
    workdir.chmod(0o777)
    cpus = slurm("sinfo", "-h", "-p", "spot", "-o", "%c").split()[0]
    tag = f"rq{uuid.uuid4().hex[:6]}"
    job = sbatch(workdir, "-J", f"{tag}-spot", "-p", "spot", "-c", cpus, script=SCAVENGER)
    high = None
    state = tmp_path / "poll"
    state.mkdir()
    try:
        _wait("the spot job to run", lambda: _state(job).get(job) == "RUNNING")
        first = poll(state, [local_cluster()])
        (before,) = [r for r in first.records if r.get("job_id") == job]
        assert (before["state"], before["restarts"], before["new"]) == ("RUNNING", 0, True)
        high = sbatch(workdir, "-J", f"{tag}-urgent", "-p", "urgent", "-c", "1", wrap="sleep 30")
        _wait(  # squeue: the new attempt, pending; sacct: the attempt that was preempted
            "the spot job to be requeued and its first attempt accounted",
            lambda: (
                "Restarts=1" in slurm("scontrol", "show", "job", job)
                and f"{job}|PREEMPTED" in _attempts(job)
            ),
        )
        # within seconds slurmdbd also has the new attempt's PENDING record, and from then on
        # `sacct --jobs` without --duplicates shows only that one: poll must still see both
        _wait("the new attempt's record", lambda: f"{job}|PENDING" in _attempts(job))
        assert _state(job).get(job) == "PENDING"
        second = poll(state, [local_cluster()])
        mine = [r for r in second.records if r.get("job_id") == job]
        # one record for the job: not a second, "new" job, and not an unknown one
        assert [r["verdict"] for r in mine] == ["pending"], mine
        (after,) = mine
        assert after["restarts"] == 1 and after["new"] is False
        assert after["first_seen"] == before["first_seen"]
        assert after["previous_verdict"] == "preempted"  # how the last attempt ended
        assert {"state", "restarts", "submit_time"} <= set(after["changed_fields"])
        assert after["submit_time"] > before["submit_time"]
    finally:
        slurm("scancel", job, *([high] if high else []), check=False)
