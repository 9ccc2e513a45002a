"""The labelled corpora's committed part (tests/fixtures/diagnose/corpus2 to corpus8):
manifests that cite every copied file exactly (repository, pinned commit, sha256 of the
published file and of the copy, the trimming), a split drawn by source group, and committed
issue excerpts only -- the copied repository files are local, never in the repository
(scripts/corpus-fetch rebuilds them; benchmarks/diagnose_accuracy.py scores them)."""

from __future__ import annotations

import hashlib
import re
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest

from labctl.diagnose import diagnose_path, load_catalog

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "diagnose"
CORPORA = sorted(p.parent.name for p in FIXTURES.glob("corpus*/manifest.toml"))
HEX40 = re.compile(r"[0-9a-f]{40}")
HEX64 = re.compile(r"[0-9a-f]{64}")
PAGE_URL = re.compile(r"https?://[a-z0-9.-]+\.[a-z]{2,}/\S+")


def cases(name: str) -> list[dict[str, Any]]:
    text = (FIXTURES / name / "manifest.toml").read_text(encoding="utf-8")
    found: list[dict[str, Any]] = tomllib.loads(text)["case"]
    return found


def source(f: dict[str, Any]) -> str:
    """The source group: a repository, or the repository whose issue tracker was quoted."""
    if "repo" in f:
        return str(f["repo"]).lower()
    m = re.match(r"https://github\.com/([^/]+/[^/]+)/(?:issues|pull|discussions)/", f["url"])
    assert m, f["url"]
    return m.group(1).lower()


def test_there_are_corpora() -> None:
    assert {"corpus2", "corpus3"} <= set(CORPORA)


@pytest.mark.parametrize("name", CORPORA)
def test_every_file_is_cited_exactly(name: str) -> None:
    ids = [c["id"] for c in cases(name)]
    assert len(ids) == len(set(ids))
    for case in cases(name):
        assert case["file"], case["id"]
        assert case["failed"] == (case["category"] != "healthy"), case["id"]
        for f in case["file"]:
            assert HEX64.fullmatch(f["sha256"]) and f["bytes"] >= 0, (case["id"], f)
            if "repo" not in f:
                # an excerpt of a public page: a GitHub thread, or (corpus46) a forum or blog page
                assert PAGE_URL.fullmatch(f["url"]), (case["id"], f)
                continue
            assert HEX40.fullmatch(f["commit"]) and HEX64.fullmatch(f["source_sha256"])
            assert f["url"].endswith(f"/{f['repo']}/blob/{f['commit']}/{f['path']}")
            trim = f.get("trim")
            if trim is None and "mask" not in f:  # copied whole
                assert (f["sha256"], f["bytes"]) == (f["source_sha256"], f["source_bytes"])
            elif trim is None:  # copied whole, a secret masked (corpus_fetch.py rebuilds it)
                assert f["sha256"] != f["source_sha256"], (case["id"], f)
            else:
                note = f"kept the first {trim['head']} and last {trim['tail']} of "
                assert f["trimmed"].startswith(note), (case["id"], f)
                assert f"({f['source_bytes']} bytes)" in f["trimmed"]
            assert ("mask" in f) == ("edited" in f)


@pytest.mark.parametrize("name", CORPORA)
def test_only_issue_excerpts_are_committed(name: str) -> None:
    """Copied repository files are never in the repository; every excerpt is, as recorded."""
    tracked = subprocess.run(
        ["git", "ls-files", str(FIXTURES / name)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    committed = {str((ROOT / p).relative_to(FIXTURES / name)) for p in tracked}
    excerpts = set()
    for case in cases(name):
        for f in case["file"]:
            rel = f"cases/{case['id']}/{f['name']}"
            if "repo" in f:
                assert rel not in committed, rel
                continue
            excerpts.add(rel)
            data = (FIXTURES / name / rel).read_bytes()
            assert hashlib.sha256(data).hexdigest() == f["sha256"], rel
    assert {p for p in committed if p.startswith("cases/")} == excerpts


def test_corpus2_split_covers_every_case_and_never_splits_a_source() -> None:
    split = tomllib.loads((FIXTURES / "corpus2" / "split.toml").read_text(encoding="utf-8"))
    tune, holdout = set(split["tune"]), set(split["holdout"])
    by_id = {c["id"]: c for c in cases("corpus2")}
    assert tune | holdout == set(by_id) and not tune & holdout
    side = {}
    for ident, case in by_id.items():
        for f in case["file"]:
            assert side.setdefault(source(f), ident in tune) == (ident in tune), ident


def test_no_source_is_shared_between_corpora() -> None:
    """No repository's files, and no issue thread, feed two corpora."""
    owners: dict[str, set[str]] = {}
    for name in CORPORA:
        for case in cases(name):
            for f in case["file"]:
                owners.setdefault(source(f) if "repo" in f else f["url"], set()).add(name)
    assert {s: n for s, n in owners.items() if len(n) > 1} == {}


def test_plain_re_fallback_agrees_on_the_committed_excerpts() -> None:
    plain = load_catalog(use_re2=False)
    seen = 0
    for name in CORPORA:
        for case in cases(name):
            for f in case["file"]:
                if "repo" in f:
                    continue
                p = FIXTURES / name / "cases" / case["id"] / f["name"]
                a, b = diagnose_path(p), diagnose_path(p, catalog=plain)
                assert (a["catalog_id"], a["fingerprint"]) == (b["catalog_id"], b["fingerprint"])
                seen += 1
    assert seen >= 30
