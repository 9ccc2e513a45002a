"""Every command that writes keeps reporting when the disk will not take its write (issue
22): `log` (records still pass through), `strip-yaml-comments --apply` and
`migrate-experiment --apply` (the original untouched, and the record says so), `cron
mark-run`, and readers of poll's store (`guard admit`). Real faults: a tmpfs filled to its
last byte, a tmpfs remounted read-only, a store full of garbage."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from helpers.cli import ROOT, Result, run_here
from helpers.disk import tmpfs
from helpers.faults import fill, remount, row, table_cluster, write_rows
from schema_check import assert_valid

JOBS = [
    {"kind": "job", "cluster": "c1", "job_id": "7", "name": "sft", "verdict": "failed"},
    {"kind": "job", "cluster": "c1", "job_id": "8", "name": "rl", "verdict": "pending"},
]
YAML = b"# tuned on 8 GPUs\nlr: 3.0e-4  # see the 11-02 log\nbatch: 64\n"


def not_written(res: Result, path: Path | None = None) -> dict[str, Any]:
    errors = [r for r in res.records if r["kind"] == "error"]
    assert [e["reason"] for e in errors] == ["not_written"], res.records
    assert res.code == 3, (res.code, res.stderr)
    err = errors[0]
    assert err["applied"] is False and err["errno"] in ("ENOSPC", "EROFS")
    if path is not None:
        assert err["path"] == str(path)
    return err


def test_log_on_a_full_disk_passes_the_records_through(tmp_path: Path, monkeypatch) -> None:
    with tmpfs(tmp_path / "log", "256k") as log_dir:
        monkeypatch.setenv("LABCTL_LOG_DIR", str(log_dir))
        filler = fill(log_dir)
        stdin = tmp_path / "records.jsonl"
        stdin.write_text("".join(json.dumps(r) + "\n" for r in JOBS))
        res = run_here("log", "--topic", "sweep", "--input", str(stdin))
        assert res.records[:2] == JOBS  # the sweep's records still reach stdout
        err = not_written(res, log_dir)
        assert err["free_bytes"] == 0 and "run `labctl prune-disk`" in err["message"]
        assert "the 2 record(s) read passed through" in err["message"]
        assert_valid("log", res.records)
        assert sorted(p.name for p in log_dir.iterdir()) == ["filler"]  # no stray file

        filler.unlink()
        res = run_here("log", "--topic", "sweep", "--input", str(stdin))
        assert res.code == 1 and res.records[-1]["kind"] == "log"  # 1: a failed job
        assert Path(res.records[-1]["path"]).is_file()


def test_log_into_a_read_only_directory(tmp_path: Path, monkeypatch) -> None:
    with tmpfs(tmp_path / "log", "256k") as log_dir:
        monkeypatch.setenv("LABCTL_LOG_DIR", str(log_dir))
        remount(log_dir, "ro")
        err = not_written(run_here("log", "-t", "launch", "-m", "started v3"), log_dir)
        assert err["errno"] == "EROFS" and "read-only" in err["message"]
        remount(log_dir, "rw")
        assert run_here("log", "-t", "launch", "-m", "started v3").code == 0


@pytest.mark.parametrize(
    "where,errno_name",
    [("logs", "EEXIST"), ("logs/2026", "ENOTDIR")],  # the log dir is a file / under one
)
def test_log_where_a_file_stands_for_the_log_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str, errno_name: str
) -> None:
    """A file where the log directory should be is a fault of the place, not a bug:
    the records still reach stdout, one not_written with the advice, exit 3."""
    (tmp_path / "logs").write_text("not a directory\n")
    log_dir = tmp_path / where
    monkeypatch.setenv("LABCTL_LOG_DIR", str(log_dir))
    stdin = tmp_path / "records.jsonl"
    stdin.write_text("".join(json.dumps(r) + "\n" for r in JOBS))
    res = run_here("log", "--topic", "sweep", "--input", str(stdin))
    assert res.records[:2] == JOBS
    assert res.code == 3, (res.code, res.records)
    (err,) = [r for r in res.records if r["kind"] == "error"]
    assert err["reason"] == "not_written" and err["errno"] == errno_name
    assert err["applied"] is False and err["path"] == str(log_dir)
    assert "a file stands where a directory should be" in err["message"]
    assert_valid("log", res.records)
    assert (tmp_path / "logs").read_text() == "not a directory\n"


def test_strip_yaml_on_a_full_disk_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    with tmpfs(tmp_path / "configs", "256k") as configs:
        path = configs / "rl.yaml"
        path.write_bytes(YAML)
        filler = fill(configs)
        res = run_here("strip-yaml-comments", "--apply", str(path))
        err = not_written(res, path)
        assert err["original_intact"] is True and "the original is untouched" in err["message"]
        assert path.read_bytes() == YAML
        assert sorted(p.name for p in configs.iterdir()) == ["filler", "rl.yaml"]

        filler.unlink()
        res = run_here("strip-yaml-comments", "--apply", str(path))
        assert res.code == 0 and res.records[0]["applied"] is True
        assert path.read_bytes() == b"lr: 3.0e-4\nbatch: 64\n"


def test_strip_yaml_notes_that_cannot_be_written_stop_every_rewrite(tmp_path: Path) -> None:
    path = tmp_path / "eval.yaml"
    path.write_bytes(YAML)
    with tmpfs(tmp_path / "notes", "256k") as notes_dir:
        fill(notes_dir)
        notes = notes_dir / "ops-notes.md"
        res = run_here("strip-yaml-comments", "--apply", "--move-to", str(notes), str(path))
        err = not_written(res, notes)
        assert "no YAML file was rewritten" in err["message"]
        (file_rec,) = [r for r in res.records if r["kind"] == "file"]
        assert file_rec["applied"] is False and file_rec["comments_removed"] == 2
        assert path.read_bytes() == YAML  # the knowledge stays where it was


def test_migrate_experiment_on_a_full_state_disk_half_does_nothing(tmp_path: Path) -> None:
    root = tmp_path / "experiments"
    (root / "active" / "exp1").mkdir(parents=True)
    (root / "active" / "exp1" / "metrics.jsonl").write_text('{"step": 1}\n')
    jobs = tmp_path / "jobs.jsonl"
    jobs.write_text(json.dumps(JOBS[0] | {"name": "exp1-seed1", "verdict": "completed"}) + "\n")
    with tmpfs(tmp_path / "state", "256k") as state:
        config = tmp_path / "config.toml"
        config.write_text(
            tomli_w.dumps(
                {
                    "paths": {"state_dir": str(state), "log_dir": str(tmp_path / "log")},
                    "experiments": {"root": str(root), "user_crontab": False},
                }
            )
        )
        os.chmod(config, 0o600)
        args = ["migrate-experiment", "exp1", "--config", str(config), "--jobs", str(jobs)]
        args += ["--reason", "converged", "--apply"]
        filler = fill(state)
        res = run_here(*args)
        (rec,) = res.records
        assert res.code == 3 and (rec["status"], rec["reason"]) == ("failed", "not_written")
        assert rec["applied"] is False and rec["steps"][-1]["errno"] == "ENOSPC"
        assert "nothing is half-done" in rec["message"] and "prune-disk" in rec["message"]
        assert (root / "active" / "exp1" / "metrics.jsonl").is_file()
        assert not (root / "complete").exists()

        filler.unlink()
        res = run_here(*args)
        assert res.code == 0 and res.records[0]["status"] == "closed"
        assert (root / "complete" / "exp1" / "CLOSED.md").is_file()


def test_cron_mark_run_on_a_full_disk_says_the_state_is_unwritable(tmp_path: Path) -> None:
    with tmpfs(tmp_path / "state", "256k") as state:
        config = tmp_path / "config.toml"
        config.write_text(tomli_w.dumps({"paths": {"state_dir": str(state)}}))
        os.chmod(config, 0o600)
        fill(state)
        res = run_here("cron", "mark-run", "--exit-code", "0", "--config", str(config))
        assert res.code == 3 and len(res.records) == 1, res.records
        err = res.records[0]
        assert (err["reason"], err["errno"], err["free_bytes"]) == ("state_unwritable", "ENOSPC", 0)
        assert "sweep-last-run.json" in err["message"] and err["path"] == str(state)


def guard_lab(tmp_path: Path, state: Path, monkeypatch: Any) -> None:
    """One running RL job on a job table, a guard rule of at most one, `state` as the
    state dir; the config is LABCTL_CONFIG."""
    rows = write_rows(tmp_path / "rows.json", [row("t-1", "ACTIVE", name="rl-grpo-1")])
    config = tmp_path / "config.toml"
    config.write_text(
        tomli_w.dumps(
            {
                "paths": {"state_dir": str(state)},
                "guard": {"rules": [{"kind": "max_running", "bucket": "RL", "limit": 1}]},
                "clusters": [table_cluster("tpu", rows)],
            }
        )
    )
    os.chmod(config, 0o600)
    monkeypatch.setenv("LABCTL_CONFIG", str(config))


def test_guard_reads_a_broken_store_as_an_error_and_polls_past_it(
    tmp_path: Path, monkeypatch
) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / "poll.sqlite").write_bytes(b"garbage" * 300)
    guard_lab(tmp_path, state, monkeypatch)
    res = run_here("guard", "admit", "-c", "tpu", "-n", "rl-grpo-2")
    assert res.code == 3 and res.records[-1]["reason"] == "state_unreadable"
    assert "the next `labctl poll` moves it aside" in res.records[-1]["message"]
    assert run_here("rl-health", "tpu:t-1").records[-1]["reason"] == "state_unreadable"
    res = run_here("guard", "admit", "-c", "tpu", "-n", "rl-grpo-2", "--poll")
    assert "moved it" in res.stderr  # the store was reset; the jobs it polled are right
    assert res.code == 1 and res.records[-1]["admitted"] is False  # 1 RL job already runs


def test_readers_of_the_store_read_it_on_a_read_only_disk(tmp_path: Path, monkeypatch) -> None:
    """SQLite cannot open a WAL store where it cannot make the -shm file: readers read a
    copy in memory instead."""
    with tmpfs(tmp_path / "state", "256k") as state:
        guard_lab(tmp_path, state, monkeypatch)
        assert run_here("poll").code == 0
        remount(state, "ro")
        res = run_here("guard", "admit", "-c", "tpu", "-n", "rl-grpo-2")
        assert res.code == 1 and res.records[-1]["admitted"] is False, res.records


def test_a_write_fault_no_command_expected_is_not_an_internal_error(tmp_path: Path) -> None:
    """`config init` has no fault handling of its own: main() still names the fault."""
    with tmpfs(tmp_path / "etc", "256k") as etc:
        fill(etc)
        target = etc / "labctl.toml"
        res = run_here("config", "init", "--config", str(target))
        err = not_written(res, target)
        assert err["free_bytes"] == 0 and "prune-disk" in err["message"]
        assert sorted(p.name for p in etc.iterdir()) == ["filler"]


# -- supervise: the experiment runs on -----------------------------------------------------

_CHATTY = "import sys\nfor i in range(4000): print(f'step {i} ' + 'x' * 500)\nsys.exit(0)\n"


def test_supervise_keeps_the_command_running_when_the_disk_fills(tmp_path: Path) -> None:
    """The attempt log fills the disk mid-run: the log stops, the child is still read to
    its end (it never blocks on a full pipe) and succeeds."""
    from helpers.supervise import supervise

    with tmpfs(tmp_path / "state", "256k") as state:
        run = supervise(tmp_path, [sys.executable, "-c", _CHATTY])
        kinds = [r["kind"] for r in run.records]
        assert kinds[-1] == "succeeded" and run.res.code == 3, run.res.stderr
        errors = {e["message"].split(" under ")[0]: e for e in run.kinds("error")}
        err = errors["supervise could not write attempt 1's log"]
        assert err["reason"] == "state_unwritable" and err["errno"] == "ENOSPC"
        assert "prune-disk" in err["message"] and err["free_bytes"] == 0
        (ended,) = run.kinds("attempt_ended")
        assert ended["exit_code"] == 0 and not ended["killed"]
        assert ended["bytes"] == sum(len(f"step {i} ") + 501 for i in range(4000))
        assert kinds.index("error") < kinds.index("attempt_ended")
        assert Path(ended["log"]).stat().st_size < ended["bytes"]  # what fitted
        assert os.statvfs(state).f_bavail == 0


def test_supervise_on_a_read_only_state_dir_still_runs_and_escalates(tmp_path: Path) -> None:
    from helpers.supervise import CHILDREN, supervise

    with tmpfs(tmp_path / "state", "256k") as state:
        remount(state, "ro")
        run = supervise(tmp_path, [sys.executable, str(CHILDREN / "unknown.py")])
        assert run.res.code == 3, run.res.stderr  # worse than the escalation's 1
        errors = run.kinds("error")
        assert {e["reason"] for e in errors} == {"state_unwritable"}
        assert {e["errno"] for e in errors} == {"EROFS"}
        said = " ".join(e["message"] for e in errors)
        assert "the attempt logs" in said and "the escalation files" in said
        (ended,) = run.kinds("attempt_ended")
        assert ended["exit_code"] == 3  # the command ran
        final = run.final
        assert final["kind"] == "escalated" and final["path"] is None
        assert final["reason"] == "unknown_failure"
        (diag,) = run.kinds("diagnosis")  # from the output kept in memory
        assert "frobnicator" in json.dumps(diag["evidence"])
        assert_valid("supervise", run.records)
        assert list(state.iterdir()) == []


@pytest.mark.parametrize("fault", ["ro", "full"])
def test_supervise_on_a_broken_state_dir_still_copies_the_escalation(
    tmp_path: Path, fault: str
) -> None:
    """The state dir refuses the escalation files: the --escalate-to copy is still
    written, and it is what the event names and the notify command gets."""
    from helpers.supervise import CHILDREN, supervise

    inbox, seen, hook = tmp_path / "inbox", tmp_path / "notified.txt", tmp_path / "hook.sh"
    hook.write_text(f'#!/bin/sh\necho "$@" > {seen}\n')
    hook.chmod(0o755)
    with tmpfs(tmp_path / "state", "256k") as state:
        remount(state, "ro") if fault == "ro" else fill(state)
        run = supervise(
            tmp_path, [sys.executable, str(CHILDREN / "unknown.py")],
            "--escalate-to", str(inbox), config=f'[supervise]\nnotify = "{hook}"\n',
        )  # fmt: skip
        assert run.res.code == 3, run.res.stderr
        said = " ".join(e["message"] for e in run.kinds("error"))
        assert "the escalation files" in said
        assert_valid("supervise", run.records)
        end = run.final
        assert end["kind"] == "escalated" and end["path"] is not None
        md, js = Path(end["path"]), Path(end["json_path"])
        assert md.parent == inbox and md.name.endswith("_unknown.md")
        assert end["not_written"] == [str(state / "escalations")]
        assert "frobnicator" in md.read_text()  # the output's tail, kept in memory
        assert json.loads(js.read_text())["kind"] == "escalation"
        assert sorted(p.name for p in inbox.iterdir()) == sorted([md.name, js.name])
        assert seen.read_text().split() == [str(md)] and end["notify"]["ok"] is True
        assert not (state / "escalations").exists() or not any((state / "escalations").iterdir())


# -- the sweep: the runbook's own outage ----------------------------------------------------


def test_the_sweep_on_a_full_disk_still_prints_its_tables(tmp_path: Path) -> None:
    """HOME (config, state, log) and TMPDIR on one full disk, cron's bare environment: the
    tables still print, saying what could not be saved, and the sweep exits 3."""
    from helpers.config import write_config

    rows = write_rows(tmp_path / "rows.json", [row("a", "ACTIVE", name="rl-grpo-x")])
    with tmpfs(tmp_path / "home", "1m") as home:
        (home / ".config" / "labctl").mkdir(parents=True)
        config = write_config(home / ".config" / "labctl", [table_cluster("tpu", rows)])
        config.chmod(0o600)
        env = {"HOME": str(home), "LOGNAME": "root", "SHELL": "/bin/sh", "PATH": "/usr/bin:/bin"}
        env |= {"TMPDIR": str(home), "SWEEP_MERGE": "0"}
        sweep = [str(ROOT / "scripts" / "sweep")]
        first = subprocess.run(sweep, env=env, capture_output=True, check=False)
        assert first.returncode in (0, 1), first.stderr  # 1: health finds a 1 MB disk low
        fill(home)
        proc = subprocess.run(sweep, env=env, capture_output=True, text=True, check=False)
        assert proc.returncode == 3 and proc.stderr == "", proc.stderr
        tables = proc.stdout
        assert "errors (2)" in tables and "rl-grpo-x" in tables
        assert "state_unwritable" in tables and "not_written" in tables
        assert "labctl prune-disk" in tables and "health" in tables


# -- prune-disk: the cure works on the disease ---------------------------------------------


def test_prune_disk_frees_a_full_disk_that_also_holds_labctls_state(tmp_path: Path) -> None:
    """Filled to the last byte, the state dir (and its lock) on the same disk: --apply
    needs no space to take its lock or to delete, and frees the disk."""
    from helpers.disk import age_tree, write
    from helpers.prune import candidates, prune
    from helpers.prune import write_config as prune_config

    with tmpfs(tmp_path / "vol", "16m") as vol:
        for i in (1, 2):
            write(vol / "pip" / f"e{i}" / "blob", 3_000_000)
            age_tree(vol / "pip" / f"e{i}", 30 * i)
        fill(vol)
        config = prune_config(tmp_path, [{"kind": "cache_dir", "root": str(vol / "pip")}])
        env = {"LABCTL_STATE_DIR": str(vol / "state")}  # its lock's pid finds no room
        res = prune(config, "--apply", "--min-free-gb", "0.005", str(vol), env=env)
        assert res.code == 0, (res.stdout, res.stderr)
        assert [c["status"] for c in candidates(res).values()] == ["deleted", "deleted"]
        assert os.statvfs(vol).f_bavail * os.statvfs(vol).f_frsize >= 5_000_000


_HOLDER = """
import sys, time
from pathlib import Path
from labctl.fsops import state_lock
with state_lock(Path(sys.argv[1]), "prune-disk"):
    print("held", flush=True)
    time.sleep(60)
