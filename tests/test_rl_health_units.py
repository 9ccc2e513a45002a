"""rl-health's pure parts: the bounded read plan, parsing, keys, windows and each rule."""

from __future__ import annotations

import math
import random
from itertools import pairwise
from pathlib import Path

from helpers import rl_traces
from hypothesis import given, settings
from hypothesis import strategies as st

from labctl.rlhealth.config import Thresholds
from labctl.rlhealth.history import History
from labctl.rlhealth.keys import canonicalise
from labctl.rlhealth.logread import LocalFile, ReadConfig, parse, plan, read_log
from labctl.rlhealth.signals_run import Live
from labctl.rlhealth.stats import windows
from labctl.rlhealth.verdict import decide

T = Thresholds()
LIVE = Live()
MiB = 1 << 20


@given(
    size=st.integers(0, 1 << 34),
    head=st.integers(1, 4 * MiB),
    tail=st.integers(1, 16 * MiB),
    samples=st.integers(0, 20),
    sample=st.integers(1, MiB),
    cap=st.integers(64 << 10, 32 * MiB),
)
def test_the_plan_is_bounded_sorted_and_covers_both_ends(size, head, tail, samples, sample, cap):
    cfg = ReadConfig(head, tail, samples, sample, cap)
    regions = plan(size, cfg)
    if size == 0:
        assert regions == []
        return
    total = sum(n for _, n in regions)
    assert total <= cap
    assert regions[0][0] == 0 and regions[-1][0] + regions[-1][1] == size
    for (a, n), (b, _) in pairwise(regions):
        assert n > 0 and a + n <= b  # sorted, non-overlapping
    assert all(a >= 0 and a + n <= size for a, n in regions)


def _verl_line(step: int, entropy: float) -> str:
    return f"(TaskRunner pid=1) step:{step} - actor/entropy:{entropy:.4f} - actor/grad_norm:0.5\n"


def test_a_sampled_read_of_a_big_log_sees_its_start_and_end(tmp_path: Path) -> None:
    path = tmp_path / "big.log"
    with path.open("w") as fh:
        for step in range(1, 40001):
            fh.write(_verl_line(step, 0.5) + "x" * 900 + "\n")
    cfg = ReadConfig(head_bytes=MiB, tail_bytes=2 * MiB, samples=4, sample_bytes=64 << 10,
                     max_bytes=4 * MiB)  # fmt: skip
    h = read_log(LocalFile(path), cfg)
    assert h.read["bytes_read"] <= 4 * MiB < path.stat().st_size // 8
    first, last = h.step_range()
    assert first == 1 and last == 40000 and len(h.read["regions"]) == 6
    assert h.total_steps_estimate() == 40000


@settings(max_examples=60)
@given(cuts=st.lists(st.integers(0, 30000), min_size=2, max_size=8, unique=True))
def test_region_edges_never_corrupt_a_point(cuts: list[int]) -> None:
    """Any region plan: each point parsed carries the exact values its step logged."""
    data = "".join(_verl_line(s, s / 1000) for s in range(1, 400)).encode()
    bounds = sorted({min(c, len(data)) for c in cuts})
    regions = [(a, b - a) for a, b in pairwise(bounds) if b > a]
    h = parse(regions, [data[a : a + n] for a, n in regions], len(data))
    for p in h.points:
        assert p.metrics["entropy"] == round(p.step / 1000, 4)  # type: ignore[operator]


def test_a_resumed_run_replaces_the_steps_it_logs_again() -> None:
    text = "".join(_verl_line(s, 0.5) for s in range(1, 31))
    text += "".join(_verl_line(s, 0.4) for s in range(21, 51))
    data = text.encode()
    h = parse([(0, len(data))], [data], len(data))
    assert [p.step for p in h.points] == list(range(1, 51))
    assert (h.restarts, h.dropped) == (1, 10)
    assert h.points[25].metrics["entropy"] == 0.4  # step 26 as the resumed run logged it


def test_an_sft_phase_before_the_rl_phase_is_not_the_baseline() -> None:
    sft = "".join(f"{{'loss': {2 - i / 50:.3f}, 'grad_norm': 9.0, 'epoch': {i / 10}}}\n"
                  for i in range(30))  # fmt: skip
    done = "{'train_runtime': 60.0, 'train_loss': 1.5, 'epoch': 3.0}\n"
    rl = "".join(f"{{'loss': 0.0, 'grad_norm': 0.1, 'reward': 0.5, 'epoch': {i / 100}}}\n"
                 for i in range(25))  # fmt: skip
    data = (sft + done + rl).encode()
    h = parse([(0, len(data))], [data], len(data))
    assert h.steps == 25 and all(p.metrics["grad_norm"] == 0.1 for p in h.points)


def test_skyrl_console_blocks_are_read_with_their_step() -> None:
    data = rl_traces.make("healthy", "skyrl", 3, steps=25).text().encode()
    h = parse([(0, len(data))], [data], len(data))
    assert [p.step for p in h.points] == list(range(1, 26))
    assert {"entropy", "grad_norm", "reward", "resp_len"} <= set(h.points[0].metrics)


