"""rl-health signal by signal: each failing scenario of tests/helpers/rl_traces.py gives its
own signal, with the numbers that tripped it, in every console format that logs the metric
it needs, and KILL (two independent families, the engine's rule); each healthy scenario --
its trap included -- is never KILL and fires no strong signal. Traces are judged as poll
hands a running job over (helpers/rl_eval.judge_trace), several seeds each.

A format that does not log a signal's metric cannot show it; the record then names the
metric as missing (OpenRLHF's progress bar carries no entropy, mismatch or length cap)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import rl_eval, rl_traces

from labctl.rlhealth.keys import RATE_KEY

SEEDS = range(6)
ALL = rl_traces.FRAMEWORKS
NO_BAR = ("verl", "trl", "skyrl")  # the formats beside OpenRLHF's tqdm postfix
# (scenario, signal, family, formats that log what it needs)
SIGNALS = [
    ("entropy_collapse", "entropy_collapse", "entropy", NO_BAR),
    ("grad_nan", "grad_nonfinite", "grad", ALL),
    ("grad_explosion", "grad_explosion", "grad", ALL),
    ("mismatch_drift", "mismatch_drift", "mismatch", NO_BAR),
    ("kl_blowup", "kl_blowup", "kl", ALL),
    # zero variance: verl's advantages (all 0), TRL's frac_reward_zero_std
    ("never_learns", "zero_variance", "learning", ("verl", "trl")),
    # no reward spread logged: a reward that never moved says the same
    ("never_learns", "reward_flat", "learning", ("openrlhf", "skyrl")),
    ("reward_hack", "reward_hack", "hack", ALL),
    ("truncation", "truncation", "truncation", ("verl", "trl")),  # the clip ratio
    ("truncation", "length_pinned", "truncation", ("skyrl",)),  # the max length, no ratio
    ("frozen_engine", "throughput_collapse", "throughput", ALL),
    ("frozen_engine", "step_frozen", "liveness", ALL),
]
CASES = [(sc, sig, fam, fw) for sc, sig, fam, fws in SIGNALS for fw in fws]
# what a format that cannot show the signal lacks
BLIND = [
    ("entropy_collapse", "openrlhf", "entropy"),
    ("mismatch_drift", "openrlhf", "mismatch"),
    ("truncation", "openrlhf", "clip_ratio"),
]


def judged(scenario: str, framework: str, tmp: Path, **kw: Any) -> list[tuple[Any, dict]]:
    traces = [rl_traces.make(scenario, framework, seed, **kw) for seed in SEEDS]
    return [(t, rl_eval.judge_trace(t, tmp)) for t in traces]


@pytest.mark.parametrize(
    ("scenario", "signal", "family", "framework"), CASES, ids=[f"{c[1]}-{c[3]}" for c in CASES]
)
def test_each_failure_gives_its_signal_and_a_kill(
    scenario: str, signal: str, family: str, framework: str, tmp_path: Path
) -> None:
    for trace, rec in judged(scenario, framework, tmp_path):
        fired = {s["name"]: s for s in rec["signals"]}
        assert signal in fired, (trace.name, sorted(fired), rec["message"])
        sig = fired[signal]
        assert (sig["family"], sig["strength"]) == (family, "strong"), sig
        assert rec["recommendation"] == "KILL", (trace.name, rec["reason"], rec["message"])
        assert family in rec["families"] and len(rec["families"]) >= 2, rec["families"]
        assert rl_traces.FAILING[scenario] & set(rec["families"]), rec["families"]
        # the evidence: the window that tripped it ends at the last step logged
        assert sig["current"]["steps"][-1] == len(trace.steps), sig["current"]
        assert any(ch.isdigit() for ch in sig["message"]), sig["message"]
        if family == "liveness":  # a frozen counter is a time, not a logged value
            assert sig["current"]["age_s"] > sig["current"]["allowance_s"], sig["current"]
            continue
        # the key as the log spells it (the bar's rate, for a format that logs no step time)
        assert sig["key"] in trace.text() or (sig["key"] == RATE_KEY and "s/it" in trace.text())
        assert sig["lines"] and sig["lines"][-1]["step"] == len(trace.steps), sig["lines"]
        assert sig["current"]["points"] >= 3, sig["current"]


def test_an_importance_sampling_log_ratio_drift_when_verl_logs_it(tmp_path: Path) -> None:
    """verl with rollout correction logs the signed log-ratio (`rollout_corr/log_ppl_diff`):
    the drift shows in it too, beside the K3 KL, and is cited by that key."""
    for seed in SEEDS:
        trace = rl_traces.with_is_log_ratio(
            rl_traces.make("mismatch_drift", "verl", seed, steps=120)
        )
        rec = rl_eval.judge_trace(trace, tmp_path)
        fired = {s["name"]: s for s in rec["signals"]}
        assert {"log_ratio_drift", "mismatch_drift"} <= set(fired), (trace.name, sorted(fired))
        drift = fired["log_ratio_drift"]
        assert (drift["family"], drift["key"]) == ("mismatch", "rollout_corr/log_ppl_diff")
        assert abs(drift["current"]["median"]) > 0.5 and rec["recommendation"] == "KILL"
    healthy = rl_traces.with_is_log_ratio(rl_traces.make("healthy", "verl", 0, steps=120))
    assert not rl_eval.judge_trace(healthy, tmp_path)["signals"]


@pytest.mark.parametrize(("scenario", "framework", "metric"), BLIND)
def test_a_format_that_does_not_log_the_metric_says_it_is_missing(
    scenario: str, framework: str, metric: str, tmp_path: Path
) -> None:
    for trace, rec in judged(scenario, framework, tmp_path):
        assert metric in rec["missing_metrics"], (trace.name, rec["missing_metrics"])


@pytest.mark.parametrize("framework", ALL)
@pytest.mark.parametrize("scenario", rl_traces.HEALTHY)
def test_a_healthy_run_is_never_killed_and_trips_no_trap(
    scenario: str, framework: str, tmp_path: Path
) -> None:
    """The traps: slow entropy decline, grad spikes that recover, long thinking near the
    length cap, a high zero-variance share early on."""
    for trace, rec in judged(scenario, framework, tmp_path):
        assert rec["recommendation"] != "KILL", (trace.name, rec["message"])
        strong = [s["name"] for s in rec["signals"] if s["strength"] == "strong"]
        assert strong == [], (trace.name, strong, rec["message"])
