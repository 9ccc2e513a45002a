"""Record schemas of `labctl supervise` (kept apart so the command module stays small)."""

from __future__ import annotations

from typing import Any

from labctl.commands.diagnose_schema import DIAGNOSIS_FIELDS
from labctl.schemas import COMMON, INT_OR_NULL, SECONDS, STR_OR_NULL, TIME, record

_ARGV = {"type": "array", "items": {"type": "string"}, "description": "redacted"}
_ENV = {
    "type": "object",
    "additionalProperties": {"type": ["string", "null"]},
    "description": "changes to labctl's environment: name -> value, null = unset",
}
_RUN = {"run_id": {"type": "string", "description": "<UTC start>-<supervisor pid>"}}
_ATTEMPT = {"type": "integer", "minimum": 1}
_FINAL = {
    **_RUN,
    "attempts": {"type": "integer", "minimum": 1},
    "argv": _ARGV,
    "env_changes": _ENV,
    "ended_at": TIME,
}
_CHANGE = {
    "type": "object",
    "properties": {
        "what": {"enum": ["arg", "env", "install"]},
        "name": {"type": "string"},
        "old": STR_OR_NULL,
        "new": STR_OR_NULL,
    },
    "required": ["what", "name", "old", "new"],
}

SCHEMAS: dict[str, Any] = {
    **COMMON,
    "attempt_started": record(
        "attempt_started",
        "An attempt started: its argv and environment changes, its pid (= process group), "
        "its log file. The child also sees LABCTL_SUPERVISE_RUN / LABCTL_SUPERVISE_ATTEMPT.",
        {
            **_RUN,
            "attempt": _ATTEMPT,
            "argv": _ARGV,
            "env_changes": _ENV,
            "installed": {"type": "array", "items": {"type": "string"}},
            "pid": {"type": "integer"},
            "pgid": {"type": "integer"},
            "log": {"type": "string"},
            "started_at": TIME,
        },
        ["run_id", "attempt", "argv", "env_changes", "pid", "log"],
    ),
    "attempt_ended": record(
        "attempt_ended",
        "An attempt ended: exit code (null when a signal ended it) or signal, how long it "
        "ran, whether labctl killed it for silence (stalled) or forwarded a signal "
        "(interrupted_by), and the processes left in its group that labctl then ended.",
        {
            **_RUN,
            "attempt": _ATTEMPT,
            "exit_code": INT_OR_NULL,
            "signal": INT_OR_NULL,
            "duration_s": SECONDS,
            "silence_s": SECONDS,
            "log": {"type": "string"},
            "stalled": {"type": "boolean"},
            "interrupted_by": INT_OR_NULL,
            "killed": {"type": "boolean", "description": "SIGKILL was needed"},
            "leftovers": {"type": "array", "items": {"type": "integer"}},
            "pipe_closed": {"type": "boolean"},
            "bytes": {"type": "integer", "minimum": 0},
            "ended_at": TIME,
        },
        ["run_id", "attempt", "exit_code", "signal", "duration_s", "log", "stalled"],
    ),
    "diagnosis": record(
        "diagnosis",
        "diagnose's record for a failed attempt's log and exit status (a hang is decided "
        "from the silence), with run_id and attempt.",
        {**DIAGNOSIS_FIELDS, **_RUN, "attempt": _ATTEMPT},
        ["failed", "category", "fingerprint", "run_id", "attempt"],
    ),
    "fix_applied": record(
        "fix_applied",
        "The catalog's fix for the failure, applied to the next attempt: what changed in its "
        "argv/env (or the package installed); `resubmit` is a plain re-run of a retryable "
        "failure (nothing changes).",
        {
            **_RUN,
            "attempt": {**_ATTEMPT, "description": "the attempt the fix is for"},
            "catalog_id": STR_OR_NULL,
            "fingerprint": STR_OR_NULL,
            "action": {"type": "object"},
            "changes": {"type": "array", "items": _CHANGE},
            "resubmit": {"type": "boolean"},
            "argv": _ARGV,
            "env_changes": _ENV,
        },
        ["run_id", "attempt", "catalog_id", "action", "changes", "resubmit"],
    ),
    "succeeded": record("succeeded", "The command exited 0 (exit code 0).", _FINAL, ["run_id"]),
    "escalated": record(
        "escalated",
        "supervise gave up and a person must look (exit 1): why (reason), the escalation "
        "files written and whether the notify command ran. Reasons: unknown_failure, "
        "no_fix, fix_exhausted, arg_not_found, install_disabled, install_failed, "
        "repeated_failure, would_repeat, budget_spent.",
        {
            **_FINAL,
            "reason": {"type": "string", "pattern": "^[a-z][a-z0-9_]*$"},
            "message": {"type": "string"},
            "catalog_id": STR_OR_NULL,
            "fingerprint": STR_OR_NULL,
            "path": {
                "type": ["string", "null"],
                "description": "the .md escalation file: the state dir's, else the first "
                "copy written (null: every folder refused it; error records say why)",
            },
            "json_path": {"type": ["string", "null"]},
            "copies": {"type": "array", "items": {"type": "string"}},
            "not_written": {
                "type": "array",
                "items": {"type": "string"},
                "description": "folders that refused their escalation files (a "
                "state_unwritable or not_written record each says why)",
            },
            "next_steps": {"type": "array", "items": {"type": "string"}},
            "notify": {"type": ["object", "null"]},
        },
        ["run_id", "reason", "message", "path", "json_path"],
    ),
    "interrupted": record(
        "interrupted",
        "SIGTERM/SIGINT reached supervise: forwarded to the child's group, the run ended "
        "(exit 130).",
        {**_FINAL, "signal": INT_OR_NULL},
        ["run_id", "signal"],
    ),
}
