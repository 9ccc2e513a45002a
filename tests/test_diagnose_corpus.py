"""Accuracy on the labelled corpus of real-world failure excerpts (tests/fixtures/diagnose/corpus,
collected separately, each case citing its source). The corpus grows independently of the
catalog, so this asserts an accuracy floor and reports per-category results instead of
requiring every case; healthy logs must never be called failures with high confidence."""

from __future__ import annotations

import collections
import tomllib
from pathlib import Path
from typing import Any

import pytest

from labctl.diagnose import diagnose_path, load_catalog

CORPUS = Path(__file__).parent / "fixtures" / "diagnose" / "corpus"
INDEX = CORPUS / "index.toml"
MIN_ACCURACY = 0.9


def _cases() -> list[dict[str, Any]]:
    if not INDEX.exists():
        return []
    cases = tomllib.loads(INDEX.read_text())["case"]
    return [c for c in cases if (CORPUS / c["file"]).exists()]


def _diagnose(case: dict[str, Any]) -> dict[str, Any]:
    sched = {"state": case["sched_state"]} if case.get("sched_state") else None
    return diagnose_path(CORPUS / case["file"], sched=sched)


@pytest.mark.skipif(not _cases(), reason="corpus not present")
def test_corpus_accuracy() -> None:
    per: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
    wrong = []
    for case in _cases():
        d = _diagnose(case)
        ok = d["category"] == case["category"]
        per[case["category"]][0] += ok
        per[case["category"]][1] += 1
        if not ok:
            wrong.append(f"{case['file']}: expected {case['category']}, got {d['category']}")
        if case["category"] == "healthy":
            assert not d["failed"] or d["confidence"] < 0.5, case["file"]
    total = sum(v[1] for v in per.values())
    right = sum(v[0] for v in per.values())
    table = "\n".join(f"  {k:26s} {v[0]}/{v[1]}" for k, v in sorted(per.items()))
    print(f"\ncorpus accuracy {right}/{total} = {right / total:.1%}\n{table}")
    assert right / total >= MIN_ACCURACY, "\n".join(wrong)


@pytest.mark.skipif(not _cases(), reason="corpus not present")
def test_corpus_exception_types() -> None:
    typed = [c for c in _cases() if c.get("exception_type")]
    hits = sum(_diagnose(c)["exception_type"] == c["exception_type"] for c in typed)
    assert hits / len(typed) >= 0.85


@pytest.mark.skipif(not _cases(), reason="corpus not present")
def test_plain_re_fallback_agrees_on_the_corpus() -> None:
    plain = load_catalog(use_re2=False)
    for case in _cases():
        sched = {"state": case["sched_state"]} if case.get("sched_state") else None
        a = _diagnose(case)
        b = diagnose_path(CORPUS / case["file"], sched=sched, catalog=plain)
        assert (a["catalog_id"], a["fingerprint"]) == (b["catalog_id"], b["fingerprint"]), case
