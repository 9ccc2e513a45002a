"""Pure parts of poll: the script section protocol, row re-joining, merging with the store."""

from __future__ import annotations

import subprocess
from collections import Counter
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from labctl.backends.script import LOGIN_USER, Script, parse_sections, shell_word
from labctl.backends.slurm_state import SlurmQuery, rejoin_rows, state_commands
from labctl.cluster.snapshot import Snapshot, job_key
from labctl.parse.slurm import SACCT_FIELDS, sacct_jobs
from labctl.poll.merge import merge
from labctl.poll.model import StoredJob
from labctl.records import rfc3339


def run_bash(script: Script) -> bytes:
    return subprocess.run(
        ["bash", "-s"], input=script.text().encode(), capture_output=True, check=True
    ).stdout


BLOBS = st.binary(max_size=300) | st.text(max_size=200).map(lambda t: t.encode())


@settings(max_examples=60, deadline=None)
@given(st.lists(BLOBS, min_size=1, max_size=4))
def test_sections_come_back_byte_for_byte(blobs: list[bytes]) -> None:
    """Whatever a command prints (no trailing newline, markers of another run, NULs) comes
    back exactly, through a real bash."""
    script = Script()
    for i, blob in enumerate(blobs):
        script.raw(f"b.{i}", f"printf '%s' {blob.hex()} | xxd -r -p")
    sections = parse_sections(run_bash(script), script.nonce)
    assert [sections[f"b.{i}"].out for i in range(len(blobs))] == blobs
    assert sections["clock"].text.strip().isdigit()


def test_fake_markers_in_output_are_just_output() -> None:
    script = Script()
    script.raw("a", "printf '\\n@@labctl:0000000000000000:end:out\\nstill a\\n'")
    script.run("b", ["sh", "-c", "echo to-stderr >&2; exit 7"])
    sections = parse_sections(run_bash(script), script.nonce)
    assert sections["a"].out == b"\n@@labctl:0000000000000000:end:out\nstill a\n"
    assert (sections["b"].rc, sections["b"].err, sections["b"].out) == (7, b"to-stderr\n", b"")


def test_cut_short_output_is_bad_output() -> None:
    script = Script()
    script.raw("a", "echo hi")
    out = run_bash(script)
    cut = out[: out.rindex(b"\n@@labctl")]
    try:
        parse_sections(cut, script.nonce)
    except Exception as exc:
        assert getattr(exc, "reason", None) == "bad_output"
    else:
        raise AssertionError("a cut-short output parsed")


def test_login_user_placeholder_is_evaluated_on_the_cluster() -> None:
    assert shell_word(f"--user={LOGIN_USER}") == '--user="$LABCTL_USER"'
    assert shell_word(f"a b,{LOGIN_USER}") == "'a b,'\"$LABCTL_USER\""
    script = Script()
    script.run("u", ["echo", f"--users={LOGIN_USER}"])
    out = parse_sections(run_bash(script), script.nonce)
    me = subprocess.run(["id", "-un"], check=True, capture_output=True, text=True).stdout.strip()
    assert out["u"].text == f"--users={me}\n" and out["user"].text == me


def test_scheduler_calls_are_bounded() -> None:
    ids = [str(i) for i in range(1, 451)]
    calls = state_commands(SlurmQuery(known_ids=ids, since=1_796_000_000))
    names = [n for n, _ in calls]
    assert names == ["squeue", "sacct.ids.0", "sacct.ids.1", "sacct.ids.2", "sacct.window"]
    for name, argv in calls[1:]:
        assert "--starttime=2026-11-30T00:53:20" in argv or any(
            a.startswith("--jobs=") and a.count(",") < 200 for a in argv
        ), name
        assert "--allocations" not in argv  # the .batch step rows are needed
    assert [n for n, _ in state_commands(SlurmQuery(known_ids=ids, accounting=False))] == ["squeue"]
    # no window and no ids: no sacct at all (never sacct's default window)
    assert [n for n, _ in state_commands(SlurmQuery())] == ["squeue"]


