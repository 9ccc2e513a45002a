"""`labctl poll` with the `command` scheduler: a cluster's own job table as JSON rows.

These run the real CLI against a small script that prints job rows (tests/fixtures/poll/
jobtable.py), through the same transport and script machinery as SLURM; no SLURM needed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import LABCTL, run_labctl
from helpers.config import write_config
from schema_check import assert_valid

JOBTABLE = Path(__file__).parent / "fixtures" / "poll" / "jobtable.py"
STATES = {"ACTIVE": "running", "QUEUED": "pending", "SUCCEEDED": "completed", "FAILED": "failed"}


def table_cluster(name: str, rows_file: Path, mode: str = "array", **extra: Any) -> dict:
    cluster = {
        "name": name,
        "scheduler": "command",
        "command": f"{sys.executable} {JOBTABLE} {rows_file} {mode}",
        "fields": {
            "job_id": "id",
            "name": "meta.name",
            "state": "status",
            "user": "owner",
            "submit_time": "created",
            "start_time": "started",
            "end_time": "ended",
            "exit_code": "rc",
            "stdout": "log",
        },
        "states": STATES,
    }
    cluster.update(extra)
    return cluster


def row(job_id: str, status: str, name: str = "train", **extra: Any) -> dict[str, Any]:
    base = {
        "id": job_id,
        "meta": {"name": name},
        "status": status,
        "owner": "carol",
        "created": "2026-11-30T10:00:00Z",
    }
    base.update(extra)
    return base


def poll(config: Path, *args: str) -> Any:
    res = run_labctl("poll", "--config", str(config), *args)
    assert_valid("poll", res.records)
    return res


def jobs(res: Any) -> dict[str, dict[str, Any]]:
    return {r["job_id"]: r for r in res.records if r["kind"] == "job"}


def test_rows_are_mapped_to_job_records(tmp_path: Path) -> None:
    log = tmp_path / "t-1.log"
    log.write_bytes(b"step 1\n" * 10)
    rows = tmp_path / "rows.json"
    rows.write_text(
        json.dumps(
            [
                row("t-1", "ACTIVE", started=1796000000, log=str(log)),
                row("t-2", "SUCCEEDED", started="2026-11-30T10:01:00", ended=1796000100500, rc=0),
                row("t-3", "FAILED", rc=3, ended="2026-11-30T11:00:00+01:00"),
                row("t-4", "Melting"),
                row("t-5", "queued"),
                row("t-6", "ACTIVE", name="tracegen-17"),
                row("t-7", "ACTIVE", name="tracegen-18"),
            ]
        )
    )
    config = write_config(tmp_path, [table_cluster("tpu", rows, skip=["tracegen-*"])])
    res = poll(config)
    assert res.code == 1, res.stderr  # t-3 failed, t-4 unknown: a person should look
    got = jobs(res)
    assert set(got) == {"t-1", "t-2", "t-3", "t-4", "t-5"}
    assert got["t-1"]["verdict"] == "running-unverified" and got["t-1"]["state"] == "ACTIVE"
    assert got["t-1"]["stdout_size"] == 70 and got["t-1"]["log_age_s"] < 60
    assert got["t-1"]["start_time"] == "2026-11-30T00:53:20Z"
    assert got["t-2"]["verdict"] == "completed" and got["t-2"]["exit_code"] == 0
    assert got["t-2"]["start_time"] == "2026-11-30T10:01:00Z"  # naive ISO text is UTC
    assert got["t-2"]["end_time"] == "2026-11-30T00:55:00Z"  # epoch milliseconds
    assert got["t-3"]["verdict"] == "failed" and got["t-3"]["exit_code"] == 3
    assert got["t-3"]["end_time"] == "2026-11-30T10:00:00Z"  # offset honoured
    assert (got["t-4"]["verdict"], got["t-4"]["cause"]) == ("unknown", "unmapped_state")
    assert got["t-5"]["verdict"] == "pending"  # case-insensitive state mapping
    for rec in got.values():
        assert rec["cluster"] == "tpu" and rec["scheduler"] == "command"
        assert rec["user"] == "carol" and rec["new"] and rec["changed_since_last_poll"]
    [skipped] = [r for r in res.records if r["kind"] == "skipped"]
    assert skipped["count"] == 2 and skipped["patterns"] == {"tracegen-*": 2}


@pytest.mark.parametrize("mode", ["jsonl", "doc"])
def test_json_lines_and_nested_documents(tmp_path: Path, mode: str) -> None:
    rows = tmp_path / "rows.json"
    rows.write_text(json.dumps([row("a", "ACTIVE"), row("b", "QUEUED")]))
    extra = {"rows": "data.jobs"} if mode == "doc" else {}
    res = poll(write_config(tmp_path, [table_cluster("tpu", rows, mode, **extra)]))
    assert res.code == 0, res.stderr
    assert {k: v["verdict"] for k, v in jobs(res).items()} == {
        "a": "running-unverified",
        "b": "pending",
    }


def test_store_tracks_changes_vanished_jobs_and_reports_finished_jobs_once(
    tmp_path: Path,
) -> None:
    rows = tmp_path / "rows.json"
    config = write_config(tmp_path, [table_cluster("tpu", rows)])
    rows.write_text(json.dumps([row("a", "ACTIVE"), row("b", "ACTIVE"), row("c", "QUEUED")]))
    first = poll(config)
    assert first.code == 0 and set(jobs(first)) == {"a", "b", "c"}

    ended = int(time.time()) - 5
    rows.write_text(json.dumps([row("b", "ACTIVE"), row("c", "SUCCEEDED", rc=0, ended=ended)]))
    second = poll(config)
    got = jobs(second)
    assert second.code == 1  # a vanished: unknown needs a person
    assert got["a"]["verdict"] == "unknown" and got["a"]["cause"] == "vanished"
    assert got["a"]["state"] is None and got["a"]["previous_verdict"] == "running-unverified"
    assert got["a"]["source"] == "store" and "neither" in got["a"]["message"]
    assert not got["b"]["changed_since_last_poll"] and not got["b"]["new"]
    assert got["b"]["first_seen"] == jobs(first)["b"]["first_seen"]
    assert got["c"]["verdict"] == "completed" and got["c"]["previous_verdict"] == "pending"
    assert {"state", "verdict", "end_time"} <= set(got["c"]["changed_fields"])

    third = poll(config)
    # a is reported once when it vanishes; c once when it finished; b is alive
    assert set(jobs(third)) == {"b"} and third.code == 0
    again = poll(config, "--since", "1d")
    assert set(jobs(again)) == {"b", "c"}
    changed = poll(config, "--changed-only")
    assert jobs(changed) == {}

    rows.write_text(json.dumps([row("a", "FAILED", rc=1, ended=ended), row("b", "ACTIVE")]))
    late = jobs(poll(config))  # the job table answers for a again: a real verdict
    assert late["a"]["verdict"] == "failed" and late["a"]["previous_verdict"] == "unknown"


def test_a_job_seen_again_at_the_same_step_is_not_progressing(tmp_path: Path) -> None:
    """RUNNING is not progress, and neither is a first sighting: a job-table job at step 11,
    polled again seconds later still at step 11, is running-unverified; it is progressing
    once a later poll sees the step higher."""
    log = tmp_path / "rl.log"
    log.write_text("step:11 - actor/entropy:0.5\n")
    rows = tmp_path / "rows.json"
    rows.write_text(json.dumps([row("r", "ACTIVE", name="rl", started=time.time(), log=str(log))]))
    config = write_config(tmp_path, [table_cluster("tpu", rows)])
    first = jobs(poll(config))["r"]
    assert first["verdict"] == "running-unverified" and first["progress"]["value"] == 11
    again = jobs(poll(config))["r"]
    assert again["verdict"] == "running-unverified" and again["progress"]["value"] == 11
    assert any(e.startswith("no rise seen yet") for e in again["progress"]["evidence"])
    with log.open("a") as fh:
        fh.write("step:12 - actor/entropy:0.4\n")
    moved = jobs(poll(config))["r"]
    assert moved["verdict"] == "running-progressing" and moved["progress"]["previous"] == 11


def test_since_reports_a_finished_job_the_scheduler_has_forgotten(tmp_path: Path) -> None:
    """The store saw the job end; the job table no longer lists it (its accounting was
    purged): `--since` still reports it, from the store's record."""
    rows = tmp_path / "rows.json"
    config = write_config(tmp_path, [table_cluster("tpu", rows)])
    ended = int(time.time()) - 60
    rows.write_text(json.dumps([row("d", "SUCCEEDED", rc=0, ended=ended), row("b", "ACTIVE")]))
    seen = jobs(poll(config))["d"]
    assert seen["verdict"] == "completed"
    rows.write_text(json.dumps([row("b", "ACTIVE")]))
    assert set(jobs(poll(config))) == {"b"}  # reported once, when it finished
    again = jobs(poll(config, "--since", "1h"))
    assert set(again) == {"b", "d"}
    d = again["d"]
    assert (d["verdict"], d["exit_code"], d["end_time"]) == ("completed", 0, seen["end_time"])
    assert (
        not d["new"] and not d["changed_since_last_poll"] and d["first_seen"] == seen["first_seen"]
    )
    assert set(jobs(poll(config, "--since", "10s"))) == {"b"}  # it ended before that


