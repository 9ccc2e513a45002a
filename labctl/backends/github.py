"""GitHub through PyGithub: the reads and writes merge-green makes, as plain data.

The client is configured on purpose (PyGithub 2.x):
- `retry` is a urllib3 `Retry` that re-sends only GET, only after a 5xx or a connection
  error, with a short backoff. PyGithub's default `GithubRetry` also re-sends a merge PUT
  answered 502 and sleeps inside urllib3 for whatever Retry-After or reset the server
  names; here a rate limit is never retried by the library: it surfaces as `RateLimited`
  (with the wait GitHub asked for) so the caller waits a bounded time and, after a write,
  re-reads the PR before deciding anything.
- `seconds_between_requests` / `seconds_between_writes` pace the calls (GitHub asks for
  at least a second between mutations); `per_page=100`; `lazy=True` (no request until a
  value is read).
- A merge never deletes the head branch (`delete_branch=True` would close stacked
  children); nothing here deletes anything.

Every PyGithub, requests and urllib3 error becomes one of labctl.backends.github_errors
(`GitHubError`, `RateLimited`, `Unreachable`, `AuthFailed`); no message carries a header
or the token.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from labctl.backends.github_errors import (
    AuthFailed,
    GitHubError,
    RateLimited,
    Unreachable,
    translate,
)
from labctl.backends.github_model import (
    Check,
    Pull,
    RepoInfo,
    Review,
    checks_from,
    instant,
    pull_from,
)

__all__ = [
    "AuthFailed",
    "Check",
    "ClientOptions",
    "GitHub",
    "GitHubError",
    "Pull",
    "RateLimited",
    "RepoInfo",
    "Review",
    "Unreachable",
]

# Code-owner rules need more permission to read than the review decision: without it the
# query is asked again without them.
CODE_OWNERS = "baseRef { branchProtectionRule { requiresCodeOwnerReviews } }"
REVIEW_QUERY = """
query($owner: String!, $name: String!, $number: Int!) {
  viewer { login }
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) { reviewDecision CODE_OWNERS }
  }
}
"""

# Issue events that change a PR's base: a PATCH (anyone's), or GitHub's own retarget when
# the parent's branch is deleted on merge.
BASE_CHANGES = frozenset({"base_ref_changed", "automatic_base_change_succeeded"})

# A separate query: older GitHub Enterprise servers lack the field (then: unknown).
MERGE_QUEUE_QUERY = """
query($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) { pullRequest(number: $number) { isMergeQueueEnabled } }
}
"""


@dataclass
class ClientOptions:
    token: str
    api_url: str
    timeout_s: float = 30.0
    request_interval_s: float = 0.25
    write_interval_s: float = 1.0


def _retry() -> Any:
    from urllib3.util.retry import Retry

    return Retry(
        total=2,
        backoff_factor=0.5,
        status_forcelist=(500, 502, 503, 504),
        allowed_methods=frozenset({"GET"}),
        respect_retry_after_header=False,
        raise_on_status=False,
    )


class GitHub:
    """One client for one run; methods take the repo's canonical `owner/name`."""

    def __init__(self, options: ClientOptions, clock: Callable[[], float]) -> None:
        from github import Auth, Github

        self.options = options
        self.clock = clock
        self.client = Github(
            auth=Auth.Token(options.token) if options.token else None,
            base_url=options.api_url.rstrip("/"),
            timeout=max(1, round(options.timeout_s)),
            user_agent="labctl-merge-green",
            per_page=100,
            retry=_retry(),
            seconds_between_requests=options.request_interval_s or None,
            seconds_between_writes=options.write_interval_s or None,
            lazy=True,
        )

    def close(self) -> None:
        self.client.close()

    @contextmanager
    def _errors(self, what: str) -> Iterator[None]:
        import requests
        from github import GithubException

        try:
            yield
        except GithubException as exc:
            status = int(exc.status or 0)
            raise translate(status, exc.data, exc.headers, what, self.clock()) from None
        except requests.exceptions.RequestException as exc:
            raise Unreachable(None, f"{what}: {type(exc).__name__}") from None
        except OSError as exc:
            raise Unreachable(None, f"{what}: {exc.strerror or type(exc).__name__}") from None

    def _repo(self, name: str) -> Any:
        return self.client.get_repo(name)

    def _url(self, name: str, tail: str) -> str:
        return f"{self._repo(name).url}{tail}"

    # -- reads -------------------------------------------------------------------------
    def repo(self, name: str) -> RepoInfo:
        with self._errors(f"GET repo {name}"):
            raw = self._repo(name).raw_data
        parent = raw.get("parent") or {}
        return RepoInfo(
            full_name=str(raw.get("full_name") or ""),
            default_branch=str(raw.get("default_branch") or "main"),
            archived=bool(raw.get("archived")),
            parent=parent.get("full_name"),
        )

    def open_pulls(self, name: str) -> list[Pull]:
        with self._errors(f"list open PRs of {name}"):
            items = self._repo(name).get_pulls(state="open", sort="created", direction="asc")
            return [pull_from(p._rawData) for p in items]

    def merged_pull_with_head(self, name: str, owner: str, branch: str) -> Pull | None:
        """The merged PR whose head was `branch` (an orphaned stack's former parent)."""
        with self._errors(f"list closed PRs of {name} with head {branch}"):
            items = self._repo(name).get_pulls(state="closed", head=f"{owner}:{branch}")
            for item in items:
                pull = pull_from(item._rawData)
                if pull.merged_at:
                    return pull
        return None

    def pull(self, name: str, number: int) -> Pull:
        """A fresh single-PR read (the only read that carries `mergeable`)."""
        with self._errors(f"GET PR {name}#{number}"):
            _, data = self.client.requester.requestJsonAndCheck(
                "GET", self._url(name, f"/pulls/{number}")
            )
        return pull_from(data)

    def base_changed_at(self, name: str, number: int) -> str | None:
        """When the PR's base branch last changed (GitHub's ISO timestamp); None: never.
        Its issue events (`GET /issues/N/events`, oldest first), every page."""
        latest: tuple[datetime, str] | None = None
        with self._errors(f"list the events of {name}#{number}"):
            for event in self._repo(name).get_issue(number).get_events():
                raw = event._rawData
                when = instant(raw.get("created_at"))
                if raw.get("event") in BASE_CHANGES and when and (not latest or when > latest[0]):
                    latest = (when, str(raw["created_at"]))
        return latest[1] if latest else None

    def check_runs(self, name: str, sha: str) -> tuple[list[Check], int]:
        """Every check run on the commit (all pages) and GitHub's total_count."""
        with self._errors(f"list check runs of {name}@{sha[:12]}"):
            runs = self._repo(name).get_commit(sha).get_check_runs()
            items = [r._rawData for r in runs]
            total = runs.totalCount if items else 0
        return checks_from(items, "check_run"), int(total or 0)

    def statuses(self, name: str, sha: str) -> tuple[list[Check], int]:
        """The latest commit status per context (all pages of the combined status)."""
        out: list[dict[str, Any]] = []
        total = 0
        with self._errors(f"read commit statuses of {name}@{sha[:12]}"):
            for page in range(1, 51):
                _, data = self.client.requester.requestJsonAndCheck(
                    "GET",
                    self._url(name, f"/commits/{sha}/status"),
                    parameters={"per_page": 100, "page": page},
                )
                batch = list(data.get("statuses") or [])
                total = int(data.get("total_count") or 0)
                out += batch
                if not batch or len(out) >= total:
                    break
        return checks_from(out, "status"), total

    def _graphql(
        self, query: str, name: str, number: int, *, optional: bool = False
    ) -> dict[str, Any] | None:
        """A GraphQL query about one PR; optional: None when the server refuses the
        query itself (a field it lacks, one the token may not read)."""
        owner, repo = name.split("/", 1)
        variables = {"owner": owner, "name": repo, "number": number}
        try:
            with self._errors(f"query GitHub about {name}#{number}"):
                _, data = self.client.requester.graphql_query(query, variables)
        except RateLimited:
            raise
        except GitHubError as exc:
            if optional and exc.status in (400, 403, 404):
                return None
            raise
        return dict(data.get("data") or {})

    def review(self, name: str, number: int) -> Review:
        full = REVIEW_QUERY.replace("CODE_OWNERS", CODE_OWNERS)
        root = self._graphql(full, name, number, optional=True)
        if root is None:
            root = self._graphql(REVIEW_QUERY.replace("CODE_OWNERS", ""), name, number) or {}
        pr = ((root.get("repository") or {}).get("pullRequest")) or {}
        rule = (pr.get("baseRef") or {}).get("branchProtectionRule") or {}
        return Review(
            decision=pr.get("reviewDecision"),
            viewer=(root.get("viewer") or {}).get("login"),
            code_owners=bool(rule.get("requiresCodeOwnerReviews")),
        )

    def merge_queue(self, name: str, number: int) -> bool | None:
        """Does the PR's base branch require the merge queue? None: this server cannot say."""
        root = self._graphql(MERGE_QUEUE_QUERY, name, number, optional=True)
        if root is None:
            return None
        return ((root.get("repository") or {}).get("pullRequest") or {}).get("isMergeQueueEnabled")

    # -- writes (never retried here) -----------------------------------------------------
    def approve(self, name: str, number: int, sha: str) -> None:
        body = {"event": "APPROVE", "commit_id": sha, "body": f"labctl: green at {sha}"}
        with self._errors(f"approve {name}#{number}"):
            self.client.requester.requestJsonAndCheck(
                "POST", self._url(name, f"/pulls/{number}/reviews"), input=body
            )

    def merge(self, name: str, number: int, sha: str, method: str) -> str | None:
        """Merge exactly `sha` (GitHub answers 409 if the head moved); the merge commit."""
        with self._errors(f"merge {name}#{number}"):
            status = self._repo(name).get_pull(number).merge(sha=sha, merge_method=method)
            return str(status.sha) if status.sha else None

    def retarget(self, name: str, number: int, base: str) -> None:
        with self._errors(f"retarget {name}#{number} to {base}"):
            self._repo(name).get_pull(number).edit(base=base)

    def update_branch(self, name: str, number: int, sha: str) -> None:
        with self._errors(f"update the branch of {name}#{number}"):
            self.client.requester.requestJsonAndCheck(
                "PUT",
                self._url(name, f"/pulls/{number}/update-branch"),
                input={"expected_head_sha": sha},
            )
