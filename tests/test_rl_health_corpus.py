"""rl-health accuracy on traces with known outcomes (tests/helpers/rl_corpus.py).

The split into tune and test halves was committed with its seed before any threshold was
tuned; accuracy is asserted (and printed) on the test half only. A wrong KILL is the
expensive mistake: no healthy or short run may be called KILL, in either half.
"""

from __future__ import annotations

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
        assert case["path"].is_file(), case["file"]
        assert case["source"], case["file"]


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