def test_other_commands_read_what_poll_saw_from_the_store(tmp_path: Path) -> None:
    """The store's documented reading API: Store(store_path(state_dir)).jobs(cluster)."""
    from labctl.poll.store import Store, store_path

    rows = tmp_path / "rows.json"
    rows.write_text(json.dumps([row("a", "ACTIVE"), row("d", "FAILED", rc=2, ended=1796000100)]))
    poll(write_config(tmp_path, [table_cluster("tpu", rows)]))
    store = Store(store_path(Path(os.environ["XDG_STATE_HOME"]) / "labctl"))
    try:
        jobs = {j.job_id: j for j in store.jobs("tpu").values()}
    finally:
        store.close()
    assert (jobs["a"].verdict, jobs["a"].active, jobs["a"].terminal) == (
        "running-unverified",
        True,
        False,
    )
    assert (jobs["d"].verdict, jobs["d"].terminal, jobs["d"].record["exit_code"]) == (
        "failed",
        True,
        2,
    )


def test_broken_clusters_give_one_error_each_and_the_others_are_polled(tmp_path: Path) -> None:
    rows = tmp_path / "rows.json"
    rows.write_text(json.dumps([row("ok-1", "ACTIVE")]))
    config = write_config(
        tmp_path,
        [
            table_cluster("good", rows),
            table_cluster("down", rows, "fail"),
            table_cluster("html", rows, "garbage"),
            table_cluster("hung", rows, "hang", timeout_s=2),
            {"name": "nohost", "host": "127.0.0.1", "ssh_options": ["-p", "1"],
             "scheduler": "command", "command": "true"},
        ],
    )  # fmt: skip
    start = time.monotonic()
    res = poll(config)
    elapsed = time.monotonic() - start
    assert res.code == 3, res.stdout
    assert elapsed < 20  # the hung command was killed at its 2 s deadline
    assert set(jobs(res)) == {"ok-1"}
    errors = {r["cluster"]: r for r in res.records if r["kind"] == "error"}
    assert {c: e["reason"] for c, e in errors.items()} == {
        "down": "command_failed",
        "html": "bad_output",
        "hung": "timeout",
        "nohost": "unreachable",
    }
    assert "503 Service Unavailable" in errors["down"]["message"]
    assert errors["down"]["consecutive_failures"] == 1 and errors["down"]["last_ok_at"] is None
    for err in errors.values():
        assert "\n" not in err["message"] and err["message"].startswith("cluster ")
    again = poll(config, "--cluster", "down")
    [err] = again.records
    assert (
        err["consecutive_failures"] == 2
        and err["first_failure_at"] == errors["down"]["first_failure_at"]
    )


