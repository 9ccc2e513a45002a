#!/usr/bin/env python3
"""Download the rl-health corpus's repository files into corpora/ and verify their sha256.

    scripts/corpus-fetch rl-health            # download what is missing, verify everything
    scripts/corpus-fetch rl-health --check    # verify the local copies only; download nothing

labctl commits only its own writing about the real RL logs it is scored on
(tests/fixtures/rl_health/real/MANIFEST.toml: labels, citations, notes; and issue-thread
excerpts written by hand). A case citing a repository file (`repo`, `commit`, `path`) is
downloaded from `<base-url>/<repo>/<commit>/<path>` (raw.githubusercontent.com unless
--base-url or CORPUS_FETCH_RAW_URL says otherwise), checked against the manifest's
`source_sha256` and `source_bytes`, and written atomically to
corpora/rl_health/real/<file> (gzip-compressed, mtime 0, when the name ends in .gz).
A case read from the public repository index (`index_id`) names no repository: it cannot be
downloaded, only checked against `sha256`/`bytes` when a copy is present.

Exit 0 when every downloadable file is present and verified, 1 when one is missing or does
not verify (each named on stderr), 2 on bad arguments or an unreadable manifest.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import os
import sys
import tempfile
import tomllib
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = ROOT / "tests" / "fixtures" / "rl_health" / "real" / "MANIFEST.toml"
DEST = ROOT / "corpora" / "rl_health" / "real"
RAW = "https://raw.githubusercontent.com"


class CorpusError(Exception):
    """A file that is missing, cannot be downloaded, or is not the one the manifest cites."""


@dataclass(frozen=True)
class RepoFile:
    """One case whose file came from a repository, as the manifest records it."""

    file: str
    sha256: str  # of the content (decompressed when the local name ends in .gz)
    size: int
    repo: str | None = None
    commit: str | None = None
    path: str | None = None
    index_id: str | None = None

    def url(self, base: str = RAW) -> str:
        assert self.repo and self.commit and self.path, self
        quoted = urllib.parse.quote(self.path, safe="/")
        return f"{base.rstrip('/')}/{self.repo}/{self.commit}/{quoted}"


def repo_files(manifest: Path = MANIFEST) -> list[RepoFile]:
    """The manifest's cases that are not committed (issue excerpts are: not listed)."""
    out = []
    for case in tomllib.loads(manifest.read_text(encoding="utf-8"))["case"]:
        if "repo" in case:
            out.append(
                RepoFile(case["file"], case["source_sha256"], case["source_bytes"],
                         repo=case["repo"], commit=case["commit"], path=case["path"])
            )  # fmt: skip
        elif "index_id" in case:
            out.append(
                RepoFile(case["file"], case["sha256"], case["bytes"], index_id=case["index_id"])
            )
    return out


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def verify(spec: RepoFile, content: bytes) -> None:
    """Raise CorpusError unless `content` is the file the manifest cites."""
    if len(content) != spec.size or sha256(content) != spec.sha256:
        raise CorpusError(
            f"{spec.file}: {len(content)} bytes, sha256 {sha256(content)[:16]}…; the manifest "
            f"cites {spec.size} bytes, sha256 {spec.sha256[:16]}…"
        )


def encode(spec: RepoFile, content: bytes) -> bytes:
    return gzip.compress(content, mtime=0) if spec.file.endswith(".gz") else content


def local_content(spec: RepoFile, dest: Path = DEST) -> bytes:
    """The local copy's content (decompressed for .gz names); CorpusError when absent."""
    path = dest / spec.file
    try:
        data = path.read_bytes()
        return gzip.decompress(data) if spec.file.endswith(".gz") else data
    except FileNotFoundError:
        raise CorpusError(f"{spec.file}: missing ({path})") from None
    except (OSError, EOFError) as exc:  # gzip.BadGzipFile is an OSError
        raise CorpusError(f"{spec.file}: unreadable ({exc})") from None


def present(spec: RepoFile, dest: Path = DEST) -> bool:
    try:
        verify(spec, local_content(spec, dest))
    except CorpusError:
        return False
    return True


def download(url: str, timeout: float = 60.0) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            data: bytes = resp.read()
            return data
    except OSError as exc:  # URLError, HTTPError, timeouts
        raise CorpusError(f"{url}: {exc}") from None


def write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def materialise(spec: RepoFile, dest: Path, fetch: Callable[[str], bytes], base: str = RAW) -> str:
    """'present' (already there and verified) or 'written'; CorpusError otherwise."""
    if spec.repo is None:
        try:
            verify(spec, local_content(spec, dest))
        except CorpusError as exc:
            raise CorpusError(
                f"{exc}; it was read from the repository index (id {spec.index_id}), which "
                "names no repository: it cannot be downloaded"
            ) from None
        return "present"
    if present(spec, dest):
        return "present"
    content = fetch(spec.url(base))
    verify(spec, content)
    write_atomic(dest / spec.file, encode(spec, content))
    return "written"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="corpus-fetch", description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="verify local copies; download nothing")
    ap.add_argument("--base-url", default=os.environ.get("CORPUS_FETCH_RAW_URL", RAW))
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--manifest", type=Path, default=MANIFEST)
    ap.add_argument("--dest", type=Path, default=DEST)
    args = ap.parse_args(argv)
    try:
        specs = repo_files(args.manifest)
    except (OSError, KeyError, tomllib.TOMLDecodeError) as exc:
        print(f"corpus-fetch: cannot read {args.manifest}: {exc!r}", file=sys.stderr)
        return 2
    counts = {"present": 0, "written": 0, "failed": 0, "not downloadable": 0}
    for spec in specs:
        try:
            if args.check:
                verify(spec, local_content(spec, args.dest))
                state = "present"
            else:
                fetch = partial(download, timeout=args.timeout)
                state = materialise(spec, args.dest, fetch, args.base_url)
        except CorpusError as exc:
            print(f"corpus-fetch: {exc}", file=sys.stderr)
            absent = not (args.dest / spec.file).exists()
            state = "not downloadable" if spec.repo is None and absent else "failed"
        counts[state] += 1
    summary = ", ".join(f"{n} {state}" for state, n in counts.items() if n)
    print(f"corpus-fetch: rl_health: {summary} (in {args.dest})", file=sys.stderr)
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
