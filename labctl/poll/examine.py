"""Job logs on the cluster: stat them (size, mtime against the cluster's clock) and, for
SLURM jobs that just FAILED or were CANCELLED, read the stderr tail for slurmstepd's kill
fingerprints. One round trip per cluster (`labctl.backends.clusterfs`).
"""

from __future__ import annotations

import time
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

MARKER_TAIL = 8192
MAX_MARKER_READS = 200


def _fresh_failure(job: dict[str, Any], stored: StoredJob | None) -> bool:
    if job.get("state") not in ("FAILED", "CANCELLED"):
        return False
    return stored is None or stored.record.get("state") != job.get("state")


def refine_with_markers(job: dict[str, Any], markers: frozenset[str]) -> None:
    from labctl.parse.slurm import classify

    job["log_markers"] = sorted(markers)
    if not markers:
        return
    batch = next((s for s in job.get("steps") or () if s.get("step") == "batch"), None)
    job["verdict"], job["cause"] = classify(
        job.get("state"),
        exit_code=job.get("exit_code"),
        signal=job.get("signal"),
        reason=job.get("reason"),
        cancelled_by=job.get("cancelled_by"),
        owner_uid=job.get("uid"),
        batch_state=batch.get("state") if batch else None,
        markers=markers,
    )


def look_at_logs(
    transport: Transport,
    cluster: ClusterConfig,
    jobs: list[dict[str, Any]],
    stored: dict[Key, StoredJob],
    timeout: float,
    since_cut: float | None = None,
    progress: ProgressSettings | None = None,
    kill_lines: bool = False,
) -> None:
    """Stat every started job's logs, read the tails of fresh failures, and probe the
    progress sources of running jobs (`progress_raw` on each; all in place)."""
    from labctl.parse.slurm import kill_markers

    started = []
    fresh = []
    for job in jobs:
        prev = stored.get(job_key(job))
        carried = prev.record.get("log_markers") if prev is not None else None
        if kill_lines and carried and not _fresh_failure(job, prev):
            # read when the job failed; the log has not changed what it says since
            refine_with_markers(job, frozenset(carried))
        if job.get("verdict") == "pending" or not job.get("stdout"):
            continue
        if is_quiet(job, prev, since_cut):
            continue  # reported before and unchanged: it will not be emitted
        started.append(job)
        if kill_lines and _fresh_failure(job, prev):
            fresh.append(job)
    paths = [p for j in started for p in (j.get("stdout"), j.get("stderr")) if p]
    fresh = fresh[:MAX_MARKER_READS]
    reads = [TailRead(j.get("stderr") or j["stdout"], MARKER_TAIL) for j in fresh]
    probes: list[str] = []
    if progress is not None:
        probes = probes_for(jobs, stored, progress, results=cluster.results, key=job_key)
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
        collect(jobs, result.sections)
    for job in started:
        for which in ("stdout", "stderr"):
            st = result.stats.get(job.get(which) or "")
            if st is not None:
                job[f"{which}_size"], job[f"{which}_mtime"] = st.size, st.mtime
            elif job.get("log_guessed"):
                job[which] = None  # SLURM's default name, and no such file: not this job's
    for job, data in zip(fresh, result.data, strict=True):
        refine_with_markers(job, kill_markers(data.decode("utf-8", "replace")))


def ask_wandb_api(
    cluster: ClusterConfig, settings: ProgressSettings | None, jobs: list[dict[str, Any]],
    timeout: float,
) -> None:  # fmt: skip
    """Runs of the cluster's W&B project, for matching to running jobs (`wandb_api_runs`)."""
    from labctl.backends.wandb_api import fetch_runs

    if settings is None or not cluster.wandb_project or not settings.wandb_api_key:
        return
    running = [j for j in jobs if j.get("verdict") == "running"]
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
    jobs = snap.jobs
    try:
        look_at_logs(
            transport,
            cluster,
            jobs,
            known.jobs,
            max(0.1, deadline - time.monotonic()),
            since_cut=known.since_cut(snap.now),
            progress=known.progress,
            kill_lines=kill_lines,
        )
    except BackendError as exc:
        snap.errors.append(("logs", exc))
        for job in jobs:
            if job.get("log_guessed"):
                job["stdout"] = job["stderr"] = None
    try:
        ask_wandb_api(cluster, known.progress, jobs, max(0.1, deadline - time.monotonic()))
    except BackendError as exc:
        snap.errors.append(("wandb_api", exc))
