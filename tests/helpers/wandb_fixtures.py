"""W&B test fixtures shared by test modules: a fake GraphQL server for the real `wandb`
client (WANDB_BASE_URL points at it) and helpers for offline runs written by the client."""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from labctl.progress.wandb_file import read_wandb_file

KEY = "k" * 40


class FakeWandb:
    def __init__(self) -> None:
        self.runs: list[dict[str, Any]] = []
        self.queries: list[tuple[str, dict[str, Any]]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path != "/graphql":  # wandb-core's telemetry: accept, ignore
                    return self._send(200, b"")
                auth = self.headers.get("Authorization", "")
                expected = "Basic " + base64.b64encode(f"api:{KEY}".encode()).decode()
                if auth != expected:
                    return self._send(401, b'{"errors": [{"message": "unauthorized"}]}')
                req = json.loads(body)
                query = req.get("query", "")
                fake.queries.append((query, req.get("variables") or {}))
                self._send(200, json.dumps({"data": fake.answer(query)}).encode())

            def do_GET(self) -> None:
                self._send(404, b"")

            def _send(self, code: int, data: bytes) -> None:
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def answer(self, query: str) -> dict[str, Any]:
        if "viewer" in query:
            return {"viewer": {"id": "v1", "entity": "ent", "username": "alice", "email": "",
                               "flags": "{}", "teams": {"edges": []}}}  # fmt: skip
        if "query Runs" in query:
            edges = [{"node": {"projectId": 1, **run}, "cursor": f"c{i}"}
                     for i, run in enumerate(self.runs)]  # fmt: skip
            page = {"endCursor": "c", "hasNextPage": False}
            runs = {"edges": edges, "pageInfo": page}
            return {"project": {"internalId": "p1", "runCount": len(edges), "readOnly": False,
                                "runs": runs}}  # fmt: skip
        return {}


def api_run(run_id: str, name: str, lines: int, state: str = "running") -> dict[str, Any]:
    now = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())
    return {"id": f"storage-{run_id}", "name": run_id, "displayName": name, "tags": [],
            "sweepName": None, "state": state, "group": None, "jobType": None, "commit": None,
            "readOnly": False, "createdAt": now, "heartbeatAt": now, "description": None,
            "notes": None, "historyLineCount": lines,
            "user": {"name": "alice", "username": "alice"}}  # fmt: skip


@contextmanager
def serving(server: FakeWandb) -> Iterator[FakeWandb]:
    """Serve the fake on 127.0.0.1 for the duration of the block."""
    thread = threading.Thread(target=server.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.server.shutdown()


def start_run(root: Path) -> Any:
    import wandb

    settings = wandb.Settings(x_transaction_log_flush_interval=0.5)
    return wandb.init(mode="offline", dir=root, project="labctl-test", settings=settings)


def wait_for(path: Path, done: Any, timeout: float = 60.0) -> Any:
    """wandb-core writes asynchronously (even after finish() returns): poll the file, bounded."""
    deadline = time.monotonic() + timeout
    while True:
        progress = read_wandb_file(path) if path.exists() else None
        if progress is not None and done(progress):
            return progress
        if time.monotonic() > deadline:
            raise AssertionError(f"the run file never got there: {progress}")
        time.sleep(0.1)


def run_file(root: Path) -> Path:
    files = list((root / "wandb").glob("*run-*/run-*.wandb"))
    assert len(files) == 1, files
    return files[0]
