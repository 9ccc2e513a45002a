"""Pure parsing layer for SLURM (22.05) output: text in, dicts of facts out, no processes.
What the facts mean (the verdict) is poll's to decide: `labctl.poll.verdict`.

Import from here; the pieces live in:

- `commands`: the exact squeue/sacct/scontrol argv and environment poll runs.
- `table`: delimited-table splitting and the shared record shape (RECORD_KEYS).
- `ids`: job ids (arrays, het jobs, steps) and array specs.
- `fields`: value normalisers (states, exit codes, times, durations...).
- `sacct`, `squeue`, `scontrol`: per-command parsers -> records (`scontrol_oneliner`
  splits scontrol's key=value lines); `sacct_steps`: a job's step rows and the exit code
  they give it.
- `logpath`: stdout/stderr filename patterns resolved like slurmstepd.
"""

from __future__ import annotations

from labctl.parse.slurm.commands import (
    FIELD_DELIMITER,
    SACCT_FIELDS,
    SACCT_JOB_ID_CHUNK,
    SLURM_ENV,
    SQUEUE_FIELDS,
    env_prefix,
    sacct_argv,
    sacct_argv_chunks,
    scontrol_show_job_argv,
    squeue_argv,
    squeue_format_arg,
)
from labctl.parse.slurm.fields import (
    SlurmValueError,
    first_node,
    format_duration,
    parse_duration,
    parse_exit_code,
    parse_nodelist,
    parse_state,
    parse_time,
    parse_time_limit,
    parse_time_limit_raw,
    parse_user,
    parse_wait_status,
)
from labctl.parse.slurm.ids import (
    ArraySpec,
    JobId,
    format_array_spec,
    parse_array_spec,
    parse_job_id,
)
from labctl.parse.slurm.logpath import (
    LogJob,
    expand_log_path,
    log_job,
    resolve_log_paths,
    submit_line_log_patterns,
)
from labctl.parse.slurm.sacct import (
    latest_attempts,
    normalise_sacct_row,
    parse_sacct,
    sacct_jobs,
)
from labctl.parse.slurm.sacct_steps import combine_exit, group_sacct, summarise_sacct_job
from labctl.parse.slurm.scontrol import normalise_scontrol_job, scontrol_jobs
from labctl.parse.slurm.scontrol_oneliner import parse_scontrol_line, parse_scontrol_show_job_o
from labctl.parse.slurm.squeue import (
    fields_from_format,
    normalise_squeue_row,
    parse_squeue,
    squeue_jobs,
)
from labctl.parse.slurm.table import (
    RECORD_KEYS,
    JobRecord,
    SlurmParseError,
    parse_delimited,
)

__all__ = [
    "FIELD_DELIMITER",
    "RECORD_KEYS",
    "SACCT_FIELDS",
    "SACCT_JOB_ID_CHUNK",
    "SLURM_ENV",
    "SQUEUE_FIELDS",
    "ArraySpec",
    "JobId",
    "JobRecord",
    "LogJob",
    "SlurmParseError",
    "SlurmValueError",
    "combine_exit",
    "env_prefix",
    "expand_log_path",
    "fields_from_format",
    "first_node",
    "format_array_spec",
    "format_duration",
    "group_sacct",
    "latest_attempts",
    "log_job",
    "normalise_sacct_row",
    "normalise_scontrol_job",
    "normalise_squeue_row",
    "parse_array_spec",
    "parse_delimited",
    "parse_duration",
    "parse_exit_code",
    "parse_job_id",
    "parse_nodelist",
    "parse_sacct",
    "parse_scontrol_line",
    "parse_scontrol_show_job_o",
    "parse_squeue",
    "parse_state",
    "parse_time",
    "parse_time_limit",
    "parse_time_limit_raw",
    "parse_user",
    "parse_wait_status",
    "resolve_log_paths",
    "sacct_argv",
    "sacct_argv_chunks",
    "sacct_jobs",
    "scontrol_jobs",
    "scontrol_show_job_argv",
    "squeue_argv",
    "squeue_format_arg",
    "squeue_jobs",
    "submit_line_log_patterns",
    "summarise_sacct_job",
]
