"""labctl.progress.cadence: verdicts across polls, with time injected."""

from __future__ import annotations

import json

import pytest

from labctl.progress.cadence import (
    PROGRESSING,
    STALLED,
    UNVERIFIED,
    CadenceConfig,
    CadenceState,
    Decision,
    Observation,
    allowance,
    decide,
    p90,
)
from labctl.progress.logscan import scan_chunk

MIN = 60.0
H = 3600.0
T0 = 1_750_000_000.0  # job start
KEY = "log:tqdm:step:|5000"


class Job:
    """Polls one job every `every` seconds and keeps the state like the poll command would."""

    def __init__(self, config: CadenceConfig | None = None, start: float = T0) -> None:
        self.config = config or CadenceConfig()
        self.state: CadenceState | None = None
        self.start = start

    def poll(self, at: float, value: float | None, key: str = KEY, **kw: object) -> Decision:
        obs = Observation(at, value, key, job_start=self.start, **kw)  # type: ignore[arg-type]
        d = decide(self.state, obs, self.config)
        # the state survives a JSON round trip between cron runs
        self.state = CadenceState.from_dict(json.loads(json.dumps(d.state.to_dict())))
        return d


def test_progressing_with_rate_and_eta() -> None:
    job = Job()
    first = job.poll(T0 + 2 * H, 100, total=5000)
    assert first.verdict == UNVERIFIED and "first sighting" in first.evidence[0]
    d = job.poll(T0 + 2.5 * H, 160, total=5000)
    assert d.verdict == PROGRESSING and d.cause is None
    assert d.progress["delta"] == 60 and d.progress["rate_per_h"] == pytest.approx(120)
    assert d.progress["eta_s"] == pytest.approx((5000 - 160) / 120 * H)
    assert d.progress["last_advance_at"] == T0 + 2.5 * H and d.progress["age_s"] == 0


def test_unreadable_counter_is_unverified() -> None:
    job = Job()
    job.poll(T0 + 2 * H, 100)
    d = job.poll(T0 + 2.5 * H, None)
    assert d.verdict == UNVERIFIED and d.evidence == ["no readable progress counter"]
    assert job.poll(T0 + 3 * H, 130).verdict == PROGRESSING  # the stored value survived


def test_first_miss_is_suspect_second_miss_is_stalled() -> None:
    job = Job()
    t = T0 + 3 * H
    job.poll(t, 100)
    job.poll(t + 30 * MIN, 130)  # one 30-min interval learned: allowance 3 x 30 = 90 min
    for minutes in (60, 90, 120):
        d = job.poll(t + minutes * MIN, 130)
        assert d.verdict == PROGRESSING and not d.progress["stall_suspect"], minutes
    first_miss = job.poll(t + 150 * MIN, 130)  # RUNNING is not progress: not verified
    assert first_miss.verdict == UNVERIFIED and first_miss.progress["stall_suspect"]
    assert first_miss.progress["misses"] == 1 and "1 consecutive" in first_miss.evidence[-1]
    assert first_miss.progress["allowance_s"] == 90 * MIN
    second = job.poll(t + 180 * MIN, 130)
    assert second.verdict == STALLED and second.progress["misses"] == 2
    assert job.poll(t + 210 * MIN, 131).verdict == PROGRESSING  # it moved again
    assert job.state is not None and job.state.misses == 0


def test_startup_grace() -> None:
    job = Job()
    job.poll(T0 + 5 * MIN, 0)
    for minutes in (20, 35, 44):
        d = job.poll(T0 + minutes * MIN, 0)
        assert d.verdict != STALLED
    # allowance is 60 min from the first sighting, grace 45 min from the start: no miss at
    # 50, but no rise seen either: not progress
    d = job.poll(T0 + 50 * MIN, 0)
    assert d.verdict == UNVERIFIED and d.progress["misses"] == 0
    # a tight allowance shows the grace at work: no miss is counted inside it
    tight = Job(CadenceConfig(allowance_s=10 * MIN))
    tight.poll(T0 + 1 * MIN, 0)
    for minutes in (15, 30, 44):
        d = tight.poll(T0 + minutes * MIN, 0)
        assert d.verdict == UNVERIFIED and d.progress["in_grace"] and d.progress["misses"] == 0
    first_miss = tight.poll(T0 + 50 * MIN, 0)  # the first miss after the grace
    assert first_miss.verdict == UNVERIFIED and first_miss.progress["misses"] == 1
    assert tight.poll(T0 + 60 * MIN, 0).verdict == STALLED


def test_learned_cadence_tolerates_a_long_checkpoint_save() -> None:
    job = Job()
    t = T0 + 3 * H
    value = 0
    job.poll(t, value)
    # half-hourly polls; every 4th interval a 90-min checkpoint save shows no rise
    for cycle in range(4):
        for _ in range(3):
            t += 30 * MIN
            value += 50
            assert job.poll(t, value).verdict == PROGRESSING
        for _ in range(2):
            t += 30 * MIN
            job.poll(t, value)
        t += 30 * MIN
        value += 50
        assert job.poll(t, value).verdict == PROGRESSING, cycle
    assert job.state is not None and p90(job.state.intervals) == 90 * MIN
    learned = allowance(job.state, None, job.config)
    assert learned == 270 * MIN
    # a 3-hour save now: no stall verdict (a fresh job would be stalled by then)
    for k in range(1, 7):
        assert job.poll(t + k * 30 * MIN, value).verdict == PROGRESSING
    fresh = Job()
    fresh.poll(t, 10)
    verdicts = [fresh.poll(t + k * 30 * MIN, 10).verdict for k in range(1, 7)]
    assert STALLED in verdicts


