"""Record schemas of `labctl prune-disk`: `disk` (before and after) and `candidate`."""

from __future__ import annotations

from labctl.schemas import BYTES, COMMON, INT_OR_NULL, SECONDS, STR_OR_NULL, TIME, record

STATUSES = ["would_delete", "deleted", "failed", "not_needed", "kept"]
REASONS = [
    "too_recent",
    "keep_newest",
    "in_use",
    "download_in_progress",
    "protected",
    "hf_cache_managed",
    "traces_managed",
    "other_user",
    "outside_root",
    "mount_point_inside",
    "unreadable",
    "symlink",
    "vanished",
    "not_uploaded",
    "size_mismatch",
    "hash_mismatch",
    "hub_unreachable",
    "hub_repo_not_found",
    "no_hub_repo",
    "wandb_staging",
    "delete_failed",
]
_PATHS = {"type": "array", "items": {"type": "string"}}

DISK = record(
    "disk",
    "Free space on the volume being kept free: once before anything is looked at, once "
    "after (a dry run adds the free space it would reach). `below_threshold` on the "
    "`after` record makes the exit code 1.",
    {
        "phase": {"enum": ["before", "after"]},
        "path": {"type": "string"},
        "mount": {"type": "string"},
        "total": BYTES,
        "free": BYTES,
        "used": BYTES,
        "min_free": BYTES,
        "goal_free": {**BYTES, "description": "min_free + margin: where --apply stops"},
        "below_threshold": {"type": "boolean"},
        "applied": {"type": "boolean"},
        "projected_free": BYTES,
        "open_files_complete": {
            "type": "boolean",
            "description": "every process's open files could be read (false when not root)",
        },
        "message": {"type": "string"},
    },
    ["phase", "path", "mount", "total", "free", "min_free", "below_threshold", "applied"],
)

CANDIDATE = record(
    "candidate",
    "Something a rule may delete: its disk usage (allocated blocks, hard links once, one "
    "file system, no symlink followed), what deleting it frees, when it was last used, "
    "whether it is safe and, if not, why (`reason`, `message`), and what happened "
    "(`status`; `applied`, `bytes_freed`, `free_after` once deleted).",
    {
        "rule": {"type": "string"},
        "rule_kind": {"enum": ["hf_cache", "traces", "cache_dir", "glob"]},
        "path": {"type": "string"},
        "name": {"type": "string"},
        "item": {"enum": ["hf_repo", "hf_incomplete", "experiment", "entry", "match"]},
        "bytes": {**BYTES, "description": "du -sxB1 of the path"},
        "bytes_exclusive": {
            **BYTES,
            "description": "what deleting it frees: inodes with every hard link inside",
        },
        "files": INT_OR_NULL,
        "last_used": TIME,
        "age_s": SECONDS,
        "safe": {"type": "boolean"},
        "reason": {"anyOf": [{"enum": REASONS}, {"type": "null"}]},
        "message": STR_OR_NULL,
        "other_reasons": {"type": "array", "items": {"enum": REASONS}},
        "status": {"enum": STATUSES},
        "applied": {"type": "boolean"},
        "bytes_freed": BYTES,
        "free_after": BYTES,
        "partial": {"type": "boolean", "description": "part of the tree could not be read"},
        "unreadable": _PATHS,
        "vanished": {"type": "integer", "minimum": 0},
        "mounts": _PATHS,
        "notes": _PATHS,
        "other_users": {
            "type": "array",
            "description": "owners of entries inside other than labctl's effective uid",
            "items": {
                "type": "object",
                "properties": {
                    "uid": {"type": "integer"},
                    "user": {"type": "string"},
                    "entries": {"type": "integer", "minimum": 1},
                },
                "required": ["uid", "user", "entries"],
            },
        },
        "repo_id": {"type": "string"},
        "repo_type": {"type": "string"},
        "revisions": _PATHS,
        "refs": _PATHS,
        "hf_size_on_disk": {**BYTES, "description": "huggingface_hub's size (st_size)"},
        "hf_expected_freed": {
            **BYTES,
            "description": "huggingface_hub's delete strategy estimate (st_size based)",
        },
        "hub_repo": STR_OR_NULL,
        "path_in_repo": {"type": "string"},
        "hub_revision": {"type": "string"},
        "verified": {"enum": ["size", "hash", None]},
        "local_files": {"type": "integer", "minimum": 0},
    },
    ["rule", "rule_kind", "path", "name", "item", "bytes", "safe", "reason", "status", "applied"],
)

SCHEMAS = {**COMMON, "disk": DISK, "candidate": CANDIDATE}
