"""`labctl poll`'s core: every configured cluster, concurrently; records as each finishes.

    with the state lock:                        (a concurrent poll waits, then `locked`)
        for each cluster, in a thread:          its Scheduler's read (the scheduler's round
                                                trip), then examine (logs, progress probes)
        as each finishes (main thread):         merge with the store -> records, one
                                                transaction per cluster
A cluster that fails gives ONE `error` record (reason from the backend: unreachable,
auth, timeout, command_failed, no_accounting, bad_output) and the others go on. Inputs
come in as arguments (clusters, settings, state dir, clock, scheduler and transport
factories); all I/O happens in the scheduler adapters, their backends and the store.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from labctl.poll.running import ProgressSettings

from labctl.backends.transport import Transport
from labctl.cluster.config import ClusterConfig
from labctl.cluster.scheduler import Scheduler, scheduler_for, transport_for
from labctl.cluster.snapshot import Ask, Snapshot
from labctl.errors import LabctlError
from labctl.poll.known import RememberedLogs, ask_for, known_for
from labctl.poll.model import Known
from labctl.poll.state import PollState, open_state
from labctl.poll.store import Store
from labctl.records import error_record, rfc3339

SchedulerFactory = Callable[..., Scheduler]  # (cluster, transport, *, state_dir) -> Scheduler


@dataclass(frozen=True)
class PollSettings:
    lock_wait_s: float = 10.0
    lookback_s: float = 24 * 3600.0
    window_margin_s: float = 600.0
    forget_after_s: float = 48 * 3600.0
    retention_s: float = 14 * 86400.0
    since_s: float | None = None  # --since: re-report jobs that ended this long ago
    progress: ProgressSettings | None = None  # None: RUNNING stays `running`


def read_cluster(
    scheduler: Scheduler,
    cluster: ClusterConfig,
    ask: Ask,
    known: Future[Known],
    transport: Transport,
    deadline: float,
) -> Snapshot:
    """One cluster's part of the poll (in its own thread): the scheduler's round trip, then
    the jobs' logs and progress sources. The stored jobs (`known`) are read by the main
    thread while the scheduler answers; this thread needs them only after its answer."""
    snap = scheduler.read(ask, deadline)
    from labctl.poll.examine import examine  # imported by the main thread meanwhile

    examine(transport, cluster, known.result(), snap, deadline, kill_lines=scheduler.kill_lines)
    return snap


def _read_known(
    state: PollState,
    clusters: Sequence[ClusterConfig],
    settings: PollSettings,
    now: float,
    later: dict[str, Future[Known]],
) -> dict[str, Known]:
    """The stored jobs of every cluster, read while the clusters answer, handed to their
    threads through `later` (a read that fails fails them too); and the code that merges,
    imported meanwhile."""
    import labctl.poll.examine
    import labctl.poll.merge  # noqa: F401

    try:
        knowns = state.read(
            lambda store: {c.name: known_for(store, c, settings, now) for c in clusters}
        )
    except BaseException as exc:
        for fut in later.values():
            fut.set_exception(exc)
        raise
    for name, fut in later.items():
        fut.set_result(knowns[name])
    return knowns


def _cluster_error(
    state: PollState, cluster: ClusterConfig, exc: BaseException, now: float
) -> dict[str, Any]:
    if isinstance(exc, LabctlError):
        reason, message = exc.reason, exc.message
    else:  # a bug or an unexpected library error: still one record, the others go on
        reason, message = "internal_error", f"{type(exc).__name__}: {exc}"

    def failed(store: Store) -> tuple[dict[str, Any], int]:
        return store.cluster_failed(cluster.name, now, message), store.active_count(cluster.name)

    row, affected = state.write(failed)
    return error_record(
        reason,
        f"cluster {cluster.name}: {message}",
        cluster=cluster.name,
        host=cluster.host,
        last_ok_at=rfc3339(row["last_ok_at"]),
        consecutive_failures=row["consecutive_failures"],
        first_failure_at=rfc3339(row["first_failure_at"]),
        affected_jobs=affected,
    )


def _cluster_records(
    state: PollState,
    cluster: ClusterConfig,
    *,
    known: Known,
    snap: Snapshot,
    settings: PollSettings,
    now: float,
) -> Iterator[dict[str, Any]]:
    """One cluster's records, each as soon as its job is merged (a 10,000-job cluster is
    never held as 10,000 records), then its store changes in one transaction. A consumer
    that stops early (`| head`) still leaves the jobs merged so far saved, but not the
    cluster's good poll: the next poll's window starts where this one's did."""
    from labctl.poll.merge import ClusterMerge, merged_records

    m = ClusterMerge(
        cluster.name,
        cluster.scheduler,
        snap,
        now,
        known.since_cut(snap.now),
        settings.progress,
        cluster.progress_regex,
    )
    jobs, snap.jobs = snap.jobs, []
    whole = False

    def save(store: Store) -> None:
        store.put_jobs(cluster.name, m.out.updates)
        store.touch(cluster.name, m.out.quiet, now)
        if whole:
            store.cluster_ok(cluster.name, now, snap.now)
            store.prune(cluster.name, now - settings.retention_s)

    try:
        yield from merged_records(m, jobs, known.jobs, settings.forget_after_s, snap.window_start)
        whole = True
    finally:
        state.write(save)
    yield from _side_records(cluster, snap)


