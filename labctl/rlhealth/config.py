"""The thresholds and windows of every rl-health signal (`[rl_health]` in the config).

Defaults are cited to the research behind the issue: a baseline of early steps after warm-up
(5..20) against the last max(10, 5% of steps); ratios to the run's own baseline, absolute
rules only for invariants (NaN streaks, zero reward variance, truncation, no step for many
step times). A wrong KILL is the expensive mistake, so KILL needs two independent signal
families and at least `min_steps` points; one family alone is WATCH.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from labctl.rlhealth.logread import ReadConfig


@dataclass(frozen=True)
class Thresholds:
    # history and windows
    min_steps: int = 20  # fewer training points: WATCH (insufficient history), never KILL
    warmup_steps: int = 5  # points skipped before the baseline
    baseline_steps: int = 15  # points in the baseline window
    window_steps: int = 10  # smallest current window (also >= window_share x points)
    window_share: float = 0.05
    sustain: float = 0.6  # share of the current window that must agree with a rule
    kill_families: int = 2  # independent signal families needed for KILL
    # entropy: collapse toward zero, a sudden drop, or a blow-up
    entropy_floor: float = 0.05  # current median below this ...
    entropy_collapse_ratio: float = 0.2  # ... and below this share of the baseline
    entropy_drop: float = 0.6  # fell by this share within one window, and below the baseline
    entropy_blowup_ratio: float = 3.0  # rose this many times over the baseline ...
    entropy_max: float = 2.0  # ... and above this (verl#781; "ok as long as it is < 1")
    # gradients
    grad_norm_ratio: float = 10.0  # current median this many times the baseline
    nan_streak: int = 3  # non-finite grad norm or loss this many points in a row
    # train/inference mismatch (importance-sampling / TIS log-ratio, K3 KL, prob diff)
    mismatch_ratio: float = 10.0  # sustained rise over the run's own baseline
    mismatch_floor: float = 1e-3  # below this level the rise is noise (dense K3 KL 1e-5..1e-3)
    log_ratio_max: float = 0.5  # |signed IS log-ratio| above this (as in [thresholds])
    # KL to the reference policy
    kl_max: float = 1.0  # sustained KL above this (a run grew to 3.0 and was re-run)
    kl_ratio: float = 50.0  # or this many times the baseline ...
    kl_min: float = 0.2  # ... and above this
    # nothing learns
    zero_std_frac: float = 0.95  # share of groups with all-equal rewards (TRL: 1.0 = dead)
    dead_grad: float = 1e-8  # grad norm at or below this is no update
    # reward
    reward_noise: float = 3.0  # a change must exceed this many baseline MADs ...
    reward_rel: float = 0.25  # ... and this share of the baseline's magnitude (or 0.05 abs)
    reward_drop: float = 0.5  # reward fell by this share of the baseline
    length_collapse_ratio: float = 0.3  # response length fell to this share of the baseline
    # truncation
    clip_ratio_max: float = 0.9  # share of responses cut at the max length (thinking ~0.6)
    pinned_ratio: float = 0.98  # mean length at this share of the max length
    # throughput and liveness
    throughput_ratio: float = 10.0  # step time up (tokens/s down) by an order of magnitude
    stall_factor: float = 10.0  # no new step for this many median step times ...
    stall_min_s: float = 1800.0  # ... and at least this long

    @classmethod
    def from_mapping(cls, values: dict[str, Any]) -> Thresholds:
        names = {f.name: f.type for f in fields(cls)}
        return cls(**{k: v for k, v in values.items() if k in names})


@dataclass(frozen=True)
class Config:
    thresholds: Thresholds = field(default_factory=Thresholds)
    read: ReadConfig = field(default_factory=ReadConfig)
    wandb_samples: int = 500  # rows asked of the W&B API per key (sampled history)
    evidence_points: int = 6  # values quoted per window in the evidence
