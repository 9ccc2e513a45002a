"""The data that flows through a poll: what the store remembers of a cluster (`Known`,
`StoredJob`) and the `job` record itself.

An observed job is a plain dict of facts in the parse layer's shape (`labctl.cluster.
snapshot`), plus the log fields poll adds (`labctl.poll.examine`); `job_record` turns it,
with the verdict poll decided (`labctl.poll.verdict`), into the emitted record (RFC 3339
times).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from typing import Any

from labctl.cluster.snapshot import Ask, Key, job_key, key_text
from labctl.records import rfc3339
from labctl.verdicts import TERMINAL, V

TERMINAL_VERDICTS = TERMINAL
# Fields whose change makes `changed_since_last_poll` true.
WATCHED_FIELDS = (
    "state",
    "verdict",
    "cause",
    "reason",
    "exit_code",
    "signal",
    "start_time",
    "end_time",
    "node_list",
    "partition",
    "name",
    "submit_time",  # the same within one key: it changes only when a requeue is linked
)


def is_terminal(job: dict[str, Any]) -> bool:
    from labctl.parse.slurm.table import TERMINAL_STATES

    state = job.get("state")
    if state is not None and state in TERMINAL_STATES:
        return True
    return job.get("verdict") in TERMINAL_VERDICTS


# What poll compares without parsing a stored record again: the watched fields and the few
# others merge, examine and gone read (a requeue's name/user/restarts, kill lines, ...).
VIEW_FIELDS = (
    *WATCHED_FIELDS,
    *("source", "restarts", "user", "log_markers", "array_tasks", "job_id"),
)


def store_json(value: Any) -> str:
    """JSON as the state store keeps it."""
    return json.dumps(value, separators=(",", ":"), allow_nan=True, default=str)


def view_of(record: dict[str, Any]) -> dict[str, Any]:
    return {f: record.get(f) for f in VIEW_FIELDS}


class StoredJob:
    """What the state store remembers of one job (a row of `jobs`).

    The job record is kept as the JSON text the store holds (`record_json`) plus `view`,
    its VIEW_FIELDS: a store of thousands of jobs is compared against a poll without
    holding every record parsed. `record` parses the text on each access (the rare paths
    that need the whole record: re-reporting a job from the store)."""

    __slots__ = (
        *("key", "job_id", "array_job_id", "first_seen", "last_seen", "verdict"),
        *("terminal", "active", "stdout", "stderr", "record_json", "_view", "progress"),
    )

    def __init__(
        self,
        key: Key,
        job_id: str,
        array_job_id: str | None,
        first_seen: float,
        last_seen: float,
        verdict: str | None,
        terminal: bool,
        active: bool,  # still asked about by id (not terminal, not forgotten)
        stdout: str | None,
        stderr: str | None,
        record: dict[str, Any] | None = None,
        progress: dict[str, Any] | None = None,
        *,
        record_json: str | None = None,
        view: dict[str, Any] | None = None,
    ) -> None:
        self.key, self.job_id, self.array_job_id = key, job_id, array_job_id
        self.first_seen, self.last_seen, self.verdict = first_seen, last_seen, verdict
        self.terminal, self.active, self.stdout, self.stderr = terminal, active, stdout, stderr
        self.progress = progress
        if record is not None:
            record_json, view = store_json(record), None
        if record_json is None:
            raise TypeError("StoredJob needs its record (a dict, or record_json)")
        self.record_json = record_json
        self._view = view  # built when first asked: a row about to be written never is

    @property
    def view(self) -> dict[str, Any]:
        """VIEW_FIELDS of the record."""
        if self._view is None:
            self._view = view_of(json.loads(self.record_json))
        return self._view

    @property
    def record(self) -> dict[str, Any]:
        """The whole stored record, parsed anew (a fresh dict: callers may change it)."""
        value: dict[str, Any] = json.loads(self.record_json)
        return value

    def fields(self) -> dict[str, Any]:
        """Everything but the record: `StoredJob(**{**prev.fields(), ...})` changes one."""
        return {
            "key": self.key, "job_id": self.job_id, "array_job_id": self.array_job_id,
            "first_seen": self.first_seen, "last_seen": self.last_seen,
            "verdict": self.verdict, "terminal": self.terminal, "active": self.active,
            "stdout": self.stdout, "stderr": self.stderr, "progress": self.progress,
            "record_json": self.record_json, "view": self._view,
        }  # fmt: skip

    def __repr__(self) -> str:
        return f"StoredJob({self.key!r}, verdict={self.verdict!r}, active={self.active})"


@dataclass
class Known:
    """The store's view of one cluster, handed to the cluster's thread (read-only)."""

    jobs: dict[Key, StoredJob] = field(default_factory=dict)
    last_ok_remote: float | None = None  # the cluster's clock at the last good poll
    since: float | None = None  # sacct window start (epoch)
    since_s: float | None = None  # --since: report jobs that ended this long ago again
    progress: Any = None  # labctl.poll.running.ProgressSettings: probe running jobs

    def ask(self) -> Ask:
        """What to ask the cluster's scheduler."""
        return Ask(active_ids=tuple(self.active_ids), since=self.since, logs=self.logs)

    @functools.cached_property
    def logs(self) -> dict[Key, tuple[str | None, str | None]]:
        """(stdout, stderr) remembered per job, for when the scheduler has forgotten them."""
        return {k: (j.stdout, j.stderr) for k, j in self.jobs.items() if j.stdout}

    def since_cut(self, remote_now: float) -> float | None:
        return None if self.since_s is None else remote_now - self.since_s

    @property
    def active_ids(self) -> list[str]:
        return sorted({j.key[0] for j in self.jobs.values() if j.active}, key=id_order)


