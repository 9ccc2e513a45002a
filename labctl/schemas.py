"""JSON Schema building blocks shared by every command's record schemas."""

from __future__ import annotations

from typing import Any

DRAFT = "https://json-schema.org/draft/2020-12/schema"

TIME = {"type": ["string", "null"], "format": "date-time", "description": "RFC 3339, UTC"}
SECONDS = {"type": ["number", "null"], "minimum": 0, "description": "seconds"}
BYTES = {"type": ["integer", "null"], "minimum": 0, "description": "bytes"}
STR_OR_NULL = {"type": ["string", "null"]}
INT_OR_NULL = {"type": ["integer", "null"]}
NUM_OR_NULL = {"type": ["number", "null"]}
# a metric value: a number, null, or "NaN"/"Infinity"/"-Infinity" (JSON has no NaN)
METRIC = {"anyOf": [{"type": ["number", "null"]}, {"enum": ["NaN", "Infinity", "-Infinity"]}]}


def record(
    kind: str,
    description: str,
    properties: dict[str, Any],
    required: list[str] | tuple[str, ...] = (),
) -> dict[str, Any]:
    """A record schema: `kind` is fixed; other fields may be added later (not removed)."""
    props = {"kind": {"const": kind}}
    props.update(properties)
    return {
        "$schema": DRAFT,
        "title": kind,
        "description": description,
        "type": "object",
        "properties": props,
        "required": ["kind", *required],
        "additionalProperties": True,
    }


ERROR = record(
    "error",
    "A problem: a machine-readable reason and a human message. Reasons: usage, config, "
    "config_permissions, malformed_input, unreachable, timeout, bad_output, no_accounting, "
    "command_failed, unreadable, locked, internal_error (a bug, only), the faults of "
    "labctl's own files (state_reset, state_unwritable, state_unreadable, not_written: "
    "with `errno`, `free_bytes`, and `applied: false` for a file not written), and "
    "command-specific ones.",
    {
        "reason": {"type": "string", "pattern": "^[a-z][a-z0-9_]*$"},
        "message": {"type": "string"},
        "line": {"type": ["integer", "null"], "minimum": 1},
        "source": {"type": "string"},
        "path": {"type": "string"},
        "errno": {
            "type": ["string", "null"],
            "description": "the OS error's name (ENOSPC, EROFS, EACCES, EDQUOT, EIO)",
        },
        "free_bytes": {"type": ["integer", "null"], "minimum": 0},
        "applied": {"type": "boolean"},
        "original_intact": {"type": "boolean"},
    },
    ["reason", "message"],
)

SUMMARY = record(
    "summary",
    "Closes a command's output when --summary is given: counts per kind, elapsed time "
    "and the exit code.",
    {
        "command": {"type": "string"},
        "counts": {"type": "object", "additionalProperties": {"type": "integer"}},
        "elapsed_s": SECONDS,
        "exit_code": {"type": "integer"},
    },
    ["command", "counts", "elapsed_s", "exit_code"],
)

COMMON = {"error": ERROR, "summary": SUMMARY}
