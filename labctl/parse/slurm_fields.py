"""SLURM value normalisers: job ids, array specs, states, exit codes, times, durations.

Pure functions over the text SLURM 22.05 prints (sacct, squeue, scontrol). Unknowns come back
as None; text that is not a value SLURM could have printed raises `SlurmValueError`, so a
caller can turn one bad cell into a `bad_output` record instead of a wrong answer.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo

# SLURM's sentinels (slurm.h). NO_VAL is what `%a` expands to for a job that is not an
# array task (`slurm-7_4294967294.out`), INFINITE is "unlimited" in raw limits.
NO_VAL = 0xFFFFFFFE
INFINITE = 0xFFFFFFFF
# slurmstepd's step id of the batch script (SLURM_BATCH_SCRIPT): what `%s`/`%J` expand to.
BATCH_STEP_ID = 0xFFFFFFFB


class SlurmValueError(ValueError):
    """A cell that is not something SLURM prints for that field."""


# --------------------------------------------------------------------------- job ids

_JOB_ID_RE = re.compile(
    r"(?P<job>\d+)"
    r"(?:_(?:(?P<task>\d+)|\[(?P<spec>[^\]]*)\]?))?"
    r"(?:\+(?P<het>\d+))?"
    r"(?:\.(?P<step>[A-Za-z0-9_-]+))?"
)


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
    if t.isdigit():  # fast path: most rows are plain jobs
        return JobId(text=t, job_id=int(t))
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


# --------------------------------------------------------------------------- states

# squeue's compact codes (%t / StateCompact) -> the names sacct/scontrol print.
STATE_CODES = {
    "BF": "BOOT_FAIL",
    "CA": "CANCELLED",
    "CD": "COMPLETED",
    "CF": "CONFIGURING",
    "CG": "COMPLETING",
    "DL": "DEADLINE",
    "F": "FAILED",
    "NF": "NODE_FAIL",
    "OOM": "OUT_OF_MEMORY",
    "PD": "PENDING",
    "PR": "PREEMPTED",
    "R": "RUNNING",
    "RD": "RESV_DEL_HOLD",
    "RF": "REQUEUE_FED",
    "RH": "REQUEUE_HOLD",
    "RQ": "REQUEUED",
    "RS": "RESIZING",
    "RV": "REVOKED",
    "S": "SUSPENDED",
    "SE": "SPECIAL_EXIT",
    "SI": "SIGNALING",
    "SO": "STAGE_OUT",
    "ST": "STOPPED",
    "TO": "TIMEOUT",
}


def parse_state(text: str) -> tuple[str | None, int | None]:
    """`CANCELLED by 1234` -> ("CANCELLED", 1234); `RUNNING` -> ("RUNNING", None).

    Drops the `+` that fixed-width output adds when it cuts a state, and maps squeue's
    compact codes (`PD`, `CG`, ...) to full names. Empty -> (None, None).
    """
    t = text.strip()
    if not t:
        return None, None
    base, _, by = t.partition(" by ")
    base = base.rstrip("+").strip().upper()
    base = STATE_CODES.get(base, base)
    cancelled_by = int(by) if by.strip().isdigit() else None
    return base, cancelled_by


# --------------------------------------------------------------------------- exit codes


def parse_exit_code(text: str) -> tuple[int | None, int | None]:
    """`3:0` -> (3, 0); `0:15` -> (0, 15); empty (NODE_FAIL steps) -> (None, None)."""
    t = text.strip()
    if not t:
        return None, None
    code, sep, sig = t.partition(":")
    if not sep or not code.isdigit() or not sig.isdigit():
        raise SlurmValueError(f"not a code:signal exit code: {text!r}")
    return int(code), int(sig)


def parse_wait_status(value: str | int) -> tuple[int | None, int | None]:
    """A raw wait(2) status (squeue `exit_code`, JSON `exit_code`): 768 -> (3, 0), 9 -> (0, 9)."""
    if isinstance(value, str):
        t = value.strip()
        if t in _NULLS:
            return None, None
        if not t.isdigit():
            raise SlurmValueError(f"not a wait status: {value!r}")
        value = int(t)
    if value in (NO_VAL, INFINITE) or value < 0:
        return None, None
    return (value >> 8) & 0xFF, value & 0x7F


# --------------------------------------------------------------------------- times

_NULLS = frozenset({"", "Unknown", "None", "NONE", "N/A", "(null)", "INVALID", "NOT_SET"})


def parse_time(text: str, tz: tzinfo = UTC) -> int | None:
    """A SLURM timestamp -> epoch seconds.

    Epoch digits (SLURM_TIME_FORMAT=%s) are taken as is; ISO text without an offset is local
    time of the *client that printed it*, so pass that zone as `tz`; ISO with an offset keeps
    it. `Unknown`, `None`, `N/A`, `NONE`, empty and epoch 0 -> None.
    """
    t = text.strip()
    if t in _NULLS:
        return None
    if t.isdigit():
        n = int(t)
        return n or None
    try:
        dt = datetime.fromisoformat(t)
    except ValueError:
        raise SlurmValueError(f"not a SLURM time: {text!r}") from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=tz)
    return int(dt.timestamp())


# --------------------------------------------------------------------------- durations

_LIMIT_NULLS = _NULLS | {"UNLIMITED", "Partition_Limit", "INFINITE"}


def _num(s: str, text: str) -> int:
    if not s.isdigit():
        raise SlurmValueError(f"not a SLURM duration: {text!r}")
    return int(s)


def parse_duration(text: str) -> float | None:
    """`[DD-][HH:]MM:SS[.fff]` (also `D-HH`, `D-HH:MM`, squeue's `M:SS`) -> seconds.

    Whole seconds come back as int, fractions (TotalCPU `MM:SS.mmm`) as float. A bare
    number is seconds (ElapsedRaw). Empty/`N/A`/`INVALID`/`UNLIMITED` -> None.
    """
    t = text.strip()
    if t in _LIMIT_NULLS:
        return None
    days = 0
    if "-" in t:
        d, _, t = t.partition("-")
        days = _num(d, text)
        parts = t.split(":")
        if len(parts) > 3:
            raise SlurmValueError(f"not a SLURM duration: {text!r}")
        parts += ["0"] * (3 - len(parts))  # D-HH, D-HH:MM are days-hours[-minutes]
    else:
        parts = t.split(":")
        if len(parts) > 3:
            raise SlurmValueError(f"not a SLURM duration: {text!r}")
        parts = ["0"] * (3 - len(parts)) + parts
    h, m, s = parts
    whole, dot, frac = s.partition(".")
    secs = days * 86400 + _num(h, text) * 3600 + _num(m, text) * 60 + _num(whole, text)
    if dot:
        return secs + _num(frac, text) / 10 ** len(frac)
    return secs


def format_duration(seconds: int, *, squeue: bool = False) -> str:
    """SLURM's rendering: sacct `HH:MM:SS`/`D-HH:MM:SS`; squeue `M:SS`/`H:MM:SS`/`D-HH:MM:SS`."""
    days, rem = divmod(int(seconds), 86400)
    h, rem = divmod(rem, 3600)
    m, s = divmod(rem, 60)
    if days:
        return f"{days}-{h:02d}:{m:02d}:{s:02d}"
    if not squeue:
        return f"{h:02d}:{m:02d}:{s:02d}"
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def parse_time_limit(text: str) -> int | None:
    """A time limit -> seconds. `UNLIMITED`, `Partition_Limit`, `NOT_SET`, `INVALID`, `N/A`
    and empty -> None (no limit known to the job itself)."""
    value = parse_duration(text)
    return None if value is None else int(value)


def parse_time_limit_raw(text: str) -> int | None:
    """sacct `TimelimitRaw` (minutes) -> seconds; unlimited/unset sentinels -> None."""
    t = text.strip()
    if t in _LIMIT_NULLS:
        return None
    n = _num(t, text)
    return None if n in (NO_VAL, INFINITE) else n * 60


def parse_int(text: str) -> int | None:
    """Digits -> int; empty/`N/A`/`Unknown` -> None (ElapsedRaw, NNodes, Restarts)."""
    t = text.strip()
    if t in _NULLS:
        return None
    if not t.isdigit():
        raise SlurmValueError(f"not a count: {text!r}")
    return int(t)


# --------------------------------------------------------------------------- misc cells

_NODE_NULLS = frozenset({"", "None assigned", "(null)", "None", "N/A"})


def parse_nodelist(text: str) -> str | None:
    """`None assigned` (sacct, never started), empty (squeue pending) -> None."""
    t = text.strip()
    return None if t in _NODE_NULLS else t


def first_node(nodelist: str | None) -> str | None:
    """The first host of a compressed host list: `gpu[012-013,020],cpu1` -> `gpu012`."""
    if not nodelist:
        return None
    depth = 0
    end = len(nodelist)
    for i, ch in enumerate(nodelist):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif ch == "," and depth == 0:
            end = i
            break
    host = nodelist[:end]
    while "[" in host:
        prefix, _, rest = host.partition("[")
        inner, _, suffix = rest.partition("]")
        first = inner.split(",", 1)[0].split("-", 1)[0]
        host = prefix + first + suffix
    return host or None


def parse_reason(text: str) -> str | None:
    """`None`/empty -> None, anything else as printed (`JobHeldUser`, `job requeued in held
    state`, scontrol's underscored `job_requeued_in_held_state`)."""
    t = text.strip()
    return None if t in _NULLS else t


def parse_user(text: str) -> tuple[str | None, int | None]:
    """`root(0)` (scontrol UserId, jobcomp) -> ("root", 0); `nobody` -> ("nobody", None)."""
    t = text.strip()
    if t in _NULLS:
        return None, None
    if t.endswith(")") and "(" in t:
        name, _, uid = t[:-1].rpartition("(")
        if uid.isdigit():
            return (name or None), int(uid)
    if t.isdigit():
        return None, int(t)
    return t, None


def parse_text(text: str) -> str | None:
    """A free-text cell: empty/`(null)` -> None, else unchanged (names keep their spaces)."""
    return None if text in ("", "(null)") else text