def test_records_stream_as_each_cluster_finishes(tmp_path: Path) -> None:
    rows = tmp_path / "rows.json"
    rows.write_text(json.dumps([row("fast-1", "ACTIVE")]))
    slow = table_cluster("slow", rows)
    slow["command"] = f"sleep 3; {slow['command']}"
    config = write_config(tmp_path, [slow, table_cluster("fast", rows)])
    start = time.monotonic()
    proc = subprocess.Popen(
        [*LABCTL, "poll", "--config", str(config)], stdout=subprocess.PIPE, env=os.environ
    )
    assert proc.stdout is not None
    first = json.loads(proc.stdout.readline())
    first_at = time.monotonic() - start
    rest = proc.stdout.read()
    proc.wait(timeout=30)
    total = time.monotonic() - start
    assert first["cluster"] == "fast"
    assert first_at < total - 2  # written long before the slow cluster finished
    assert b'"cluster":"slow"' in rest


def test_a_second_concurrent_poll_is_refused_with_a_locked_record(tmp_path: Path) -> None:
    rows = tmp_path / "rows.json"
    rows.write_text(json.dumps([row("a", "ACTIVE")]))
    delay = tmp_path / "delay"
    delay.write_text("3")
    slow = table_cluster("slow", rows)
    slow["command"] = f"sleep $(cat {delay}); {slow['command']}"
    config = write_config(tmp_path, [slow], poll={"lock_wait_s": 0.5})
    first = subprocess.Popen(
        [*LABCTL, "poll", "--config", str(config)], stdout=subprocess.PIPE, env=os.environ
    )
    lock = Path(os.environ["XDG_STATE_HOME"]) / "labctl" / "poll.lock"
    deadline = time.monotonic() + 10
    while not (lock.exists() and lock.read_text().strip() == str(first.pid)):
        assert time.monotonic() < deadline, "the first poll never took the lock"
        time.sleep(0.05)
    second = poll(config)
    assert second.code == 3
    [rec] = second.records
    assert rec["reason"] == "locked" and "poll.lock" in rec["message"]
    out, _ = first.communicate(timeout=30)
    assert first.returncode == 0 and b'"job_id":"a"' in out
    delay.write_text("0")
    assert poll(config).code == 0  # the lock died with the first poll


