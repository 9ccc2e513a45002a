"""Run-level detectors: nothing learns, reward falls or is hacked, throughput and liveness.

`Live` carries what only the caller knows: the time now, when the log (or W&B run) was last
written, whether the scheduler says the process is alive, and when poll last saw the step
counter rise. A silent log is only a strong signal when the process is known to be alive.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

from labctl.rlhealth.config import Thresholds
from labctl.rlhealth.history import History, Series
from labctl.rlhealth.signal import Frame, Signal, fmt, frame, from_frame
from labctl.rlhealth.stats import mad, median, ratio, theil_sen


def learning(h: History, t: Thresholds) -> list[Signal]:
    """All-equal rewards in every group (zero advantage), updates of size zero, or a reward
    that never moved at all."""
    out: list[Signal] = []
    f = frame(h.series("zero_std_frac"), t)
    if f is not None and f.share("current", lambda v: v >= t.zero_std_frac) >= t.sustain:
        out.append(from_frame(
            f, "zero_variance", "learning",
            f"share of groups with all-equal rewards >= {t.zero_std_frac}",
            f"{f.med('current'):.0%} of groups have zero reward variance: no advantage, "
            "nothing to learn from",
        ))  # fmt: skip
    elif (f := frame(h.series("reward_std"), t)) is not None and f.share(
        "current", lambda v: abs(v) <= 1e-9
    ) >= t.sustain:
        out.append(from_frame(
            f, "zero_variance", "learning", "reward std == 0 over most of the window",
            "reward standard deviation is 0: every sample scores the same",
        ))  # fmt: skip
    elif (out_adv := _zero_advantage(h, t)) is not None:
        out.append(out_adv)
    f = frame(h.series("grad_norm"), t)
    if f is not None and f.share("current", lambda v: v <= t.dead_grad) >= t.sustain:
        out.append(from_frame(
            f, "dead_updates", "learning", f"grad norm <= {t.dead_grad} over most of the window",
            "grad norm is 0: the policy is not being updated",
        ))  # fmt: skip
    r = frame(h.series("reward"), t)
    if r is not None and not out:
        vals = r.values("baseline") + r.values("current")
        if max(vals) - min(vals) <= 1e-9:
            out.append(from_frame(
                r, "reward_flat", "learning", "reward identical in baseline and current windows",
                f"reward stuck at {fmt(vals[-1])} since the baseline",
            ))  # fmt: skip
    return out


def _zero_advantage(h: History, t: Thresholds) -> Signal | None:
    hi, lo = h.series("adv_max"), h.series("adv_min")
    f = frame(hi, t)
    if f is None or len(lo) != len(hi):
        return None
    a, b = f.w.current
    flat = [
        abs(x) <= 1e-9 and abs(y) <= 1e-9
        for x, y in zip(hi.values[a:b], lo.values[a:b], strict=True)
    ]
    if sum(flat) / max(1, len(flat)) < t.sustain:
        return None
    return from_frame(
        f, "zero_variance", "learning", "advantages max == min == 0 over most of the window",
        "every advantage is 0: all samples of each group scored the same",
    )  # fmt: skip


def _noise(f: Frame, t: Thresholds) -> float:
    base = f.values("baseline")
    return max(t.reward_noise * mad(base), t.reward_rel * abs(median(base)), 0.05)


def reward(h: History, t: Thresholds) -> list[Signal]:
    """Reward falling well below its baseline, jumping while responses collapse, or not
    improving at all (the last only corroborates another family: plateaus are normal)."""
    f = frame(h.series("reward"), t)
    if f is None:
        return []
    b, c, noise = f.med("baseline"), f.med("current"), _noise(f, t)
    out = _reward_moves(h, t, f, b, c, noise)
    recent = f.values("previous") + f.values("current")
    slope, spread = theil_sen(recent)
    rise = slope * (len(recent) - 1)
    if not out and rise <= t.reward_noise * spread:
        out.append(from_frame(
            f, "reward_stagnant", "progress",
            f"trend over the last two windows within {t.reward_noise} x its noise "
            "(corroborates another signal only)",
            f"reward not improving: {fmt(rise)} over the last {len(recent)} points "
            f"(noise {fmt(spread)})",
            strength="corroborating",
        ))  # fmt: skip
    return out


def _reward_moves(
    h: History, t: Thresholds, f: Frame, b: float, c: float, noise: float
) -> list[Signal]:
    if c < b - max(noise, t.reward_drop * abs(b)):
        return [from_frame(
            f, "reward_drop", "reward",
            f"median fell by > {t.reward_drop:.0%} of the baseline and > the baseline noise",
            f"reward fell to {fmt(c)} from a baseline of {fmt(b)}",
            ratio=ratio(c, b),
        )]  # fmt: skip
    g = frame(h.series("resp_len"), t, from_start=True)
    if c > b + noise and g is not None:
        lb, lc = g.med("baseline"), g.med("current")
        if (
            lc <= t.length_collapse_ratio * lb
            and g.share("current", lambda v: v <= t.length_collapse_ratio * lb) >= t.sustain
        ):
            sig = from_frame(
                f, "reward_hack", "hack",
                f"reward up by > the baseline noise while response length fell to "
                f"<= {t.length_collapse_ratio} x its baseline",
                f"reward rose {fmt(b)} -> {fmt(c)} while response length fell "
                f"{fmt(lb)} -> {fmt(lc)} tokens",
                ratio=ratio(lc, lb),
            )  # fmt: skip
            sig.lines += from_frame(g, "", "", "", "").lines
            return [sig]
    return []


def length(h: History, t: Thresholds) -> list[Signal]:
    """Responses shrinking to a fraction of their baseline: corroborates another signal only
    (shorter answers with rising accuracy can be healthy)."""
    f = frame(h.series("resp_len"), t, from_start=True)
    if f is None:
        return []
    b, c = f.med("baseline"), f.med("current")
    limit = t.length_collapse_ratio * b
    if b > 0 and c <= limit and f.share("current", lambda v: v <= limit) >= t.sustain:
        return [from_frame(
            f, "length_collapse", "length",
            f"median response length <= {t.length_collapse_ratio} x baseline "
            "(corroborates another signal only)",
            f"responses shrank from {fmt(b)} to {fmt(c)} tokens", ratio=ratio(c, b),
            strength="corroborating",
        )]  # fmt: skip
    return []


def _per_token(h: History) -> Series:
    """Step time per generated token when the response length is logged (step time grows
    with response length; that is not a stuck engine)."""
    per = h.series("gen_ms_per_token")
    if len(per) >= 3:
        return per
    st = h.series("step_time")
    pts = [p for p in st.points if p.metrics.get("resp_len", 0) > 0]
    if len(pts) >= 0.8 * max(1, len(st)) and pts:
        return Series(
            "step_time", [p.metrics["step_time"] / p.metrics["resp_len"] for p in pts], pts
        )
    return st


def throughput(h: History, t: Thresholds) -> list[Signal]:
    slow = frame(_per_token(h), t)
    if slow is not None:
        b, c = slow.med("baseline"), slow.med("current")
        if (
            b > 0
            and c >= t.throughput_ratio * b
            and slow.share("current", lambda v: v >= t.throughput_ratio * b) >= t.sustain
        ):
            return [from_frame(
                slow, "throughput_collapse", "throughput",
                f"step time (per token when known) >= {t.throughput_ratio} x baseline",
                f"steps are {ratio(c, b):.0f}x slower than at the start", ratio=ratio(c, b),
            )]  # fmt: skip
    fast = frame(h.series("tokens_per_s"), t)
    if fast is not None:
        b, c = fast.med("baseline"), fast.med("current")
        if (
            b > 0
            and c <= b / t.throughput_ratio
            and fast.share("current", lambda v: v <= b / t.throughput_ratio) >= t.sustain
        ):
            return [from_frame(
                fast, "throughput_collapse", "throughput",
                f"tokens/s <= baseline / {t.throughput_ratio}",
                f"throughput fell to {fmt(c)} tokens/s from {fmt(b)}", ratio=ratio(c, b),
            )]  # fmt: skip
    return []


@dataclass(frozen=True)
class Live:
    now: float | None = None
    last_write: float | None = None  # log mtime, or the last W&B `_timestamp`
    last_advance: float | None = None  # poll: when the step counter last rose
    alive: bool | None = None  # the scheduler says the process is running
    source: str = "log"


def step_seconds(h: History, t: Thresholds) -> float | None:
    """The run's normal seconds per step (its baseline window, so a slowdown before a hang
    does not stretch the allowance): logged step times, else W&B timestamps."""
    st = h.series("step_time")
    if len(st) < 3:
        timed = [p for p in h.points if p.time is not None and p.step is not None]
        gaps = [
            (b.time - a.time) / (b.step - a.step)  # type: ignore[operator]
            for a, b in pairwise(timed)
            if b.step > a.step  # type: ignore[operator]
        ]
        st = Series("step_time", gaps, timed[1:])
    if len(st) < 3:
        return None
    f = frame(st, t)
    return f.med("baseline") if f is not None else median(st.values)


def liveness(h: History, t: Thresholds, live: Live) -> list[Signal]:
    """No new step for many step times while the scheduler says the process runs. Without
    that (a file given by path), a quiet log is no evidence: the run may simply be over."""
    since = live.last_advance if live.last_advance is not None else live.last_write
    if live.alive is not True or live.now is None or since is None or not h.points:
        return []
    age = live.now - since
    per_step = step_seconds(h, t)
    allowance = max(t.stall_min_s, t.stall_factor * per_step) if per_step else t.stall_min_s
    if age <= allowance:
        return []
    what = (
        "the step counter has not moved"
        if live.last_advance is not None
        else ("the log has not been written")
    )
    step = h.points[-1].step
    return [Signal(
        "step_frozen", "liveness", "strong", "step", "step",
        f"no new step for > max({t.stall_min_s:.0f}s, {t.stall_factor} x median step time)",
        f"{what} for {age / 60:.0f} min while the job runs (last step {step}; "
        f"allowance {allowance / 60:.0f} min)",
        current={"steps": [step, step], "age_s": round(age), "allowance_s": round(allowance),
                 "step_seconds": round(per_step, 1) if per_step else None},
    )]  # fmt: skip
