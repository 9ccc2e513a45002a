"""Which bucket a job belongs to — RL, SFT, Datagen, Eval or Other — and its red flags.

Pure functions over job records and the config's `[buckets]` / `[thresholds]` sections.
An explicit `job_type` (or `bucket`) field on the record wins; otherwise the first bucket
whose rules match the job's name (fnmatch, case-insensitive), partition or tags.

    [buckets.RL]
    names = ["rl-*", "*grpo*"]     # replaces the default name patterns of that bucket
    partitions = ["rl"]
    tags = ["rl"]

    [thresholds]
    entropy_min = 0.05             # RL entropy below this: collapse
    grad_norm_max = 100.0          # grad norm above this (or NaN/inf): exploding
    log_ratio_max = 0.5            # |importance-sampling log-ratio| above this: drift
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fnmatch import fnmatchcase
from typing import Any

from labctl.errors import ConfigError

BUCKETS = ("RL", "SFT", "Datagen", "Eval", "Other")
DEFAULT_RULES: dict[str, dict[str, list[str]]] = {
    "RL": {
        "names": [
            "rl-*",
            "rl_*",
            "*-rl-*",
            "*grpo*",
            "*ppo*",
            "*dapo*",
            "*rlhf*",
            "*verl*",
            "*reinforce*",
            "*-rl",
        ],
        "partitions": [],
        "tags": ["rl"],
    },
    "SFT": {
        "names": [
            "sft-*",
            "sft_*",
            "*-sft*",
            "*finetune*",
            "*fine-tune*",
            "*pretrain*",
            "*distill*",
        ],
        "partitions": [],
        "tags": ["sft", "train"],
    },
    "Datagen": {
        "names": ["datagen-*", "*datagen*", "tracegen-*", "gen-*", "*synth*", "*rollout-gen*"],
        "partitions": [],
        "tags": ["datagen", "data"],
    },
    "Eval": {
        "names": ["eval-*", "eval_*", "*-eval*", "*bench*", "*mmlu*", "*gsm8k*", "*humaneval*"],
        "partitions": [],
        "tags": ["eval"],
    },
}
DEFAULT_THRESHOLDS = {"entropy_min": 0.05, "grad_norm_max": 100.0, "log_ratio_max": 0.5}
ALIASES = {b.lower(): b for b in BUCKETS} | {"catch-all": "Other", "datagen": "Datagen"}


def rules_from_config(section: Mapping[str, Any]) -> dict[str, dict[str, list[str]]]:
    rules = {name: {k: list(v) for k, v in r.items()} for name, r in DEFAULT_RULES.items()}
    for name, table in section.items():
        bucket = ALIASES.get(str(name).lower())
        if bucket is None or bucket == "Other" or not isinstance(table, dict):
            raise ConfigError(f"[buckets.{name}]: buckets are RL, SFT, Datagen and Eval")
        for key, value in table.items():
            if key not in ("names", "partitions", "tags") or not isinstance(value, list):
                raise ConfigError(f"[buckets.{name}] {key}: expected names/partitions/tags lists")
            rules[bucket][key] = [str(v) for v in value]
    return rules


def thresholds_from_config(section: Mapping[str, Any]) -> dict[str, float]:
    out = dict(DEFAULT_THRESHOLDS)
    for key, value in section.items():
        if key not in out or isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(f"[thresholds] {key}: known numbers are {', '.join(out)}")
        out[key] = float(value)
    return out


def bucket_of(rec: Mapping[str, Any], rules: Mapping[str, Mapping[str, list[str]]]) -> str:
    explicit = rec.get("job_type") or rec.get("bucket")
    if explicit:
        return ALIASES.get(str(explicit).lower(), "Other")
    name = str(rec.get("name") or "").lower()
    partition = str(rec.get("partition") or "").lower()
    tags = {str(t).lower() for t in rec.get("tags") or []}
    for bucket, rule in rules.items():
        if any(fnmatchcase(name, p.lower()) for p in rule.get("names", [])):
            return bucket
        if partition and partition in {p.lower() for p in rule.get("partitions", [])}:
            return bucket
        if tags & {t.lower() for t in rule.get("tags", [])}:
            return bucket
    return "Other"


def number(value: Any) -> float | None:
    """A metric as a float (NaN for "nan"/"NaN"), or None when absent or not a number."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(str(value))
    except ValueError:
        return None


def rl_signals(rec: Mapping[str, Any]) -> dict[str, float | None]:
    """entropy, grad_norm and the IS log-ratio from the record's progress metrics."""
    progress = rec.get("progress") or {}
    metrics = progress.get("metrics") or progress.get("signals") or {}
    ratio = metrics.get("is_log_ratio")
    if ratio is None:
        ratio = metrics.get("rollout_kl", metrics.get("kl"))
    return {
        "entropy": number(metrics.get("entropy")),
        "grad_norm": number(metrics.get("grad_norm")),
        "log_ratio": number(ratio),
    }


def flags(signals: Mapping[str, float | None], limits: Mapping[str, float]) -> set[str]:
    """The signals that are red: entropy collapse, exploding grad norm, log-ratio drift."""
    out = set()
    entropy, grad, ratio = signals["entropy"], signals["grad_norm"], signals["log_ratio"]
    if entropy is not None and (math.isnan(entropy) or entropy < limits["entropy_min"]):
        out.add("entropy")
    if grad is not None and (not math.isfinite(grad) or grad > limits["grad_norm_max"]):
        out.add("grad_norm")
    if ratio is not None and (not math.isfinite(ratio) or abs(ratio) > limits["log_ratio_max"]):
        out.add("log_ratio")
    return out