@pytest.mark.parametrize(
    ("cluster", "message"),
    [
        ({"host": "local"}, "name is required"),
        ({"name": "a b"}, "name 'a b' is not allowed"),
        ({"name": "c", "scheduler": "pbs"}, "scheduler must be one of slurm, command"),
        ({"name": "c", "timeout_s": 0}, "timeout_s must be a positive number"),
        ({"name": "c", "host": "-oProxyCommand=x"}, "is not a host name"),
        ({"name": "c", "sheduler": "slurm"}, "unknown key 'sheduler' (did you mean 'scheduler'?)"),
        ({"name": "c", "scheduler": "command"}, 'needs command = "<shell command>"'),
        ({"name": "c", "command": "ls"}, 'command is only for scheduler = "command"'),
        ({"name": "c", "users": ["a,b"]}, "users: 'a,b' is not allowed"),
        ({"name": "c", "ssh_options": ["-p", "2"]}, "ssh_options given but host is local"),
        (
            {"name": "c", "scheduler": "command", "command": "x", "states": {"OK": "fine"}},
            "states: 'OK' maps to 'fine'",
        ),
        (
            {"name": "c", "scheduler": "command", "command": "x", "fields": {"jobid": "id"}},
            "'jobid' is not a job field (did you mean 'job_id'?)",
        ),
    ],
)
def test_bad_cluster_config_is_one_line_and_exit_2(
    tmp_path: Path, cluster: dict, message: str
) -> None:
    res = poll(write_config(tmp_path, [cluster]))
    assert res.code == 2
    [rec] = res.records
    assert rec["reason"] == "config" and message in rec["message"], rec["message"]
    assert "\n" not in rec["message"]
    assert not (Path(os.environ["XDG_STATE_HOME"]) / "labctl" / "poll.sqlite").exists()


