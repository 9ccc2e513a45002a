"""Metric names as logged -> the short names the status table shows.

RL collapse signals use verl's keys, found in volcengine/verl: `actor/entropy`
(verl/trainer/ppo/ray_trainer.py), `actor/grad_norm`, `actor/ppo_kl`, `actor/pg_clipfrac`,
`actor/pg_loss`, `actor/kl_loss` (verl/workers/actor/dp_actor.py), and the training/rollout
mismatch metrics `rollout_corr/kl`, `rollout_corr/k3_kl`, `rollout_corr/log_ppl_diff`,
`rollout_corr/rollout_is_mean` (verl/trainer/ppo/rollout_corr_helper.py; `mismatch/` prefix in
older releases) and `training/rollout_probs_diff_mean` (ray_trainer.py).
"""

from __future__ import annotations

from collections.abc import Mapping

# Log keys -> short names for the status table. verl names from volcengine/verl:
# verl/trainer/ppo/ray_trainer.py (actor/entropy), verl/workers/actor/dp_actor.py
# (actor/grad_norm, actor/ppo_kl, actor/pg_clipfrac, actor/kl_loss) and
# verl/trainer/ppo/rollout_corr_helper.py (rollout_corr/*, "mismatch/*" in older releases).
# fmt: off
ALIASES: dict[str, str] = {
    "loss": "loss", "train_loss": "loss", "train/loss": "loss",
    "learning_rate": "lr", "lr": "lr", "actor/lr": "lr", "train/learning_rate": "lr",
    "grad_norm": "grad_norm", "actor/grad_norm": "grad_norm", "train/grad_norm": "grad_norm",
    "entropy": "entropy", "actor/entropy": "entropy", "objective/entropy": "entropy",
    "actor/ppo_kl": "kl", "kl": "kl", "objective/kl": "kl",
    "actor/kl_loss": "kl_ref",
    "actor/pg_clipfrac": "clipfrac",
    "actor/pg_loss": "pg_loss",
    "rollout_corr/kl": "rollout_kl", "mismatch/kl": "rollout_kl",
    "rollout_corr/k3_kl": "rollout_k3_kl", "mismatch/k3_kl": "rollout_k3_kl",
    "rollout_corr/log_ppl_diff": "is_log_ratio", "mismatch/log_ppl_diff": "is_log_ratio",
    "rollout_corr/rollout_is_mean": "is_mean", "mismatch/rollout_is_mean": "is_mean",
    "training/rollout_probs_diff_mean": "probs_diff",
    "critic/score/mean": "reward", "critic/rewards/mean": "reward", "reward": "reward",
    "eval_loss": "eval_loss", "epoch": "epoch",
}
# fmt: on


def canonical(raw: Mapping[str, float]) -> dict[str, float]:
    """Short names for known keys. HF's end-of-training summary (`train_runtime`, an average
    `train_loss`) does not overwrite the latest loss."""
    skip = ("train_loss",) if "train_runtime" in raw else ()
    return {ALIASES[k]: v for k, v in raw.items() if k in ALIASES and k not in skip}
