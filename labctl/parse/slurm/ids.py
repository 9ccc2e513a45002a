"""SLURM job ids (`123`, `123_4`, `123_[0-3%2]`, `123+1`, `123_4.batch`) and array specs.

Pure: text that is not an id or spec SLURM could have printed raises `SlurmValueError`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from labctl.parse.slurm.fields import SlurmValueError

# --------------------------------------------------------------------------- job ids

_JOB_ID_RE = re.compile(
    r"(?P<job>\d+)"
    r"(?:_(?:(?P<task>\d+)|\[(?P<spec>[^\]]*)\]?))?"
    r"(?:\+(?P<het>\d+))?"
    r"(?:\.(?P<step>[A-Za-z0-9_-]+))?"
)
_STEP_RE = re.compile(r"[A-Za-z0-9_-]+")


@dataclass(frozen=True, slots=True)
class JobId:
    """A parsed SLURM job id: `123`, `123_4`, `123_[0-3%2]`, `123+1`, `123_4.batch`, `123.0`.

    `job_id` is the leading number: the array master id for array tasks, the leader id for
    heterogeneous components, else the job itself. For a task it is *not* the task's own
    (raw) id; that is JobIDRaw / squeue `JobID`.
    """

    text: str
    job_id: int
    array_task_id: int | None = None
    array_tasks: str | None = None  # spec of a pending, collapsed group: "0-3%2"
    het_offset: int | None = None
    step: str | None = None  # "batch", "extern", "interactive", "0", ...

    @property
    def is_array(self) -> bool:
        return self.array_task_id is not None or self.array_tasks is not None

    @property
    def array_job_id(self) -> int | None:
        return self.job_id if self.is_array else None

    @property
    def job(self) -> str:
        """The id without its step part (`6_2.batch` -> `6_2`)."""
        if self.step is None:
            return self.text
        return self.text[: len(self.text) - len(self.step) - 1]


def parse_job_id(text: str) -> JobId:
    """Split a job id as sacct/squeue print it into its parts. Raises SlurmValueError."""
    t = text.strip()
    if t.isdigit():  # fast paths: most rows are plain jobs and their steps
        return JobId(text=t, job_id=int(t))
    head, dot, step = t.partition(".")
    if dot and head.isdigit() and _STEP_RE.fullmatch(step):
        return JobId(text=t, job_id=int(head), step=step)
    m = _JOB_ID_RE.fullmatch(t)
    if m is None:
        raise SlurmValueError(f"not a SLURM job id: {text!r}")
    task, spec, het = m.group("task"), m.group("spec"), m.group("het")
    return JobId(
        text=t,
        job_id=int(m.group("job")),
        array_task_id=int(task) if task is not None else None,
        array_tasks=spec,
        het_offset=int(het) if het is not None else None,
        step=m.group("step"),
    )


# --------------------------------------------------------------------------- array specs


@dataclass(frozen=True, slots=True)
class ArraySpec:
    """`0-3,7%2` as ranges (start, stop inclusive, step), the `%` throttle, and whether
    SLURM cut the string (`...`, at 64 bytes unless SLURM_BITSTR_LEN=0)."""

    ranges: tuple[tuple[int, int, int], ...]
    throttle: int | None = None
    truncated: bool = False

    def tasks(self) -> Iterator[int]:
        for start, stop, step in self.ranges:
            yield from range(start, stop + 1, step)

    @property
    def count(self) -> int:
        return sum((stop - start) // step + 1 for start, stop, step in self.ranges)


def parse_array_spec(text: str) -> ArraySpec:
    """Parse `0-3`, `[0-3%1]`, `1,3,5-7`, `0-15:4%2`, `1,3,...` (truncated)."""
    t = text.strip()
    if t.startswith("["):
        t = t[1:]
    if t.endswith("]"):
        t = t[:-1]
    truncated = False
    if t.endswith("..."):
        truncated = True
        t = t[:-3]
        # The item before "..." may itself be cut ("1,3,1..." from "1,3,11"): drop it.
        t = t.rpartition(",")[0]
    throttle: int | None = None
    if "%" in t:
        t, _, thr = t.rpartition("%")
        if not thr.isdigit():
            raise SlurmValueError(f"bad array throttle in {text!r}")
        throttle = int(thr)
    ranges: list[tuple[int, int, int]] = []
    for item in t.split(",") if t else ():
        body, _, step_s = item.partition(":")
        lo_s, dash, hi_s = body.partition("-")
        step = int(step_s) if step_s.isdigit() else 1
        if not lo_s.isdigit() or (dash and not hi_s.isdigit()) or (step_s and not step_s.isdigit()):
            raise SlurmValueError(f"bad array spec {text!r}")
        lo = int(lo_s)
        hi = int(hi_s) if dash else lo
        if hi < lo or step < 1:
            raise SlurmValueError(f"bad array range {item!r} in {text!r}")
        ranges.append((lo, hi, step))
    if not ranges and not truncated:
        raise SlurmValueError(f"empty array spec {text!r}")
    return ArraySpec(tuple(ranges), throttle, truncated)


def format_array_spec(tasks: list[int] | set[int], throttle: int | None = None) -> str:
    """The inverse, as SLURM prints a task bitmap: `0-3,7` (+ `%N`)."""
    ids = sorted(set(tasks))
    parts: list[str] = []
    i = 0
    while i < len(ids):
        j = i
        while j + 1 < len(ids) and ids[j + 1] == ids[j] + 1:
            j += 1
        parts.append(str(ids[i]) if i == j else f"{ids[i]}-{ids[j]}")
        i = j + 1
    out = ",".join(parts)
    return f"{out}%{throttle}" if throttle is not None else out