def test_duplicate_names_and_unknown_cluster_selection(tmp_path: Path) -> None:
    res = poll(write_config(tmp_path, [{"name": "c"}, {"name": "c"}]))
    assert res.code == 2 and "two [[clusters]] are named 'c'" in res.records[0]["message"]
    rows = tmp_path / "rows.json"
    rows.write_text("[]")
    config = write_config(tmp_path, [table_cluster("tpu", rows)])
    res = poll(config, "--cluster", "nope")
    assert res.code == 2 and res.records[0]["reason"] == "usage"
    empty = poll(config, "--cluster", "tpu")
    assert empty.code == 0 and empty.records == []


def test_per_job_allowance_overrides_and_bad_ones(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_bytes(b"".join(b"step:%d - loss:1.0\n" % i for i in range(1, 9)))
    rows = tmp_path / "rows.json"
    rows.write_text(json.dumps([row("a", "ACTIVE", name="rl-grpo", log=str(log)),
                                row("b", "ACTIVE", name="sft", log=str(log))]))  # fmt: skip
    cluster = table_cluster("tpu", rows)
    config = write_config(tmp_path, [cluster], extra={
        "progress": {"floor_s": 600.0, "poll_interval_s": 60.0},
        'jobs."rl-*"': {"allowance_s": 7200.0},
    })  # fmt: skip
    got = jobs(poll(config))
    assert got["a"]["progress"]["allowance_s"] == 7200
    assert got["b"]["progress"]["allowance_s"] == 600
    assert got["a"]["progress"]["value"] == 8 and got["a"]["progress"]["format"] == "log:verl"
    bad = write_config(tmp_path, [cluster], extra={'jobs."rl-*"': {"alowance_s": 1.0}})
    res = poll(bad)
    assert res.code == 2 and "unknown cadence setting(s): alowance_s" in res.records[0]["message"]
    off = write_config(tmp_path, [cluster], extra={"progress": {"enabled": False}})
    assert jobs(poll(off))["a"]["verdict"] == "running"


def test_a_poll_reads_only_the_stored_jobs_it_can_meet_again(tmp_path: Path) -> None:
    """A lab's store holds weeks of finished jobs; a poll loads the active ones, those the
    last good poll saw, and every attempt sharing an active job's id. `--since` reaches
    back as far as it asks, so a job the store saw end long ago is still reported."""
    import sqlite3

    from labctl.poll.store import Store, StoredJob, store_path

    rows = tmp_path / "rows.json"
    config = write_config(tmp_path, [table_cluster("tpu", rows)])
    ended = int(time.time()) - 3 * 86400
    rows.write_text(json.dumps([row("old", "SUCCEEDED", rc=0, ended=ended), row("b", "ACTIVE")]))
    poll(config)
    path = store_path(Path(os.environ["XDG_STATE_HOME"]) / "labctl")
    with sqlite3.connect(path) as db:  # three days pass: the finished job was last seen then
        db.execute("UPDATE jobs SET last_seen = ? WHERE job_id = 'old'", (ended,))
    rows.write_text(json.dumps([row("b", "ACTIVE")]))
    assert set(jobs(poll(config))) == {"b"}
    store = Store(path)
    try:
        last_ok = store.cluster("tpu")["last_ok_at"]
        [b] = [j for j in store.jobs("tpu").values() if j.job_id == "b"]
        earlier = StoredJob(**{**b.fields(), "key": (b.key[0], b.key[1], b.key[2] - 1),
                               "last_seen": ended, "active": False, "terminal": True})  # fmt: skip
        with store.transaction():  # an earlier attempt of the active job, seen long ago
            store.put_jobs("tpu", [earlier])
        every = sorted(j.key for j in store.jobs("tpu").values())
        meets = sorted(j.key for j in store.jobs("tpu", seen_since=last_ok - 600).values())
    finally:
        store.close()
    assert len(every) == 3 and meets == sorted([b.key, earlier.key])
    again = jobs(poll(config, "--since", "4d"))
    assert set(again) == {"b", "old"} and not again["old"]["new"]
    assert set(jobs(poll(config, "--since", "2d"))) == {"b"}  # it ended before that
