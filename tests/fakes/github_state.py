"""The state behind the fake GitHub: repos, pull requests, checks, and how GitHub answers.

Field names and shapes follow GitHub's REST API (github/rest-api-description examples:
pull-request, check-run-paginated, combined-commit-status, pull-request-merge-result);
the semantics follow GitHub's docs (see merge-green's research notes): the PR list omits
`mergeable*`, a merge PUT with a stale `sha` is 409, a 405 names why, a separate branch
deletion closes stacked children while the repo setting `delete_branch_on_merge`
retargets them, a closed PR cannot change base, and nobody approves their own PR.
Time is a per-repo clock that moves a minute at each event (a check finishing, a status,
a base change), so "did CI run after the retarget?" has one answer.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

MERGEABLE = ("clean", "has_hooks", "unstable")
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


def fake_sha(*parts: object) -> str:
    return hashlib.sha1(":".join(map(str, parts)).encode()).hexdigest()


@dataclass
class FakePR:
    number: int
    head: str
    sha: str
    base: str = "main"
    title: str = ""
    author: str = "alice"
    draft: bool = False
    labels: list[str] = field(default_factory=list)
    state: str = "open"
    merged: bool = False
    mergeable: bool | None = True
    mergeable_state: str = "clean"
    null_reads: int = 0  # single-PR GETs that still answer mergeable: null
    review_decision: str | None = None
    approved_state: str = "clean"  # mergeable_state once approved
    head_repo: str | None = None  # None: the repo itself
    merge_commit_sha: str | None = None
    move_head_on_merge: str | None = None  # a push lands just before the merge call
    events: list[dict[str, Any]] = field(default_factory=list)  # its issue events


@dataclass
class FakeRepo:
    full_name: str
    id: int
    default_branch: str = "main"
    archived: bool = False
    parent: str | None = None
    methods: set[str] = field(default_factory=lambda: {"merge", "squash", "rebase"})
    merge_queue: bool = False
    code_owners: bool = False
    delete_branch_on_merge: bool = False  # GitHub retargets children itself
    close_children_on_merge: bool = False  # a separate branch DELETE: children closed
    runs_total_bonus: int = 0  # total_count says more runs than the pages hold
    pulls: dict[int, FakePR] = field(default_factory=dict)
    runs: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    statuses: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    suites: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    minutes: int = 0  # the repo's clock

    def now(self) -> str:
        """The clock moves one minute per reading: every event is later than the last."""
        self.minutes += 1
        return (EPOCH + timedelta(minutes=self.minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")

    def event(self, pr: FakePR, kind: str, actor: str = "labctl-bot") -> None:
        pr.events.append({"event": kind, "actor": actor, "created_at": self.now()})

    def pr(self, number: int, **kw: Any) -> FakePR:
        kw.setdefault("head", f"feature-{number}")
        kw.setdefault("sha", fake_sha(self.full_name, number))
        kw.setdefault("title", f"PR {number}")
        pr = FakePR(number=number, **kw)
        self.pulls[number] = pr
        return pr

    def checks(self, sha: str, *runs: tuple[str, str, str | None]) -> None:
        """Check runs as (name, status, conclusion); each finished one finishes now."""
        self.runs[sha] = [self.run(*run) for run in runs]

    def rerun(self, sha: str, name: str, conclusion: str = "success") -> None:
        """One check run again (GitHub's `filter=latest` then shows only the new run)."""
        runs = [r for r in self.runs.get(sha, []) if r["name"] != name]
        self.runs[sha] = [*runs, self.run(name, "completed", conclusion)]

    def run(self, name: str, status: str, conclusion: str | None) -> dict[str, Any]:
        return {
            "name": name,
            "status": status,
            "conclusion": conclusion,
            "started_at": self.now(),
            "completed_at": self.now() if status == "completed" else None,
        }

    def green(self, pr: FakePR, n: int = 3) -> FakePR:
        self.checks(pr.sha, *[(f"job{i}", "completed", "success") for i in range(n)])
        return pr

    def status(self, sha: str, *items: tuple[str, str]) -> None:
        self.statuses[sha] = []
        for context, state in items:
            when = self.now()
            self.statuses[sha].append(
                {"context": context, "state": state, "created_at": when, "updated_at": when}
            )


def repo_json(repo: FakeRepo, base: str) -> dict[str, Any]:
    owner = repo.full_name.split("/")[0]
    out = {
        "id": repo.id,
        "name": repo.full_name.split("/")[1],
        "full_name": repo.full_name,
        "owner": {"login": owner},
        "url": f"{base}/repos/{repo.full_name}",
        "default_branch": repo.default_branch,
        "archived": repo.archived,
        "fork": repo.parent is not None,
    }
    if repo.parent:
        out["parent"] = {"full_name": repo.parent, "url": f"{base}/repos/{repo.parent}"}
    return out


def pr_json(repo: FakeRepo, pr: FakePR, base: str, *, single: bool) -> dict[str, Any]:
    head_repo = pr.head_repo or repo.full_name
    url = f"{base}/repos/{repo.full_name}/pulls/{pr.number}"
    out: dict[str, Any] = {
        "url": url,
        "id": repo.id * 1000 + pr.number,
        "number": pr.number,
        "html_url": f"https://github.example/{repo.full_name}/pull/{pr.number}",
        "state": pr.state,
        "title": pr.title,
        "draft": pr.draft,
        "user": {"login": pr.author},
        "labels": [{"name": name} for name in pr.labels],
        "head": {
            "ref": pr.head,
            "sha": pr.sha,
            "label": f"{head_repo.split('/')[0]}:{pr.head}",
            "user": {"login": head_repo.split("/")[0]},
            "repo": {"full_name": head_repo, "owner": {"login": head_repo.split("/")[0]}},
        },
        "base": {"ref": pr.base, "repo": {"full_name": repo.full_name}},
        "merged_at": "2026-01-01T00:00:00Z" if pr.merged else None,
        "merge_commit_sha": pr.merge_commit_sha,
    }
    if single:  # only a single-PR read carries these
        computing = pr.null_reads > 0 and pr.state == "open"
        if computing:
            pr.null_reads -= 1
        out["merged"] = pr.merged
        out["mergeable"] = None if computing or pr.state != "open" else pr.mergeable
        out["mergeable_state"] = "unknown" if computing else pr.mergeable_state
    return out


def merge(repo: FakeRepo, pr: FakePR, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """PUT /pulls/N/merge as GitHub answers it."""
    if pr.move_head_on_merge:
        pr.sha, pr.move_head_on_merge = pr.move_head_on_merge, None
    method = body.get("merge_method", "merge")
    if pr.state != "open":
        return 405, {"message": "Pull Request is not mergeable"}
    if body.get("sha") and body["sha"] != pr.sha:
        return 409, {"message": "Head branch was modified. Review and try the merge again."}
    if method not in repo.methods:
        return 405, {"message": f"{method.title()} merges are not allowed on this repository."}
    if repo.merge_queue:
        return 405, {"message": "Changes must be made through the merge queue"}
    if pr.mergeable_state == "blocked" and pr.review_decision == "REVIEW_REQUIRED":
        return 405, {
            "message": "At least 1 approving review is required by reviewers with write access."
        }
    if pr.mergeable_state not in MERGEABLE or not pr.mergeable:
        return 405, {"message": "Pull Request is not mergeable"}
    pr.merged, pr.state = True, "closed"
    pr.merge_commit_sha = fake_sha("merge", repo.full_name, pr.number)
    for child in repo.pulls.values():
        if child.state == "open" and child.base == pr.head:
            if repo.delete_branch_on_merge:
                child.base = pr.base
                repo.event(child, "automatic_base_change_succeeded", actor="github")
            elif repo.close_children_on_merge:
                child.state = "closed"
    return 200, {"sha": pr.merge_commit_sha, "merged": True, "message": "Pull Request merged"}


def approve(pr: FakePR, body: dict[str, Any], viewer: str) -> tuple[int, dict[str, Any]]:
    if pr.author == viewer:
        return 422, {
            "message": "Unprocessable Entity",
            "errors": ["Can not approve your own pull request"],
        }
    if body.get("event") != "APPROVE" or body.get("commit_id") != pr.sha:
        return 422, {"message": "Validation Failed", "errors": ["commit_id is not the head"]}
    pr.review_decision = "APPROVED"
    pr.mergeable_state = pr.approved_state
    return 200, {"id": 1, "state": "APPROVED", "commit_id": pr.sha}


def retarget(repo: FakeRepo, pr: FakePR, base: str) -> tuple[int, dict[str, Any]] | None:
    if pr.state != "open":
        return 422, {
            "message": "Validation Failed",
            "errors": [{"message": "Cannot change the base branch of a closed pull request."}],
        }
    if base != pr.base:
        pr.base = base
        repo.event(pr, "base_ref_changed")
    return None


def event_json(repo: FakeRepo, pr: FakePR, base: str) -> list[dict[str, Any]]:
    """GET /issues/N/events: the issue event object's common properties, oldest first."""
    return [
        {
            "id": repo.id * 100_000 + pr.number * 100 + i,
            "node_id": f"IE_{pr.number}_{i}",
            "url": f"{base}/repos/{repo.full_name}/issues/events/{pr.number * 100 + i}",
            "actor": {"login": event["actor"]},
            "event": event["event"],
            "commit_id": None,
            "commit_url": None,
            "created_at": event["created_at"],
            "performed_via_github_app": None,
        }
        for i, event in enumerate(pr.events)
    ]


def update_branch(pr: FakePR, expected: str | None) -> tuple[int, dict[str, Any]]:
    if expected and expected != pr.sha:
        return 422, {"message": "expected head sha didn't match current head ref."}
    pr.sha = fake_sha("updated", pr.sha)
    pr.mergeable_state = "clean"
    return 202, {"message": "Updating pull request branch."}


def combined_state(statuses: list[dict[str, Any]]) -> str:
    states = {s["state"] for s in statuses}
    if states & {"error", "failure"}:
        return "failure"
    if not statuses or "pending" in states:
        return "pending"
    return "success"
