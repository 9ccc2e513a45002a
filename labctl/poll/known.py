"""What poll asks each cluster (`ask_for`: cheap, so the cluster can start answering at
once) and the stored jobs it compares the answer with (`known_for`: read meanwhile).

The sacct window starts from the cluster's own clock at its last good poll, less a margin
for slurmdbd's lag. Of the stored jobs only those a poll can meet again are read (the
active ones, those the last good poll saw, earlier attempts of active ids; `--since`
reaches further): a lab's store holds weeks of finished jobs, a poll's window a few.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from labctl.cluster.config import ClusterConfig
from labctl.cluster.snapshot import Ask, Key
from labctl.poll.model import Known, id_order
from labctl.poll.store import Store

if TYPE_CHECKING:
    from labctl.poll.core import PollSettings

RECENT_SLACK_S = 3600.0  # clock skew between this machine and a cluster, slow polls


def _window(row: dict[str, Any], settings: PollSettings, now: float) -> float:
    last_ok_remote = row["last_ok_remote"]
    if last_ok_remote is not None:
        # the margin covers slurmdbd's lag, but never reaches further back than the first
        # poll's lookback did: a later poll must not report older jobs as new
        since = last_ok_remote - min(settings.window_margin_s, settings.lookback_s)
    else:
        since = now - settings.lookback_s
    if settings.since_s is not None:
        since = min(since, (last_ok_remote or now) - settings.since_s)
    return float(since)


def ask_for(store: Store, cluster: ClusterConfig, settings: PollSettings, now: float) -> Ask:
    """The scheduler's question: the ids last seen alive and the window (its `logs` are
    filled in later, from `known_for`)."""
    row = store.cluster(cluster.name)
    ids = sorted(store.active_ids(cluster.name), key=id_order)
    return Ask(active_ids=tuple(ids), since=_window(row, settings, now))


def known_for(store: Store, cluster: ClusterConfig, settings: PollSettings, now: float) -> Known:
    row = store.cluster(cluster.name)
    return Known(
        jobs=store.jobs(cluster.name, seen_since=_seen_since(row["last_ok_at"], settings, now)),
        last_ok_remote=row["last_ok_remote"],
        since=_window(row, settings, now),
        since_s=settings.since_s,
        progress=settings.progress,
    )


def _seen_since(last_ok_at: float | None, settings: PollSettings, now: float) -> float | None:
    """The stored jobs this poll can meet again were seen by the last good poll or later
    (its window reached back `window_margin_s` before it; `--since` reaches further): the
    store's older finished jobs stay on disk. None (every job) before a first good poll."""
    if last_ok_at is None:
        return None
    cut = last_ok_at - settings.window_margin_s - RECENT_SLACK_S
    if settings.since_s is not None:
        cut = min(cut, now - settings.since_s - RECENT_SLACK_S)
    return float(cut)


class RememberedLogs(Mapping[Key, tuple[str | None, str | None]]):
    """(stdout, stderr) the store remembers per job, for a scheduler that has forgotten
    them: the scheduler asks only after its round trip, by which time the main thread has
    read the stored jobs (it waits for them otherwise)."""

    def __init__(self, known: Future[Known]) -> None:
        self._known = known

    def _logs(self) -> Mapping[Key, tuple[str | None, str | None]]:
        return self._known.result().logs

    def __getitem__(self, key: Key) -> tuple[str | None, str | None]:
        return self._logs()[key]

    def __iter__(self) -> Iterator[Key]:
        return iter(self._logs())

    def __len__(self) -> int:
        return len(self._logs())
