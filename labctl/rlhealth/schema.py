"""JSON Schema of the `rl_health` record (light: imported by `labctl schema`)."""

from __future__ import annotations

from labctl.schemas import BYTES, COMMON, INT_OR_NULL, NUM_OR_NULL, STR_OR_NULL, TIME, record

_WINDOW = {
    "type": ["object", "null"],
    "description": "a window of the series: first and last step, points, median, the last "
    "values (or, for a NaN streak, the count of non-finite values)",
    "properties": {
        "steps": {"type": "array", "items": INT_OR_NULL},
        "points": {"type": "integer", "minimum": 0},
        "median": NUM_OR_NULL,
        "values": {"type": "array", "items": NUM_OR_NULL},
    },
}
SIGNAL = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "family": {"type": "string"},
        "strength": {"enum": ["strong", "corroborating"]},
        "metric": {"type": "string"},
        "key": {"type": "string", "description": "the metric key as logged (or the W&B key)"},
        "rule": {"type": "string"},
        "message": {"type": "string"},
        "baseline": _WINDOW,
        "current": _WINDOW,
        "ratio": NUM_OR_NULL,
        "lines": {
            "type": "array",
            "description": "where to look: step, byte offset in the log (null for W&B), text",
            "items": {
                "type": "object",
                "properties": {
                    "step": INT_OR_NULL,
                    "offset": INT_OR_NULL,
                    "text": {"type": "string"},
                },
            },
        },
    },
    "required": ["name", "family", "strength", "metric", "rule", "message"],
}
SOURCE = {
    "type": "object",
    "properties": {
        "source": {"enum": ["log", "wandb_file", "wandb_api"]},
        "path": STR_OR_NULL,
        "points": {"type": "integer", "minimum": 0},
        "first_step": INT_OR_NULL,
        "last_step": INT_OR_NULL,
        "bytes_read": BYTES,
        "file_size": BYTES,
        "regions": {"type": "integer", "minimum": 0},
    },
}

RL_HEALTH = record(
    "rl_health",
    "A KILL / NO-KILL / WATCH recommendation for one RL job (or log file, or W&B run) with "
    "its evidence. WATCH: fewer than `min_steps` training points (insufficient_history), no "
    "RL metric found (no_metrics) or one signal family only (single_signal). KILL needs two "
    "independent families (one of them may be a corroborating one: reward not improving, "
    "responses shrinking); KILL makes the exit code 1. labctl never kills anything.",
    {
        "cluster": STR_OR_NULL,
        "job_id": STR_OR_NULL,
        "name": STR_OR_NULL,
        "key": STR_OR_NULL,
        "verdict": STR_OR_NULL,
        "selected": {
            "type": ["string", "null"],
            "description": "why this job was looked at: --all, argument, or the untested "
            "rule that matched (name pattern, tag, first seen recently)",
        },
        "recommendation": {"enum": ["KILL", "NO-KILL", "WATCH"]},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "reason": {"type": "string"},
        "message": {"type": "string"},
        "signals": {"type": "array", "items": SIGNAL},
        "families": {"type": "array", "items": {"type": "string"}},
        "checks": {"type": "array", "items": {"type": "string"}},
        "healthy_evidence": {"type": "array", "items": {"type": "string"}},
        "missing_metrics": {"type": "array", "items": {"type": "string"}},
        "source": {"enum": ["log", "wandb_file", "wandb_api"]},
        "path": STR_OR_NULL,
        "steps": {
            "type": "object",
            "properties": {
                "points": {"type": "integer", "minimum": 0},
                "first": INT_OR_NULL,
                "last": INT_OR_NULL,
                "restarts": {"type": "integer", "minimum": 0},
                "sampled": {"type": "boolean"},
            },
        },
        "sources": {"type": "array", "items": SOURCE},
        "bytes_read": BYTES,
        "logs_missing": {"type": "array", "items": {"type": "string"}},
        "observed_at": TIME,
    },
    ["cluster", "job_id", "recommendation", "confidence", "reason", "message", "signals",
     "checks", "source", "steps", "bytes_read"],
)  # fmt: skip

ERROR = {
    **COMMON["error"],
    "properties": {
        **COMMON["error"]["properties"],
        "cluster": STR_OR_NULL,
        "job_id": STR_OR_NULL,
        "stage": {"type": "string"},
        "argument": {"type": "string"},
    },
    "description": COMMON["error"]["description"]
    + " rl-health: not_found (a JOB argument that is neither a file nor a job in the poll "
    "state), unreadable (a log), unreachable/auth/timeout (a cluster or W&B).",
}

SCHEMAS = {
    **COMMON,
    "error": ERROR,
    "rl_health": RL_HEALTH,
    "*": {"description": "Records read on stdin pass through unchanged.", "type": "object"},
}
