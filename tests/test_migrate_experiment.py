"""`labctl migrate-experiment`: closing an experiment in one safe pass, on a real user
crontab (Debian's crontab binary, as a throwaway user), a system crontab file, YAML/TOML/
JSON refill files and, for the copy path, a second file system (tmpfs)."""

from __future__ import annotations

import json
import os
import subprocess
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from cronuser import cron_user, install, listing, user_crontab
from helpers.cli import run_labctl
from hypothesis import given
from hypothesis import strategies as st
from schema_check import assert_valid

from labctl.experiments.move import manifest

__all__ = ["cron_user", "user_crontab"]

USER_TAB = """# lab crontab: exp1 is the baseline (a comment naming it stays)
MAILTO=ops@example.org
EXP_ROOT={root}
@reboot {root}/active/exp10/warmup.sh
0 * * * * {root}/active/exp1/refill.sh --keep 4
30 * * * * cd {root}/active/exp10 && ./refill.sh
15 * * * * /data/exp1/sync.sh
45 * * * * /mnt{root}/active/exp1/x.sh
*/5 * * * * /lab/bin/watch exp1-ablation
@reboot /lab/bin/launch.sh # labctl:experiment=exp1
0 3 * * * /lab/bin/launch.sh # labctl:experiment=exp10
@reboot /lab/bin/agent # other-tool:exp1
"""
USER_RETIRED = [
    "0 * * * * {root}/active/exp1/refill.sh --keep 4\n",
    "@reboot /lab/bin/launch.sh # labctl:experiment=exp1\n",
]
FILE_TAB = """SHELL=/bin/sh\r
0 4 * * * root {root}/active/exp1/nightly-eval.sh "{root}/active/exp1"
0 5 * * * root {root}/active/exp10/nightly-eval.sh
0 6 * * * root find {root}/active -name 'exp1*'"""
FILE_RETIRED = ['0 4 * * * root {root}/active/exp1/nightly-eval.sh "{root}/active/exp1"\n']
YAML = """# keep-N: how many runs of each experiment stay queued
refill:
  exp1:            # the main sweep
    keep: 4
    script: {root}/active/exp1/refill.sh
  exp10:
    keep: 2
notes: "exp1 is the baseline"   # a string naming exp1 stays
"""
YAML_RETIRED = [
    "  exp1:            # the main sweep\n    keep: 4\n    script: {root}/active/exp1/refill.sh\n"
]
TOML = """# keep-N queues
active = ["exp0", "exp1", "exp10"]

[[queue]]
name = "exp1"
keep = 4

[[queue]]
name = "exp10"  # exp1's sibling
keep = 2
"""
TOML_RETIRED = ['"exp1", ', '[[queue]]\nname = "exp1"\nkeep = 4\n']
JSON_TEXT = """{
  "refill": {
    "exp1": {"keep": 4},
    "exp10": {"keep": 2}
  },
  "order": ["exp1", "exp10"]
}"""
JSON_RETIRED = ['    "exp1": {"keep": 4},\n', '"exp1", ']


def strip(text: str, parts: list[str]) -> bytes:
    for part in parts:
        assert text.count(part) == 1, part
        text = text.replace(part, "", 1)
    return text.encode()


@dataclass
class Lab:
    root: Path
    user: str
    env: dict[str, str]
    files: dict[str, tuple[Path, str, list[str]]]  # name -> (path, text, retired parts)
    before: dict[str, tuple[str, int, str]]  # the experiment folder's manifest

    def run(self, *args: str, input: str | None = None, **env: str):
        return run_labctl("migrate-experiment", *args, input=input, env={**self.env, **env})

    def fmt(self, text: str) -> str:
        return text.replace("{root}", str(self.root))

    def log_entries(self) -> list[Path]:
        return sorted((Path(self.env["LABCTL_LOG_DIR"])).glob("*_closed-exp1*.md"))