"""


def test_the_state_lock_needs_no_room_and_still_excludes(tmp_path: Path) -> None:
    """No lock file and no way to make one (read-only): the directory itself is locked."""
    import pytest

    from labctl.errors import LockedError
    from labctl.fsops import state_lock

    with tmpfs(tmp_path / "state", "256k") as state:
        remount(state, "ro")
        holder = subprocess.Popen(
            [sys.executable, "-c", _HOLDER, str(state)], stdout=subprocess.PIPE, cwd=ROOT
        )
        try:
            assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
            with pytest.raises(LockedError), state_lock(state, "prune-disk", wait_s=0.3):
                pass
        finally:
            holder.kill()
            holder.wait()
        with state_lock(state, "prune-disk", wait_s=0.3):
            assert list(state.iterdir()) == []


def test_prune_disk_runs_where_a_file_stands_for_its_state_dir(tmp_path: Path) -> None:
    """The cure needs no state: a file where the state dir should be still lets --apply
    take its lock (on the folder holding that file) and free the disk."""
    from helpers.disk import age_tree, write
    from helpers.prune import candidates, prune
    from helpers.prune import write_config as prune_config

    write(tmp_path / "pip" / "e1" / "blob", 30_000)
    age_tree(tmp_path / "pip", 30)
    (tmp_path / "state").write_text("not a directory\n")
    config = prune_config(tmp_path, [{"kind": "cache_dir", "root": str(tmp_path / "pip")}])
    env = {"LABCTL_STATE_DIR": str(tmp_path / "state")}
    res = prune(config, "--apply", "--all", "--min-free-gb", "0", env=env)
    assert res.code == 0, (res.stdout, res.stderr)
    assert [c["status"] for c in candidates(res).values()] == ["deleted"]
    assert (tmp_path / "state").read_text() == "not a directory\n"
