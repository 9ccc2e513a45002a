"""scripts/corpus-fetch for the rl-health corpus, offline: the sha256 checks on local bytes,
and the whole script against a raw-file server on 127.0.0.1 (GitHub is never contacted)."""

from __future__ import annotations

import gzip
import hashlib
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from helpers import rl_corpus

fetcher = rl_corpus.fetcher
SCRIPT = rl_corpus.ROOT / "scripts" / "corpus-fetch"
COMMIT = "0123456789abcdef0123456789abcdef01234567"
LOG = b"".join(b"step:%d - actor/entropy:0.%03d - critic/score/mean:0.5\n" % (i, 900 - i)
               for i in range(300))  # fmt: skip
MD = b"# terminal\r\n{'loss': 0.0, 'reward': 0.5}\r\n" * 40


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_a_copy_verifies_only_when_its_content_is_the_cited_file(tmp_path: Path) -> None:
    spec = fetcher.RepoFile("run.log.gz", sha(LOG), len(LOG), repo="a/b", commit=COMMIT,
                            path="logs/run 1.log")  # fmt: skip
    assert spec.url() == f"https://raw.githubusercontent.com/a/b/{COMMIT}/logs/run%201.log"
    fetcher.verify(spec, LOG)
    for altered in (LOG[:-1], LOG.replace(b"0.5\n", b"0.6\n", 1), LOG + b"\n"):
        with pytest.raises(fetcher.CorpusError, match="the manifest cites"):
            fetcher.verify(spec, altered)
    assert not fetcher.present(spec, tmp_path)
    with pytest.raises(fetcher.CorpusError, match="missing"):
        fetcher.local_content(spec, tmp_path)
    stored = fetcher.encode(spec, LOG)  # .gz: stored compressed, reproducibly (mtime 0)
    assert stored == fetcher.encode(spec, LOG) and gzip.decompress(stored) == LOG
    (tmp_path / spec.file).write_bytes(stored)
    assert fetcher.present(spec, tmp_path)
    (tmp_path / spec.file).write_bytes(LOG)  # not gzip: unreadable, not a crash
    with pytest.raises(fetcher.CorpusError, match="unreadable"):
        fetcher.local_content(spec, tmp_path)


class RawFiles:
    """raw.githubusercontent.com's shape: GET /<owner>/<repo>/<commit>/<path>."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files
        self.requests: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                outer.requests.append(self.path)
                data = outer.files.get(self.path)
                self.send_response(200 if data is not None else 404)
                self.send_header("Content-Length", str(len(data or b"")))
                self.end_headers()
                self.wfile.write(data or b"")

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"


@pytest.fixture
def raw() -> Iterator[RawFiles]:
    server = RawFiles({f"/a/b/{COMMIT}/logs/run%201.log": LOG, f"/c/d/{COMMIT}/t.md": MD})
    thread = threading.Thread(target=server.server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.server.shutdown()
    server.server.server_close()


def manifest(tmp: Path, md_sha: str) -> Path:
    path = tmp / "MANIFEST.toml"
    path.write_text(f"""
[[case]]
file = "run.log.gz"
source = "https://github.com/a/b/blob/{COMMIT}/logs/run 1.log"
repo = "a/b"
commit = "{COMMIT}"
path = "logs/run 1.log"
source_sha256 = "{sha(LOG)}"
source_bytes = {len(LOG)}

[[case]]
file = "t.md"
repo = "c/d"
commit = "{COMMIT}"
path = "t.md"
source_sha256 = "{md_sha}"
source_bytes = {len(MD)}

[[case]]
file = "from_index.log"
index_id = "42"
sha256 = "{sha(b"x")}"
bytes = 1

[[case]]
file = "issue_excerpt.log"
source = "https://github.com/e/f/issues/1"
""")
    return path


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    cmd = [str(SCRIPT), "rl-health", *map(str, args)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)


def test_corpus_fetch_downloads_at_the_pinned_commit_and_verifies(
    tmp_path: Path, raw: RawFiles
) -> None:
    dest = tmp_path / "corpora"
    opts = ("--manifest", manifest(tmp_path, sha(MD)), "--dest", dest, "--base-url", raw.url)
    first = run(*opts)
    assert first.returncode == 0, first.stderr
    assert sorted(raw.requests) == [f"/a/b/{COMMIT}/logs/run%201.log", f"/c/d/{COMMIT}/t.md"]
    assert gzip.decompress((dest / "run.log.gz").read_bytes()) == LOG
    assert (dest / "t.md").read_bytes() == MD  # byte for byte, \r\n kept
    assert "2 written, 1 not downloadable" in first.stderr and "id 42" in first.stderr
    assert sorted(p.name for p in dest.iterdir()) == ["run.log.gz", "t.md"]  # no temp files

    again = run(*opts)  # verified copies are not downloaded again
    assert again.returncode == 0 and len(raw.requests) == 2 and "2 present" in again.stderr
    assert run("--check", *opts).returncode == 0

    (dest / "t.md").write_bytes(MD.replace(b"0.5", b"0.9"))  # a local copy edited by hand
    check = run("--check", *opts)
    assert check.returncode == 1 and "t.md" in check.stderr and "1 failed" in check.stderr
    assert run(*opts).returncode == 0 and (dest / "t.md").read_bytes() == MD  # re-downloaded


def test_a_changed_or_missing_upstream_file_is_refused(tmp_path: Path, raw: RawFiles) -> None:
    dest = tmp_path / "corpora"
    cited = manifest(tmp_path, sha(MD.upper()))  # the manifest cites other bytes than served
    res = run("--manifest", cited, "--dest", dest, "--base-url", raw.url)
    assert res.returncode == 1
    assert "t.md" in res.stderr and "the manifest cites" in res.stderr
    assert not (dest / "t.md").exists() and (dest / "run.log.gz").is_file()
    raw.files.clear()  # 404 for everything
    res = run("--manifest", cited, "--dest", tmp_path / "other", "--base-url", raw.url)
    assert res.returncode == 1 and "404" in res.stderr and "2 failed" in res.stderr
    bad = tmp_path / "bad.toml"
    bad.write_text("[[case]]\nfile = 'x'\nrepo = 'a/b'\n")  # no commit, no sha256
    assert run("--manifest", bad, "--dest", dest).returncode == 2


def test_the_committed_manifest_pins_every_repository_file() -> None:
    specs = fetcher.repo_files()
    assert len(specs) == 7
    for spec in specs:
        if spec.repo:
            assert spec.url() == (
                f"https://raw.githubusercontent.com/{spec.repo}/{spec.commit}/{spec.path}"
            )
            assert spec.file.endswith(".gz")  # kept compressed locally
        else:
            assert spec.index_id == "57020041687"
