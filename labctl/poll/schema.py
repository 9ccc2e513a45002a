"""JSON Schemas of the records `labctl poll` emits (light: imported by `labctl schema`)."""

from __future__ import annotations

from labctl.schemas import (
    BYTES,
    COMMON,
    INT_OR_NULL,
    METRIC,
    NUM_OR_NULL,
    SECONDS,
    STR_OR_NULL,
    TIME,
    record,
)
from labctl.verdicts import ALL_VERDICTS

# the scheduler verdicts, plus the three a running job gets from its progress
VERDICTS = [str(v) for v in ALL_VERDICTS]

_OBJ_OR_NULL = {"type": ["object", "null"]}
PROGRESS = {
    "type": ["object", "null"],
    "description": "Is a running job moving? The counter poll compared with the previous "
    "poll (kept for finished jobs as last seen). source: results (per-trial result files), "
    "log (the training log: format says which), wandb_file (the run's .wandb file), wandb_api "
    "(historyLineCount). signals: the latest RL collapse signals (entropy, grad_norm, kl, "
    "is_log_ratio, rollout_kl); metrics: every recognised metric by short name.",
    "properties": {
        "counter": STR_OR_NULL,
        "value": NUM_OR_NULL,
        "previous": NUM_OR_NULL,
        "delta": NUM_OR_NULL,
        "total": NUM_OR_NULL,
        "rate_per_h": NUM_OR_NULL,
        "last_change": TIME,
        "age_s": SECONDS,
        "allowance_s": SECONDS,
        "eta": TIME,
        "phase": STR_OR_NULL,
        "source": {"enum": ["results", "log", "wandb_file", "wandb_api", None]},
        "format": STR_OR_NULL,
        "stall_suspect": {"type": "boolean"},
        "misses": {"type": "integer", "minimum": 0},
        "in_grace": {"type": "boolean"},
        "metrics": {"type": "object", "additionalProperties": METRIC},
        "signals": {"type": "object", "additionalProperties": METRIC},
        "markers": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "kind": {"type": "string"},
                    "cause": {"type": "string"},
                    "severity": {"enum": ["hard", "soft"]},
                    "line": {"type": "string"},
                },
            },
        },
        "evidence": {"type": "array", "items": {"type": "string"}},
        "log_bytes_read": BYTES,
        "trials": _OBJ_OR_NULL,
        "wandb": _OBJ_OR_NULL,
        "wandb_api": _OBJ_OR_NULL,
    },
    "required": ["counter", "value", "previous", "rate_per_h", "last_change", "source"],
}

