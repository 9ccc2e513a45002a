"""The job view of `labctl table`: buckets across clusters, red flags with symbols."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.cli import run_labctl

from labctl.render.buckets import DEFAULT_RULES, bucket_of, flags, rl_signals, rules_from_config


def _job(name: str, verdict: str = "running-progressing", **kw) -> dict:
    return {
        "kind": "job",
        "cluster": kw.pop("cluster", "c1"),
        "job_id": kw.pop("job_id", "1"),
        "name": name,
        "verdict": verdict,
        **kw,
    }


def _table(records: list[dict], env: dict | None = None) -> str:
    res = run_labctl("table", input="".join(json.dumps(r) + "\n" for r in records), env=env)
    return res.stdout


def test_jobs_are_bucketed_across_clusters_with_explicit_type_winning() -> None:
    out = _table(
        [
            _job("rl-grpo-qwen", cluster="c1"),
            _job("sft-llama", cluster="tpu", job_id="t-9"),
            _job("datagen-math", cluster="c2"),
            _job("eval-mmlu"),
            _job("mystery"),
            _job("mystery-2", job_type="eval", job_id="42"),
        ]
    )
    titles = [line for line in out.splitlines() if " — " in line and "job(s)" in line]
    assert [t.split(" — ")[0] for t in titles] == ["RL", "SFT", "Datagen", "Eval", "Other"]
    eval_table = out.split("Eval — ")[1].split("Other — ")[0]
    assert "42 mystery-2" in eval_table
    assert "|---" not in out and "┌" in out


def test_bucket_rules_come_from_config(tmp_path: Path) -> None:
    rules = rules_from_config({"RL": {"names": ["exp-*"]}, "eval": {"partitions": ["evalq"]}})
    assert bucket_of({"name": "exp-12"}, rules) == "RL"
    assert bucket_of({"name": "rl-1"}, rules) == "Other"  # names replaced, not extended
    assert bucket_of({"name": "x", "partition": "evalq"}, rules) == "Eval"
    assert bucket_of({"name": "x", "tags": ["datagen"]}, DEFAULT_RULES) == "Datagen"
    cfg = tmp_path / "c.toml"
    cfg.write_text('[buckets.RL]\nnames = ["exp-*"]\n')
    out = _table([_job("exp-7")], env={"LABCTL_CONFIG": str(cfg)})
    assert out.startswith("RL — 1 job(s)")
    cfg.write_text('[buckets.Training]\nnames = ["x"]\n')
    res = run_labctl("table", input=json.dumps(_job("x")) + "\n", env={"LABCTL_CONFIG": str(cfg)})
    assert "buckets are RL, SFT, Datagen and Eval" in res.stdout + res.stderr


def test_red_flags_survive_without_colour() -> None:
    rl = _job(
        "rl-ppo",
        verdict="running-progressing",
        progress={
            "counter": "step",
            "value": 900,
            "metrics": {"entropy": 0.01, "grad_norm": "NaN", "is_log_ratio": 0.02},
        },
    )
    stalled = _job("sft-x", verdict="running-stalled", job_id="2")
    failed = _job(
        "eval-y",
        verdict="failed",
        job_id="3",
        diagnosis={"category": "cuda_oom", "fix": "halve the batch size"},
    )
    out = _table([rl, stalled, failed], env={"NO_COLOR": "1"})
    assert "\x1b[" not in out
    assert "↓ 0.01" in out and "↑ nan" in out and "0.02" in out and "↑ 0.02" not in out
    assert "⚠ stalled" in out and "✗ failed" in out
    assert "cuda_oom: halve the batch size" in out
    assert "need a person" in out


def test_signal_thresholds() -> None:
    limits = {"entropy_min": 0.05, "grad_norm_max": 100.0, "log_ratio_max": 0.5}
    sig = rl_signals(
        {"progress": {"metrics": {"entropy": 0.3, "grad_norm": 250, "is_log_ratio": -0.9}}}
    )
    assert flags(sig, limits) == {"grad_norm", "log_ratio"}
    assert flags(rl_signals({}), limits) == set()


def test_control_characters_in_names_are_escaped() -> None:
    out = _table([_job("rl-\x1b]0;pwned\x07-\u202eevil")], env={"COLUMNS": "250"})
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert "\\x1b" in out and "\\u202e" in out


def test_a_requeued_job_says_so_in_its_verdict() -> None:
    again = _job("sft-spot", verdict="pending", restarts=2, previous_verdict="preempted")
    first = _job("sft-fresh", verdict="pending", job_id="2", restarts=0)
    out = _table([again, first], env={"NO_COLOR": "1", "COLUMNS": "200"})
    (line,) = [x for x in out.splitlines() if "sft-spot" in x]
    assert "… pending ↻2 after preempted" in line
    (fresh,) = [x for x in out.splitlines() if "sft-fresh" in x]
    assert "↻" not in fresh


def test_a_cancelled_job_says_who_cancelled_not_a_fix() -> None:
    diag = {"category": "cancelled", "fix": "The job was cancelled (scancel, or by an admin)."}
    mine = _job("sft-a", verdict="cancelled", cause="user_cancel", diagnosis=diag)
    theirs = _job("sft-b", verdict="cancelled", cause="admin_cancel", job_id="2", diagnosis=diag)
    out = _table([mine, theirs], env={"NO_COLOR": "1", "COLUMNS": "200"})
    assert "user_cancel" in out and "admin_cancel" in out
    assert "scancel, or by an admin" not in out
