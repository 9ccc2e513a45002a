"""The `supervise` scheduler: the runs `labctl supervise` registered, as jobs.

A running supervision keeps one small JSON file, `<state_dir>/supervise/runs/<run_id>.json`,
replaced atomically (and redacted) at every change: the run starting, each attempt
starting and ending, each diagnosis and fix, the end (writer: labctl.supervise.registration).
Fields (schema `labctl.supervise.run/1`):

    run_id            `<UTC start, 20250601T123002Z>-<supervisor pid>`
    name              the command's short name (`train` for `python train.py`), or --name
    host, user, cwd   where it runs
    argv              the command as given; current_argv / env_changes: what runs now
    pid               the supervisor's pid; pid_start_ticks: its start time (/proc), so a
                      reused pid is not taken for a live supervisor
    child_pid, pgid   the current attempt's process (its group id is its pid), or null
    attempt, max_attempts
    state             starting | running | backoff | succeeded | escalated | interrupted |
                      aborted (the supervisor failed itself)
    started, updated, ended, attempt_started   RFC 3339 UTC
    log               the current attempt's log file (stdout and stderr, redacted)
    last_exit         {exit_code, signal, stalled} of the last attempt that ended, or null
    last_diagnosis    {category, catalog_id, title, fingerprint, retryable, fix, evidence}
    escalation        the escalation file (.md), or null

A cluster `{name = "laptop", host = "local", scheduler = "supervise"}` reads the
registrations of labctl's own state dir (or `runs_dir`); poll then reads each run's log for
progress like any job's. Facts per run: its state word (mapped below), exit code and signal
of the last attempt, times, the log. A run that says it is live but whose supervisor is
gone (pid dead or reused) is `supervisor_died`, never running; a run whose last attempt
was killed for silence ends `hung` (diagnose's catalog decides that state as a hang).
"""

from __future__ import annotations

import json
import os
import pwd
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from labctl.backends.transport import Transport
from labctl.cluster.config import ClusterConfig
from labctl.cluster.scheduler import Fail
from labctl.cluster.snapshot import Ask, Snapshot, split_skipped
from labctl.errors import ConfigError
from labctl.records import parse_rfc3339
from labctl.verdicts import V

SCHEMA = "labctl.supervise.run/1"
LIVE_STATES = frozenset({"starting", "running", "backoff"})
# the state words of a run's facts -> poll's verdicts (a `cause` in the facts wins)
STATES: dict[str, str] = {
    "starting": V.RUNNING,
    "running": V.RUNNING,
    "backoff": V.RUNNING,
    "succeeded": V.COMPLETED,
    "escalated": V.FAILED,
    "hung": V.FAILED,
    "interrupted": V.CANCELLED,
    "aborted": V.FAILED,
    "supervisor_died": V.FAILED,
}
_CAUSES = {
    "escalated": "escalated",
    "hung": "escalated",
    "interrupted": "user_cancel",
    "aborted": "supervisor_error",
    "supervisor_died": "supervisor_died",
}


def runs_dir(state_dir: Path) -> Path:
    return state_dir / "supervise" / "runs"


def read_registrations(folder: Path) -> Iterator[dict[str, Any]]:
    """Every readable registration in `folder` (a torn or foreign file is skipped)."""
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and data.get("schema") == SCHEMA:
            yield data


def supervisor_alive(reg: Mapping[str, Any]) -> bool:
    """Is the registration's supervisor still running (same pid, same start time)?"""
    from labctl.backends.proc import is_running

    pid = reg.get("pid")
    return isinstance(pid, int) and is_running(pid, reg.get("pid_start_ticks"))


def state_word(reg: Mapping[str, Any], alive: bool) -> str:
    state = str(reg.get("state"))
    if state in LIVE_STATES:
        return state if alive else "supervisor_died"
    if state == "escalated" and (reg.get("last_exit") or {}).get("stalled"):
        return "hung"
    return state


