"""Helpers for the prune-disk tests: a config file, the command, its records by name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from schema_check import assert_valid

from helpers.cli import Result, run_labctl
from helpers.config import toml_value


def write_config(home: Path, rules: list[dict[str, Any]], **prune: Any) -> Path:
    lines = ["[prune]"]
    lines += [f"{k} = {toml_value(v)}" for k, v in prune.items()]
    for rule in rules:
        lines.append("[[prune.rules]]")
        lines += [f"{k} = {toml_value(v)}" for k, v in rule.items()]
    path = home / "labctl.toml"
    path.write_text("\n".join(lines) + "\n")
    path.chmod(0o600)
    return path


def prune(config: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    res = run_labctl("prune-disk", "--config", str(config), *args, env=env)
    assert res.records, res.stderr
    assert_valid("prune-disk", res.records)
    return res


def candidates(res: Result) -> dict[str, dict[str, Any]]:
    return {r["name"]: r for r in res.records if r["kind"] == "candidate"}


def disk_after(res: Result) -> dict[str, Any]:
    after = [r for r in res.records if r["kind"] == "disk" and r["phase"] == "after"]
    assert len(after) == 1
    return after[0]