JOB = record(
    "job",
    "One job of one cluster: the scheduler's state and labctl's verdict. A running job is "
    "running-progressing (two polls saw its counter rise, the later one within the "
    "allowance), running-stalled (no rise past the allowance on two consecutive polls) or "
    "running-unverified (first sighting, no rise seen yet, a first miss past the allowance, "
    "no readable counter, or start-up grace), or a "
    "terminal verdict when a death marker in its log says it is dying (cause: nccl_timeout, "
    "time_limit, oom, user_code…). Verdicts that need a person (exit 1): failed, timeout, "
    "out_of_memory, node_fail, unknown, running-stalled. `unknown` means neither the "
    "queue nor accounting knows the job any more (cause `vanished`), never a guess of "
    "`completed`. A finished job is emitted by the poll that first sees it finished (or "
    "when it changed), not on every poll. `out_of_memory` "
    "with cause `memory_limit` is inferred (FAILED, signal 9, `.batch` CANCELLED: SLURM's "
    "OverMemoryKill); cause `oom` is backed by an oom line in the log or the OUT_OF_MEMORY "
    "state. Times are RFC 3339 UTC; log sizes and mtimes come from `stat` on the cluster "
    "and `log_age_s` is measured against the cluster's own clock.",
    {
        "cluster": {"type": "string"},
        "scheduler": {"enum": ["slurm", "command", "supervise"]},
        "key": {
            "type": "string",
            "description": "stable identity: cluster:job_id_raw[/array_task]@submit_epoch",
        },
        "job_id": {"type": "string", "description": "as the scheduler shows it: 6_2, 7_[2-3%1]"},
        "job_id_raw": {"type": "string"},
        "array_job_id": STR_OR_NULL,
        "array_task_id": INT_OR_NULL,
        "array_tasks": {
            "type": ["string", "null"],
            "description": "pending array tasks still grouped in one row (`2-3%1`)",
        },
        "het_job_id": STR_OR_NULL,
        "het_offset": INT_OR_NULL,
        "name": STR_OR_NULL,
        "user": STR_OR_NULL,
        "account": STR_OR_NULL,
        "partition": STR_OR_NULL,
        "state": {
            "type": ["string", "null"],
            "description": "the scheduler's base state (CANCELLED), null when vanished",
        },
        "state_raw": {"type": ["string", "null"], "description": "as printed: CANCELLED by 0"},
        "reason": STR_OR_NULL,
        "verdict": {"enum": VERDICTS},
        "cause": {
            "type": ["string", "null"],
            "description": "detail: exit_code, signal, time_limit, user_cancel, admin_cancel, "
            "held, dependency_never_satisfied, memory_limit, oom, vanished, …",
        },
        "exit_code": INT_OR_NULL,
        "signal": INT_OR_NULL,
        "submit_time": TIME,
        "start_time": TIME,
        "end_time": TIME,
        "elapsed_s": SECONDS,
        "time_limit_s": SECONDS,
        "node_list": STR_OR_NULL,
        "n_nodes": INT_OR_NULL,
        "restarts": {
            "type": ["integer", "null"],
            "description": "times SLURM requeued the job (preemption, node failure, "
            "scontrol requeue); a requeued attempt continues the same job: not `new`, "
            "`first_seen` kept, `restarts`/`submit_time` in `changed_fields`",
        },
        "work_dir": STR_OR_NULL,
        "stdout": STR_OR_NULL,
        "stderr": STR_OR_NULL,
        "stdout_size": BYTES,
        "stdout_mtime": TIME,
        "stderr_size": BYTES,
        "stderr_mtime": TIME,
        "log_age_s": SECONDS,
        "log_markers": {
            "type": ["array", "null"],
            "items": {"type": "string"},
            "description": "slurmstepd kill fingerprints in the log tail: time_limit, "
            "preemption, node_failure, requeue, cancelled, oom",
        },
        "source": {"enum": ["squeue", "sacct", "squeue+sacct", "command", "store", "supervise"]},
        "observed_at": TIME,
        "first_seen": TIME,
        "new": {"type": "boolean", "description": "first time the state store sees this job"},
        "changed_since_last_poll": {"type": "boolean"},
        "changed_fields": {"type": "array", "items": {"type": "string"}},
        "previous_verdict": STR_OR_NULL,
        "progress": PROGRESS,
        "supervise": {
            "type": "object",
            "description": "scheduler supervise: the run's own state (running, backoff, "
            "escalated…), attempt/max_attempts, the supervisor's pid, the child's pgid, "
            "argv, last_diagnosis and the escalation file",
        },
        "message": {"type": "string"},
    },
    [
        "cluster",
        "scheduler",
        "key",
        "job_id",
        "job_id_raw",
        "name",
        "user",
        "partition",
        "state",
        "verdict",
        "exit_code",
        "signal",
        "submit_time",
        "start_time",
        "end_time",
        "elapsed_s",
        "time_limit_s",
        "node_list",
        "stdout",
        "stderr",
        "first_seen",
        "changed_since_last_poll",
        "observed_at",
    ],
)

SKIPPED = record(
    "skipped",
    "Jobs of one cluster whose names match the cluster's `skip` patterns (out of scope): "
    "counted, not analysed. At most one per cluster per poll.",
    {
        "cluster": {"type": "string"},
        "count": {"type": "integer", "minimum": 1},
        "patterns": {"type": "object", "additionalProperties": {"type": "integer"}},
        "message": {"type": "string"},
    },
    ["cluster", "count", "patterns"],
)

ERROR = {
    **COMMON["error"],
    "properties": {
        **COMMON["error"]["properties"],
        "cluster": {"type": "string"},
        "host": {"type": "string"},
        "stage": {"type": "string"},
        "last_ok_at": TIME,
        "consecutive_failures": {"type": "integer", "minimum": 1},
        "first_failure_at": TIME,
        "affected_jobs": {"type": "integer", "minimum": 0},
        "moved_to": {"type": "string", "description": "state_reset: where the store went"},
        "cause": {"type": "string", "description": "state_reset: why it was unusable"},
        "saved": {"type": "boolean", "description": "false: this poll saved nothing"},
        "compared_with": {
            "enum": ["last_saved_poll", "nothing"],
            "description": "what the unsaved poll compared jobs with",
        },
        "holders": {"type": "array", "items": {"type": "integer"}},
    },
    "description": COMMON["error"]["description"]
    + " poll: one per cluster that could not be read (unreachable, auth, timeout, "
    "command_failed, no_accounting, bad_output) with `cluster`; `locked` when another "
    "poll holds the state lock (no job records: that poll reports them). Its own state, "
    "with `stage: state` (the job records are still all there): `state_reset` (an "
    "unusable store moved aside to `moved_to`, a fresh one started: every job new), "
    "`state_unwritable` (the state dir takes no write: `errno`, `free_bytes`, nothing "
    "saved, jobs `compared_with` the last saved poll or nothing), `locked` with "
    "`holders` (a process holds the store itself: nothing saved).",
}

SCHEMAS = {**COMMON, "error": ERROR, "job": JOB, "skipped": SKIPPED}
