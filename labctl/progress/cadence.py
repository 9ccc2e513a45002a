"""Is a RUNNING job moving? The verdict from the stored state and one new observation.

Pure decision logic: time comes in with the observation (seconds since the epoch, the
poller's clock), nothing is read or written here. The rules:

- `running-progressing` only when two observations show the counter higher in the later
  one, and that rise is within the allowance = max(2 poll intervals, 3 x p90 of the job's
  own inter-advance intervals, floor 45 min) + a phase allowance (checkpoint save, eval),
  or a per-job override.
- `running-unverified` on first sighting, while no rise has been seen yet, when no counter
  is readable, when the counter changes identity or goes back (a restart), inside the
  startup grace (default 45 min after the job's start, re-armed by a requeue), and on a
  first miss (a poll past the allowance with no rise: `stall_suspect`, the miss in the
  evidence) — never guessed as progressing or stalled.
- `running-stalled` after `misses_to_stall` (2) consecutive polls with no rise for longer
  than the allowance.
- A hard death marker (slurmstepd kill line, oom-kill, NCCL watchdog timeout) with no progress
  after it overrides with the terminal verdict its cause stands for (`labctl.verdicts.
  CAUSE_VERDICT`: timeout / preempted / node_fail / cancelled / out_of_memory / failed). A soft
  one (a final traceback, CUDA OOM/error, srun task exit) becomes `failed` when the next poll
  shows no growth since.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from labctl.progress.counter import allowance, count, in_grace, p90
from labctl.verdicts import CAUSE_VERDICT, Verdict

__all__ = [
    "PROGRESSING",
    "STALLED",
    "UNVERIFIED",
    "CadenceConfig",
    "CadenceState",
    "Decision",
    "Observation",
    "allowance",
    "decide",
    "p90",
]

PROGRESSING = Verdict.PROGRESSING
STALLED = Verdict.STALLED
UNVERIFIED = Verdict.UNVERIFIED


@dataclass(frozen=True)
class CadenceConfig:
    poll_interval_s: float = 1800.0
    startup_grace_s: float = 2700.0
    floor_s: float = 2700.0
    p90_factor: float = 3.0
    checkpoint_allowance_s: float = 1800.0
    eval_allowance_s: float = 1800.0
    finished_grace_s: float = 1800.0  # training said "done" but the job still runs (saving)
    misses_to_stall: int = 2
    allowance_s: float | None = None  # per-job override of the computed base allowance
    max_intervals: int = 32
    ewma_alpha: float = 0.3

    def for_job(self, overrides: Mapping[str, Any] | None) -> CadenceConfig:
        """This config with a job's overrides (config keys, seconds); unknown keys raise."""
        if not overrides:
            return self
        names = {f.name for f in fields(self)}
        bad = sorted(set(overrides) - names)
        if bad:
            raise ValueError(f"unknown cadence setting(s): {', '.join(bad)}")
        for key, value in overrides.items():
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int | float) or value < 0
            ):
                raise ValueError(f"cadence setting {key} must be a non-negative number")
        return replace(self, **dict(overrides))


@dataclass
class CadenceState:
    counter_key: str | None = None
    value: float | None = None
    changed_at: float | None = None  # when the counter last rose (or was first seen)
    rose_at: float | None = None  # when a poll last saw it higher than the poll before
    last_poll_at: float | None = None
    first_seen_at: float | None = None
    grace_from: float | None = None  # start of the current startup grace
    job_start: float | None = None
    attempt: str | None = None  # requeue signature (Start / Restarts / SLUID) seen last
    intervals: list[float] = field(default_factory=list)  # between observed rises, seconds
    ewma_s: float | None = None
    misses: int = 0  # consecutive polls with no rise beyond the allowance
    finished_at: float | None = None
    suspect: dict[str, Any] | None = None  # a soft death marker awaiting "no growth since"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CadenceState:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


@dataclass
class Observation:
    now: float
    value: float | None = None  # None: no counter readable this poll
    counter_key: str | None = None  # identity of the counter (ScanResult.counter_key)
    total: float | None = None
    phase: str | None = None  # train | eval | checkpoint | startup | finished
    finished: bool = False
    markers: Sequence[Any] = ()  # Marker objects or their dicts
    job_start: float | None = None
    attempt: str | None = None
    new_bytes: int | None = None  # log growth since the last poll; None if unknown


@dataclass
class Decision:
    verdict: str
    cause: str | None
    state: CadenceState
    evidence: list[str]
    progress: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out.pop("state")
        return out


def _marker(m: Any) -> dict[str, Any]:
    return dict(m) if isinstance(m, Mapping) else m.to_dict()


