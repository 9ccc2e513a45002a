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


def test_stream_yields_bounded_chunks_of_any_size_output() -> None:
    chunks = list(Transport().stream(["head", "-c", str(50 << 20), "/dev/zero"], timeout=60))
    assert sum(map(len, chunks)) == 50 << 20
    assert max(map(len, chunks)) <= 1 << 20  # never more than one chunk held


def test_stream_failure_after_partial_output_raises_with_stderr() -> None:
    got: list[bytes] = []
    with pytest.raises(TransportError) as err:
        for block in Transport().stream(
            ["sh", "-c", "echo partial; echo 'cat: x: Permission denied' >&2; exit 2"],
            timeout=20,
            what="reading x",
        ):
            got.append(block)
    assert b"".join(got) == b"partial\n"
    assert err.value.reason == "command_failed" and "Permission denied" in err.value.message


def test_stream_deadline_and_early_stop_kill_the_command() -> None:
    start = time.monotonic()
    with pytest.raises(TransportError) as err:
        list(Transport().stream(["bash", "-c", "echo first; sleep 30"], timeout=1))
    assert err.value.reason == "timeout" and time.monotonic() - start < 5
    marker = f"labctl-stream-{time.time_ns()}"
    gen = Transport().stream(["bash", "-c", f"exec -a {marker} yes"], timeout=60)
    assert next(gen).startswith(b"y\n")
    gen.close()  # the consumer stops early: the producer must not run on
    left = Transport().run(["pgrep", "-f", marker], timeout=20)
    assert left.returncode == 1, left.stdout


def test_a_command_still_exiting_after_its_output_ends_is_not_killed() -> None:
    """Its stdout closed before it exited (a loaded node, a command that cleans up): the stream
    waits for its exit within the deadline instead of killing it, so success stays success and
    a failure keeps its own exit status (not SIGKILL's)."""
    ok = Transport().stream(["sh", "-c", "echo done; exec 1>&-; sleep 0.5; exit 0"], timeout=20)
    assert b"".join(ok) == b"done\n"
    with pytest.raises(TransportError) as err:
        list(Transport().stream(["sh", "-c", "exec 1>&-; sleep 0.5; exit 3"], timeout=20))
    assert err.value.reason == "command_failed" and "exited 3" in err.value.message
    start = time.monotonic()  # and one that lingers past the deadline is still killed at it
    with pytest.raises(TransportError) as late:
        list(Transport().stream(["sh", "-c", "exec 1>&-; sleep 30"], timeout=1))
    assert late.value.reason == "timeout" and time.monotonic() - start < 5


def test_stream_over_ssh_gives_what_local_gives(tmp_path: Path) -> None:
    log = tmp_path / "big.log"
    log.write_bytes(b"".join(b"step %d loss 1.0\n" % i for i in range(300_000)))
    argv = ["cat", "--", str(log)]
    local = b"".join(Transport().stream(argv, timeout=60))
    remote = b"".join(ssh_transport().stream(argv, timeout=60))
    assert local == remote == log.read_bytes()
