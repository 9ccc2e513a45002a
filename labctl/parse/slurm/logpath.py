"""Where a batch job's stdout/stderr go: SLURM filename patterns resolved like slurmstepd.

squeue -O STDOUT/STDERR print the pattern as given (`%x-%j.out`); scontrol prints it
expanded but only while the job is in slurmctld memory; sacct 22.05 has no StdOut field,
only SubmitLine (`-o` given on the command line). This module turns any of those into the
path slurmstepd opens (src/slurmd/common/fname.c, batch branch):

- `%%` -> `%`; `%<n><letter>` zero-pads numbers to n digits (n capped at 10);
- `%j` the job's own id (an array task's raw id), `%J` `<jobid>.<stepid>`, `%s` the step
  id (4294967291 for the batch script), `%A` the array master id (the job id when not an
  array), `%a` the task id (4294967294 when not an array, as SLURM writes it), `%x` the job
  name, `%u` the user, `%N` the batch host, `%n`/`%t` 0; any other letter is left as is;
- a pattern containing `\\` is not expanded at all (backslashes removed);
- a relative path is under the job's WorkDir; no pattern means `slurm-%j.out`, or
  `slurm-%A_%a.out` for an array task; stderr without a pattern goes to stdout's file.

A value the pattern needs but nobody knows yet (`%N` before the job started, `%a` of a
pending array group, WorkDir of a relative path) gives None, never a guessed path.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from labctl.parse.slurm.fields import BATCH_STEP_ID, NO_VAL, first_node

_MAX_WIDTH = 10


@dataclass(frozen=True, slots=True)
class LogJob:
    """What a pattern can refer to. `job_id` is the raw id (`%j`); an array task has
    `array_job_id` and `array_task_id`; a pending array group has `array_job_id` only."""

    job_id: int
    array_job_id: int | None = None
    array_task_id: int | None = None
    name: str | None = None
    user: str | None = None
    node: str | None = None
    work_dir: str | None = None

    @property
    def is_array(self) -> bool:
        return self.array_job_id is not None


def log_job(record: Mapping[str, Any]) -> LogJob:
    """A LogJob from a normalised record (sacct, squeue or scontrol)."""
    raw = record.get("job_id_raw")
    if raw is None:
        raw = record.get("array_job_id")
    if raw is None:
        raise ValueError(f"record has no job id: {record.get('job_id')!r}")
    return LogJob(
        job_id=int(raw),
        array_job_id=record.get("array_job_id"),
        array_task_id=record.get("array_task_id"),
        name=record.get("name"),
        user=record.get("user"),
        node=first_node(record.get("node_list")),
        work_dir=record.get("work_dir"),
    )


def default_log_pattern(job: LogJob) -> str:
    return "slurm-%A_%a.out" if job.is_array else "slurm-%j.out"


def _unescape(path: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(path):
        ch = path[i]
        if ch == "\\":
            if i + 1 < len(path) and path[i + 1] == "\\":
                out.append("\\")
                i += 2
                continue
            i += 1
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _value(letter: str, job: LogJob, wid: int) -> str | None:
    """The text for one pattern letter; None = not known (yet). KeyError: not a letter
    slurmstepd expands for a batch script (left literal)."""
    if letter in "jAasntJ":
        if letter == "j":
            number: int | None = job.job_id
        elif letter == "J":
            return f"{job.job_id:0{wid}d}.{BATCH_STEP_ID}"
        elif letter == "A":
            number = job.array_job_id if job.is_array else job.job_id
        elif letter == "a":
            number = job.array_task_id if job.is_array else NO_VAL
        elif letter == "s":
            number = BATCH_STEP_ID
        else:  # n, t: node 0, task 0 of the batch script
            number = 0
        return None if number is None else f"{number:0{wid}d}"
    if letter == "N":
        return job.node
    if letter == "u":
        return job.user
    if letter == "x":
        return job.name
    raise KeyError(letter)


def _expand(path: str, job: LogJob) -> str | None:
    """slurmstepd's `_create_batch_fname` loop, quirks included."""
    out: list[str] = []
    n = len(path)
    p = q = 0
    while p < n:
        if path[p] != "%":
            p += 1
            continue
        if p + 1 < n and path[p + 1] == "%":  # "%%" -> "%"
            out.append(path[q : p + 1])
            p += 2
            q = p
            continue
        p += 1
        wid = 0
        if p < n and path[p].isdigit():
            out.append(path[q : p - 1])
            start = p
            while p < n and path[p].isdigit():
                p += 1
            wid = min(int(path[start:p]), _MAX_WIDTH)
            q = p - 1  # SLURM's quirk: an unknown letter after a width keeps "<n><letter>"
        if p == n:
            break
        try:
            value = _value(path[p], job, wid)
        except KeyError:
            continue  # not a pattern letter: stays literal
        if value is None:
            return None
        out.append(path[q : p - 1])
        out.append(value)
        p += 1
        q = p
    out.append(path[q:n])
    return "".join(out)


