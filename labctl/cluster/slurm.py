"""The SLURM adapter: squeue + sacct (one round trip), then the logs (a second one).

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

Kill fingerprints: for a FAILED or CANCELLED job not yet reported as such, the last 8 KiB
of its stderr are read and slurmstepd's `DUE TO TIME LIMIT / PREEMPTION / NODE FAILURE`
and oom-kill lines refine the verdict (`log_markers` says which were found).
`FAILED` with signal 9 and a CANCELLED `.batch` step (OverMemoryKill without cgroups) is
`out_of_memory` with cause `memory_limit`: an inference, said so by the cause; with an
oom line in the log the cause is `oom`.
"""

from __future__ import annotations

import fnmatch
import time
from collections import Counter
from collections.abc import Iterable
from typing import Any

from labctl.backends.slurm_state import SlurmQuery, read_state
from labctl.backends.transport import Transport
from labctl.cluster.config import ClusterConfig
from labctl.poll.examine import examine
from labctl.poll.model import Known, Snapshot, StoredJob, is_terminal, job_key

_PLACEHOLDER_NAMES = frozenset({"allocation", ""})


def _pick(live: dict[str, Any], done: dict[str, Any] | None) -> dict[str, Any]:
    if done is None:
        return dict(live, source="squeue")
    if not is_terminal(live) or not is_terminal(done):
        job = dict(live, source="squeue+sacct")
        for k in ("submit_line", "work_dir"):
            if job.get(k) is None:
                job[k] = done.get(k)
        return job
    job = dict(done, source="squeue+sacct")
    for k in ("stdout_pattern", "stderr_pattern", "restarts"):
        job[k] = live.get(k)
    if (job.get("name") or "") in _PLACEHOLDER_NAMES and live.get("name"):
        job["name"] = live["name"]
    for k in ("partition", "work_dir", "user", "node_list"):
        if job.get(k) is None:
            job[k] = live.get(k)
    return job


def combine(live: Iterable[dict[str, Any]], done: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One job per key from squeue's and sacct's records (squeue's order, then sacct's)."""
    from_sacct = {job_key(j): j for j in done}
    out = [_pick(q, from_sacct.pop(job_key(q), None)) for q in live]
    out += [dict(j, source="sacct") for j in from_sacct.values()]
    return out


def split_skipped(
    jobs: Iterable[dict[str, Any]], patterns: tuple[str, ...]
) -> tuple[list[dict[str, Any]], Counter[str]]:
    kept: list[dict[str, Any]] = []
    skipped: Counter[str] = Counter()
    for job in jobs:
        name = job.get("name") or ""
        hit = next((p for p in patterns if fnmatch.fnmatchcase(name, p)), None)
        if hit is None:
            kept.append(job)
        else:
            skipped[hit] += 1
    return kept, skipped


def assign_log_paths(job: dict[str, Any], stored: StoredJob | None) -> None:
    """Set job["stdout"]/["stderr"] (and `log_guessed` for SLURM's default name)."""
    from labctl.parse.slurm import log_job, resolve_log_paths, submit_line_log_patterns

    job["log_guessed"] = False
    try:
        ljob = log_job(job)
    except (ValueError, TypeError):
        return
    if job.get("stdout_pattern") is not None:
        out, err = resolve_log_paths(job["stdout_pattern"], job.get("stderr_pattern"), ljob)
    elif stored is not None and stored.stdout:
        out, err = stored.stdout, stored.stderr
    else:
        pat_out, pat_err = submit_line_log_patterns(job.get("submit_line"))
        out, err = resolve_log_paths(pat_out, pat_err, ljob)
        job["log_guessed"] = pat_out is None
    job["stdout"], job["stderr"] = out, err


def poll(cluster: ClusterConfig, known: Known, transport: Transport, deadline: float) -> Snapshot:
    query = SlurmQuery(
        users=cluster.users,
        accounts=cluster.accounts,
        all_users=cluster.all_users,
        known_ids=known.active_ids,
        since=known.since if cluster.accounting else None,
        accounting=cluster.accounting,
    )
    state = read_state(
        transport,
        query,
        timeout=max(0.1, deadline - time.monotonic()),
        path_prepend=cluster.path_prepend,
    )
    jobs, skipped = split_skipped(combine(state.squeue, state.sacct), cluster.skip)
    for job in jobs:
        assign_log_paths(job, known.jobs.get(job_key(job)))
    snap = Snapshot(
        now=state.now,
        jobs=jobs,
        user=state.user,
        skipped=skipped,
        commands=state.commands,
        elapsed_s=state.elapsed_s,
    )
    examine(transport, cluster, known, snap, deadline)
    return snap
