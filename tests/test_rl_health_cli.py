"""`labctl rl-health` end to end: the real CLI on job records, files, the poll store, a
cluster reached over a real sshd, the table and the dated log."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import rl_traces
from helpers.cli import run_labctl
from schema_check import assert_valid

from labctl.records import rfc3339

SSH_CONFIG = Path("/run/labctl-sshd/ssh_config")
REAL = Path(__file__).parent / "fixtures" / "rl_health" / "real"


def write(tmp: Path, scenario: str, framework: str = "verl", seed: int = 0) -> Path:
    path = tmp / f"{scenario}-{framework}.log"
    path.write_text(rl_traces.make(scenario, framework, seed).text())
    return path


def job(path: Path | None, name: str, job_id: str, **extra: Any) -> dict[str, Any]:
    now = rfc3339(time.time())
    rec = {"kind": "job", "cluster": "local", "job_id": job_id, "name": name,
           "verdict": "running-progressing", "state": "RUNNING", "stdout": str(path),
           "first_seen": "2020-01-01T00:00:00Z", "observed_at": now, "log_age_s": 5}  # fmt: skip
    return rec | extra


def lines(*recs: dict[str, Any]) -> str:
    return "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in recs)


def test_untested_running_rl_jobs_get_a_record_and_everything_passes_through(
    tmp_path: Path,
) -> None:
    collapse = write(tmp_path, "entropy_collapse")
    healthy = write(tmp_path, "healthy")
    now = rfc3339(time.time())
    stdin = lines(
        job(collapse, "grpo-qwen-smoke", "1"),  # untested by name
        job(healthy, "rl-math-v7", "2", tags=["untested"]),  # by tag
        job(healthy, "ppo-fresh", "3", first_seen=now),  # by age: first seen just now
        job(collapse, "rl-proven-run", "4"),  # RL, but proven: not looked at
        job(collapse, "sft-smoke", "5"),  # untested, but not RL
        job(collapse, "grpo-smoke-done", "6", verdict="completed", state="COMPLETED"),
        {"kind": "skipped", "cluster": "local", "count": 2, "patterns": {"tracegen-*": 2}},
    )
    res = run_labctl("rl-health", input=stdin)
    assert_valid("rl-health", res.records)
    assert res.code == 1, res.stderr  # job 1 is KILL
    out = res.stdout.splitlines()
    # every record read passes through as the bytes it came in as, in order
    assert [ln for ln in out if '"kind":"rl_health"' not in ln] == stdin.splitlines()
    health = {r["job_id"]: r for r in res.records if r["kind"] == "rl_health"}
    assert set(health) == {"1", "2", "3"}
    assert health["1"]["recommendation"] == "KILL" and "entropy" in health["1"]["families"]
    assert health["1"]["selected"] == "name *smoke*"
    assert health["2"]["selected"] == "tag untested"
    assert health["3"]["selected"].startswith("new: first seen")
    assert health["2"]["recommendation"] == health["3"]["recommendation"] == "NO-KILL"
    # each rl_health record follows its job
    kinds = [(r["kind"], r.get("job_id")) for r in res.records]
    assert kinds.index(("rl_health", "1")) == kinds.index(("job", "1")) + 1


def test_all_looks_at_proven_jobs_and_a_healthy_sweep_exits_0(tmp_path: Path) -> None:
    healthy = write(tmp_path, "healthy_spiky_grad", "trl")
    res = run_labctl("rl-health", "--all", input=lines(job(healthy, "rl-proven", "9")))
    assert_valid("rl-health", res.records)
    [rec] = [r for r in res.records if r["kind"] == "rl_health"]
    assert (res.code, rec["recommendation"], rec["selected"]) == (0, "NO-KILL", "--all")
    assert rec["healthy_evidence"] and rec["steps"]["points"] >= 60


def test_a_frozen_rollout_engine_is_kill_while_the_job_runs(tmp_path: Path) -> None:
    trace = rl_traces.make("frozen_engine", "verl", 1)
    path = tmp_path / "frozen.log"
    path.write_text(trace.text())
    stalled = job(path, "grpo-smoke", "7", log_age_s=86400.0)
    res = run_labctl("rl-health", input=lines(stalled))
    [rec] = [r for r in res.records if r["kind"] == "rl_health"]
    assert rec["recommendation"] == "KILL", rec["message"]
    assert {"throughput", "liveness"} <= set(rec["families"])
    frozen = next(s for s in rec["signals"] if s["name"] == "step_frozen")
    assert frozen["current"]["age_s"] >= 86000


def test_file_arguments_and_job_ids_from_the_poll_store(tmp_path: Path) -> None:
    from labctl.poll.model import StoredJob
    from labctl.poll.store import Store

    log = write(tmp_path, "grad_nan", "skyrl")
    state = tmp_path / "state"
    store = Store(state / "poll.sqlite")
    rec = job(log, "rl-nan-debug", "77", cluster="c1")
    with store.transaction():
        store.put_jobs("c1", [StoredJob(("77", -1, 0), "77", None, 1.0, 2.0, "running",
                                        False, True, str(log), None, rec)])  # fmt: skip
    store.close()
    config = tmp_path / "config.toml"
    config.write_text('[[clusters]]\nname = "c1"\nhost = "local"\n')
    env = {"LABCTL_STATE_DIR": str(state), "LABCTL_CONFIG": str(config)}
    res = run_labctl("rl-health", str(log), "c1:77", "77", env=env)  # 77: a configured cluster
    assert_valid("rl-health", res.records)
    recs = [r for r in res.records if r["kind"] == "rl_health"]
    assert [r["recommendation"] for r in recs] == ["KILL"] * 3, res.stderr
    assert recs[0]["path"] == str(log) and recs[0]["job_id"] is None
    assert recs[1]["cluster"] == "c1" and recs[1]["job_id"] == "77"
    assert recs[1]["selected"] == "argument" and "grad" in recs[1]["families"]
    missing = run_labctl("rl-health", "c9:404", env=env)
    [err] = missing.records
    assert (missing.code, err["reason"]) == (2, "not_found")


def test_short_and_unparseable_logs_are_watch_never_kill(tmp_path: Path) -> None:
    short = tmp_path / "short.log"
    short.write_text(rl_traces.make("grad_nan", "verl", 5, steps=12).text())
    odd = REAL / "swift_grpo_5890_high_zero_std.log"
    res = run_labctl("rl-health", str(short), str(odd))
    recs = [r for r in res.records if r["kind"] == "rl_health"]
    assert [(r["recommendation"], r["reason"]) for r in recs] == [
        ("WATCH", "insufficient_history"),
        ("WATCH", "insufficient_history"),
    ]
    assert res.code == 0 and "more step(s)" in recs[0]["checks"][-1]


def test_a_collapsed_run_in_the_table_and_the_dated_log(tmp_path: Path) -> None:
    log = write(tmp_path, "entropy_collapse", "trl", 3)  # TRL metric dicts between tqdm frames
    healthy = write(tmp_path, "healthy")
    stdin = lines(job(log, "grpo-vl-smoke", "11"), job(healthy, "grpo-ok-smoke", "12"))
    env = {"LABCTL_LOG_DIR": str(tmp_path / "logbook"), "COLUMNS": "240"}
    health = run_labctl("rl-health", input=stdin)
    table = run_labctl("table", input=health.stdout, env=env)
    assert table.code == 1  # the KILL makes the sweep need a person
    rows = {ln.split("│")[2].strip(): ln for ln in table.stdout.splitlines() if "│ 1" in ln}
    assert "✗ KILL entropy" in rows["11 grpo-vl-smoke"] and "rl-health:" in rows["11 grpo-vl-smoke"]
    assert "✓ NO-KILL" in rows["12 grpo-ok-smoke"]
    assert "need a person" in table.stdout.splitlines()[0]
    logged = run_labctl("log", "--topic", "sweep", input=health.stdout, env=env)
    entry = Path(logged.records[-1]["path"]).read_text()
    assert "## RL health (2)" in entry
    assert "- local/11 grpo-vl-smoke: KILL" in entry and "labctl never kills" in entry


def test_a_planted_token_never_reaches_the_output(tmp_path: Path) -> None:
    token = "hf_" + "Z" * 34
    log = write(tmp_path, "kl_blowup")
    text = log.read_text().replace("actor/kl_loss", f"actor/kl_loss - note/{token}:1")
    log.write_text(text)
    res = run_labctl("rl-health", input=lines(job(log, f"grpo-smoke-{token}", "13")),
                     env={"HF_TOKEN": token})  # fmt: skip
    assert res.records and token not in res.stdout + res.stderr


@pytest.mark.ssh
def test_a_log_on_a_cluster_is_read_through_the_transport(tmp_path: Path) -> None:
    if not SSH_CONFIG.exists():
        pytest.fail("the test sshd is not running: run scripts/sshd-up (scripts/test does)")
    log = tmp_path / "drift.log"
    log.write_text(rl_traces.make("mismatch_drift", "verl", 0, steps=400).text())
    config = tmp_path / "config.toml"
    config.write_text(
        f'[[clusters]]\nname = "c2"\nhost = "labctl-test"\nssh_options = ["-F", "{SSH_CONFIG}"]\n'
        "[rl_health]\ntail_bytes = 65536\nhead_bytes = 16384\nmax_read_bytes = 131072\n"
        "samples = 2\nsample_bytes = 8192\n"
    )
    config.chmod(0o600)
    remote = run_labctl("--config", str(config), "rl-health", "--all",
                        input=lines(job(log, "rl-drift", "21", cluster="c2")))  # fmt: skip
    local = run_labctl("--config", str(config), "rl-health", "--all",
                       input=lines(job(log, "rl-drift", "21")))  # fmt: skip
    assert_valid("rl-health", remote.records)
    [r] = [x for x in remote.records if x["kind"] == "rl_health"]
    [l_] = [x for x in local.records if x["kind"] == "rl_health"]
    assert r["recommendation"] == l_["recommendation"] == "KILL", remote.stderr
    assert r["signals"] == l_["signals"] and r["sources"] == l_["sources"]
    size = log.stat().st_size
    assert size > 131072 and r["bytes_read"] <= 131072 and r["steps"]["sampled"]
    bad = tmp_path / "bad.toml"
    bad.write_text('[[clusters]]\nname = "c3"\nhost = "127.0.0.1"\n'
                   'ssh_options = ["-p", "1", "-o", "ConnectTimeout=3"]\n')  # fmt: skip
    bad.chmod(0o600)
    down = run_labctl("--config", str(bad), "rl-health", "--all",
                      input=lines(job(log, "rl-drift", "22", cluster="c3")))  # fmt: skip
    assert down.code == 3
    err = next(x for x in down.records if x["kind"] == "error")
    assert err["reason"] == "unreachable" and err["job_id"] == "22"
    [w] = [x for x in down.records if x["kind"] == "rl_health"]
    assert (w["recommendation"], w["reason"]) == ("WATCH", "insufficient_history")
