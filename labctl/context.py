"""The per-invocation context every command's core receives (the test seam).

Built once by the CLI layer from the global options, the environment and the config file;
tests build their own. Cores never read `os.environ`, `sys.stdin` or the clock directly.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from labctl.config import Config, load_config, state_dir
from labctl.confine import ENV as CONFINE_ENV
from labctl.confine import Confinement
from labctl.errors import ExitCode
from labctl.redact import Redactor, set_default_redactor

Severity = Callable[[dict[str, Any]], ExitCode]


@dataclass(frozen=True)
class Context:
    config: Config
    fmt: str  # resolved: "jsonl", "json" or "table"
    environ: Mapping[str, str]
    redactor: Redactor
    quiet: bool = False
    summary: bool = False
    stdin: IO[bytes] = field(default_factory=lambda: sys.stdin.buffer)
    stdout: IO[str] = field(default_factory=lambda: sys.stdout)
    stderr: IO[str] = field(default_factory=lambda: sys.stderr)
    stdout_isatty: bool = False
    stdin_isatty: bool = False
    clock: Callable[[], float] = time.time
    command: str = ""
    confine: Confinement | None = None  # under `labctl mcp`: the roots paths must lie under
    detail: bool = False  # a table view shows its records' detail (diagnose --why: candidates)

    @property
    def state_dir(self) -> Path:
        return state_dir(self.config, self.environ)

    @property
    def log_dir(self) -> Path:
        configured = self.config.get("paths.log_dir")
        return Path(configured).expanduser() if configured else self.state_dir / "log"

    def note(self, message: str) -> None:
        """A diagnostic for people, on stderr (never stdout); silenced by --quiet."""
        if not self.quiet:
            print(self.redactor.text(message), file=self.stderr)

    def emit(
        self,
        records: Iterable[dict[str, Any]],
        severity: Severity | None = None,
        *,
        severity_only: bool = False,
    ) -> int:
        """Hand records to the one emitter; returns the exit code they add up to
        (`severity` adds the command's rules to the shared ones, or replaces them)."""
        from labctl.emit import run_emitter

        return run_emitter(self, records, severity, severity_only=severity_only)


def resolve_format(requested: str, stdout_isatty: bool) -> str:
    if requested == "auto":
        return "table" if stdout_isatty else "jsonl"
    return requested


def build_context(
    *,
    config_path: str | None = None,
    fmt: str | None = None,
    quiet: bool = False,
    summary: bool | None = None,
    environ: Mapping[str, str] | None = None,
    stdin: IO[bytes] | None = None,
    stdout: IO[str] | None = None,
    stderr: IO[str] | None = None,
    command: str = "",
    clock: Callable[[], float] = time.time,
    read_config: bool = True,
) -> Context:
    env = dict(os.environ) if environ is None else dict(environ)
    flags = {"output.format": fmt, "output.summary": summary}
    config = load_config(config_path, env, flags, read_file=read_config)
    redactor = Redactor.from_environ(
        env, extra_names=config.get("secrets.env"), extra_secrets=config.secrets()
    )
    set_default_redactor(redactor)
    out = stdout if stdout is not None else sys.stdout
    inp = stdin if stdin is not None else sys.stdin.buffer
    out_tty = _isatty(out)
    ctx = Context(
        config=config,
        fmt=resolve_format(config.get("output.format"), out_tty),
        environ=env,
        redactor=redactor,
        quiet=quiet,
        summary=bool(config.get("output.summary")),
        stdin=inp,
        stdout=out,
        stderr=stderr if stderr is not None else sys.stderr,
        stdout_isatty=out_tty,
        stdin_isatty=_isatty(inp),
        clock=clock,
        command=command,
    )
    if env.get(CONFINE_ENV) == "1":
        from dataclasses import replace

        ctx = replace(ctx, confine=Confinement.for_context(ctx))
    return ctx


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False
