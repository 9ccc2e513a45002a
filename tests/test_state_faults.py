"""Degrade, never go blind (issue 22): `labctl poll` keeps reporting every job when its own
state is broken, says so in one `error` record, exits 3, and the next run with the fault
gone is clean by itself.

Real faults only: a tmpfs filled to its last byte (before a poll, and by the job table
command in the middle of one), a tmpfs remounted read-only, a state dir another user may
not write, stores that are garbage, truncated, damaged or a newer labctl's, a writer
SIGKILLed mid-transaction, a lock file naming a dead pid, live lock holders. The clusters
are `command` job tables (no SLURM needed).
"""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from cronuser import cron_user  # noqa: F401  (a throwaway user, for "permission denied")
from helpers.cli import LABCTL, ROOT, Result, run_here
from helpers.config import write_config
from helpers.disk import tmpfs
from helpers.faults import fill, remount, row, table_cluster, write_rows
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schema_check import assert_valid


class Lab:
    """A state dir, a job table's rows and a config polling it."""

    def __init__(self, tmp: Path, state: Path, before: str = "") -> None:
        self.tmp, self.state = tmp, state
        self.rows = tmp / "rows.json"
        self.set_rows([row("a", "ACTIVE"), row("b", "QUEUED")])
        self.config = self.write_config(before)

    def write_config(self, before: str = "") -> Path:
        """A config polling the rows (`before`: a shell command the job table runs first)."""
        home = self.tmp / ("config-filling" if before else "config")
        home.mkdir(exist_ok=True)
        clusters = [table_cluster("tpu", self.rows, before)]
        extra = {"paths": {"state_dir": str(self.state)}}
        return write_config(home, clusters, poll={"lock_wait_s": 0.5}, extra=extra)

    def set_rows(self, rows: list[dict[str, Any]]) -> None:
        write_rows(self.rows, rows)

    def poll(self, config: Path | None = None) -> Result:
        res = run_here("poll", "--config", str(config or self.config))
        assert_valid("poll", res.records)
        return res

    @property
    def store(self) -> Path:
        return self.state / "poll.sqlite"


def jobs(res: Result) -> dict[str, dict[str, Any]]:
    return {r["job_id"]: r for r in res.records if r["kind"] == "job"}


def errors(res: Result) -> list[dict[str, Any]]:
    return [r for r in res.records if r["kind"] == "error"]


def the_error(res: Result, reason: str) -> dict[str, Any]:
    (err,) = errors(res)
    assert err["reason"] == reason, err
    assert res.code == 3, (res.code, res.stderr)
    return err


def dump(store: Path) -> tuple[Any, ...]:
    """What the store holds (jobs and clusters), after SQLite's own integrity check."""
    db = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        jobs_ = db.execute("SELECT * FROM jobs ORDER BY cluster, job_id_raw").fetchall()
        clusters = db.execute("SELECT * FROM clusters ORDER BY name").fetchall()
        return jobs_, clusters
    finally:
        db.close()


def clean(lab: Lab, res: Result | None = None) -> Result:
    """The next run, with the fault gone: no error, exit 0."""
    res = res or lab.poll()
    assert errors(res) == [] and res.code == 0, (res.stdout, res.stderr)
    assert set(jobs(res)) == {"a", "b"}
    return res


# -- the state dir takes no write -------------------------------------------------------


def test_a_full_disk_costs_the_memory_never_the_report(tmp_path: Path) -> None:
    with tmpfs(tmp_path / "state", "256k") as state:
        lab = Lab(tmp_path, state)
        assert clean(lab, lab.poll()).records
        saved = dump(lab.store)
        lab.set_rows([row("a", "SUCCEEDED", rc=0), row("b", "ACTIVE")])
        filler = fill(state)

        res = lab.poll()
        err = the_error(res, "state_unwritable")
        assert (err["errno"], err["free_bytes"], err["saved"]) == ("ENOSPC", 0, False)
        assert "run `labctl prune-disk`" in err["message"]
        assert err["compared_with"] == "last_saved_poll"
        got = jobs(res)  # compared with the last saved poll: the news is still news
        assert got["a"]["verdict"] == "completed"
        assert got["a"]["previous_verdict"] == "running-unverified" and not got["a"]["new"]

        filler.unlink()
        assert dump(lab.store) == saved  # nothing half-written
        again = clean(lab)  # not saved, so reported again: nothing is lost
        assert jobs(again)["a"]["previous_verdict"] == "running-unverified"
        third = lab.poll()  # now saved: a finished job is reported once
        assert set(jobs(third)) == {"b"} and third.code == 0