def id_order(raw: str) -> tuple[int, str]:
    """Job ids in number order (non-numeric ids last)."""
    return (int(raw), "") if raw.isdigit() else (1 << 62, raw)


def watched_view(job: dict[str, Any]) -> dict[str, Any]:
    """The WATCHED_FIELDS of the record `job_record` would build (for change detection)."""
    return {
        "state": job.get("state"),
        "verdict": job.get("verdict") or V.UNKNOWN,
        "cause": job.get("cause"),
        "reason": job.get("reason"),
        "exit_code": job.get("exit_code"),
        "signal": job.get("signal"),
        "start_time": rfc3339(job.get("start_epoch")),
        "end_time": rfc3339(job.get("end_epoch")),
        "node_list": job.get("node_list"),
        "partition": job.get("partition"),
        "name": job.get("name"),
        "submit_time": rfc3339(job.get("submit_epoch")),
    }


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def job_record(
    cluster: str, scheduler: str, job: dict[str, Any], *, observed_at: float, remote_now: float
) -> dict[str, Any]:
    """The `job` record for an observed job (without the store's fields)."""
    return {
        "kind": "job",
        "cluster": cluster,
        "scheduler": scheduler,
        "key": key_text(cluster, job_key(job)),
        **_names(job),
        **_run(job),
        **_logs(job, remote_now),
        "source": job.get("source"),
        "observed_at": rfc3339(observed_at),
        "progress": None,
        **({"supervise": job["supervise"]} if job.get("supervise") else {}),
    }


def _names(job: dict[str, Any]) -> dict[str, Any]:
    """Which job: its ids (array task, het component), name, owner and partition."""
    return {
        "job_id": _text(job.get("job_id")),
        "job_id_raw": _text(job.get("job_id_raw")),
        "array_job_id": _text(job.get("array_job_id")),
        "array_task_id": job.get("array_task_id"),
        "array_tasks": job.get("array_tasks"),
        "het_job_id": _text(job.get("het_job_id")),
        "het_offset": job.get("het_offset"),
        "name": job.get("name"),
        "user": job.get("user"),
        "account": job.get("account"),
        "partition": job.get("partition"),
    }


def _run(job: dict[str, Any]) -> dict[str, Any]:
    """How it runs: the scheduler's state, poll's verdict, its times and nodes."""
    return {
        "state": job.get("state"),
        "state_raw": job.get("state_raw"),
        "reason": job.get("reason"),
        "verdict": job.get("verdict") or V.UNKNOWN,
        "cause": job.get("cause"),
        "exit_code": job.get("exit_code"),
        "signal": job.get("signal"),
        "submit_time": rfc3339(job.get("submit_epoch")),
        "start_time": rfc3339(job.get("start_epoch")),
        "end_time": rfc3339(job.get("end_epoch")),
        "elapsed_s": job.get("elapsed_s"),
        "time_limit_s": job.get("time_limit_s"),
        "node_list": job.get("node_list"),
        "n_nodes": job.get("n_nodes"),
        "restarts": job.get("restarts"),
        "work_dir": job.get("work_dir"),
    }


def _logs(job: dict[str, Any], remote_now: float) -> dict[str, Any]:
    """Its log files (RFC 3339 mtimes), how long since either grew, the kill lines in them."""
    out_mtime, err_mtime = job.get("stdout_mtime"), job.get("stderr_mtime")
    newest = max((m for m in (out_mtime, err_mtime) if m is not None), default=None)
    return {
        "stdout": job.get("stdout"),
        "stderr": job.get("stderr"),
        "stdout_size": job.get("stdout_size"),
        "stdout_mtime": rfc3339(out_mtime),
        "stderr_size": job.get("stderr_size"),
        "stderr_mtime": rfc3339(err_mtime),
        "log_age_s": None if newest is None else max(0.0, remote_now - newest),
        "log_markers": sorted(job.get("log_markers") or []) or None,
    }
