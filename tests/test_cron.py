"""`labctl cron`: the sweep in a real crontab (Debian's `crontab` binary), exactly once,
with every other byte of the crontab left as it was."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
import tomli_w
from cronuser import cron_user, install, listing, user_crontab
from helpers.cli import LABCTL, ROOT, run_labctl
from hypothesis import given
from hypothesis import strategies as st
from schema_check import assert_valid

from labctl.backends.crontab import CrontabTarget, edit
from labctl.cron import lines
from labctl.cron.schedule import every

__all__ = ["cron_user", "user_crontab"]

# comments, environment lines (one with CRLF), @reboot, other tools' tagged lines, a
# comment naming our tag, a commented-out sweep and a line whose tag only starts like ours
BUSY = (
    b"# m h dom mon dow command\n"
    b'MAILTO=""\r\n'
    b"PATH=/usr/local/bin:/usr/bin:/bin\n"
    b"\n"
    b"@reboot /opt/tools/start-agent.sh # other-tool:agent\n"
    b"# labctl:sweep runs here; do not edit by hand\n"
    b"#*/30 * * * * /old/scripts/sweep # labctl:sweep\n"
    b"0 3 * * * /opt/backup/run.sh --all # backup:nightly\n"
    b"15 * * * * /lab/refill.sh exp1 # labctl:sweeper\n"
    b"0 */6 * * * tr -d '\\r' < /lab/a.csv > /lab/b.csv\n"
)


def config(tmp: Path, user: str, **cron: object) -> dict[str, str]:
    body = (
        "[cron]\n"
        + f'user = "{user}"\n'
        + "".join(f"{k} = {json.dumps(v)}\n" for k, v in cron.items())
    )
    path = tmp / "config.toml"
    path.write_text(body)
    return {"LABCTL_CONFIG": str(path)}


def only(res) -> dict:
    assert len(res.records) == 1, res.stdout + res.stderr
    assert_valid("cron", res.records)
    return res.records[0]


def test_install_twice_status_remove_keeps_every_other_byte(tmp_path, user_crontab) -> None:
    user = user_crontab
    install(user, BUSY)
    env = config(tmp_path, user, command="/lab/scripts/sweep")
    first = run_labctl("cron", "install", env=env)
    rec = only(first)
    assert first.code == 0 and rec["status"] == "installed" and rec["applied"] is True
    line = "*/30 * * * * /lab/scripts/sweep # labctl:sweep"
    assert rec["line"] == line and rec["line_number"] == 11
    assert listing(user) == BUSY + line.encode() + b"\n"

    second = only(run_labctl("cron", "install", env=env))
    assert second["status"] == "unchanged" and second["applied"] is False
    assert listing(user) == BUSY + line.encode() + b"\n"  # still one line

    status = run_labctl("cron", "status", env=env)
    srec = only(status)
    assert srec["status"] == "installed" and srec["line"] == line
    assert srec["last_run"] is None  # the sweep never recorded a run
    assert status.code == 1 and "never recorded a run" in srec["message"]

    removed = only(run_labctl("cron", "remove", env=env))
    assert removed["status"] == "removed" and removed["existing"][0]["line"] == line
    assert listing(user) == BUSY  # byte for byte, CRLF and all
    again = only(run_labctl("cron", "remove", env=env))
    assert again["status"] == "absent" and again["applied"] is False
    assert listing(user) == BUSY


def test_a_different_tagged_line_is_reported_not_duplicated(tmp_path, user_crontab) -> None:
    user = user_crontab
    theirs = b"*/10 * * * * /elsewhere/sweep # labctl:sweep\n"
    install(user, BUSY + theirs)
    env = config(tmp_path, user, command="/lab/scripts/sweep")
    res = run_labctl("cron", "install", "--every", "1h", env=env)
    rec = only(res)
    assert res.code == 1 and rec["status"] == "conflict" and rec["applied"] is False
    assert rec["existing"] == [{"line_number": 11, "line": theirs.decode().strip()}]
    assert listing(user) == BUSY + theirs  # left alone

    replaced = only(run_labctl("cron", "install", "--every", "1h", "--replace", env=env))
    assert replaced["status"] == "replaced"
    assert listing(user) == BUSY + b"0 * * * * /lab/scripts/sweep # labctl:sweep\n"


HAND_WRITTEN = [
    b"*/30 * * * * SWEEP_QUIET_OK=1 /srv/labctl/scripts/sweep\n",
    b"*/10 * * * * cd /lab && /srv/.venv/bin/labctl poll --quiet | labctl table -f table\n",
    b"0 * * * * { labctl health; labctl poll; } | labctl diagnose >> /lab/sweep.log\n",
    b"*/30 * * * *   /lab/bin/nightly-sweep   --all\n",  # the very command, spaced apart
]


@pytest.mark.parametrize("theirs", HAND_WRITTEN, ids=range(len(HAND_WRITTEN)))
def test_an_untagged_line_running_the_sweep_is_a_conflict_not_a_second_sweep(
    tmp_path, user_crontab, theirs: bytes
) -> None:
    """The README once said to write the sweep's line by hand: install must see it (the
    runbook: check for an existing sweep first, so there are never two)."""
    user = user_crontab
    install(user, BUSY + theirs)
    env = config(tmp_path, user, command="/lab/bin/nightly-sweep --all")
    res = run_labctl("cron", "install", env=env)
    rec = only(res)
    assert res.code == 1 and rec["status"] == "conflict" and rec["applied"] is False
    shown = [{"line_number": 11, "line": theirs.decode().rstrip("\n")}]
    assert rec["existing"] == shown and rec["untagged"] == shown
    assert "untagged" in rec["message"] and "--replace" in rec["message"]
    assert listing(user) == BUSY + theirs  # left alone, no second sweep
    status = run_labctl("cron", "status", env=env)
    assert status.code == 1 and only(status)["status"] == "untagged"
    assert only(run_labctl("cron", "install", env=env))["status"] == "conflict"  # still

    replaced = only(run_labctl("cron", "install", "--replace", env=env))
    assert replaced["status"] == "replaced" and replaced["applied"] is True
    ours = b"*/30 * * * * /lab/bin/nightly-sweep --all # labctl:sweep\n"
    assert listing(user) == BUSY + ours  # in its place, every other byte as it was
    assert only(run_labctl("cron", "status", env=env))["status"] == "installed"


def test_a_tagged_sweep_beside_an_untagged_one_is_not_unchanged(tmp_path, user_crontab) -> None:
    user = user_crontab
    ours = b"*/30 * * * * /lab/scripts/sweep # labctl:sweep\n"
    theirs = b"0 * * * * /srv/labctl/scripts/sweep\n"
    install(user, BUSY + ours + theirs)
    env = config(tmp_path, user, command="/lab/scripts/sweep")
    rec = only(run_labctl("cron", "install", env=env))
    assert rec["status"] == "conflict" and [e["line_number"] for e in rec["existing"]] == [11, 12]
    assert listing(user) == BUSY + ours + theirs
    status = only(run_labctl("cron", "status", env=env))
    assert status["status"] == "duplicate" and "more than once" in status["message"]
    removed = run_labctl("cron", "remove", env=env)  # only labctl's own line goes
    assert only(removed)["untagged"][0]["line_number"] == 11 and removed.code == 1
    assert listing(user) == BUSY + theirs
    assert only(run_labctl("cron", "install", "--replace", env=env))["status"] == "replaced"
    assert listing(user) == BUSY + ours


@pytest.mark.parametrize(
    "command",
    [
        "/lab/scripts/sweeper",
        "/lab/scripts/sweep.bak --dry",
        "/srv/.venv/bin/labctl poll --quiet || true",
        "labctl poll --quiet > /lab/poll.jsonl",
        "labctl table --input /lab/poll.jsonl | mail -s poll ops",
        "/lab/bin/refill.sh exp1 # labctl poll | x",
        "/opt/notlabctl poll | cat",
    ],
)
def test_lines_that_do_not_run_the_sweep(command: str) -> None:
    from labctl.cron.sweep import runs_sweep

    assert not runs_sweep(command, "/lab/scripts/sweep")


def test_without_a_checkout_the_installed_sweep_is_the_whole_sweep(tmp_path, user_crontab) -> None:
    """labctl installed without its checkout (no scripts/sweep beside it, as pip leaves it):
    the line cron gets runs every stage, guard included, and records the run."""
    user = user_crontab
    site = tmp_path / "site"  # this labctl, as a package only
    shutil.copytree(ROOT / "labctl", site / "labctl", ignore=shutil.ignore_patterns("__pycache__"))
    rows = tmp_path / "rows.json"
    rows.write_text(json.dumps([{"id": "t-1", "name": "rl-grpo-1", "status": "ACTIVE"}]))
    cluster = {"name": "tpu", "scheduler": "command", "command": f"cat {rows}",
               "fields": {"job_id": "id", "state": "status"},
               "states": {"ACTIVE": "running"}}  # fmt: skip
    rule = {"kind": "max_running", "bucket": "RL", "limit": 0, "name": "no-rl-here"}
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        tomli_w.dumps({"cron": {"user": user}, "clusters": [cluster], "guard": {"rules": [rule]}})
    )
    env = {"LABCTL_CONFIG": str(cfg), "LABCTL_LOG_DIR": str(tmp_path / "log"),
           "PYTHONPATH": str(site)}  # fmt: skip
    # (run from tmp_path: `python -m` would import the checkout's labctl from the cwd)
    assert only(run_labctl("cron", "install", env=env, cwd=tmp_path))["status"] == "installed"
    (job,) = [ln for ln in lines.parse(listing(user) or b"") if ln.kind == "job"]
    assert "scripts/sweep" not in job.text  # no checkout here: the shipped sweep
    assert only(run_labctl("cron", "status", env=env, cwd=tmp_path))["last_run"] is None

    # what cron does with the line: its command, `\%` unescaped, under cron's bare
    # environment (the package importable, as pip would have left it)
    cmd = lines.without_tag(job.command or "").replace("\\%", "%")
    home = tmp_path / "home"
    home.mkdir()
    bare = {"HOME": str(home), "LOGNAME": user, "SHELL": "/bin/sh", "PATH": "/usr/bin:/bin",
            "PYTHONPATH": str(site)}  # fmt: skip
    proc = subprocess.run(["/bin/sh", "-c", cmd], env=bare, cwd=home, capture_output=True,
                          text=True, timeout=300, check=False)  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr  # the guard rule is broken
    assert "no-rl-here" in proc.stdout  # guard ran in the sweep; its violation is shown
    assert "disk_free" in proc.stdout  # and so did the health check of this machine
    (entry,) = (tmp_path / "log").glob("*_sweep*.md")  # the dated log entry
    assert "1 RL jobs running on tpu (limit 0)" in entry.read_text()
    status = only(run_labctl("cron", "status", env=env, cwd=tmp_path))
    assert status["last_run"] is not None and status["last_run"]["exit_code"] == 1
    assert "never recorded a run" not in status["message"]


def test_no_crontab_at_all_status_install_remove(tmp_path, user_crontab) -> None:
    user = user_crontab
    env = config(tmp_path, user, command="date +%F >> /tmp/x")
    res = run_labctl("cron", "status", env=env)
    assert res.code == 1 and only(res)["status"] == "absent"
    dry = only(run_labctl("cron", "install", "--dry-run", "--every", "15m", env=env))
    assert dry["applied"] is False and listing(user) is None
    rec = only(run_labctl("cron", "install", "--every", "15m", env=env))
    # cron turns a bare % into a newline: labctl escapes it
    assert listing(user) == b"*/15 * * * * date +\\%F >> /tmp/x # labctl:sweep\n"
    assert rec["status"] == "installed"
    run_labctl("cron", "remove", env=env)
    assert listing(user) is None  # back to no crontab, not an empty one


def test_last_run_from_the_state_dir(tmp_path, user_crontab) -> None:
    user = user_crontab
    env = config(tmp_path, user, command="/lab/scripts/sweep")
    run_labctl("cron", "install", env=env)
    mark = only(run_labctl("cron", "mark-run", "--exit-code", "1", "--started-at", "1", env=env))
    assert mark["status"] == "recorded"
    rec = only(run_labctl("cron", "status", env=env))
    assert rec["last_run"]["exit_code"] == 1 and rec["last_run"]["stale"] is False
    assert rec["last_run"]["started_at"] == "1970-01-01T00:00:01Z"
    state = Path(os.environ["XDG_STATE_HOME"]) / "labctl" / "sweep-last-run.json"
    data = json.loads(state.read_text())
    data["ended_at"] = "2020-01-01T00:00:00Z"
    state.write_text(json.dumps(data))
    stale = run_labctl("cron", "status", env=env)
    assert stale.code == 1 and only(stale)["last_run"]["stale"] is True
    assert "last ended" in only(stale)["message"]


def test_scripts_sweep_records_its_run(tmp_path) -> None:
    # a stand-in labctl whose stages pass stdin along; mark-run goes to the real one
    fake = tmp_path / "labctl"
    real = ROOT / ".venv" / "bin" / "labctl"
    fake.write_text(f'#!/bin/sh\n[ "$1" = cron ] && exec {real} "$@"\ncat\n')
    fake.chmod(0o755)
    env = {**os.environ, "LABCTL": str(fake), "SWEEP_QUIET_OK": "1"}
    proc = subprocess.run(
        [str(ROOT / "scripts" / "sweep")], env=env, capture_output=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    saved = Path(os.environ["XDG_STATE_HOME"]) / "labctl" / "sweep-last-run.json"
    assert json.loads(saved.read_text())["exit_code"] == 0


def test_the_users_own_crontab_without_dash_u(tmp_path, user_crontab) -> None:
    """labctl run AS the user: plain `crontab -l` / `crontab -`, no root powers."""
    user = user_crontab
    install(user, BUSY)
    home = Path(tempfile.mkdtemp(prefix="lc-cron-home-"))  # tmp_path is root-only
    shutil.chown(home, user)
    cmd = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", *LABCTL]
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}
    args = ["cron", "install", "--command", "/lab/scripts/sweep"]
    proc = subprocess.run([*cmd, *args], env=env, capture_output=True, cwd=home, check=False)
    assert proc.returncode == 0, proc.stderr
    assert listing(user) == BUSY + b"*/30 * * * * /lab/scripts/sweep # labctl:sweep\n"
    proc = subprocess.run(
        [*cmd, "cron", "remove"], env=env, capture_output=True, cwd=home, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert listing(user) == BUSY
    shutil.rmtree(home)


def test_an_edit_racing_another_writer_loses_nothing(tmp_path, user_crontab) -> None:
    """Someone installs a new crontab between labctl's read and its write: labctl starts
    over from their text, so their line and labctl's are both there."""
    user = user_crontab
    install(user, BUSY)
    target = CrontabTarget(user=user)
    theirs = b"5 4 * * * /home/u/their-new-job.sh\n"
    calls = []

    def change(data: bytes) -> bytes:
        calls.append(data)
        if len(calls) == 1:  # the other writer strikes after labctl's read
            install(user, BUSY + theirs)
        return lines.append_line(data, "0 * * * * /x # labctl:sweep")

    before, _ = edit(target, change, lock_dir=tmp_path / "state")
    assert len(calls) == 2 and before.data == BUSY + theirs
    assert listing(user) == BUSY + theirs + b"0 * * * * /x # labctl:sweep\n"