def test_phase_allowances() -> None:
    state = CadenceState()
    cfg = CadenceConfig()
    base = allowance(state, "train", cfg)
    assert base == 60 * MIN
    assert allowance(state, "checkpoint", cfg) == base + 30 * MIN
    assert allowance(state, "eval", cfg.for_job({"eval_allowance_s": 2 * H})) == base + 2 * H
    job = Job()
    t = T0 + 3 * H
    job.poll(t, 5)
    job.poll(t + 70 * MIN, 5, phase="eval")
    d = job.poll(t + 85 * MIN, 5, phase="eval")  # 85 < 60 + 30: no miss (and no rise yet)
    assert d.verdict == UNVERIFIED and d.progress["misses"] == 0
    d = job.poll(t + 100 * MIN, 5, phase="eval")  # first miss
    assert d.verdict == UNVERIFIED and d.progress["misses"] == 1
    assert job.poll(t + 130 * MIN, 5, phase="eval").verdict == STALLED


def test_per_job_override() -> None:
    cfg = CadenceConfig().for_job({"allowance_s": 6 * H, "misses_to_stall": 3})
    job = Job(cfg)
    t = T0 + 3 * H
    job.poll(t, 1)
    verdicts = [job.poll(t + k * H, 1).verdict for k in range(1, 10)]
    assert verdicts[:8] == [UNVERIFIED] * 8 and verdicts[8] == STALLED  # it never rose
    with pytest.raises(ValueError, match="unknown"):
        CadenceConfig().for_job({"alowance_s": 5})
    with pytest.raises(ValueError, match="non-negative"):
        CadenceConfig().for_job({"allowance_s": "5h"})


def test_requeue_resets_and_rearms_grace() -> None:
    job = Job()
    t = T0 + 5 * H
    job.poll(t, 900, attempt="1")
    job.poll(t + 30 * MIN, 950, attempt="1")
    restart = T0 + 6 * H
    job.start = restart
    d = job.poll(restart + 10 * MIN, None, attempt="2")
    assert d.verdict == UNVERIFIED and "requeue" in d.evidence[0]
    assert job.state is not None and job.state.value is None and job.state.grace_from == restart
    assert job.state.intervals == [30 * MIN]  # the job's own cadence is kept
    d = job.poll(restart + 20 * MIN, 800, attempt="2")  # resumed from a checkpoint
    assert d.verdict == UNVERIFIED and "first sighting" in d.evidence[0]
    assert job.poll(restart + 40 * MIN, 800, attempt="2").verdict == UNVERIFIED  # no rise yet
    assert job.poll(restart + 50 * MIN, 850, attempt="2").verdict == PROGRESSING


def test_counter_going_back_or_changing_identity() -> None:
    job = Job()
    t = T0 + 5 * H
    job.poll(t, 500)
    d = job.poll(t + 30 * MIN, 20)
    assert d.verdict == UNVERIFIED and "went back" in d.evidence[0]
    obs = Observation(now=t + H, value=3.5, counter_key="log:hf_dict:epoch:")
    d = decide(job.state, obs)
    assert d.verdict == UNVERIFIED and "changed identity" in d.evidence[0]


@pytest.mark.parametrize(
    ("kind", "cause", "final", "verdict"),
    [
        ("slurm_cancel", "time_limit", True, "timeout"),
        ("slurm_cancel", "preemption", True, "preempted"),
        ("slurm_cancel", "preemption", False, PROGRESSING),  # an earlier attempt's line (append)
        ("slurm_cancel", "node_fail", True, "node_fail"),
        ("slurm_cancel", "user_cancel", True, "cancelled"),
        ("oom_kill", "oom", True, "out_of_memory"),
        ("nccl_timeout", "nccl_timeout", True, "failed"),
        ("oom_kill", "oom", False, PROGRESSING),  # a step died, training went on after it
    ],
)
def test_hard_death_markers_override(kind: str, cause: str, final: bool, verdict: str) -> None:
    job = Job()
    job.poll(T0 + 3 * H, 10)
    marker = {"kind": kind, "cause": cause, "severity": "hard", "final": final, "line": "x"}
    d = job.poll(T0 + 3.5 * H, 20, markers=[marker])
    assert d.verdict == verdict
    if verdict != PROGRESSING:
        assert d.cause == cause and d.evidence[0].startswith(f"death marker {kind}")


def test_requeue_in_the_same_poll_ignores_the_old_kill_line() -> None:
    job = Job()
    job.poll(T0 + 3 * H, 10, attempt="1")
    marker = {"kind": "slurm_cancel", "cause": "preemption", "severity": "hard", "final": True}
    d = job.poll(T0 + 4 * H, 2, attempt="2", markers=[marker])
    assert d.verdict == UNVERIFIED


