"""RL metric keys as each framework logs them -> one canonical name per signal.

Sources (see the research notes in the issue): verl console and W&B keys
(`actor/entropy`, `actor/entropy_loss` in older releases, `actor/grad_norm`,
`actor/kl_loss`, `critic/score/mean`, `response_length/{mean,max,clip_ratio}`,
`timing_s/step`, `perf/throughput`, `rollout_corr/*` and `mismatch/*`,
`training/rollout_probs_diff_mean`), TRL's GRPOTrainer (`reward`, `reward_std`,
`frac_reward_zero_std`, `entropy`, `kl`, `completions/{mean_length,max_length,clipped_ratio}`,
old `completion_length`, `sampling/sampling_logp_difference/mean`, `step_time`),
OpenRLHF (tqdm postfix `act_loss reward gen_len kl grad_norm`, W&B `train/actor_grad_norm`,
`train/vllm_kl`, `train/group_reward_std`, `rollout/truncated_rate`), SkyRL
(`policy/policy_entropy`, `policy/grad_norm`, `reward/avg_raw_reward`,
`policy/rollout_train_logprobs_abs_diff_mean`, `generate/avg_num_tokens`,
`trainer/tokens_per_second_per_gpu`) and NeMo-RL (`train/token_mult_prob_error`,
`train/gen_kl_error`). Keys drift between versions: a missing key is unknown, never healthy.
The first key of a list that a point carries wins.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import lru_cache

from labctl.progress.metrics import ALIASES as PROGRESS_ALIASES

RATE_KEY = "tqdm/s_per_it"  # the training bar's rate, when the metrics carry no step time
# canonical name -> raw keys, in order of preference
# fmt: off
CANONICAL: dict[str, tuple[str, ...]] = {
    "entropy": ("actor/entropy", "actor/entropy_loss", "entropy", "entropy/mean",
                "policy/policy_entropy", "policy_entropy", "objective/entropy", "entropy_loss"),
    "grad_norm": ("actor/grad_norm", "grad_norm", "policy/grad_norm", "policy/raw_grad_norm",
                  "actor_grad_norm", "raw_grad_norm"),
    "loss": ("actor/pg_loss", "loss", "policy/policy_loss", "act_loss", "policy_loss"),
    "kl": ("actor/kl_loss", "kl", "objective/kl", "actor/reward_kl_penalty", "policy/policy_kl"),
    "mismatch": ("rollout_corr/k3_kl", "mismatch/k3_kl", "rollout_corr/kl", "mismatch/kl",
                 "rollout_corr/log_ppl_abs_diff", "mismatch/log_ppl_abs_diff",
                 "training/rollout_probs_diff_mean", "sampling/sampling_logp_difference/mean",
                 "policy/rollout_train_logprobs_abs_diff_mean", "policy/tis/log_ratio_abs_mean",
                 "vllm_kl", "gen_kl_error"),
    "is_log_ratio": ("rollout_corr/log_ppl_diff", "mismatch/log_ppl_diff"),
    "prob_error": ("token_mult_prob_error",),
    "reward": ("critic/score/mean", "critic/rewards/mean", "reward", "reward/avg_raw_reward",
               "rollout/reward_mean", "reward_mean", "episode/reward/mean"),
    "reward_std": ("reward_std", "critic/score/std", "group_reward_std"),
    "zero_std_frac": ("frac_reward_zero_std",),
    "adv_max": ("critic/advantages/max",),
    "adv_min": ("critic/advantages/min",),
    "resp_len": ("response_length/mean", "completions/mean_length", "completion_length",
                 "gen_len", "generate/avg_num_tokens", "response_length"),
    "resp_len_max": ("response_length/max", "completions/max_length", "generate/max_num_tokens"),
    "clip_ratio": ("response_length/clip_ratio", "completions/clipped_ratio",
                   "rollout/truncated_rate", "truncated_rate"),
    "step_time": ("timing_s/step", "perf/time_per_step", "step_time", "timing/step",
                  RATE_KEY),
    "tokens_per_s": ("perf/throughput", "trainer/tokens_per_second_per_gpu",
                     "tokens_per_second", "perf/tokens_per_second"),
    "gen_ms_per_token": ("timing_per_token_ms/gen",),
    "lr": ("actor/lr", "learning_rate", "lr", "act_lr", "policy/policy_lr"),
}
# fmt: on
RANK: dict[str, tuple[str, int]] = {
    raw: (canon, i) for canon, raws in CANONICAL.items() for i, raw in enumerate(raws)
}
# progress/metrics.py short names the RL table already shows, for keys not listed above
_FROM_PROGRESS = {"entropy": "entropy", "grad_norm": "grad_norm", "kl_ref": "kl"}
PREFIXES = ("train/", "training/", "rollout/", "trainer/")
# a metric keyed like this is an evaluation or validation number, never training
_EVAL_HINTS = ("val-", "val/", "eval", "test/", "test_")


@lru_cache(maxsize=16384)
def lookup(raw: str) -> tuple[str, int] | None:
    """(canonical name, preference rank) of a raw key, or None (cached: a log repeats the
    same keys on every line)."""
    hit = RANK.get(raw)
    if hit is not None:
        return hit
    low = raw.lower()
    if low.startswith(_EVAL_HINTS):
        return None
    for prefix in PREFIXES:  # W&B spellings: train/kl, train/actor_grad_norm, ...
        if raw.startswith(prefix) and raw[len(prefix) :] in RANK:
            canon, rank = RANK[raw[len(prefix) :]]
            return canon, rank + 50
    short = PROGRESS_ALIASES.get(raw)
    if short in _FROM_PROGRESS:
        return _FROM_PROGRESS[short], 90
    return None


def canonicalise(raw: Mapping[str, float]) -> dict[str, tuple[float, str]]:
    """{canonical: (value, raw key)} for one logged point; the preferred key wins."""
    best: dict[str, tuple[float, str, int]] = {}
    for key, value in raw.items():
        hit = lookup(key)
        if hit is None or isinstance(value, bool):
            continue
        canon, rank = hit
        if canon not in best or rank < best[canon][2]:
            best[canon] = (float(value), key, rank)
    out = {c: (v, k) for c, (v, k, _) in best.items()}
    if "prob_error" in out and "is_log_ratio" not in out:
        value, key = out["prob_error"]  # NeMo-RL: 1.0 is perfect agreement
        if value > 0 and math.isfinite(value):
            out["is_log_ratio"] = (math.log(value), key)
    return out
