"""`labctl guard`: rules from the config, checked against records, resource listings and
launch configs; `guard admit` before a launch. guard itself never changes anything."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import tomli_w
from helpers.cli import run_labctl
from schema_check import assert_valid

STATES = {"ACTIVE": "running", "QUEUED": "pending"}


def table_cluster(name: str, rows: Path) -> dict[str, Any]:
    """A `command` cluster whose job table is the JSON array in `rows`."""
    return {"name": name, "scheduler": "command", "command": f"cat {rows}",
            "fields": {"job_id": "id", "state": "status"}, "states": STATES}  # fmt: skip


def row(job_id: str, status: str, name: str) -> dict[str, Any]:
    return {"id": job_id, "name": name, "status": status}


RL_RUNNING = [
    {
        "kind": "job",
        "cluster": "c1",
        "key": f"c1:{i}@1",
        "job_id": str(i),
        "name": f"rl-grpo-{i}",
        "state": "RUNNING",
        "verdict": "running-progressing",
    }
    for i in range(3)
]


def write(tmp: Path, rules: list[dict[str, Any]], **extra: Any) -> dict[str, str]:
    doc: dict[str, Any] = {"guard": {"rules": rules}, **extra}
    path = tmp / "config.toml"
    path.write_text(tomli_w.dumps(doc))
    return {"LABCTL_CONFIG": str(path)}


def jsonl(records: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def violations(res) -> list[dict[str, Any]]:
    assert_valid("guard", res.records)
    return [r for r in res.records if r["kind"] == "violation"]


def test_records_pass_through_and_each_broken_rule_is_one_violation(tmp_path) -> None:
    env = write(
        tmp_path,
        [
            {"kind": "max_running", "bucket": "rl", "limit": 2, "name": "rl-cap"},
            {"kind": "max_running", "names": ["rl-*"], "limit": 5},
            {"kind": "concluded", "names": ["old-*"], "message": "old series is closed"},
        ],
    )
    other = {"kind": "job", "cluster": "c2", "job_id": "9", "name": "rl-x", "verdict": "running"}
    stream = jsonl([*RL_RUNNING, other, {"kind": "note", "x": 1}]) + "not json\n"
    res = run_labctl("guard", input=stream, env=env)
    assert res.code == 1
    assert res.records[:5] == [*RL_RUNNING, other, {"kind": "note", "x": 1}]
    assert res.records[5]["reason"] == "malformed_input"
    found = violations(res)
    assert len(found) == 1  # c1 has 3 > 2; c2 has 1; the limit of 5 holds; no old-* job
    v = found[0]
    assert (v["rule"], v["cluster"], v["count"], v["limit"]) == ("rl-cap", "c1", 3, 2)
    assert [j["job_id"] for j in v["jobs"]] == ["0", "1", "2"]


def test_per_all_counts_across_clusters_and_pending_only_when_asked(tmp_path) -> None:
    pending = {"kind": "job", "cluster": "c2", "job_id": "7", "name": "rl-q", "verdict": "pending"}
    rules = [{"kind": "max_running", "bucket": "RL", "limit": 3, "per": "all"}]
    stream = jsonl([*RL_RUNNING, pending])
    assert run_labctl("guard", input=stream, env=write(tmp_path, rules)).code == 0
    rules[0]["include_pending"] = True
    res = run_labctl("guard", input=jsonl([*RL_RUNNING, pending]), env=write(tmp_path, rules))
    (v,) = violations(res)
    assert v["cluster"] is None and v["count"] == 4


def test_concluded_experiments_and_complete_folders(tmp_path) -> None:
    root = tmp_path / "experiments"
    (root / "complete" / "exp1").mkdir(parents=True)
    (root / "active" / "exp10").mkdir(parents=True)
    jobs = [
        {"kind": "job", "cluster": "c1", "job_id": "1", "name": "exp1-seed2", "verdict": "pending"},
        {
            "kind": "job",
            "cluster": "c1",
            "job_id": "2",
            "name": "exp10-seed1",
            "verdict": "running",
        },
        {"kind": "job", "cluster": "c1", "job_id": "3", "name": "exp1-old", "verdict": "completed"},
    ]
    env = write(
        tmp_path, [{"kind": "concluded", "complete": True}], experiments={"root": str(root)}
    )
    (v,) = violations(run_labctl("guard", input=jsonl(jobs), env=env))
    assert [j["job_id"] for j in v["jobs"]] == ["1"]  # not exp10's, not a finished one


def test_forbid_setting_reads_the_configs_not_their_text(tmp_path) -> None:
    cfgs = tmp_path / "configs"
    (cfgs / "rl").mkdir(parents=True)
    (cfgs / "rl" / "on.yaml").write_text(
        "model: qwen\n# enable_db_registration: true\nlogging:\n  enable_db_registration: true\n"
    )
    (cfgs / "rl" / "comment.yaml").write_text(
        "# enable_db_registration: true\nmodel: qwen  # enable_db_registration: true\n"
    )
    (cfgs / "rl" / "string.yaml").write_text(
        'note: "enable_db_registration: true"\ncmd: |\n  enable_db_registration: true\n'
    )
    (cfgs / "rl" / "off.yaml").write_text("enable_db_registration: false\n---\nx: 1\n")
    (cfgs / "rl" / "stringly.yaml").write_text('enable_db_registration: "true"\nother: 1\n')
    (cfgs / "eval.toml").write_text('[db]\nenable_db_registration = true\nnote = "x"\n')
    (cfgs / "sft.json").write_text('{"run": {"enable_db_registration": 1}}')
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in cfgs.rglob("*.*")}
    rule = {
        "kind": "forbid_setting",
        "files": ["configs/**/*.yaml", "configs/*.toml", "configs/*.json"],
        "key": "enable_db_registration",
        "name": "no-db",
    }
    res = run_labctl("guard", "--input", "/dev/null", env=write(tmp_path, [rule]), cwd=tmp_path)
    (v,) = violations(res)
    assert res.code == 1
    hits = {(Path(f["path"]).name, f["key_path"], f["line"]) for f in v["files"]}
    assert hits == {
        ("on.yaml", "logging.enable_db_registration", 4),
        ("eval.toml", "db.enable_db_registration", None),
    }
    # a dotted key is a path from the top of the document
    rule["key"] = "db.enable_db_registration"
    res = run_labctl("guard", "--input", "/dev/null", env=write(tmp_path, [rule]), cwd=tmp_path)
    assert {Path(f["path"]).name for f in violations(res)[0]["files"]} == {"eval.toml"}
    # guard reads, never edits: every config is as it was
    assert before == {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in cfgs.rglob("*.*")}


def test_forbid_setting_with_only_comments_and_strings_is_clean(tmp_path) -> None:
    (tmp_path / "launch.yaml").write_text(
        "# enable_db_registration: true\nnote: 'enable_db_registration: true'\n"
    )
    rule = {"kind": "forbid_setting", "files": ["*.yaml"], "key": "enable_db_registration"}
    res = run_labctl("guard", "--input", "/dev/null", env=write(tmp_path, [rule]), cwd=tmp_path)
    assert res.code == 0 and res.records == []


def test_an_unparseable_config_is_reported_not_skipped(tmp_path) -> None:
    (tmp_path / "broken.yaml").write_text("a: [1, 2\n")
    rule = {"kind": "forbid_setting", "files": ["*.yaml"], "key": "enable_db_registration"}
    res = run_labctl("guard", "--input", "/dev/null", env=write(tmp_path, [rule]), cwd=tmp_path)
    assert res.code == 1 and res.records[0]["reason"] == "unparseable"


def snapshots_command(tmp: Path, n: int) -> str:
    listing = tmp / "snapshots.json"
    rows = [{"id": f"snap-{i}", "owner": "lab" if i % 2 else "other"} for i in range(n)]
    listing.write_text(json.dumps({"data": {"snapshots": rows}}))
    return f"{sys.executable} -c 'import sys; sys.stdout.write(open(sys.argv[1]).read())' {listing}"


def test_max_count_over_the_cap(tmp_path) -> None:
    rule = {
        "kind": "max_count",
        "command": snapshots_command(tmp_path, 9),
        "rows": "data.snapshots",
        "label": "id",
        "limit": 8,
        "name": "snapshots",
    }
    res = run_labctl("guard", "--input", "/dev/null", env=write(tmp_path, [rule]))
    (v,) = violations(res)
    assert res.code == 1 and v["count"] == 9 and v["limit"] == 8
    assert v["items"] == [f"snap-{i}" for i in range(9)]
    rule["where"] = {"owner": "lab"}  # 4 of the 9 are ours
    rule["limit"] = 4
    assert run_labctl("guard", "--input", "/dev/null", env=write(tmp_path, [rule])).code == 0


def test_a_failing_resource_command_is_an_error_not_zero(tmp_path) -> None:
    rule = {"kind": "max_count", "command": "echo 'api: 503' >&2; exit 4", "limit": 1}
    res = run_labctl("guard", "--input", "/dev/null", env=write(tmp_path, [rule]))
    assert res.code == 3 and res.records[0]["reason"] == "command_failed"
    assert "503" in res.records[0]["message"]


def test_bad_rules_are_config_errors(tmp_path) -> None:
    for rule in (
        {"kind": "max_runing", "limit": 1},
        {"kind": "max_running", "limit": 1},
        {"kind": "max_running", "bucket": "RL", "limit": -1},
        {"kind": "max_running", "bucket": "Robotics", "limit": 1},
        {"kind": "forbid_setting", "files": [], "key": "x"},
        {"kind": "max_count", "limit": 3},
        {"kind": "concluded", "names": ["a"], "limit": 3},
    ):
        res = run_labctl("guard", "--input", "/dev/null", env=write(tmp_path, [rule]))
        assert res.code == 2 and res.records[0]["reason"] == "config", rule
        assert "[[guard.rules]] #1" in res.records[0]["message"]


def test_admit_from_the_last_polls_store(tmp_path) -> None:
    rows = tmp_path / "rows.json"
    rows.write_text(
        json.dumps(
            [row(f"t-{i}", "ACTIVE", name=f"rl-grpo-{i}") for i in range(2)]
            + [row("t-9", "QUEUED", name="exp1-b")]
        )
    )
    rules = [
        {"kind": "max_running", "bucket": "RL", "limit": 2},
        {"kind": "concluded", "experiments": ["exp1"]},
    ]
    env = write(tmp_path, rules, clusters=[table_cluster("tpu", rows)])
    stale = run_labctl("guard", "admit", "--cluster", "tpu", "--name", "sft-a", env=env)
    assert stale.code == 1 and stale.records[-1]["reason"] == "stale_state"  # never polled
    assert run_labctl("poll", env=env).code == 0
    refused = run_labctl("guard", "admit", "-c", "tpu", "-n", "rl-grpo-new", env=env)
    assert_valid("guard", refused.records)
    assert refused.code == 1
    verdict = refused.records[-1]
    assert verdict["admitted"] is False and verdict["source"] == "store"
    assert refused.records[0]["count"] == 3 and refused.records[0]["limit"] == 2
    ok = run_labctl("guard", "admit", "-c", "tpu", "-n", "sft-new", env=env)
    assert ok.code == 0 and ok.records == [ok.records[-1]] and ok.records[-1]["admitted"] is True
    # --bucket overrides the name; a concluded experiment gets no new job
    assert run_labctl("guard", "admit", "-c", "tpu", "-n", "x", "--bucket", "rl", env=env).code == 1
    res = run_labctl("guard", "admit", "-c", "tpu", "-n", "exp1-c", env=env)
    assert res.code == 1 and res.records[0]["rule_kind"] == "concluded"
    assert run_labctl("guard", "admit", "-c", "tpu", "-n", "exp10-c", env=env).code == 0
    # --poll reads the cluster now: one job finished since
    rows.write_text(json.dumps([row("t-0", "ACTIVE", name="rl-grpo-0")]))
    fresh = run_labctl("guard", "admit", "-c", "tpu", "-n", "rl-grpo-new", "--poll", env=env)
    assert fresh.code == 0 and fresh.records[-1]["source"] == "poll"


def test_admit_counts_queued_jobs_the_sweep_counts_running_ones(tmp_path) -> None:
    """5 RL jobs running and 3 queued under a limit of 6: each queued one takes a slot when
    it starts, so admitting a ninth is refused; the sweep's check ("at most 6 RUNNING")
    sees 5 running and is fine."""
    rows = tmp_path / "rows.json"
    rows.write_text(
        json.dumps(
            [row(f"t-{i}", "ACTIVE", name=f"rl-grpo-{i}") for i in range(5)]
            + [row(f"q-{i}", "QUEUED", name=f"rl-grpo-q{i}") for i in range(3)]
            + [row("q-9", "QUEUED", name="sft-x")]  # out of the rule's scope
        )
    )
    rules: list[dict[str, Any]] = [{"kind": "max_running", "bucket": "RL", "limit": 6}]
    clusters = [table_cluster("tpu", rows)]
    env = write(tmp_path, rules, clusters=clusters)
    polled = run_labctl("poll", env=env)
    assert polled.code == 0, polled.stdout
    assert run_labctl("guard", input=polled.stdout, env=env).code == 0  # 5 RUNNING <= 6

    refused = run_labctl("guard", "admit", "-c", "tpu", "-n", "rl-grpo-new", env=env)
    (v,) = violations(refused)
    assert refused.code == 1 and refused.records[-1]["admitted"] is False
    assert (v["count"], v["running"], v["pending"], v["limit"]) == (9, 5, 3, 6)
    assert "5 running, 3 pending, and this one" in v["message"]
    assert len(v["jobs"]) == 9 and v["jobs"][-1]["name"] == "rl-grpo-new"

    rules[0]["include_pending"] = False  # the rule says queued jobs do not count
    env = write(tmp_path, rules, clusters=clusters)
    ok = run_labctl("guard", "admit", "-c", "tpu", "-n", "rl-grpo-new", env=env)
    assert ok.code == 0 and ok.records[-1]["admitted"] is True
    rules[0]["include_pending"] = True  # ... or that they count for the sweep too
    res = run_labctl("guard", input=polled.stdout, env=write(tmp_path, rules, clusters=clusters))
    (v,) = violations(res)
    assert (v["count"], v["running"], v["pending"]) == (8, 5, 3)
