"""guard's core: check a stream of records, or admit one job, against the rules.

`check` passes every record through as it arrives, then emits one `violation` per broken
rule (per cluster for a per-cluster limit). `admit` decides whether a job about to be
launched breaks a rule, from the jobs the last poll saw (or a fresh poll), and ends with
one `admission` record. Nothing here cancels, kills or edits anything.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from labctl.experiments.match import job_patterns
from labctl.guard import jobs as job_rules
from labctl.guard.rules import Rule
from labctl.records import rfc3339
from labctl.verdicts import V

Record = dict[str, Any]


@dataclass(frozen=True)
class GuardInputs:
    rules: Sequence[Rule]
    buckets: Mapping[str, Any]  # the table's bucket rules (labctl.render.buckets)
    patterns_of: Mapping[str, Sequence[str]] = field(default_factory=dict)  # rule -> globs
    base: Path = Path()  # where relative file globs start


def concluded_patterns(rule: Rule, templates: Sequence[str], complete: Sequence[str]) -> list[str]:
    """Job name patterns a concluded rule forbids: its names, its experiments' patterns,
    and every complete experiment's when `complete = true`."""
    out = list(rule.names)
    for exp in [*rule.experiments, *(complete if rule.complete else ())]:
        out += job_patterns(exp, templates)
    return out


def violations(
    inputs: GuardInputs, jobs: Sequence[Mapping[str, Any]], candidate: Record | None = None
) -> Iterator[Record]:
    from labctl.guard.configs import forbid_setting
    from labctl.guard.resources import count_resource

    for rule in inputs.rules:
        if rule.kind == "max_running":
            yield from job_rules.max_running(rule, jobs, inputs.buckets, candidate)
        elif rule.kind == "concluded":
            patterns = inputs.patterns_of.get(rule.name, rule.names)
            yield from job_rules.concluded(rule, jobs, patterns, candidate)
        elif rule.kind == "max_count":
            yield from count_resource(rule)
        else:
            yield from forbid_setting(rule, inputs.base)


def check(inputs: GuardInputs, records: Iterable[Record]) -> Iterator[Record]:
    seen: list[Record] = []
    for rec in records:
        if rec.get("kind") == "job":
            seen.append(rec)
        yield rec
    yield from violations(inputs, job_rules.unique_jobs(seen))


@dataclass(frozen=True)
class Candidate:
    cluster: str
    name: str
    bucket: str | None = None
    partition: str | None = None

    def record(self) -> Record:
        rec: Record = {"kind": "job", "cluster": self.cluster, "name": self.name,
                       "state": "PENDING", "verdict": V.PENDING, "job_id": None}  # fmt: skip
        if self.bucket:
            rec["bucket"] = self.bucket
        if self.partition:
            rec["partition"] = self.partition
        return rec


def admit(
    inputs: GuardInputs,
    cand: Candidate,
    jobs: Sequence[Mapping[str, Any]],
    *,
    source: str,
    polled_at: float | None,
    now: float,
    max_age_s: float,
) -> Iterator[Record]:
    from labctl.render.buckets import bucket_of

    rec = cand.record()
    base: Record = {
        "kind": "admission",
        "cluster": cand.cluster,
        "name": cand.name,
        "bucket": bucket_of(rec, inputs.buckets),
        "source": source,
        "as_of": rfc3339(polled_at),
    }
    if polled_at is None or now - polled_at > max_age_s:
        age = "never" if polled_at is None else f"{(now - polled_at) / 60:.0f} min ago"
        yield base | {
            "admitted": False,
            "violations": 0,
            "reason": "stale_state",
            "message": f"cannot admit {cand.name}: the last good poll of {cand.cluster} was "
            f"{age}; run `labctl poll` (or pass --poll) first",
        }
        return
    broken = list(violations(inputs, job_rules.unique_jobs(jobs), rec))
    yield from broken
    failed = [v for v in broken if v.get("kind") == "violation"]
    errors = [v for v in broken if v.get("kind") == "error"]
    admitted = not failed and not errors
    yield base | {
        "admitted": admitted,
        "violations": len(failed),
        "reason": None if admitted else ("violation" if failed else "check_failed"),
        "message": f"{cand.name} on {cand.cluster}: "
        + (
            "breaks no rule"
            if admitted
            else "; ".join(str(v.get("message")) for v in [*failed, *errors])
        ),
    }