SACCT_ROW = "\x1f".join(["{id}"] * 2 + ["COMPLETED", "0:0", "0:0", "None"] + ["1796000000"] * 4
                        + ["1", "UNLIMITED", "UNLIMITED", "00:00:00", "vm", "1", "debug", "root",
                           "0", "root", "/w", "{submit}", "{name}"])  # fmt: skip


@settings(max_examples=80, deadline=None)
@given(
    submit=st.text(st.characters(blacklist_characters="\x1f\x00"), max_size=40),
    name=st.text(st.characters(blacklist_characters="\x1f\n\r\x00"), max_size=30),
)
def test_newlines_inside_submit_line_keep_rows_whole(submit: str, name: str) -> None:
    text = "\n".join(
        SACCT_ROW.format(id=i, submit=f"sbatch --wrap {submit}", name=name) for i in (7, 8)
    )
    jobs = sacct_jobs(rejoin_rows(text, len(SACCT_FIELDS)))
    assert [j["job_id"] for j in jobs] == ["7", "8"]
    assert [j["name"] for j in jobs] == [name if name not in ("", "(null)") else None] * 2
    assert jobs[0]["submit_line"] == " ".join(f"sbatch --wrap {submit}".split("\n"))


def _job(raw: str, state: str, verdict: str, **kw: Any) -> dict[str, Any]:
    job = {"job_id": raw, "job_id_raw": raw, "state": state, "verdict": verdict,
           "submit_epoch": 1_796_000_000, "name": "j", "end_epoch": None}  # fmt: skip
    job.update(kw)
    return job


def _stored(job: dict[str, Any], last_seen: float, verdict: str | None = None) -> StoredJob:
    from labctl.poll.model import job_record

    rec = job_record("c", "slurm", job, observed_at=last_seen, remote_now=last_seen)
    return StoredJob(
        key=job_key(job), job_id=rec["job_id"], array_job_id=rec["array_job_id"],
        first_seen=last_seen, last_seen=last_seen, verdict=verdict or rec["verdict"],
        terminal=False, active=True, stdout=None, stderr=None, record=rec,
    )  # fmt: skip


def _merge(jobs: list[dict[str, Any]], stored: list[StoredJob], now: float = 2e9):
    snap = Snapshot(now=now, jobs=jobs, skipped=Counter())
    return merge(
        "c", "slurm", snap, {s.key: s for s in stored}, now=now, since_cut=None,
        forget_after_s=3600,
    )  # fmt: skip


def test_a_dissolved_array_group_and_a_requeued_job_are_not_unknown() -> None:
    group = _job("9", "PENDING", "pending", job_id="9_[2-3]", array_job_id=9, array_tasks="2-3")
    task = _job("9", "RUNNING", "running", job_id="9_3", array_job_id=9, array_task_id=3)
    old = _job("12", "RUNNING", "running")
    requeued = _job("12", "PENDING", "pending", submit_epoch=1_796_000_500)
    out = _merge([task, requeued], [_stored(group, 2e9 - 60), _stored(old, 2e9 - 60)])
    assert {r["job_id"]: r["verdict"] for r in out.records} == {"9_3": "running", "12": "pending"}
    retired = [u for u in out.updates if not u.active]
    assert {u.key for u in retired} == {job_key(group), job_key(old)}


def test_vanished_jobs_are_unknown_once_and_forgotten_later() -> None:
    gone = _job("5", "RUNNING", "running")
    first = _merge([], [_stored(gone, 2e9 - 60)])
    [rec] = first.records
    assert (rec["verdict"], rec["cause"], rec["state"]) == ("unknown", "vanished", None)
    [upd] = first.updates
    assert upd.active and upd.verdict == "unknown" and upd.last_seen == 2e9 - 60
    again = _merge([], [upd], now=2e9 + 60)
    assert again.records == [] and again.updates == []  # reported once; still asked by id
    late = _merge([], [upd], now=2e9 + 7200)
    assert late.records == [] and [u.active for u in late.updates] == [False]


