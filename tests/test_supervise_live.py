"""supervise while it runs: signals forwarded to the child's group, the registration a
poll adapter reads, a dead supervisor's run reported as not running."""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import socket
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import LABCTL, run_labctl
from helpers.supervise import (
    CHILDREN,
    alive,
    child,
    left_behind,
    registration,
    supervise,
    venv_borrowing_pip,
)
from schema_check import assert_valid

from labctl.backends.proc import terminate_group


class Live:
    """`labctl supervise` in the background, its events read as they come."""

    def __init__(
        self, tmp_path: Path, command: list[str], *options: str, env: dict[str, str] | None = None
    ) -> None:
        self.state = tmp_path / "state"
        self.marker = uuid.uuid4().hex
        env = dict(os.environ, **(env or {}))
        env.update(LABCTL_STATE_DIR=str(self.state), LABCTL_TEST_MARKER=self.marker)
        self.proc = subprocess.Popen(
            [*LABCTL, "supervise", *options, "--", *command],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        self.records: list[dict[str, Any]] = []

    def until(self, kind: str) -> dict[str, Any]:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.records.append(json.loads(line))
            if self.records[-1]["kind"] == kind:
                return self.records[-1]
        raise AssertionError(f"no {kind} event; stderr: {self.proc.stderr.read()!r}")  # type: ignore[union-attr]

    def finish(self, timeout: float = 30) -> int:
        out, _ = self.proc.communicate(timeout=timeout)
        self.records += [json.loads(x) for x in out.splitlines() if x.strip()]
        return self.proc.returncode


def _wait_for_output(log: str, text: str, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while text not in Path(log).read_text():
        assert time.monotonic() < deadline, f"{text!r} never reached {log}"
        time.sleep(0.05)


@pytest.mark.parametrize(
    ("sig", "args"),
    [(signal.SIGTERM, []), (signal.SIGINT, ["--ignore-term"])],
    ids=["sigterm", "sigint-child-ignores-term"],
)
def test_signals_are_forwarded_to_the_childs_group(
    tmp_path: Path, sig: int, args: list[str]
) -> None:
    live = Live(tmp_path, child("hang", *args), "--kill-grace", "1")
    started = live.until("attempt_started")
    _wait_for_output(started["log"], "'step': 3")  # the grandchild has been started
    live.proc.send_signal(sig)
    assert live.finish() == 130
    assert_valid("supervise", live.records)
    ended = next(r for r in live.records if r["kind"] == "attempt_ended")
    assert ended["interrupted_by"] == sig and not ended["stalled"]
    assert live.records[-1]["kind"] == "interrupted" and live.records[-1]["signal"] == sig
    assert not any(r["kind"] in ("diagnosis", "fix_applied") for r in live.records)
    assert left_behind(live.marker) == []
    assert registration(live.state)["state"] == "interrupted"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "sigint"])
def test_a_signal_during_a_pip_install_interrupts_the_run(tmp_path: Path, sig: int) -> None:
    """pip waits on a package index that never answers; the signal reaches pip's group and
    the run ends `interrupted` (130), not escalated as a failed install."""
    python, site = venv_borrowing_pip(tmp_path)
    index = socket.socket()
    index.bind(("127.0.0.1", 0))
    index.listen(8)  # connections are taken by the kernel and never answered
    config = tmp_path / "config.toml"
    config.write_text("[supervise]\nallow_install = true\n")
    env = {
        "LABCTL_CONFIG": str(config),
        "PIP_INDEX_URL": f"http://127.0.0.1:{index.getsockname()[1]}/simple",
        "PIP_TIMEOUT": "120",
        "PIP_NO_CACHE_DIR": "1",
    }
    command = [str(python), str(CHILDREN / "missing_module.py")]
    with index:
        live = Live(tmp_path, command, "--kill-grace", "1", env=env)
        live.until("diagnosis")
        logs = live.state / "supervise" / "logs"
        deadline = time.monotonic() + 30
        while "Looking in indexes" not in "".join(
            p.read_text() for p in logs.glob("*/install-1.log")
        ):
            assert time.monotonic() < deadline, "pip never started"
            time.sleep(0.05)
        live.proc.send_signal(sig)
        assert live.finish() == 130, live.records[-2:]
    assert_valid("supervise", live.records)
    end = live.records[-1]
    assert end["kind"] == "interrupted" and end["signal"] == sig, end
    assert not any(r["kind"] in ("escalated", "fix_applied") for r in live.records)
    assert not (live.state / "escalations").exists()
    assert registration(live.state)["state"] == "interrupted"
    assert left_behind(live.marker) == []
    assert not (site / "labctl_test_missing_module.py").exists()