def _side_records(cluster: ClusterConfig, snap: Snapshot) -> list[dict[str, Any]]:
    """The cluster's `skipped` record, and one `error` record when a step after the
    scheduler's (logs, W&B API) failed: the state above is still good."""
    records: list[dict[str, Any]] = []
    if snap.skipped:
        count = sum(snap.skipped.values())
        records.append(
            {
                "kind": "skipped",
                "cluster": cluster.name,
                "count": count,
                "patterns": dict(sorted(snap.skipped.items())),
                "message": f"{count} job(s) on {cluster.name} match skip patterns: not analysed",
            }
        )
    what = {"logs": "job logs not examined", "wandb_api": "W&B API not read"}
    for stage, exc in snap.errors[:1]:
        reason = getattr(exc, "reason", "internal_error")
        message = getattr(exc, "message", str(exc))
        records.append(
            error_record(
                reason,
                f"cluster {cluster.name}: {what.get(stage, stage)}: {message}",
                cluster=cluster.name,
                host=cluster.host,
                stage=stage,
            )
        )
    return records


def run(
    clusters: Sequence[ClusterConfig],
    *,
    state_dir: Path,
    settings: PollSettings,
    clock: Callable[[], float] = time.time,
    scheduler: SchedulerFactory = scheduler_for,
    transport: Callable[[ClusterConfig], Transport] = transport_for,
) -> Iterator[dict[str, Any]]:
    """Poll every cluster; yield job, skipped and error records as clusters finish.
    A broken state store or state dir costs the memory, never the report
    (labctl.poll.state)."""
    from labctl.fsops import state_lock

    with contextlib.ExitStack() as stack:
        lock_fault = None
        try:
            stack.enter_context(state_lock(state_dir, "poll", wait_s=settings.lock_wait_s))
        except OSError as exc:  # not even a lock file: nothing will be saved, none needed
            lock_fault = exc
        state = open_state(
            state_dir, now=clock(), timeout_s=settings.lock_wait_s, lock_fault=lock_fault
        )
        stack.callback(state.close)
        yield from state.faults()
        yield from _run_locked(
            state,
            clusters,
            settings=settings,
            clock=clock,
            scheduler=lambda c, t: scheduler(c, t, state_dir=state_dir),
            transport=transport,
        )


def _run_locked(
    state: PollState,
    clusters: Sequence[ClusterConfig],
    *,
    settings: PollSettings,
    clock: Callable[[], float],
    scheduler: Callable[[ClusterConfig, Transport], Scheduler],
    transport: Callable[[ClusterConfig], Transport],
) -> Iterator[dict[str, Any]]:
    started = clock()
    poll_id = state.write(lambda store: store.poll_started(started))
    # what to ask comes first and cheap: the clusters answer while the rest is read
    asks = state.read(
        lambda store: {c.name: ask_for(store, c, settings, started) for c in clusters}
    )
    yield from state.faults()
    later: dict[str, Future[Known]] = {c.name: Future() for c in clusters}
    ok = failed = 0
    pool = ThreadPoolExecutor(max_workers=max(1, len(clusters)), thread_name_prefix="poll")
    try:
        futures: dict[Future[Snapshot], ClusterConfig] = {}
        for c in clusters:
            deadline = time.monotonic() + c.timeout_s
            reach = transport(c)
            ask = replace(asks[c.name], logs=RememberedLogs(later[c.name]))
            fut = pool.submit(
                read_cluster, scheduler(c, reach), c, ask, later[c.name], reach, deadline
            )
            futures[fut] = c
        knowns = _read_known(state, clusters, settings, started, later)
        yield from state.faults()
        for fut in as_completed(futures):
            cluster = futures[fut]
            now = clock()
            try:
                snap = fut.result()
            except Exception as exc:
                failed += 1
                yield _cluster_error(state, cluster, exc, now)
            else:
                ok += 1
                yield from _cluster_records(
                    state,
                    cluster,
                    known=knowns[cluster.name],
                    snap=snap,
                    settings=settings,
                    now=now,
                )
            yield from state.faults()
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
        if state.saving:  # a poll cut short still says how far it got
            with contextlib.suppress(Exception):
                state.write(lambda store: store.poll_ended(poll_id, clock(), ok, failed))
    yield from state.faults()