def test_finished_jobs_are_reported_when_they_change_not_every_poll() -> None:
    done = _job("3", "COMPLETED", "completed", end_epoch=1_796_000_100, exit_code=0)
    prev = _stored(done, 2e9 - 60)
    quiet = _merge([done], [prev])
    assert quiet.records == [] and quiet.updates == [] and quiet.quiet == [prev.key]
    snap = Snapshot(now=2e9, jobs=[done])
    since = merge("c", "slurm", snap, {prev.key: prev}, now=2e9, since_cut=1_796_000_000,
                  forget_after_s=3600)  # fmt: skip
    assert [r["job_id"] for r in since.records] == ["3"]
    failed = dict(done, state="FAILED", verdict="failed", exit_code=1)
    [rec] = _merge([failed], [prev]).records
    assert rec["previous_verdict"] == "completed"
    # poll decides the verdict from the facts: a FAILED job's cause is its exit code
    assert rec["changed_fields"] == ["state", "verdict", "cause", "exit_code"]


def test_a_requeue_is_one_job_across_attempts_and_a_reused_id_is_another_job() -> None:
    running = _job("12", "RUNNING", "running", restarts=0)
    prev = _stored(running, 2e9 - 1800)
    preempted = _job("12", "PREEMPTED", "preempted", restarts=0, end_epoch=1_796_000_400)
    again = _job("12", "PENDING", "pending", restarts=1, submit_epoch=1_796_000_500)
    # squeue has the new attempt, sacct the preempted one: one record, the latest attempt
    [rec] = _merge([preempted, again], [prev]).records
    assert (rec["verdict"], rec["new"], rec["previous_verdict"]) == ("pending", False, "preempted")
    assert rec["first_seen"] == rfc3339(prev.first_seen)  # the job's, not the attempt's
    assert {"state", "submit_time", "restarts"} <= set(rec["changed_fields"])
    # only the new attempt: linked to the stored one all the same
    [alone] = _merge([again], [prev]).records
    assert (alone["new"], alone["previous_verdict"]) == (False, "running")
    # the same id for another job (controller state wiped): a new job, the old one retired
    other = _job("12", "RUNNING", "running", name="other", submit_epoch=1_796_000_500)
    out = _merge([other], [prev])
    assert [(r["name"], r["new"]) for r in out.records] == [("other", True)]
    assert [u.active for u in out.updates if u.key == prev.key] == [False]
    # same name but fewer restarts than the stored attempt: not its continuation
    reset = _job("12", "RUNNING", "running", restarts=0, submit_epoch=1_796_000_500)
    [fresh] = _merge([reset], [_stored(dict(running, restarts=2), 2e9 - 60)]).records
    assert fresh["new"] is True


def test_every_attempt_sacct_duplicates_returns_folds_into_the_latest() -> None:
    """`sacct -D --jobs` after two preemptions: three records of one job, in any order. The
    job is the newest attempt; its previous_verdict is how the attempt just before it ended."""
    first = _job("12", "PREEMPTED", "preempted", restarts=None, end_epoch=1_796_000_100)
    second = _job("12", "NODE_FAIL", "node_fail", restarts=None, submit_epoch=1_796_000_200,
                  end_epoch=1_796_000_300)  # fmt: skip
    third = _job("12", "PENDING", "pending", restarts=2, submit_epoch=1_796_000_400)
    prev = _stored(_job("12", "RUNNING", "running", restarts=0), 2e9 - 1800)
    for order in ([first, second, third], [third, first, second], [second, third, first]):
        [rec] = _merge(order, [prev]).records
        assert (rec["state"], rec["restarts"], rec["new"]) == ("PENDING", 2, False)
        assert rec["previous_verdict"] == "node_fail"


