"""`labctl mcp` over stdio, driven by the real MCP SDK client as an agent would drive it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import ROOT
from helpers.config import write_config
from helpers.toolclient import records, with_stdio
from jsonschema import Draft202012Validator
from schema_check import assert_valid

from labctl.registry import COMMANDS

FAILED_LOG = ROOT / "tests" / "fixtures" / "contract" / "failed.log"
YAML = "a: 1  # inline\n# whole line\nb: [2, 3]\n"


def config(tmp: Path, mcp: dict[str, Any] | None = None, **sections: Any) -> Path:
    extra = {"mcp": {"roots": [str(tmp)], **(mcp or {})}, **sections}
    return write_config(tmp, [{"name": "local"}], extra=extra)


def expected_tools(writes: bool) -> set[str]:
    """Every command's tools, from the registry (subcommands of groups included)."""
    from labctl.toolserver.tools import generate

    return {t.name for t in generate() if writes or not t.always_writes}


def test_list_tools_every_command_with_valid_schemas(tmp_path: Path) -> None:
    async def body(client: Any) -> Any:
        return (await client.list_tools()).tools

    tools = with_stdio(body, config(tmp_path))
    by_name = {t.name: t for t in tools}
    assert set(by_name) == expected_tools(writes=False)
    for command in COMMANDS:  # every command but the server itself, or its subcommands
        served = [n for n in by_name if n == command.name or n.startswith(command.name + "-")]
        assert bool(served) == (command.tool and not command.writes.always), command.name
    assert {"poll", "diagnose", "strip-yaml-comments", "config-show", "schema"} <= set(by_name)
    for tool in tools:
        Draft202012Validator.check_schema(tool.input_schema)
        Draft202012Validator.check_schema(tool.output_schema)
        assert tool.description, tool.name
        assert tool.annotations.read_only_hint is True, tool.name  # a read-only server
        assert not {"format", "config", "quiet"} & set(tool.input_schema["properties"])
    assert "apply" not in by_name["strip-yaml-comments"].input_schema["properties"]
    assert "records" in by_name["diagnose"].input_schema["properties"]
    assert "records" not in by_name["poll"].input_schema["properties"]
    assert "log" not in by_name and "config-init" not in by_name


def test_writes_listed_with_hints_when_allowed(tmp_path: Path) -> None:
    async def body(client: Any) -> Any:
        return {t.name: t for t in (await client.list_tools()).tools}

    tools = with_stdio(body, config(tmp_path, {"allow_writes": True}))
    assert set(tools) == expected_tools(writes=True)
    strip = tools["strip-yaml-comments"]
    assert "apply" in strip.input_schema["properties"]
    assert strip.annotations.read_only_hint is False
    assert strip.annotations.destructive_hint is True
    assert tools["log"].annotations.destructive_hint is False  # it only adds a dated file
    assert tools["schema"].annotations.read_only_hint is True


def test_strip_dry_run_diagnose_and_bad_arguments(tmp_path: Path) -> None:
    target = tmp_path / "run.yaml"
    target.write_text(YAML)
    log = tmp_path / "job.log"
    shutil.copy(FAILED_LOG, log)

    async def body(client: Any) -> dict[str, Any]:
        progress: list[Any] = []

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            progress.append((value, message))

        out = {
            "strip": await client.call_tool(
                "strip-yaml-comments", {"paths": [str(target)]}, progress_callback=on_progress
            ),
            "diagnose": await client.call_tool("diagnose", {"paths": [str(log)]}),
            "bad_type": await client.call_tool("diagnose", {"window": "big"}),
            "too_small": await client.call_tool("diagnose", {"paths": [str(log)], "window": 1}),
            "unknown": await client.call_tool("poll", {"clusterz": ["x"]}),
            "no_tool": await client.call_tool("reboot", {}),
            "after": await client.call_tool("schema", {"commands": ["table"]}),
        }
        out["progress"] = progress
        return out

    res = with_stdio(body, config(tmp_path))
    strip = res["strip"]
    assert not strip.is_error
    (rec,) = records(strip)
    assert rec["kind"] == "file" and rec["comments_removed"] == 2 and rec["applied"] is False
    assert strip.structured_content["exit_code"] == 0
    assert target.read_text() == YAML  # a dry run
    assert json.loads(strip.content[0].text) == strip.structured_content
    assert res["progress"] and res["progress"][0][1].startswith("started labctl")

    diag = res["diagnose"]
    (d,) = records(diag)
    assert d["category"] == "module_not_found" and d["failed"] is True
    assert diag.structured_content["exit_code"] == 1 and not diag.is_error
    assert diag.structured_content["exit_meaning"].startswith("something needs a person")
    assert_valid("diagnose", records(diag))

    for name in ("bad_type", "too_small", "unknown", "no_tool"):
        assert res[name].is_error, name
        (err,) = records(res[name])
        assert err["kind"] == "error" and res[name].structured_content["exit_code"] == 2, err
    assert "window" in records(res["bad_type"])[0]["message"]
    assert "clusterz" in records(res["unknown"])[0]["message"]
    assert records(res["no_tool"])[0]["reason"] == "unknown_tool"
    assert records(res["after"])[0]["command"] == "table"  # the server lived on


