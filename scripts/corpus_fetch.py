#!/usr/bin/env python3
"""Re-materialise the labelled diagnose corpora's log files from their public sources.

    scripts/corpus-fetch diagnose                    # every diagnose corpus citing repository files
    scripts/corpus-fetch diagnose --corpus corpus4   # one corpus (repeatable)
    scripts/corpus-fetch diagnose --offline          # only from the local source cache
    scripts/corpus-fetch diagnose --check            # verify what is present; write nothing
    (scripts/corpus-fetch alone fetches every corpus, rl-health's too: scripts/rl_corpus_fetch.py)

labctl commits only its own writing about the corpora (tests/fixtures/diagnose/<corpus>/:
manifest.toml with labels and citations, split.toml, README.md, and short excerpts of public
issue threads). The log files copied from public repositories are NOT committed: they live in
the git-ignored `corpora/diagnose/<corpus>/cases/<case id>/<file name>`, which the accuracy
benchmark (benchmarks/diagnose_accuracy.py) reads. This script rebuilds them from the manifest:

1. the file as published: `corpora/sources/<owner>/<name>/<commit>/<path>` when cached, else
   downloaded from `<base-url>/<owner>/<name>/<commit>/<path>` (raw.githubusercontent.com by
   default) at the pinned commit, and cached;
2. its sha256 must equal the manifest's `source_sha256` (and its size `source_bytes`);
3. the recorded editing is applied: `trim = { head = H, tail = T }` keeps the first H and last
   T lines (bytes.splitlines: \\n, \\r\\n and \\r end a line) with one marker line
   `[... N lines trimmed for the corpus ...]` between them; `mask = [{ pattern, replacement }]`
   are regex substitutions (Python `re`, on bytes) that masked a secret;
4. the result's sha256 must equal the manifest's `sha256` (and `bytes`); only then is it
   written (atomically).

Exit 0 when every file is present and verified, 1 when any is missing or does not verify
(each named on stderr), 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import sys
import tomllib
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
# the download and atomic-write helpers rl-health's fetcher already has (one CorpusError too)
from rl_corpus_fetch import CorpusError, download, write_atomic  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures" / "diagnose"
DEST = ROOT / "corpora" / "diagnose"
SOURCES = ROOT / "corpora" / "sources"
RAW = "https://raw.githubusercontent.com"
MARKER = b"[... %d lines trimmed for the corpus ...]\n"
TIMEOUT = 60.0


@dataclass(frozen=True)
class FileSpec:
    """One copied repository file of one case, as the manifest records it."""

    corpus: str
    case: str
    name: str
    repo: str
    path: str
    commit: str
    source_sha256: str
    source_bytes: int
    sha256: str
    bytes: int
    trim: tuple[int, int] | None = None
    masks: tuple[tuple[str, str], ...] = field(default=())

    @property
    def label(self) -> str:
        return f"{self.corpus}/{self.case}/{self.name}"

    def dest(self, root: Path = DEST) -> Path:
        return root / self.corpus / "cases" / self.case / self.name

    def cached(self, sources: Path = SOURCES) -> Path:
        return sources / self.repo / self.commit / self.path


def specs(manifest: Path, corpus: str) -> list[FileSpec]:
    """The repository files a manifest cites (issue excerpts are committed: not listed)."""
    data = tomllib.loads(manifest.read_text(encoding="utf-8"))
    out = []
    for case in data.get("case", []):
        for f in case.get("file", []):
            if "repo" not in f:
                continue
            trim = f.get("trim")
            out.append(
                FileSpec(
                    corpus=corpus,
                    case=case["id"],
                    name=f["name"],
                    repo=f["repo"],
                    path=f["path"],
                    commit=f["commit"],
                    source_sha256=f["source_sha256"],
                    source_bytes=f["source_bytes"],
                    sha256=f["sha256"],
                    bytes=f["bytes"],
                    trim=(trim["head"], trim["tail"]) if trim else None,
                    masks=tuple((m["pattern"], m["replacement"]) for m in f.get("mask", [])),
                )
            )
    return out


def trim(data: bytes, head: int, tail: int) -> bytes:
    """The first `head` and last `tail` lines with one marker line between them."""
    lines = data.splitlines(keepends=True)
    if len(lines) <= head + tail:
        return data
    cut = len(lines) - head - tail
    return b"".join(lines[:head]) + MARKER % cut + b"".join(lines[len(lines) - tail :])


def mask(data: bytes, masks: tuple[tuple[str, str], ...]) -> bytes:
    for pattern, replacement in masks:
        data = re.sub(pattern.encode(), replacement.encode(), data)
    return data


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def derive(spec: FileSpec, source: bytes) -> bytes:
    """The corpus file from the published one, both verified against the manifest."""
    if len(source) != spec.source_bytes or sha256(source) != spec.source_sha256:
        raise CorpusError(
            f"{spec.label}: the source ({len(source)} bytes, sha256 {sha256(source)[:12]}) is not "
            f"the one cited ({spec.source_bytes} bytes, sha256 {spec.source_sha256[:12]})"
        )
    out = trim(source, *spec.trim) if spec.trim else source
    out = mask(out, spec.masks)
    if len(out) != spec.bytes or sha256(out) != spec.sha256:
        raise CorpusError(
            f"{spec.label}: trimming/masking gave {len(out)} bytes, sha256 {sha256(out)[:12]}; "
            f"the manifest records {spec.bytes} bytes, sha256 {spec.sha256[:12]}"
        )
    return out


def raw_url(base: str, spec: FileSpec) -> str:
    quoted = urllib.parse.quote(spec.path, safe="/")
    return f"{base.rstrip('/')}/{spec.repo}/{spec.commit}/{quoted}"


def present(spec: FileSpec, dest: Path = DEST) -> bool:
    p = spec.dest(dest)
    return p.is_file() and p.stat().st_size == spec.bytes and sha256(p.read_bytes()) == spec.sha256


def source_of(
    spec: FileSpec, sources: Path, fetch: Callable[[str], bytes] | None, base: str
) -> bytes:
    """The published file: from the cache, else downloaded (and cached once it verifies)."""
    cached = spec.cached(sources)
    if cached.is_file():
        return cached.read_bytes()
    if fetch is None:
        raise CorpusError(f"{spec.label}: not in the source cache ({cached}) and --offline")
    data = fetch(raw_url(base, spec))
    if sha256(data) == spec.source_sha256:
        write_atomic(cached, data)
    return data


def materialise(
    spec: FileSpec,
    *,
    dest: Path = DEST,
    sources: Path = SOURCES,
    fetch: Callable[[str], bytes] | None = download,
    base: str = RAW,
) -> str:
    """'present' (already there and verified) or 'written'; CorpusError otherwise."""
    if present(spec, dest):
        return "present"
    write_atomic(spec.dest(dest), derive(spec, source_of(spec, sources, fetch, base)))
    return "written"


def corpora(fixtures: Path = FIXTURES) -> list[str]:
    return sorted(p.parent.name for p in fixtures.glob("*/manifest.toml"))


def run(args: Any) -> int:
    names = args.corpus or corpora(args.fixtures)
    fetch = None if args.offline else (lambda url: download(url, args.timeout))
    counts = {"present": 0, "written": 0, "failed": 0}
    for name in names:
        manifest = args.fixtures / name / "manifest.toml"
        if not manifest.is_file():
            print(f"corpus-fetch: no manifest {manifest}", file=sys.stderr)
            return 2
        for spec in specs(manifest, name):
            try:
                if args.check:
                    if not present(spec, args.dest):
                        raise CorpusError(f"{spec.label}: missing or altered")
                    state = "present"
                else:
                    state = materialise(
                        spec, dest=args.dest, sources=args.sources, fetch=fetch, base=args.base_url
                    )
            except CorpusError as exc:
                print(f"corpus-fetch: {exc}", file=sys.stderr)
                state = "failed"
            counts[state] += 1
    summary = ", ".join(f"{v} {k}" for k, v in counts.items())
    print(f"corpus-fetch: {', '.join(names)}: {summary} (in {args.dest})", file=sys.stderr)
    return 1 if counts["failed"] else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="corpus-fetch", description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", action="append", help="corpus name (default: all)")
    ap.add_argument("--offline", action="store_true", help="use only the source cache")
    ap.add_argument("--check", action="store_true", help="verify the local files only")
    ap.add_argument("--base-url", default=os.environ.get("CORPUS_FETCH_RAW_URL", RAW))
    ap.add_argument("--timeout", type=float, default=TIMEOUT)
    ap.add_argument("--dest", type=Path, default=DEST)
    ap.add_argument("--sources", type=Path, default=SOURCES)
    ap.add_argument("--fixtures", type=Path, default=FIXTURES)
    return run(ap.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