def test_a_reused_id_is_never_folded_into_a_requeue() -> None:
    """Same id, name and user, but the newer job has never restarted: a new job that got
    the id after a controller reset, not an attempt. Both are reported."""
    old = _job("12", "COMPLETED", "completed", end_epoch=1_796_000_100)
    new = _job("12", "RUNNING", "running", restarts=0, submit_epoch=1_796_000_500)
    out = _merge([old, new], [])
    assert sorted(r["verdict"] for r in out.records) == ["completed", "running"]
    assert all(r["previous_verdict"] is None for r in out.records)


def test_an_unknown_job_that_ended_before_the_window_is_history_not_news() -> None:
    """What only `sacct -D --jobs` brings back: an older job with a stored job's id that ended
    long before this poll's window. Not reported, not stored; inside the window it is."""
    ancient = _job("12", "COMPLETED", "completed", name="other", end_epoch=1_700_000_000)
    live = _job("12", "RUNNING", "running", restarts=0, submit_epoch=1_796_000_500)
    prev = _stored(live, 2e9 - 60)
    snap = Snapshot(now=2e9, jobs=[ancient, live], skipped=Counter())

    def run(window_start: float) -> list[str]:
        out = merge("c", "slurm", snap, {prev.key: prev}, now=2e9, since_cut=None,
                    forget_after_s=3600, window_start=window_start)  # fmt: skip
        assert {u.key for u in out.updates} <= {prev.key, job_key(ancient)}
        return sorted(r["verdict"] for r in out.records)

    assert run(1_796_000_000) == ["running"]
    assert run(1_600_000_000) == ["completed", "running"]
    # a stored job is never dropped, however long ago it ended
    gone = _stored(dict(ancient, state="RUNNING", verdict="running"), 2e9 - 60)
    out = merge("c", "slurm", Snapshot(now=2e9, jobs=[ancient]), {gone.key: gone}, now=2e9,
                since_cut=None, forget_after_s=3600, window_start=1_796_000_000)  # fmt: skip
    assert [r["verdict"] for r in out.records] == ["completed"]


def test_overlapping_sacct_answers_keep_one_record_per_attempt() -> None:
    from labctl.backends.slurm_state import one_per_attempt

    a1 = {"job_id_raw": "12", "job_id": "12", "submit_epoch": 1, "state": "PREEMPTED"}
    a2 = {"job_id_raw": "12", "job_id": "12", "submit_epoch": 2, "state": "PENDING"}
    a2_late = dict(a2, state="RUNNING")  # the window's answer, a moment after the by-id one
    assert one_per_attempt([a1, a2, a1, a2_late]) == [a1, a2_late]
    argv = [a for _, a in state_commands(SlurmQuery(known_ids=["12"], since=1.0))]
    assert "--duplicates" in argv[1] and "--jobs=12" in argv[1]


def test_the_sacct_window_never_reaches_back_past_the_first_polls_lookback(tmp_path) -> None:
    """A first poll looks back `lookback`; later ones start `window_margin` before the last
    good poll (slurmdbd lags), but a margin wider than the lookback would make the second
    poll report jobs the first one deliberately left out, as new."""
    from labctl.cluster.config import ClusterConfig
    from labctl.poll.core import PollSettings
    from labctl.poll.known import known_for
    from labctl.poll.store import Store

    store = Store(tmp_path / "state.db")
    cluster = ClusterConfig(name="c")
    short = PollSettings(lookback_s=72.0, window_margin_s=600.0)
    usual = PollSettings()
    assert known_for(store, cluster, short, now=10_000.0).since == 10_000.0 - 72
    assert known_for(store, cluster, usual, now=10_000.0).since == 10_000.0 - 24 * 3600
    store.cluster_ok("c", now=10_030.0, remote_now=10_020.0)  # the cluster's clock
    assert known_for(store, cluster, short, now=11_000.0).since == 10_020.0 - 72
    assert known_for(store, cluster, usual, now=11_000.0).since == 10_020.0 - 600
    since = PollSettings(lookback_s=72.0, since_s=3600.0)  # --since still reaches back
    assert known_for(store, cluster, since, now=11_000.0).since == 10_020.0 - 3600


