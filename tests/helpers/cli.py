"""Run the real labctl CLI in a subprocess, as a user (or cron) would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
LABCTL = [sys.executable, "-m", "labctl"]


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str

    @property
    def records(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.stdout.splitlines() if line.strip()]


def run_labctl(
    *args: str,
    input: bytes | str | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 120,
) -> Result:
    """Run the real CLI in a subprocess (stdout is a pipe, so the default is JSON Lines)."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    data = input.encode() if isinstance(input, str) else input
    proc = subprocess.run(
        [*LABCTL, *args],
        input=data if data is not None else b"",
        capture_output=True,
        env=full_env,
        cwd=cwd,
        timeout=timeout,
        check=False,
    )
    return Result(proc.returncode, proc.stdout.decode(), proc.stderr.decode())


def run_here(*args: str) -> Result:
    """The real CLI's `main()` in this process (no interpreter start-up: for tests that
    run many commands), stdout and stderr captured."""
    import contextlib
    import io

    from labctl.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return Result(code, out.getvalue(), err.getvalue())
