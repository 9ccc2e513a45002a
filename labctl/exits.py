"""What a failure outside a command's own records becomes: one `error` record (a usage
error, a write fault, an internal error), redacted, in the format the command line asked
for — or one line on stderr where a table was asked for or stdout cannot take it.
`labctl.cli.main` decides the exit code; these only say it.
"""

from __future__ import annotations

import os
import sys
from typing import Any

FORMATS = ("auto", "jsonl", "json", "table")


def usage_message(exc: Exception) -> str | None:
    """The message of a click usage error (None: not one; `--help` with no args printed)."""
    from typer._click import exceptions as click_exc

    if type(exc).__name__ == "NoArgsIsHelpError":
        sys.stdout.write(exc.format_message() + "\n")  # type: ignore[attr-defined]
        return None
    if isinstance(exc, click_exc.UsageError):
        hint = ""
        if exc.ctx is not None and exc.ctx.command_path:
            hint = f" (see `{exc.ctx.command_path} --help`)"
        return f"{exc.format_message()}{hint}"
    if isinstance(exc, click_exc.ClickException):
        return exc.format_message()
    return None


def emit_error(rec: dict[str, Any], args: list[str]) -> None:
    """Emit an error raised before (or outside) a command's own emitter."""
    from labctl.context import Context, resolve_format
    from labctl.emit import PipeClosed, emit_error_only
    from labctl.redact import default_redactor

    fmt = _format_from_args(args) or os.environ.get("LABCTL_FORMAT") or "auto"
    if fmt not in FORMATS:
        fmt = "auto"
    tty = sys.stdout.isatty()
    from labctl.config import Config

    dummy = Config(path=None, path_source="none", exists=False)  # type: ignore[arg-type]
    dummy.resolved = {}
    ctx = Context(
        config=dummy,
        fmt=resolve_format(fmt, tty),
        environ=os.environ,
        redactor=default_redactor(),
        stdout_isatty=tty,
    )
    try:
        if ctx.fmt == "table":
            # no table for a lone error: one clear line on stderr
            sys.stderr.write(f"labctl: {ctx.redactor.text(str(rec['message']))}\n")
        else:
            emit_error_only(ctx, rec)
    except PipeClosed:
        silence_stdout()
    except OSError:  # stdout itself cannot take the record (a full disk): stderr
        silence_stdout()
        sys.stderr.write(f"labctl: {ctx.redactor.text(str(rec['message']))}\n")


def _format_from_args(args: list[str]) -> str | None:
    for i, arg in enumerate(args):
        if arg in ("--format", "-f") and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith("--format="):
            return arg.split("=", 1)[1]
    return None


def silence_stdout() -> None:
    """Point stdout at /dev/null: its reader is gone, nothing more may reach it."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
