"""rl-health: when an RL job in an untested setting is KILL, NO-KILL or WATCH."""

from __future__ import annotations

from labctl.settings.setting import Setting
from labctl.settings.setting import setting as _s

# rl-health (a KILL / NO-KILL / WATCH look at RL jobs in untested settings)
RL_HEALTH: tuple[Setting, ...] = (
    _s(
        "rl_health.untested_names",
        ["*smoke*", "*debug*", "*untested*", "test-*", "*-test", "*-test-*"],
        "running RL jobs whose names match these patterns (fnmatch) are untested",
        kind=list,
    ),
    _s(
        "rl_health.untested_tags",
        ["untested", "smoke", "debug"],
        "... or that carry a tag",
        kind=list,
    ),
    _s("rl_health.untested_age_h", 24.0, "... or that poll first saw this recently (0: never)"),
    _s("rl_health.head_bytes", 1048576, "log bytes read from the start (the baseline)"),
    _s("rl_health.tail_bytes", 8388608, "log bytes read from the end (the current window)"),
    _s("rl_health.samples", 8, "evenly spaced regions read between head and tail"),
    _s("rl_health.sample_bytes", 262144, "bytes per sampled region"),
    _s("rl_health.max_read_bytes", 16777216, "most bytes read per log or run file"),
    _s("rl_health.wandb", True, "also read the job's W&B run file, and the API with a key"),
    _s("rl_health.wandb_samples", 500, "history rows asked of the W&B API per metric"),
    _s("rl_health.min_steps", 20, "fewer training points: WATCH, never KILL"),
    _s("rl_health.kill_families", 2, "independent signal families needed for KILL"),
    _s("rl_health.warmup_steps", 5, "points skipped before the baseline window"),
    _s("rl_health.baseline_steps", 15, "points in the baseline window"),
    _s("rl_health.window_steps", 10, "smallest current window (points)"),
    _s("rl_health.window_share", 0.05, "current window: at least this share of all points"),
    _s("rl_health.sustain", 0.6, "share of the current window that must agree with a rule"),
    _s("rl_health.entropy_floor", 0.05, "entropy collapse: median below this ..."),
    _s("rl_health.entropy_collapse_ratio", 0.2, "... and below this share of the baseline"),
    _s("rl_health.entropy_drop", 0.6, "sudden entropy drop: this share within one window"),
    _s("rl_health.entropy_blowup_ratio", 3.0, "entropy blow-up: this many times the baseline ..."),
    _s("rl_health.entropy_max", 2.0, "... and above this"),
    _s("rl_health.grad_norm_ratio", 10.0, "grad explosion: median this many times the baseline"),
    _s("rl_health.nan_streak", 3, "non-finite grad norm or loss this many points in a row"),
    _s("rl_health.mismatch_ratio", 10.0, "train/inference mismatch: rise over its baseline"),
    _s("rl_health.mismatch_floor", 0.001, "mismatch below this level is noise"),
    _s("rl_health.log_ratio_max", 0.5, "|importance-sampling log-ratio| above this: drift"),
    _s("rl_health.kl_max", 1.0, "KL to the reference above this: blow-up ..."),
    _s("rl_health.kl_ratio", 50.0, "... or this many times its baseline ..."),
    _s("rl_health.kl_min", 0.2, "... and above this"),
    _s("rl_health.zero_std_frac", 0.95, "groups with all-equal rewards above this share: dead"),
    _s("rl_health.dead_grad", 1e-08, "grad norm at or below this: no update"),
    _s("rl_health.reward_noise", 3.0, "a reward change must exceed this many baseline MADs ..."),
    _s("rl_health.reward_rel", 0.25, "... and this share of the baseline (or 0.05)"),
    _s("rl_health.reward_drop", 0.5, "reward drop: this share of the baseline"),
    _s("rl_health.length_collapse_ratio", 0.3, "response length collapse: below this share"),
    _s("rl_health.clip_ratio_max", 0.9, "truncation: share of responses cut at the max length"),
    _s("rl_health.pinned_ratio", 0.98, "truncation: mean length at this share of the longest"),
    _s("rl_health.throughput_ratio", 10.0, "step time up (tokens/s down) this many times"),
    _s("rl_health.stall_factor", 10.0, "frozen: no step for this many median step times ..."),
    _s("rl_health.stall_min_s", 1800.0, "... and at least this many seconds"),
)
