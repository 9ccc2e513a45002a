"""Diagnose a `job` record from `labctl poll`: read its logs where they live, add the why.

The scheduler's view (state, exit code, signal, log age) comes from the record and beats
log text. Logs are the job's stderr, then stdout (one file when they are the same): read
locally with the bounded, widening tail-first reader, or on the cluster through its
transport as one bounded `tail -c` (window bytes), or with `--full` the whole log streamed
through (`cat`, constant memory). The best-explained diagnosis of the two logs is kept.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from labctl.diagnose.engine import diagnose_chunks, diagnose_path
from labctl.diagnose.options import DiagnoseOptions
from labctl.diagnose.reader import LogMissing, LogUnreadable
from labctl.errors import BackendError
from labctl.records import error_record

MISSING = "labctl: no such log"  # what remote_read says on stderr when the file is gone
FULL_READ_TIMEOUT = 1800.0  # `--full` streams the whole log: minutes for tens of GB


@dataclass(frozen=True)
class Reach:
    """How to read a job's logs: through the transport of its configured cluster, a bounded
    tail read allowed the cluster's `timeout_s`."""

    transport: Any  # labctl.backends.transport.Transport
    timeout_s: float

    @property
    def is_local(self) -> bool:
        return bool(self.transport.is_local)


def reach_for(config: Any, name: str | None) -> Reach | None:
    """The configured cluster the record names (validated as poll validates it), or None
    when it names none (its logs are then read locally)."""
    from labctl.cluster.config import cluster_named
    from labctl.cluster.scheduler import transport_for

    cluster = cluster_named(config, name)
    if cluster is None:
        return None
    return Reach(transport_for(cluster), cluster.timeout_s)


def sched_of(rec: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "state": rec.get("state"),
        "exit_code": rec.get("exit_code"),
        "signal": rec.get("signal"),
        "reason": rec.get("reason"),
        "log_age": rec.get("log_age_s"),
        "verdict": rec.get("verdict"),
    }


def _rank(d: Mapping[str, Any]) -> tuple[int, float]:
    """Prefer a named failure over unknown over healthy, then confidence."""
    category = d.get("category")
    named = (
        2 if d.get("failed") and category not in ("unknown", None) else 1 if d.get("failed") else 0
    )
    return (named, float(d.get("confidence") or 0.0))


def log_paths(rec: Mapping[str, Any]) -> list[str]:
    out: list[str] = []
    for key in ("stderr", "stdout"):
        path = rec.get(key)
        if isinstance(path, str) and path and path not in out:
            out.append(path)
    return out


def remote_read(reach: Reach, path: str, nbytes: int | None) -> Iterator[bytes]:
    """A log on the cluster as a stream of chunks: its last `nbytes` (`tail -c`), or all of
    it (`cat`, streamed: `--full` on a 20 GB log holds one chunk at a time). `.gz` logs are
    decompressed on the cluster first."""
    read = 'gzip -dc -- "$1"' if path.endswith(".gz") else 'cat -- "$1"'
    if nbytes is not None:
        read = f'{read} | tail -c "$2"' if path.endswith(".gz") else 'tail -c "$2" -- "$1"'
    script = f'[ -e "$1" ] || {{ echo "{MISSING}" >&2; exit 66; }}; {read}'
    argv = ["sh", "-c", script, "sh", path, str(nbytes or 0)]
    timeout = max(FULL_READ_TIMEOUT, reach.timeout_s) if nbytes is None else reach.timeout_s
    try:
        yield from reach.transport.stream(argv, timeout=timeout, what=f"reading {path}")
    except BackendError as exc:
        if MISSING in str(exc):  # the same LogMissing a local read raises
            raise LogMissing(f"cannot read {path}: no such file", path=path) from None
        raise


def diagnose_job(
    lc: Any, rec: dict[str, Any], opts: DiagnoseOptions
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The record with a `diagnosis` added, and any `error` records (unreadable logs)."""
    sched = sched_of(rec)
    reach = reach_for(lc.config, rec.get("cluster"))
    results: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    missing: list[str] = []  # logs that do not exist: noted, not an error (see LogMissing)
    where = {"cluster": rec.get("cluster"), "job_id": rec.get("job_id")}
    for path in log_paths(rec):
        try:
            path = _confined(lc, rec, reach, path)
            results.append(_diagnose_log(path, reach, sched, opts, lc.clock()))
        except LogMissing:
            missing.append(path)
        except LogUnreadable as exc:
            errors.append(exc.record() | where)
        except Exception as exc:  # a transport failure for this log: keep going
            reason = getattr(exc, "reason", "unreadable")
            errors.append(error_record(reason, f"cannot read {path}: {exc}", **where))
    if not results:
        results.append(
            diagnose_chunks(
                [], sched=sched, source=None, catalog=opts.catalog, redactor=opts.redactor
            )
        )
    best = max(results, key=_rank)
    out = dict(rec)
    out["diagnosis"] = {k: v for k, v in best.items() if k != "kind"} | {"logs_missing": missing}
    return out, errors


def _confined(lc: Any, rec: Mapping[str, Any], reach: Reach | None, path: str) -> str:
    """The log path to read (checked against the tool server's roots when under it)."""
    from labctl.confine import log_path

    if reach is None:
        return log_path(lc, None, None, path, 0.0)
    return log_path(lc, rec.get("cluster"), reach.transport, path, reach.timeout_s)


def _diagnose_log(
    path: str, reach: Reach | None, sched: Mapping[str, Any], opts: DiagnoseOptions, now: float
) -> dict[str, Any]:
    """One log of the job: read locally (tail first), or on its cluster."""
    if reach is None or reach.is_local:
        return diagnose_path(
            path,
            window=opts.window,
            full=opts.full,
            sched=sched,
            catalog=opts.catalog,
            redactor=opts.redactor,
            now=now,
        )
    return diagnose_chunks(
        remote_read(reach, path, None if opts.full else opts.window),
        sched=sched,
        tail=not opts.full,
        source=path,
        catalog=opts.catalog,
        redactor=opts.redactor,
    )
