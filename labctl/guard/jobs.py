"""The job rules: max_running (per cluster or overall) and concluded, over job records.

Jobs are deduplicated by poll's stable `key` (else cluster + job id). A job is running
when its verdict starts with `running` or its state is RUNNING. A candidate (guard admit)
is the job about to be launched: it counts, and only the rules it falls under can refuse
it.

Which jobs a max_running limit counts: checking records (`labctl guard`, the sweep), the
RUNNING ones — the runbook's rule is "at most 6 RUNNING"; admitting a job (`guard
admit`), running and pending ones — a queued job in scope takes a slot when it starts, so
5 running + 3 pending + this one is 9 against a limit of 6, not 6. `include_pending =
true` counts pending jobs in both, `false` in neither. A violation says how many of each
(`running`, `pending`; the candidate is in neither).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from fnmatch import fnmatchcase
from typing import Any

from labctl.experiments.match import is_active_job, job_ref
from labctl.guard.rules import Rule
from labctl.render.buckets import bucket_of
from labctl.verdicts import RUNNING_VERDICTS

Record = dict[str, Any]


def _running(rec: Mapping[str, Any]) -> bool:
    verdict = str(rec.get("verdict") or "")
    return verdict in RUNNING_VERDICTS or str(rec.get("state") or "").upper() == "RUNNING"


def _counts(rec: Mapping[str, Any], pending: bool) -> bool:
    return _running(rec) or (pending and is_active_job(rec))


def _in_scope(rule: Rule, rec: Mapping[str, Any], buckets: Mapping[str, Any]) -> bool:
    if rule.clusters and rec.get("cluster") not in rule.clusters:
        return False
    name = str(rec.get("name") or "")
    if rule.names and not any(fnmatchcase(name, p) for p in rule.names):
        return False
    return rule.bucket is None or bucket_of(rec, buckets) == rule.bucket


def unique_jobs(records: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    seen: dict[Any, Mapping[str, Any]] = {}
    for rec in records:
        if rec.get("kind") == "job":
            seen[rec.get("key") or (rec.get("cluster"), rec.get("job_id"))] = rec
    return list(seen.values())


def _violation(rule: Rule, cluster: str | None, jobs: Sequence[Mapping[str, Any]], limit: int,
               what: str, candidate: Mapping[str, Any] | None = None) -> Record:  # fmt: skip
    where = f" on {cluster}" if cluster else ""
    held = [j for j in jobs if j is not candidate]
    running = sum(1 for j in held if _running(j))
    detail = ""
    if candidate is not None and rule.kind == "max_running":
        detail = f": {running} running, {len(held) - running} pending, and this one"
    return {
        "kind": "violation",
        "rule": rule.name,
        "rule_kind": rule.kind,
        "cluster": cluster,
        "count": len(jobs),
        "limit": limit,
        "running": running,
        "pending": len(held) - running,
        "jobs": [job_ref(j) for j in jobs],
        "message": (rule.message + ": " if rule.message else "")
        + f"{len(jobs)} {what}{where} (limit {limit}){detail}",
    }


def max_running(
    rule: Rule, jobs: Sequence[Mapping[str, Any]], buckets: Mapping[str, Any],
    candidate: Mapping[str, Any] | None = None,
) -> list[Record]:  # fmt: skip
    if candidate is not None and not _in_scope(rule, candidate, buckets):
        return []
    pending = rule.include_pending if rule.include_pending is not None else candidate is not None
    groups: dict[str | None, list[Mapping[str, Any]]] = {}
    for rec in jobs:
        if _in_scope(rule, rec, buckets) and _counts(rec, pending):
            groups.setdefault(rec.get("cluster") if rule.per == "cluster" else None, []).append(rec)
    scope = rule.bucket or "/".join(rule.names)
    what = f"{scope} jobs {'running or pending' if pending else 'running'}"
    if candidate is not None:
        group = candidate.get("cluster") if rule.per == "cluster" else None
        held = [*groups.get(group, []), candidate]
        if len(held) <= rule.limit:
            return []
        return [_violation(rule, group, held, rule.limit, what, candidate)]
    return [
        _violation(rule, group, held, rule.limit, what)
        for group, held in sorted(groups.items(), key=lambda kv: str(kv[0]))
        if len(held) > rule.limit
    ]


def concluded(
    rule: Rule, jobs: Sequence[Mapping[str, Any]], patterns: Sequence[str],
    candidate: Mapping[str, Any] | None = None,
) -> list[Record]:  # fmt: skip
    def hit(rec: Mapping[str, Any]) -> bool:
        if rule.clusters and rec.get("cluster") not in rule.clusters:
            return False
        return any(fnmatchcase(str(rec.get("name") or ""), p) for p in patterns)

    if candidate is not None:
        found = [candidate] if hit(candidate) else []
        what = "new job of a concluded series"
    else:
        found = [rec for rec in jobs if is_active_job(rec) and hit(rec)]
        what = "pending or running job(s) of a concluded series"
    return [_violation(rule, None, found, 0, what, candidate)] if found else []
