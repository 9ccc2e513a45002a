"""Run a cluster's own job-table command (the `command` scheduler) through the Transport.

The command is the user's, from their config (e.g. a TPU queue's `list --json`); it runs
in the same kind of script as squeue (clock and login user first), and whatever it prints
comes back as text for `labctl.cluster.jobtable` to parse. A non-zero exit, or no output with
an error, is a BackendError (`command_failed`), never "no jobs".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from labctl.backends.script import Script, Section, clock_of, run_script
from labctl.backends.transport import Transport
from labctl.errors import BackendError


@dataclass
class JobTable:
    now: float
    user: str | None
    text: str
    elapsed_s: float


def read_job_table(
    transport: Transport, command: str, *, timeout: float, path_prepend: Sequence[str] = ()
) -> JobTable:
    script = Script(path_prepend=path_prepend)
    script.shell("jobs", command)
    sections, elapsed = run_script(transport, script, timeout=timeout, what="the job-table command")
    sec = sections.get("jobs")
    if sec is None or sec.rc is None:
        raise BackendError("the job-table command left no output section", reason="bad_output")
    if sec.rc != 0:
        tail = sec.stderr_line() or "no stderr"
        raise BackendError(
            f"job-table command exited {sec.rc}: {tail}",
            reason="command_failed",
        )
    user = sections.get("user", Section("user")).text.strip() or None
    return JobTable(now=clock_of(sections), user=user, text=sec.text, elapsed_s=elapsed)
