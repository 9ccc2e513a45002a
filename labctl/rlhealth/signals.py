"""Stability detectors: entropy, gradients, train/inference mismatch, KL, truncation.

Each takes the history and the thresholds and returns the signals that fired (empty when
the metric is missing or its history too short to have a baseline and a current window).
"""

from __future__ import annotations

import math

from labctl.rlhealth.config import Thresholds
from labctl.rlhealth.history import History
from labctl.rlhealth.signal import Signal, cite, fmt, frame, from_frame
from labctl.rlhealth.stats import ratio


def entropy(h: History, t: Thresholds) -> list[Signal]:
    f = frame(h.series("entropy"), t, from_start=True)
    if f is None:
        return []
    b, c, p = f.med("baseline"), f.med("current"), f.med("previous")
    low = c < t.entropy_floor and c < t.entropy_collapse_ratio * b
    if low and f.share("current", lambda v: v < t.entropy_floor) >= t.sustain:
        return [from_frame(
            f, "entropy_collapse", "entropy",
            f"median < {t.entropy_floor} and < {t.entropy_collapse_ratio} x baseline",
            f"entropy collapsed to {fmt(c)} from a baseline of {fmt(b)}",
            ratio=ratio(c, b),
        )]  # fmt: skip
    drop = (1 - t.entropy_drop) * p
    if c < drop and c < 0.5 * b and f.share("current", lambda v: v < drop) >= t.sustain:
        return [from_frame(
            f, "entropy_drop", "entropy",
            f"fell by > {t.entropy_drop:.0%} within one window and below half the baseline",
            f"entropy dropped from {fmt(p)} to {fmt(c)} within one window (baseline {fmt(b)})",
            ratio=ratio(c, p),
        )]  # fmt: skip
    high = c > t.entropy_blowup_ratio * b and c > t.entropy_max
    if high and f.share("current", lambda v: v > t.entropy_max) >= t.sustain:
        return [from_frame(
            f, "entropy_blowup", "entropy",
            f"median > {t.entropy_max} and > {t.entropy_blowup_ratio} x baseline",
            f"entropy rose to {fmt(c)} from a baseline of {fmt(b)}",
            ratio=ratio(c, b),
        )]  # fmt: skip
    return []


def _nonfinite(h: History, metric: str, t: Thresholds) -> Signal | None:
    s = h.series(metric, finite=False)
    if len(s) < t.nan_streak:
        return None
    tail = s.values[-max(t.nan_streak, t.window_steps) :]
    streak = 0
    for v in reversed(s.values):
        if math.isfinite(v):
            break
        streak += 1
    bad = sum(1 for v in tail if not math.isfinite(v))
    if streak < t.nan_streak and bad / len(tail) < t.sustain:
        return None
    pts = s.points[-len(tail) :]
    return Signal(
        f"{'grad' if metric == 'grad_norm' else metric}_nonfinite", "grad", "strong", metric,
        s.key(),
        f">= {t.nan_streak} non-finite values in a row, or most of the last window",
        f"{metric} is NaN/inf in {bad} of the last {len(tail)} points ({streak} in a row)",
        current={"steps": [pts[0].step, pts[-1].step], "points": len(tail), "nonfinite": bad},
        lines=cite(pts, metric),
    )  # fmt: skip


def grad(h: History, t: Thresholds) -> list[Signal]:
    out = [s for s in (_nonfinite(h, "grad_norm", t), _nonfinite(h, "loss", t)) if s]
    if out:
        return out[:1]
    f = frame(h.series("grad_norm"), t)
    if f is None:
        return []
    b, c = f.med("baseline"), f.med("current")
    limit = t.grad_norm_ratio * b
    if b > 0 and c >= limit and f.share("current", lambda v: v >= limit) >= t.sustain:
        return [from_frame(
            f, "grad_explosion", "grad",
            f"median >= {t.grad_norm_ratio} x baseline over most of the window",
            f"grad norm {fmt(c)} is {ratio(c, b):.0f}x its baseline {fmt(b)}",
            ratio=ratio(c, b),
        )]  # fmt: skip
    return []


def mismatch(h: History, t: Thresholds) -> list[Signal]:
    out: list[Signal] = []
    f = frame(h.series("mismatch"), t)
    if f is not None:
        b, c, p = f.med("baseline"), f.med("current"), f.med("previous")
        limit = max(t.mismatch_ratio * b, t.mismatch_floor)
        if c >= limit and c >= 0.8 * p and f.share("current", lambda v: v >= limit) >= t.sustain:
            out.append(from_frame(
                f, "mismatch_drift", "mismatch",
                f"median >= {t.mismatch_ratio} x baseline (and >= {t.mismatch_floor}), not falling",
                f"train/inference mismatch {fmt(c)} is {ratio(c, b):.0f}x its baseline {fmt(b)}",
                ratio=ratio(c, b),
            ))  # fmt: skip
    g = frame(h.series("is_log_ratio"), t)
    if g is not None and g.share("current", lambda v: abs(v) > t.log_ratio_max) >= t.sustain:
        c = g.med("current")
        out.append(from_frame(
            g, "log_ratio_drift", "mismatch",
            f"|importance-sampling log-ratio| > {t.log_ratio_max} over most of the window",
            f"importance-sampling log-ratio at {fmt(c)} (baseline {fmt(g.med('baseline'))})",
        ))  # fmt: skip
    return out


def kl(h: History, t: Thresholds) -> list[Signal]:
    f = frame(h.series("kl"), t)
    if f is None:
        return []
    b, c = f.med("baseline"), f.med("current")
    if c >= t.kl_max and f.share("current", lambda v: v >= t.kl_max) >= t.sustain:
        rule = f"median >= {t.kl_max} over most of the window"
    elif (
        c >= max(t.kl_ratio * b, t.kl_min)
        and f.share("current", lambda v: v >= max(t.kl_ratio * b, t.kl_min)) >= t.sustain
    ):
        rule = f"median >= {t.kl_ratio} x baseline and >= {t.kl_min}"
    else:
        return []
    return [from_frame(
        f, "kl_blowup", "kl", rule,
        f"KL to the reference at {fmt(c)} (baseline {fmt(b)})", ratio=ratio(c, b),
    )]  # fmt: skip


def truncation(h: History, t: Thresholds) -> list[Signal]:
    f = frame(h.series("clip_ratio"), t)
    if f is not None:
        if f.share("current", lambda v: v >= t.clip_ratio_max) >= t.sustain:
            return [from_frame(
                f, "truncation", "truncation",
                f"share of responses cut at the max length >= {t.clip_ratio_max}",
                f"{f.med('current'):.0%} of responses hit the max length "
                f"(baseline {f.med('baseline'):.0%})",
            )]  # fmt: skip
        return []
    length, cap = h.series("resp_len"), h.series("resp_len_max")
    f = frame(length, t)
    if f is None or len(cap) != len(length):
        return []
    pinned = [v >= t.pinned_ratio * m > 0 for v, m in zip(length.values, cap.values, strict=True)]
    a, b = f.w.current
    if sum(pinned[a:b]) / max(1, b - a) >= t.sustain:
        return [from_frame(
            f, "length_pinned", "truncation",
            f"mean response length >= {t.pinned_ratio} x the longest response",
            f"every response runs to the same length {fmt(f.med('current'))} (pinned at the cap)",
        )]  # fmt: skip
    return []
