"""Robust statistics over windows of a series: medians, MAD, fractions, not means.

One spike must not trip a signal: every rule compares medians of windows (a baseline after
warm-up against the most recent window) and asks that most of the recent window agrees.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass


def median(values: Sequence[float]) -> float:
    s = sorted(values)
    n = len(s)
    if n == 0:
        return math.nan
    mid = n // 2
    return s[mid] if n % 2 else (s[mid - 1] + s[mid]) / 2


def mad(values: Sequence[float]) -> float:
    """Median absolute deviation, scaled to a standard deviation (x 1.4826)."""
    if not values:
        return math.nan
    m = median(values)
    return 1.4826 * median([abs(v - m) for v in values])


def fraction(values: Sequence[float], predicate: Callable[[float], bool]) -> float:
    if not values:
        return 0.0
    return sum(1 for v in values if predicate(v)) / len(values)


@dataclass(frozen=True)
class Windows:
    """Index ranges [start, stop) of the baseline and current windows of one series."""

    baseline: tuple[int, int]
    current: tuple[int, int]
    previous: tuple[int, int]  # the window just before the current one

    def take(self, values: Sequence[float], which: str) -> list[float]:
        a, b = getattr(self, which)
        return list(values[a:b])


def windows(n: int, *, warmup: int, baseline: int, window: int, share: float) -> Windows | None:
    """Baseline = the `baseline` points after `warmup`; current = the last
    max(window, share x n) points; None when they would overlap (too short a history)."""
    cur = max(window, math.ceil(share * n))
    start_b = min(warmup, max(0, n - cur - baseline))
    stop_b = start_b + baseline
    if stop_b > n - cur or baseline < 3 or cur < 3:
        return None
    prev = (max(stop_b, n - 2 * cur), n - cur)
    return Windows((start_b, stop_b), (n - cur, n), prev)


def theil_sen(values: Sequence[float]) -> tuple[float, float]:
    """(slope per point, MAD of the residuals): a trend that one outlier cannot bend."""
    v = list(values)[-100:]
    slopes = [(v[j] - v[i]) / (j - i) for i in range(len(v)) for j in range(i + 1, len(v))]
    if not slopes:
        return 0.0, 0.0
    slope = median(slopes)
    residuals = [x - slope * i for i, x in enumerate(v)]
    return slope, mad(residuals)


def ratio(a: float, b: float, floor: float = 1e-12) -> float:
    """a / b with b floored (a ratio to a zero baseline is large, not infinite)."""
    return a / max(abs(b), floor)


def rnd(value: float, digits: int = 4) -> float | None:
    """A number for a record: rounded to `digits` significant digits, None for NaN."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if math.isinf(value) or value == 0:
        return value
    return round(value, max(0, digits - 1 - math.floor(math.log10(abs(value)))))
