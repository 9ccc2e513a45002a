"""The sweep end to end: the demo's sample jobs on the test SLURM, polled a few times,
then `scripts/sweep` under cron's bare environment. Checks the tables people read
(buckets, flags), the dated log entry, and the JSON Lines stream against the schemas."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
import uuid
from pathlib import Path

import pytest
from helpers.cli import ROOT
from helpers.cron import cron_env
from helpers.slurm import ENDED, sacct_states, slurm
from schema_check import assert_valid

pytestmark = pytest.mark.slurm
JOBS = ROOT / "labctl" / "data" / "demo" / "jobs"
# wide tables: a row's cells stay on one line whatever other tests left on the cluster
CONFIG = """
[output]
table_width = 400

[poll]
lookback_h = 0.05

[progress]
poll_interval_s = 6.0
startup_grace_s = 0.0
floor_s = 8.0

[[clusters]]
name = "local"
host = "local"
scheduler = "slurm"
skip = ["tracegen-*"]
"""


def submit(workdir: Path, script: str, name: str) -> str:
    out = slurm(
        "sbatch",
        "--parsable",
        f"--chdir={workdir}",
        f"--job-name={name}",
        "--output=%x-%j.out",
        str(JOBS / f"{script}.sh"),
    )
    return out.strip().split(";")[0]


def run(argv: list[str], home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv,
        env=cron_env(home),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _wait_until_ended(ids: list[str], timeout: float = 180) -> None:
    """Until sacct has both jobs' rows (the job's and its .batch step) in an end state: on a
    busy node a job submitted now may take far longer than its ~8 s to start and end."""
    give_up = time.monotonic() + timeout
    while time.monotonic() < give_up:
        states = sacct_states(ids)
        if all(states.get(i) in ENDED and states.get(f"{i}.batch") in ENDED for i in ids):
            return
        time.sleep(1)
    raise AssertionError(f"jobs {ids} did not end within {timeout:.0f} s: {sacct_states(ids)}")


def test_the_sweep_under_cron(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".config" / "labctl").mkdir(parents=True)
    config = home / ".config" / "labctl" / "config.toml"
    config.write_text(CONFIG)
    config.chmod(0o600)
    work = tmp_path / "jobs"
    work.mkdir()
    tag = uuid.uuid4().hex[:6]
    labctl = str(ROOT / ".venv" / "bin" / "labctl")
    ids = {
        "rl": submit(work, "rl-grpo-demo", f"rl-grpo-{tag}"),
        "silent": submit(work, "eval-silent-demo", f"eval-silent-{tag}"),
        "tracegen": submit(work, "tracegen-demo", f"tracegen-{tag}"),
    }
    try:
        # three polls: the silent job is seen once (done printing), then not rising; failing
        # jobs are submitted late so that the sweep is the first poll to see them end
        for pause in (12, 10, 10):
            time.sleep(pause)
            assert run([labctl, "poll", "--quiet"], home).returncode in (0, 1, 3)
        ids["oom"] = submit(work, "sft-oom-demo", f"sft-oom-{tag}")
        ids["nan"] = submit(work, "sft-nan-demo", f"sft-nan-{tag}")
        _wait_until_ended([ids["oom"], ids["nan"]])
        sweep = run([str(ROOT / "scripts" / "sweep")], home)
    finally:
        slurm("scancel", *ids.values(), check=False)
    assert sweep.stderr == "", sweep.stderr
    assert sweep.returncode == 1  # failures and a stalled job need a person
    table = sweep.stdout
    assert "\x1b" not in table and "|---" not in table
    for bucket in ("RL —", "SFT —", "Eval —"):
        assert bucket in table
    rows = {line for line in table.splitlines() if tag in line}
    assert any(f"rl-grpo-{tag}" in r and "▲ progressing" in r for r in rows), table
    assert any(f"eval-silent-{tag}" in r and "⚠ stalled" in r for r in rows), table
    assert any(f"sft-oom-{tag}" in r and "✗ out_of_memory" in r and "cuda_oom" in r for r in rows)
    assert any(f"sft-nan-{tag}" in r and "✗ failed" in r and "nan_loss" in r for r in rows), table
    assert not any(f"tracegen-{tag}" in r for r in rows)  # out of scope: counted only
    assert "match skip patterns" in table
    assert "health (" in table and "disk_free" in table  # the machine's own checks

    entries = sorted((home / ".local" / "state" / "labctl" / "log").glob("*_sweep*.md"))
    assert len(entries) == 1 and re.match(r"\d{4}-\d{2}-\d{2}_sweep\.md$", entries[0].name)
    text = entries[0].read_text()
    assert f"sft-oom-{tag}: out_of_memory — cuda_oom" in text
    block = text.split("```jsonl\n", 1)[1].split("```", 1)[0]
    records = [json.loads(line) for line in block.splitlines()]
    assert_valid("diagnose", records)
    assert_valid("poll", [r for r in records if r["kind"] in ("job", "skipped", "error")])
    assert_valid("health", [r for r in records if r["kind"] in ("check", "process")])
    assert {r["check"] for r in records if r["kind"] == "check"} >= {"disk_free", "load"}
    by_name = {r.get("name"): r for r in records if r["kind"] == "job"}
    assert by_name[f"sft-oom-{tag}"]["diagnosis"]["category"] == "cuda_oom"
    assert by_name[f"eval-silent-{tag}"]["verdict"] == "running-stalled"
    assert os.stat(entries[0]).st_mode & 0o077 == 0  # the log entry is private
