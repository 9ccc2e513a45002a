"""What merge-green reads from GitHub, as plain data (built from the REST JSON)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any


@dataclass(frozen=True)
class RepoInfo:
    full_name: str  # canonical spelling, after any rename redirect
    default_branch: str
    archived: bool
    parent: str | None  # the upstream a fork was made from


@dataclass(frozen=True)
class Pull:
    number: int
    title: str
    url: str | None
    author: str | None
    draft: bool
    labels: tuple[str, ...]
    head_ref: str
    head_sha: str
    head_repo: str | None  # None: the fork was deleted
    head_owner: str | None
    base_ref: str
    base_repo: str | None
    state: str  # open | closed
    merged: bool = False
    merged_at: str | None = None
    mergeable: bool | None = None  # only a single-PR read carries it
    mergeable_state: str | None = None
    merge_commit_sha: str | None = None


@dataclass(frozen=True)
class Review:
    decision: str | None  # REVIEW_REQUIRED | CHANGES_REQUESTED | APPROVED | None
    viewer: str | None  # the token's own login
    code_owners: bool  # the base branch requires code-owner reviews


@dataclass(frozen=True)
class Check:
    name: str
    kind: str  # check_run | status
    state: str  # a check run's conclusion (or its status while running); a status's state
    done: bool
    finished_at: str | None = None  # a run's completed_at, a status's updated_at (ISO 8601)


def instant(text: str | None) -> datetime | None:
    """GitHub's ISO 8601 timestamp ("2026-01-01T00:00:00Z", UTC); None if absent or unreadable."""
    try:
        when = datetime.fromisoformat(str(text))
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def _login(obj: Any) -> str | None:
    return obj.get("login") if isinstance(obj, dict) else None


def pull_from(data: dict[str, Any]) -> Pull:
    head = data.get("head") or {}
    base = data.get("base") or {}
    head_repo = head.get("repo") if isinstance(head.get("repo"), dict) else {}
    base_repo = base.get("repo") if isinstance(base.get("repo"), dict) else {}
    return Pull(
        number=int(data["number"]),
        title=str(data.get("title") or ""),
        url=data.get("html_url"),
        author=_login(data.get("user")),
        draft=bool(data.get("draft")),
        labels=tuple(str(lab.get("name")) for lab in data.get("labels") or [] if lab),
        head_ref=str(head.get("ref") or ""),
        head_sha=str(head.get("sha") or ""),
        head_repo=(head_repo or {}).get("full_name"),
        head_owner=_login(head.get("user")) or _login((head_repo or {}).get("owner")),
        base_ref=str(base.get("ref") or ""),
        base_repo=(base_repo or {}).get("full_name"),
        state=str(data.get("state") or "open"),
        merged=bool(data.get("merged")),
        merged_at=data.get("merged_at"),
        mergeable=data.get("mergeable"),
        mergeable_state=data.get("mergeable_state"),
        merge_commit_sha=data.get("merge_commit_sha"),
    )


def checks_from(items: list[dict[str, Any]], kind: str) -> list[Check]:
    """Check runs (`status`, `conclusion`) or commit statuses (`context`, `state`)."""
    out = []
    for item in items:
        if kind == "check_run":
            done = item.get("status") == "completed"
            state = str(item.get("conclusion") if done else item.get("status"))
            finished = item.get("completed_at") if done else None
            out.append(Check(str(item.get("name")), kind, state, done, finished))
        else:
            state, done = str(item.get("state")), item.get("state") != "pending"
            finished = (item.get("updated_at") or item.get("created_at")) if done else None
            out.append(Check(str(item.get("context")), kind, state, done, finished))
    return out