def test_keys_prefer_the_framework_spelling_and_skip_validation_numbers() -> None:
    raw = {"actor/entropy": 0.3, "entropy": 9.0, "train/kl": 0.02}
    raw |= {"val-core/gsm8k/reward/mean@1": 0.9, "train/token_mult_prob_error": 1.2}
    got = canonicalise(raw)
    assert got["entropy"] == (0.3, "actor/entropy")
    assert got["kl"] == (0.02, "train/kl")
    assert "reward" not in got
    assert math.isclose(got["is_log_ratio"][0], math.log(1.2))


def test_windows_need_a_baseline_and_a_current_window() -> None:
    assert windows(12, warmup=5, baseline=15, window=10, share=0.05) is None
    w = windows(200, warmup=5, baseline=15, window=10, share=0.05)
    assert w is not None and w.baseline == (5, 20) and w.current == (190, 200)
    assert w.previous == (180, 190)


def noise(n: int, level: float, seed: int = 1) -> list[float]:
    r = random.Random(seed)
    return [level * math.exp(r.gauss(0, 0.1)) for _ in range(n)]


def _history(n: int, **series: list[float]) -> History:
    h = History("log")
    for i in range(n):
        h.add(i, i + 1, {k: v[i] for k, v in series.items()})
    return h.finish()


def test_one_grad_spike_that_recovers_is_not_an_explosion() -> None:
    g = [0.2] * 60
    g[50] = 500.0
    rec = decide(
        _history(60, **{"actor/grad_norm": g, "critic/score/mean": noise(60, 0.3)}), T, LIVE
    )
    assert not rec["signals"] and rec["recommendation"] == "NO-KILL"


def test_a_nan_streak_with_a_reward_drop_is_kill_and_names_both() -> None:
    g = [0.2] * 50 + [math.nan] * 10
    r = [0.6] * 50 + [0.0] * 10
    rec = decide(_history(60, **{"actor/grad_norm": g, "critic/score/mean": r}), T, LIVE)
    assert rec["recommendation"] == "KILL" and {"grad", "reward"} <= set(rec["families"])
    nan = next(s for s in rec["signals"] if s["name"] == "grad_nonfinite")
    assert nan["current"]["nonfinite"] == 10 and nan["lines"][-1]["step"] == 60


def test_one_family_alone_is_watch_and_short_histories_are_never_kill() -> None:
    e = [0.6] * 40 + [0.01] * 20
    rising = [0.1 + i / 60 for i in range(60)]
    rec = decide(_history(60, **{"actor/entropy": e, "critic/score/mean": rising}), T, LIVE)
    assert (rec["recommendation"], rec["reason"]) == ("WATCH", "single_signal")
    short = _history(15, **{"actor/grad_norm": [math.nan] * 15, "critic/score/mean": [0.0] * 15})
    rec = decide(short, T, LIVE)
    assert (rec["recommendation"], rec["reason"]) == ("WATCH", "insufficient_history")


def test_a_frozen_step_counter_counts_only_while_the_process_runs() -> None:
    h = _history(40, **{"timing_s/step": [60.0] * 40, "critic/score/mean": noise(40, 0.3)})
    now, last = 1e9, 1e9 - 6 * 3600
    alive = decide(h, T, Live(now=now, last_advance=last, alive=True))
    assert [s["name"] for s in alive["signals"] if s["strength"] == "strong"] == ["step_frozen"]
    frozen = next(s for s in alive["signals"] if s["name"] == "step_frozen")
    assert frozen["current"]["allowance_s"] == 1800
    assert (alive["recommendation"], alive["reason"]) == ("WATCH", "single_signal")
    assert not decide(h, T, Live(now=now, last_write=last, alive=None))["signals"]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(20, 300))
def test_noisy_healthy_series_are_never_killed(seed: int, n: int) -> None:
    r = random.Random(seed)
    noisy = lambda base, s: [base * math.exp(r.gauss(0, s)) for _ in range(n)]  # noqa: E731
    h = _history(
        n,
        **{
            "actor/entropy": noisy(r.uniform(0.05, 1.5), 0.2),
            "actor/grad_norm": noisy(r.uniform(0.01, 5), 0.6),
            "actor/kl_loss": noisy(r.uniform(1e-4, 0.1), 0.5),
            "rollout_corr/k3_kl": noisy(r.uniform(1e-5, 1e-3), 0.5),
            "critic/score/mean": [r.uniform(0, 1) for _ in range(n)],
            "response_length/mean": noisy(r.uniform(50, 3000), 0.15),
            "response_length/clip_ratio": [r.uniform(0, 0.7) for _ in range(n)],
            "timing_s/step": noisy(r.uniform(10, 600), 0.3),
        },
    )
    assert decide(h, T, LIVE)["recommendation"] != "KILL"
