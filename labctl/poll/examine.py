"""Poll's second look at a cluster, after its scheduler's: the jobs' logs and progress.

One round trip per cluster (`labctl.backends.clusterfs`): stat the logs of the jobs about
to be reported (size, mtime against the cluster's clock); for jobs that just FAILED or
were CANCELLED on a scheduler whose logs carry them, read the last 8 KiB of stderr for
slurmstepd's kill lines (`log_markers`: time limit, preemption, node failure, oom-kill);
and run the progress probes of running jobs (`labctl.poll.probes`). Then, with a W&B API
key and the cluster's `wandb_project`, one paged runs query. What all this means for the
verdict is `labctl.poll.verdict`'s to decide.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from labctl.backends.clusterfs import TailRead, look_at_files
from labctl.backends.transport import Transport
from labctl.cluster.config import ClusterConfig
from labctl.cluster.snapshot import Key, Snapshot, job_key
from labctl.errors import BackendError
from labctl.poll.merge import is_quiet
from labctl.poll.model import Known, StoredJob
from labctl.poll.probes import DEFS, collect, probes_for
from labctl.poll.running import ProgressSettings
from labctl.poll.verdict import judge
from labctl.verdicts import Verdict, kill_markers

MARKER_TAIL = 8192
MAX_MARKER_READS = 200


def _fresh_failure(job: dict[str, Any], stored: StoredJob | None) -> bool:
    if job.get("state") not in ("FAILED", "CANCELLED"):
        return False
    return stored is None or stored.view.get("state") != job.get("state")


@dataclass
class _Chosen:
    """What to look at on the cluster this poll."""

    started: list[dict[str, Any]] = field(default_factory=list)  # stat their logs
    fresh: list[dict[str, Any]] = field(default_factory=list)  # read their kill lines
    running: list[dict[str, Any]] = field(default_factory=list)  # probe their progress


def choose(
    snap: Snapshot, stored: Mapping[Key, StoredJob], since_cut: float | None, kill_lines: bool
) -> _Chosen:
    """The jobs whose logs poll looks at: started and to be reported (not pending, not a
    finished job reported before and unchanged), the fresh failures among them (their log
    tail may hold a kill line), and the running ones (progress). A kill line read when the
    job failed is carried from the store (`log_markers`): the log has not changed since."""
    out = _Chosen()
    for job in snap.jobs:
        prev = stored.get(job_key(job))
        carried = prev.view.get("log_markers") if prev is not None else None
        if kill_lines and carried and not _fresh_failure(job, prev):
            job["log_markers"] = sorted(carried)
        judged = judge(job, states=snap.states)
        if judged["verdict"] == Verdict.RUNNING:
            out.running.append(job)
        if judged["verdict"] == Verdict.PENDING or not job.get("stdout"):
            continue
        if is_quiet(judged, prev, since_cut):
            continue  # reported before and unchanged: it will not be emitted
        out.started.append(job)
        if kill_lines and _fresh_failure(job, prev):
            out.fresh.append(job)
    out.fresh = out.fresh[:MAX_MARKER_READS]
    return out


def look_at_logs(
    transport: Transport,
    cluster: ClusterConfig,
    chosen: _Chosen,
    stored: Mapping[Key, StoredJob],
    timeout: float,
    progress: ProgressSettings | None = None,
) -> None:
    """Stat every started job's logs, read the tails of fresh failures (`log_markers`), and
    probe the progress sources of running jobs (`progress_raw`), all onto the jobs."""
    paths = [p for j in chosen.started for p in (j.get("stdout"), j.get("stderr")) if p]
    reads = [TailRead(j.get("stderr") or j["stdout"], MARKER_TAIL) for j in chosen.fresh]
    probes: list[str] = []
    if progress is not None:
        probes = probes_for(chosen.running, stored, progress, results=cluster.results, key=job_key)
    if not paths and not probes:
        return
    result = look_at_files(
        transport,
        paths,
        reads,
        timeout=timeout,
        path_prepend=cluster.path_prepend,
        defs=[DEFS] if probes else (),
        probes=probes,
    )
    if probes:
        collect(chosen.running, result.sections)
    for job in chosen.started:
        for which in ("stdout", "stderr"):
            st = result.stats.get(job.get(which) or "")
            if st is not None:
                job[f"{which}_size"], job[f"{which}_mtime"] = st.size, st.mtime
            elif job.get("log_guessed"):
                job[which] = None  # SLURM's default name, and no such file: not this job's
    for job, data in zip(chosen.fresh, result.data, strict=True):
        job["log_markers"] = sorted(kill_markers(data))


def ask_wandb_api(
    cluster: ClusterConfig, settings: ProgressSettings | None, running: list[dict[str, Any]],
    timeout: float,
) -> None:  # fmt: skip
    """Runs of the cluster's W&B project, for matching to running jobs (`wandb_api_runs`)."""
    from labctl.backends.wandb_api import fetch_runs

    if settings is None or not cluster.wandb_project or not settings.wandb_api_key:
        return
    if not running:
        return
    starts = [j["start_epoch"] for j in running if j.get("start_epoch")]
    runs = fetch_runs(
        cluster.wandb_project,
        api_key=settings.wandb_api_key,
        base_url=settings.wandb_base_url,
        timeout=min(timeout, 30.0),
        created_after=min(starts) - 3600 if starts else None,
        state_dir=settings.state_dir,
    )
    for job in running:
        job["wandb_api_runs"] = runs


def examine(
    transport: Transport,
    cluster: ClusterConfig,
    known: Known,
    snap: Snapshot,
    deadline: float,
    *,
    kill_lines: bool = False,
) -> None:
    """The second round trip (logs, progress probes) and the W&B API, each allowed to fail
    on its own: the scheduler state in `snap` stays good and the failure becomes one error
    record for the cluster (`snap.errors`, with its stage). `kill_lines`: the scheduler's
    failed jobs may end their logs with slurmstepd's kill line (read their tails)."""
    chosen = choose(snap, known.jobs, known.since_cut(snap.now), kill_lines)
    try:
        timeout = max(0.1, deadline - time.monotonic())
        look_at_logs(transport, cluster, chosen, known.jobs, timeout, progress=known.progress)
    except BackendError as exc:
        snap.errors.append(("logs", exc))
        for job in snap.jobs:
            if job.get("log_guessed"):
                job["stdout"] = job["stderr"] = None
    try:
        timeout = max(0.1, deadline - time.monotonic())
        ask_wandb_api(cluster, known.progress, chosen.running, timeout)
    except BackendError as exc:
        snap.errors.append(("wandb_api", exc))
