"""JSON Schemas of the records `labctl gate` emits (light: imported by `labctl schema`)."""

from __future__ import annotations

from labctl.schemas import COMMON, NUM_OR_NULL, STR_OR_NULL, TIME, record

REASONS = ["missing", "null_score", "non_numeric", "partial_run", "below", "above", "at_threshold"]
_ID = {"type": ["integer", "string"]}

VERDICT = record(
    "verdict",
    "One model on one required benchmark: the runs that counted (the latest finished, "
    "non-partial run, or the newest N with combine mean_last_n; never the max), its score, "
    "the threshold and whether it passed. reason: missing (no finished run), null_score, "
    "non_numeric (text, NaN, ∞), partial_run (only partial runs), or where the score sits: "
    "below, above, at_threshold (ties pass). A missing, null or non-numeric score never passes.",
    {
        "gate": {"type": "string"},
        "model": {"type": "string"},
        "benchmark": {"type": "string"},
        "metric": {"type": "string", "description": "column or JSON path, PostgreSQL spelling"},
        "combine": {"enum": ["latest", "mean_last_n"]},
        "run_ids": {"type": "array", "items": _ID, "description": "newest first"},
        "score": NUM_OR_NULL,
        "threshold": {"type": "number"},
        "direction": {"enum": ["higher", "lower"], "description": "which way is better"},
        "passed": {"type": "boolean"},
        "reason": {"enum": REASONS},
        "message": {"type": "string"},
    },
    [
        "gate",
        "model",
        "benchmark",
        "run_ids",
        "score",
        "threshold",
        "direction",
        "passed",
        "reason",
    ],
)

GATE = record(
    "gate",
    "One model's outcome: passed only when every required benchmark passed (exit 1 if not).",
    {
        "gate": {"type": "string"},
        "model": {"type": "string"},
        "passed": {"type": "boolean"},
        "benchmarks": {"type": "integer", "minimum": 1},
        "failed": {"type": "array", "items": {"type": "string"}},
        "reasons": {"type": "object", "additionalProperties": {"enum": REASONS}},
        "user": {"type": "string", "description": "the owner whose rows counted"},
        "rows_read": {"type": "integer", "minimum": 0},
    },
    ["gate", "model", "passed", "benchmarks", "failed", "reasons", "user"],
)

REGISTER = record(
    "register",
    "One statement of --register: the model's outcome written (applied: true) or shown "
    "(--dry-run, applied: false) after the ownership and foreign-key checks passed.",
    {
        "gate": {"type": "string"},
        "model": {"type": "string"},
        "table": {"type": "string"},
        "action": {"enum": ["insert", "update"]},
        "passed": {"type": "boolean"},
        "statement": {"type": "string"},
        "applied": {"type": "boolean"},
    },
    ["gate", "model", "table", "action", "statement", "applied"],
)

_FAILURE = {
    "type": "object",
    "properties": {
        "cycle": {"type": "string"},
        "cluster": STR_OR_NULL,
        "job_id": {"type": ["string", "integer", "null"]},
        "name": STR_OR_NULL,
        "verdict": STR_OR_NULL,
        "exit_code": {"type": ["integer", "null"]},
        "category": STR_OR_NULL,
        "fingerprint": STR_OR_NULL,
        "root_cause": STR_OR_NULL,
        "title": STR_OR_NULL,
        "fix": STR_OR_NULL,
        "retryable": {"type": ["boolean", "null"]},
        "catalog_id": STR_OR_NULL,
    },
    "required": ["cycle", "job_id", "verdict", "fingerprint", "root_cause"],
}

CYCLE = record(
    "cycle",
    "One cycle of a lifecycle (streak gate): clean (every job ended clean or as a valid "
    "research rejection), failed (an operational failure) or in_progress.",
    {
        "gate": {"type": "string"},
        "cycle": {"type": "string"},
        "state": {"enum": ["clean", "failed", "in_progress"]},
        "jobs": {"type": "integer", "minimum": 0},
        "clean_jobs": {"type": "integer", "minimum": 0},
        "research_rejections": {"type": "integer", "minimum": 0},
        "running_jobs": {"type": "integer", "minimum": 0},
        "first_submit": TIME,
        "failures": {"type": "array", "items": _FAILURE},
    },
    ["gate", "cycle", "state", "jobs", "failures"],
)

STREAK = record(
    "streak",
    "Consecutive clean cycles since the last operational failure; passed when it reaches "
    "`required` (exit 1 if not). Every failure in the input's cycles is listed with its "
    "fingerprint and root cause when diagnose's records were in the stream.",
    {
        "gate": {"type": "string"},
        "required": {"type": "integer", "minimum": 1},
        "streak": {"type": "integer", "minimum": 0},
        "passed": {"type": "boolean"},
        "cycles": {"type": "integer", "minimum": 0},
        "clean_cycles": {"type": "integer", "minimum": 0},
        "failed_cycles": {"type": "integer", "minimum": 0},
        "in_progress_cycles": {"type": "integer", "minimum": 0},
        "last_failure_cycle": STR_OR_NULL,
        "failures": {"type": "array", "items": _FAILURE},
        "message": {"type": "string"},
    },
    ["gate", "required", "streak", "passed", "cycles", "last_failure_cycle", "failures"],
)

SCHEMAS = {
    **COMMON,
    "verdict": VERDICT,
    "gate": GATE,
    "register": REGISTER,
    "cycle": CYCLE,
    "streak": STREAK,
    "*": {
        "description": "Records read on stdin that are not rows (they have a `kind`) or "
        "that belong to no cycle pass through unchanged.",
        "type": "object",
    },
}