def make_lab(tmp: Path, user: str, second_fs: bool = False) -> Lab:
    root = tmp / "experiments"
    exp = root / "active" / "exp1"
    (exp / "runs" / "seed1").mkdir(parents=True)
    (exp / "empty").mkdir()
    (exp / "runs" / "seed1" / "metrics.jsonl").write_text('{"step": 1}\n' * 100)
    (exp / "ckpt.bin").write_bytes(os.urandom(1 << 20))
    (exp / "latest").symlink_to("runs/seed1")
    (root / "active" / "exp10").mkdir(parents=True)
    (root / "active" / "exp10" / "keep.txt").write_text("exp10 stays")
    if second_fs:
        (root / "complete").mkdir()
        proc = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(root / "complete")],
            capture_output=True,
            check=False,
        )
        if proc.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.decode().strip()}")
    lab = Lab(root, user, {}, {}, manifest(exp))
    texts = {"yaml": ("refill.yaml", YAML, YAML_RETIRED),
             "toml": ("keepn.toml", TOML, TOML_RETIRED),
             "json": ("refill.json", JSON_TEXT, JSON_RETIRED),
             "crontab": ("labctl.cron", FILE_TAB, FILE_RETIRED)}  # fmt: skip
    for key, (fname, text, retired) in texts.items():
        path = tmp / fname
        path.write_bytes(lab.fmt(text).encode())
        lab.files[key] = (path, lab.fmt(text), [lab.fmt(r) for r in retired])
    install(user, lab.fmt(USER_TAB).encode())
    config = {
        "cron": {"user": user},
        "experiments": {
            "root": str(root),
            "crontabs": [str(lab.files["crontab"][0])],
            "system_crontabs": True,
            "refill_files": [str(lab.files[k][0]) for k in ("yaml", "toml", "json")],
        },
    }
    (tmp / "config.toml").write_text(tomli_w.dumps(config))
    jobs = tmp / "jobs.jsonl"
    jobs.write_text(
        json.dumps({"kind": "job", "cluster": "c1", "job_id": "7", "name": "exp10-seed1",
                    "verdict": "running", "work_dir": str(root / "active" / "exp10")}) + "\n"
        + json.dumps({"kind": "job", "cluster": "c1", "job_id": "3", "name": "exp1-seed1",
                      "verdict": "completed", "state": "COMPLETED"}) + "\n"
    )  # fmt: skip
    lab.env = {
        "LABCTL_CONFIG": str(tmp / "config.toml"),
        "LABCTL_LOG_DIR": str(tmp / "log"),
        "JOBS": str(jobs),
    }
    return lab


@pytest.fixture
def lab(tmp_path: Path, user_crontab: str) -> Lab:
    return make_lab(tmp_path, user_crontab)


@pytest.fixture
def lab2(tmp_path: Path, user_crontab: str):
    lab = make_lab(tmp_path, user_crontab, second_fs=True)
    yield lab
    subprocess.run(["umount", "-l", str(lab.root / "complete")], check=False)


def untouched(lab: Lab) -> None:
    assert listing(lab.user) == lab.fmt(USER_TAB).encode()
    for path, text, _ in lab.files.values():
        assert path.read_bytes() == text.encode(), path
    assert manifest(lab.root / "active" / "exp1") == lab.before
    assert not (lab.root / "complete" / "exp1").exists()


def assert_closed(lab: Lab) -> None:
    """The one end state, whichever way it was reached."""
    retired_user = [lab.fmt(r) for r in USER_RETIRED]
    assert listing(lab.user) == strip(lab.fmt(USER_TAB), retired_user)  # no other line lost
    for path, text, retired in lab.files.values():
        assert path.read_bytes() == strip(text, retired), path
    done = lab.root / "complete" / "exp1"
    assert not (lab.root / "active" / "exp1").exists()
    after = manifest(done)
    closed = after.pop("CLOSED.md")
    assert after == lab.before and closed[0] == "file"
    text = (done / "CLOSED.md").read_text()
    for line in [*retired_user, *lab.files["crontab"][2]]:
        assert line.strip() in text
    assert "keep: 4" in text and "refill.exp1" in text and "queue[0]" in text
    assert "Reason: converged" in text
    assert (lab.root / "active" / "exp10" / "keep.txt").read_text() == "exp10 stays"
    entries = lab.log_entries()
    assert len(entries) == 1 and "converged" in entries[0].read_text()


def test_dry_run_shows_the_plan_and_changes_nothing(lab: Lab) -> None:
    res = lab.run("exp1", "--jobs", lab.env["JOBS"])
    assert_valid("migrate-experiment", res.records)
    (rec,) = res.records
    assert res.code == 0 and rec["status"] == "would_close" and rec["applied"] is False
    steps = {s["step"]: s for s in rec["steps"]}
    assert {ln["line"] for ln in steps["cron"]["lines"]} == {
        *(lab.fmt(r).strip() for r in USER_RETIRED),
        lab.fmt(FILE_RETIRED[0]).strip(),
    }
    assert {(Path(e["file"]).name, e["entry"]) for e in steps["refill"]["entries"]} == {
        ("refill.yaml", "refill.exp1"),
        ("keepn.toml", "active[1]"),
        ("keepn.toml", "queue[0]"),
        ("refill.json", "refill.exp1"),
        ("refill.json", "order[0]"),
    }
    assert "(rename)" in steps["move"]["message"]
    mentioned = {m["line"] for m in rec["mentions"]}
    assert "15 * * * * /data/exp1/sync.sh" in mentioned  # shown, never retired
    untouched(lab)


