"""A stateful fake GitHub (REST + GraphQL) on 127.0.0.1, for the real PyGithub client.

    with FakeGitHub() as gh:            # or FakeGitHub(prefix="/api/v3") for Enterprise
        repo = gh.repo("lab/trainer")
        gh.fail("PUT", r"/pulls/1/merge$", 403, "You have exceeded a secondary rate limit",
                headers={"Retry-After": "1"})
        ... point GITHUB_API_URL at gh.url ...
        assert gh.calls("PUT") == [...]

Every request is logged (method, path below the prefix, query, JSON body). Items' `url`
fields and Link headers are built from the server's own base, as PyGithub requires. The
token must be sent as `Authorization: token …` (or Bearer); anything else is a 401.
Faults answer the next N matching requests with a given status (optionally after doing
the real thing, as a 502 after a merge that landed would).
"""

from __future__ import annotations

import json
import re
import threading
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from fakes import github_state as st
from fakes.github_state import FakePR, FakeRepo, fake_sha

TOKEN = "ghp_" + "T0kenPlantedForTests" + "x" * 16
WRITE_METHODS = ("PUT", "PATCH", "DELETE")


@dataclass
class Req:
    method: str
    path: str
    query: dict[str, str]
    body: Any


@dataclass
class Fault:
    method: str
    path: re.Pattern[str]
    status: int
    body: dict[str, Any]
    headers: dict[str, str]
    times: int
    then_apply: bool = False  # do the real thing, then answer with the fault
    when: str = ""  # only requests whose JSON body contains this


