"""The fake GitHub's REST routes below /repos/{owner}/{name}."""

from __future__ import annotations

import re
import urllib.parse
from typing import TYPE_CHECKING, Any

from fakes import github_state as st

if TYPE_CHECKING:
    from fakes.github import FakeGitHub, Req
    from fakes.github_state import FakeRepo

Answer = tuple[int, Any, dict[str, str]]
NOT_FOUND: Answer = (404, {"message": "Not Found"}, {})


def paginate(gh: FakeGitHub, req: Req, items: list[Any]) -> tuple[list[Any], dict[str, str]]:
    """GitHub's paging: per_page (default 30, at most 100), page, and a Link header."""
    per_page = min(int(req.query.get("per_page", 30)), 100)
    page = int(req.query.get("page", 1))
    last = max(1, -(-len(items) // per_page))
    links = []
    for rel, number in (("next", page + 1), ("last", last)):
        if page < last:
            query = urllib.parse.urlencode({**req.query, "per_page": per_page, "page": number})
            links.append(f'<{gh.origin}{req.path}?{query}>; rel="{rel}"')
    headers = {"Link": ", ".join(links)} if links else {}
    return items[(page - 1) * per_page : page * per_page], headers


def repo_route(gh: FakeGitHub, repo: FakeRepo, req: Req, tail: str) -> Answer:
    if tail == "":
        return 200, st.repo_json(repo, gh.url), {}
    if tail == "/pulls" and req.method == "GET":
        return list_pulls(gh, repo, req)
    m = re.match(r"^/pulls/(\d+)(/merge|/reviews|/update-branch)?$", tail)
    if m:
        pr = repo.pulls.get(int(m[1]))
        return pull_route(gh, repo, pr, req, m[2] or "") if pr else NOT_FOUND
    m = re.match(r"^/issues/(\d+)/events$", tail)
    if m and req.method == "GET":
        pr = repo.pulls.get(int(m[1]))
        if pr is None:
            return NOT_FOUND
        page, headers = paginate(gh, req, st.event_json(repo, pr, gh.url))
        return 200, page, headers
    m = re.match(r"^/commits/([0-9a-f]+)$", tail)
    if m and req.method == "GET":
        url = f"{gh.url}/repos/{repo.full_name}/commits/{m[1]}"
        return 200, {"sha": m[1], "url": url, "commit": {"message": "work"}}, {}
    m = re.match(r"^/commits/([0-9a-f]+)/(check-runs|status|check-suites)$", tail)
    if m and req.method == "GET":
        return commit_route(gh, repo, req, m[1], m[2])
    m = re.match(r"^/git/refs/heads/(.+)$", tail)
    if m and req.method == "DELETE":
        for child in repo.pulls.values():  # what a separate branch deletion does
            if child.state == "open" and child.base == m[1]:
                child.state = "closed"
        return 204, None, {}
    return NOT_FOUND


def list_pulls(gh: FakeGitHub, repo: FakeRepo, req: Req) -> Answer:
    state = req.query.get("state", "open")
    head = req.query.get("head")
    pulls = [
        pr
        for pr in sorted(repo.pulls.values(), key=lambda p: p.number)
        if (state == "all" or pr.state == state)
        and (head is None or head == f"{(pr.head_repo or repo.full_name).split('/')[0]}:{pr.head}")
        and req.query.get("base") in (None, pr.base)
    ]
    page, headers = paginate(gh, req, [st.pr_json(repo, pr, gh.url, single=False) for pr in pulls])
    return 200, page, headers


def pull_route(gh: FakeGitHub, repo: FakeRepo, pr: st.FakePR, req: Req, tail: str) -> Answer:
    body = req.body or {}
    if tail == "" and req.method == "GET":
        return 200, st.pr_json(repo, pr, gh.url, single=True), {}
    if tail == "" and req.method == "PATCH":
        refused = st.retarget(repo, pr, body["base"]) if "base" in body else None
        return (*refused, {}) if refused else (200, st.pr_json(repo, pr, gh.url, single=True), {})
    if tail == "/merge" and req.method == "PUT":
        return (*st.merge(repo, pr, body), {})
    if tail == "/reviews" and req.method == "POST":
        return (*st.approve(pr, body, gh.viewer), {})
    if tail == "/update-branch" and req.method == "PUT":
        return (*st.update_branch(pr, body.get("expected_head_sha")), {})
    return NOT_FOUND


def commit_route(gh: FakeGitHub, repo: FakeRepo, req: Req, sha: str, what: str) -> Answer:
    if what == "check-runs":
        runs = [
            {
                "id": i + 1,
                "name": run["name"],
                "head_sha": sha,
                "status": run["status"],
                "conclusion": run["conclusion"],
                "started_at": run.get("started_at"),
                "completed_at": run.get("completed_at"),
                "url": f"{gh.url}/repos/{repo.full_name}/check-runs/{i + 1}",
            }
            for i, run in enumerate(repo.runs.get(sha, []))
        ]
        page, headers = paginate(gh, req, runs)
        total = len(runs) + repo.runs_total_bonus
        return 200, {"total_count": total, "check_runs": page}, headers
    if what == "check-suites":
        suites = repo.suites.get(sha, [])
        return 200, {"total_count": len(suites), "check_suites": suites}, {}
    statuses = repo.statuses.get(sha, [])
    page, headers = paginate(gh, req, statuses)
    body = {
        "state": st.combined_state(statuses),
        "sha": sha,
        "total_count": len(statuses),
        "statuses": page,
    }
    return 200, body, headers
