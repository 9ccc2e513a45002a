"""The tools are generated from the registry: a new command is a new tool with no other
change, every write option is declared, and a tool's arguments reach the command as the
command line means them."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import run_labctl
from helpers.config import write_config
from hypothesis import given
from hypothesis import strategies as st

from labctl import registry
from labctl.cli import load_command
from labctl.registry import BY_NAME, COMMANDS, CommandSpec
from labctl.toolserver.args import argv_for
from labctl.toolserver.tools import generate, tools_for

THROWAWAY = '''
from pathlib import Path
from typing import Annotated

import typer

from labctl.context import Context
from labctl.schemas import COMMON, record

SCHEMAS = {**COMMON, "thing": record("thing", "A thing.", {"n": {"type": "integer"}}, ["n"])}


def cli(
    lc: Context,
    where: Annotated[Path, typer.Argument(help="Where the things are.")],
    apply: Annotated[bool, typer.Option("--apply", help="Change them.")] = False,
) -> int:
    """Count the things somewhere (a throwaway command for a test)."""
    return lc.emit([{"kind": "thing", "n": 1}])
'''


def list_in_process(tmp: Path, **mcp: Any) -> dict[str, Any]:
    """Build the server as `labctl mcp` does and list its tools with the SDK's client."""
    import anyio
    from mcp import Client

    from labctl.context import build_context
    from labctl.toolserver.main import setup
    from labctl.toolserver.server import Served, build_server, child_env

    config = write_config(tmp, [{"name": "local"}], extra={"mcp": {"roots": [str(tmp)], **mcp}})
    lc = build_context(config_path=str(config))
    tools, policy = setup(lc)
    server = build_server(Served(lc=lc, tools=tools, policy=policy, env=child_env(lc)))

    async def main() -> dict[str, Any]:
        async with Client(server) as client:
            return {t.name: t for t in (await client.list_tools()).tools}

    return anyio.run(main)


def test_a_command_added_to_the_registry_is_a_tool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "throwaway_cmd.py").write_text(textwrap.dedent(THROWAWAY))
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = CommandSpec(
        "count-things",
        "throwaway_cmd",
        "Count things.",
        writes=registry.Writes(options=("--apply",)),
    )
    monkeypatch.setattr(registry, "COMMANDS", (*COMMANDS, spec))

    tools = list_in_process(tmp_path)
    tool = tools["count-things"]
    assert tool.description == "Count the things somewhere (a throwaway command for a test)."
    assert tool.input_schema["properties"]["where"]["format"] == "path"
    assert tool.input_schema["required"] == ["where"]
    assert "apply" not in tool.input_schema["properties"]  # read-only server
    assert tool.annotations.read_only_hint is True
    then = tool.output_schema["properties"]["records"]["items"]["allOf"]
    assert any(rule["if"]["properties"]["kind"] == {"const": "thing"} for rule in then)

    writable = list_in_process(tmp_path, allow_writes=True)["count-things"]
    assert "apply" in writable.input_schema["properties"]
    assert writable.annotations.destructive_hint is True


def test_a_disabled_tool_is_neither_listed_nor_run(tmp_path: Path) -> None:
    from labctl.context import build_context
    from labctl.toolserver.main import setup

    tools = list_in_process(tmp_path, tools={"poll": {"enabled": False}})
    assert "poll" not in tools and "diagnose" in tools
    lc = build_context(config_path=str(tmp_path / "config.toml"))
    by_name, policy = setup(lc)
    refusal = policy.refusal(by_name["poll"], {})
    assert refusal is not None and refusal.reason == "unknown_tool"


@pytest.mark.parametrize("spec", [c for c in COMMANDS if c.tool], ids=lambda c: c.name)
def test_write_declarations_name_real_options(spec: CommandSpec) -> None:
    cmd = load_command(spec)
    subs = getattr(cmd, "commands", {})
    flags = {f for c in [cmd, *subs.values()] for p in c.params for f in p.opts}
    assert set(spec.writes.options) <= flags, spec.name
    assert set(spec.writes.subcommands) <= set(subs), spec.name
    for tool in tools_for(spec):
        for param in tool.params:  # the house's write flags are always declared
            if {"--apply", "--register"} & set(param.flags):
                assert tool.always_writes or param.writes, f"{tool.name} {param.flags[0]}"


def test_every_tool_name_is_unique_and_client_safe() -> None:
    names = [t.name for t in generate()]
    assert len(names) == len(set(names))
    assert all(n.replace("-", "").replace("_", "").isalnum() and len(n) <= 64 for n in names)


def parsed(tool_name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """What the command's own parser makes of the argv built for these arguments."""
    tool = next(t for t in generate() if t.name == tool_name)
    argv = argv_for(tool, arguments)
    cmd = load_command(BY_NAME[tool.command[0]])
    ctx = cmd.make_context("labctl", argv[1:])
    return {k: v for k, v in ctx.params.items() if v is not None}


PATH_TEXT = st.text(st.characters(blacklist_characters="\0", codec="utf-8"), min_size=1)


@given(
    paths=st.lists(
        PATH_TEXT | st.sampled_from(["--apply", "-q", "--", "--format=json"]), min_size=1
    ),
    apply=st.booleans(),
    check=st.booleans(),
    move_to=st.none() | PATH_TEXT,
)
def test_arguments_mean_what_they_say(
    paths: list[str], apply: bool, check: bool, move_to: str | None
) -> None:
    args: dict[str, Any] = {"paths": paths, "apply": apply, "check": check}
    if move_to is not None:
        args["move_to"] = move_to
    got = parsed("strip-yaml-comments", args)
    assert list(got["paths"]) == paths  # a path that looks like an option is still a path
    assert got["apply"] is apply and got["check"] is check
    assert (str(got["move_to"]) if "move_to" in got else None) == move_to


@given(window=st.integers(min_value=0, max_value=1 << 40), explain=st.none() | PATH_TEXT)
def test_numbers_and_strings_reach_options_intact(window: int, explain: str | None) -> None:
    args: dict[str, Any] = {"window": window, "all_jobs": True}
    if explain is not None:
        args["explain"] = explain
    got = parsed("diagnose", args)
    assert got["window"] == window and got["all_jobs"] is True
    assert got.get("explain") == explain


def test_a_bad_mcp_config_is_refused_before_serving(tmp_path: Path) -> None:
    for bad, words in [
        ({"tools": {"strip-yaml-coments": {"allow_writes": True}}}, "did you mean"),
        ({"tools": {"poll": {"allow": True}}}, "takes enabled and allow_writes"),
        ({"roots": ["relative/dir"]}, "not an absolute path"),
    ]:
        config = write_config(tmp_path, [{"name": "local"}], extra={"mcp": bad})
        res = run_labctl("mcp", "--config", str(config), timeout=60)
        assert res.code == 2, res.stdout + res.stderr
        assert words in res.records[0]["message"]