def test_final_traceback_needs_no_growth_since() -> None:
    log = (
        b"\r 40%|####      | 200/500 [10:00<15:00,  3.00s/it]\n"
        b"Traceback (most recent call last):\n"
        b'  File "train.py", line 9, in <module>\n'
        b"RuntimeError: DataLoader worker (pid 4242) is killed by signal: Killed.\n"
    )
    scan = scan_chunk(log)
    job = Job()
    job.poll(T0 + 3 * H, 150)
    d = job.poll(T0 + 3.5 * H, scan.value, markers=scan.markers, new_bytes=len(log))
    assert d.verdict == PROGRESSING and "failed if nothing more" in d.evidence[-1]
    d = job.poll(T0 + 4 * H, scan.value, new_bytes=0)
    assert (d.verdict, d.cause) == ("failed", "user_code")
    assert d.evidence[0] == (
        "traceback with no growth since: "
        "RuntimeError: DataLoader worker (pid 4242) is killed by signal: Killed."
    )
    # the same traceback followed by more output is survived
    job = Job()
    job.poll(T0 + 3 * H, 150)
    job.poll(T0 + 3.5 * H, scan.value, markers=scan.markers, new_bytes=len(log))
    d = job.poll(T0 + 4 * H, 201, new_bytes=120)
    assert d.verdict == PROGRESSING and job.state is not None and job.state.suspect is None


def test_finished_training_gets_a_grace_then_may_stall() -> None:
    job = Job()
    t = T0 + 5 * H
    job.poll(t, 5000)
    d = job.poll(t + 90 * MIN, 5000, finished=True)
    assert d.verdict == UNVERIFIED and "finished" in d.evidence[0]
    job.poll(t + 120 * MIN, 5000, finished=True)  # past the finished grace: a miss
    d = job.poll(t + 150 * MIN, 5000, finished=True)
    assert d.verdict == STALLED and any("still running" in e for e in d.evidence)


def test_scan_results_feed_decisions_across_polls() -> None:
    """The log scanner and the verdict layer together, as `poll` will wire them."""
    frames = [
        f"\r{i // 5:3d}%|##        | {i}/500 [00:{i % 60:02d}<07:00,  1.20it/s]".encode()
        for i in range(1, 301)
    ]
    polls = [b"".join(frames[:100]), b"".join(frames[100:200]), b"", b""]
    job = Job()
    scan_state = None
    verdicts = []
    for k, chunk in enumerate(polls):
        start = scan_state.offset if scan_state else 0
        r = scan_chunk(chunk, scan_state, start=start, size=start + len(chunk))
        scan_state = r.state
        at = T0 + 3 * H + k * 45 * MIN
        key = r.counter_key or ""
        d = job.poll(at, r.value, key, phase=r.phase, total=r.total, new_bytes=r.bytes_read)
        verdicts.append(d.verdict)
        assert d.progress["counter_key"] == r.counter_key
    assert verdicts == [UNVERIFIED, PROGRESSING, PROGRESSING, PROGRESSING]
    # one 45-min interval learned: allowance 135 min; misses at 195 and 225 min
    last_rise = T0 + 3 * H + 45 * MIN
    key = "log:tqdm:step:|500"
    assert job.poll(last_rise + 195 * MIN, 200, key, total=500).verdict == UNVERIFIED
    d = job.poll(last_rise + 225 * MIN, 200, key, total=500)
    assert d.verdict == STALLED
    json.dumps(d.to_dict(), allow_nan=False)


def test_evidence_says_seconds_for_allowances_under_a_minute() -> None:
    job = Job(CadenceConfig(allowance_s=10, startup_grace_s=0))
    job.poll(T0 + 100, 1)
    job.poll(T0 + 105, 2)
    within = job.poll(T0 + 110, 2)
    assert within.verdict == PROGRESSING
    assert within.evidence[-1] == "no rise since the last poll; last rise 5 s ago, allowance 10 s"
    miss = job.poll(T0 + 130, 2)
    assert miss.evidence[-1] == "no rise for 25 s > allowance 10 s (1 consecutive)"
    assert job.poll(T0 + 4 * H, 2).evidence[-1].startswith("no rise for 4.0 h > allowance 10 s")


def test_a_first_sighting_is_not_a_rise() -> None:
    """Progressing needs two observations with the counter higher in the later one; seen
    again unchanged it is still unverified, however soon after the first sighting."""
    job = Job(CadenceConfig(startup_grace_s=0))
    assert job.poll(T0 + H, 11).verdict == UNVERIFIED
    again = job.poll(T0 + H + 5, 11)
    assert again.verdict == UNVERIFIED and not again.progress["stall_suspect"]
    assert again.evidence[-1].startswith("no rise seen yet: log:tqdm:step:|5000 = 11")
    assert job.poll(T0 + H + 60, 12).verdict == PROGRESSING
    assert job.poll(T0 + H + 65, 12).verdict == PROGRESSING  # a rise within the allowance
