"""What a detector reports: a `Signal` with its window, rule and the numbers that tripped it.

A detector looks at one canonical series through a `Frame`: the baseline window (after
warm-up), the previous window and the current window, each with the points (steps, byte
offsets, raw keys) the values came from, so the evidence names exactly what a person can
look up in the log or in W&B.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from labctl.rlhealth.config import Thresholds
from labctl.rlhealth.history import Point, Series
from labctl.rlhealth.stats import Windows, fraction, median, rnd, windows


@dataclass
class Frame:
    series: Series
    w: Windows

    def values(self, which: str) -> list[float]:
        return self.w.take(self.series.values, which)

    def points(self, which: str) -> list[Point]:
        a, b = getattr(self.w, which)
        return self.series.points[a:b]

    def med(self, which: str) -> float:
        return median(self.values(which))

    def share(self, which: str, predicate: Callable[[float], bool]) -> float:
        return fraction(self.values(which), predicate)

    def window(self, which: str, keep: int = 6) -> dict[str, Any]:
        pts, vals = self.points(which), self.values(which)
        return {
            "steps": _span(pts),
            "points": len(vals),
            "median": rnd(median(vals)),
            "values": [rnd(v) for v in vals[-keep:]],
        }


def frame(series: Series, t: Thresholds, *, from_start: bool = False) -> Frame | None:
    """Windows over one series; `from_start`: the baseline includes the warm-up steps (for
    entropy and response length the first steps ARE the reference: a collapse is often over
    within them)."""
    w = windows(
        len(series),
        warmup=0 if from_start else t.warmup_steps,
        baseline=t.baseline_steps,
        window=t.window_steps,
        share=t.window_share,
    )
    return Frame(series, w) if w is not None else None


def _span(points: list[Point]) -> list[int | None]:
    if not points:
        return [None, None]
    return [points[0].step, points[-1].step]


@dataclass
class Signal:
    name: str  # entropy_collapse, grad_nonfinite, kl_blowup, zero_variance, ...
    family: str  # entropy, grad, mismatch, kl, learning, reward, hack, truncation, ...
    # strong: a family that counts toward KILL; corroborating: counts only beside a strong
    # one (a reward that is not improving, responses getting shorter)
    strength: str
    metric: str  # canonical metric
    key: str  # the key as logged (verl `actor/entropy`, TRL `entropy`, a W&B key)
    rule: str  # the rule that fired, with its thresholds
    message: str  # one human line with the numbers
    baseline: dict[str, Any] | None = None
    current: dict[str, Any] | None = None
    ratio: float | None = None
    lines: list[dict[str, Any]] = field(default_factory=list)  # where to look in the log

    @property
    def strong(self) -> bool:
        return self.strength == "strong"

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "family": self.family,
            "strength": self.strength,
            "metric": self.metric,
            "key": self.key,
            "rule": self.rule,
            "message": self.message,
            "baseline": self.baseline,
            "current": self.current,
            "ratio": rnd(self.ratio) if self.ratio is not None else None,
            "lines": self.lines,
        }


def cite(points: list[Point], metric: str, keep: int = 3) -> list[dict[str, Any]]:
    """The log lines (offset, step, `key:value`) or W&B rows behind the last few values."""
    out = []
    for p in points[-keep:]:
        key = p.keys.get(metric, metric)
        if p.step is not None:
            where = f"step {p.step}"
        else:
            where = f"epoch {p.epoch:g}" if p.epoch is not None else "a step"
        text = f"{where}: {key}={p.metrics[metric]:.6g}"
        out.append({"step": p.step, "offset": p.offset, "text": text})
    return out


def from_frame(
    f: Frame,
    name: str,
    family: str,
    rule: str,
    message: str,
    *,
    ratio: float | None = None,
    strength: str = "strong",
) -> Signal:
    metric = f.series.name
    return Signal(
        name, family, strength, metric, f.series.key(), rule, message,
        baseline=f.window("baseline"), current=f.window("current"), ratio=ratio,
        lines=cite(f.points("current"), metric),
    )  # fmt: skip


def fmt(value: float) -> str:
    return f"{value:.3g}"
