"""`scontrol --oneliner show job` -> `{key: value}` per job, and records.

Values may contain spaces and `=` (a job name `lr=3e-4|bs=64 run`, `Command=train.py lr=1`,
paths with spaces), so splitting on spaces is wrong. A value ends where the next *known*
key starts; inside a free-text value (JobName, Command, WorkDir, Std*, comments) a
`" Key="` is glued back when the key is unknown, already seen, or appears again later in
the line, and JobName/Command run until the key scontrol always prints after them
(UserId/WorkDir).
"""

from __future__ import annotations

import re
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
from labctl.parse.slurm.table import (
    JobRecord,
    SlurmParseError,
    new_record,
    settle_exit,
    settle_lifecycle,
)

FREE_TEXT_KEYS = frozenset(
    {
        "JobName",
        "Command",
        "WorkDir",
        "StdErr",
        "StdIn",
        "StdOut",
        "Comment",
        "AdminComment",
        "SystemComment",
        "MailUser",
        "Container",
        "BurstBuffer",
    }
)
# The key scontrol prints right after a free-text key, whatever the job.
_SUCCESSOR = {"JobName": "UserId", "Command": "WorkDir"}
# The order 22.05 prints its always-present keys in (fixture lines): tells which of two
# `StdErr=` is real when a path or name contains another `StdErr=`.
_CORE_ORDER = [
    "JobId",
    "ArrayJobId",
    "HetJobId",
    "ArrayTaskId",
    "HetJobOffset",
    "ArrayTaskThrottle",
    "JobName",
    "UserId",
    "GroupId",
    "MCS_label",
    "Priority",
    "Nice",
    "Account",
    "QOS",
    "JobState",
    "Reason",
    "Dependency",
    "Requeue",
    "Restarts",
    "BatchFlag",
    "Reboot",
    "ExitCode",
    "RunTime",
    "TimeLimit",
    "TimeMin",
    "SubmitTime",
    "EligibleTime",
    "AccrueTime",
    "StartTime",
    "EndTime",
    "Deadline",
    "SuspendTime",
    "SecsPreSuspend",
    "LastSchedEval",
    "Scheduler",
    "Partition",
    "AllocNode:Sid",
    "ReqNodeList",
    "ExcNodeList",
    "NodeList",
    "BatchHost",
    "NumNodes",
    "NumCPUs",
    "NumTasks",
    "CPUs/Task",
    "ReqB:S:C:T",
    "TRES",
    "Socks/Node",
    "NtasksPerN:B:S:C",
    "CoreSpec",
    "MinCPUsNode",
    "MinMemoryNode",
    "MinMemoryCPU",
    "MinTmpDiskNode",
    "Features",
    "DelayBoot",
    "OverSubscribe",
    "Contiguous",
    "Licenses",
    "Network",
    "Command",
    "WorkDir",
    "StdErr",
    "StdIn",
    "StdOut",
    "Power",
]
_RANK = {key: i for i, key in enumerate(_CORE_ORDER)}
# Keys 22.05 prints only for some jobs (slurm_sprint_job_info); with _CORE_ORDER, every
# key `scontrol show job` can print.
_OPTIONAL_KEYS = (
    "AdminComment",
    "BurstBuffer",
    "BurstBufferState",
    "ClusterFeatures",
    "Comment",
    "Container",
    "ContainerID",
    "CpuFreqGov",
    "CpuFreqMax",
    "CpuFreqMin",
    "CpusPerTres",
    "DerivedExitCode",
    "Epilog",
    "FedActiveSiblings",
    "FedOrigin",
    "FedViableSiblings",
    "Gres",
    "HetJobIdSet",
    "MailType",
    "MailUser",
    "MemPerTres",
    "NtasksPerTRES",
    "PreemptEligibleTime",
    "PreemptTime",
    "Prolog",
    "Reservation",
    "ResizeTime",
    "ResvPort",
    "SchedNodeList",
    "Selinux",
    "SystemComment",
    "TresBind",
    "TresFreq",
    "TresPerJob",
    "TresPerNode",
    "TresPerSocket",
    "TresPerTask",
    "WCKey",
)
SCONTROL_JOB_KEYS = frozenset(_CORE_ORDER) | frozenset(_OPTIONAL_KEYS)