def test_a_disk_that_fills_mid_poll_rolls_the_transaction_back(tmp_path: Path) -> None:
    """The job table command fills the disk while the poll runs: the store was opened and
    written (the poll's start) before, the cluster's transaction fails and rolls back."""
    with tmpfs(tmp_path / "state", "1m") as state:
        lab = Lab(tmp_path, state)
        lab.set_rows([row(f"j{i}", "ACTIVE", name="x" * 200) for i in range(40)])
        clean_config = lab.config
        assert lab.poll().code == 0
        saved = dump(lab.store)
        lab.set_rows([row(f"j{i}", "SUCCEEDED", name="x" * 200, rc=0) for i in range(40)])
        filling = lab.write_config(f"head -c 10M /dev/zero > {state}/filler 2>/dev/null")

        res = lab.poll(filling)
        err = the_error(res, "state_unwritable")
        assert err["errno"] == "ENOSPC" and err["compared_with"] == "last_saved_poll"
        assert len(jobs(res)) == 40
        assert all(j["verdict"] == "completed" for j in jobs(res).values())

        (state / "filler").unlink()
        assert dump(lab.store) == saved  # the failed transaction left no trace
        res = lab.poll(clean_config)
        assert res.code == 0 and errors(res) == []
        assert {j["previous_verdict"] for j in jobs(res).values()} == {"running-unverified"}


def test_a_full_disk_before_any_poll_reports_every_job_as_new(tmp_path: Path) -> None:
    with tmpfs(tmp_path / "state", "256k") as state:
        lab = Lab(tmp_path, state)
        filler = fill(state)
        res = lab.poll()
        err = the_error(res, "state_unwritable")
        assert err["compared_with"] == "nothing" and "as on a first poll" in err["message"]
        assert all(j["new"] for j in jobs(res).values()) and set(jobs(res)) == {"a", "b"}
        filler.unlink()
        clean(lab)


@pytest.mark.parametrize("saved_before", [True, False])
def test_a_read_only_state_dir(tmp_path: Path, saved_before: bool) -> None:
    with tmpfs(tmp_path / "state", "256k") as state:
        lab = Lab(tmp_path, state)
        if saved_before:
            clean(lab)
        before = {p.name: p.read_bytes() for p in state.iterdir()}
        remount(state, "ro")
        res = lab.poll()
        err = the_error(res, "state_unwritable")
        assert err["errno"] == "EROFS" and "read-only" in err["message"]
        assert err["compared_with"] == ("last_saved_poll" if saved_before else "nothing")
        assert set(jobs(res)) == {"a", "b"}
        assert all(j["new"] is not saved_before for j in jobs(res).values())
        assert {p.name: p.read_bytes() for p in state.iterdir()} == before
        remount(state, "rw")
        clean(lab)


def test_a_state_dir_the_user_may_not_write(cron_user: str) -> None:  # noqa: F811
    """Root bypasses permissions: labctl runs as a throwaway user here."""
    home = Path(tempfile.mkdtemp(prefix="lc-state-"))  # pytest's tmp_path is root-only
    try:
        os.chmod(home, 0o755)
        lab = Lab(home, home / "state")
        (home / "state").mkdir()
        for path in (lab.config, lab.config.parent, lab.rows, home / "state"):
            shutil.chown(path, cron_user)
        cmd = ["setpriv", f"--reuid={cron_user}", f"--regid={cron_user}", "--clear-groups"]
        env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}

        def poll() -> Result:
            proc = subprocess.run(
                [*cmd, *LABCTL, "poll", "--config", str(lab.config)],
                env=env, cwd=home, capture_output=True, timeout=60, check=False,
            )  # fmt: skip
            return Result(proc.returncode, proc.stdout.decode(), proc.stderr.decode())

        assert clean(lab, poll())
        os.chmod(home / "state", 0o500)
        err = the_error(res := poll(), "state_unwritable")
        assert err["errno"] == "EACCES" and "may not write" in err["message"]
        assert set(jobs(res)) == {"a", "b"}
        os.chmod(home / "state", 0o700)
        clean(lab, poll())
    finally:
        shutil.rmtree(home)


