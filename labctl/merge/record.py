"""The records merge-green emits: one `pr` per pull request, a `repo` for a refused repo."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from labctl.backends.github_model import Pull
from labctl.merge.decide import Verdict


@dataclass
class Facts:
    """What was learned and done about one PR on the way to its verdict."""

    pull: Pull
    checks: dict[str, Any] | None = None
    review_decision: str | None = None
    stacked_on: int | None = None
    merge_method: str | None = None
    merge_commit_sha: str | None = None
    actions: list[str] = field(default_factory=list)  # writes sent (or, dry run, to send)
    applied: bool = False  # a write this record describes was carried out


def pr_record(repo: str, facts: Facts, verdict: Verdict, *, dry_run: bool) -> dict[str, Any]:
    pull = facts.pull
    return {
        "kind": "pr",
        "repo": repo,
        "number": pull.number,
        "title": pull.title,
        "url": pull.url,
        "author": pull.author,
        "base": pull.base_ref,
        "head": pull.head_ref,
        "head_sha": pull.head_sha or None,
        "decision": verdict.decision,
        "reason": verdict.reason,
        "message": verdict.message,
        "checks": facts.checks,
        "mergeable_state": pull.mergeable_state,
        "review_decision": facts.review_decision,
        "stacked_on": facts.stacked_on,
        "merge_method": facts.merge_method,
        "merge_commit_sha": facts.merge_commit_sha,
        "actions": list(facts.actions),
        "applied": facts.applied,
        "dry_run": dry_run,
    }


def repo_record(
    repo: str, reason: str, message: str, *, canonical: str | None, dry_run: bool
) -> dict[str, Any]:
    """A repo merge-green refused to touch (zero writes): not allowlisted, renamed, archived."""
    return {
        "kind": "repo",
        "repo": repo,
        "canonical": canonical,
        "decision": "skipped",
        "reason": reason,
        "message": message,
        "applied": False,
        "dry_run": dry_run,
    }


def missing_pull(number: int) -> Pull:
    """A placeholder for a PR number asked for that is not open."""
    return Pull(
        number=number,
        title="",
        url=None,
        author=None,
        draft=False,
        labels=(),
        head_ref="",
        head_sha="",
        head_repo=None,
        head_owner=None,
        base_ref="",
        base_repo=None,
        state="unknown",
    )