def test_closes_in_one_pass_and_a_rerun_changes_nothing(lab: Lab) -> None:
    res = lab.run("exp1", "--jobs", lab.env["JOBS"], "--reason", "converged", "--apply")
    assert_valid("migrate-experiment", res.records)
    (rec,) = res.records
    assert res.code == 0 and rec["status"] == "closed", rec["message"]
    assert [s["outcome"] for s in rec["steps"]] == ["done"] * 6
    assert len(rec["retired_cron"]) == 3 and len(rec["retired_refill"]) == 5
    assert_closed(lab)
    backups = list((Path(os.environ["XDG_STATE_HOME"]) / "labctl" / "backups").rglob("*.bak"))
    assert {b.read_bytes() for b in backups} >= {lab.fmt(USER_TAB).encode(), lab.fmt(YAML).encode()}

    stamps = {p: p.stat().st_mtime_ns for p, _, _ in lab.files.values()}
    again = lab.run("exp1", "--jobs", lab.env["JOBS"], "--reason", "converged", "--apply")
    (rec2,) = again.records
    assert again.code == 0 and rec2["status"] == "already_closed", rec2
    assert {s["outcome"] for s in rec2["steps"]} <= {"skipped", "nothing", "already_done"}
    assert_closed(lab)
    assert stamps == {p: p.stat().st_mtime_ns for p, _, _ in lab.files.values()}


def test_refuses_while_a_job_is_pending_or_running(lab: Lab, tmp_path: Path) -> None:
    jobs = tmp_path / "busy.jsonl"
    jobs.write_text(
        json.dumps({"kind": "job", "cluster": "c1", "job_id": "9", "name": "ablation",
                    "verdict": "pending", "work_dir": str(lab.root / "active" / "exp1" / "runs")})
        + "\n"
    )  # fmt: skip
    res = lab.run("exp1", "--jobs", str(jobs), "--reason", "converged", "--apply")
    (rec,) = res.records
    assert res.code == 1 and rec["status"] == "refused" and rec["reason"] == "jobs_active"
    assert rec["steps"][-1]["jobs"][0]["job_id"] == "9"  # matched by its work dir
    untouched(lab)
    # no job information at all (never polled, nothing piped): refused too
    res = lab.run("exp1", "--reason", "converged", "--apply")
    assert res.code == 1 and res.records[0]["reason"] == "no_job_state"
    untouched(lab)
    forced = lab.run("exp1", "--jobs", str(jobs), "--force", "--reason", "converged; zombie")
    assert forced.records[0]["status"] == "would_close"  # --force alone is still a dry run
    forced = lab.run("exp1", "--jobs", "-", "--force", "--apply", "--reason", "converged",
                     input=jobs.read_text())  # fmt: skip
    (rec,) = forced.records
    assert forced.code == 0 and rec["forced"] is True
    assert rec["steps"][0]["outcome"] == "forced"
    assert "--force" in rec["steps"][0]["message"]
    assert "Forced past 1 pending/running job" in (lab.root / "complete/exp1/CLOSED.md").read_text()


def test_never_replaces_or_nests_into_an_existing_destination(lab: Lab) -> None:
    (lab.root / "complete" / "exp1").mkdir(parents=True)  # empty: os.rename would replace it
    res = lab.run("exp1", "--jobs", lab.env["JOBS"], "--reason", "converged", "--apply")
    (rec,) = res.records
    assert res.code == 1 and rec["reason"] == "destination_exists"
    assert list((lab.root / "complete" / "exp1").iterdir()) == []
    (lab.root / "complete" / "exp1").rmdir()
    untouched(lab)  # refused before any rule was retired