# -- the store is not usable --------------------------------------------------------------


def _garbage(lab: Lab) -> None:
    lab.store.write_bytes(os.urandom(20_000))


def _text(lab: Lab) -> None:
    lab.store.write_text("this is not a database\n")


def _sql(lab: Lab, statement: str) -> None:
    db = sqlite3.connect(lab.store, isolation_level=None)
    try:
        db.execute(statement)
    finally:
        db.close()


def _newer(lab: Lab) -> None:
    _sql(lab, "UPDATE meta SET value = '99' WHERE key = 'schema_version'")


def _damaged_record(lab: Lab) -> None:
    _sql(lab, "UPDATE jobs SET record = '{\"job_id\": \"a\", broken' WHERE job_id = 'a'")


def _a_directory(lab: Lab) -> None:
    lab.store.unlink()
    (lab.store / "x").mkdir(parents=True)


@pytest.mark.parametrize(
    "damage", [_garbage, _text, _newer, _damaged_record, _a_directory], ids=lambda f: f.__name__
)
def test_an_unusable_store_is_moved_aside_and_the_poll_starts_afresh(
    tmp_path: Path, damage: Any
) -> None:
    lab = Lab(tmp_path, tmp_path / "state")
    clean(lab)
    damage(lab)
    damaged = lab.store.read_bytes() if lab.store.is_file() else None
    res = lab.poll()
    err = the_error(res, "state_reset")
    aside = Path(err["moved_to"])
    assert aside.name.startswith("poll.sqlite.corrupt-")
    assert aside.read_bytes() == damaged if damaged else (aside / "x").is_dir()  # kept
    assert err["path"] == str(lab.store) and err["cause"] in err["message"]
    assert set(jobs(res)) == {"a", "b"} and all(j["new"] for j in jobs(res).values())
    again = clean(lab)
    assert not any(j["new"] for j in jobs(again).values())  # the fresh store remembers


def test_at_most_three_moved_aside_stores_are_kept(tmp_path: Path) -> None:
    lab = Lab(tmp_path, tmp_path / "state")
    lab.state.mkdir()
    payloads = [f"garbage number {i}\n".encode() for i in range(5)]
    for payload in payloads:
        lab.store.write_bytes(payload)
        assert lab.poll().code == 3
    kept = sorted(p for p in lab.state.iterdir() if ".corrupt-" in p.name)
    assert [p.read_bytes() for p in kept] == payloads[-3:], kept


def test_side_files_move_with_the_store(tmp_path: Path) -> None:
    """A -wal left beside a store must never be replayed into the fresh one."""
    lab = Lab(tmp_path, tmp_path / "state")
    clean(lab)
    lab.store.write_bytes(b"garbage" * 100)
    wal = Path(f"{lab.store}-wal")
    wal.write_bytes(b"stale wal" * 100)
    err = the_error(lab.poll(), "state_reset")
    assert Path(err["moved_to"] + "-wal").read_bytes() == b"stale wal" * 100
    clean(lab)


# Damage at any offset: the store is moved aside (always, for a truncated one), or it
# reads back exactly what was saved (the bytes hit were unused ones). Never a wrong memory.

_SPAN = st.integers(0, 2**20)
_DAMAGE = st.one_of(
    st.tuples(st.just("truncate"), _SPAN, st.just(b"")),
    st.tuples(st.just("overwrite"), _SPAN, st.binary(min_size=1, max_size=4096)),
    st.tuples(st.just("replace"), st.just(0), st.binary(min_size=1, max_size=20_000)),
)


@pytest.fixture(scope="module")
def damage_lab(tmp_path_factory: pytest.TempPathFactory) -> tuple[Lab, bytes, dict[str, Any]]:
    """A lab whose state dir a test refills; the store one poll saved, and what the poll
    after it reports from that store."""
    lab = Lab(tmp_path_factory.mktemp("damage"), Path())
    lab.state = lab.tmp / "state"
    lab.config = lab.write_config()
    clean(lab)
    saved = lab.store.read_bytes()
    return lab, saved, _seen(clean(lab))