def test_a_crontab_file_without_a_final_newline(tmp_path) -> None:
    tab = tmp_path / "labctl.cron"
    tab.write_bytes(b"# lab jobs\n0 * * * * root /x")
    tab.chmod(0o640)
    env = {"LABCTL_CONFIG": str(tmp_path / "c.toml")}
    (tmp_path / "c.toml").write_text(
        f'[cron]\nfile = "{tab}"\nsystem_format = true\ncommand = "/s"\n'
    )
    rec = only(run_labctl("cron", "install", "--every", "30m", env=env))
    assert rec["status"] == "installed"
    ours = b"*/30 * * * * root /s # labctl:sweep\n"
    assert tab.read_bytes() == b"# lab jobs\n0 * * * * root /x\n" + ours
    assert tab.stat().st_mode & 0o777 == 0o640  # mode kept (atomic replace)
    run_labctl("cron", "remove", env=env)
    # the newline that had to separate the lines stays; nothing else changed
    assert tab.read_bytes() == b"# lab jobs\n0 * * * * root /x\n"


def test_bad_options_are_usage_errors(tmp_path) -> None:
    env = {"LABCTL_CONFIG": str(tmp_path / "c.toml")}
    (tmp_path / "c.toml").write_text(f'[cron]\nfile = "{tmp_path / "tab"}"\n')
    for args in (["--every", "45m"], ["--every", "soon"], ["--schedule", "* * *"]):
        res = run_labctl("cron", "install", *args, env=env)
        assert res.code == 2 and res.records[0]["reason"] == "usage", args
    res = run_labctl("cron", "install", "--command", "a\nb", env=env)
    assert res.code == 2
    assert not (tmp_path / "tab").exists()


