"""`labctl poll | labctl guard` on the real test SLURM: seven running RL jobs on one
cluster break "at most 6", six do not; a pending job of a concluded series is a violation;
`guard admit` answers from what poll stored. guard cancels nothing.

The rules are scoped to this run's unique job names, so other users' jobs on the shared
cluster cannot change the counts."""

from __future__ import annotations

import time
import uuid

import pytest
import tomli_w
from helpers.cli import run_labctl
from helpers.slurm import sbatch, slurm
from schema_check import assert_valid

pytestmark = pytest.mark.slurm


def states(ids: list[str]) -> dict[str, str]:
    out = slurm("squeue", "--noheader", "-o", "%i %T", "-j", ",".join(ids), check=False)
    return dict(line.split() for line in out.splitlines() if line.strip())


def wait_for(ids: list[str], want: str, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        now = states(ids)
        if all(now.get(i) == want for i in ids):
            return
        time.sleep(0.5)
    pytest.fail(f"jobs {ids} not all {want} after {timeout}s (busy node?): {states(ids)}")


def guard(env: dict[str, str]) -> tuple[int, list[dict]]:
    polled = run_labctl("poll", env=env)
    assert polled.code in (0, 1), polled.stdout
    res = run_labctl("guard", input=polled.stdout, env=env)
    assert_valid("guard", res.records)
    return res.code, [r for r in res.records if r["kind"] == "violation"]


def test_seven_running_rl_jobs_break_the_limit_six_do_not(tmp_path) -> None:
    tag = uuid.uuid4().hex[:8]
    rl = [
        sbatch(tmp_path, "-J", f"rl-guard-{tag}-{i}", "-c", "1", "--mem=16M", wrap="sleep 300")
        for i in range(7)
    ]
    held = sbatch(tmp_path, "-J", f"exp{tag}-concluded", "--hold", wrap="true")
    config = {
        "poll": {"lookback_h": 0.2},
        "guard": {
            "rules": [
                {
                    "kind": "max_running",
                    "name": "rl-cap",
                    "bucket": "RL",
                    "limit": 6,
                    "names": [f"rl-guard-{tag}-*"],
                },
                {"kind": "concluded", "name": "closed", "experiments": [f"exp{tag}"]},
            ]
        },
        "clusters": [{"name": "local", "host": "local", "scheduler": "slurm"}],
    }
    path = tmp_path / "config.toml"
    path.write_text(tomli_w.dumps(config))
    env = {"LABCTL_CONFIG": str(path)}
    try:
        wait_for(rl, "RUNNING")
        code, found = guard(env)
        assert code == 1
        by_rule = {v["rule"]: v for v in found}
        assert set(by_rule) == {"rl-cap", "closed"}
        cap = by_rule["rl-cap"]
        assert (cap["cluster"], cap["count"], cap["limit"]) == ("local", 7, 6)
        assert sorted(j["job_id"] for j in cap["jobs"]) == sorted(rl)
        assert [j["job_id"] for j in by_rule["closed"]["jobs"]] == [held]
        assert by_rule["closed"]["jobs"][0]["verdict"] == "pending"
        assert states(rl) == dict.fromkeys(rl, "RUNNING")  # guard cancelled nothing
        admit = ["guard", "admit", "--cluster", "local", "--name", f"rl-guard-{tag}-new"]
        assert run_labctl(*admit, env=env).code == 1  # 7 + 1 > 6, from the store

        slurm("scancel", rl[0])
        wait_for(rl[1:], "RUNNING")
        deadline = time.monotonic() + 30
        while rl[0] in states([rl[0]]) and time.monotonic() < deadline:
            time.sleep(0.5)
        code, found = guard(env)
        assert [v["rule"] for v in found] == ["closed"]  # six running: within the limit
        assert run_labctl(*admit, env=env).code == 1  # a seventh would break it
        slurm("scancel", rl[1])
        res = run_labctl(*admit, "--poll", env=env)
        assert res.code == 0 and res.records[-1]["admitted"] is True, res.stdout
    finally:
        slurm("scancel", *rl, held, check=False)