def _seen(res: Result) -> dict[str, Any]:
    fields = ("verdict", "new", "first_seen", "previous_verdict", "changed_since_last_poll")
    return {k: {f: j[f] for f in fields} for k, j in jobs(res).items()}


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(damage=_DAMAGE)
def test_damage_anywhere_is_moved_aside_or_harmless(
    damage_lab: tuple[Lab, bytes, dict[str, Any]], damage: tuple[str, int, bytes]
) -> None:
    lab, saved, seen = damage_lab
    how, at, data = damage
    at %= len(saved)
    if how == "truncate":
        bad = saved[: max(1, at)]
    elif how == "overwrite":
        bad = saved[:at] + data[: len(saved) - at] + saved[at + len(data) :]
    else:
        bad = data
    shutil.rmtree(lab.state, ignore_errors=True)
    lab.state.mkdir()
    lab.store.write_bytes(bad)

    res = lab.poll()
    assert set(jobs(res)) == {"a", "b"}  # the report is never lost
    if errors(res) or how != "overwrite":
        err = the_error(res, "state_reset")
        assert Path(err["moved_to"]).read_bytes() == bad
        assert all(j["new"] for j in jobs(res).values())
    else:
        # SQLite keeps no checksums: bytes changed inside a stored value (a verdict's
        # letters, a time's digits) read back as another value, so what a job is compared
        # with may differ; the jobs and their verdicts come from the scheduler regardless.
        assert res.code in (0, 1) and not errors(res)
        assert {k: j["verdict"] for k, j in _seen(res).items()} == {
            k: j["verdict"] for k, j in seen.items()
        }
    clean(lab)


# -- crashes and locks --------------------------------------------------------------------

_WRITER = """
import sys, time
from pathlib import Path
from labctl.poll.store import Store
from labctl.poll.model import StoredJob
store = Store(Path(sys.argv[1]))
store.db.execute("PRAGMA cache_size = 2")  # spill the open transaction's pages to the WAL
jobs = store.jobs("tpu")
store.db.execute("BEGIN IMMEDIATE")
for n in range(200):
    store.put_jobs("tpu", [StoredJob(**{**j.fields(), "key": (f"{j.key[0]}-{n}", *j.key[1:]),
                                        "verdict": "failed",
                                        "record": {**j.record, "pad": "x" * 4000}})
                           for j in jobs.values()])
print("mid-transaction", flush=True)
time.sleep(60)
"""


def test_a_writer_killed_mid_transaction_leaves_the_last_commit(tmp_path: Path) -> None:
    """SQLite's own recovery: a SIGKILLed writer's uncommitted pages in the WAL are never
    read. Nothing is broken, so nothing is reset: the next poll is simply clean."""
    lab = Lab(tmp_path, tmp_path / "state")
    clean(lab)
    saved = dump(lab.store)
    writer = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(lab.store)], stdout=subprocess.PIPE, cwd=ROOT
    )
    assert writer.stdout is not None and writer.stdout.readline() == b"mid-transaction\n"
    assert Path(f"{lab.store}-wal").stat().st_size > 100_000  # uncommitted pages on disk
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    assert dump(lab.store) == saved
    res = clean(lab)
    assert {j["previous_verdict"] for j in jobs(res).values()} == {
        "running-unverified",
        "pending",
    }


def test_a_lock_file_naming_a_dead_pid_is_taken(tmp_path: Path) -> None:
    lab = Lab(tmp_path, tmp_path / "state")
    dead = subprocess.Popen(["true"])
    dead.wait()
    lab.state.mkdir()
    (lab.state / "poll.lock").write_text(f"{dead.pid}\n")
    clean(lab)
    assert (lab.state / "poll.lock").read_text() == f"{os.getpid()}\n"  # this process


_FLOCK_HOLDER = """
import sys, time
from pathlib import Path
from labctl.fsops import state_lock
with state_lock(Path(sys.argv[1]), "poll"):
    print("held", flush=True)
    time.sleep(60)
"""

_SQLITE_HOLDER = """
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN EXCLUSIVE")
print("held", flush=True)
time.sleep(60)
"""


