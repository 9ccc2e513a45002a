"""scripts/corpus-fetch: rebuilding a corpus's copied log files from their cited sources.

Offline: the trimming and masking rules on local bytes, the sha256 checks, and the whole
script against a raw-file server on 127.0.0.1 (the real GitHub host is never contacted)."""

from __future__ import annotations

import hashlib
import importlib.util
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("corpus_fetch", ROOT / "scripts" / "corpus_fetch.py")
assert _spec is not None and _spec.loader is not None
cf = importlib.util.module_from_spec(_spec)
sys.modules["corpus_fetch"] = cf
_spec.loader.exec_module(cf)

COMMIT = "0123456789abcdef0123456789abcdef01234567"
LOG = b"".join(b"epoch %d step %d loss 0.%03d\n" % (i // 10, i, 999 - i) for i in range(50))
LOG += b"export WANDB_API_KEY=abc123notarealkey\r\ntail line with a carriage return\rlast\n"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def spec_for(source: bytes, *, head: int = 5, tail: int = 3, **over: Any) -> Any:
    masks = (("(WANDB_API_KEY=)\\S+", "\\1***MASKED***"),)
    out = cf.mask(cf.trim(source, head, tail), masks)
    fields = {
        "corpus": "corpusX",
        "case": "case-a",
        "name": "slurm-1.out",
        "repo": "someone/some-repo",
        "path": "logs/run 1/slurm-1.out",
        "commit": COMMIT,
        "source_sha256": sha(source),
        "source_bytes": len(source),
        "sha256": sha(out),
        "bytes": len(out),
        "trim": (head, tail),
        "masks": masks,
    }
    fields.update(over)
    return cf.FileSpec(**fields)


def test_trim_keeps_head_and_tail_lines_and_counts_the_rest() -> None:
    data = b"a\nb\r\nc\rd\ne\nf"
    assert cf.trim(data, 1, 2) == b"a\n[... 3 lines trimmed for the corpus ...]\ne\nf"
    # \r\n, \r and \n each end one line, and line endings are kept byte for byte
    assert cf.trim(data, 2, 1) == b"a\nb\r\n[... 3 lines trimmed for the corpus ...]\nf"
    assert cf.trim(data, 3, 3) == data  # nothing to cut: the file stays whole


def test_mask_replaces_only_the_secret() -> None:
    out = cf.mask(LOG, (("(WANDB_API_KEY=)\\S+", "\\1***MASKED***"),))
    assert b"abc123notarealkey" not in out
    assert b"export WANDB_API_KEY=***MASKED***\r\n" in out
    assert len(out.splitlines()) == len(LOG.splitlines())


def test_derive_checks_the_source_and_the_result() -> None:
    spec = spec_for(LOG)
    out = cf.derive(spec, LOG)
    assert sha(out) == spec.sha256 and b"lines trimmed for the corpus" in out
    with pytest.raises(cf.CorpusError, match="is not the one cited"):
        cf.derive(spec, LOG + b"one more line\n")  # the repository file changed
    wrong = spec_for(LOG, sha256="0" * 64)
    with pytest.raises(cf.CorpusError, match="trimming/masking gave"):
        cf.derive(wrong, LOG)  # a recorded edit that does not reproduce the copy


def test_raw_url_pins_the_commit_and_quotes_the_path() -> None:
    url = cf.raw_url("https://raw.example/", spec_for(LOG))
    assert url == f"https://raw.example/someone/some-repo/{COMMIT}/logs/run%201/slurm-1.out"


def _manifest(path: Path, spec: Any, excerpt_sha: str) -> None:
    head, tail = spec.trim
    path.parent.mkdir(parents=True)
    path.write_text(
        f"""[[case]]
id = "{spec.case}"
category = "healthy"
failed = false

[[case.file]]
name = "{spec.name}"
repo = "{spec.repo}"
path = "{spec.path}"
commit = "{spec.commit}"
source_sha256 = "{spec.source_sha256}"
source_bytes = {spec.source_bytes}
trim = {{ head = {head}, tail = {tail} }}
mask = [{{ pattern = '(WANDB_API_KEY=)\\S+', replacement = '\\1***MASKED***' }}]
sha256 = "{spec.sha256}"
bytes = {spec.bytes}

[[case.file]]
name = "issue.log"
url = "https://github.com/someone/some-repo/issues/1"
sha256 = "{excerpt_sha}"
bytes = 3
""",
        encoding="utf-8",
    )


@pytest.fixture
def raw_server() -> Iterator[tuple[str, dict[str, bytes], list[str]]]:
    files: dict[str, bytes] = {}
    asked: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            asked.append(self.path)
            body = files.get(self.path)
            self.send_response(200 if body is not None else 404)
            self.end_headers()
            self.wfile.write(body or b"404: Not Found")

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", files, asked
    finally:
        server.shutdown()
        server.server_close()


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, str(ROOT / "scripts" / "corpus_fetch.py")]
    cmd += ["--fixtures", str(tmp_path / "fixtures"), "--dest", str(tmp_path / "corpora")]
    cmd += ["--sources", str(tmp_path / "sources"), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)


def test_the_script_downloads_verifies_trims_and_caches(
    tmp_path: Path, raw_server: tuple[str, dict[str, bytes], list[str]]
) -> None:
    base, files, asked = raw_server
    spec = spec_for(LOG)
    _manifest(tmp_path / "fixtures" / "corpusX" / "manifest.toml", spec, sha(b"xyz"))
    url_path = f"/someone/some-repo/{COMMIT}/logs/run%201/slurm-1.out"
    dest = tmp_path / "corpora" / "corpusX" / "cases" / "case-a" / "slurm-1.out"

    assert _run(tmp_path, "--check").returncode == 1  # nothing there yet
    files[url_path] = LOG + b"changed upstream\n"
    r = _run(tmp_path, "--base-url", base)
    assert r.returncode == 1 and "is not the one cited" in r.stderr
    assert not dest.exists()  # a source that does not verify is never written or cached

    files[url_path] = LOG
    r = _run(tmp_path, "--base-url", base)
    assert r.returncode == 0, r.stderr
    assert "1 written" in r.stderr and asked.count(url_path) == 2
    assert sha(dest.read_bytes()) == spec.sha256
    assert b"abc123notarealkey" not in dest.read_bytes()
    assert (tmp_path / "sources" / "someone/some-repo" / COMMIT / spec.path).read_bytes() == LOG

    assert "1 present" in _run(tmp_path, "--base-url", base).stderr
    dest.write_bytes(b"tampered\n")
    r = _run(tmp_path, "--offline")  # rebuilt from the cache, without the network
    assert r.returncode == 0 and "1 written" in r.stderr and asked.count(url_path) == 2
    assert _run(tmp_path, "--check").returncode == 0


def test_offline_without_a_cached_source_fails_clearly(tmp_path: Path) -> None:
    spec = spec_for(LOG)
    _manifest(tmp_path / "fixtures" / "corpusX" / "manifest.toml", spec, sha(b"xyz"))
    r = _run(tmp_path, "--offline")
    assert r.returncode == 1 and "not in the source cache" in r.stderr
    assert _run(tmp_path, "--corpus", "nope").returncode == 2
