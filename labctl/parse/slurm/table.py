"""Delimited SLURM tables (sacct --parsable2, squeue -O with a suffix) and the shared shape of
a normalised job record.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

JobRecord = dict[str, Any]


class SlurmParseError(ValueError):
    """Output that does not have the shape the command was asked for (`bad_output`)."""

    def __init__(self, message: str, *, line_no: int | None = None, line: str | None = None):
        super().__init__(message if line_no is None else f"line {line_no}: {message}")
        self.line_no = line_no
        self.line = line


def parse_delimited(
    text: str,
    fields: Sequence[str],
    delimiter: str,
    *,
    free_text: str | None = None,
    trailing_delimiter: bool | None = None,
) -> list[dict[str, str]]:
    """Split delimited rows into `{field: cell}` dicts, tolerating what real output does.

    - A row with MORE cells than fields has the delimiter inside a free-text cell: the
      overflow is joined back into `free_text` (default: the last field, which is where the
      job name goes). So `16|lr=3e-4|bs=64 run|COMPLETED` with JobName second still parses
      when `free_text="JobName"`, and a last-field name can hold anything.
    - `--parsable` ends every row with one extra delimiter: with `trailing_delimiter=None`
      that is detected (every non-blank row ends with it) and dropped.
    - Blank lines and a `\\r` before the newline (a pty over SSH) are ignored.
    - A row without any delimiter right after a row whose free-text field is last continues
      that field (a newline inside a job name).
    - A row with fewer cells raises SlurmParseError (cut or foreign output).
    """
    return list(
        iter_delimited(
            text, fields, delimiter, free_text=free_text, trailing_delimiter=trailing_delimiter
        )
    )


def lines_of(text: str) -> Iterator[str]:
    """`text.split("\\n")`, one line at a time (a 5 MB answer is not copied into a list)."""
    start = 0
    while (end := text.find("\n", start)) >= 0:
        yield text[start:end]
        start = end + 1
    yield text[start:]


def iter_delimited(
    text: str | Iterable[str],
    fields: Sequence[str],
    delimiter: str,
    *,
    free_text: str | None = None,
    trailing_delimiter: bool | None = None,
) -> Iterator[dict[str, str]]:
    """`parse_delimited`, one row at a time (a row is yielded once the next line shows it
    is complete, so thousands of rows are never all held at once). `text` may also be
    its lines."""
    n = len(fields)
    if n == 0:
        raise ValueError("no fields")
    fields = tuple(fields)
    idx = fields.index(free_text) if free_text is not None and free_text in fields else n - 1
    tail = n - 1 - idx  # cells after the free-text one
    lines: Iterable[str] = lines_of(text) if isinstance(text, str) else text
    if trailing_delimiter is None:
        lines = list(lines)
        nonblank = [ln.rstrip("\r") for ln in lines if ln.strip()]
        trailing_delimiter = bool(nonblank) and all(ln.endswith(delimiter) for ln in nonblank)
    last: dict[str, str] | None = None
    for line_no, raw_line in enumerate(lines, 1):
        line = raw_line[:-1] if raw_line.endswith("\r") else raw_line
        if not line.strip():
            continue
        parts = line.split(delimiter)
        if trailing_delimiter and len(parts) > n and parts[-1] == "":
            parts.pop()
        count = len(parts)
        if count == 1 < n and last is not None and tail == 0:
            last[fields[idx]] += "\n" + line
            continue
        if count > n:
            parts[idx : count - tail] = [delimiter.join(parts[idx : count - tail])]
        elif count < n:
            raise SlurmParseError(
                f"{count} cells, expected {n} ({delimiter!r}-separated {','.join(fields)})",
                line_no=line_no,
                line=line,
            )
        if last is not None:
            yield last
        last = dict(zip(fields, parts, strict=True))
    if last is not None:
        yield last


RECORD_KEYS: tuple[str, ...] = (
    "source",
    "job_id",
    "job_id_raw",
    "array_job_id",
    "array_task_id",
    "array_tasks",
    "array_throttle",
    "het_job_id",
    "het_offset",
    "step",
    "name",
    "user",
    "uid",
    "account",
    "partition",
    "state",
    "state_raw",
    "cancelled_by",
    "reason",
    "exit_code",
    "signal",
    "derived_exit_code",
    "derived_signal",
    "submit_epoch",
    "eligible_epoch",
    "start_epoch",
    "end_epoch",
    "elapsed_s",
    "time_limit_s",
    "suspended_s",
    "node_list",
    "n_nodes",
    "restarts",
    "work_dir",
    "stdout",
    "stderr",
    "stdout_pattern",
    "stderr_pattern",
    "submit_line",
)

_TEMPLATE: JobRecord = dict.fromkeys(RECORD_KEYS)


def new_record(source: str) -> JobRecord:
    """A record with every key of RECORD_KEYS, all None but `source`."""
    rec = _TEMPLATE.copy()
    rec["source"] = source
    return rec


# States in which SLURM's start/end columns are estimates or placeholders, not events.
NOT_STARTED_STATES = frozenset({"PENDING", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD"})
# States whose exit code is the outcome (SPECIAL_EXIT: ended with the special exit code and
# was requeued held; its exit still says what happened).
TERMINAL_STATES = frozenset(
    {
        "COMPLETED",
        "FAILED",
        "TIMEOUT",
        "CANCELLED",
        "PREEMPTED",
        "NODE_FAIL",
        "BOOT_FAIL",
        "OUT_OF_MEMORY",
        "DEADLINE",
        "REVOKED",
        "SPECIAL_EXIT",
    }
)


def settle_lifecycle(rec: JobRecord) -> None:
    """Drop values SLURM prints that are not facts yet: a pending job's start (squeue and
    scontrol print the *expected* start), a live job's end (start + limit), and exit codes
    before the job is over (sacct prints `0:0` while running). A REQUEUED record (an earlier
    attempt, `sacct -D`) keeps its start and end: they happened."""
    state = rec["state"]
    if state is None:  # State not asked for: nothing to judge by
        return
    if state in NOT_STARTED_STATES:
        rec["start_epoch"] = None
        rec["end_epoch"] = None
    if state not in TERMINAL_STATES:
        if state != "REQUEUED":
            rec["end_epoch"] = None
        rec["exit_code"] = rec["signal"] = None
        rec["derived_exit_code"] = rec["derived_signal"] = None


def ran_on_a_node(rec: JobRecord) -> bool:
    """Whether the job got as far as a node: a node list, or a start with time elapsed.
    Cancelled-while-pending and DEADLINE-before-start jobs did not."""
    return rec["node_list"] is not None or (
        rec["start_epoch"] is not None and (rec["elapsed_s"] or 0) > 0
    )


def settle_exit(rec: JobRecord) -> None:
    """Nothing ran, so no exit code and no start: SLURM still prints both for a job that
    never reached a node (DEADLINE job 31 reads `1:0` in sacct and `0:1` in scontrol; squeue
    gives a cancelled-while-pending job the cancel time as StartTime)."""
    if rec["state"] in TERMINAL_STATES and not ran_on_a_node(rec):
        rec["exit_code"] = rec["signal"] = None
        rec["derived_exit_code"] = rec["derived_signal"] = None
        rec["start_epoch"] = None