def _holding(script: str, arg: Path) -> subprocess.Popen[bytes]:
    holder = subprocess.Popen(
        [sys.executable, "-c", script, str(arg)], stdout=subprocess.PIPE, cwd=ROOT
    )
    assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
    return holder


def test_a_live_poll_holding_the_lock_is_waited_for_then_named(tmp_path: Path) -> None:
    lab = Lab(tmp_path, tmp_path / "state")
    holder = _holding(_FLOCK_HOLDER, lab.state)
    try:
        res = lab.poll()
        err = the_error(res, "locked")
        assert f"pid {holder.pid}, running" in err["message"]
        assert jobs(res) == {}  # the poll holding the lock reports them
    finally:
        holder.kill()
        holder.wait()
    clean(lab)


def test_a_live_process_holding_the_store_costs_the_save_not_the_report(tmp_path: Path) -> None:
    lab = Lab(tmp_path, tmp_path / "state")
    clean(lab)
    lab.set_rows([row("a", "FAILED", rc=1), row("b", "QUEUED")])
    holder = _holding(_SQLITE_HOLDER, lab.store)
    try:
        started = time.monotonic()
        res = lab.poll()
        assert time.monotonic() - started < 30
        err = the_error(res, "locked")
        assert err["holders"] == [holder.pid] and err["saved"] is False
        assert jobs(res)["a"]["verdict"] == "failed" and not jobs(res)["a"]["new"]
    finally:
        holder.kill()
        holder.wait()
    res = lab.poll()  # the failure was not saved: reported again, then the run is clean
    assert res.code == 1 and errors(res) == [] and jobs(res)["a"]["verdict"] == "failed"


@pytest.mark.slurm
def test_the_real_sweep_on_a_full_state_disk_still_reports_a_slurm_job(tmp_path: Path) -> None:
    """The runbook's outage on the live test SLURM: one held job of ours is reported."""
    from helpers.slurm import local_cluster, sbatch, slurm

    job = sbatch(tmp_path, "--hold", f"--job-name=i22-{os.getpid()}", wrap="true")
    try:
        with tmpfs(tmp_path / "state", "32m") as state:  # the shared cluster has many jobs
            config = write_config(
                tmp_path, [local_cluster()], extra={"paths": {"state_dir": str(state)}}
            )
            filler = fill(state)
            res = run_here("poll", "--config", str(config))
            assert_valid("poll", res.records)
            mine = [r for r in res.records if r["kind"] == "job" and r["job_id"] == job]
            assert [r["verdict"] for r in mine] == ["pending"]
            err = the_error(res, "state_unwritable")
            assert err["errno"] == "ENOSPC"
            filler.unlink()
            res = run_here("poll", "--config", str(config))
            assert [r for r in res.records if r["kind"] == "error"] == []
            assert any(r["kind"] == "job" and r["job_id"] == job for r in res.records)
    finally:
        slurm("scancel", job, check=False)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # a byte changed in the schema's text: a column renamed, a table renamed
        (b"NOT NULL,\n    job_id", b"NOT NULL,A    job_id"),
        (b"CREATE TABLE polls(", b"CREATE TABLE pollz("),
    ],
)
def test_a_store_whose_schema_text_was_damaged_is_refused_before_anything_is_written(
    tmp_path: Path, old: bytes, new: bytes
) -> None:
    """SQLite keeps the schema as text: a damaged byte there still reads as a database
    (quick_check passes) whose tables are not labctl's. It is refused at open, so the file
    poll moves aside is the damaged one, byte for byte (found by the hypothesis test)."""
    from labctl.poll.store import Store
    from labctl.poll.storefile import StoreUnusable, unusable_cause

    path = tmp_path / "store.sqlite"
    store = Store(path)
    store.close()
    saved = path.read_bytes()
    at = saved.rfind(old)  # the job_id column (the first match is job_id_raw's line)
    assert at >= 0
    bad = saved[:at] + new + saved[at + len(old) :]
    path.write_bytes(bad)
    with pytest.raises((StoreUnusable, sqlite3.DatabaseError)) as refused:
        Store(path)
    assert "schema" in str(refused.value) and unusable_cause(refused.value) is not None
    assert path.read_bytes() == bad
