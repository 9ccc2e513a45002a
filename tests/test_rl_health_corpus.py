"""rl-health accuracy on traces with known outcomes (tests/helpers/rl_corpus.py).

The split into tune and test halves was committed with its seed before any threshold was
tuned; accuracy is asserted (and printed) on the test half only. A wrong KILL is the
expensive mistake: no healthy or short run may be called KILL, in either half.

The real cases scored are those present: the committed issue-thread excerpts always, the
repository files when corpora/rl_health/real/ holds verified copies (scripts/corpus-fetch);
the cases left out are printed. benchmarks/rl_health_accuracy.py reports every half in full.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers import rl_corpus, rl_eval, rl_traces

MIN_ACCURACY_GENERATED = 0.85
MIN_ACCURACY_REAL = 0.8


def test_the_split_is_the_committed_one() -> None:
    """The halves are a function of the committed seed: nobody moved a case after tuning."""
    cases = rl_corpus.real_cases()
    halves = rl_corpus.split((c["file"], c["expected"]) for c in cases)
    assert {c["file"]: c["split"] for c in cases} == halves
    assert rl_corpus.SPLIT_SEED == 2020
    assert sorted(c["file"] for c in cases if c["split"] == "test") == [
        "trl_grpo_hotpotqa_v1_kl.log.gz",
        "trl_grpo_hotpotqa_v2.log.gz",
        "trl_grpo_hotpotqa_v3.log.gz",
        "trl_grpo_issue3452_loss_zero.log",
        "trl_grpo_issue3857_zero_std.log",
        "trl_grpo_unsloth_explode_truncate.log",
        "verl_grpo_rllm54_score_zero.log",
    ]
    generated = rl_corpus.generated_traces()
    assert sum(1 for _, s in generated if s == "test") == len(generated) // 2
    for case in cases:
        assert case["source"], case["file"]
        if case["committed"]:  # an issue excerpt written by hand: always here
            assert case["local"].is_file() and case["present"], case["file"]


def test_repository_files_are_cited_and_pinned_not_committed() -> None:
    """A copied repository file is never committed: the manifest pins it (commit, sha256)
    and scripts/corpus-fetch brings it into the git-ignored corpora/."""
    cases = rl_corpus.real_cases()
    copied = [c for c in cases if not c["committed"]]
    assert len(copied) == 7 and all(c["expected"] in ("KILL", "NO-KILL") for c in copied)
    for case in copied:
        assert not (rl_corpus.REAL / case["file"]).exists(), case["file"]
        assert case["local"].parent == rl_corpus.CORPORA
        if "repo" in case:
            assert re.fullmatch(r"[0-9a-f]{40}", case["commit"]), case["file"]
            assert re.fullmatch(r"[0-9a-f]{64}", case["source_sha256"]), case["file"]
            assert case["source_bytes"] > 0
            url = f"https://github.com/{case['repo']}/blob/{case['commit']}/{case['path']}"
            assert case["source"] == url, case["file"]
        else:  # read from the repository index, which names no repository
            assert re.fullmatch(r"[0-9]+", case["index_id"]) and case["index_id"] in case["source"]
            assert re.fullmatch(r"[0-9a-f]{64}", case["sha256"]) and case["bytes"] > 0
    ignored = (rl_corpus.ROOT / ".gitignore").read_text().splitlines()
    assert "/corpora/" in ignored


@pytest.fixture(scope="module")
def test_half(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return rl_eval.evaluate("test", tmp_path_factory.mktemp("rl-test"))


def _report(name: str, figures: dict) -> str:
    return (
        f"{name}: {figures['correct']}/{figures['total']} = {figures['accuracy']:.1%}, "
        f"wrong KILL on healthy {figures['wrong_kill_on_healthy']}, KILLs naming an expected "
        f"family {figures['kill_named']}, {figures['confusion']}"
    )


def test_accuracy_on_the_untouched_half(test_half: dict) -> None:
    gen, real = test_half["generated"], test_half["real"]
    print("\n" + _report("generated (test half)", gen) + "\n" + _report("real (test half)", real))
    if test_half["missing"]:
        print(f"real cases not scored (no verified copy in {rl_corpus.CORPORA}; "
              f"scripts/corpus-fetch): {', '.join(test_half['missing'])}")  # fmt: skip
    assert real["total"] >= 3  # the committed issue excerpts of the test half, at least
    assert gen["accuracy"] >= MIN_ACCURACY_GENERATED, gen
    assert real["accuracy"] >= MIN_ACCURACY_REAL, real
    kills = int(gen["kill_named"].split("/")[1])
    assert gen["kill_named"] == f"{kills}/{kills}", "a KILL must name the failure's family"


def test_no_kill_on_healthy_or_short_runs_in_either_half(tmp_path: Path, test_half: dict) -> None:
    tune = rl_eval.evaluate("tune", tmp_path)
    for half in (test_half, tune):
        for expected, _families, rec in half["rows"]:
            if expected != "KILL":
                assert rec["recommendation"] != "KILL", rec["message"]


def test_more_healthy_seeds_are_never_killed(tmp_path: Path) -> None:
    """Fresh seeds of every healthy scenario (traps included) in every format."""
    for scenario in rl_traces.HEALTHY:
        for framework in rl_traces.FRAMEWORKS:
            for seed in (31, 32):
                trace = rl_traces.make(scenario, framework, seed)
                rec = rl_eval.judge_trace(trace, tmp_path)
                assert rec["recommendation"] == "NO-KILL", (trace.name, rec["message"])
