"""A running supervision registers itself in the state dir, so `poll` can report it as a job.

One small JSON file per run, `<state_dir>/supervise/runs/<run_id>.json`, replaced atomically
(and redacted) at every change: the run starting, each attempt starting and ending, each
diagnosis and fix, the end. Fields (schema `labctl.supervise.run/1`):

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
    log               the current attempt's log file
    last_exit         {exit_code, signal} of the last attempt that ended, or null
    last_diagnosis    {category, catalog_id, title, fingerprint, retryable}, or null
    escalation        the escalation file (.md), or null

`job_record` turns one into a poll `job` record (pure: liveness and the log's mtime are
arguments); a registration that says running whose supervisor is gone is `failed` with
cause `supervisor_died`, never running.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from labctl.fsops import atomic_write_text
from labctl.records import parse_rfc3339, rfc3339
from labctl.redact import Redactor

SCHEMA = "labctl.supervise.run/1"
LIVE_STATES = frozenset({"starting", "running", "backoff"})
_FINAL = {  # state -> (scheduler-like state, verdict, cause)
    "succeeded": ("COMPLETED", "completed", None),
    "escalated": ("FAILED", "failed", "escalated"),
    "interrupted": ("CANCELLED", "cancelled", "user_cancel"),
    "aborted": ("FAILED", "failed", "supervisor_error"),
}


def runs_dir(state_dir: Path) -> Path:
    return state_dir / "supervise" / "runs"


class Registration:
    """The registration file of the run in progress."""

    def __init__(self, state_dir: Path, data: dict[str, Any], redactor: Redactor) -> None:
        self.path = runs_dir(state_dir) / f"{data['run_id']}.json"
        self.data = {"schema": SCHEMA, **data}
        self.redactor = redactor
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)

    def update(self, **fields: Any) -> None:
        self.data.update(fields)
        text = json.dumps(self.redactor.value(self.data), ensure_ascii=False, indent=1)
        atomic_write_text(self.path, text + "\n", mode=0o600)


def prune(state_dir: Path, *, now: float, keep_s: float) -> list[str]:
    """Forget runs that ended (or whose supervisor stopped updating) more than `keep_s` ago:
    their registration and attempt logs go (escalation files stay). Returns their run ids."""
    gone = []
    for reg in read_registrations(state_dir):
        last = parse_rfc3339(reg.get("ended") or reg.get("updated"))
        if last is None or now - last < keep_s:
            continue
        if reg.get("state") in LIVE_STATES and supervisor_alive(reg):
            continue
        run_id = str(reg.get("run_id"))
        if "/" in run_id or run_id.startswith("."):
            continue
        shutil.rmtree(state_dir / "supervise" / "logs" / run_id, ignore_errors=True)
        (runs_dir(state_dir) / f"{run_id}.json").unlink(missing_ok=True)
        gone.append(run_id)
    return gone


def read_registrations(state_dir: Path) -> Iterator[dict[str, Any]]:
    """Every readable registration (a torn or foreign file is skipped)."""
    folder = runs_dir(state_dir)
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and data.get("schema") == SCHEMA:
            yield data


def _state(reg: Mapping[str, Any], alive: bool) -> tuple[str, str, str | None, str | None]:
    state = str(reg.get("state"))
    attempt = f"attempt {reg.get('attempt')}/{reg.get('max_attempts')}"
    if state in _FINAL:
        sched, verdict, cause = _FINAL[state]
        return sched, verdict, cause, f"{state} after {attempt}"
    if not alive:
        return "FAILED", "failed", "supervisor_died", f"supervisor pid {reg.get('pid')} is gone"
    return "RUNNING", "running", None, f"{attempt} ({state})"


def job_record(
    reg: Mapping[str, Any],
    *,
    cluster: str,
    alive: bool,
    now: float,
    log_mtime: float | None = None,
    log_size: int | None = None,
) -> dict[str, Any]:
    """The poll `job` record of one registration (as a first sighting by poll would be)."""
    state, verdict, cause, reason = _state(reg, alive)
    started = parse_rfc3339(reg.get("started"))
    ended = parse_rfc3339(reg.get("ended"))
    last = reg.get("last_exit") or {}
    run_id = str(reg.get("run_id"))
    log = reg.get("log")
    return {
        "kind": "job",
        "cluster": cluster,
        "scheduler": "supervise",
        "key": f"{cluster}:{run_id}@{int(started or 0)}",
        "job_id": run_id,
        "job_id_raw": run_id,
        "name": reg.get("name"),
        "user": reg.get("user"),
        "account": None,
        "partition": None,
        "state": state,
        "state_raw": str(reg.get("state")),
        "reason": reason,
        "verdict": verdict,
        "cause": cause,
        "exit_code": last.get("exit_code"),
        "signal": last.get("signal"),
        "submit_time": rfc3339(started),
        "start_time": rfc3339(started),
        "end_time": rfc3339(ended),
        "elapsed_s": None if started is None else max(0.0, (ended or now) - started),
        "time_limit_s": None,
        "node_list": reg.get("host"),
        "restarts": max(0, int(reg.get("attempt") or 1) - 1),
        "work_dir": reg.get("cwd"),
        **_log_fields(log, log_mtime, log_size, now),
        "source": "supervise",
        "observed_at": rfc3339(now),
        "first_seen": rfc3339(started),
        "changed_since_last_poll": True,
        "progress": None,
        "supervise": {k: reg.get(k) for k in _DETAIL}
        | {"argv": reg.get("current_argv"), "last_diagnosis": reg.get("last_diagnosis")},
    }


_DETAIL = ("run_id", "state", "attempt", "max_attempts", "pid", "pgid", "escalation")


def _log_fields(log: Any, mtime: float | None, size: int | None, now: float) -> dict[str, Any]:
    """One log file holds stdout and stderr (they share the child's pipe)."""
    return {
        "stdout": log,
        "stderr": log,
        "stdout_size": size,
        "stdout_mtime": rfc3339(mtime),
        "stderr_size": size,
        "stderr_mtime": rfc3339(mtime),
        "log_age_s": None if mtime is None else max(0.0, now - mtime),
    }


def supervisor_alive(reg: Mapping[str, Any]) -> bool:
    """Is the registration's supervisor still running (same pid, same start time)?"""
    from labctl.backends.proc import is_running

    pid = reg.get("pid")
    return isinstance(pid, int) and is_running(pid, reg.get("pid_start_ticks"))
