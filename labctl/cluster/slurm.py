"""The SLURM scheduler adapter: squeue + sacct in one round trip, as jobs of facts.

Which source wins for a job both know:
- squeue, while the job is not over (slurmctld is the live truth; slurmdbd can lag);
- sacct, once both say it is over: its `.batch` step gives the real exit code and its
  State carries `CANCELLED by <uid>` (user or admin cancel). squeue still supplies the
  log-file patterns and the restart count, and a real name/partition when sacct shows a
  just-finished job as `allocation` with no partition (slurmdbd not caught up yet).
A job only sacct knows (it left squeue) comes from sacct alone.

Log paths: squeue's STDOUT/STDERR patterns resolved like slurmstepd; after the MinJobAge
purge, the path the store remembered; else `-o`/`-e` from sacct's SubmitLine; else SLURM's
default name (`slurm-%j.out` in WorkDir), reported only if that file exists.

A failed job's log may end with slurmstepd's kill line (`kill_lines`): poll reads the
tail of each fresh failure (`labctl.poll.examine`).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from labctl.backends.slurm_state import SlurmQuery, read_state
from labctl.backends.transport import Transport
from labctl.cluster.config import ClusterConfig
from labctl.cluster.snapshot import Ask, Snapshot, job_key, split_skipped
from labctl.parse.slurm.table import TERMINAL_STATES

_PLACEHOLDER_NAMES = frozenset({"allocation", ""})
# Parsed facts no part of poll reads. A snapshot's jobs leave them out, which keeps a job's
# dict at 42 keys or fewer once poll has added its log facts: CPython's dict of 42 keys
# takes 832 bytes, one of 43 takes 1,584 (10,000 jobs: 7.5 MB).
_NOT_FOR_POLL = frozenset(
    {"derived_exit_code", "derived_signal", "eligible_epoch", "suspended_s", "exit_source"}
    | {"failed_steps"}
)


def _facts(job: dict[str, Any], source: str) -> dict[str, Any]:
    out = {k: v for k, v in job.items() if k not in _NOT_FOR_POLL}
    out["source"] = source
    return out


def _pick(live: dict[str, Any], done: dict[str, Any] | None) -> dict[str, Any]:
    if done is None:
        return _facts(live, "squeue")
    if live.get("state") not in TERMINAL_STATES or done.get("state") not in TERMINAL_STATES:
        job = _facts(live, "squeue+sacct")
        for k in ("submit_line", "work_dir"):
            if job.get(k) is None:
                job[k] = done.get(k)
        return job
    job = _facts(done, "squeue+sacct")
    for k in ("stdout_pattern", "stderr_pattern", "restarts"):
        job[k] = live.get(k)
    if (job.get("name") or "") in _PLACEHOLDER_NAMES and live.get("name"):
        job["name"] = live["name"]
    for k in ("partition", "work_dir", "user", "node_list"):
        if job.get(k) is None:
            job[k] = live.get(k)
    return job


def combine(live: Iterable[dict[str, Any]], done: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One job per key from squeue's and sacct's records (squeue's order, then sacct's), as
    the facts poll reads. `done` (sacct's records) is consumed: each parsed record is dropped
    as its job is made, so thousands of finished jobs are never held twice."""
    from_sacct = {job_key(j): j for j in done}
    done.clear()
    out = [_pick(q, from_sacct.pop(job_key(q), None)) for q in live]
    for key in list(from_sacct):
        out.append(_facts(from_sacct.pop(key), "sacct"))
    return out


def assign_log_paths(job: dict[str, Any], remembered: tuple[str | None, str | None] | None) -> None:
    """Set job["stdout"]/["stderr"] (and `log_guessed` for SLURM's default name);
    `remembered`: the (stdout, stderr) the store kept from an earlier poll."""
    from labctl.parse.slurm import log_job, resolve_log_paths, submit_line_log_patterns

    job["log_guessed"] = False
    try:
        ljob = log_job(job)
    except (ValueError, TypeError):
        return
    if job.get("stdout_pattern") is not None:
        out, err = resolve_log_paths(job["stdout_pattern"], job.get("stderr_pattern"), ljob)
    elif remembered is not None and remembered[0]:
        out, err = remembered
    else:
        pat_out, pat_err = submit_line_log_patterns(job.get("submit_line"))
        out, err = resolve_log_paths(pat_out, pat_err, ljob)
        job["log_guessed"] = pat_out is None
    job["stdout"], job["stderr"] = out, err


@dataclass
class SlurmScheduler:
    cluster: ClusterConfig
    transport: Transport
    kill_lines: ClassVar[bool] = True

    def read(self, ask: Ask, deadline: float) -> Snapshot:
        cluster = self.cluster
        since = ask.since if cluster.accounting else None
        query = SlurmQuery(
            users=cluster.users,
            accounts=cluster.accounts,
            all_users=cluster.all_users,
            known_ids=ask.active_ids,
            since=since,
            accounting=cluster.accounting,
        )
        state = read_state(
            self.transport,
            query,
            timeout=max(0.1, deadline - time.monotonic()),
            path_prepend=cluster.path_prepend,
        )
        jobs, skipped = split_skipped(combine(state.squeue, state.sacct), cluster.skip)
        for job in jobs:
            assign_log_paths(job, ask.logs.get(job_key(job)))
        return Snapshot(
            now=state.now,
            jobs=jobs,
            user=state.user,
            skipped=skipped,
            commands=state.commands,
            elapsed_s=state.elapsed_s,
            # `sacct --duplicates --jobs` also returns jobs from before the window
            window_start=since,
        )


def make(
    cluster: ClusterConfig, transport: Transport, *, state_dir: Path | None = None
) -> SlurmScheduler:
    return SlurmScheduler(cluster, transport)