def _terminal(markers: list[dict[str, Any]], requeued: bool) -> dict[str, Any] | None:
    """The newest hard marker with no progress after it. One followed by progress is history:
    a step that died while training went on, or a kill line from an earlier attempt in a log
    opened for append (a job that is really dying is TIMEOUT/PREEMPTED by the next poll)."""
    if requeued:
        return None
    for m in reversed(markers):
        if m.get("severity") == "hard" and m.get("final"):
            return m
    return None


def decide(
    prev: CadenceState | None, obs: Observation, config: CadenceConfig | None = None
) -> Decision:
    """The progress verdict of a running job from its stored state and one observation."""
    cfg = config or CadenceConfig()
    st = CadenceState.from_dict(prev.to_dict()) if prev is not None else CadenceState()
    ev: list[str] = []
    st, requeued = _attempt(st, obs, ev)
    prev_value, prev_poll, st.last_poll_at = st.value, st.last_poll_at, obs.now
    verdict, rate = count(st, obs, cfg, prev_value=prev_value, prev_poll=prev_poll, ev=ev)
    verdict, cause = _dying(st, obs, verdict, requeued, ev)
    return Decision(verdict, cause, st, ev, _progress(st, obs, cfg, prev_value, rate))


def _attempt(st: CadenceState, obs: Observation, ev: list[str]) -> tuple[CadenceState, bool]:
    """Which attempt this is: a requeue (a new start or attempt) resets the counter and
    re-arms the startup grace; the job's own cadence (its intervals) is kept."""
    now = obs.now
    requeued = (obs.attempt is not None and st.attempt not in (None, obs.attempt)) or (
        obs.job_start is not None and st.job_start not in (None, obs.job_start)
    )
    st.attempt = obs.attempt if obs.attempt is not None else st.attempt
    st.job_start = obs.job_start if obs.job_start is not None else st.job_start
    st.first_seen_at = st.first_seen_at if st.first_seen_at is not None else now
    if requeued:
        st = replace(
            st, counter_key=None, value=None, changed_at=None, rose_at=None, misses=0, suspect=None
        )
        st.finished_at, st.grace_from = None, obs.job_start if obs.job_start else now
        ev.append("requeue detected (new start/attempt): startup grace re-armed")
    elif st.grace_from is None:
        st.grace_from = st.job_start if st.job_start is not None else st.first_seen_at
    return st, requeued


def _dying(
    st: CadenceState, obs: Observation, verdict: str, requeued: bool, ev: list[str]
) -> tuple[str, str | None]:
    """A death marker in the new log bytes overrides the counter's verdict: a hard one at
    once, a soft one when the next poll shows no growth since."""
    markers = [_marker(m) for m in obs.markers]
    hard = _terminal(markers, requeued)
    soft = [m for m in markers if m.get("severity") == "soft" and m.get("final")]
    if hard is not None:
        ev.insert(0, f"death marker {hard['kind']}: {hard.get('line', '')}")
        return CAUSE_VERDICT.get(hard["cause"], Verdict.FAILED), hard["cause"]
    if soft:
        m = soft[-1]
        st.suspect = {k: m.get(k) for k in ("kind", "cause", "line", "detail")} | {"at": obs.now}
        ev.append(f"{m['kind']} at the end of the log ({m.get('detail') or m.get('line')}): "
                  "failed if nothing more is written by the next poll")  # fmt: skip
        return verdict, None
    if st.suspect is None:
        return verdict, None
    if st.rose_at == obs.now or (obs.new_bytes is not None and obs.new_bytes > 0):
        ev.append(f"log grew after the {st.suspect['kind']}: not treated as a death")
        st.suspect = None
        return verdict, None
    what = st.suspect.get("detail") or st.suspect.get("line")
    ev.insert(0, f"{st.suspect['kind']} with no growth since: {what}")
    return Verdict.FAILED, st.suspect.get("cause") or "user_code"


def _progress(
    st: CadenceState,
    obs: Observation,
    cfg: CadenceConfig,
    prev_value: float | None,
    rate: float | None,
) -> dict[str, Any]:
    now = obs.now
    return {
        "counter_key": st.counter_key,
        "value": st.value,
        "prev": prev_value,
        "delta": None if st.value is None or prev_value is None else st.value - prev_value,
        "total": obs.total,
        "rate_per_h": rate,
        "eta_s": _eta(obs.total, st.value, rate),
        "last_advance_at": st.changed_at,
        "age_s": None if st.changed_at is None else now - st.changed_at,
        "allowance_s": allowance(st, obs.phase, cfg),
        "phase": obs.phase,
        "stall_suspect": st.misses > 0,
        "misses": st.misses,
        "in_grace": in_grace(st, now, cfg),
        "ewma_interval_s": st.ewma_s,
    }


def _eta(total: float | None, value: float | None, rate: float | None) -> float | None:
    if total is None or value is None or not rate or rate <= 0 or value >= total:
        return None
    return (total - value) / rate * 3600