def _read_pty(fd: int, until: bytes, timeout: float) -> bytes:
    """What the terminal shows until `until` appears (or the other side closes)."""
    out, deadline = b"", time.monotonic() + timeout
    while until not in out and (left := deadline - time.monotonic()) > 0:
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            break
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # EIO: every holder of the terminal closed it
            break
        if not chunk:
            break
        out += chunk
    return out


def test_on_a_terminal_the_output_is_streamed_redacted(tmp_path: Path) -> None:
    """stderr a real terminal (a pty): the child's output shows there while it runs, with
    every secret masked; stdout (a pipe) still gets only the events."""
    secrets = {"WANDB_API_KEY": "0123456789abcdef0123456789abcdef01234567",
               "LAB_PUSH_PASSWORD": "s3cr3t-pass-word"}  # fmt: skip
    master, slave = pty.openpty()
    state, marker = tmp_path / "state", uuid.uuid4().hex
    env = dict(os.environ, **secrets, LABCTL_STATE_DIR=str(state), LABCTL_TEST_MARKER=marker)
    proc = subprocess.Popen(
        [*LABCTL, "supervise", "--kill-grace", "1", "--", *child("tokens", "--wait")],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave, env=env,
    )  # fmt: skip
    os.close(slave)
    try:
        shown = _read_pty(master, b"tokens printed; waiting", 30)
        assert b"tokens printed; waiting" in shown, shown
        assert proc.poll() is None  # streamed while the command runs, not replayed after
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=30)
        shown += _read_pty(master, b"interrupted after", 10)
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130
    text = shown.decode("utf-8", "replace")
    assert "pushing to https://lab:" in text and "labctl supervise: attempt 1" in text
    for secret in ("A1b2C3d4E5f6G7h8", "ZyZyZy", *secrets.values(), "SECRETKEYBODYLINETWO",
                   "MIIEvQIBADANBgkq"):  # fmt: skip
        assert secret not in text, secret
    assert "[REDACTED:github_token]" in text and "[REDACTED:private_key]" in text
    kinds = [json.loads(line)["kind"] for line in out.splitlines()]
    assert kinds == ["attempt_started", "attempt_ended", "interrupted"]
    assert left_behind(marker) == []


POLL_CONFIG = '[[clusters]]\nname = "laptop"\nhost = "local"\nscheduler = "supervise"\n'


def _poll(tmp_path: Path, state: Path, extra: str = "") -> list[dict[str, Any]]:
    """`labctl poll` with one `supervise` cluster reading `state`'s registrations."""
    cfg = tmp_path / "poll.toml"
    cfg.write_text(POLL_CONFIG + extra)
    res = run_labctl("--config", str(cfg), "poll", env={"LABCTL_STATE_DIR": str(state)})
    assert res.code in (0, 1), res.stdout + res.stderr
    assert_valid("poll", res.records)
    return [r for r in res.records if r["kind"] == "job"]


