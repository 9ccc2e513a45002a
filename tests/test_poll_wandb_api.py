"""The W&B API progress source: the real `wandb` client against a local fake GraphQL server.

No network and no patched client: WANDB_BASE_URL points the client (and its wandb-core
service) at a small HTTP server here that answers the GraphQL queries it sends (Viewer,
GetDefaultEntity, Runs) and records them.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.cli import run_labctl
from helpers.config import write_config
from helpers.wandb_fixtures import KEY, FakeWandb, api_run, serving
from schema_check import assert_valid


@pytest.fixture
def fake() -> Iterator[FakeWandb]:
    with serving(FakeWandb()) as server:
        yield server


def config_for(tmp: Path, rows: Path) -> Path:
    rows.write_text(json.dumps([
        {"id": "t-1", "name": "rl-api-1", "status": "ACTIVE", "started": time.time() - 600},
        {"id": "t-2", "name": "sft-quiet", "status": "ACTIVE", "started": time.time() - 600},
    ]))  # fmt: skip
    cluster = {
        "name": "tpu",
        "scheduler": "command",
        "command": f"cat {rows}",
        "fields": {"job_id": "id", "state": "status", "start_time": "started"},
        "states": {"ACTIVE": "running"},
        "wandb_project": "ent/proj",
    }
    return write_config(tmp, [cluster])


def test_history_line_count_is_the_counter(tmp_path: Path, fake: FakeWandb) -> None:
    config = config_for(tmp_path, tmp_path / "rows.json")
    env = {"WANDB_API_KEY": KEY, "WANDB_BASE_URL": fake.url}
    fake.runs = [api_run("abc123", "rl-api-1", 42), api_run("zzz999", "someone-else", 7)]
    first = run_labctl("poll", "--config", str(config), env=env)
    assert_valid("poll", first.records)
    jobs = {r["job_id"]: r for r in first.records if r["kind"] == "job"}
    p = jobs["t-1"]["progress"]
    assert jobs["t-1"]["verdict"] == "running-unverified", first.stderr
    assert (p["source"], p["value"], p["counter"]) == ("wandb_api", 42, "history_lines")
    assert p["wandb_api"]["run_id"] == "abc123" and p["wandb_api"]["state"] == "running"
    assert p["wandb_api"]["heartbeat_age_s"] < 120
    # no run of that name: nothing to read, never guessed
    assert jobs["t-2"]["progress"]["source"] is None
    assert jobs["t-2"]["verdict"] == "running-unverified"
    [(_query, variables)] = [q for q in fake.queries if "query Runs" in q[0]]
    assert variables["entity"] == "ent" and variables["project"] == "proj"
    assert "createdAt" in json.loads(variables["filters"])  # bounded, not the whole project

    fake.runs[0] = api_run("abc123", "rl-api-1", 57)
    second = run_labctl("poll", "--config", str(config), env=env)
    rec = next(r for r in second.records if r.get("job_id") == "t-1")
    assert rec["verdict"] == "running-progressing"
    assert (rec["progress"]["value"], rec["progress"]["previous"]) == (57, 42)
    home = Path(os.environ["HOME"])
    assert not (home / ".cache" / "wandb").exists()  # the client's files stay in the state dir
    assert KEY not in first.stdout + second.stdout + first.stderr


def test_wrong_api_key_is_one_error_and_the_jobs_are_still_reported(
    tmp_path: Path, fake: FakeWandb
) -> None:
    config = config_for(tmp_path, tmp_path / "rows.json")
    fake.runs = [api_run("abc123", "rl-api-1", 42)]
    res = run_labctl(
        "poll", "--config", str(config),
        env={"WANDB_API_KEY": "x" * 40, "WANDB_BASE_URL": fake.url},
    )  # fmt: skip
    assert_valid("poll", res.records)
    assert res.code == 3
    [err] = [r for r in res.records if r["kind"] == "error"]
    assert (err["cluster"], err["stage"], err["reason"]) == ("tpu", "wandb_api", "auth")
    jobs = {r["job_id"]: r for r in res.records if r["kind"] == "job"}
    assert set(jobs) == {"t-1", "t-2"} and jobs["t-1"]["verdict"] == "running-unverified"
