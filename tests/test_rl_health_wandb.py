"""rl-health on W&B history: a real offline run file written by the `wandb` client, and the
real client against a local fake GraphQL server (no network, nothing patched)."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import rl_traces
from helpers.cli import run_labctl
from helpers.wandb_fixtures import KEY, FakeWandb, api_run, run_file, serving, start_run, wait_for
from schema_check import assert_valid

from labctl.records import rfc3339

# canonical metric -> the verl key logged to W&B
WANDB_KEYS = {"entropy": "actor/entropy", "grad_norm": "actor/grad_norm",
              "reward": "critic/score/mean", "kl": "actor/kl_loss",
              "resp_len": "response_length/mean", "step_time": "timing_s/step"}  # fmt: skip


def rows(scenario: str, seed: int = 0, steps: int | None = None) -> list[dict[str, float]]:
    trace = rl_traces.make(scenario, "verl", seed, steps=steps)
    return [{WANDB_KEYS[k]: s[k] for k in WANDB_KEYS} for s in trace.steps]


def test_a_collapsing_run_file_is_read_in_sampled_regions(wandb_env: Path, tmp_path: Path) -> None:
    run = start_run(wandb_env)
    data = rows("entropy_collapse", steps=600)
    for row in data:
        run.log(row | {"samples": "text is skipped"})
    run.finish()
    path = run_file(wandb_env)
    wait_for(path, lambda p: p.finished)
    config = tmp_path / "config.toml"
    config.write_text("[rl_health]\nmax_read_bytes = 65536\nhead_bytes = 16384\n"
                      "tail_bytes = 32768\nsamples = 2\nsample_bytes = 4096\n")  # fmt: skip
    res = run_labctl("--config", str(config), "rl-health", str(path))
    assert_valid("rl-health", res.records)
    [rec] = res.records
    assert (rec["source"], rec["recommendation"]) == ("wandb_file", "KILL"), rec["message"]
    assert "entropy" in rec["families"]
    entropy = next(s for s in rec["signals"] if s["name"] == "entropy_collapse")
    assert entropy["key"] == "actor/entropy" and entropy["lines"][-1]["offset"] is None
    assert rec["bytes_read"] <= 65536 < path.stat().st_size
    assert rec["steps"]["last"] == len(data) - 1 and rec["steps"]["sampled"]


def test_a_job_reads_the_run_file_poll_matched(wandb_env: Path, tmp_path: Path) -> None:
    run = start_run(wandb_env)
    for row in rows("healthy", 2):
        run.log(row)
    run.finish()
    path = run_file(wandb_env)
    wait_for(path, lambda p: p.finished)
    log = tmp_path / "stdout.log"
    log.write_text("no metrics in this log\n")
    job = {"kind": "job", "cluster": "local", "job_id": "5", "name": "grpo-smoke",
           "verdict": "running-progressing", "stdout": str(log),
           "observed_at": rfc3339(time.time()), "log_age_s": 1.0,
           "progress": {"wandb": {"path": str(path), "run_id": run.id}}}  # fmt: skip
    res = run_labctl("rl-health", input=json.dumps(job) + "\n")
    [rec] = [r for r in res.records if r["kind"] == "rl_health"]
    assert (rec["source"], rec["recommendation"], res.code) == ("wandb_file", "NO-KILL", 0)
    assert [s["source"] for s in rec["sources"]] == ["log", "wandb_file"]


class HistoryServer(FakeWandb):
    """Answers the Run query (with historyKeys) and RunSampledHistory per key."""

    def __init__(self, history: list[dict[str, float]]) -> None:
        super().__init__()
        self.history = history
        self.specs: list[dict[str, Any]] = []

    def answer(self, query: str) -> dict[str, Any]:
        if "RunSampledHistory" in query:
            spec = json.loads(self.queries[-1][1]["specs"][0])
            self.specs.append(spec)
            keys = spec["keys"]
            picked = [{k: r[k] for k in keys if k in r} for r in self.history]
            rows = [r for r in picked if all(k in r for k in keys)]
            step = max(1, len(rows) // spec["samples"])
            return {"project": {"run": {"sampledHistory": [rows[::step]]}}}
        if "query Run(" in query:
            keys = {k: {"typeCounts": [{"type": "number", "count": 1}]}
                    for r in self.history for k in r}  # fmt: skip
            run = api_run("abc123", "grpo-api-smoke", len(self.history))
            run |= {"projectId": 1, "config": "{}", "systemMetrics": "{}", "summaryMetrics": "{}"}
            run["historyKeys"] = {"keys": keys, "lastStep": len(self.history) - 1}
            return {"project": {"run": run}}
        return super().answer(query)


@pytest.fixture
def history_server() -> Iterator[HistoryServer]:
    data = rows("kl_blowup", 1)
    history = [{"_step": i, "_timestamp": 1.7e9 + 60 * i, **r} for i, r in enumerate(data)]
    history[3].pop("actor/kl_loss")  # keys logged at different steps must not hide each other
    with serving(HistoryServer(history)) as server:
        yield server


def test_the_api_history_is_fetched_per_key_and_judged(history_server: HistoryServer) -> None:
    env = {"WANDB_API_KEY": KEY, "WANDB_BASE_URL": history_server.url}
    res = run_labctl("rl-health", "wandb:ent/proj/abc123", env=env)
    assert_valid("rl-health", res.records)
    [rec] = res.records
    assert (rec["source"], rec["recommendation"]) == ("wandb_api", "KILL"), res.stderr
    assert "kl" in rec["families"] and res.code == 1
    asked = sorted(tuple(s["keys"]) for s in history_server.specs)
    assert asked == sorted(("_step", k) for k in WANDB_KEYS.values())
    assert all(s["samples"] == 500 for s in history_server.specs)
    assert rec["steps"]["points"] == len(history_server.history)
    assert KEY not in res.stdout + res.stderr
    assert not math.isnan(rec["confidence"])


def test_a_wrong_api_key_is_one_error_exit_3(history_server: HistoryServer) -> None:
    env = {"WANDB_API_KEY": "x" * 40, "WANDB_BASE_URL": history_server.url}
    res = run_labctl("rl-health", "wandb:ent/proj/abc123", env=env)
    [err] = res.records
    assert (res.code, err["kind"], err["reason"]) == (3, "error", "auth")
