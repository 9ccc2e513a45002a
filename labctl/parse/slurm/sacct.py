"""sacct --parsable2 output -> job records with the real exit code.

A job is one allocation row (`6_2`) plus its step rows (`6_2.batch`, `6_2.extern`, `6_2.0`).
The allocation row carries the state; the step rows carry what actually happened to the
script: a TIMEOUT or a cancel shows as `0:0` on the job and `CANCELLED 0:15` on `.batch`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, tzinfo
from typing import Any

from labctl.parse.slurm.commands import FIELD_DELIMITER, SACCT_FIELDS
from labctl.parse.slurm.fields import (
    SlurmValueError,
    parse_duration,
    parse_exit_code,
    parse_int,
    parse_nodelist,
    parse_reason,
    parse_state,
    parse_text,
    parse_time,
    parse_time_limit,
    parse_time_limit_raw,
    parse_user,
)
from labctl.parse.slurm.ids import parse_array_spec, parse_job_id
from labctl.parse.slurm.sacct_steps import group_sacct, summarise_sacct_job
from labctl.parse.slurm.table import (
    TERMINAL_STATES,
    JobRecord,
    SlurmParseError,
    iter_delimited,
    new_record,
    parse_delimited,
    settle_exit,
    settle_lifecycle,
)

_FREE_TEXT_FIELDS = ("JobName", "SubmitLine", "WorkDir")


def parse_sacct(
    text: str,
    fields: Sequence[str] = SACCT_FIELDS,
    delimiter: str = FIELD_DELIMITER,
    *,
    free_text: str | None = None,
    trailing_delimiter: bool | None = None,
) -> list[dict[str, str]]:
    """Raw sacct rows as `{field: cell}`. The overflow of a delimiter inside free text goes
    back into `free_text`, by default the first of JobName, SubmitLine, WorkDir that was
    asked for, wherever it sits (see `parse_delimited`)."""
    if free_text is None:
        free_text = next((f for f in _FREE_TEXT_FIELDS if f in fields), None)
    return parse_delimited(
        text, fields, delimiter, free_text=free_text, trailing_delimiter=trailing_delimiter
    )


def _apply_id(rec: JobRecord, row: Mapping[str, str]) -> None:
    text = row.get("JobID") or row.get("JobIDRaw")
    if not text:
        raise SlurmValueError("row has no JobID")
    jid = parse_job_id(text)
    rec["job_id"] = jid.job
    rec["step"] = jid.step
    if jid.is_array:
        rec["array_job_id"] = jid.job_id
        rec["array_task_id"] = jid.array_task_id
        if jid.array_tasks is not None:
            spec = parse_array_spec(jid.array_tasks)
            rec["array_tasks"] = jid.array_tasks
            rec["array_throttle"] = spec.throttle
    if jid.het_offset is not None:
        rec["het_job_id"] = jid.job_id
        rec["het_offset"] = jid.het_offset
    raw = row.get("JobIDRaw")
    if raw:
        rec["job_id_raw"] = (jid if raw == text else parse_job_id(raw)).job_id
    elif not jid.is_array:
        rec["job_id_raw"] = jid.job_id


def normalise_sacct_row(row: Mapping[str, str], tz: tzinfo = UTC) -> JobRecord:
    """One raw sacct row -> a record (RECORD_KEYS). Times are epoch seconds; text times are
    read in `tz` (the zone sacct ran in; epoch output needs none)."""
    rec = new_record("sacct")
    try:
        _apply_id(rec, row)
        _apply_state(rec, row)
        _apply_times(rec, row, tz)
        _apply_other(rec, row)
    except SlurmValueError as exc:
        raise SlurmParseError(f"{exc} in sacct row {dict(row)!r}") from exc
    settle_lifecycle(rec)
    if rec["step"] is None:
        settle_exit(rec)
    return rec


def _apply_state(rec: JobRecord, row: Mapping[str, str]) -> None:
    if (v := row.get("State")) is not None:
        rec["state"], rec["cancelled_by"] = parse_state(v)
        rec["state_raw"] = v.strip() or None
    if (v := row.get("ExitCode")) is not None:
        rec["exit_code"], rec["signal"] = parse_exit_code(v)
    if (v := row.get("DerivedExitCode")) is not None:
        rec["derived_exit_code"], rec["derived_signal"] = parse_exit_code(v)
    if (v := row.get("Reason")) is not None:
        rec["reason"] = parse_reason(v)


def _apply_times(rec: JobRecord, row: Mapping[str, str], tz: tzinfo) -> None:
    for field, key in _TIME_FIELDS:
        if (v := row.get(field)) is not None:
            rec[key] = parse_time(v, tz)
    if (v := row.get("ElapsedRaw")) is not None:
        rec["elapsed_s"] = parse_int(v)
    elif (v := row.get("Elapsed")) is not None:
        rec["elapsed_s"] = parse_duration(v)
    if (v := row.get("Timelimit")) is not None:
        rec["time_limit_s"] = parse_time_limit(v)
    if rec["time_limit_s"] is None and (v := row.get("TimelimitRaw")):
        rec["time_limit_s"] = parse_time_limit_raw(v)
    if (v := row.get("Suspended")) is not None:
        rec["suspended_s"] = parse_duration(v)


def _apply_other(rec: JobRecord, row: Mapping[str, str]) -> None:
    if (v := row.get("NodeList")) is not None:
        rec["node_list"] = parse_nodelist(v)
    if (v := row.get("NNodes")) is not None:
        rec["n_nodes"] = parse_int(v)
    if (v := row.get("User")) is not None:
        rec["user"], rec["uid"] = parse_user(v)
    if (v := row.get("UID")) is not None and v.strip():
        rec["uid"] = parse_int(v)
    for field, key in _TEXT_FIELDS:
        if (v := row.get(field)) is not None:
            rec[key] = parse_text(v)


_TIME_FIELDS = (
    ("Submit", "submit_epoch"),
    ("Eligible", "eligible_epoch"),
    ("Start", "start_epoch"),
    ("End", "end_epoch"),
)
_TEXT_FIELDS = (
    ("Partition", "partition"),
    ("Account", "account"),
    ("WorkDir", "work_dir"),
    ("SubmitLine", "submit_line"),
    ("JobName", "name"),
)


def sacct_jobs(
    text: str | Iterable[str],
    fields: Sequence[str] = SACCT_FIELDS,
    delimiter: str = FIELD_DELIMITER,
    *,
    tz: tzinfo = UTC,
    trailing_delimiter: bool = False,
) -> list[JobRecord]:
    """sacct output -> one summarised record per allocation row, in sacct's order.
    `--parsable2` output (what `sacct_argv` asks for) has no trailing delimiter, so a job
    name that ends with the delimiter stays intact; pass True for `--parsable`."""
    if free_text := next((f for f in _FREE_TEXT_FIELDS if f in fields), None):
        rows = iter_delimited(
            text, fields, delimiter, free_text=free_text, trailing_delimiter=trailing_delimiter
        )
    else:
        rows = iter_delimited(text, fields, delimiter, trailing_delimiter=trailing_delimiter)
    records = (step_row(r) if _is_step(r) else normalise_sacct_row(r, tz) for r in rows)
    groups = deque(group_sacct(records))  # a job's rows are dropped as its summary is made
    out = []
    while groups:
        out.append(summarise_sacct_job(groups.popleft()))
    return out


def _is_step(row: Mapping[str, str]) -> bool:
    return "." in (row.get("JobID") or row.get("JobIDRaw") or "")


def step_row(row: Mapping[str, str]) -> JobRecord:
    """A step row (`6_2.batch`, `6_2.extern`, `6_2.0`) as `sacct_jobs` needs it: its ids,
    state and exit code, the cells `summarise_sacct_job` reads (a step still running has
    no exit code yet). Its times, nodes and names describe the step, not the job, and are
    not parsed: two thirds of a large sacct answer are step rows."""
    text = row.get("JobID") or row.get("JobIDRaw")
    try:
        if not text:
            raise SlurmValueError("row has no JobID")
        jid = parse_job_id(text)
        state, cancelled_by = parse_state(row.get("State") or "")
        code, signal = parse_exit_code(row.get("ExitCode") or "")
        raw = row.get("JobIDRaw")
        raw_id = (jid if raw == text else parse_job_id(raw)).job_id if raw else None
    except SlurmValueError as exc:
        raise SlurmParseError(f"{exc} in sacct row {dict(row)!r}") from exc
    if state is not None and state not in TERMINAL_STATES:
        code = signal = None
    return {
        "job_id": jid.job,
        "job_id_raw": raw_id if raw else (None if jid.is_array else jid.job_id),
        "array_job_id": jid.array_job_id,
        "array_task_id": jid.array_task_id,
        "het_job_id": jid.job_id if jid.het_offset is not None else None,
        "het_offset": jid.het_offset,
        "step": jid.step,
        "state": state,
        "cancelled_by": cancelled_by,
        "exit_code": code,
        "signal": signal,
    }


def latest_attempts(jobs: Iterable[JobRecord]) -> list[JobRecord]:
    """Keep the newest record per job (raw id + displayed id; greatest submit, later wins
    ties) and count the records seen as `attempts`: with `sacct -D`, a requeued job's
    REQUEUED/NODE_FAIL attempt and its new PENDING record become one record with
    `attempts: 2`. The displayed id is part of the key because a pending array group
    (`7_[3%1]`) and the task that later runs (`7_3`) share raw id 7."""
    best: dict[tuple[Any, Any], JobRecord] = {}
    counts: dict[tuple[Any, Any], int] = {}
    for rec in jobs:
        key = (rec["job_id_raw"], rec["job_id"])
        counts[key] = counts.get(key, 0) + 1
        cur = best.get(key)
        if cur is None or (rec["submit_epoch"] or 0) >= (cur["submit_epoch"] or 0):
            best[key] = rec
    return [dict(rec, attempts=counts[key]) for key, rec in best.items()]
