"""The exact squeue/sacct/scontrol command lines `labctl poll` runs, as data.

Nothing here runs a process: these functions build argv lists (and the environment prefix)
that the poll layer hands to a local or SSH runner, and the parsers in this package read
exactly what those commands print.

Choices (SLURM 22.05; see tests/fixtures/slurm/README.md for the real outputs):

- Delimiter `\\x1f` (ASCII Unit Separator) for sacct `--delimiter` and as the squeue `-O`
  field suffix. It is the control character made for separating fields, cannot be typed
  into `sbatch -J` by accident, is not `,` (squeue splits `-O` on commas) or a digit/`.`
  (squeue reads those as a field width), and survives shell quoting. The job name is still
  the LAST field, so even a name that contains the delimiter only lengthens the last field
  (the parsers merge the overflow back). `|` is not safe: fixture job 16 is `lr=3e-4|bs=64 run`.
- `SLURM_TIME_FORMAT=%s`: every time is epoch seconds, so the remote time zone does not
  matter (sacct cuts `%z` formats to 19 chars and loses the offset). `TZ=UTC` too, because
  sacct's `-S` is read in the client's zone and we pass it UTC text.
- `SLURM_BITSTR_LEN=0`: array task specs (`7_[2-3%1]`) are never cut at 64 bytes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

FIELD_DELIMITER = "\x1f"

# Environment every SLURM call runs with; `env_prefix()` turns it into an argv prefix that
# works the same locally and through SSH (`env K=V ... sacct ...`).
SLURM_ENV: dict[str, str] = {
    "SLURM_TIME_FORMAT": "%s",
    "TZ": "UTC",
    "SLURM_BITSTR_LEN": "0",
}

# sacct --format. 22.05 has no ArrayJobID/ArrayTaskID/StdOut/StdErr/Restarts fields (all
# "Invalid field requested"); array parts come from JobID (`6_2`) + JobIDRaw (`20`), log
# paths from squeue/scontrol or SubmitLine. JobName LAST (free text); SubmitLine before it.
SACCT_FIELDS: tuple[str, ...] = (
    "JobIDRaw",
    "JobID",
    "State",
    "ExitCode",
    "DerivedExitCode",
    "Reason",
    "Submit",
    "Eligible",
    "Start",
    "End",
    "ElapsedRaw",
    "Timelimit",
    "TimelimitRaw",
    "Suspended",
    "NodeList",
    "NNodes",
    "Partition",
    "User",
    "UID",
    "Account",
    "WorkDir",
    "SubmitLine",
    "JobName",
)

# squeue -O (--Format) field names, 22.05. -O, unlike --format, has STDOUT/STDERR (the
# *unexpanded* patterns) and WorkDir. `JobArrayID` is the `%i` form (`6_2`, `7_[2-3%1]`,
# `12+0`), `JobID` the task's own raw id, `exit_code` a raw wait status (768 = exit 3).
SQUEUE_FIELDS: tuple[str, ...] = (
    "JobArrayID",
    "JobID",
    "ArrayJobID",
    "ArrayTaskID",
    "State",
    "Reason",
    "UserName",
    "Account",
    "Partition",
    "TimeUsed",
    "TimeLimit",
    "SubmitTime",
    "EligibleTime",
    "StartTime",
    "EndTime",
    "NodeList",
    "NumNodes",
    "RestartCnt",
    "exit_code",
    "STDOUT",
    "STDERR",
    "WorkDir",
    "Name",
)

# `squeue --format` letters (the older, fixed set) -> the -O names above, so a `%i|%A|...`
# capture (the fixture files) parses with the same code.
SQUEUE_FORMAT_LETTERS: dict[str, str] = {
    "i": "JobArrayID",
    "A": "JobID",
    "F": "ArrayJobID",
    "K": "ArrayTaskID",
    "T": "State",
    "t": "StateCompact",
    "r": "Reason",
    "R": "ReasonList",
    "P": "Partition",
    "u": "UserName",
    "U": "UserID",
    "a": "Account",
    "M": "TimeUsed",
    "l": "TimeLimit",
    "V": "SubmitTime",
    "S": "StartTime",
    "e": "EndTime",
    "D": "NumNodes",
    "C": "NumCPUs",
    "m": "MinMemory",
    "N": "NodeList",
    "Z": "WorkDir",
    "j": "Name",
    "o": "Command",
}

SACCT_JOB_ID_CHUNK = 200


def env_prefix(env: dict[str, str] | None = None) -> list[str]:
    """`["env", "SLURM_TIME_FORMAT=%s", "TZ=UTC", "SLURM_BITSTR_LEN=0"]`."""
    return ["env", *(f"{k}={v}" for k, v in (SLURM_ENV if env is None else env).items())]


def squeue_format_arg(
    fields: Sequence[str] = SQUEUE_FIELDS, delimiter: str = FIELD_DELIMITER
) -> str:
    """The `-O` value: every field but the last gets `:<delimiter>` (width 0 = unpadded, the
    delimiter as suffix); the last gets a bare `:` (width 0, no suffix, no padding)."""
    if not fields:
        raise ValueError("no squeue fields")
    if "," in delimiter or delimiter[:1].isdigit() or delimiter[:1] == ".":
        raise ValueError("squeue -O suffix cannot contain ',' or start with a digit or '.'")
    return ",".join(f"{f}:{delimiter}" for f in fields[:-1]) + f",{fields[-1]}:"


def _csv(values: Iterable[str]) -> str:
    items = [v.strip() for v in values if v and v.strip()]
    for v in items:
        if "," in v:
            raise ValueError(f"comma in list item {v!r}")
    return ",".join(items)


def squeue_argv(
    *,
    users: Sequence[str] = (),
    accounts: Sequence[str] = (),
    job_ids: Sequence[str] = (),
    fields: Sequence[str] = SQUEUE_FIELDS,
    delimiter: str = FIELD_DELIMITER,
    expand_arrays: bool = False,
) -> list[str]:
    """`squeue --noheader --states=all [-u ...] [-A ...] [-j ...] -O <fields>`.

    `--states=all`: pending, running, suspended AND jobs that ended less than MinJobAge ago
    (the default is PD,R,CG only). Users and accounts are ANDed by squeue. Avoid `job_ids`
    for routine polls: `squeue -j <purged id>` exits 1 (`Invalid job id specified`).
    Without `expand_arrays`, pending array tasks stay one row (`7_[2-3%1]`).
    """
    argv = ["squeue", "--noheader", "--states=all"]
    if expand_arrays:
        argv.append("--array")
    if users:
        argv.append(f"--users={_csv(users)}")
    if accounts:
        argv.append(f"--accounts={_csv(accounts)}")
    if job_ids:
        argv.append(f"--jobs={_csv(job_ids)}")
    argv.append(f"--Format={squeue_format_arg(fields, delimiter)}")
    return argv


def _utc_text(epoch: float) -> str:
    return datetime.fromtimestamp(int(epoch), tz=UTC).strftime("%Y-%m-%dT%H:%M:%S")


def sacct_argv(
    *,
    users: Sequence[str] = (),
    accounts: Sequence[str] = (),
    all_users: bool = False,
    since: float | None = None,
    until: float | None = None,
    job_ids: Sequence[str] = (),
    fields: Sequence[str] = SACCT_FIELDS,
    delimiter: str = FIELD_DELIMITER,
    allocations_only: bool = False,
    duplicates: bool = False,
) -> list[str]:
    """One sacct call. Either a window (`since`, epoch seconds, rendered as UTC text for
    `-S`; run it with `env_prefix()` so TZ=UTC) or a list of job ids (at most
    SACCT_JOB_ID_CHUNK; use `sacct_argv_chunks`), never neither: sacct's default window is
    "since midnight" and it skips jobs that never became eligible.

    With `job_ids` do not pass `since`: the window filters on *eligible* time, and held,
    dependency-blocked and cancelled-while-pending jobs have none, so they would vanish again
    (the by-id fixture, captured without -S, has them). An id list is already bounded.
    Steps are included unless `allocations_only` (-X): poll needs `.batch` for the real exit.
    Non-root sacct shows only the caller's jobs unless `users`/`accounts`/`all_users`.
    """
    if not job_ids and since is None:
        raise ValueError("sacct needs a window (since) or job ids: never the default window")
    if len(job_ids) > SACCT_JOB_ID_CHUNK:
        raise ValueError(f"more than {SACCT_JOB_ID_CHUNK} job ids: use sacct_argv_chunks")
    argv = [
        "sacct",
        "--noheader",
        "--parsable2",
        f"--delimiter={delimiter}",
        f"--format={','.join(fields)}",
    ]
    if allocations_only:
        argv.append("--allocations")
    if duplicates:
        argv.append("--duplicates")
    if job_ids:
        argv.append(f"--jobs={_csv(job_ids)}")
    if since is not None:
        argv.append(f"--starttime={_utc_text(since)}")
        argv.append(f"--endtime={_utc_text(until) if until is not None else 'now'}")
    if users:
        argv.append(f"--user={_csv(users)}")
    if accounts:
        argv.append(f"--accounts={_csv(accounts)}")
    if all_users or (accounts and not users):
        argv.append("--allusers")
    return argv


def sacct_argv_chunks(
    job_ids: Sequence[str],
    *,
    chunk_size: int = SACCT_JOB_ID_CHUNK,
    users: Sequence[str] = (),
    accounts: Sequence[str] = (),
    all_users: bool = False,
    fields: Sequence[str] = SACCT_FIELDS,
    delimiter: str = FIELD_DELIMITER,
    allocations_only: bool = False,
    duplicates: bool = False,
) -> list[list[str]]:
    """One `sacct_argv(job_ids=chunk, ...)` per chunk of at most `chunk_size` ids (deduped,
    order kept). Large `-j` lists made slurmdbd run multi-minute queries (Toil #5381)."""
    if not 1 <= chunk_size <= SACCT_JOB_ID_CHUNK:
        raise ValueError(f"chunk_size must be 1..{SACCT_JOB_ID_CHUNK}")
    unique = list(dict.fromkeys(j.strip() for j in job_ids if j.strip()))
    return [
        sacct_argv(
            job_ids=unique[i : i + chunk_size],
            users=users,
            accounts=accounts,
            all_users=all_users,
            fields=fields,
            delimiter=delimiter,
            allocations_only=allocations_only,
            duplicates=duplicates,
        )
        for i in range(0, len(unique), chunk_size)
    ]


def scontrol_show_job_argv(job_id: str | None = None) -> list[str]:
    """`scontrol --oneliner show job [ID]`: expanded StdOut/StdErr while the job is still in
    slurmctld memory (MinJobAge). Without an id it dumps every job of every user: avoid."""
    argv = ["scontrol", "--oneliner", "show", "job"]
    if job_id is not None:
        argv.append(job_id)
    return argv
