"""Running merge-green in-process against the fake GitHub.

`merge_green(gh, ...)` builds the labctl Context the CLI would (config file, environment,
redactor, emitter) and runs the command's own `run` through `Context.emit`, with a sleep
that records the waits instead of taking them (the fake server fast-forwards nothing; the
waits are asserted). Every record is checked against the command's schema.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fakes.github import TOKEN, FakeGitHub
from schema_check import assert_valid

from labctl.commands import merge_green as command
from labctl.context import build_context
from labctl.errors import LabctlError

FAST = "request_interval_s = 0.0\nwrite_interval_s = 0.0\n"


@dataclass
class Outcome:
    code: int
    records: list[dict[str, Any]]
    stdout: str
    stderr: str
    sleeps: list[float] = field(default_factory=list)

    def pr(self, number: int, repo: str | None = None) -> dict[str, Any]:
        hits = [
            r
            for r in self.records
            if r["kind"] == "pr" and r["number"] == number and repo in (None, r["repo"])
        ]
        assert len(hits) == 1, self.records
        return hits[0]

    def kinds(self, kind: str) -> list[dict[str, Any]]:
        return [r for r in self.records if r["kind"] == kind]


def write_config(home: Path, allowlist: list[str], extra: str = "") -> Path:
    path = home / "merge-green.toml"
    path.write_text(f"[merge_green]\nallowlist = {json.dumps(allowlist)}\n{FAST}{extra}")
    path.chmod(0o600)
    return path


def merge_green(
    gh: FakeGitHub,
    home: Path,
    *repos: str,
    allowlist: list[str] | None = None,
    apply: bool = False,
    extra: str = "",
    token: str = TOKEN,
    **flags: Any,
) -> Outcome:
    config = write_config(home, allowlist if allowlist is not None else ["lab/trainer"], extra)
    env = {"HOME": str(home), "GITHUB_API_URL": gh.url}
    if token:
        env["GITHUB_TOKEN"] = token
    out, err = io.StringIO(), io.StringIO()
    lc = build_context(
        config_path=str(config),
        fmt="jsonl",
        environ=env,
        stdout=out,
        stderr=err,
        command="merge-green",
    )
    sleeps: list[float] = []
    try:
        code = lc.emit(command.run(lc, list(repos), apply=apply, sleep=sleeps.append, **flags))
    except LabctlError as exc:
        if not getattr(exc, "emitted", False):
            out.write(json.dumps(exc.record()) + "\n")
        code = int(exc.exit_code)
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    assert_valid("merge-green", records)
    return Outcome(code, records, out.getvalue(), err.getvalue(), sleeps)
