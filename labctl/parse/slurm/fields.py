"""SLURM value normalisers: states, exit codes, times, durations, node lists, users.

Job ids and array specs are in `ids`.

Pure functions over the text SLURM 22.05 prints (sacct, squeue, scontrol). Unknowns come back
as None; text that is not a value SLURM could have printed raises `SlurmValueError`, so a
caller can turn one bad cell into a `bad_output` record instead of a wrong answer.
"""

from __future__ import annotations

import functools
from datetime import UTC, datetime, tzinfo

# SLURM's sentinels (slurm.h). NO_VAL is what `%a` expands to for a job that is not an
# array task (`slurm-7_4294967294.out`), INFINITE is "unlimited" in raw limits.
NO_VAL = 0xFFFFFFFE
INFINITE = 0xFFFFFFFF
# slurmstepd's step id of the batch script (SLURM_BATCH_SCRIPT): what `%s`/`%J` expand to.
BATCH_STEP_ID = 0xFFFFFFFB


class SlurmValueError(ValueError):
    """A cell that is not something SLURM prints for that field."""


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


@functools.lru_cache(maxsize=4096)  # a few dozen distinct cells in a whole sacct answer
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


@functools.lru_cache(maxsize=4096)
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
