"""Record schemas of `labctl diagnose` (kept apart so the command module stays small)."""

from __future__ import annotations

from typing import Any

from labctl.schemas import COMMON, INT_OR_NULL, STR_OR_NULL, record

_EVIDENCE = {
    "type": "object",
    "properties": {
        "origin": {"type": "string"},
        "line": INT_OR_NULL,
        "line_from_end": INT_OR_NULL,
        "text": {"type": "string"},
        "before": {"type": "array", "items": {"type": "string"}},
        "after": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["origin", "text"],
}
# a candidate's `reason` (labctl/diagnose/fates.py lists where each is given)
REASONS = (
    "root_cause",
    "survived", "logged", "notice", "later_success", "later_failure", "after_failure", "too_few",
    "explained", "wrapper", "weak", "later", "earlier_event", "outranked",
    "scheduler", "completed", "hung", "earlier_report", "earlier_run", "earlier_job", "handled",
)  # fmt: skip
_LINE = {"line": INT_OR_NULL, "line_from_end": INT_OR_NULL}
_CANDIDATE = {
    "type": "object",
    "properties": {
        "catalog_id": {"type": "string"},
        "category": {"type": "string"},
        "role": {"type": "string"},
        **_LINE,
        "count": {"type": "integer", "minimum": 1},
        "fate": {"enum": ["won", "demoted"]},
        "reason": {
            "enum": list(REASONS),
            "description": "root_cause (won); survived (progress after it), logged (at "
            "WARNING/INFO level), notice (advice or a hypothetical), later_success, "
            "later_failure (a later independent failure after a shell message), after_failure "
            "(shell noise after the program failed), too_few (min_hits), explained (by `by`), "
            "wrapper (of the root cause), weak, later (later than the root cause), "
            "earlier_event, outranked, scheduler (its state decides), completed, hung, "
            "earlier_report (the last end report decides), earlier_run (a run before the "
            "log's last one: an appended submission, the script's earlier run), earlier_job "
            "(before an earlier job's end: another job's end follows), handled (an exception "
            "being handled when an interrupt came)",
        },
        "why": {"type": "string"},
        "by": {
            "type": ["object", "null"],
            "properties": {"catalog_id": STR_OR_NULL, "role": {"type": "string"}, **_LINE},
            "description": "what decided the fate: the explaining failure, the success report, "
            "the root cause, the scheduler's state, or a line that is no hit: role `progress` "
            "(the last progress line), `run_start` (where the log's last run starts) or "
            "`output` (the log's last output)",
        },
    },
    "required": ["catalog_id", "role", "fate", "reason", "why"],
}
DIAGNOSIS_FIELDS: dict[str, Any] = {
    "source": STR_OR_NULL,
    "failed": {"type": "boolean"},
    "category": {"type": "string"},
    "catalog_id": STR_OR_NULL,
    "title": STR_OR_NULL,
    "severity": {"enum": ["high", "medium", "low", None]},
    "retryable": {"type": ["boolean", "null"]},
    "fix": STR_OR_NULL,
    "action": {"type": ["object", "null"]},
    "exception_type": STR_OR_NULL,
    "fingerprint": {"type": ["string", "null"], "pattern": "^[0-9a-f]{16}$"},
    "confidence": {"type": "number", "minimum": 0, "maximum": 1},
    "decided_by": {"enum": ["scheduler", "hung", "log", "exit_code", "none"]},
    "why": {
        "type": "string",
        "description": "why the root cause won (or why the log counts as healthy/unknown)",
    },
    "evidence": {"type": "array", "items": _EVIDENCE},
    "also_matched": {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {"catalog_id": {"type": "string"}, "why": {"type": "string"}},
            "required": ["catalog_id", "why"],
        },
        "description": "every other candidate and why it lost or was demoted (survived, "
        "logged at WARNING/INFO level, later success, explained by, wrapper, outranked)",
    },
    "candidates": {
        "type": "array",
        "items": _CANDIDATE,
        "description": "every candidate (a failure-looking line, or the scheduler's word) in log "
        "order, and its fate: the root cause `won`, every other one `demoted`, with a reason "
        "(--why shows them in the table view)",
    },
    "events": {"type": "array", "items": {"type": "object"}},
    "requeued": {"type": "boolean"},
    "last_traceback": {"type": ["object", "null"]},
    "bytes_read": {"type": "integer", "minimum": 0},
    "window": {"type": ["object", "null"]},
    "scheduler": {"type": ["object", "null"]},
}
_REQUIRED = [
    "failed", "category", "fingerprint", "confidence", "evidence", "decided_by", "candidates",
]  # fmt: skip

SCHEMAS: dict[str, Any] = {
    **COMMON,
    "diagnosis": record(
        "diagnosis",
        "The root cause of one log's failure (or `healthy`): catalog entry, fix, whether a "
        "retry can help, a stable fingerprint, and the evidence lines (redacted).",
        DIAGNOSIS_FIELDS,
        _REQUIRED,
    ),
    "job": record(
        "job",
        "A job record from `labctl poll`, passed through with a `diagnosis` object added "
        "when its verdict is a failure (or with --all).",
        {
            "diagnosis": {
                "type": "object",
                "properties": DIAGNOSIS_FIELDS
                | {
                    "logs_missing": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "the job's log paths that do not exist (cleaned up, "
                        "node-local): the diagnosis rests on the scheduler's state alone",
                    }
                },
                "required": [*_REQUIRED, "logs_missing"],
            }
        },
    ),
    "diagnosis_group": record(
        "diagnosis_group",
        "One failure fingerprint (--group): how often it was seen and where.",
        {
            "fingerprint": {"type": "string"},
            "category": {"type": "string"},
            "catalog_id": STR_OR_NULL,
            "title": STR_OR_NULL,
            "count": {"type": "integer", "minimum": 1},
            "sources": {"type": "array", "items": {"type": "string"}},
            "jobs": {"type": "array"},
            "example": STR_OR_NULL,
        },
        ["fingerprint", "category", "count", "sources", "jobs"],
    ),
    "catalog_entry": record(
        "catalog_entry",
        "One entry of the failure catalog (--catalog, --explain ID).",
        {
            "id": {"type": "string"},
            "title": {"type": "string"},
            "category": {"type": "string"},
            "severity": {"type": "string"},
            "retryable": {"type": "boolean"},
            "fix": {"type": "string"},
            "action": {"type": "object"},
            "patterns": {"type": "object"},
            "source": {"type": "string"},
        },
        ["id", "title", "category", "retryable", "fix"],
    ),
    "*": {
        "description": "Records that are not failed jobs pass through unchanged.",
        "type": "object",
    },
}
