"""The `command` scheduler: any command that prints job rows as JSON.

Output: a JSON array of objects, JSON Lines (one object per line), or one JSON document
with the rows under the dotted path `rows`. Each row is mapped onto labctl's job fields by
`fields` (labctl field -> dotted path in the row; a field not mapped is read from the key
of the same name), and the scheduler's state onto a verdict by `states` (exact match, then
case-insensitive; a state that already is a verdict name maps to itself; anything else is
`unknown` with cause `unmapped_state`). Times may be epoch seconds (or milliseconds) or
ISO 8601 text (UTC when no offset). `job_id` and `state` are required in every row.
`users`, when configured, keeps rows whose `user` is one of them.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from labctl.backends.jobtable import read_job_table
from labctl.backends.transport import Transport
from labctl.cluster.config import MAPPABLE_FIELDS, ClusterConfig
from labctl.cluster.slurm import split_skipped
from labctl.errors import BackendError
from labctl.poll.examine import examine
from labctl.poll.model import Known, Snapshot, job_key
from labctl.verdicts import SCHEDULER_VERDICTS

_TIME_KEYS = {"submit_time": "submit_epoch", "start_time": "start_epoch", "end_time": "end_epoch"}


def _bad(message: str) -> BackendError:
    return BackendError(f"job-table output: {message}", reason="bad_output")


def parse_rows(text: str, rows_path: str | None = None) -> list[dict[str, Any]]:
    body = text.strip()
    if not body:
        return []
    try:
        doc: Any = json.loads(body)
    except json.JSONDecodeError:
        doc = None
        rows: list[Any] = []
        for n, line in enumerate(body.splitlines(), 1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise _bad(f"line {n} is not JSON ({exc.msg})") from None
    else:
        if rows_path is not None:
            doc = dig(doc, rows_path)
            if not isinstance(doc, list):
                raise _bad(f"rows path {rows_path!r} does not lead to a list")
        rows = doc if isinstance(doc, list) else [doc]
    for n, row in enumerate(rows, 1):
        if not isinstance(row, dict):
            raise _bad(f"row {n} is a {type(row).__name__}, not an object")
    return rows


def dig(row: Any, path: str) -> Any:
    cur = row
    for part in path.split("."):
        if not isinstance(cur, Mapping) or part not in cur:
            return None
        cur = cur[part]
    return cur


def to_epoch(value: Any) -> float | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ValueError("a boolean is not a time")
    if isinstance(value, int | float):
        if not math.isfinite(value):
            raise ValueError("not a finite time")
        return float(value) / 1000 if value > 1e11 else float(value)
    text = str(value).strip()
    if text.replace(".", "", 1).isdigit():
        return to_epoch(float(text))
    dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.timestamp()


def _convert(kind: str, value: Any) -> Any:
    if value is None:
        return None
    if kind == "text":
        return value if isinstance(value, str) else json.dumps(value)
    if kind in ("int", "number"):
        if isinstance(value, bool):
            raise ValueError("a boolean is not a number")
        number = float(value)
        if not math.isfinite(number):
            raise ValueError("not a finite number")
        return int(number) if kind == "int" else number
    return to_epoch(value)


def verdict_for(state: str | None, states: Mapping[str, str]) -> tuple[str, str | None]:
    if state is None:
        return "unknown", None
    if state in states:
        return states[state], None
    folded = {k.casefold(): v for k, v in states.items()}
    if state.casefold() in folded:
        return folded[state.casefold()], None
    if state.casefold() in SCHEDULER_VERDICTS:
        return state.casefold(), None
    return "unknown", "unmapped_state"


def normalise_row(row: Mapping[str, Any], cluster: ClusterConfig, n: int) -> dict[str, Any]:
    job: dict[str, Any] = {}
    for target, kind in MAPPABLE_FIELDS.items():
        raw = dig(row, cluster.fields.get(target, target))
        try:
            value = _convert(kind, raw)
        except (ValueError, TypeError, OverflowError) as exc:
            raise _bad(f"row {n}: {target} = {raw!r}: {exc}") from None
        job[_TIME_KEYS.get(target, target)] = value
    if not job.get("job_id"):
        raise _bad(f"row {n} has no job_id (map it with fields.job_id)")
    if job.get("state") is None:
        raise _bad(f"row {n} (job {job['job_id']}) has no state (map it with fields.state)")
    job["job_id_raw"] = job["job_id"]
    verdict, cause = verdict_for(job["state"], cluster.states)
    job["verdict"] = verdict
    job["cause"] = job.get("cause") or cause
    job["state_raw"] = job["state"]
    job["source"] = "command"
    return job


def poll(cluster: ClusterConfig, known: Known, transport: Transport, deadline: float) -> Snapshot:
    assert cluster.command is not None
    table = read_job_table(
        transport,
        cluster.command,
        timeout=max(0.1, deadline - time.monotonic()),
        path_prepend=cluster.path_prepend,
    )
    rows = parse_rows(table.text, cluster.rows)
    jobs = [normalise_row(row, cluster, n) for n, row in enumerate(rows, 1)]
    if cluster.users and not cluster.all_users:
        jobs = [j for j in jobs if j.get("user") in cluster.users]
    jobs, skipped = split_skipped(jobs, cluster.skip)
    seen: dict[Any, dict[str, Any]] = {}
    for job in jobs:
        seen[job_key(job)] = job  # a row listed twice counts once (the last wins)
    snap = Snapshot(
        now=table.now,
        jobs=list(seen.values()),
        user=table.user,
        skipped=skipped,
        commands=[cluster.command],
        elapsed_s=table.elapsed_s,
    )
    examine(transport, cluster, known, snap, deadline)
    return snap
