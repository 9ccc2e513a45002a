"""A Hugging Face Hub on 127.0.0.1, enough for the real `huggingface_hub` client.

Implements what `hf_hub_download`, `snapshot_download` and `HfApi.repo_info` /
`list_repo_tree` ask for:

- `GET /api/{models|datasets}/{ns}/{name}[/revision/{rev}]`: repo info with `sha`;
- `GET /api/{type}s/{ns}/{name}/tree/{rev}[/{path}]?recursive=&expand=`: the tree, each
  file with `size`, `oid` (git blob sha1: of the content, or for an LFS file of its
  pointer file, as the Hub does) and, for LFS files, `lfs.oid` (the content's sha256);
- `HEAD|GET /[datasets/]{ns}/{name}/resolve/{rev}/{path}`: the file, with `ETag`
  (sha256 for LFS, git sha1 otherwise), `X-Repo-Commit`, `X-Linked-Size`/`X-Linked-Etag`
  for LFS files, and `Range` support;
- errors as the Hub sends them: 404 with `X-Error-Code: RepoNotFound | RevisionNotFound |
  EntryNotFound`.

`stall(path)` makes the next GET of that file send half its bytes and then wait until
`release()`, so a test can hold a real download in flight. Every request is logged.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit


def git_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class Repo:
    repo_id: str
    repo_type: str = "model"
    files: dict[str, bytes] = field(default_factory=dict)
    lfs: set[str] = field(default_factory=set)
    sha: str = ""

    def commit(self) -> str:
        digest = hashlib.sha1()
        for path in sorted(self.files):
            digest.update(path.encode() + b"\0" + git_sha1(self.files[path]).encode())
        self.sha = digest.hexdigest()
        return self.sha

    def entry(self, path: str) -> dict[str, Any]:
        data = self.files[path]
        rec: dict[str, Any] = {"type": "file", "path": path, "size": len(data)}
        rec["oid"] = git_sha1(data)
        if path in self.lfs:
            sha256 = hashlib.sha256(data).hexdigest()
            pointer = (
                f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha256}\n"
                f"size {len(data)}\n"
            ).encode()
            rec["oid"] = git_sha1(pointer)  # git stores the pointer, not the content
            rec["lfs"] = {"oid": sha256, "size": len(data), "pointerSize": len(pointer)}
        return rec


class FakeHub:
    def __init__(self) -> None:
        self.repos: dict[tuple[str, str], Repo] = {}
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        self._stalled: set[str] = set()
        self._release = threading.Event()
        self.stalling = threading.Event()  # set once a stalled download is in flight
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> FakeHub:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._release.set()
        self.server.shutdown()
        self.server.server_close()

    def add(
        self, repo_id: str, files: dict[str, bytes], *, repo_type: str = "model", lfs: Any = ()
    ) -> Repo:
        """Create or replace a repo; `lfs`: paths stored as LFS (or "*" for all)."""
        repo = Repo(repo_id, repo_type, dict(files))
        repo.lfs = set(files) if lfs == "*" else set(lfs)
        repo.commit()
        self.repos[(repo_type, repo_id)] = repo
        return repo

    def stall(self, path: str) -> None:
        self._stalled.add(path)

    def release(self) -> None:
        self._release.set()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_HEAD(self) -> None:
                hub._route(self, head=True)

            def do_GET(self) -> None:
                hub._route(self, head=False)

        return Handler

    # -- routing ---------------------------------------------------------------------
    def _route(self, h: BaseHTTPRequestHandler, *, head: bool) -> None:
        url = urlsplit(h.path)
        self.requests.append((h.command, h.path, dict(h.headers)))
        parts = [unquote(p) for p in url.path.strip("/").split("/")]
        query = parse_qs(url.query)
        try:
            if parts[:1] == ["api"] and len(parts) >= 4:
                self._api(h, parts[1:], query)
            elif "resolve" in parts:
                self._resolve(h, parts, head=head)
            else:
                self._error(h, 404, "", "not a route of this fake")
        except BrokenPipeError:
            pass

    def _repo(self, h: BaseHTTPRequestHandler, plural: str, ns: str, name: str) -> Repo | None:
        repo = self.repos.get((plural.rstrip("s"), f"{ns}/{name}"))
        if repo is None:
            self._error(h, 404, "RepoNotFound", f"Repository {ns}/{name} not found")
        return repo

    def _revision_ok(self, h: BaseHTTPRequestHandler, repo: Repo, rev: str) -> bool:
        if rev in ("main", repo.sha):
            return True
        self._error(h, 404, "RevisionNotFound", f"Invalid rev id: {rev}")
        return False

    def _api(
        self, h: BaseHTTPRequestHandler, parts: list[str], query: dict[str, list[str]]
    ) -> None:
        plural, ns, name, rest = parts[0], parts[1], parts[2], parts[3:]
        repo = self._repo(h, plural, ns, name)
        if repo is None:
            return
        if not rest or rest[0] == "revision":
            if rest and not self._revision_ok(h, repo, "/".join(rest[1:])):
                return
            info = {
                "id": repo.repo_id,
                "_id": repo.sha[:24],
                "sha": repo.sha,
                "private": False,
                "siblings": [{"rfilename": p} for p in sorted(repo.files)],
            }
            self._json(h, info, repo)
            return
        if rest[0] == "tree" and len(rest) >= 2:
            if not self._revision_ok(h, repo, rest[1]):
                return
            prefix = "/".join(rest[2:]).strip("/")
            recursive = query.get("recursive", ["false"])[0].lower() == "true"
            entries = self._tree(repo, prefix, recursive)
            if entries is None:
                self._error(h, 404, "EntryNotFound", f"{prefix} does not exist")
                return
            self._json(h, entries, repo)
            return
        self._error(h, 404, "", "unknown api route")

    def _tree(self, repo: Repo, prefix: str, recursive: bool) -> list[dict[str, Any]] | None:
        base = prefix + "/" if prefix else ""
        paths = sorted(p for p in repo.files if p.startswith(base))
        if prefix and not paths:
            return None
        out: list[dict[str, Any]] = []
        folders: set[str] = set()
        for path in paths:
            rel = path[len(base) :]
            dirs = rel.split("/")[:-1]
            for i in range(1, len(dirs) + 1):
                folder = base + "/".join(dirs[:i])
                if folder not in folders and (recursive or i == 1):
                    folders.add(folder)
                    out.append({"type": "directory", "path": folder, "oid": "0" * 40})
            if recursive or not dirs:
                out.append(repo.entry(path))
        return out

    def _resolve(self, h: BaseHTTPRequestHandler, parts: list[str], *, head: bool) -> None:
        plural = "models"
        if parts[0] in ("datasets", "spaces"):
            plural, parts = parts[0], parts[1:]
        i = parts.index("resolve")
        ns, name, rev, path = parts[0], parts[1], parts[i + 1], "/".join(parts[i + 2 :])
        repo = self._repo(h, plural, ns, name)
        if repo is None or not self._revision_ok(h, repo, rev):
            return
        if path not in repo.files:
            self._error(h, 404, "EntryNotFound", f"{path} not found", repo)
            return
        data = repo.files[path]
        entry = repo.entry(path)
        etag = entry["lfs"]["oid"] if "lfs" in entry else entry["oid"]
        start = 0
        rng = h.headers.get("Range", "")
        if rng.startswith("bytes=") and not head:
            start = int(rng[6:].split("-")[0] or 0)
        body = data[start:]
        h.send_response(206 if start else 200)
        h.send_header("ETag", f'"{etag}"')
        h.send_header("X-Repo-Commit", repo.sha)
        if "lfs" in entry:
            h.send_header("X-Linked-Etag", f'"{etag}"')
            h.send_header("X-Linked-Size", str(len(data)))
        if start:
            h.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        if head:
            return
        if path in self._stalled:
            self._stalled.discard(path)
            half = len(body) // 2
            h.wfile.write(body[:half])
            h.wfile.flush()
            self.stalling.set()
            self._release.wait(60)
            body = body[half:]
        h.wfile.write(body)

    def _json(self, h: BaseHTTPRequestHandler, obj: Any, repo: Repo | None = None) -> None:
        body = json.dumps(obj).encode()
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(body)))
        if repo is not None:
            h.send_header("X-Repo-Commit", repo.sha)
        h.end_headers()
        h.wfile.write(body)

    def _error(
        self, h: BaseHTTPRequestHandler, status: int, code: str, msg: str, repo: Repo | None = None
    ) -> None:
        body = json.dumps({"error": msg}).encode()
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(body)))
        if code:
            h.send_header("X-Error-Code", code)
            h.send_header("X-Error-Message", msg)
        if repo is not None:
            h.send_header("X-Repo-Commit", repo.sha)
        h.end_headers()
        h.wfile.write(body)
