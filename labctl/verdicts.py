"""The verdict vocabulary: every word labctl uses for how a job is doing, in one place.

A verdict is what labctl concludes about a job; `cause` (free text, snake_case) says why.
`labctl.poll.verdict.decide` is the one function that decides a job's verdict; everything
else (severity, diagnose, table, progress) reads these names and sets from here.

    pending               waiting to start (held, dependency, queue …: see `cause`)
    running               the scheduler says RUNNING, progress not looked at
    running-progressing   two polls saw its counter rise, the later one within the allowance
    running-unverified    running, progress not shown yet (first sighting, no rise yet,
                          start-up grace, nothing readable, a first miss)
    running-stalled       no rise past the allowance on two consecutive polls
    completed, failed, timeout, preempted, cancelled, out_of_memory, node_fail
    unknown               neither the queue nor accounting knows the job (never a guess)

Kill lines: slurmstepd writes `*** JOB <id> ON <node> CANCELLED AT <time> DUE TO TIME
LIMIT ***` (PREEMPTION, NODE FAILURE, JOB REQUEUE; no reason: a scancel) into a job's
log. `kill_lines` is the one scanner for them; `Kill` names what each says and `KILLED`
the verdict and cause it stands for, whether the job is still RUNNING or already ended.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from enum import StrEnum


class Verdict(StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    TIMEOUT = "timeout"
    PREEMPTED = "preempted"
    CANCELLED = "cancelled"
    OUT_OF_MEMORY = "out_of_memory"
    NODE_FAIL = "node_fail"
    UNKNOWN = "unknown"
    PROGRESSING = "running-progressing"
    STALLED = "running-stalled"
    UNVERIFIED = "running-unverified"


V = Verdict
# What a scheduler's own state can mean (a job table's `states` map onto these).
SCHEDULER_VERDICTS: tuple[str, ...] = (
    V.PENDING, V.RUNNING, V.COMPLETED, V.FAILED, V.TIMEOUT, V.PREEMPTED, V.CANCELLED,
    V.OUT_OF_MEMORY, V.NODE_FAIL, V.UNKNOWN,
)  # fmt: skip
# What poll says of a RUNNING job once it has looked at its progress.
PROGRESS_VERDICTS: tuple[str, ...] = (V.PROGRESSING, V.STALLED, V.UNVERIFIED)
ALL_VERDICTS: tuple[str, ...] = (*SCHEDULER_VERDICTS, *PROGRESS_VERDICTS)
RUNNING_VERDICTS = frozenset({V.RUNNING, *PROGRESS_VERDICTS})
# The job holds a slot or will take one: pending or running.
ACTIVE = frozenset({V.PENDING, *RUNNING_VERDICTS})

# The job is over: no later state will follow for this attempt.
TERMINAL = frozenset(
    {V.COMPLETED, V.FAILED, V.TIMEOUT, V.PREEMPTED, V.CANCELLED, V.OUT_OF_MEMORY, V.NODE_FAIL}
)
# Verdicts that need a person: a record with one makes the command exit 1.
NEEDS_PERSON = frozenset({V.FAILED, V.TIMEOUT, V.OUT_OF_MEMORY, V.NODE_FAIL, V.UNKNOWN, V.STALLED})
# Pending causes that will never start without a person (a held job is someone's intent).
STUCK_PENDING_CAUSES = frozenset({"dependency_never_satisfied", "cannot_run"})
# Pending causes that wait on a person or on a config change, not on the queue.
BLOCKED_CAUSES = frozenset({"held", *STUCK_PENDING_CAUSES})
# Jobs whose logs `diagnose` reads by default: ended badly, or may be dying.
NEEDS_DIAGNOSIS = frozenset({*NEEDS_PERSON, V.PREEMPTED, V.CANCELLED})
# How an attempt can end and be requeued: worth saying beside the next attempt's verdict.
CUT_SHORT = frozenset({V.PREEMPTED, V.NODE_FAIL, V.FAILED, V.TIMEOUT, V.OUT_OF_MEMORY})


def needs_person(verdict: str | None, cause: str | None = None) -> bool:
    """Whether a job with this verdict (and cause) needs a person (exit 1)."""
    if verdict in NEEDS_PERSON:
        return True
    return verdict == V.PENDING and cause in STUCK_PENDING_CAUSES


class Kill(StrEnum):
    """What a kill fingerprint in a job's log says (the job record's `log_markers`)."""

    TIME_LIMIT = "time_limit"
    PREEMPTION = "preemption"
    NODE_FAILURE = "node_failure"
    REQUEUE = "requeue"
    CANCELLED = "cancelled"  # a plain scancel: who did it is in the accounting, not the log
    OOM = "oom"


# The verdict and cause each kill stands for.
KILLED: dict[Kill, tuple[Verdict, str]] = {
    Kill.TIME_LIMIT: (V.TIMEOUT, "time_limit"),
    Kill.PREEMPTION: (V.PREEMPTED, "preemption"),
    Kill.NODE_FAILURE: (V.NODE_FAIL, "node_fail"),
    Kill.REQUEUE: (V.PREEMPTED, "requeue"),
    Kill.CANCELLED: (V.CANCELLED, "user_cancel"),
    Kill.OOM: (V.OUT_OF_MEMORY, "oom"),
}
# A death marker's cause -> the verdict of a job that died of it (running jobs' logs).
CAUSE_VERDICT: dict[str, Verdict] = {cause: verdict for verdict, cause in KILLED.values()} | {
    "nccl_timeout": V.FAILED,
    "user_code": V.FAILED,
}

# slurmstepd (src/slurmd/slurmstepd/req.c): "*** %s ON %s CANCELLED AT %s DUE TO TIME LIMIT ***"
# and the PREEMPTION / NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS / JOB REQUEUE variants; a
# plain "*** JOB 12 ON n1 CANCELLED AT <t> ***" is a scancel; "*** JOB 12 ON n1 FAILED (...)
# ***" a failed launch. Old releases omit "ON <node>".
KILL_LINE = re.compile(
    rb"\*\*\* (?:JOB|STEP) (?P<id>\S+)(?: ON (?P<host>\S+))? (?:CANCELLED AT (?P<at>.+?)"
    rb"(?: DUE TO (?P<due>[A-Z][A-Z ]*[A-Z]))?(?:,[^*\r\n]*)?|(?P<failed>FAILED \([^)\r\n]*\)))"
    rb" \*\*\*"
)
_DUE = {
    b"TIME LIMIT": Kill.TIME_LIMIT,
    b"PREEMPTION": Kill.PREEMPTION,
    b"NODE FAILURE": Kill.NODE_FAILURE,
    b"JOB REQUEUE": Kill.REQUEUE,
}
# Lines that say the kernel or SLURM killed the job for memory (the cgroup's oom-kill count,
# slurmstepd's memory-limit notes).
OOM_LINE = re.compile(
    rb"oom-kill event|Exceeded job memory limit|exceeded memory limit|Out Of Memory|oom_kill",
    re.IGNORECASE,
)


def kill_lines(buf: bytes) -> Iterator[tuple[int, Kill | None]]:
    """(offset, kill) for every slurmstepd kill line in `buf`, oldest first; `None` for a
    `FAILED (...)` launch line (the job's own code failed, nobody killed it)."""
    if b"*** " not in buf:
        return
    for m in KILL_LINE.finditer(buf):
        if m["failed"]:
            yield m.start(), None
        else:
            yield m.start(), _DUE.get(m["due"] or b"", Kill.CANCELLED)


def kill_markers(log: str | bytes) -> frozenset[Kill]:
    """The kills a job's log tail records: slurmstepd's lines and oom-kill lines."""
    buf = log.encode("utf-8", "surrogateescape") if isinstance(log, str) else log
    found = {kill for _, kill in kill_lines(buf) if kill is not None}
    if OOM_LINE.search(buf):
        found.add(Kill.OOM)
    return frozenset(found)