def test_a_refill_file_it_cannot_edit_stops_before_the_move(lab: Lab) -> None:
    path, _, _ = lab.files["yaml"]
    anchored = "base: &b {keep: 1}\nrefill:\n  exp1: *b\n"  # an alias: data shared
    path.write_text(anchored)
    lab.files["yaml"] = (path, anchored, [])
    res = lab.run("exp1", "--jobs", lab.env["JOBS"], "--reason", "converged", "--apply")
    (rec,) = res.records
    assert res.code == 1 and rec["status"] == "failed"
    assert path.read_text() == anchored and (lab.root / "active" / "exp1").is_dir()


def test_unknown_experiment_and_bad_names_are_usage_errors(lab: Lab) -> None:
    for name in ("exp2", "../exp1", ".hidden"):
        res = lab.run(name, "--jobs", lab.env["JOBS"])
        assert res.code == 2, name
    assert lab.run("exp2", "--jobs", lab.env["JOBS"]).records[0]["reason"] == "no_such_experiment"
    assert lab.run("exp1", "--apply", "--jobs", lab.env["JOBS"]).code == 2  # needs --reason


def test_secrets_in_a_retired_line_never_reach_closed_md_or_the_log(lab: Lab) -> None:
    token = "hf_" + "Q7" * 15
    tab = lab.fmt(USER_TAB) + f"0 1 * * * HF_TOKEN={token} {lab.root}/active/exp1/up.sh\n"
    install(lab.user, tab.encode())
    res = lab.run("exp1", "--jobs", lab.env["JOBS"], "--reason", "converged", "--apply")
    assert res.code == 0 and token not in res.stdout
    assert token not in (lab.root / "complete/exp1/CLOSED.md").read_text()
    assert token not in lab.log_entries()[0].read_text()
    state = Path(os.environ["XDG_STATE_HOME"]) / "labctl" / "migrations"
    assert all(token not in p.read_text() for p in state.iterdir())


def test_across_file_systems_copy_verify_delete(lab2: Lab) -> None:
    res = lab2.run("exp1", "--jobs", lab2.env["JOBS"], "--reason", "converged", "--apply")
    (rec,) = res.records
    assert res.code == 0, rec["message"]
    move = next(s for s in rec["steps"] if s["step"] == "move")
    assert move["how"] == "copy" and move["files"] == 2 and move["bytes"] > 1 << 20
    assert_closed(lab2)
    assert not list((lab2.root / "complete").glob(".*partial*"))


CRASH_POINTS = [
    "locked", "jobs_checked", "cron_journaled", "cron_done", "refill_journaled",
    "refill_done", "mid_copy", "copy_verified", "copy_placed", "mid_delete", "moved",
    "closed_written",
]  # fmt: skip


@pytest.mark.parametrize("point", CRASH_POINTS)
def test_killed_at_any_point_a_rerun_finishes_the_job(lab2: Lab, point: str) -> None:
    args = ("exp1", "--jobs", lab2.env["JOBS"], "--reason", "converged", "--apply")
    killed = lab2.run(*args, LABCTL_TEST_CRASH_AT=point)
    assert killed.code == -9, (point, killed.stdout, killed.stderr)  # SIGKILL, mid-flight
    res = lab2.run(*args)
    assert res.code == 0 and res.records[0]["status"] == "closed", res.stdout
    assert_closed(lab2)
    assert not list((lab2.root / "complete").glob(".*partial*"))
    assert lab2.run(*args).records[0]["status"] == "already_closed"


def test_list_flags_idle_still_fed_and_jobs_after_close(lab: Lab, tmp_path: Path) -> None:
    (lab.root / "complete" / "exp7").mkdir(parents=True)
    install(lab.user, (lab.fmt(USER_TAB) + f"0 9 * * * {lab.root}/complete/exp7/x.sh\n").encode())
    jobs = tmp_path / "seen.jsonl"
    jobs.write_text(
        json.dumps({"kind": "job", "cluster": "c1", "job_id": "1", "name": "exp10-a",
                    "verdict": "running", "start_time": "2026-11-30T10:00:00Z"}) + "\n"
    )  # fmt: skip
    res = lab.run("--list", "--jobs", str(jobs))
    assert_valid("migrate-experiment", res.records)
    by = {r["name"]: r for r in res.records}
    assert res.code == 1
    assert by["exp1"]["flags"] == ["idle"] and by["exp1"]["status"] == "active"
    assert by["exp10"]["flags"] == [] and by["exp10"]["last_job"]["job_id"] == "1"
    assert by["exp7"]["flags"] == ["still_fed"] and by["exp7"]["status"] == "complete"
    assert {e["entry"] for e in by["exp1"]["refill"]} == {
        "refill.exp1", "active[1]", "queue[0]", "order[0]"
    }  # fmt: skip
    assert len(by["exp1"]["cron"]) == 3 and len(by["exp10"]["cron"]) == 4


