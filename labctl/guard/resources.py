"""max_count: how many of a resource a command lists, against a hard cap.

The command prints JSON rows (an array, JSON Lines, or a document with the rows under
`rows`), exactly like a `command` cluster's job table, and runs the same way (locally or
on an SSH host, with a deadline): labctl.cluster.jobtable's reader and
labctl.parse.jobtable's row parser are reused. `where` keeps rows whose fields match
globs. A command that fails is an `error` record (exit 3), never "zero rows".
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Any

from labctl.errors import LabctlError
from labctl.guard.rules import Rule
from labctl.records import error_record

MAX_LISTED = 50


def count_resource(rule: Rule) -> list[dict[str, Any]]:
    from labctl.backends.transport import Transport
    from labctl.cluster.jobtable import read_job_table
    from labctl.parse.jobtable import dig, parse_rows

    assert rule.command is not None
    try:
        table = read_job_table(Transport(host=rule.host), rule.command, timeout=rule.timeout_s)
        rows = parse_rows(table.text, rule.rows)
    except LabctlError as exc:
        return [
            error_record(
                exc.reason,
                f"guard rule {rule.name}: {exc.message}",
                rule=rule.name,
            )
        ]
    kept = [
        row
        for row in rows
        if all(fnmatchcase(str(dig(row, k)), pattern) for k, pattern in rule.where.items())
    ]
    if len(kept) <= rule.limit:
        return []
    items = [dig(row, rule.label) if rule.label else row for row in kept[:MAX_LISTED]]
    return [
        {
            "kind": "violation",
            "rule": rule.name,
            "rule_kind": rule.kind,
            "cluster": None if rule.host == "local" else rule.host,
            "count": len(kept),
            "limit": rule.limit,
            "jobs": [],
            "items": items,
            "message": (rule.message + ": " if rule.message else "")
            + f"{len(kept)} listed by `{rule.command}` (limit {rule.limit}): clean stale "
            "ones, never raise the cap",
        }
    ]