def test_records_given_as_an_array_are_read(tmp_path: Path) -> None:
    """A record-reading tool takes its records as an input array: diagnose reads the log
    a job record names (inside the roots), table reports on the records it was given."""
    log = tmp_path / "logs" / "job-7.err"
    log.parent.mkdir()
    shutil.copy(FAILED_LOG, log)
    failed = {"kind": "job", "cluster": "c1", "job_id": "7", "name": "sft", "verdict": "failed",
              "state": "FAILED", "exit_code": 1, "stderr": str(log)}  # fmt: skip
    running = {"kind": "job", "cluster": "c1", "job_id": "8", "name": "rl",
               "verdict": "running", "state": "RUNNING"}  # fmt: skip

    async def body(client: Any) -> dict[str, Any]:
        return {
            "diagnose": await client.call_tool("diagnose", {"records": [failed, running]}),
            "table": await client.call_tool("table", {"records": [running]}),
            "table_failed": await client.call_tool("table", {"records": [running, failed]}),
        }

    res = with_stdio(body, config(tmp_path))
    diag = res["diagnose"]
    assert not diag.is_error and diag.structured_content["exit_code"] == 1
    jobs = {r["job_id"]: r for r in records(diag) if r["kind"] == "job"}
    assert set(jobs) == {"7", "8"}
    d = jobs["7"]["diagnosis"]
    assert d["category"] == "module_not_found" and d["bytes_read"] > 0
    assert d["source"] == str(log)
    assert "diagnosis" not in jobs["8"]  # running: not a failure to explain
    assert_valid("diagnose", records(diag))
    assert not res["table"].is_error and res["table"].structured_content["exit_code"] == 0
    assert records(res["table"]) == [running]
    assert res["table_failed"].structured_content["exit_code"] == 1  # a failed job: a person
    assert [r["job_id"] for r in records(res["table_failed"])] == ["8", "7"]


