"""Generated RL metric traces with known outcomes, written as each framework logs them.

A scenario is a per-step model of the metrics a GRPO/PPO run logs (entropy, grad norm,
reward and its spread, KL, train/inference mismatch, response length and truncation, step
time); a writer renders the steps in one framework's console format:

- verl      `(TaskRunner pid=N) step:N - key:value - ...`
- trl       tqdm frames and HF metric dicts (`{'loss': ..., 'reward': ...}`)
- openrlhf  a tqdm bar whose postfix carries act_loss, reward, kl, grad_norm, gen_len ...
- skyrl     loguru `Step N:` then a pprint'ed dict whose floats are strings

Every number comes from `random.Random(seed)`: a trace is reproducible from
(scenario, framework, seed). Failing scenarios go wrong at an onset step; healthy ones
include the traps from the research notes (slow entropy decline, grad spikes that recover,
long thinking runs near the length cap, high zero-variance share early on).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass

Step = dict[str, float]

FAILING = {  # scenario -> the families a KILL should name (one of them is enough)
    "entropy_collapse": {"entropy", "learning"},
    "grad_nan": {"grad", "reward"},
    "grad_explosion": {"grad", "reward"},
    "mismatch_drift": {"mismatch", "grad"},
    "never_learns": {"learning"},
    "reward_hack": {"hack", "entropy"},
    "frozen_engine": {"throughput", "liveness"},
    "truncation": {"truncation", "reward"},
    "kl_blowup": {"kl"},
}
HEALTHY = ("healthy", "healthy_slow_entropy", "healthy_spiky_grad", "healthy_thinking",
           "healthy_zero_std_early")  # fmt: skip
FRAMEWORKS = ("verl", "trl", "openrlhf", "skyrl")


@dataclass
class Trace:
    scenario: str
    framework: str
    seed: int
    steps: list[Step]
    expected: str  # KILL / NO-KILL / WATCH
    families: set[str]
    age_s: float = 60.0  # seconds since the log was last written when judged
    alive: bool = True

    @property
    def name(self) -> str:
        return f"{self.scenario}-{self.framework}-{self.seed}"

    def text(self) -> str:
        return WRITERS[self.framework](self.steps, random.Random(self.seed + 7))


def _healthy_step(i: int, n: int, r: random.Random, base: dict[str, float]) -> Step:
    prog = i / max(1, n - 1)
    noise = lambda s: math.exp(r.gauss(0, s))  # noqa: E731
    length = base["len"] * (1 + 0.3 * prog) * noise(0.06)
    reward = base["r0"] + base["gain"] * (1 - math.exp(-4 * prog)) + r.gauss(0, 0.03)
    return {
        "entropy": base["e0"] * (1 - 0.35 * prog) * noise(0.05),
        "grad_norm": base["g0"] * noise(0.25),
        "loss": r.gauss(0, 0.02),
        "reward": reward,
        "reward_std": max(0.05, base["rstd"] * noise(0.1)),
        "zero_std_frac": min(0.9, max(0.0, base["zstd"] + r.gauss(0, 0.05))),
        "kl": base["kl0"] + 0.02 * prog * noise(0.2),
        "mismatch": base["mm"] * noise(0.3),
        "resp_len": length,
        "resp_len_max": base["cap"],
        "clip_ratio": min(1.0, max(0.0, base["clip"] + r.gauss(0, 0.01))),
        "step_time": 40 + length * 0.12 * noise(0.08),
        "lr": 1e-6,
    }


def _base(r: random.Random) -> dict[str, float]:
    return {
        "e0": r.uniform(0.35, 0.9), "g0": r.uniform(0.05, 0.5), "r0": r.uniform(0.05, 0.45),
        "gain": r.uniform(0.1, 0.4), "rstd": r.uniform(0.2, 0.4), "zstd": r.uniform(0.1, 0.45),
        "kl0": r.uniform(0.0005, 0.003), "mm": r.uniform(1e-4, 6e-4),
        "len": r.uniform(250, 600), "cap": r.choice([1024.0, 2048.0, 4096.0]),
        "clip": r.uniform(0.0, 0.04),
    }  # fmt: skip


def _after(onset: int, fn: Callable[[Step, int], None]) -> Callable[[Step, int], None]:
    return lambda s, i: fn(s, i - onset) if i >= onset else None


def _mods(scenario: str, n: int, r: random.Random, base: dict[str, float]) -> Callable[..., None]:
    k = int(n * r.uniform(0.45, 0.7))  # onset

    def collapse(s: Step, d: int) -> None:
        s["entropy"] = max(0.004, s["entropy"] * math.exp(-0.45 * d) + r.uniform(0, 0.01))
        s["zero_std_frac"] = min(1.0, 0.97 + r.uniform(0, 0.03)) if d > 4 else s["zero_std_frac"]
        s["reward_std"] = s["reward_std"] * math.exp(-0.5 * d)
        s["grad_norm"] *= math.exp(-0.3 * d) if d > 4 else 1

    def nan(s: Step, d: int) -> None:
        s["grad_norm"] = math.nan if d >= 3 else s["grad_norm"] * 1e3
        s["loss"] = math.nan if d >= 3 else s["loss"]
        s["reward"] = max(0.0, s["reward"] * math.exp(-0.6 * d))
        s["resp_len"] = base["cap"] if d > 3 else s["resp_len"]

    def explode(s: Step, d: int) -> None:
        s["grad_norm"] *= 30 + 10 * d * r.uniform(0.5, 2)
        s["reward"] = max(0.0, s["reward"] * math.exp(-0.25 * d))
        s["kl"] += 0.05 * d

    def drift(s: Step, d: int) -> None:
        s["mismatch"] = base["mm"] * math.exp(0.35 * d) * r.uniform(0.8, 1.25)
        s["grad_norm"] *= 1 + 2.5 * d * r.uniform(0.6, 1.4)

    def hack(s: Step, d: int) -> None:
        s["reward"] += min(0.5, 0.06 * d)
        s["resp_len"] *= max(0.12, math.exp(-0.25 * d))
        s["step_time"] = 40 + s["resp_len"] * 0.12
        s["entropy"] *= max(0.05, math.exp(-0.2 * d))

    def freeze(s: Step, d: int) -> None:
        s["step_time"] *= 15 + 3 * d * r.uniform(0.5, 1.5)

    def trunc(s: Step, d: int) -> None:
        s["resp_len"] = base["cap"] * (1 - r.uniform(0, 0.004))
        s["clip_ratio"] = min(1.0, 0.93 + r.uniform(0, 0.07))
        s["reward"] = max(0.0, s["reward"] * math.exp(-0.3 * d))
        s["step_time"] = 40 + s["resp_len"] * 0.12

    def klb(s: Step, d: int) -> None:
        s["kl"] = s["kl"] + 0.15 * d * r.uniform(0.7, 1.3)
        s["reward"] = base["r0"] + r.gauss(0, 0.03)

    table: dict[str, Callable[[Step, int], None]] = {
        "entropy_collapse": collapse, "grad_nan": nan, "grad_explosion": explode,
        "mismatch_drift": drift, "reward_hack": hack, "frozen_engine": freeze,
        "truncation": trunc, "kl_blowup": klb,
    }  # fmt: skip
    if scenario in table:
        return _after(k, table[scenario])
    return lambda s, i: None


def _healthy_mods(scenario: str, n: int, r: random.Random) -> Callable[[Step, int], None]:
    def slow(s: Step, i: int) -> None:  # entropy falls 4x, slowly: the normal mechanism
        s["entropy"] *= math.exp(-1.4 * i / n)

    def spiky(s: Step, i: int) -> None:
        if r.random() < 0.06:
            s["grad_norm"] *= r.uniform(8, 40)

    def thinking(s: Step, i: int) -> None:
        s["clip_ratio"] = min(1.0, max(0.0, 0.6 + r.gauss(0, 0.05)))
        s["resp_len"] = s["resp_len_max"] * r.uniform(0.7, 0.8)

    def zstd(s: Step, i: int) -> None:
        s["zero_std_frac"] = max(0.1, 0.85 - 0.7 * i / n + r.gauss(0, 0.04))

    table = {"healthy_slow_entropy": slow, "healthy_spiky_grad": spiky,
             "healthy_thinking": thinking, "healthy_zero_std_early": zstd}  # fmt: skip
    return table.get(scenario, lambda s, i: None)


def with_is_log_ratio(trace: Trace) -> Trace:
    """The trace as verl logs it with rollout correction on: `rollout_corr/log_ppl_diff` too,
    the signed mean log-ratio of the trainer's to the rollout engine's token probabilities.
    For small differences K3 KL ~ log-ratio^2 / 2, so its size follows the mismatch the
    scenario models (no random draw: every other number of the trace stays as it was)."""
    for s in trace.steps:
        s["is_log_ratio"] = math.sqrt(2 * s["mismatch"])
    return trace


def make(scenario: str, framework: str, seed: int, steps: int | None = None) -> Trace:
    r = random.Random(f"{scenario}/{framework}/{seed}")
    n = steps or r.randint(60, 160)
    base = _base(r)
    if scenario == "never_learns":
        base.update(gain=0.0, rstd=0.0)
    mod = _mods(scenario, n, r, base)
    hmod = _healthy_mods(scenario, n, r)
    out = []
    for i in range(n):
        s = _healthy_step(i, n, r, base)
        if scenario == "never_learns":
            s.update(reward=round(base["r0"], 1), reward_std=0.0, zero_std_frac=1.0)
        hmod(s, i)
        mod(s, i)
        out.append(s)
    if scenario in FAILING:
        expected, families = "KILL", FAILING[scenario]
    else:
        expected, families = "NO-KILL", set()
    if n < 20:
        expected, families = "WATCH", set()
    trace = Trace(scenario, framework, seed, out, expected, families)
    if scenario == "frozen_engine":
        trace.age_s = 24 * 3600.0  # the engine hangs after its last (very slow) steps
    return trace


# -- writers -------------------------------------------------------------------------------
# fmt: off
VERL = {"entropy": "actor/entropy", "grad_norm": "actor/grad_norm", "loss": "actor/pg_loss",
        "kl": "actor/kl_loss", "mismatch": "rollout_corr/k3_kl", "reward": "critic/score/mean",
        "resp_len": "response_length/mean", "resp_len_max": "response_length/max",
        "clip_ratio": "response_length/clip_ratio", "step_time": "timing_s/step",
        "lr": "actor/lr", "is_log_ratio": "rollout_corr/log_ppl_diff"}
TRL = {"loss": "loss", "grad_norm": "grad_norm", "lr": "learning_rate",
       "resp_len": "completions/mean_length", "resp_len_max": "completions/max_length",
       "clip_ratio": "completions/clipped_ratio", "reward": "reward", "reward_std": "reward_std",
       "zero_std_frac": "frac_reward_zero_std", "entropy": "entropy", "kl": "kl",
       "mismatch": "sampling/sampling_logp_difference/mean", "step_time": "step_time"}
OPENRLHF = {"loss": "act_loss", "reward": "reward", "resp_len": "gen_len", "kl": "kl",
            "lr": "act_lr", "grad_norm": "grad_norm"}
SKYRL = {"entropy": "policy/policy_entropy", "grad_norm": "policy/grad_norm",
         "loss": "policy/policy_loss", "kl": "policy/policy_kl", "reward": "reward/avg_raw_reward",
         "resp_len": "generate/avg_num_tokens", "resp_len_max": "generate/max_num_tokens",
         "mismatch": "policy/rollout_train_logprobs_abs_diff_mean", "step_time": "timing/step"}
# fmt: on


def _v(x: float, digits: int = 3) -> str:
    return "nan" if math.isnan(x) else f"{x:.{digits}f}" if abs(x) >= 1e-3 else f"{x:.3e}"


def write_verl(steps: list[Step], r: random.Random) -> str:
    lines = ["(TaskRunner pid=4242) Training from scratch", "(TaskRunner pid=4242) step:0 - "
             "val-core/openai/gsm8k/reward/mean@1:0.212"]  # fmt: skip
    for i, s in enumerate(steps, start=1):
        parts = [f"global_seqlen/mean:{s['resp_len'] * 512:.1f}"]
        parts += [f"{VERL[k]}:{_v(s[k])}" for k in VERL if k in s]
        adv = 0.0 if s.get("zero_std_frac", 0) >= 0.999 else 2.5
        parts += [f"critic/advantages/max:{adv:.3f}", f"critic/advantages/min:{-adv:.3f}"]
        parts.append(f"perf/throughput:{s['resp_len'] * 512 / s['step_time']:.1f}")
        lines.append(f"(TaskRunner pid=4242) step:{i} - " + " - ".join(parts))
        if r.random() < 0.3:
            lines.append(f"(WorkerDict pid=5151) INFO: rank 0 step {i} done")
    return "\n".join(lines) + "\n"


def write_trl(steps: list[Step], r: random.Random) -> str:
    n = len(steps)
    out = ["***** Running training *****"]
    for i, s in enumerate(steps, start=1):
        rate = f"{s['step_time']:.2f}s/it"
        out.append(f"\r{100 * i // n:3d}%|##        | {i}/{n} [00:{i % 60:02d}<01:00, {rate}]")
        d = {TRL[k]: round(s[k], 6) if not math.isnan(s[k]) else math.nan for k in TRL}
        d["epoch"] = round(i / n, 4)
        out.append("\n" + repr(d) + "\n")
    out.append(f"\r100%|##########| {n}/{n} [01:00<00:00, 1.5s/it]\n")
    return "".join(out)


def write_openrlhf(steps: list[Step], r: random.Random) -> str:
    n = len(steps)
    out = []
    for i, s in enumerate(steps, start=1):
        post = ", ".join(f"{OPENRLHF[k]}={_v(s[k], 4)}" for k in OPENRLHF)
        rate = f"{s['step_time']:.2f}s/it"
        out.append(
            f"\rEpisode [1/1]: {100 * i // n:3d}%|##   | {i}/{n} [01:00<02:00, {rate}, {post}]"
        )
    return "".join(out) + "\n"


def write_skyrl(steps: list[Step], r: random.Random) -> str:
    out = []
    for i, s in enumerate(steps, start=1):
        d = {SKYRL[k]: f"{s[k]:.4f}" for k in SKYRL}
        d["trainer/global_step"] = i  # type: ignore[assignment]
        body = ",\n ".join(f"{k!r}: {v!r}" for k, v in sorted(d.items()))
        out.append(f"2025-06-01 10:{i % 60:02d}:00.000 | INFO     | skyrl_train.trainer:train:412 "
                   f"- Step {i}: \n{{{body}}}")  # fmt: skip
        out.append(
            f"reward/avg_pass_at_8: {s['reward']:.4f}, reward/avg_raw_reward: {s['reward']:.4f}"
        )
    return "\n".join(out) + "\n"


WRITERS: dict[str, Callable[[list[Step], random.Random], str]] = {
    "verl": write_verl, "trl": write_trl, "openrlhf": write_openrlhf, "skyrl": write_skyrl,
}  # fmt: skip


def corpus(seeds: int = 2) -> list[Trace]:
    """Every scenario in every framework, `seeds` traces each, plus short runs (WATCH)."""
    out = [make(sc, fw, s) for sc in (*FAILING, *HEALTHY) for fw in FRAMEWORKS
           for s in range(seeds)]  # fmt: skip
    out += [make("healthy", fw, 100 + s, steps=8 + 4 * s) for fw in FRAMEWORKS for s in range(2)]
    out += [make("grad_nan", fw, 200 + s, steps=12) for fw in FRAMEWORKS for s in range(2)]
    return out
