"""Which `job` records rl-health acts on: running RL jobs in a new or untested setting.

A job is untested when its name matches one of the configured patterns (fnmatch,
case-insensitive: `*smoke*`, `*debug*` ...), when it carries one of the configured tags, or
when poll first saw it less than `age_h` hours ago (every new launch gets the deep look
for its first day). `--all` acts on every running RL job. Running is any running verdict
of `labctl.verdicts`; the RL bucket is the table's (`[buckets.RL]` rules, or an explicit
`job_type`/`bucket` field), handed in by the command as a predicate.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from labctl.records import parse_rfc3339
from labctl.verdicts import RUNNING_VERDICTS


@dataclass(frozen=True)
class UntestedRule:
    names: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    age_h: float = 0.0  # 0: age does not make a job untested


def is_running(rec: Mapping[str, Any]) -> bool:
    verdict = rec.get("verdict")
    return verdict in RUNNING_VERDICTS or (rec.get("state") == "RUNNING" and not verdict)


def untested(rec: Mapping[str, Any], rule: UntestedRule, now: float) -> str | None:
    """Why the job counts as untested ("name *smoke*", "tag debug", "new: first seen 2.0h
    ago"), or None."""
    name = str(rec.get("name") or "").lower()
    for pattern in rule.names:
        if fnmatchcase(name, pattern.lower()):
            return f"name {pattern}"
    tags = {str(t).lower() for t in rec.get("tags") or []}
    for tag in rule.tags:
        if tag.lower() in tags:
            return f"tag {tag}"
    first = parse_rfc3339(rec.get("first_seen"))
    if rule.age_h > 0 and first is not None and now - first < rule.age_h * 3600:
        return f"new: first seen {(now - first) / 3600:.1f}h ago"
    return None


def acts_on(
    rec: Mapping[str, Any],
    *,
    rule: UntestedRule,
    is_rl: Callable[[Mapping[str, Any]], bool],
    now: float,
    all_jobs: bool,
) -> str | None:
    """Why rl-health looks at this record ("--all" or the untested reason), or None.
    `is_rl`: the table's RL bucket (`labctl.render.buckets`, wired by the command)."""
    if rec.get("kind") != "job" or not is_running(rec) or not is_rl(rec):
        return None
    if all_jobs:
        return "--all"
    return untested(rec, rule, now)
