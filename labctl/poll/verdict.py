"""A job's verdict, decided in one place: `decide(job, states=..., progress=...)`.

The job is a dict of facts (`labctl.cluster.snapshot`): the scheduler's state, reason,
exit code and signal, who cancelled it, its `.batch` step, the kill lines poll read in
its log (`log_markers`), and `vanished` (poll's fact: the store saw the job alive, the
scheduler no longer reports it). Nothing else sets a verdict; every caller (poll's log
reading, its merge with the store, `labctl.poll.gone`) asks this function.

A vanished job is `unknown`, cause `vanished`, whatever its last state was: never a guess.

SLURM's states (`states=None`):

SLURM state                       verdict        cause
--------------------------------  -------------  -----------------------------------------
PENDING                           pending        from Reason: held, dependency,
                                                 dependency_never_satisfied, cannot_run,
                                                 array_throttle, begin_time, queued
CONFIGURING, POWER_UP_NODE        pending        configuring (nodes boot, script not started)
REQUEUED, REQUEUE_FED             pending        requeued (back to the queue)
REQUEUE_HOLD, RESV_DEL_HOLD       pending        held
SUSPENDED / STOPPED               pending        suspended / stopped (not running, not over)
RUNNING, RESIZING, SIGNALING      running        None
COMPLETING, STAGE_OUT             running        completing (not over: exit not final)
COMPLETED                         completed      None
FAILED                            failed         exit_code / signal
FAILED 0:9 + .batch CANCELLED     out_of_memory  memory_limit (OverMemoryKill SIGKILLed the
                                                 script: an inference, said so by the cause)
OUT_OF_MEMORY                     out_of_memory  oom
TIMEOUT                           timeout        time_limit
DEADLINE                          timeout        deadline (cannot end before --deadline)
CANCELLED [by uid]                cancelled      user_cancel / admin_cancel / cancelled
PREEMPTED                         preempted      preemption
NODE_FAIL / BOOT_FAIL             node_fail      node_fail / boot_fail
SPECIAL_EXIT                      failed         special_exit
REVOKED                           unknown        revoked (federation: lives on a sibling)
empty, anything else              unknown        None / unknown_state

Kill lines in the log (`labctl.verdicts.KILLED`) refine CANCELLED (time limit, preemption,
node failure, oom-kill) and FAILED (oom-kill: `out_of_memory`, cause `oom`).

A job table's states (`states` given, the cluster's `states` setting): exact match, then
case-insensitive; a state that already is a verdict name maps to itself; anything else is
`unknown` with cause `unmapped_state`. A `cause` the row carries wins over none.

Progress: a job the scheduler says is running, whose progress poll looked at
(`labctl.poll.running`), takes the progress verdict (running-progressing / -stalled /
-unverified, or the terminal verdict of a death marker) and its cause.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from labctl.verdicts import KILLED, SCHEDULER_VERDICTS, Kill, Verdict

V = Verdict
Judgement = tuple[str, str | None]  # (verdict, cause)

_STATE_VERDICT: dict[str, Judgement] = {
    "CONFIGURING": (V.PENDING, "configuring"),
    "POWER_UP_NODE": (V.PENDING, "configuring"),
    "REQUEUED": (V.PENDING, "requeued"),
    "REQUEUE_FED": (V.PENDING, "requeued"),
    "REQUEUE_HOLD": (V.PENDING, "held"),
    "RESV_DEL_HOLD": (V.PENDING, "held"),
    "SUSPENDED": (V.PENDING, "suspended"),
    "STOPPED": (V.PENDING, "stopped"),
    "RUNNING": (V.RUNNING, None),
    "RESIZING": (V.RUNNING, None),
    "SIGNALING": (V.RUNNING, None),
    "UPDATE_DB": (V.RUNNING, None),
    "COMPLETING": (V.RUNNING, "completing"),
    "STAGE_OUT": (V.RUNNING, "completing"),
    "COMPLETED": (V.COMPLETED, None),
    "OUT_OF_MEMORY": (V.OUT_OF_MEMORY, "oom"),
    "TIMEOUT": (V.TIMEOUT, "time_limit"),
    "DEADLINE": (V.TIMEOUT, "deadline"),
    "PREEMPTED": (V.PREEMPTED, "preemption"),
    "NODE_FAIL": (V.NODE_FAIL, "node_fail"),
    "BOOT_FAIL": (V.NODE_FAIL, "boot_fail"),
    "SPECIAL_EXIT": (V.FAILED, "special_exit"),
    "REVOKED": (V.UNKNOWN, "revoked"),
}
# Pending reasons that will not clear by waiting: a person has to act.
_CANNOT_RUN_REASONS = frozenset(
    {
        "PartitionConfig",
        "PartitionNodeLimit",
        "PartitionTimeLimit",
        "InvalidAccount",
        "InvalidQOS",
        "BadConstraints",
        "QOSJobLimit",
        "AccountNotAllowed",
        "FrontEndDown",
    }
)
# The kills that explain a CANCELLED job, strongest first (a requeue line is not one: the
# job comes back as a new attempt).
_CANCEL_KILLS = (Kill.TIME_LIMIT, Kill.PREEMPTION, Kill.NODE_FAILURE, Kill.OOM)


def decide(
    job: Mapping[str, Any],
    *,
    states: Mapping[str, str] | None = None,
    progress: Judgement | None = None,
) -> Judgement:
    """(verdict, cause) of one job. `states`: how a job table's state words map to
    verdicts (None: the job's state is SLURM's); `progress`: the progress verdict and cause
    of a running job (`labctl.poll.running`), None when progress was not looked at."""
    if job.get("vanished"):
        return V.UNKNOWN, "vanished"
    if states is None:
        verdict, cause = _slurm(job)
    else:
        verdict, cause = _mapped(job.get("state"), states)
        cause = job.get("cause") or cause
    if progress is not None and verdict == V.RUNNING:
        return progress[0], progress[1] or cause
    return verdict, cause


def pending_cause(reason: str | None) -> str:
    """Why a job waits, from squeue/sacct/scontrol's Reason (all three spellings)."""
    if not reason:
        return "queued"
    r = reason.strip()
    if r.startswith("JobHeld") or r.replace("_", " ") == "job requeued in held state":
        return "held"
    if r == "DependencyNeverSatisfied":
        return "dependency_never_satisfied"
    if r.startswith("Dependency"):
        return "dependency"
    if r == "JobArrayTaskLimit":
        return "array_throttle"
    if r == "BeginTime":
        return "begin_time"
    if r in _CANNOT_RUN_REASONS:
        return "cannot_run"
    return "queued"


