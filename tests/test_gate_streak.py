"""`labctl gate` streak gates, fed what `labctl poll | labctl diagnose` prints."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from helpers.cli import run_labctl
from schema_check import assert_valid

CONFIG = Path(__file__).parent / "fixtures" / "gate" / "config.toml"
FAILED_LOG = Path(__file__).parent / "fixtures" / "contract" / "failed.log"  # ModuleNotFoundError


def job(name: str, verdict: str, jid: int, day: int, **kw: Any) -> dict[str, Any]:
    rec = {
        "kind": "job",
        "cluster": "c1",
        "key": f"c1:{jid}@{day}",
        "job_id": str(jid),
        "name": name,
        "state": verdict.upper(),
        "verdict": verdict,
        "exit_code": 0 if verdict == "completed" else kw.pop("exit_code", 1),
        "submit_time": f"2026-03-{day:02d}T10:00:00Z",
        "stderr": str(kw.pop("stderr", "/nonexistent/labctl-test.err")),
    }
    rec.update(kw)
    return rec


def jsonl(records: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def sweep() -> list[dict[str, Any]]:
    """Five cycles of a two-run matrix (cycle 5 still running) and two unrelated records."""
    return [
        job("rl-matrix-c1-a", "failed", 101, 1, stderr=FAILED_LOG),
        job("rl-matrix-c1-b", "completed", 102, 1),
        job("rl-matrix-c2-a", "completed", 201, 2),
        job("rl-matrix-c2-b", "completed", 202, 2),
        job("rl-matrix-c3-a", "failed", 301, 3, exit_code=42),  # research rejection (config)
        job("rl-matrix-c3-b", "completed", 302, 3),
        job("rl-matrix-c4-a", "completed", 401, 4),
        job("rl-matrix-c4-b", "completed", 402, 4),
        job("rl-matrix-c5-a", "running", 501, 5),
        job("tracegen-shard-7", "completed", 900, 4),
        {"kind": "disk", "path": "/scratch", "free_bytes": 10},
    ]


def diagnose_then_gate(records: list[dict[str, Any]], *gate_args: str) -> Any:
    diagnosed = run_labctl("diagnose", input=jsonl(records))
    assert diagnosed.code in (0, 1), diagnosed.stderr
    res = run_labctl("gate", "--config", str(CONFIG), *gate_args, input=diagnosed.stdout)
    assert_valid("gate", res.records)
    return res


def test_clean_cycles_since_the_last_failure_pass_the_streak() -> None:
    res = diagnose_then_gate(sweep(), "lifecycle")
    streak = res.records[-1]
    assert streak["kind"] == "streak"
    assert (streak["streak"], streak["required"], streak["passed"]) == (3, 3, True)
    assert streak["last_failure_cycle"] == "1"
    assert res.code == 0, res.records
    cycles = [r for r in res.records if r["kind"] == "cycle"]
    assert [(c["cycle"], c["state"]) for c in cycles] == [
        ("1", "failed"),
        ("2", "clean"),
        ("3", "clean"),
        ("4", "clean"),
        ("5", "in_progress"),
    ]
    assert cycles[2]["research_rejections"] == 1
    # the failure comes with diagnose's fingerprint and root cause
    (failure,) = streak["failures"]
    assert failure["job_id"] == "101" and failure["category"] == "module_not_found"
    assert failure["root_cause"] == "Missing Python module flash_attn"
    assert len(failure["fingerprint"]) == 16
    # what belongs to no cycle passes through untouched
    assert {"kind": "disk", "path": "/scratch", "free_bytes": 10} in res.records
    assert [r["name"] for r in res.records if r["kind"] == "job"] == ["tracegen-shard-7"]


def test_too_short_a_streak_fails_and_an_operational_failure_resets_it() -> None:
    res = diagnose_then_gate(sweep(), "lifecycle", "--streak", "4")
    assert res.code == 1
    assert res.records[-1]["message"].endswith("4 required: 1 more needed")
    records = [*sweep(), job("rl-matrix-c5-b", "timeout", 502, 5, exit_code=None)]
    res = diagnose_then_gate(records, "lifecycle")
    streak = res.records[-1]
    assert (streak["streak"], streak["last_failure_cycle"], streak["passed"]) == (0, "5", False)
    assert [f["job_id"] for f in streak["failures"]] == ["101", "502"]
    assert res.code == 1


def test_the_last_record_of_a_job_wins() -> None:
    # a later sweep saw cycle 4's first run fail after an earlier one saw it complete
    records = [*sweep(), job("rl-matrix-c4-a", "node_fail", 401, 4)]
    res = run_labctl("gate", "--config", str(CONFIG), "lifecycle", input=jsonl(records))
    assert res.records[-1]["last_failure_cycle"] == "4" and res.code == 1


def test_a_diagnosis_record_naming_the_job_can_make_it_a_research_rejection() -> None:
    records = [
        *sweep(),
        job("rl-matrix-c6-a", "failed", 601, 6, exit_code=3),
        {
            "kind": "diagnosis",
            "cluster": "c1",
            "job_id": "601",
            "category": "research_rejection",
            "fingerprint": "0123456789abcdef",
            "title": "reward below baseline",
            "failed": True,
        },
    ]
    res = run_labctl("gate", "--config", str(CONFIG), "lifecycle", input=jsonl(records))
    states = {r["cycle"]: r["state"] for r in res.records if r["kind"] == "cycle"}
    assert states["6"] == "clean"
    assert not any(r["kind"] == "diagnosis" for r in res.records)  # acted on, not passed on


def test_ad_hoc_streak_with_a_cycle_pattern() -> None:
    records = [job(f"sweep-r{n}-x", "completed", n, n) for n in range(1, 4)]
    res = run_labctl("gate", "--streak", "3", "--cycle", r"-r(\d+)-", input=jsonl(records))
    assert res.code == 0 and res.records[-1]["streak"] == 3
    res = run_labctl("gate", "--streak", "3", "--cycle", r"-r\d+-", input=jsonl(records))
    assert res.code == 2 and "capture group" in res.records[0]["message"]


def test_no_cycle_in_the_input_is_not_a_pass() -> None:
    res = run_labctl("gate", "--streak", "1", input=jsonl([job("misc", "completed", 1, 1)]))
    assert res.code == 1
    assert res.records[-1]["cycles"] == 0 and "cycle_pattern" in res.records[-1]["message"]


def test_cycles_by_a_record_field() -> None:
    records = [job(f"run-{n}", "completed", n, n, tags={"round": f"r{n % 2}"}) for n in range(1, 5)]
    res = run_labctl("gate", "--streak", "2", "--cycle", "tag:tags.round", input=jsonl(records))
    assert [r["cycle"] for r in res.records if r["kind"] == "cycle"] == [
        "r1",
        "r0",
    ]  # by first submit
    assert res.records[-1]["streak"] == 2 and res.code == 0