def facts(
    reg: Mapping[str, Any], *, alive: bool, log_stat: tuple[float, int] | None = None
) -> dict[str, Any]:
    """One run as a job of facts (`labctl.cluster.snapshot`); pure: whether its supervisor
    lives and the log's (mtime, size) are arguments."""
    state = state_word(reg, alive)
    started = parse_rfc3339(reg.get("started"))
    last = reg.get("last_exit") or {}
    log = reg.get("log")
    mtime, size = log_stat if log_stat is not None else (None, None)
    attempt = int(reg.get("attempt") or 0)
    diag = reg.get("last_diagnosis") or {}
    reason = f"attempt {attempt}/{reg.get('max_attempts')}"
    if diag.get("title") and state != "succeeded":
        reason += f": {diag['title']}"
    return {
        "job_id": reg.get("run_id"),
        "job_id_raw": reg.get("run_id"),
        "name": reg.get("name"),
        "user": reg.get("user"),
        "state": state,
        "state_raw": state,
        "reason": reason,
        "cause": _CAUSES.get(state),
        "exit_code": last.get("exit_code"),
        "signal": None if last.get("stalled") else last.get("signal"),
        "submit_epoch": started,
        "start_epoch": started,
        "end_epoch": parse_rfc3339(reg.get("ended")),
        "node_list": reg.get("host"),
        "n_nodes": 1,
        "restarts": max(0, attempt - 1),
        "work_dir": reg.get("cwd"),
        "stdout": log,
        "stderr": log,
        "stdout_mtime": mtime,
        "stderr_mtime": mtime,
        "stdout_size": size,
        "stderr_size": size,
        "source": "supervise",
        "supervise": {
            k: reg.get(k)
            for k in ("run_id", "attempt", "max_attempts", "pid", "pgid", "escalation")
        }
        | {"state": reg.get("state"), "argv": reg.get("current_argv"), "last_diagnosis": diag},
    }


def check_config(cluster: ClusterConfig, fail: Fail) -> None:
    if not cluster.is_local:
        raise fail('scheduler = "supervise" reads this machine\'s runs: host must be local', "host")
    runs = cluster.options.get("runs_dir")
    if runs is not None and (not isinstance(runs, str) or not runs.strip()):
        raise fail("runs_dir must be a directory path", "runs_dir")


class SupervisedScheduler:
    kill_lines = False  # the logs are supervise's own: no slurmstepd lines in them

    def __init__(self, cluster: ClusterConfig, folder: Path) -> None:
        self.cluster, self.folder = cluster, folder

    def read(self, ask: Ask, deadline: float) -> Snapshot:
        started = time.monotonic()
        jobs = []
        for reg in read_registrations(self.folder):
            alive = reg.get("state") in LIVE_STATES and supervisor_alive(reg)
            jobs.append(facts(reg, alive=alive, log_stat=_stat(reg.get("log"))))
        if self.cluster.users and not self.cluster.all_users:
            jobs = [j for j in jobs if j.get("user") in self.cluster.users]
        jobs, skipped = split_skipped(jobs, self.cluster.skip)
        return Snapshot(
            now=time.time(),
            jobs=jobs,
            user=pwd.getpwuid(os.getuid()).pw_name,
            skipped=skipped,
            commands=[f"read {self.folder}"],
            elapsed_s=time.monotonic() - started,
            states=STATES,
        )


def _stat(path: Any) -> tuple[float, int] | None:
    try:
        st = os.stat(path) if isinstance(path, str) else None
    except OSError:
        return None
    return (st.st_mtime, st.st_size) if st is not None else None


def make(
    cluster: ClusterConfig, transport: Transport, *, state_dir: Path | None = None
) -> SupervisedScheduler:
    folder = cluster.options.get("runs_dir")
    if folder:
        return SupervisedScheduler(cluster, Path(str(folder)).expanduser())
    if state_dir is None:
        raise ConfigError(f"cluster {cluster.name}: no state dir to read supervised runs from")
    return SupervisedScheduler(cluster, runs_dir(state_dir))