_KEY_RE = re.compile(r"(?:^| )([A-Za-z][A-Za-z0-9_/:]*)=")


_PATH_KEYS = frozenset({"WorkDir", "StdErr", "StdIn", "StdOut"})


def _known_before(keys: list[str], i: int) -> str | None:
    """The nearest known key before token i (unknown `a=b` tokens are someone's text)."""
    for j in range(i - 1, -1, -1):
        if keys[j] in SCONTROL_JOB_KEYS:
            return keys[j]
    return None


def _real_occurrences(keys: list[str], values: list[str]) -> set[int]:
    """Token indexes of the real occurrence of each key that appears more than once.

    Candidates lie between the nearest unique core keys before and after the key in print
    order. A path key's real value starts with `/`; otherwise the first candidate is real
    when the key before it cannot hold text (JobId), else the last one is (the earlier
    ones sit in the free text before it: `JobName=a UserId=b UserId=root(0)`).
    """
    positions: dict[str, list[int]] = {}
    for i, key in enumerate(keys):
        positions.setdefault(key, []).append(i)
    unique_ranked = [
        (_RANK[k], pos[0]) for k, pos in positions.items() if k in _RANK and len(pos) == 1
    ]
    real: set[int] = set()
    for key, pos in positions.items():
        if len(pos) == 1:
            real.add(pos[0])
            continue
        lo, hi = -1, len(keys)
        if key in _RANK:
            rank = _RANK[key]
            before = [(r, p) for r, p in unique_ranked if r < rank]
            after = [(r, p) for r, p in unique_ranked if r > rank]
            if before:
                lo = max(before)[1]
            if after:
                hi = min(after)[1]
        window = [p for p in pos if lo < p < hi] or pos
        rooted = [p for p in window if values[p].startswith("/")]
        if key in _PATH_KEYS and rooted:
            real.add(rooted[0])
        elif (prev := _known_before(keys, window[0])) is not None and (prev not in FREE_TEXT_KEYS):
            real.add(window[0])
        else:
            real.add(window[-1])
    return real


def parse_scontrol_line(line: str) -> dict[str, str]:
    """One `scontrol -o show job` line -> `{key: value}` (values verbatim, may be empty)."""
    line = line.rstrip("\r\n")
    if line.endswith(" "):
        line = line[:-1]
    matches = list(_KEY_RE.finditer(line))
    if not matches or matches[0].start() != 0:
        raise SlurmParseError("not a key=value line", line=line)
    keys = [m.group(1) for m in matches]
    ends = [m.start() for m in matches[1:]] + [len(line)]
    values = [line[m.end() : end] for m, end in zip(matches, ends, strict=True)]
    real = _real_occurrences(keys, values) if len(set(keys)) < len(keys) else None
    out: dict[str, str] = {}
    current: str | None = None
    for i, m in enumerate(matches):
        key, value, end = keys[i], values[i], ends[i]
        fake = real is not None and i not in real
        if current is not None and (
            fake
            or (
                current in FREE_TEXT_KEYS
                and (
                    key not in SCONTROL_JOB_KEYS
                    or (current in _SUCCESSOR and key != _SUCCESSOR[current])
                )
            )
        ):
            out[current] += line[m.start() : end]
            continue
        out[key] = value
        current = key
    return out


def parse_scontrol_show_job_o(text: str) -> list[dict[str, str]]:
    """`scontrol --oneliner show job [ID]` output -> one dict per job. Empty output (an
    unknown or purged id: rc 1, `Invalid job id specified` on stderr) -> []."""
    return [parse_scontrol_line(ln) for ln in text.split("\n") if ln.strip()]


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
