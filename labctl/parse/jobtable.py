"""A job table printed as JSON (the `command` scheduler's output) -> jobs of facts.

Output: a JSON array of objects, JSON Lines (one object per line), or one JSON document
with the rows under the dotted path `rows`. Each row is mapped onto labctl's job fields by
`fields` (labctl field -> dotted path in the row; a field not mapped is read from the key
of the same name). Times may be epoch seconds (or milliseconds) or ISO 8601 text (UTC when
no offset). `job_id` and `state` are required in every row. What a state word means is
poll's to decide (`labctl.poll.verdict`, with the cluster's `states`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from labctl.errors import BackendError

# Fields a job table's row can be mapped onto (labctl name -> kind of value).
MAPPABLE_FIELDS: dict[str, str] = {
    "job_id": "text",
    "name": "text",
    "user": "text",
    "account": "text",
    "partition": "text",
    "state": "text",
    "reason": "text",
    "cause": "text",
    "exit_code": "int",
    "signal": "int",
    "submit_time": "time",
    "start_time": "time",
    "end_time": "time",
    "elapsed_s": "number",
    "time_limit_s": "number",
    "node_list": "text",
    "n_nodes": "int",
    "work_dir": "text",
    "stdout": "text",
    "stderr": "text",
    "array_job_id": "text",
    "array_task_id": "int",
}
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


def normalise_row(row: Mapping[str, Any], fields: Mapping[str, str], n: int) -> dict[str, Any]:
    """Row number `n` -> a job of facts (the parse layer's shape); `fields` maps labctl
    field names to dotted paths in the row."""
    job: dict[str, Any] = {}
    for target, kind in MAPPABLE_FIELDS.items():
        raw = dig(row, fields.get(target, target))
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
    job["state_raw"] = job["state"]
    job["source"] = "command"
    return job