def test_confined_to_roots(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    outside = tmp_path / "outside.log"
    shutil.copy(FAILED_LOG, outside)
    (root / "link.log").symlink_to(outside)
    (root / "inside.log").write_text("all good\n")
    hidden = tmp_path / "elsewhere"
    hidden.mkdir()
    (hidden / "zz-hidden-name.log").write_text("x\n")

    async def body(client: Any) -> dict[str, Any]:
        job = {"kind": "job", "verdict": "failed", "state": "FAILED", "exit_code": 1}
        return {
            "shadow": await client.call_tool("diagnose", {"paths": ["/etc/shadow"]}),
            "link": await client.call_tool("diagnose", {"paths": [str(root / "link.log")]}),
            "dir": await client.call_tool("diagnose", {"paths": [str(root)]}),
            "glob": await client.call_tool("diagnose", {"paths": [f"{hidden}/*.log"]}),
            "record": await client.call_tool(
                "diagnose", {"records": [{**job, "stderr": "/etc/shadow"}]}
            ),
            "input": await client.call_tool("table", {"input": "/etc/shadow"}),
            "stdin": await client.call_tool("strip-yaml-comments", {"paths": ["-"]}),
        }

    res = with_stdio(body, config(tmp_path, {"roots": [str(root)]}))
    for name, result in res.items():
        assert result.is_error, name
        assert any(r.get("reason") == "outside_roots" for r in records(result)), name
    # the job record still comes back, undiagnosed from that log: nothing was read
    job = next(r for r in records(res["record"]) if r["kind"] == "job")
    assert job["diagnosis"]["bytes_read"] == 0
    assert "zz-hidden" not in json.dumps(records(res["glob"]))  # not even listed


def test_writes_refused_by_default_allowed_by_config(tmp_path: Path) -> None:
    target = tmp_path / "run.yaml"
    state = tmp_path / "state"

    async def body(client: Any) -> dict[str, Any]:
        target.write_text(YAML)
        return {
            "apply": await client.call_tool(
                "strip-yaml-comments", {"paths": [str(target)], "apply": True}
            ),
            "apply_false": await client.call_tool(
                "strip-yaml-comments", {"paths": [str(target)], "apply": False}
            ),
            "log": await client.call_tool("log", {"topic": "t", "message": "hi"}),
            "after": target.read_text(),
        }

    paths = {"state_dir": str(state)}
    read_only = with_stdio(body, config(tmp_path, paths=paths))
    for name in ("apply", "log"):
        assert read_only[name].is_error, name
        (err,) = records(read_only[name])
        assert err["reason"] == "writes_not_allowed", err
        assert "allow_writes" in err["message"]
    assert not read_only["apply_false"].is_error  # a dry run is not a write
    assert read_only["after"] == YAML
    assert not (state / "log").exists()

    per_tool = {"tools": {"strip-yaml-comments": {"allow_writes": True}}}
    one_tool = with_stdio(body, config(tmp_path, per_tool, paths=paths))
    assert not one_tool["apply"].is_error and records(one_tool["apply"])[0]["applied"] is True
    assert one_tool["log"].is_error  # the per-tool grant is for that tool only

    everything = with_stdio(body, config(tmp_path, {"allow_writes": True}, paths=paths))
    assert everything["after"] == "a: 1\nb: [2, 3]\n"
    (entry,) = [r for r in records(everything["log"]) if r["kind"] == "log"]
    assert Path(entry["path"]).is_file() and Path(entry["path"]).is_relative_to(state)


def test_secrets_never_leave_the_server(tmp_path: Path) -> None:
    token = "ghp_" + "Q7x" * 12
    log = tmp_path / "job.log"
    log.write_text(FAILED_LOG.read_text() + f"\nexport GITHUB_TOKEN={token}\nKeyError: {token}\n")

    async def body(client: Any) -> list[str]:
        listed = (await client.list_tools()).tools
        answers = [
            await client.call_tool("diagnose", {"paths": [str(log)], "full": True}),
            await client.call_tool("diagnose", {"paths": [str(tmp_path / token)]}),
            await client.call_tool("config-show", {}),
            await client.call_tool(token, {}),
            await client.call_tool("poll", {token: 1}),
        ]
        return [t.model_dump_json() for t in listed] + [a.model_dump_json() for a in answers]

    dumped = with_stdio(body, config(tmp_path), GITHUB_TOKEN=token)
    assert all(token not in text for text in dumped)
    assert any("module_not_found" in text for text in dumped)  # the log was read


def test_config_file_secrets_never_leave_the_server(tmp_path: Path) -> None:
    """Secrets only the config file holds (a 0600 file: nothing in the environment): a
    token a pattern knows and a key no pattern could guess. Neither appears in the tool
    list, any result or any error, whichever way they come back."""
    token = "ghp_" + "Zk9" * 12
    key = "plain-supabase-key-4417-qwerty"  # no pattern: only the config says it is secret
    cfg = config(tmp_path, github={"token": token}, supabase={"key": key})
    cfg.chmod(0o600)
    log = tmp_path / "job.log"
    log.write_text(FAILED_LOG.read_text() + f"\nlogin with {token}\nKeyError: '{key}'\n")
    job = {"kind": "job", "job_id": "7", "name": f"sft-{key}", "verdict": "failed",
           "state": "FAILED", "exit_code": 1, "stderr": str(log)}  # fmt: skip

    async def body(client: Any) -> list[str]:
        listed = await client.list_tools()
        answers = [
            await client.call_tool("config-show", {}),
            await client.call_tool("diagnose", {"paths": [str(log)], "full": True}),
            await client.call_tool("diagnose", {"records": [job], "full": True}),
            await client.call_tool("table", {"records": [job]}),
            await client.call_tool("diagnose", {"paths": [str(tmp_path / key)]}),
            await client.call_tool("diagnose", {"paths": [f"/etc/{token}"]}),
            await client.call_tool(key, {}),
            await client.call_tool("poll", {token: 1}),
            await client.call_tool("diagnose", {"window": key}),
        ]
        return [listed, *answers]

    got = with_stdio(body, cfg)
    dumped = [a.model_dump_json() for a in got]
    assert not any(token in text or key in text for text in dumped)
    settings = {r.get("key"): r for r in records(got[1])}
    assert settings["github.token"]["source"] != "default"  # it was read from the file
    assert "module_not_found" in dumped[2] and "module_not_found" in dumped[3]  # logs read
    assert "sft-" in dumped[4]  # the record came back, its name masked
    assert all(a.is_error for a in got[5:]), [a.is_error for a in got[5:]]


@pytest.mark.slurm
def test_poll_the_test_slurm(tmp_path: Path) -> None:
    from helpers.slurm import sbatch

    work = tmp_path / "work"
    work.mkdir()
    job_id = sbatch(work, "--job-name=mcp-poll-probe", wrap="exit 3")

    async def body(client: Any) -> Any:
        return await client.call_tool("poll", {"since": "1h"})

    res = with_stdio(body, config(tmp_path, paths={"state_dir": str(tmp_path / "state")}))
    mine = [r for r in records(res) if r["kind"] == "job" and r["job_id"] == job_id]
    assert mine and mine[0]["name"] == "mcp-poll-probe", records(res)
    assert_valid("poll", records(res))
    assert res.structured_content["exit_code"] in (0, 1)
