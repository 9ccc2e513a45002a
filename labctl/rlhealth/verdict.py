"""KILL / NO-KILL / WATCH from the signals, with a confidence and what to check next.

- WATCH when the history is shorter than `min_steps` (never KILL on a handful of steps), when
  no RL metric was found, or when only one signal family fired (or only weak signals, such
  as a silent log whose process may be dead).
- KILL when at least `kill_families` independent families fired, at least one strongly and
  the rest strongly or as corroboration (a NaN streak with a reward drop; entropy collapse
  with zero reward variance; zero variance with a reward that is not improving; a stuck
  rollout engine: throughput collapse with a frozen step counter ...). labctl never kills
  anything: a person decides.
- NO-KILL otherwise, with the positive evidence (reward not falling, gradients flowing).
"""

from __future__ import annotations

from typing import Any

from labctl.rlhealth import signals, signals_run
from labctl.rlhealth.config import Thresholds
from labctl.rlhealth.history import History
from labctl.rlhealth.signal import Signal, fmt, frame
from labctl.rlhealth.signals_run import Live

CORE = ("entropy", "grad_norm", "reward", "kl", "mismatch", "resp_len", "clip_ratio", "step_time")
# fmt: off
CHECKS: dict[str, str] = {
    "entropy_collapse": "sample recent rollouts for repeated text; consider a higher clip "
                        "(DAPO clip-higher, eps_high 0.28), an entropy bonus or a lower LR",
    "entropy_drop": "compare rollouts before and after the drop; look for a data or reward "
                    "change at that step",
    "entropy_blowup": "read recent rollouts for gibberish; check the LR, clip ratios and "
                      "whether truncated samples dominate (response_length/clip_ratio)",
    "grad_nonfinite": "find the first non-finite step in the log; lower the LR, check grad "
                      "clipping and bf16/fp16 overflow; verl skips such steps but they recur",
    "loss_nonfinite": "find the first NaN loss; check the reward and advantage values at "
                      "that step and the LR",
    "grad_explosion": "check grad clipping (max_grad_norm), the LR schedule and the "
                      "train/inference mismatch metrics at the same steps",
    "mismatch_drift": "compare the rollout engine's and the trainer's dtypes and kernels; "
                      "enable TIS / rollout correction; check the vLLM version",
    "log_ratio_drift": "check the importance-sampling ratios and the rollout engine's "
                       "sampling settings (temperature, top-p) against the trainer's",
    "kl_blowup": "check kl_coef and the LR; read rollouts for the same reply to every prompt",
    "zero_variance": "score a few rollouts by hand: a reward function that gives every "
                     "sample the same score gives zero advantage (format bug, parser "
                     "mismatch, too easy or too hard prompts)",
    "dead_updates": "check that the optimizer steps (LR > 0, frozen parameters, LoRA "
                    "targets) and that the loss depends on the policy",
    "reward_flat": "check the reward function and the data pipeline: the reward never moved",
    "reward_drop": "read rollouts at the drop; check for NaN/inf steps and the LR",
    "reward_hack": "read rollouts: a rising reward with ever shorter replies suggests the "
                   "reward is being gamed (format reward without the answer)",
    "truncation": "raise the max response length or add an overlong penalty; check that the "
                  "model emits EOS (response_length/max vs the cap)",
    "length_pinned": "check that the model emits EOS and the max response length",
    "length_collapse": "read the shortest recent responses: empty or format-only answers",
    "throughput_collapse": "check the rollout engine (vLLM/SGLang) log for stuck requests, "
                           "GPU utilisation and whether a node degraded",
    "step_frozen": "check whether the process is alive and where it waits (py-spy dump, "
                   "nvidia-smi, the rollout engine log)",
}
# fmt: on
DETECTORS = (
    signals.entropy,
    signals.grad,
    signals.mismatch,
    signals.kl,
    signals.truncation,
    signals_run.learning,
    signals_run.reward,
    signals_run.throughput,
    signals_run.length,
)


def detect(h: History, t: Thresholds, live: Live) -> list[Signal]:
    out: list[Signal] = []
    for detector in DETECTORS:
        out += detector(h, t)
    out += signals_run.liveness(h, t, live)
    return out


def _healthy(h: History, t: Thresholds) -> list[str]:
    notes = []
    r = frame(h.series("reward"), t)
    if r is not None:
        b, c = r.med("baseline"), r.med("current")
        trend = "rising" if c > b else "holding" if c == b else "slightly lower"
        notes.append(f"reward {trend}: {fmt(b)} -> {fmt(c)}")
    g = h.series("grad_norm")
    if len(g) and g.values[-1] > t.dead_grad:
        notes.append(f"gradients finite and non-zero (last {fmt(g.values[-1])})")
    e = frame(h.series("entropy"), t)
    if e is not None:
        notes.append(f"entropy {fmt(e.med('baseline'))} -> {fmt(e.med('current'))}")
    return notes


def decide(h: History, t: Thresholds, live: Live) -> dict[str, Any]:
    """The recommendation part of an `rl_health` record."""
    sigs = detect(h, t, live)
    strong = sorted({s.family for s in sigs if s.strong})
    backing = sorted({s.family for s in sigs if s.strength == "corroborating"} - set(strong))
    if set(strong) <= {"liveness"}:
        backing = []  # a frozen run logs no new reward: its old trend corroborates nothing
    present = h.present()
    missing = [k for k in CORE if k not in present]
    n = h.steps
    if n < t.min_steps:
        rec, reason = "WATCH", "insufficient_history"
        message = f"only {n} training step(s) logged; need {t.min_steps} before judging"
    elif not present & set(CORE):
        rec, reason, message = "WATCH", "no_metrics", "no RL metric found in what was read"
    elif strong and len(strong) + len(backing) >= t.kill_families:
        rec, reason = "KILL", "+".join(strong + backing)
        message = "; ".join(s.message for s in sigs if s.strength != "weak")
    elif strong:
        rec, reason = "WATCH", "single_signal"
        message = "; ".join(s.message for s in sigs if s.strength != "corroborating")
    else:
        rec, reason = "NO-KILL", "healthy"
        message = "; ".join(_healthy(h, t)) or "no collapse signal fired"
    shown = [s for s in sigs if s.strength != "corroborating" or rec == "KILL"]
    checks = list(dict.fromkeys(CHECKS[s.name] for s in shown if s.name in CHECKS))
    if reason == "insufficient_history":
        checks.append(f"run rl-health again after {t.min_steps - n} more step(s)")
    return {
        "recommendation": rec,
        "confidence": _confidence(rec, reason, sigs, strong, n, missing, t),
        "reason": reason,
        "message": message,
        "signals": [s.to_dict() for s in shown],
        "families": strong + backing if rec == "KILL" else strong,
        "checks": checks,
        "healthy_evidence": _healthy(h, t) if rec == "NO-KILL" else [],
        "missing_metrics": missing,
    }


def _confidence(
    rec: str, reason: str, sigs: list[Signal], strong: list[str], n: int, missing: list[str],
    t: Thresholds,
) -> float:  # fmt: skip
    """How sure the recommendation is (0..1), from the evidence behind it."""
    long = n >= 2 * t.min_steps
    if rec == "KILL":
        value = 0.55 + 0.15 * (len(strong) - 1) + 0.1 * long
        return round(min(0.95, value + 0.05 * (len(sigs) > len(strong))), 2)
    if rec == "NO-KILL":
        known = len(CORE) - len(missing)
        return round(min(0.9, 0.5 + 0.1 * long + 0.05 * min(known, 6)), 2)
    if reason == "single_signal":
        return 0.6
    return 0.5