def test_a_failing_crontab_command_is_a_backend_error(tmp_path) -> None:
    env = {"LABCTL_CONFIG": str(tmp_path / "c.toml")}
    (tmp_path / "c.toml").write_text('[cron]\nuser = "no-such-user-lc"\n')
    res = run_labctl("cron", "status", env=env)
    assert res.code == 3 and res.records[0]["reason"] == "crontab_failed"
    assert "unknown" in res.records[0]["message"]
    # the same error read downstream in a pipeline still means "a backend was unreachable"
    assert run_labctl("table", "-f", "jsonl", input=res.stdout).code == 3


@pytest.mark.parametrize(
    "text,expected",
    [
        ("1m", "* * * * *"),
        ("30m", "*/30 * * * *"),
        ("1h", "0 * * * *"),
        ("6h", "0 */6 * * *"),
        ("1d", "0 0 * * *"),
    ],
)
def test_every(text: str, expected: str) -> None:
    from labctl.records import duration_seconds

    assert every(duration_seconds(text), text) == expected


_line = st.lists(
    st.sampled_from(["#", " ", "*", "0", "a", "=", "\t", "\r", "x", "@", "é", "%", "\\"]),
    max_size=30,
).map("".join)


@given(st.lists(_line, max_size=8), st.booleans())
def test_add_then_remove_is_byte_identical(texts: list[str], final_newline: bool) -> None:
    data = "\n".join(texts).encode()
    if final_newline and data:
        data += b"\n"
    tag_line = "*/30 * * * * /s # labctl:sweep"
    added = lines.append_line(data, tag_line)
    mine = lines.tagged(lines.parse(added), "sweep")
    assert [m.text for m in mine][-1:] == [tag_line]
    removed = lines.remove_lines(added, [mine[-1].number])
    assert removed == (data if data.endswith(b"\n") or not data else data + b"\n")
