"""The local test SLURM (scripts/slurm-up) and sshd (scripts/sshd-up) from a test: run a
SLURM command, submit a job, run `labctl poll` on configured clusters, pick a scenario's
job records by role."""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest
from schema_check import assert_valid

from helpers.cli import run_labctl
from helpers.config import write_config

SSH_CONFIG = Path("/run/labctl-sshd/ssh_config")
UTC_ENV = {**os.environ, "TZ": "UTC"}


def slurm(*argv: str, check: bool = True) -> str:
    if shutil.which(argv[0]) is None:
        pytest.fail(f"{argv[0]} not found: run scripts/slurm-up (scripts/test does)")
    proc = subprocess.run(
        argv, capture_output=True, text=True, env=UTC_ENV, timeout=60, check=False
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(argv)}: {proc.stderr}")
    return proc.stdout


def sbatch(workdir: Path, *args: str, wrap: str | None = None, script: str | None = None):
    argv = ["sbatch", "--parsable", f"--chdir={workdir}", *args]
    if wrap is not None:
        argv += ["--wrap", wrap]
    else:
        path = workdir / f"job-{uuid.uuid4().hex[:8]}.sh"
        path.write_text(script or "")
        argv.append(str(path))
    return slurm(*argv).strip().split(";")[0]


ENDED = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY"}


def sacct_states(ids: list[str]) -> dict[str, str]:
    """JobID -> State for the jobs and their steps (`123`, `123.batch`, `124_0` ...)."""
    out = slurm("sacct", "--noheader", "-P", "-o", "JobID,State", "-j", ",".join(ids))
    return dict(line.split("|", 1) for line in out.splitlines() if line)


def local_cluster(**extra: Any) -> dict[str, Any]:
    return {"name": "local", **extra}


def ssh_cluster(name: str = "remote", **extra: Any) -> dict[str, Any]:
    if not SSH_CONFIG.exists():
        pytest.fail("the test sshd is not running: run scripts/sshd-up (scripts/test does)")
    return {"name": name, "host": "labctl-test", "ssh_options": ["-F", str(SSH_CONFIG)], **extra}


def poll(tmp: Path, clusters: list[dict[str, Any]], *args: str, poll_settings=None, extra=None):
    config = write_config(tmp, clusters, poll=poll_settings, extra=extra)
    res = run_labctl("poll", "--config", str(config), *args, timeout=120)
    assert_valid("poll", res.records)
    return res


def mine(res: Any, sc: Any, cluster: str = "local") -> dict[str, dict[str, Any]]:
    """A scenario's job records by role (array tasks as `array_<task>`); `sc.ids` maps each
    role to its job id."""
    by_raw = {v: k for k, v in sc.ids.items()}
    out: dict[str, dict[str, Any]] = {}
    for rec in res.records:
        if rec["kind"] != "job" or rec["cluster"] != cluster:
            continue
        if rec["array_job_id"] == sc.ids.get("array") and rec["array_task_id"] is not None:
            out[f"array_{rec['array_task_id']}"] = rec
        elif rec["job_id"] in by_raw:
            out[by_raw[rec["job_id"]]] = rec
    return out