@contextmanager
def home_of(user: str, home: Path) -> Iterator[None]:
    """The throwaway user's home (its password entry) is `home` for the block."""
    import pwd

    before = pwd.getpwnam(user).pw_dir
    subprocess.run(["usermod", "-d", str(home), user], check=True, capture_output=True)
    try:
        yield
    finally:
        subprocess.run(["usermod", "-d", before, user], check=True, capture_output=True)


HOME_LINES = """0 2 * * * ~/experiments/active/exp1/sync.sh
0 3 * * * $HOME/experiments/active/exp1/eval.sh --all
0 4 * * * cd ${{HOME}}/experiments/active/exp1 && ./refill.sh
0 5 * * * ~/experiments/active/exp10/sync.sh
0 6 * * * $LAB/active/exp1/x.sh
0 7 * * * ~{user}/experiments//active/exp1/y.sh
0 9 * * * $EXP_ROOT/active/exp1/w.sh
0 10 * * * ~/experiments/complete/exp8/upload.sh
"""
HOME_RETIRED = [0, 1, 2, 5, 6]  # of HOME_LINES: not exp10's, not the unresolvable $LAB one


def test_home_relative_lines_are_retired_and_an_unresolved_one_needs_a_person(
    lab: Lab, tmp_path: Path
) -> None:
    """`~/`, `$HOME/`, `${HOME}/`, `~user/` and the crontab's own variables spell the
    folder as cron's shell sees it (the home of the user the crontab belongs to)."""
    extra = HOME_LINES.format(user=lab.user)
    install(lab.user, (lab.fmt(USER_TAB) + extra).encode())
    tab, text, retired = lab.files["crontab"]
    mine = f"0 8 * * * {lab.user} ~/experiments/active/exp1/z.sh\n"  # a system crontab line
    tab.write_bytes((text + "\n" + mine).encode())
    lab.files["crontab"] = (tab, text + "\n" + mine, [*retired, mine])
    (lab.root / "complete" / "exp8").mkdir(parents=True)
    with home_of(lab.user, tmp_path):  # the lab's root is ~/experiments for that user
        dry = lab.run("exp1", "--jobs", lab.env["JOBS"])
        assert_valid("migrate-experiment", dry.records)
        (rec,) = dry.records
        lines = extra.splitlines()
        steps = {s["step"]: s for s in rec["steps"]}
        assert {ln["line"] for ln in steps["cron"]["lines"]} == {
            *(lab.fmt(r).strip() for r in USER_RETIRED),
            *(lab.fmt(r).strip() for r in FILE_RETIRED),
            *(lines[i] for i in HOME_RETIRED),
            mine.strip(),
        }
        open_ = [m for m in rec["mentions"] if m["why"] == "unresolved"]
        assert [m["line"] for m in open_] == ["0 6 * * * $LAB/active/exp1/x.sh"]
        assert dry.code == 1 and rec["needs_attention"] is True  # a person must look
        assert "cannot resolve" in rec["message"] and rec["status"] == "would_close"

        res = lab.run("exp1", "--jobs", lab.env["JOBS"], "--reason", "converged", "--apply")
        (rec,) = res.records
        assert rec["status"] == "closed" and res.code == 1  # closed, and still flagged
        gone = [lab.fmt(r) for r in USER_RETIRED] + [lines[i] + "\n" for i in HOME_RETIRED]
        assert listing(lab.user) == strip(lab.fmt(USER_TAB) + extra, gone)
        assert tab.read_bytes() == strip(text + "\n" + mine, [*retired, mine])

        survey = lab.run("--list", "--jobs", lab.env["JOBS"])
        by = {r["name"]: r for r in survey.records}
        assert_valid("migrate-experiment", survey.records)
        # exp1 is complete, yet the unresolvable line may still feed it; exp8 is fed by ~/
        assert by["exp1"]["flags"] == ["still_fed"] and by["exp1"]["cron"] == []
        assert [m["line"] for m in by["exp1"]["mentions"]] == [lines[4]]
        assert by["exp8"]["flags"] == ["still_fed"] and len(by["exp8"]["cron"]) == 1
        assert by["exp10"]["flags"] == [] and survey.code == 1


