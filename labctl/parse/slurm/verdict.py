"""SLURM state (+ exit code, reason, step rows, log fingerprints) -> labctl's verdict.

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
                                                 script; fixture job 12)
OUT_OF_MEMORY                     out_of_memory  oom
TIMEOUT                           timeout        time_limit
DEADLINE                          timeout        deadline (cannot end before --deadline)
CANCELLED [by uid]                cancelled      user_cancel / admin_cancel / cancelled
PREEMPTED                         preempted      preemption
NODE_FAIL / BOOT_FAIL             node_fail      node_fail / boot_fail
SPECIAL_EXIT                      failed         special_exit
REVOKED                           unknown        revoked (federation: lives on a sibling)
empty, anything else              unknown        None / unknown_state

Kill fingerprints from the job's log (`kill_markers`) refine CANCELLED and FAILED: `DUE TO
TIME LIMIT` -> timeout, `DUE TO PREEMPTION` -> preempted, `DUE TO NODE FAILURE` ->
node_fail, an oom-kill line -> out_of_memory.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from labctl.verdicts import BLOCKED_CAUSES, SCHEDULER_VERDICTS, kill_markers

VERDICTS = SCHEDULER_VERDICTS
__all__ = ["BLOCKED_CAUSES", "VERDICTS", "classify", "kill_markers", "pending_cause", "verdict"]

_STATE_VERDICT: dict[str, tuple[str, str | None]] = {
    "CONFIGURING": ("pending", "configuring"),
    "POWER_UP_NODE": ("pending", "configuring"),
    "REQUEUED": ("pending", "requeued"),
    "REQUEUE_FED": ("pending", "requeued"),
    "REQUEUE_HOLD": ("pending", "held"),
    "RESV_DEL_HOLD": ("pending", "held"),
    "SUSPENDED": ("pending", "suspended"),
    "STOPPED": ("pending", "stopped"),
    "RUNNING": ("running", None),
    "RESIZING": ("running", None),
    "SIGNALING": ("running", None),
    "UPDATE_DB": ("running", None),
    "COMPLETING": ("running", "completing"),
    "STAGE_OUT": ("running", "completing"),
    "COMPLETED": ("completed", None),
    "OUT_OF_MEMORY": ("out_of_memory", "oom"),
    "TIMEOUT": ("timeout", "time_limit"),
    "DEADLINE": ("timeout", "deadline"),
    "PREEMPTED": ("preempted", "preemption"),
    "NODE_FAIL": ("node_fail", "node_fail"),
    "BOOT_FAIL": ("node_fail", "boot_fail"),
    "SPECIAL_EXIT": ("failed", "special_exit"),
    "REVOKED": ("unknown", "revoked"),
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


def classify(
    state: str | None,
    *,
    exit_code: int | None = None,
    signal: int | None = None,
    reason: str | None = None,
    cancelled_by: int | None = None,
    owner_uid: int | None = None,
    batch_state: str | None = None,
    markers: Iterable[str] = (),
) -> tuple[str, str | None]:
    """(verdict, cause) for one job. `state` is the base state (`parse_state`), the exit code
    the combined one (`combine_exit`), `batch_state` the `.batch` step's base state,
    `owner_uid` the job owner's uid (tells a user cancel from an admin cancel)."""
    marks = frozenset(markers)
    if not state:
        return "unknown", None
    if state == "PENDING":
        return "pending", pending_cause(reason)
    if state == "CANCELLED":
        if "time_limit" in marks:
            return "timeout", "time_limit"
        if "preemption" in marks:
            return "preempted", "preemption"
        if "node_failure" in marks:
            return "node_fail", "node_fail"
        if "oom" in marks:
            return "out_of_memory", "oom"
        if cancelled_by is not None and owner_uid is not None:
            return "cancelled", "user_cancel" if cancelled_by == owner_uid else "admin_cancel"
        return "cancelled", "cancelled"
    if state == "FAILED":
        if "oom" in marks:
            return "out_of_memory", "oom"
        if signal == 9 and batch_state == "CANCELLED":
            return "out_of_memory", "memory_limit"
        if signal:
            return "failed", "signal"
        return "failed", "exit_code"
    if state in _STATE_VERDICT:
        return _STATE_VERDICT[state]
    return "unknown", "unknown_state"


def verdict(
    state: str | None,
    exit_code: int | None = None,
    signal: int | None = None,
    reason: str | None = None,
    *,
    cancelled_by: int | None = None,
    owner_uid: int | None = None,
    batch_state: str | None = None,
    markers: Iterable[str] = (),
) -> str:
    """Just the verdict of `classify`."""
    return classify(
        state,
        exit_code=exit_code,
        signal=signal,
        reason=reason,
        cancelled_by=cancelled_by,
        owner_uid=owner_uid,
        batch_state=batch_state,
        markers=markers,
    )[0]


def classify_record(rec: dict[str, Any]) -> None:
    """Set a parsed job record's `verdict` and `cause` from its own fields."""
    rec["verdict"], rec["cause"] = classify(
        rec["state"],
        exit_code=rec["exit_code"],
        signal=rec["signal"],
        reason=rec["reason"],
        cancelled_by=rec["cancelled_by"],
        owner_uid=rec["uid"],
    )
