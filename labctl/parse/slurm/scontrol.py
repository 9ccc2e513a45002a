"""Parsed `scontrol --oneliner show job` jobs (`scontrol_oneliner`) -> job records of
facts (RECORD_KEYS)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, tzinfo

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
    parse_user,
)
from labctl.parse.slurm.ids import parse_array_spec
from labctl.parse.slurm.scontrol_oneliner import parse_scontrol_show_job_o
from labctl.parse.slurm.table import (
    JobRecord,
    SlurmParseError,
    new_record,
    settle_exit,
    settle_lifecycle,
)


def _apply_id(rec: JobRecord, d: Mapping[str, str]) -> None:
    raw = d.get("JobId")
    if raw is None or not raw.strip().isdigit():
        raise SlurmValueError(f"bad JobId {raw!r}")
    rec["job_id_raw"] = int(raw)
    rec["job_id"] = raw.strip()
    array_job, task = d.get("ArrayJobId"), (d.get("ArrayTaskId") or "").strip()
    if array_job and array_job.strip().isdigit() and task and task != "N/A":
        rec["array_job_id"] = int(array_job)
        if task.isdigit():
            rec["array_task_id"] = int(task)
            rec["job_id"] = f"{int(array_job)}_{task}"
        else:
            spec = parse_array_spec(task)
            rec["array_tasks"] = task
            rec["array_throttle"] = spec.throttle
            rec["job_id"] = f"{int(array_job)}_[{task}]"
    het, off = d.get("HetJobId"), d.get("HetJobOffset")
    if het and het.strip().isdigit() and off and off.strip().isdigit():
        rec["het_job_id"], rec["het_offset"] = int(het), int(off)
        rec["job_id"] = f"{int(het)}+{int(off)}"


_TIMES = (
    ("SubmitTime", "submit_epoch"),
    ("EligibleTime", "eligible_epoch"),
    ("StartTime", "start_epoch"),
    ("EndTime", "end_epoch"),
)
_TEXTS = (
    ("JobName", "name"),
    ("Account", "account"),
    ("Partition", "partition"),
    ("WorkDir", "work_dir"),
    ("StdOut", "stdout"),
    ("StdErr", "stderr"),
)


def _apply_cells(rec: JobRecord, d: Mapping[str, str], tz: tzinfo) -> None:
    if (v := d.get("JobState")) is not None:
        rec["state"], rec["cancelled_by"] = parse_state(v)
        rec["state_raw"] = v.strip() or None
    if (v := d.get("Reason")) is not None:
        rec["reason"] = parse_reason(v)
    if (v := d.get("UserId")) is not None:
        rec["user"], rec["uid"] = parse_user(v)
    if (v := d.get("ExitCode")) is not None:
        rec["exit_code"], rec["signal"] = parse_exit_code(v)
    if (v := d.get("DerivedExitCode")) is not None:
        rec["derived_exit_code"], rec["derived_signal"] = parse_exit_code(v)
    if (v := d.get("RunTime")) is not None:
        rec["elapsed_s"] = parse_duration(v)
    if (v := d.get("TimeLimit")) is not None:
        rec["time_limit_s"] = parse_time_limit(v)
    for key, out in _TIMES:
        if (v := d.get(key)) is not None:
            rec[out] = parse_time(v, tz)
    if (v := d.get("NodeList")) is not None:
        rec["node_list"] = parse_nodelist(v)
    for key, out in (("NumNodes", "n_nodes"), ("Restarts", "restarts")):
        if (v := d.get(key)) is not None and v.strip().isdigit():
            rec[out] = parse_int(v)
    for key, out in _TEXTS:
        if (v := d.get(key)) is not None:
            rec[out] = parse_text(v)


def normalise_scontrol_job(d: Mapping[str, str], tz: tzinfo = UTC) -> JobRecord:
    """One parsed scontrol job -> a record (RECORD_KEYS). StdOut/StdErr are the
    paths scontrol already expanded, except for a pending array group, whose `%a` SLURM
    expands to 4294967294 (no task yet): those are None."""
    rec = new_record("scontrol")
    try:
        _apply_id(rec, d)
        _apply_cells(rec, d, tz)
    except SlurmValueError as exc:
        raise SlurmParseError(f"{exc} in scontrol job {dict(d)!r}") from exc
    if rec["array_tasks"] is not None:
        rec["stdout"] = rec["stderr"] = None
    settle_lifecycle(rec)
    settle_exit(rec)
    return rec


def scontrol_jobs(text: str, *, tz: tzinfo = UTC) -> list[JobRecord]:
    """`scontrol -o show job` output -> one record per job."""
    return [normalise_scontrol_job(d, tz) for d in parse_scontrol_show_job_o(text)]