def test_a_running_supervision_is_a_job_and_a_dead_one_is_not_running(tmp_path: Path) -> None:
    live = Live(tmp_path, child("hang"), "--stall-after", "60")
    started = live.until("attempt_started")
    _wait_for_output(started["log"], "'step': 3")
    reg = registration(live.state)
    assert reg["state"] == "running" and reg["pgid"] == started["pid"]
    (job,) = _poll(tmp_path, live.state)
    assert (job["scheduler"], job["state"], job["job_id"]) == (
        "supervise",
        "running",
        reg["run_id"],
    )
    assert job["verdict"].startswith("running") and job["stderr"] == started["log"]
    assert job["supervise"]["attempt"] == 1 and job["supervise"]["pgid"] == started["pid"]
    assert run_labctl("table", input=json.dumps(job) + "\n").code == 0

    live.proc.kill()  # the supervisor dies without a word; its child gets SIGTERM with it
    live.proc.wait()
    deadline = time.monotonic() + 10
    while alive(started["pid"]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(started["pid"]), "the child outlived its supervisor"
    assert registration(live.state)["state"] == "running"  # nobody was left to say otherwise
    (dead,) = _poll(tmp_path, live.state)
    assert (dead["verdict"], dead["cause"], dead["state"]) == (
        "failed", "supervisor_died", "supervisor_died",
    )  # fmt: skip
    diag = run_labctl("diagnose", input=json.dumps(dead) + "\n")
    assert diag.code == 1 and diag.records[0]["diagnosis"]["logs_missing"] == []
    assert run_labctl("table", input=json.dumps(dead) + "\n").code == 1
    terminate_group(started["pid"], 1.0)  # the grandchild, orphaned with the supervisor
    assert left_behind(live.marker) == []


def test_finished_runs_are_completed_or_failed_jobs_and_diagnose_agrees(tmp_path: Path) -> None:
    state = tmp_path / "state"
    ok = supervise(tmp_path, child("ok"))
    bad = supervise(tmp_path, child("unknown"))
    hung = supervise(tmp_path, child("hang"), "--stall-after", "1", "--kill-grace", "1")
    assert (ok.res.code, bad.res.code, hung.res.code) == (0, 1, 1)
    # another state dir for poll itself: the cluster's runs_dir says where the runs are
    runs = f'runs_dir = "{state / "supervise" / "runs"}"\n'
    jobs = {j["job_id"]: j for j in _poll(tmp_path, tmp_path / "poll-state", runs)}
    want = {
        ok.final["run_id"]: ("completed", None, "succeeded", 0),
        bad.final["run_id"]: ("failed", "escalated", "escalated", 3),
        hung.final["run_id"]: ("failed", "escalated", "hung", None),
    }
    got = {k: (j["verdict"], j["cause"], j["state"], j["exit_code"]) for k, j in jobs.items()}
    assert got == want
    assert jobs[bad.final["run_id"]]["supervise"]["escalation"] == bad.final["path"]
    assert jobs[ok.final["run_id"]]["restarts"] == 0 and jobs[hung.final["run_id"]]["restarts"] == 1
    piped = "".join(json.dumps(j) + "\n" for j in jobs.values())
    diagnosed = {
        r["job_id"]: r.get("diagnosis") for r in run_labctl("diagnose", input=piped).records
    }
    assert diagnosed[ok.final["run_id"]] is None  # completed: not a failure
    assert diagnosed[bad.final["run_id"]]["category"] == "unknown"
    assert diagnosed[hung.final["run_id"]]["category"] == "hung_no_output"


def test_old_finished_runs_are_forgotten_but_their_escalations_kept(tmp_path: Path) -> None:
    old = supervise(tmp_path, child("unknown"))
    reg = registration(old.state)
    path = old.state / "supervise" / "runs" / f"{reg['run_id']}.json"
    path.write_text(json.dumps(reg | {"ended": "2020-01-01T00:00:00Z"}))
    logs = old.state / "supervise" / "logs" / reg["run_id"]
    assert logs.is_dir()
    new = supervise(tmp_path, child("ok"))
    assert new.res.code == 0
    assert not path.exists() and not logs.exists()
    assert registration(new.state)["state"] == "succeeded"
    assert Path(old.final["path"]).exists()


def test_a_supervise_whose_reader_goes_away_takes_its_child_along(tmp_path: Path) -> None:
    """`labctl supervise ... | head -0`: the events cannot be written, so the run stops and
    the child it had just started does not run on unsupervised."""
    live = Live(tmp_path, child("hang", "--ignore-term"), "--kill-grace", "1")
    assert live.proc.stdout is not None
    live.proc.stdout.close()  # the reader is gone before the first event
    assert live.proc.wait(timeout=30) == 0
    reg = registration(live.state)
    assert reg["state"] == "aborted" and reg["attempt"] == 1
    assert left_behind(live.marker) == []


def test_a_supervise_cluster_is_this_machine(tmp_path: Path) -> None:
    cfg = tmp_path / "bad.toml"
    cfg.write_text('[[clusters]]\nname = "c1"\nhost = "c1"\nscheduler = "supervise"\n')
    res = run_labctl("--config", str(cfg), "poll")
    assert res.code == 2 and "host must be local" in res.records[0]["message"]
    cfg.write_text('[[clusters]]\nname = "c1"\nruns_dir = "/x"\n')
    res = run_labctl("--config", str(cfg), "poll")
    assert res.code == 2 and 'only for scheduler = "supervise"' in res.records[0]["message"]