def _slurm(job: Mapping[str, Any]) -> Judgement:
    state = job.get("state")
    if not state:
        return V.UNKNOWN, None
    if state == "PENDING":
        return V.PENDING, pending_cause(job.get("reason"))
    kills = frozenset(job.get("log_markers") or ())
    if state == "CANCELLED":
        for kill in _CANCEL_KILLS:
            if kill in kills:
                return KILLED[kill]
        by, owner = job.get("cancelled_by"), job.get("uid")
        if by is not None and owner is not None:
            return V.CANCELLED, "user_cancel" if by == owner else "admin_cancel"
        return V.CANCELLED, "cancelled"
    if state == "FAILED":
        if Kill.OOM in kills:
            return KILLED[Kill.OOM]
        batch = next((s for s in job.get("steps") or () if s.get("step") == "batch"), None)
        signal = job.get("signal")
        if signal == 9 and batch is not None and batch.get("state") == "CANCELLED":
            return V.OUT_OF_MEMORY, "memory_limit"
        return V.FAILED, "signal" if signal else "exit_code"
    return _STATE_VERDICT.get(state, (V.UNKNOWN, "unknown_state"))


def _mapped(state: str | None, states: Mapping[str, str]) -> Judgement:
    if state is None:
        return V.UNKNOWN, None
    if state in states:
        return states[state], None
    folded = {k.casefold(): v for k, v in states.items()}
    if state.casefold() in folded:
        return folded[state.casefold()], None
    if state.casefold() in SCHEDULER_VERDICTS:
        return state.casefold(), None
    return V.UNKNOWN, "unmapped_state"


def judge(
    job: Mapping[str, Any],
    *,
    states: Mapping[str, str] | None = None,
    progress: Judgement | None = None,
) -> dict[str, Any]:
    """A copy of the job with the `verdict` and `cause` that `decide` gives it."""
    verdict, cause = decide(job, states=states, progress=progress)
    return {**job, "verdict": verdict, "cause": cause}
