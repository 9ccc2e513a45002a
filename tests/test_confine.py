"""Confinement (labctl.confine): what `labctl mcp` sets for every command it runs
(LABCTL_CONFINE=1), checked here on the commands directly; without it the user's own
permissions rule, as before."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers.cli import ROOT, run_labctl
from helpers.config import write_config
from helpers.slurm import ssh_cluster

FAILED_LOG = ROOT / "tests" / "fixtures" / "contract" / "failed.log"
CONFINED = {"LABCTL_CONFINE": "1"}


def setup_roots(tmp: Path, clusters: list[dict] | None = None) -> tuple[Path, Path, Path]:
    root, outside = tmp / "root", tmp / "outside"
    root.mkdir()
    outside.mkdir()
    shutil.copy(FAILED_LOG, outside / "secret.log")
    config = write_config(
        tmp, clusters or [{"name": "local"}], extra={"mcp": {"roots": [str(root)]}}
    )
    return config, root, outside


def test_command_line_is_not_confined(tmp_path: Path) -> None:
    config, _, outside = setup_roots(tmp_path)
    res = run_labctl("diagnose", "--config", str(config), str(outside / "secret.log"))
    assert res.records[0]["category"] == "module_not_found"


def test_default_roots_are_the_state_dir_log_dir_and_local_log_roots(tmp_path: Path) -> None:
    """No [mcp] roots: the state dir, the log dir, every local cluster's log_roots and a
    supervise cluster's runs (runs_dir's parent: its runs' logs are there); an SSH
    cluster's log_roots confine its own logs only, never a local path."""
    from labctl.confine import Confinement
    from labctl.context import build_context

    d = {n: tmp_path / n for n in ("state", "logs", "box-logs", "remote-logs", "other", "no")}
    for path in d.values():
        path.mkdir()
    clusters = [
        {"name": "box", "log_roots": [str(d["box-logs"])]},
        {"name": "laptop", "scheduler": "supervise",
         "runs_dir": str(d["other"] / "supervise" / "runs")},
        {"name": "remote", "host": "gpu-login", "log_roots": [str(d["remote-logs"])]},
    ]  # fmt: skip
    paths = {"state_dir": str(d["state"]), "log_dir": str(d["logs"])}
    config = write_config(tmp_path, clusters, extra={"paths": paths})
    conf = Confinement.for_context(build_context(config_path=str(config)))
    want = (d["state"], d["logs"], d["box-logs"], d["other"] / "supervise")
    assert conf.roots == tuple(str(p.resolve()) for p in want)
    assert conf.cluster_roots == {"remote": (str(d["remote-logs"]),)}

    (d["other"] / "supervise" / "logs" / "run-1").mkdir(parents=True)
    env = {**CONFINED, "LABCTL_CONFIG": str(config)}
    for where in (d["state"], d["logs"], d["box-logs"], d["other"] / "supervise" / "logs"):
        shutil.copy(FAILED_LOG, where / "job.err")
        res = run_labctl("diagnose", str(where / "job.err"), env=env)
        assert res.records[0]["category"] == "module_not_found", (where, res.stdout)
    for where in (d["remote-logs"], d["no"]):
        shutil.copy(FAILED_LOG, where / "job.err")
        res = run_labctl("diagnose", str(where / "job.err"), env=env)
        assert res.code == 2 and res.records[-1]["reason"] == "outside_roots", where
    # [mcp] roots, once set, are the roots: nothing is added to them
    only = write_config(
        tmp_path, clusters, extra={"paths": paths, "mcp": {"roots": [str(d["no"])]}}
    )
    assert Confinement.for_context(build_context(config_path=str(only))).roots == (
        str(d["no"].resolve()),
    )


def test_paths_options_and_relative_paths_are_checked(tmp_path: Path) -> None:
    config, root, outside = setup_roots(tmp_path)
    (root / "ok.yaml").write_text("a: 1  # c\n")
    (root / "sub").mkdir()
    (root / "sub" / "escape.yaml").symlink_to(outside / "x.yaml")
    (outside / "x.yaml").write_text("b: 2  # keep\n")
    env = {**CONFINED, "LABCTL_CONFIG": str(config)}

    ok = run_labctl("strip-yaml-comments", "ok.yaml", env=env, cwd=root)
    assert ok.code == 0 and ok.records[0]["comments_removed"] == 1
    up = run_labctl("strip-yaml-comments", "../outside/x.yaml", env=env, cwd=root)
    assert up.code == 2 and up.records[-1]["reason"] == "outside_roots"
    notes = run_labctl(
        "strip-yaml-comments", "--apply", "--move-to", str(outside / "n.md"), "ok.yaml",
        env=env, cwd=root,
    )  # fmt: skip
    assert notes.code == 2 and notes.records[-1]["reason"] == "outside_roots"
    assert (root / "ok.yaml").read_text() == "a: 1  # c\n" and not (outside / "n.md").exists()
    linked = run_labctl("strip-yaml-comments", "--apply", str(root), env=env)
    assert linked.code == 2 and linked.records[-1]["reason"] == "outside_roots"
    assert (outside / "x.yaml").read_text() == "b: 2  # keep\n"
    assert (root / "ok.yaml").read_text() == "a: 1  # c\n"  # all checked before any write
    table = run_labctl("table", "-f", "jsonl", "--input", str(outside / "secret.log"), env=env)
    assert table.code == 2 and table.records[-1]["reason"] == "outside_roots"


