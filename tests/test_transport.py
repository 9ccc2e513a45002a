"""Running cluster commands locally and over a real sshd on 127.0.0.1."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from labctl.backends.transport import Transport, TransportError

SSH_CONFIG = Path("/run/labctl-sshd/ssh_config")


def ssh_transport(**kw) -> Transport:
    if not SSH_CONFIG.exists():
        pytest.fail("the test sshd is not running: run scripts/sshd-up (scripts/test does)")
    return Transport(host="labctl-test", ssh_options=("-F", str(SSH_CONFIG)), **kw)


def test_local_and_ssh_give_the_same_output() -> None:
    script = "echo 'a|b c'; printf '%s\\n' \"$TZ\"; exit 0\n"
    local = Transport(env={"TZ": "UTC"}).run_script(script, timeout=20)
    remote = ssh_transport(env={"TZ": "UTC"}).run_script(script, timeout=20)
    assert local.ok and remote.ok
    assert local.stdout == remote.stdout == b"a|b c\nUTC\n"


def test_hung_command_is_killed_at_the_deadline_with_its_children() -> None:
    start = time.monotonic()
    res = Transport().run(["bash", "-c", "sleep 30 & sleep 30"], timeout=1)
    assert res.timed_out and time.monotonic() - start < 5
    err = Transport().error_for(res, "sacct")
    assert err.reason == "timeout" and "sacct" in err.message


def test_unreachable_host_is_classified() -> None:
    t = Transport(host="127.0.0.1", ssh_options=("-p", "1", "-o", "ConnectTimeout=3"))
    res = t.run(["true"], timeout=20)
    assert res.returncode == 255
    assert t.error_for(res).reason == "unreachable"


def test_remote_failure_is_command_failed_with_stderr() -> None:
    t = ssh_transport()
    with pytest.raises(TransportError) as err:
        t.run(
            ["sh", "-c", "echo 'sacct: error: Problem talking to the database' >&2; exit 1"],
            timeout=20,
            check=True,
        )
    assert err.value.reason == "command_failed"
    assert "Problem talking to the database" in err.value.message