def test_squeues_leftover_of_a_finished_job_is_not_news() -> None:
    """sacct's window has moved past a cancelled job that squeue still lists (MinJobAge).
    squeue's record knows less (`cancelled`, not `user_cancel`): no second report, and a
    `--since` report gives the store's fuller record."""
    done = _job("7", "CANCELLED", "cancelled", cause="user_cancel", source="squeue+sacct",
                end_epoch=1_796_000_100, exit_code=0, signal=15)  # fmt: skip
    prev = _stored(done, 2e9 - 60)
    prev.terminal = True
    thin = dict(done, cause="cancelled", source="squeue")
    out = _merge([thin], [prev])
    assert out.records == [] and out.quiet == [prev.key]
    snap = Snapshot(now=2e9, jobs=[thin])
    again = merge("c", "slurm", snap, {prev.key: prev}, now=2e9, since_cut=1_796_000_000,
                  forget_after_s=3600)  # fmt: skip
    [rec] = again.records
    assert (rec["cause"], rec["source"], rec["changed_fields"]) == (
        "user_cancel",
        "squeue+sacct",
        [],
    )
    # a real change squeue sees (the job table's state differs) is still news
    failed = dict(thin, state="FAILED", verdict="failed", cause="exit_code")
    assert [r["verdict"] for r in _merge([failed], [prev]).records] == ["failed"]


def test_which_jobs_poll_looks_at_is_decided_from_the_facts() -> None:
    """The job-table's own state words say which jobs run (progress probes) and which wait
    (no log to stat); a finished job reported before is left alone."""
    from labctl.poll.examine import choose

    states = {"ACTIVE": "running", "QUEUED": "pending", "DONE": "completed"}
    run = {"job_id": "1", "state": "ACTIVE", "stdout": "/x/1.out"}
    wait = {"job_id": "2", "state": "QUEUED", "stdout": "/x/2.out"}
    done = {"job_id": "3", "state": "DONE", "stdout": "/x/3.out", "end_epoch": 1_796_000_100}
    prev = _stored(dict(done, verdict="completed"), 2e9 - 60)
    snap = Snapshot(now=2e9, jobs=[run, wait, done], states=states)
    chosen = choose(snap, {prev.key: prev}, None, kill_lines=False)
    assert chosen.running == [run] and chosen.started == [run] and chosen.fresh == []
    assert "verdict" not in run  # the facts are not changed; the verdict is decided later


def test_since_restates_a_forgotten_finished_job_but_not_an_earlier_attempt() -> None:
    def finished(job: dict[str, Any]) -> StoredJob:
        prev = _stored(job, 2e9 - 600)
        return StoredJob(**{**prev.fields(), "active": False, "terminal": True})

    done = _job("5", "COMPLETED", "completed", end_epoch=1_796_000_100, exit_code=0)
    # a requeued job, both attempts finished and forgotten: the latest is the job
    first = _job("6", "PREEMPTED", "preempted", end_epoch=1_796_000_050, restarts=0)
    latest = _job("6", "COMPLETED", "completed", submit_epoch=1_796_000_060,
                  end_epoch=1_796_000_150, restarts=1)  # fmt: skip
    old = _job("7", "FAILED", "failed", end_epoch=1_795_999_000, exit_code=1)
    stored = {s.key: s for s in map(finished, (done, first, latest, old))}

    def polled(since_cut: float | None) -> list[dict[str, Any]]:
        return merge("c", "slurm", Snapshot(now=2e9, jobs=[]), stored, now=2e9,
                     since_cut=since_cut, forget_after_s=3600).records  # fmt: skip

    assert polled(None) == []  # reported once, when it finished
    again = polled(1_796_000_000)
    assert sorted((r["job_id"], r["verdict"]) for r in again) == [
        ("5", "completed"),
        ("6", "completed"),
    ]
    assert all(not r["new"] and not r["changed_since_last_poll"] for r in again)