def test_migrate_experiment_root_and_jobs_file_are_checked(tmp_path: Path) -> None:
    config, root, outside = setup_roots(tmp_path)
    (root / "experiments" / "active").mkdir(parents=True)
    (outside / "jobs.jsonl").write_text("")
    env = {**CONFINED, "LABCTL_CONFIG": str(config)}
    inside = ["migrate-experiment", "--list", "--root", str(root / "experiments")]
    assert run_labctl(*inside, env=env).code in (0, 1)
    jobs = run_labctl(*inside, "--jobs", str(outside / "jobs.jsonl"), env=env)
    assert jobs.code == 2 and jobs.records[-1]["reason"] == "outside_roots"
    default_root = run_labctl("migrate-experiment", "--list", env=env, cwd=outside)
    assert default_root.code == 2 and default_root.records[-1]["reason"] == "outside_roots"


def test_supervise_writes_escalations_and_events_only_under_the_roots(tmp_path: Path) -> None:
    config, _, outside = setup_roots(tmp_path)
    env = {**CONFINED, "LABCTL_CONFIG": str(config)}
    for flag, where in (("--escalate-to", outside), ("--events", outside / "events.jsonl")):
        res = run_labctl("supervise", flag, str(where), "--", "true", env=env)
        assert res.code == 2 and res.records[-1]["reason"] == "outside_roots", res.stdout
    assert list(outside.iterdir()) == [outside / "secret.log"]  # nothing written there


def test_rl_health_reads_logs_only_under_the_roots(tmp_path: Path) -> None:
    config, root, outside = setup_roots(tmp_path)
    shutil.copy(FAILED_LOG, root / "inside.log")
    env = {**CONFINED, "LABCTL_CONFIG": str(config)}
    arg = run_labctl("rl-health", str(outside / "secret.log"), env=env)
    assert arg.code == 2 and arg.records[-1]["reason"] == "outside_roots", arg.stdout
    job = {"kind": "job", "name": "rl-grpo-probe", "verdict": "running", "state": "RUNNING"}
    lines = [{**job, "job_id": "1", "stdout": str(outside / "secret.log")}]
    res = run_labctl("rl-health", "--all", input=json.dumps(lines[0]) + "\n", env=env)
    refused = [r for r in res.records if r.get("reason") == "outside_roots"]
    assert refused and refused[0]["job_id"] == "1", res.stdout
    assert res.code == 2
    assert run_labctl("rl-health", str(root / "inside.log"), env=env).code in (0, 1)


@pytest.mark.ssh
def test_logs_on_an_ssh_cluster_are_resolved_there(tmp_path: Path) -> None:
    remote_root = tmp_path / "cluster-logs"
    remote_root.mkdir()
    cluster = ssh_cluster("remote", log_roots=[str(remote_root)])
    bare = ssh_cluster("bare")
    config, _, outside = setup_roots(tmp_path, [cluster, bare])
    shutil.copy(FAILED_LOG, remote_root / "job.err")
    (remote_root / "link.err").symlink_to(outside / "secret.log")
    job = {"kind": "job", "verdict": "failed", "state": "FAILED", "exit_code": 1}
    escape = f"{remote_root}/../outside/secret.log"
    lines = [
        {**job, "cluster": "remote", "job_id": "1", "stderr": str(remote_root / "job.err")},
        {**job, "cluster": "remote", "job_id": "2", "stderr": str(remote_root / "link.err")},
        {**job, "cluster": "remote", "job_id": "3", "stderr": escape},
        {**job, "cluster": "bare", "job_id": "4", "stderr": str(remote_root / "job.err")},
    ]  # fmt: skip
    stdin = "".join(json.dumps(rec) + "\n" for rec in lines)
    env = {**CONFINED, "LABCTL_CONFIG": str(config)}
    res = run_labctl("diagnose", input=stdin, env=env, timeout=120)
    jobs = {r["job_id"]: r for r in res.records if r["kind"] == "job"}
    errors = {r["job_id"]: r for r in res.records if r["kind"] == "error"}
    assert jobs["1"]["diagnosis"]["category"] == "module_not_found"
    for refused in ("2", "3", "4"):
        assert errors[refused]["reason"] == "outside_roots", errors
        assert jobs[refused]["diagnosis"]["bytes_read"] == 0
    assert res.code == 2
