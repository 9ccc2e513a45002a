"""squeue output (-O with a suffix delimiter, or a `--format` with a separator) -> records.

squeue knows only jobs still in slurmctld memory: pending, running, suspended, and, with
`--states=all`, jobs that ended less than MinJobAge ago. It has no step rows, so a finished
job's real exit (`.batch`) needs sacct.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, tzinfo

from labctl.parse.slurm.commands import FIELD_DELIMITER, SQUEUE_FIELDS, SQUEUE_FORMAT_LETTERS
from labctl.parse.slurm.fields import (
    SlurmValueError,
    parse_duration,
    parse_int,
    parse_nodelist,
    parse_reason,
    parse_state,
    parse_text,
    parse_time,
    parse_time_limit,
    parse_user,
    parse_wait_status,
)
from labctl.parse.slurm.ids import parse_array_spec, parse_job_id
from labctl.parse.slurm.table import (
    JobRecord,
    SlurmParseError,
    new_record,
    parse_delimited,
    settle_exit,
    settle_lifecycle,
)

_FORMAT_TOKEN = re.compile(r"%\.?\d*([A-Za-z])")


def fields_from_format(fmt: str) -> tuple[tuple[str, ...], str]:
    """`%i|%A|%F|...|%j` -> (field names, "|"): lets a `--format` capture (the fixture
    files) parse with the same code as `-O`. The separator is the text between the first two
    specifiers and must be the same everywhere."""
    tokens = list(_FORMAT_TOKEN.finditer(fmt))
    if not tokens:
        raise ValueError(f"no % fields in {fmt!r}")
    names = []
    for t in tokens:
        letter = t.group(1)
        if letter not in SQUEUE_FORMAT_LETTERS:
            raise ValueError(f"unknown squeue format letter %{letter}")
        names.append(SQUEUE_FORMAT_LETTERS[letter])
    seps = {fmt[a.end() : b.start()] for a, b in itertools.pairwise(tokens)}
    if len(seps) > 1 or "" in seps:
        raise ValueError(f"squeue format needs one separator between all fields: {fmt!r}")
    return tuple(names), seps.pop() if seps else FIELD_DELIMITER


def parse_squeue(
    text: str, fields: Sequence[str] = SQUEUE_FIELDS, delimiter: str = FIELD_DELIMITER
) -> list[dict[str, str]]:
    """Raw squeue rows as `{field: cell}`; a delimiter inside the job name (the last field)
    only lengthens it."""
    return parse_delimited(text, fields, delimiter, free_text="Name", trailing_delimiter=False)


def _apply_id(rec: JobRecord, row: Mapping[str, str]) -> None:
    shown = row.get("JobArrayID")
    raw = row.get("JobID")
    array_job = row.get("ArrayJobID")
    task = (row.get("ArrayTaskID") or "").strip()
    if raw is not None and raw.strip():
        rec["job_id_raw"] = parse_job_id(raw).job_id
    if shown is None:  # rebuild the %i form from JobID/ArrayJobID/ArrayTaskID
        if raw is None:
            raise SlurmValueError("row has neither JobArrayID nor JobID")
        if task and task != "N/A" and array_job:
            shown = f"{array_job.strip()}_{task if task.isdigit() else f'[{task}]'}"
        else:
            shown = raw
    jid = parse_job_id(shown)
    rec["job_id"] = jid.job
    if jid.is_array:
        rec["array_job_id"] = jid.job_id
        rec["array_task_id"] = jid.array_task_id
        if jid.array_tasks is not None:
            rec["array_tasks"] = jid.array_tasks
            rec["array_throttle"] = parse_array_spec(jid.array_tasks).throttle
    if jid.het_offset is not None:
        rec["het_job_id"] = jid.job_id
        rec["het_offset"] = jid.het_offset
    if rec["job_id_raw"] is None and not jid.is_array and jid.het_offset is None:
        rec["job_id_raw"] = jid.job_id


_TIMES = (
    ("SubmitTime", "submit_epoch"),
    ("EligibleTime", "eligible_epoch"),
    ("StartTime", "start_epoch"),
    ("EndTime", "end_epoch"),
)
_TEXTS = (
    ("Account", "account"),
    ("Partition", "partition"),
    ("WorkDir", "work_dir"),
    ("STDOUT", "stdout_pattern"),
    ("STDERR", "stderr_pattern"),
    ("Name", "name"),
)


def _apply_cells(rec: JobRecord, row: Mapping[str, str], tz: tzinfo) -> None:
    state = row.get("State") or row.get("StateCompact")
    if state is not None:
        rec["state"], rec["cancelled_by"] = parse_state(state)
        rec["state_raw"] = state.strip() or None
    if (v := row.get("Reason")) is not None:
        rec["reason"] = parse_reason(v)
    if (v := row.get("UserName")) is not None:
        rec["user"], rec["uid"] = parse_user(v)
    if (v := row.get("UserID")) is not None and v.strip():
        rec["uid"] = parse_int(v)
    if (v := row.get("TimeUsed")) is not None:
        rec["elapsed_s"] = parse_duration(v)
    if (v := row.get("TimeLimit")) is not None:
        rec["time_limit_s"] = parse_time_limit(v)
    for field, key in _TIMES:
        if (v := row.get(field)) is not None:
            rec[key] = parse_time(v, tz)
    if (v := row.get("NodeList")) is not None:
        rec["node_list"] = parse_nodelist(v)
    if (v := row.get("NumNodes")) is not None:
        rec["n_nodes"] = parse_int(v)
    if (v := row.get("RestartCnt")) is not None:
        rec["restarts"] = parse_int(v)
    if (v := row.get("exit_code")) is not None:
        rec["exit_code"], rec["signal"] = parse_wait_status(v)
    for field, key in _TEXTS:
        if (v := row.get(field)) is not None:
            rec[key] = parse_text(v)


def normalise_squeue_row(row: Mapping[str, str], tz: tzinfo = UTC) -> JobRecord:
    """One raw squeue row -> a record (RECORD_KEYS). No step rows here: a FAILED 0:9 says
    nothing of its `.batch` step until sacct's row does."""
    rec = new_record("squeue")
    try:
        _apply_id(rec, row)
        _apply_cells(rec, row, tz)
    except SlurmValueError as exc:
        raise SlurmParseError(f"{exc} in squeue row {dict(row)!r}") from exc
    settle_lifecycle(rec)
    settle_exit(rec)
    return rec


def squeue_jobs(
    text: str,
    fields: Sequence[str] = SQUEUE_FIELDS,
    delimiter: str = FIELD_DELIMITER,
    *,
    tz: tzinfo = UTC,
) -> list[JobRecord]:
    """squeue output -> one record per row, in squeue's order."""
    return [normalise_squeue_row(r, tz) for r in parse_squeue(text, fields, delimiter)]