def table_cluster(name: str, command: str) -> dict[str, Any]:
    """A `command` cluster: its job table is what `command` prints (JSON rows)."""
    return {"name": name, "scheduler": "command", "command": command,
            "fields": {"job_id": "id", "state": "status"},
            "states": {"ACTIVE": "running", "QUEUED": "pending", "DONE": "completed"}}  # fmt: skip


def test_refuses_from_polls_store_while_it_may_miss_a_job(lab: Lab, tmp_path: Path) -> None:
    """No --jobs: poll's store decides, and only while it is fresh and complete."""
    rows = tmp_path / "rows.json"
    rows.write_text(json.dumps([{"id": "t-1", "name": "exp1-seed3", "status": "QUEUED"},
                                {"id": "t-2", "name": "exp10-a", "status": "ACTIVE"}]))  # fmt: skip
    cfg = Path(lab.env["LABCTL_CONFIG"])
    config = tomllib.loads(cfg.read_text())

    def configure(clusters: list[dict[str, Any]], **experiments: Any) -> None:
        doc = {**config, "clusters": clusters}
        doc["experiments"] = {**config["experiments"], **experiments}
        cfg.write_text(tomli_w.dumps(doc))

    def poll() -> Any:
        return run_labctl("poll", env=lab.env)

    tpu = table_cluster("tpu", f"cat {rows}")
    configure([tpu])
    assert poll().code == 0
    args = ("exp1", "--reason", "converged", "--apply")
    res = lab.run(*args)
    assert res.code == 1 and res.records[0]["reason"] == "jobs_active"  # seen in the store
    rows.write_text(json.dumps([{"id": "t-1", "name": "exp1-seed3", "status": "DONE"},
                                {"id": "t-2", "name": "exp10-a", "status": "ACTIVE"}]))  # fmt: skip
    assert poll().code == 0

    down = table_cluster("down", "echo 'connection refused' >&2; exit 7")
    configure([tpu, down])  # a cluster poll has never read: its jobs are unknown
    polled = poll()
    assert polled.code == 3
    (rec,) = lab.run(*args).records
    assert rec["status"] == "refused" and rec["reason"] == "stale_job_state", rec
    assert "down" in rec["message"]
    # the same poll's records piped in: its error record says a cluster went unread
    res = lab.run("exp1", "--jobs", "-", "--reason", "converged", "--apply", input=polled.stdout)
    (rec,) = res.records
    assert res.code == 1 and rec["reason"] == "jobs_incomplete", rec
    assert "down" in rec["message"] and "connection refused" in rec["message"]
    untouched(lab)

    configure([tpu], max_state_age_s=0)  # every cluster read, but too long ago
    (rec,) = lab.run(*args).records
    assert rec["status"] == "refused" and rec["reason"] == "stale_job_state"
    assert "stale" in rec["message"] and "tpu" in rec["message"]
    untouched(lab)

    configure([tpu, down])
    forced = lab.run(*args, "--force")
    (rec,) = forced.records
    assert forced.code == 0 and rec["status"] == "closed" and rec["forced"] is True
    assert rec["steps"][0]["outcome"] == "forced" and "down" in rec["steps"][0]["message"]
    closed_md = (lab.root / "complete" / "exp1" / "CLOSED.md").read_text()
    assert "job information was incomplete" in closed_md


_names = st.from_regex(r"[a-z][a-z0-9]{0,6}", fullmatch=True)
_spell = st.sampled_from(["~/", "$HOME/", "${HOME}/", "~{user}/", "$EXPS/../"])


@given(_names, st.sampled_from(["0", "1", "-b", "_c", ".d"]), _spell, st.booleans())
def test_expanded_paths_name_exactly_one_experiment(
    name: str, tail: str, spell: str, sibling: bool
) -> None:
    """However the home is spelt, a line naming `<name><tail>` (exp10 for exp1) never feeds
    `name`, and one naming `name`'s folder always does."""
    from labctl.cron.lines import parse
    from labctl.experiments.rules import feeding

    home = "/home/u"
    folder = f"{home}/lab/active/{name}"
    target = f"{name}{tail}" if sibling else name
    spelt = spell.replace("{user}", "u") + ("lab/" if spell != "$EXPS/../" else "") + "active/"
    text = f"EXPS={home}/lab/active\n0 * * * * {spelt}{target}/run.sh --keep 2\n"
    lines = parse(text.encode())
    found = feeding(lines, name, [folder], lambda who: home)
    assert bool(found) is (not sibling), text
