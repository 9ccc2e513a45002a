"""Job logs on the cluster: stat them (size, mtime against the cluster's clock) and, for
SLURM jobs that just FAILED or were CANCELLED, read the stderr tail for slurmstepd's kill
fingerprints. One round trip per cluster (`labctl.backends.clusterfs`).
"""

from __future__ import annotations

from typing import Any

from labctl.backends.clusterfs import TailRead, look_at_files
from labctl.backends.transport import Transport
from labctl.poll.clusters import ClusterConfig
from labctl.poll.merge import is_quiet
from labctl.poll.model import Key, StoredJob, job_key

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
) -> None:
    """Stat every started job's logs and read the tails of fresh failures (in place)."""
    from labctl.parse.slurm import kill_markers

    started = []
    fresh = []
    for job in jobs:
        prev = stored.get(job_key(job))
        carried = prev.record.get("log_markers") if prev is not None else None
        if cluster.scheduler == "slurm" and carried and not _fresh_failure(job, prev):
            # read when the job failed; the log has not changed what it says since
            refine_with_markers(job, frozenset(carried))
        if job.get("verdict") == "pending" or not job.get("stdout"):
            continue
        if is_quiet(job, prev, since_cut):
            continue  # reported before and unchanged: it will not be emitted
        started.append(job)
        if cluster.scheduler == "slurm" and _fresh_failure(job, prev):
            fresh.append(job)
    paths = [p for j in started for p in (j.get("stdout"), j.get("stderr")) if p]
    fresh = fresh[:MAX_MARKER_READS]
    reads = [TailRead(j.get("stderr") or j["stdout"], MARKER_TAIL) for j in fresh]
    if not paths:
        return
    result = look_at_files(
        transport, paths, reads, timeout=timeout, path_prepend=cluster.path_prepend
    )
    for job in started:
        for which in ("stdout", "stderr"):
            st = result.stats.get(job.get(which) or "")
            if st is not None:
                job[f"{which}_size"], job[f"{which}_mtime"] = st.size, st.mtime
            elif job.get("log_guessed"):
                job[which] = None  # SLURM's default name, and no such file: not this job's
    for job, data in zip(fresh, result.data, strict=True):
        refine_with_markers(job, kill_markers(data.decode("utf-8", "replace")))
