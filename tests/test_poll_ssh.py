"""Deadlines over a real sshd (scripts/sshd-up) with connection sharing, as poll uses it."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from labctl.backends.script import Script, run_script
from labctl.backends.transport import Transport
from labctl.errors import BackendError

pytestmark = pytest.mark.ssh
SSH_CONFIG = Path("/run/labctl-sshd/ssh_config")


def transport() -> Transport:
    if not SSH_CONFIG.exists():
        pytest.fail("the test sshd is not running: run scripts/sshd-up (scripts/test does)")
    return Transport(host="labctl-test", ssh_options=("-F", str(SSH_CONFIG)))


def test_a_hung_command_behind_a_control_master_returns_at_the_deadline() -> None:
    """An ssh mux client passes its stdout to the ControlMaster; killing the client must
    not leave the caller waiting for the remote command to end."""
    t = transport()
    assert t.run(["true"], timeout=20).ok  # make sure a master is up and shared
    start = time.monotonic()
    res = t.run(["sleep", "8"], timeout=2)
    assert res.timed_out and time.monotonic() - start < 6


def test_a_hung_poll_script_is_stopped_on_the_cluster_too() -> None:
    t = transport()
    script = Script()
    script.raw("slow", "sleep 31.25; echo never")
    start = time.monotonic()
    with pytest.raises(BackendError) as err:
        run_script(t, script, timeout=3, what="squeue/sacct")
    assert err.value.reason == "timeout" and time.monotonic() - start < 6
    # the remote `timeout` ended the script: nothing of it is left running
    time.sleep(1.5)  # timeout -k 1: TERM, then KILL a second later
    left = t.run(["pgrep", "-f", "^sleep 31[.]25$"], timeout=20)
    assert left.returncode == 1, left.stdout
