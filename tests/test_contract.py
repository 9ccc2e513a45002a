"""The record contract: every command has a schema and every record it emits validates."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from helpers.cli import run_labctl
from jsonschema import Draft202012Validator
from schema_check import assert_valid, schemas_for

from labctl.registry import COMMANDS

FIXTURES = Path(__file__).parent / "fixtures" / "contract"
CHILDREN = Path(__file__).parent / "children"
RL = Path(__file__).parent / "fixtures" / "rl_health" / "real"


@dataclass
class Case:
    args: list[str]
    input: str = ""
    env: dict[str, str] = field(default_factory=dict)


_NO_CRON = {"LABCTL_CONFIG": str(FIXTURES / "no-crontab.toml")}

# Representative invocations of each command. A new command must add its cases here.
CASES: dict[str, list[Case]] = {
    "poll": [
        Case(["--config", str(FIXTURES.parent / "poll" / "contract.toml"), "--summary"]),
    ],
    "table": [Case(["-f", "jsonl", "--summary"], 'oops\n{"kind":"x","a":1}\n')],
    "schema": [Case([]), Case(["table", "config"])],
    "config": [Case(["show", "--summary"]), Case(["path"]), Case(["init"])],
    "strip-yaml-comments": [
        Case([str(FIXTURES / "sample.yaml")]),
        Case(["/nonexistent.yaml"]),
        Case([str(FIXTURES), "--jobs", "1"]),  # a hidden file: one `skipped` record
    ],
    "diagnose": [
        Case([str(FIXTURES / "failed.log"), "--group"]),
        Case(
            [],
            '{"kind":"job","verdict":"failed","state":"FAILED","exit_code":1,'
            f'"stderr":"{FIXTURES / "failed.log"}"}}\n{{"kind":"x"}}\n',
        ),
        Case(["--catalog"]),
    ],
    "gate": [
        Case(
            ["--config", str(FIXTURES.parent / "gate" / "config.toml"), "release", "--source", "-"],
            '{"id":1,"owner":"alice","model":"m","benchmark":"humaneval","status":"finished",'
            '"stats":{"metrics":{"pass@1":0.7}}}\n{"kind":"x"}\nbad\n',
        ),
        Case(
            ["--streak", "1", "--summary"],
            '{"kind":"job","name":"a-cycle1","job_id":"1","verdict":"failed","exit_code":1}\n'
            '{"kind":"job","name":"a-cycle2","job_id":"2","verdict":"completed"}\n',
        ),
        Case(["no-such-gate"]),
    ],
    "merge-green": [
        Case(["upstream/trainer", "--summary"]),
        Case(
            ["--apply"],
            env={
                "LABCTL_CONFIG": str(FIXTURES / "merge-green.toml"),
                "GITHUB_TOKEN": "ghp_" + "c" * 36,
                "GITHUB_API_URL": "http://127.0.0.1:9",
            },
        ),
    ],
    "guard": [
        Case(
            ["--summary"],
            '{"kind":"job","cluster":"c1","job_id":"1","name":"rl-a","verdict":"running"}\n'
            '{"kind":"job","cluster":"c1","job_id":"2","name":"rl-b","verdict":"running"}\n'
            "oops\n",
            env={"LABCTL_CONFIG": str(FIXTURES / "guard.toml")},
        ),
        Case(
            ["admit", "--cluster", "local", "--name", "rl-c"],
            env={"LABCTL_CONFIG": str(FIXTURES / "guard.toml")},
        ),
    ],
    "migrate-experiment": [
        Case(["exp1", "--root", str(FIXTURES / "experiments"), "--jobs", "-"], "\n", _NO_CRON),
        Case(["--list", "--root", str(FIXTURES / "experiments"), "--jobs", "-"], "", _NO_CRON),
        Case(["exp9", "--root", str(FIXTURES / "experiments"), "--jobs", "-"], "", _NO_CRON),
    ],
    "cron": [
        Case(["status"], env={"LABCTL_CONFIG": str(FIXTURES / "cron.toml")}),
        Case(["install", "--dry-run"], env={"LABCTL_CONFIG": str(FIXTURES / "cron.toml")}),
        Case(["remove", "--dry-run"], env={"LABCTL_CONFIG": str(FIXTURES / "cron.toml")}),
        Case(["install", "--every", "7m"], env={"LABCTL_CONFIG": str(FIXTURES / "cron.toml")}),
    ],
    "prune-disk": [
        Case(["--summary"]),
        Case(["--all", "--verify", "hash", "--min-free-gb", "1e9"]),
        Case(["--rule", "nope"]),
    ],
    "health": [Case([]), Case(["--top", "--summary"])],
    "rl-health": [
        Case([str(RL / "trl_grpo_issue3452_loss_zero.log"), "--summary"]),
        Case(
            [],
            '{"kind":"job","name":"grpo-smoke","job_id":"1","cluster":"c","verdict":"running",'
            f'"stdout":"{RL / "trl_grpo_openr1_239_early.log"}"}}\n{{"kind":"x"}}\nbad\n',
        ),
        Case(["no-such-job"]),
    ],
    "log": [
        Case(["-t", "sweep"], '{"kind":"job","verdict":"failed"}\nbad\n'),
        Case(["-t", "note", "-m", "hello"]),
    ],
    "supervise": [
        Case(["--summary", "--", sys.executable, str(CHILDREN / "ok.py")]),
        Case(["--max-retries", "1", "--", sys.executable, str(CHILDREN / "oom.py"), "--bs=64"]),
        Case(["--", "/nonexistent/program"]),
    ],
    "mcp": [Case(["--tools", "--summary"]), Case(["--http", "no:port"])],
}


def test_every_command_has_contract_cases() -> None:
    missing = [c.name for c in COMMANDS if c.name not in CASES]
    assert not missing, f"add contract cases for: {missing}"


@pytest.mark.parametrize("spec", COMMANDS, ids=lambda s: s.name)
def test_schemas_are_valid_json_schema(spec) -> None:
    schemas = schemas_for(spec.name)
    assert "error" in schemas, "every command can emit error records"
    for kind, schema in schemas.items():
        Draft202012Validator.check_schema(schema)
        if kind != "*":
            assert schema["properties"]["kind"] == {"const": kind}


@pytest.mark.parametrize(
    "name,case",
    [(name, case) for name, cases in CASES.items() for case in cases],
    ids=lambda v: v if isinstance(v, str) else " ".join(v.args) or "-",
)
def test_emitted_records_validate(name: str, case: Case) -> None:
    res = run_labctl(name, *case.args, input=case.input, env=case.env)
    assert res.records, res.stderr
    assert_valid(name, res.records)
