"""labctl.poll.verdict.decide: every job's verdict, from its facts, in one table.

Each row is what poll knows of a job (the scheduler's facts, the kill lines read in its
log, the job table's `states`, the progress verdict of a running job) and the verdict and
cause it must get. The SLURM state table itself is also covered row by row in
test_parse_slurm_commands.py::test_classify.
"""

from __future__ import annotations

from typing import Any

import pytest

from labctl.poll.verdict import decide, judge
from labctl.verdicts import ALL_VERDICTS, KILLED, Kill

TPU = {"ACTIVE": "running", "QUEUED": "pending", "SUCCEEDED": "completed", "FAILED": "failed"}
BATCH_CANCELLED = [{"step": "batch", "state": "CANCELLED"}]
PROGRESSING = ("running-progressing", None)
STALLED = ("running-stalled", None)
DYING = ("timeout", "time_limit")

# (facts, states, progress) -> (verdict, cause)
ROWS: list[tuple[dict[str, Any], dict[str, str] | None, Any, tuple[str, str | None]]] = [
    # SLURM: the scheduler's state
    ({"state": "PENDING", "reason": "Priority"}, None, None, ("pending", "queued")),
    ({"state": "PENDING", "reason": "DependencyNeverSatisfied"}, None, None,
     ("pending", "dependency_never_satisfied")),
    ({"state": "RUNNING"}, None, None, ("running", None)),
    ({"state": "COMPLETED", "exit_code": 0}, None, None, ("completed", None)),
    ({"state": "FAILED", "exit_code": 3, "signal": 0}, None, None, ("failed", "exit_code")),
    ({"state": "FAILED", "signal": 9, "steps": BATCH_CANCELLED}, None, None,
     ("out_of_memory", "memory_limit")),
    ({"state": "TIMEOUT"}, None, None, ("timeout", "time_limit")),
    ({"state": "CANCELLED", "cancelled_by": 1000, "uid": 1000}, None, None,
     ("cancelled", "user_cancel")),
    ({"state": "CANCELLED", "cancelled_by": 0, "uid": 1000}, None, None,
     ("cancelled", "admin_cancel")),
    ({"state": "NO_SUCH_STATE"}, None, None, ("unknown", "unknown_state")),
    ({"state": None}, None, None, ("unknown", None)),
    # the store saw it alive, the scheduler no longer reports it (labctl.poll.gone)
    ({"state": None, "vanished": True}, None, None, ("unknown", "vanished")),
    ({"state": "RUNNING", "cause": "queued", "vanished": True}, None, PROGRESSING,
     ("unknown", "vanished")),
    ({"state": "ACTIVE", "cause": "quota", "vanished": True}, TPU, None, ("unknown", "vanished")),
    # SLURM: the kill lines read in the job's log refine CANCELLED and FAILED
    ({"state": "CANCELLED", "log_markers": ["time_limit"]}, None, None, ("timeout", "time_limit")),
    ({"state": "CANCELLED", "log_markers": ["preemption"]}, None, None,
     ("preempted", "preemption")),
    ({"state": "CANCELLED", "log_markers": ["node_failure"]}, None, None,
     ("node_fail", "node_fail")),
    ({"state": "CANCELLED", "log_markers": ["oom"]}, None, None, ("out_of_memory", "oom")),
    ({"state": "CANCELLED", "log_markers": ["cancelled", "time_limit"]}, None, None,
     ("timeout", "time_limit")),
    ({"state": "CANCELLED", "log_markers": ["requeue"], "cancelled_by": 5, "uid": 5}, None, None,
     ("cancelled", "user_cancel")),  # a requeue comes back as a new attempt
    ({"state": "FAILED", "log_markers": ["oom"], "signal": 9}, None, None,
     ("out_of_memory", "oom")),
    ({"state": "COMPLETED", "log_markers": ["oom"]}, None, None, ("completed", None)),
    # a job table: the cluster's states
    ({"state": "ACTIVE"}, TPU, None, ("running", None)),
    ({"state": "succeeded"}, TPU, None, ("completed", None)),  # case-insensitive
    ({"state": "timeout"}, TPU, None, ("timeout", None)),  # a verdict name maps to itself
    ({"state": "EVICTED"}, TPU, None, ("unknown", "unmapped_state")),
    ({"state": "FAILED", "cause": "quota"}, TPU, None, ("failed", "quota")),  # the row's cause
    ({"state": "PENDING"}, {}, None, ("pending", None)),  # no states: verdict names only
    ({"state": "CANCELLED", "log_markers": ["time_limit"]}, TPU, None, ("cancelled", None)),
    # a running job whose progress poll looked at takes the progress verdict
    ({"state": "RUNNING"}, None, PROGRESSING, PROGRESSING),
    ({"state": "RUNNING"}, None, STALLED, STALLED),
    ({"state": "RUNNING"}, None, DYING, DYING),  # a death marker in the log
    ({"state": "COMPLETING"}, None, STALLED, ("running-stalled", "completing")),
    ({"state": "ACTIVE"}, TPU, PROGRESSING, PROGRESSING),
    ({"state": "PENDING"}, None, PROGRESSING, ("pending", "queued")),  # not running: ignored
    ({"state": "FAILED", "exit_code": 1}, None, STALLED, ("failed", "exit_code")),
]  # fmt: skip


@pytest.mark.parametrize(("facts", "states", "progress", "want"), ROWS)
def test_decide(
    facts: dict[str, Any], states: dict[str, str] | None, progress: Any, want: tuple[str, Any]
) -> None:
    got = decide(facts, states=states, progress=progress)
    assert got == want
    assert got[0] in ALL_VERDICTS


def test_judge_returns_a_new_dict_and_leaves_the_facts_alone() -> None:
    facts = {"state": "TIMEOUT", "job_id": "3"}
    judged = judge(facts)
    assert judged == {
        "state": "TIMEOUT",
        "job_id": "3",
        "verdict": "timeout",
        "cause": "time_limit",
    }
    assert facts == {"state": "TIMEOUT", "job_id": "3"}


def test_every_kill_of_the_vocabulary_has_a_verdict() -> None:
    assert set(KILLED) == set(Kill)
    assert all(verdict in ALL_VERDICTS for verdict, _ in KILLED.values())
