"""The counter half of the progress verdict: did the job's counter rise, and for how long
has it not? Updates the cadence state in place (see `labctl.progress.cadence`).

RUNNING is not progress, and neither is a first sighting: `running-progressing` only when
two observations show the counter higher in the later one, and that rise is within the
allowance. No rise seen yet is `running-unverified`; a poll past the allowance with no rise
is a miss (still `running-unverified`, the miss in the evidence), and `misses_to_stall`
consecutive misses are `running-stalled`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from labctl.verdicts import Verdict

if TYPE_CHECKING:
    from labctl.progress.cadence import CadenceConfig, CadenceState, Observation

Count = tuple[str, float | None]  # (verdict, rate per hour)


def p90(values: Sequence[float]) -> float | None:
    """Nearest-rank 90th percentile."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.9 * len(ordered)) - 1)]


def allowance(state: CadenceState, phase: str | None, config: CadenceConfig) -> float:
    """Seconds a job may go without a rise: max(2 poll intervals, 3 x p90 of its own
    intervals between rises, the floor) or the per-job override, plus a phase allowance."""
    if config.allowance_s is not None:
        base = config.allowance_s
    else:
        learned = config.p90_factor * (p90(state.intervals) or 0.0)
        base = max(2 * config.poll_interval_s, learned, config.floor_s)
    if phase == "checkpoint":
        base += config.checkpoint_allowance_s
    elif phase == "eval":
        base += config.eval_allowance_s
    return base


def fmt_duration(seconds: float) -> str:
    """A duration for evidence text: seconds under a minute, minutes under two hours."""
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes = seconds / 60
    return f"{minutes / 60:.1f} h" if minutes >= 120 else f"{minutes:.0f} min"


def in_grace(st: CadenceState, now: float, cfg: CadenceConfig) -> bool:
    return st.grace_from is not None and now - st.grace_from < cfg.startup_grace_s


def count(
    st: CadenceState,
    obs: Observation,
    cfg: CadenceConfig,
    *,
    prev_value: float | None,
    prev_poll: float | None,
    ev: list[str],
) -> Count:
    """Updates the counter part of `st` from one observation; (verdict, rate per hour)."""
    value = obs.value
    if value is None:
        ev.append("no readable progress counter")
        return Verdict.UNVERIFIED, None
    if prev_value is None or obs.counter_key != st.counter_key:
        what = "first sighting" if prev_value is None else "counter changed identity"
        ev.append(f"{what}: {obs.counter_key} = {value}")
        st.counter_key, st.value, st.changed_at, st.misses = obs.counter_key, value, obs.now, 0
        st.rose_at = None
        return Verdict.UNVERIFIED, None
    span = obs.now - prev_poll if prev_poll is not None and obs.now > prev_poll else None
    rate = (value - prev_value) / span * 3600 if span else None
    if value < prev_value:
        ev.append(f"counter went back {prev_value} -> {value} (restart?): grace re-armed")
        st.value, st.changed_at, st.misses, st.grace_from = value, obs.now, 0, obs.now
        st.rose_at = None
        return Verdict.UNVERIFIED, None
    if value > prev_value:
        _rose(st, obs, cfg, prev_value, ev)
        return Verdict.PROGRESSING, rate
    return _no_rise(st, obs, cfg, ev), rate


def _rose(
    st: CadenceState, obs: Observation, cfg: CadenceConfig, prev_value: float, ev: list[str]
) -> None:
    now = obs.now
    if st.changed_at is not None and now > st.changed_at:
        gap = now - st.changed_at
        st.intervals = [*st.intervals, gap][-cfg.max_intervals :]
        a = cfg.ewma_alpha
        st.ewma_s = gap if st.ewma_s is None else a * gap + (1 - a) * st.ewma_s
    ev.append(f"{obs.counter_key} {prev_value} -> {obs.value} since the last poll")
    st.value, st.changed_at, st.rose_at, st.misses = obs.value, now, now, 0
    st.finished_at = None


def _no_rise(st: CadenceState, obs: Observation, cfg: CadenceConfig, ev: list[str]) -> str:
    now = obs.now
    age = now - (st.changed_at if st.changed_at is not None else now)
    limit = allowance(st, obs.phase, cfg)
    if obs.finished:
        st.finished_at = st.finished_at if st.finished_at is not None else now
        if now - st.finished_at < cfg.finished_grace_s:
            ev.append("training reported finished; the job is still running (saving, teardown)")
            return Verdict.UNVERIFIED
        ev.append(f"training finished {fmt_duration(now - st.finished_at)} ago, job still running")
    if age <= limit:
        st.misses = 0
        if st.rose_at is None:
            ev.append(
                f"no rise seen yet: {obs.counter_key} = {obs.value} since it was first seen "
                f"{fmt_duration(age)} ago, allowance {fmt_duration(limit)}"
            )
            return Verdict.UNVERIFIED
        ev.append(
            f"no rise since the last poll; last rise {fmt_duration(age)} ago, "
            f"allowance {fmt_duration(limit)}"
        )
        return Verdict.PROGRESSING
    if in_grace(st, now, cfg):
        st.misses = 0
        ev.append(f"no rise for {fmt_duration(age)}, but within the startup grace")
        return Verdict.UNVERIFIED
    st.misses += 1
    ev.append(
        f"no rise for {fmt_duration(age)} > allowance {fmt_duration(limit)} "
        f"({st.misses} consecutive)"
    )
    return Verdict.STALLED if st.misses >= cfg.misses_to_stall else Verdict.UNVERIFIED
