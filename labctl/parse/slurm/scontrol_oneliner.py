"""`scontrol --oneliner show job` -> `{key: value}` per job (records: `scontrol`).

Values may contain spaces and `=` (a job name `lr=3e-4|bs=64 run`, `Command=train.py lr=1`,
paths with spaces), so splitting on spaces is wrong. A value ends where the next *known*
key starts; inside a free-text value (JobName, Command, WorkDir, Std*, comments) a
`" Key="` is glued back when the key is unknown, already seen, or appears again later in
the line, and JobName/Command run until the key scontrol always prints after them
(UserId/WorkDir).
"""

from __future__ import annotations

import re

from labctl.parse.slurm.table import SlurmParseError

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