def expand_log_path(pattern: str | None, job: LogJob) -> str | None:
    """The file slurmstepd writes for `pattern` (None/empty: SLURM's default name)."""
    pat = pattern if pattern else default_log_pattern(job)
    if "\\" in pat:
        name = _unescape(pat)
        if pat.startswith("/"):
            return name
        # slurmstepd appends an escaped relative name to WorkDir without a "/".
        return None if not job.work_dir else job.work_dir + name
    expanded = _expand(pat, job)
    if expanded is None or expanded.startswith("/"):
        return expanded
    if not job.work_dir:
        return None
    return os.path.join(job.work_dir, expanded)


def resolve_log_paths(
    stdout_pattern: str | None, stderr_pattern: str | None, job: LogJob
) -> tuple[str | None, str | None]:
    """(stdout, stderr) paths; stderr without its own pattern shares stdout's file."""
    out = expand_log_path(stdout_pattern, job)
    err = expand_log_path(stderr_pattern, job) if stderr_pattern else out
    return out, err


# sbatch short options that take no value; every other short option takes one.
_SHORT_FLAGS = frozenset("HhIkOQsVvW")
# sbatch long options that take no value when written without "=".
_LONG_FLAGS = frozenset(
    [
        "--hold",
        "--parsable",
        "--requeue",
        "--no-requeue",
        "--exclusive",
        "--test-only",
        "--wait",
        "--overcommit",
        "--contiguous",
        "--quiet",
        "--verbose",
        "--use-min-nodes",
        "--spread-job",
        "--reboot",
        "--ignore-pbs",
        "--oversubscribe",
        "--no-kill",
        "--get-user-env",
        "--propagate",
        "--nice",
        "--help",
        "--usage",
        "--version",
        "--immediate",
        "--kill-on-invalid-dep",
        "--disable-status",
    ]
)


_SCRIPT_RE = re.compile(r"\.[A-Za-z0-9]+$")


def submit_line_log_patterns(submit_line: str | None) -> tuple[str | None, str | None]:
    """(`-o`, `-e`) patterns from an `sbatch ...` SubmitLine (sacct), or None each.

    Lossy by nature: only options before the script count, `#SBATCH -o` lines in the script
    are not visible, and SLURM stores the line without the shell's quotes. Prefer a path
    seen in squeue/scontrol while the job was live; this is the fallback after the purge.
    """
    if not submit_line:
        return None, None
    try:
        argv = shlex.split(submit_line)
    except ValueError:
        argv = submit_line.split()
    if not argv or os.path.basename(argv[0]) != "sbatch":
        return None, None
    found: dict[str, str] = {}
    i = 1
    while i < len(argv):
        tok = argv[i]
        if tok in {"--", "-"}:
            break
        if not tok.startswith("-"):
            # SubmitLine joins argv with spaces and drops quotes, so `-J "a b"` arrives as
            # two words: a bare word ends the options only if it looks like the script.
            if "/" in tok or _SCRIPT_RE.search(tok):
                break
            i += 1
            continue
        if tok.startswith("--"):
            name, eq, val = tok.partition("=")
            if not eq and name not in _LONG_FLAGS:
                val = argv[i + 1] if i + 1 < len(argv) else ""
                i += 1
            if name == "--wrap":
                break
            if name in ("--output", "--error"):
                found[name[2]] = val
        else:
            letter = tok[1]
            if letter not in _SHORT_FLAGS:
                val = tok[2:]
                if not val:
                    val = argv[i + 1] if i + 1 < len(argv) else ""
                    i += 1
                if letter in "oe":
                    found[letter] = val
        i += 1
    return found.get("o") or None, found.get("e") or None