@dataclass
class FakeGitHub:
    prefix: str = ""
    viewer: str = "labctl-bot"
    repos: dict[str, FakeRepo] = field(default_factory=dict)
    renames: dict[str, str] = field(default_factory=dict)
    log: list[Req] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    down: set[str] = field(default_factory=set)  # repos whose every request answers 503

    def __post_init__(self) -> None:
        self.lock = threading.RLock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.origin = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.url = self.origin + self.prefix
        self.graphql_path = (self.prefix[: -len("/v3")] if self.prefix else "") + "/graphql"

    def __enter__(self) -> FakeGitHub:
        serve = lambda: self.server.serve_forever(poll_interval=0.02)  # noqa: E731
        threading.Thread(target=serve, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    # -- set-up --------------------------------------------------------------------------
    def repo(self, full_name: str, **kw: Any) -> FakeRepo:
        repo = FakeRepo(full_name=full_name, id=len(self.repos) + 100, **kw)
        self.repos[full_name.lower()] = repo
        return repo

    def rename(self, old: str, new: str) -> None:
        self.renames[old.lower()] = new.lower()

    def fail(
        self,
        method: str,
        path: str,
        status: int,
        message: str = "",
        *,
        headers: dict[str, str] | None = None,
        times: int = 1,
        then_apply: bool = False,
        body: dict[str, Any] | None = None,
        when: str = "",
    ) -> None:
        body = body if body is not None else {"message": message} if message else {}
        self.faults.append(
            Fault(method, re.compile(path), status, body, headers or {}, times, then_apply, when)
        )

    # -- what the server saw -------------------------------------------------------------
    def calls(self, method: str, path: str = "") -> list[Req]:
        return [r for r in self.log if r.method == method and re.search(path, r.path)]

    def writes(self) -> list[Req]:
        """Every request that could change GitHub: PUT/PATCH/DELETE, and POSTs other than
        GraphQL queries (an approval, a GraphQL mutation)."""
        out = [r for r in self.log if r.method in WRITE_METHODS]
        for r in self.log:
            if r.method == "POST":
                query = (r.body or {}).get("query", "") if isinstance(r.body, dict) else ""
                if r.path != self.graphql_path or "mutation" in query:
                    out.append(r)
        return out

    # -- answering -------------------------------------------------------------------------
    def find(self, owner: str, name: str) -> FakeRepo | None:
        return self.repos.get(f"{owner}/{name}".lower())

    def answer(self, req: Req) -> tuple[int, Any, dict[str, str]]:
        with self.lock:
            self.log.append(req)
            for fault in self.faults:
                if (
                    fault.times > 0
                    and fault.method == req.method
                    and fault.path.search(req.path)
                    and fault.when in json.dumps(req.body)
                ):
                    fault.times -= 1
                    if fault.then_apply:
                        self.route(req)
                    return fault.status, fault.body, fault.headers
            return self.route(req)

    def route(self, req: Req) -> tuple[int, Any, dict[str, str]]:
        if req.method == "POST" and req.path == self.graphql_path:
            return 200, self.graphql(req.body or {}), {}
        if not req.path.startswith(self.prefix + "/"):
            return 404, {"message": "Not Found"}, {}
        path = req.path[len(self.prefix) :]
        m = re.match(r"^/repositories/(\d+)$", path)
        if m:
            repo = next((r for r in self.repos.values() if r.id == int(m[1])), None)
            return (200, st.repo_json(repo, self.url), {}) if repo else (404, NOT_FOUND, {})
        m = re.match(r"^/repos/([^/]+)/([^/]+)(/.*)?$", path)
        if not m:
            return 404, NOT_FOUND, {}
        if f"{m[1]}/{m[2]}".lower() in self.down:
            return 503, {"message": "Service Unavailable"}, {}
        renamed = self.renames.get(f"{m[1]}/{m[2]}".lower())
        if renamed and not m[3]:
            target = self.repos[renamed]
            return (
                301,
                {"message": "Moved Permanently"},
                {"Location": f"{self.url}/repositories/{target.id}"},
            )
        repo = self.find(m[1], m[2])
        if repo is None:
            return 404, NOT_FOUND, {}
        from fakes.github_routes import repo_route

        return repo_route(self, repo, req, m[3] or "")

    def graphql(self, body: dict[str, Any]) -> dict[str, Any]:
        query, var = body.get("query", ""), body.get("variables") or {}
        if "mutation" in query:
            return {"errors": [{"message": "this fake answers queries only"}]}
        repo = self.find(var.get("owner", ""), var.get("name", ""))
        pr = repo.pulls.get(int(var.get("number", 0))) if repo else None
        if repo is None or pr is None:
            return {"data": None, "errors": [{"type": "NOT_FOUND", "message": "no such PR"}]}
        if "isMergeQueueEnabled" in query:
            node = {"isMergeQueueEnabled": repo.merge_queue}
            return {"data": {"repository": {"pullRequest": node}}}
        rule = {"requiresCodeOwnerReviews": repo.code_owners}
        node: dict[str, Any] = {"reviewDecision": pr.review_decision}
        if "branchProtectionRule" in query:  # only what was asked for
            node["baseRef"] = {"branchProtectionRule": rule}
        return {"data": {"viewer": {"login": self.viewer}, "repository": {"pullRequest": node}}}


NOT_FOUND = {"message": "Not Found"}


def _handler(gh: FakeGitHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            parsed = urllib.parse.urlsplit(self.path)
            query = dict(urllib.parse.parse_qsl(parsed.query))
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            body = json.loads(raw) if raw else None
            auth = self.headers.get("Authorization", "")
            if auth not in (f"token {TOKEN}", f"Bearer {TOKEN}"):
                return self._send(401, {"message": "Bad credentials"}, {})
            status, data, headers = gh.answer(Req(self.command, parsed.path, query, body))
            self._send(status, data, headers)

        do_GET = do_PUT = do_PATCH = do_POST = do_DELETE = _serve

        def _send(self, status: int, data: Any, headers: dict[str, str]) -> None:
            raw = json.dumps(data).encode() if data is not None else b""
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(raw)))
            for key, value in headers.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(raw)

        def log_message(self, *args: Any) -> None:
            pass

    return Handler


__all__ = ["TOKEN", "FakeGitHub", "FakePR", "FakeRepo", "fake_sha"]
