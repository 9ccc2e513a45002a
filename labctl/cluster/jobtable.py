"""The `command` scheduler: a cluster's own job table, printed as JSON by a command.

The command is the user's, from their config (e.g. a TPU queue's `list --json`); it runs
through the cluster's transport in the same kind of script as squeue (clock and login user
first). A non-zero exit, or no output section, is a BackendError (`command_failed`,
`bad_output`), never "no jobs". Rows become jobs of facts (`labctl.parse.jobtable`);
`users`, when configured, keeps rows whose `user` is one of them, and a row listed twice
counts once (the last wins). The cluster's `states` say what each state word means: the
snapshot carries them to poll, which decides the verdicts.
"""

from __future__ import annotations

import difflib
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from labctl.backends.script import Script, Section, clock_of, run_script
from labctl.backends.transport import Transport
from labctl.cluster.config import ClusterConfig
from labctl.cluster.scheduler import Fail
from labctl.cluster.snapshot import Ask, Snapshot, job_key, split_skipped
from labctl.errors import BackendError
from labctl.parse.jobtable import MAPPABLE_FIELDS, normalise_row, parse_rows
from labctl.verdicts import SCHEDULER_VERDICTS


def check_config(cfg: ClusterConfig, fail: Fail) -> None:
    if cfg.command is None:
        raise fail('scheduler = "command" needs command = "<shell command>"', "command")
    for target in cfg.fields:
        if target not in MAPPABLE_FIELDS:
            hint = difflib.get_close_matches(target, list(MAPPABLE_FIELDS), n=1)
            raise fail(
                f"fields: {target!r} is not a job field"
                + (f" (did you mean {hint[0]!r}?)" if hint else ""),
                "fields",
            )
    for state, verdict in cfg.states.items():
        if verdict not in SCHEDULER_VERDICTS:
            raise fail(
                f"states: {state!r} maps to {verdict!r}, "
                f"not one of {', '.join(SCHEDULER_VERDICTS)}",
                "states",
            )


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
        raise BackendError(f"job-table command exited {sec.rc}: {tail}", reason="command_failed")
    user = sections.get("user", Section("user")).text.strip() or None
    return JobTable(now=clock_of(sections), user=user, text=sec.text, elapsed_s=elapsed)


@dataclass
class JobTableScheduler:
    cluster: ClusterConfig
    transport: Transport
    kill_lines: ClassVar[bool] = False

    def read(self, ask: Ask, deadline: float) -> Snapshot:
        cluster = self.cluster
        assert cluster.command is not None
        table = read_job_table(
            self.transport,
            cluster.command,
            timeout=max(0.1, deadline - time.monotonic()),
            path_prepend=cluster.path_prepend,
        )
        rows = parse_rows(table.text, cluster.rows)
        jobs = [normalise_row(row, cluster.fields, n) for n, row in enumerate(rows, 1)]
        if cluster.users and not cluster.all_users:
            jobs = [j for j in jobs if j.get("user") in cluster.users]
        jobs, skipped = split_skipped(jobs, cluster.skip)
        seen: dict[Any, dict[str, Any]] = {job_key(job): job for job in jobs}
        return Snapshot(
            now=table.now,
            jobs=list(seen.values()),
            user=table.user,
            skipped=skipped,
            commands=[cluster.command],
            elapsed_s=table.elapsed_s,
            states=cluster.states,
        )


def make(
    cluster: ClusterConfig, transport: Transport, *, state_dir: Path | None = None
) -> JobTableScheduler:
    return JobTableScheduler(cluster, transport)
